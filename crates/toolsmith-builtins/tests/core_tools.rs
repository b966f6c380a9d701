//! The utilities family (`utilities`) end to end: every tool through a real `Pipeline`, with
//! exact outputs and the arguments its schema refuses.

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

mod exec;
mod files;
mod git;
mod pdf;
mod support;
mod web;

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, Pipeline, PipelineLimits, ToolContext, ToolRegistry, ToolResult};

fn pipeline() -> Pipeline {
    let registry = ToolRegistry::default();
    toolsmith_builtins::register_all(&registry, &toolsmith_builtins::BuiltinEnv::default())
        .unwrap();
    Pipeline::new(Arc::new(registry), PipelineLimits::default())
}

async fn call(name: &str, args: &str) -> ToolResult {
    pipeline()
        .execute(name, args, ToolContext::new("default"))
        .await
}

async fn ok(name: &str, args: &str) -> Value {
    let res = call(name, args).await;
    assert!(!res.is_error, "{name} {args}: {:?}", res.content);
    res.content
}

async fn fails(name: &str, args: &str, kind: ErrorKind) -> String {
    let res = call(name, args).await;
    assert!(res.is_error, "{name} {args}: {:?}", res.content);
    assert_eq!(
        res.error_kind(),
        Some(kind),
        "{name} {args}: {:?}",
        res.content
    );
    res.error_message().unwrap().to_owned()
}

/// The spec's category 24, every tool of it.
const UTILITIES: &[&str] = &[
    "array_operations",
    "calculate",
    "compare_text",
    "convert_units",
    "count_text",
    "date_add",
    "date_diff",
    "encode_decode",
    "extract_from_text",
    "format_json",
    "generate_csv",
    "generate_password",
    "generate_uuid",
    "get_current_datetime",
    "hash_text",
    "parse_csv",
    "random_number",
    "regex",
    "statistics",
    "system_info",
    "transform_text",
    "validate",
];

#[test]
fn the_family_is_registered_once() {
    let registry = ToolRegistry::default();
    let register = || {
        toolsmith_builtins::utilities::tools(&toolsmith_builtins::BuiltinEnv::default())
            .into_iter()
            .try_for_each(|tool| registry.register_builtin(tool))
    };
    register().unwrap();
    let names = registry.names("anyone");
    assert_eq!(names, UTILITIES, "the spec's 22 utilities, no more");
    for tool in registry.tools("anyone") {
        let name = tool.name().to_owned();
        assert_eq!(tool.definition.category.as_deref(), Some("Utilities"));
        assert!(tool.definition.tags.len() >= 5, "{name} needs search tags");
        assert!(tool.permissions.is_empty());
        let group = toolsmith_builtins::groups::group_of(&name).unwrap();
        assert_eq!(
            tool.origin,
            toolsmith_core::ToolOrigin::BuiltIn {
                provider: group.id.into()
            }
        );
        let params = &tool.definition.parameters;
        assert_eq!(params["additionalProperties"], false, "{name}");
        assert!(params["required"].is_array(), "{name}");
        for (prop, schema) in params["properties"].as_object().unwrap() {
            assert!(schema["description"].is_string(), "{name}.{prop}");
        }
    }
    assert_eq!(registry.stats().builtin, names.len());
    assert!(register().is_err());
}

#[tokio::test]
async fn calculate_exact_results() {
    let cases = [
        (
            r#"{"expression":"2+3"}"#,
            json!({"expression": "2+3", "result": 5.0}),
        ),
        (
            r#"{"expression":"(2 + 3) * sqrt(16) / 2^3"}"#,
            json!({"expression": "(2 + 3) * sqrt(16) / 2^3", "result": 2.5}),
        ),
        (
            r#"{"expression":"2^3^2"}"#,
            json!({"expression": "2^3^2", "result": 512.0}),
        ),
        (
            r#"{"expression":"-2^2"}"#,
            json!({"expression": "-2^2", "result": -4.0}),
        ),
        (
            r#"{"expression":"max(1, 7, 3) % 4"}"#,
            json!({"expression": "max(1, 7, 3) % 4", "result": 3.0}),
        ),
        (
            r#"{"expression":"1.5e3"}"#,
            json!({"expression": "1.5e3", "result": 1500.0}),
        ),
        (
            r#"{"expression":"log(1000) + log2(8)"}"#,
            json!({"expression": "log(1000) + log2(8)", "result": 6.0}),
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(ok("calculate", args).await, expected, "{args}");
    }
    let res = call("calculate", r#"{"expression":"2+3"}"#).await;
    assert_eq!(res.content_text(), r#"{"expression":"2+3","result":5.0}"#);
    let pi = ok("calculate", r#"{"expression":"pi"}"#).await;
    assert_eq!(pi["result"], std::f64::consts::PI);
}

#[tokio::test]
async fn calculate_refuses_hostile_input() {
    let cases = [
        ("1/0", "division by zero"),
        ("constructor", "unknown identifier 'constructor'"),
        ("process.exit()", "unexpected character '.'"),
        ("1e309", "is not a finite number"),
        ("sqrt(-1)", "is not a finite number"),
        ("2^^3", "unexpected '^' at position 2"),
        ("(1+2", "never closed"),
        ("1+2)", "unmatched ')'"),
        ("1 2", "unexpected '2'"),
        ("٣", "unexpected character '٣'"),
        ("   ", "empty"),
    ];
    for (expression, expected) in cases {
        let args = json!({ "expression": expression }).to_string();
        let message = fails("calculate", &args, ErrorKind::ExecutionError).await;
        assert!(message.contains(expected), "{expression}: {message}");
    }
    let deep = json!({"expression": "(".repeat(65) + "1" + &")".repeat(65)}).to_string();
    let message = fails("calculate", &deep, ErrorKind::ExecutionError).await;
    assert!(message.contains("nested too deeply"), "{message}");
    // Over the length limit: the schema refuses it before the parser sees it.
    let huge = json!({"expression": "(".repeat(100_000)}).to_string();
    fails("calculate", &huge, ErrorKind::InvalidArguments).await;
    fails(
        "calculate",
        r#"{"expression":""}"#,
        ErrorKind::InvalidArguments,
    )
    .await;
}

#[tokio::test]
async fn calculate_bad_arguments() {
    for args in [
        "{}",
        r#"{"expression": 5}"#,
        r#"{"expression": "1", "extra": true}"#,
        r#"{"expr": "1"}"#,
        "[1]",
        "not json",
    ] {
        fails("calculate", args, ErrorKind::InvalidArguments).await;
    }
}

#[tokio::test]
async fn datetime_defaults_to_utc() {
    let before = chrono::Utc::now().timestamp_millis();
    let v = ok("get_current_datetime", "").await;
    let after = chrono::Utc::now().timestamp_millis();
    let unix_ms = v["unixMs"].as_i64().unwrap();
    assert!((before..=after).contains(&unix_ms), "{v}");
    assert_eq!(v["unix"].as_i64().unwrap(), unix_ms.div_euclid(1000));
    assert_eq!(v["timezone"], "UTC");
    let iso = v["iso"].as_str().unwrap();
    assert!(iso.ends_with('Z'), "{iso}");
    let parsed = chrono::DateTime::parse_from_rfc3339(iso).unwrap();
    assert_eq!(parsed.timestamp_millis(), unix_ms);
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "date",
            "dayOfWeek",
            "formatted",
            "isWeekend",
            "iso",
            "quarter",
            "time",
            "timezone",
            "unix",
            "unixMs",
            "weekNumber"
        ],
        "exactly the spec's fields"
    );
}

#[tokio::test]
async fn datetime_zones_and_formats() {
    let v = ok(
        "get_current_datetime",
        r#"{"timezone":"Asia/Kolkata","format":"rfc2822"}"#,
    )
    .await;
    assert_eq!(v["timezone"], "Asia/Kolkata");
    assert!(v["iso"].as_str().unwrap().ends_with("+05:30"), "{v}");
    let rfc = v["formatted"].as_str().unwrap();
    assert!(rfc.ends_with("+0530"), "{rfc}");
    assert_eq!(
        chrono::DateTime::parse_from_rfc2822(rfc)
            .unwrap()
            .timestamp(),
        v["unix"].as_i64().unwrap()
    );
    let v = ok("get_current_datetime", r#"{"format":"unix_ms"}"#).await;
    assert_eq!(v["formatted"], v["unixMs"].to_string());
    let v = ok("get_current_datetime", r#"{"timezone":"-0800"}"#).await;
    assert_eq!(v["timezone"], "-08:00");

    let message = fails(
        "get_current_datetime",
        r#"{"timezone":"Europe/Pariss"}"#,
        ErrorKind::InvalidArguments,
    )
    .await;
    assert!(message.contains("Europe/Istanbul"), "{message}");
    for args in [
        r#"{"timezone":"+2"}"#,
        r#"{"format":"julian"}"#,
        r#"{"timezone":0}"#,
        r#"{"tz":"UTC"}"#,
    ] {
        fails("get_current_datetime", args, ErrorKind::InvalidArguments).await;
    }
}

#[tokio::test]
async fn uuids() {
    let v = ok("generate_uuid", "{}").await;
    let uuids = v["uuids"].as_array().unwrap();
    assert_eq!(uuids.len(), 1);
    let v = ok("generate_uuid", r#"{"count": 100}"#).await;
    let uuids: Vec<&str> = v["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(uuids.len(), 100);
    let mut unique = uuids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 100);
    for u in uuids {
        let parsed = uuid::Uuid::parse_str(u).unwrap();
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(parsed.to_string(), u);
    }
    for args in [
        r#"{"count": 0}"#,
        r#"{"count": 101}"#,
        r#"{"count": 1.5}"#,
        r#"{"count": "3"}"#,
        r#"{"count": -1}"#,
        r#"{"number": 2}"#,
    ] {
        fails("generate_uuid", args, ErrorKind::InvalidArguments).await;
    }
}

#[tokio::test]
async fn hashes() {
    assert_eq!(
        ok("hash_text", r#"{"text":"abc"}"#).await,
        json!({
            "algorithm": "sha256",
            "hash": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        })
    );
    assert_eq!(
        ok("hash_text", r#"{"text":"","algorithm":"sha512"}"#).await,
        json!({
            "algorithm": "sha512",
            "hash": "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        })
    );
    assert_eq!(
        ok("hash_text", r#"{"text":"abc","encoding":"base64"}"#).await,
        json!({
            "algorithm": "sha256",
            "hash": "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        })
    );
    for args in [
        "{}",
        r#"{"text":"abc","algorithm":"crc32"}"#,
        r#"{"text":"abc","encoding":"base32"}"#,
        r#"{"text":["abc"]}"#,
        r#"{"text":"abc","salt":"x"}"#,
    ] {
        fails("hash_text", args, ErrorKind::InvalidArguments).await;
    }
}

async fn encode(text: &str, method: &str, operation: &str) -> ToolResult {
    let args = json!({"text": text, "method": method, "operation": operation}).to_string();
    call("encode_decode", &args).await
}

#[tokio::test]
async fn encode_decode_round_trips() {
    let cases = [
        ("base64", "héllo wörld", "aMOpbGxvIHfDtnJsZA=="),
        ("url", "a b&c=d/é?~", "a%20b%26c%3Dd%2F%C3%A9%3F~"),
        ("hex", "Hi é", "486920c3a9"),
        (
            "html",
            "<p class=\"x\">Tom & Jerry's</p>",
            "&lt;p class=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/p&gt;",
        ),
    ];
    for (method, plain, encoded) in cases {
        let res = encode(plain, method, "encode").await;
        assert_eq!(res.content, json!({"result": encoded}), "{method}");
        let res = encode(encoded, method, "decode").await;
        assert_eq!(res.content, json!({"result": plain}), "{method}");
    }
    assert_eq!(
        encode("486920C3A9", "hex", "decode").await.content,
        json!({"result": "Hi é"})
    );
    assert_eq!(
        encode("&#72;&#x69; &nbsp;&unknown;", "html", "decode")
            .await
            .content,
        json!({"result": "Hi \u{a0}&unknown;"})
    );
    assert_eq!(
        encode("", "base64", "encode").await.content,
        json!({"result": ""})
    );
}

#[tokio::test]
async fn decode_errors_are_tool_errors() {
    let cases = [
        ("not base64!", "base64", "invalid base64"),
        ("//79", "base64", "not valid UTF-8"),
        ("abc", "hex", "invalid hex"),
        ("zz", "hex", "invalid hex"),
        ("ff", "hex", "not valid UTF-8"),
        ("%zz", "url", "invalid URL encoding"),
        ("100%", "url", "invalid URL encoding"),
        ("%C3%28", "url", "not valid UTF-8"),
    ];
    for (text, method, expected) in cases {
        let res = encode(text, method, "decode").await;
        assert_eq!(res.error_kind(), Some(ErrorKind::ExecutionError), "{text}");
        let message = res.error_message().unwrap();
        assert!(message.contains(expected), "{text}: {message}");
    }
    for args in [
        r#"{"text":"a","method":"rot13","operation":"encode"}"#,
        r#"{"text":"a","method":"url","operation":"both"}"#,
        r#"{"text":"a","method":"url"}"#,
        r#"{"method":"url","operation":"encode"}"#,
        r#"{"text":"a","method":"url","operation":"encode","extra":1}"#,
    ] {
        fails("encode_decode", args, ErrorKind::InvalidArguments).await;
    }
}

/// A call of each new utility through the pipeline: the schema runs first (unknown arguments,
/// wrong types), then the tool's own checks, whose errors are `invalid_arguments` naming the fix.
#[tokio::test]
async fn every_utility_answers_through_the_pipeline() {
    let calls = [
        (
            "date_diff",
            r#"{"date1":"2024-01-01","date2":"2024-01-31","unit":"days"}"#,
        ),
        (
            "date_add",
            r#"{"date":"2024-01-31","amount":1,"unit":"months"}"#,
        ),
        ("statistics", r#"{"numbers":[1,2,3]}"#),
        (
            "convert_units",
            r#"{"value":100,"from":"celsius","to":"fahrenheit"}"#,
        ),
        ("generate_password", r#"{"length":20}"#),
        ("random_number", r#"{"min":1,"max":6}"#),
        ("count_text", r#"{"text":"two words"}"#),
        (
            "extract_from_text",
            r#"{"text":"mail a@b.io","pattern":"emails"}"#,
        ),
        (
            "transform_text",
            r#"{"text":"Hello World","operation":"snake_case"}"#,
        ),
        ("compare_text", r#"{"text1":"a","text2":"b"}"#),
        ("regex", r#"{"pattern":"\\d+","text":"a1b22"}"#),
        (
            "format_json",
            r#"{"json":"{\"a\":1}","operation":"minify"}"#,
        ),
        ("parse_csv", r#"{"csv":"a,b\n1,2"}"#),
        ("generate_csv", r#"{"data":[{"a":1}]}"#),
        (
            "array_operations",
            r#"{"array":[3,1,2],"operation":"sort"}"#,
        ),
        ("validate", r#"{"value":"a@b.io","type":"email"}"#),
        ("system_info", r#"{"include":["platform"]}"#),
    ];
    for (name, args) in calls {
        let v = ok(name, args).await;
        assert!(v.is_object(), "{name}: {v}");
        // The schema refuses what the tool does not know.
        let mut extra: Value = serde_json::from_str(args).unwrap();
        extra["noSuchArgument"] = json!(1);
        fails(name, &extra.to_string(), ErrorKind::InvalidArguments).await;
    }
    assert_eq!(ok("date_diff", calls[0].1).await["difference"], 30.0);
    assert_eq!(ok("convert_units", calls[3].1).await["to"]["value"], 212.0);
    assert_eq!(
        ok("transform_text", calls[8].1).await["output"],
        "hello_world"
    );
    assert_eq!(ok("regex", calls[10].1).await["count"], 2);

    let message = fails(
        "convert_units",
        r#"{"value":1,"from":"kg","to":"km"}"#,
        ErrorKind::InvalidArguments,
    )
    .await;
    assert!(
        message.contains("cannot convert kg (mass) to km (length)"),
        "{message}"
    );
    let message = fails(
        "date_add",
        r#"{"date":"2024-01-31","amount":1,"unit":"fortnights"}"#,
        ErrorKind::InvalidArguments,
    )
    .await;
    assert!(message.contains("unit"), "{message}");
}

/// The classic catastrophic pattern on a long input that does not match: a backtracking engine
/// takes exponential time; this one answers, and answers right.
#[tokio::test]
async fn catastrophic_regexes_return_the_right_answer() {
    let text = format!("{}!", "a".repeat(200_000));
    for name in ["regex", "extract_from_text"] {
        let args = if name == "regex" {
            json!({"pattern": "(a+)+$", "text": text, "operation": "test"})
        } else {
            json!({"pattern": "(a+)+$", "text": text})
        };
        let v = ok(name, &args.to_string()).await;
        let matched = if name == "regex" {
            v["result"].clone()
        } else {
            json!(v["count"] != 0)
        };
        assert_eq!(matched, false, "{name}");
    }
    let message = fails(
        "regex",
        &json!({"pattern": "(?<=a)b", "text": "ab"}).to_string(),
        ErrorKind::InvalidArguments,
    )
    .await;
    assert!(
        message.contains("look-around") && message.contains("capture group"),
        "{message}"
    );
}
