//! JSON Schemas given at create time (`parameters`), and arguments checked against them:
//! parts `schema JSON`, `arguments JSON`.
//!
//! Asserts: no panic; `check_call` fails exactly when there are violations; a violation's
//! message never shows a string value of the arguments (issue 12) unless the schema itself
//! holds that text.
#![no_main]

#[path = "../common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_core::schema::{CompiledSchema, check_shape};

fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let schema_text = common::part(&parts, 0);
    let Ok(schema) = serde_json::from_str::<Value>(schema_text) else {
        return;
    };
    let _ = check_shape(&schema);
    let Ok(compiled) = CompiledSchema::compile(&schema) else {
        return;
    };
    let Ok(args) = serde_json::from_str::<Value>(common::part(&parts, 1)) else {
        return;
    };
    let violations = compiled.violations(&args);
    let checked = compiled.check_call("fuzz", &args, |_| None);
    assert_eq!(violations.is_empty(), checked.is_ok());
    let mut values = Vec::new();
    strings(&args, &mut values);
    for value in values {
        if value.len() < 8 || schema_text.contains(value) {
            continue;
        }
        for violation in &violations {
            assert!(
                !violation.message.contains(value),
                "a message shows the value {value:?}: {}",
                violation.message
            );
        }
    }
});
