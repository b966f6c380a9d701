//! Spec-004 HTTP-tool definitions (YAML or JSON, as `POST /api/v1/custom-tools/import` takes
//! them), run end to end against a sender that answers with fuzzed bytes: parts `definition`,
//! `arguments JSON`, `response body`, `status` (its first byte), `context JSON`.
//!
//! Asserts: no panic; the parameters schema of a valid definition compiles (the service
//! registers it); a rendered request is an http(s) URL within its limit and has no CR, LF or
//! NUL in a header.
#![no_main]

#[path = "../common.rs"]
mod common;

use std::collections::BTreeMap;

use async_trait::async_trait;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolsmith_core::schema::CompiledSchema;
use toolsmith_httptool::{
    CallContext, HttpSender, MAX_URL_LEN, PreparedRequest, SecurityRules, SendError,
    SenderResponse, config_keys, execute, load_definition, matches_triggers, parameters_schema,
    parse_any, validate_security,
};

struct Answer {
    status: u16,
    body: Vec<u8>,
}

#[async_trait]
impl HttpSender for Answer {
    async fn send(&self, req: PreparedRequest) -> Result<SenderResponse, SendError> {
        let url = req.url.to_ascii_lowercase();
        assert!(
            url.starts_with("https://") || url.starts_with("http://"),
            "{}",
            req.url
        );
        assert!(req.url.len() <= MAX_URL_LEN);
        for (name, value) in &req.headers {
            assert!(
                !value.contains(['\r', '\n', '\0']) && !name.contains(['\r', '\n', '\0', ':']),
                "header {name:?}: {value:?}"
            );
        }
        Ok(SenderResponse {
            status: self.status,
            headers: Vec::new(),
            body: self.body.clone(),
        })
    }
}

fn object(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let src = common::part(&parts, 0);
    let Ok(def) = load_definition(src) else {
        let _ = parse_any(src);
        return;
    };
    let rules = SecurityRules {
        allow_plain_http: true,
    };
    let _ = validate_security(&def, &rules, &|_| Ok(()));
    let _ = config_keys(&def);
    let _ = matches_triggers(&def, common::part(&parts, 1));
    let schema = parameters_schema(&def);
    if let Err(e) = CompiledSchema::compile(&schema) {
        panic!("the parameters schema of a valid definition does not compile: {e}\n{schema}");
    }
    let store: BTreeMap<String, String> = [
        ("api_url".to_owned(), "api.example.com".to_owned()),
        ("api_key".to_owned(), "k-123".to_owned()),
    ]
    .into_iter()
    .collect();
    let context = serde_json::from_str::<Value>(common::part(&parts, 4)).ok();
    let Ok(ctx) = CallContext::from_caller(context.as_ref(), &store) else {
        return;
    };
    let status = common::part(&parts, 3)
        .bytes()
        .next()
        .map_or(200, |b| 100 + u16::from(b) * 2);
    let sender = Answer {
        status,
        body: common::part(&parts, 2).as_bytes().to_vec(),
    };
    let args = object(common::part(&parts, 1));
    let _ = common::block_on(execute(&def, &args, &ctx, &sender, &rules));
});
