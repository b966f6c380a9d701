//! Command templates (`{{.param}}` and the shell lexer behind them), the deny check, and a
//! command tool's spec: parts `template`, `value`, `spec JSON`.
//!
//! Asserts: no panic; a parsed template renders with no arguments exactly as its skeleton; a
//! rendered value appears single-quoted; the skeleton holds no placeholder of its own.
#![no_main]

#[path = "../common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolsmith_command::{
    CommandToolSpec, Template, check_denied, normalize_for_matching, shell_quote,
};

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let src = common::part(&parts, 0);
    let value = common::part(&parts, 1);
    let _ = check_denied(src);
    let _ = normalize_for_matching(src);
    if let Ok(template) = Template::parse(src) {
        let names: Vec<String> = template
            .placeholders()
            .iter()
            .map(|n| (*n).to_owned())
            .collect();
        let _ = template.code_placeholders();
        let skeleton = template.skeleton();
        let _ = check_denied(&skeleton);
        if let Ok(rendered) = template.render(&Map::new()) {
            assert_eq!(rendered, skeleton, "no arguments render as the skeleton");
        }
        let args: Map<String, Value> = names
            .iter()
            .map(|n| (n.clone(), Value::String(value.to_owned())))
            .collect();
        if let Ok(rendered) = template.render(&args)
            && !names.is_empty()
        {
            assert!(
                rendered.contains(&shell_quote(value)),
                "the value stands quoted"
            );
        }
        // What the author wrote around the placeholders holds none of its own.
        if let Ok(again) = Template::parse(&skeleton) {
            assert!(
                again.placeholders().is_empty(),
                "the skeleton of {src:?} holds placeholders: {:?}",
                again.placeholders()
            );
        }
    }
    if let Ok(spec) = serde_json::from_str::<CommandToolSpec>(common::part(&parts, 2)) {
        let _ = spec.validate();
        let _ = spec.agent_scope();
    }
});
