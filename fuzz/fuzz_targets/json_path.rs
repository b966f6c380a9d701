//! JSON paths, the one grammar (`toolsmith_httptool::path`) of `format_json`'s `get_path` and
//! the HTTP tools' `response_mapping`: parts `path`, `JSON data`.
//!
//! Asserts: no panic; `get_path` and a mapping find what `path::parse(..).lookup` finds; a
//! pointer reads as RFC 6901 (`serde_json`'s `Value::pointer`); a dotted path written back from
//! its steps parses to the same steps, and as a pointer finds the same value; what
//! `path::write` writes of the steps reads back to the same value; every key `flatten` makes is
//! a path `get_path` reads back to the same value.
#![no_main]

#[path = "../common.rs"]
mod common;

use std::collections::BTreeMap;

use async_trait::async_trait;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolsmith_builtins::utilities::format_json;
use toolsmith_httptool::path::{self, Step};
use toolsmith_httptool::{
    CallContext, HttpSender, PreparedRequest, SecurityRules, SendError, SenderResponse, execute,
    parse_json,
};

/// Answers every request with the fuzzed data.
struct Answer(Vec<u8>);

#[async_trait]
impl HttpSender for Answer {
    async fn send(&self, _req: PreparedRequest) -> Result<SenderResponse, SendError> {
        Ok(SenderResponse {
            status: 200,
            headers: Vec::new(),
            body: self.0.clone(),
        })
    }
}

fn get_path(data: &Value, path: &str) -> Option<Value> {
    // As JSON text: a string value would be read as the text of another document.
    let text = data.to_string();
    let out =
        format_json::run(&json!({"operation": "get_path", "json": text, "path": path})).ok()?;
    (out["found"] == json!(true)).then(|| out["result"].clone())
}

/// A dotted path's steps written back as text (`None` for a pointer's tokens).
fn dotted(steps: &[Step]) -> Option<String> {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(idx) => out.push_str(&format!("[{idx}]")),
            Step::Token(_) => return None,
        }
    }
    Some(out)
}

/// The same steps as a JSON Pointer.
fn pointer(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|step| match step {
            Step::Key(key) | Step::Token(key) => {
                format!("/{}", key.replace('~', "~0").replace('/', "~1"))
            }
            Step::Index(idx) => format!("/{idx}"),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let path = common::part(&parts, 0);
    let text = common::part(&parts, 1);
    let _ = format_json::run(&json!({"operation": "get_path", "json": text, "path": path}));
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let parsed = path::parse(path);
    let found = parsed.as_ref().ok().and_then(|p| p.lookup(&value));
    // format_json reads the path with the same grammar.
    assert_eq!(
        get_path(&value, path).as_ref(),
        found,
        "format_json and path::parse on {path:?}"
    );
    if let Ok(parsed) = &parsed {
        if path.starts_with('/') {
            assert_eq!(
                found,
                value.pointer(path),
                "a JSON Pointer as RFC 6901 reads it: {path:?}"
            );
        }
        // The grammar's own writer: what it writes reads back to what finds the same value.
        let written = path::write(parsed.steps());
        if written.len() <= path::MAX_PATH_LEN {
            let again = path::parse(&written);
            assert!(again.is_ok(), "{path:?} written as {written:?}: {again:?}");
            assert_eq!(
                again.ok().and_then(|p| p.lookup(&value).cloned()).as_ref(),
                found,
                "{path:?} written as {written:?}"
            );
        }
        if let Some(text) = dotted(parsed.steps()) {
            let again = path::parse(&text);
            assert_eq!(
                again.as_ref().ok(),
                Some(parsed),
                "{path:?} written back as {text:?}"
            );
            if found.is_some() {
                let by_pointer = path::parse(&pointer(parsed.steps())).ok();
                assert_eq!(
                    by_pointer.and_then(|p| p.lookup(&value)),
                    found,
                    "{path:?} as a pointer"
                );
            }
        }
    }

    // flatten's keys are paths get_path reads back (the key of a document that is one value is
    // "", which is no path; a key over the limit is written but not read).
    if let Ok(out) = format_json::run(&json!({"operation": "flatten", "json": value.to_string()}))
        && let Some(flat) = out["result"].as_object()
    {
        for (key, leaf) in flat.iter().take(16) {
            if key.is_empty() || key.len() > path::MAX_PATH_LEN {
                continue;
            }
            assert_eq!(
                get_path(&value, key).as_ref(),
                Some(leaf),
                "flatten's key {key:?}"
            );
        }
    }

    // The same path as an HTTP tool's response mapping.
    let definition = json!({
        "name": "probe",
        "description": "probe",
        "endpoint": {"url": "https://example.com/x"},
        "response_mapping": {"out": path},
    });
    let Ok(def) = parse_json(&definition.to_string()) else {
        return;
    };
    if !toolsmith_httptool::validate_definition(&def).is_empty() {
        return;
    }
    let store = BTreeMap::new();
    let ctx = CallContext::new(&store);
    let rules = SecurityRules {
        allow_plain_http: false,
    };
    let sender = Answer(text.as_bytes().to_vec());
    let args = serde_json::Map::new();
    let run = execute(&def, &args, &ctx, &sender, &rules);
    if let Ok(output) = common::block_on(run) {
        let mapped = output.data.get("out").filter(|v| !v.is_null());
        assert_eq!(
            mapped,
            found.filter(|v| !v.is_null()),
            "the mapping of {path:?}"
        );
    }
});
