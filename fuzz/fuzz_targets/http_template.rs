//! The HTTP tools' `response_template` (Jinja, with fuel): parts `template`, `variables JSON`.
//!
//! Asserts: no panic; a template that compiles either renders within the output limit or fails
//! with an error (fuel, size, syntax), never runs away.
#![no_main]

#[path = "../common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolsmith_httptool::{MAX_TEMPLATE_OUTPUT, compile_template, render_template};

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let source = common::part(&parts, 0);
    if compile_template(source).is_err() {
        return;
    }
    let vars = match serde_json::from_str::<Value>(common::part(&parts, 1)) {
        Ok(Value::Object(vars)) => vars,
        _ => Map::new(),
    };
    if let Ok(text) = render_template(source, &vars) {
        assert!(text.len() <= MAX_TEMPLATE_OUTPUT, "output over the limit");
    }
});
