//! Tests of the crate through its public API: parsing, validation, resolution, rendering,
//! templates, triggers, and execution with an in-process sender. The end-to-end runs of the
//! example tools against a real local server are in `tests/examples.rs`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use crate::*;

const SPEC_LOYALTY: &str = r#"
name: check_loyalty_points
description: "Check customer's loyalty points balance and tier status"
version: '1.0.0'
triggers:
  - 'loyalty points'
  - 'rewards balance'
  - 'how many points'
  - 'membership tier'
parameters:
  - name: customer_email
    type: string
    required: true
    source: conversation
    description: "Customer's email address"
  - name: include_history
    type: boolean
    required: false
    default: false
    description: 'Include points earning history'
endpoint:
  url: 'https://{{store.loyalty_api_url}}/api/v1/customers/{{customer_email}}/points'
  method: GET
  headers:
    Authorization: 'Bearer {{store.loyalty_api_key}}'
    Content-Type: 'application/json'
  timeout: 10
response_mapping:
  points_balance: 'data.current_balance'
  tier: 'data.membership_tier'
  points_to_next_tier: 'data.points_needed_for_next_tier'
  expiring_points: 'data.expiring_soon'
response_template: |
  You have {{points_balance}} loyalty points and you're a {{tier}} member!
  {% if points_to_next_tier > 0 %}
  You need {{points_to_next_tier}} more points to reach the next tier.
  {% endif %}
error_handling:
  not_found: "I couldn't find your loyalty account."
  api_error: "I'm having trouble accessing the loyalty system right now."
"#;

/// A small tool whose endpoint each test rewrites.
fn tool(url: &str) -> HttpToolDefinition {
    parse_yaml(&format!(
        r#"
name: probe
description: probe tool
parameters:
  - {{name: id, type: string, required: true}}
  - {{name: q, type: string}}
  - {{name: n, type: integer}}
  - {{name: filter, type: object}}
  - {{name: email, type: string, source: conversation}}
endpoint:
  url: '{url}'
"#
    ))
    .unwrap()
}

fn config(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("args must be an object"),
    }
}

fn ctx<'a>(store: &'a dyn ConfigLookup, conversation: Value) -> CallContext<'a> {
    CallContext {
        customer: Map::new(),
        conversation: args(conversation),
        store,
        context: Map::new(),
    }
}

fn codes(violations: &[Violation]) -> Vec<&'static str> {
    violations.iter().map(|v| v.code).collect()
}

fn https_only() -> SecurityRules {
    SecurityRules {
        allow_plain_http: false,
    }
}

// ---------------------------------------------------------------- parsing

#[test]
fn spec_example_parses_and_validates() {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    assert_eq!(def.name, "check_loyalty_points");
    assert_eq!(def.parameters[0].source, ParamSource::Conversation);
    assert_eq!(def.parameters[1].source, ParamSource::Explicit);
    assert_eq!(def.endpoint.method, Method::Get);
    assert_eq!(def.endpoint.timeout, Some(10.0));
    assert_eq!(def.response_mapping["tier"], "data.membership_tier");
    assert_eq!(validate_definition(&def), vec![]);
    let checked = Mutex::new(Vec::new());
    let check = |url: &str| {
        checked.lock().unwrap().push(url.to_owned());
        Ok(())
    };
    assert_eq!(validate_security(&def, &https_only(), &check), vec![]);
    // The host comes from config, so there is nothing to check statically.
    assert!(checked.lock().unwrap().is_empty());
}

#[test]
fn json_and_yaml_give_the_same_definition() {
    let from_yaml = parse_yaml(SPEC_LOYALTY).unwrap();
    let as_json = serde_json::to_string(&from_yaml).unwrap();
    assert_eq!(parse_json(&as_json).unwrap(), from_yaml);
    assert_eq!(parse_any(&as_json).unwrap(), from_yaml);
    assert_eq!(load_definition(SPEC_LOYALTY).unwrap(), from_yaml);
}

#[test]
fn malformed_yaml_is_a_parse_error() {
    for src in [
        "name: [unclosed",
        "name: x\nendpoint: {url: 'https://a'}\n  bad indent: 1",
        "- just\n- a list",
        "",
        "name: x\nendpoint:\n  url: 'https://a'\n  method: TRACE",
        "name: x\nendpoint: {url: 'https://a'}\nrespone_template: typo",
        "name: x\nendpoint: {url: 'https://a'}\nparameters: [{name: a, source: everywhere}]",
    ] {
        let err = parse_yaml(src).unwrap_err();
        assert_eq!(err.code(), "invalid_yaml", "{src:?} gave {err}");
    }
    assert_eq!(
        parse_json("{\"name\": ").unwrap_err().code(),
        "invalid_json"
    );
}

#[test]
fn huge_input_is_refused_before_parsing() {
    let src = format!(
        "name: x\ndescription: '{}'\n",
        "a".repeat(MAX_DEFINITION_BYTES)
    );
    let err = parse_yaml(&src).unwrap_err();
    assert_eq!(
        err,
        ParseError::TooLarge {
            len: src.len(),
            max: MAX_DEFINITION_BYTES
        }
    );
    assert_eq!(parse_json(&src).unwrap_err().code(), "definition_too_large");
}

#[test]
fn billion_laughs_fails_fast_with_a_clear_error() {
    // Nine levels of nine aliases: 9^9 (387 million) strings if expanded.
    let mut src = String::from("name: x\nendpoint:\n  url: 'https://a.example'\n  body:\n");
    src.push_str(
        "    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for level in 1..9u8 {
        let prev = (b'a' + level - 1) as char;
        let cur = (b'a' + level) as char;
        let refs = vec![format!("*{prev}"); 9].join(",");
        src.push_str(&format!("    {cur}: &{cur} [{refs}]\n"));
    }
    assert!(src.len() < 2048);
    let err = parse_yaml(&src).unwrap_err();
    assert_eq!(err.code(), "invalid_yaml");
    assert!(err.to_string().contains("repetition limit"), "{err}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let src = format!(
        "name: x\nendpoint: {{url: 'https://a', body: {}{}}}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    assert_eq!(parse_yaml(&src).unwrap_err().code(), "invalid_yaml");
}

// ---------------------------------------------------------------- validation

#[test]
fn structural_violations_are_all_reported_with_paths() {
    let def = parse_yaml(
        r#"
name: Bad-Name
description: ''
triggers: ['  ']
parameters:
  - {name: id, type: integer, default: 'x'}
  - {name: id}
  - {name: store}
endpoint:
  url: 'https://api.example.com/{{missing}}/{{ id | upper }}'
  method: GET
  headers:
    Host: evil.example
    'X {{id}}': v
  body: {a: '{{id}}'}
  timeout: 60
response_mapping:
  ok: 'data.items[0]'
  bad: 'data..x'
  'not a name': 'x'
response_template: '{% if %}'
"#,
    )
    .unwrap();
    let found: Vec<(String, &str)> = validate_definition(&def)
        .into_iter()
        .map(|v| (v.path, v.code))
        .collect();
    let expect = [
        ("name", "invalid_name"),
        ("description", "missing_description"),
        ("triggers[0]", "invalid_trigger"),
        ("parameters[0].default", "type_mismatch"),
        ("parameters[1].name", "duplicate_name"),
        ("parameters[2].name", "invalid_name"),
        ("endpoint.timeout", "invalid_timeout"),
        ("endpoint.body", "body_not_allowed"),
        ("endpoint.headers.Host", "forbidden_header"),
        ("endpoint.headers.X {{id}}", "invalid_header"),
        ("endpoint.url", "invalid_placeholder"),
        ("response_mapping.bad", "invalid_path"),
        ("response_mapping.not a name", "invalid_name"),
        ("response_template", "template_error"),
    ];
    for (path, code) in expect {
        assert!(
            found.iter().any(|(p, c)| p == path && *c == code),
            "missing {path} {code} in {found:?}"
        );
    }
    assert!(!found.iter().any(|(p, _)| p == "response_mapping.ok"));
}

#[test]
fn unknown_placeholders_and_parameter_hosts_are_violations() {
    let def = tool("https://api.example.com/{{nope}}");
    assert_eq!(
        codes(&validate_definition(&def)),
        vec!["unknown_placeholder"]
    );
    let def = tool("https://{{id}}/x");
    let violations = validate_definition(&def);
    assert_eq!(codes(&violations), vec!["endpoint_render"]);
    assert!(
        violations[0]
            .message
            .contains("may not set the URL's scheme or host")
    );
    let def = tool("https://api.example.com/x#{{id}}");
    assert_eq!(codes(&validate_definition(&def)), vec!["endpoint_render"]);
    let def = tool("ftp://api.example.com/{{id}}");
    assert_eq!(codes(&validate_definition(&def)), vec!["endpoint_render"]);
    assert_eq!(
        validate_definition(&tool("https://api.example.com/a/{{id}}?q={{q}}")),
        vec![]
    );
}

#[test]
fn load_definition_reports_violations() {
    let err =
        load_definition("name: x\ndescription: d\nendpoint: {url: 'https://a.example/{{y}}'}")
            .unwrap_err();
    assert_eq!(err.code(), "invalid_definition");
    assert!(err.to_string().contains("endpoint.url"), "{err}");
}

#[test]
fn security_rules() {
    let allow_all = |_: &str| Ok(());
    let def = tool("http://api.example.com/{{id}}");
    assert_eq!(
        codes(&validate_security(&def, &https_only(), &allow_all)),
        vec!["plain_http"]
    );
    assert_eq!(
        validate_security(
            &def,
            &SecurityRules {
                allow_plain_http: true
            },
            &allow_all
        ),
        vec![]
    );

    let seen = Mutex::new(Vec::new());
    let refuse = |url: &str| {
        seen.lock().unwrap().push(url.to_owned());
        Err("resolves to a private address".to_owned())
    };
    let def = tool("https://10.0.0.1:8443/x/{{id}}");
    let violations = validate_security(&def, &https_only(), &refuse);
    assert_eq!(codes(&violations), vec!["url_refused"]);
    assert!(violations[0].message.contains("private address"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["https://10.0.0.1:8443/".to_owned()]
    );

    let def = tool("https://user:pw@api.example.com/x");
    assert_eq!(
        codes(&validate_security(&def, &https_only(), &allow_all)),
        vec!["credentials_in_url"]
    );
    let def = tool("https://api.example.com/x?api_key={{store.api_key}}");
    assert_eq!(
        codes(&validate_security(&def, &https_only(), &allow_all)),
        vec!["secret_outside_headers"]
    );
    let def = tool("https://api.example.com/x?access_token=abc123");
    assert_eq!(
        codes(&validate_security(&def, &https_only(), &allow_all)),
        vec!["hardcoded_secret"]
    );

    let mut def = tool("https://api.example.com/x");
    def.endpoint.method = Method::Post;
    def.endpoint.body = Some(json!({"auth": "{{store.booking_api_key}}", "id": "{{id}}"}));
    def.endpoint
        .headers
        .insert("Authorization".into(), "Bearer sk_live_123".into());
    let violations = validate_security(&def, &https_only(), &allow_all);
    assert_eq!(
        codes(&violations),
        vec!["secret_outside_headers", "hardcoded_secret"]
    );
    assert_eq!(violations[0].path, "endpoint.body.auth");
}

// ---------------------------------------------------------------- schema and triggers

#[test]
fn schema_shows_only_explicit_parameters() {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    assert_eq!(
        parameters_schema(&def),
        json!({
            "type": "object",
            "properties": {"include_history": {"type": "boolean", "description": "Include points earning history", "default": false}},
            "required": [],
            "additionalProperties": false,
        })
    );
    let def = tool("https://a.example/{{id}}");
    let schema = parameters_schema(&def);
    assert_eq!(schema["required"], json!(["id"]));
    assert!(schema["properties"].get("email").is_none());
    assert_eq!(schema["properties"]["n"], json!({"type": "integer"}));
}

#[test]
fn triggers_match_case_insensitively_as_phrases() {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    assert!(matches_triggers(&def, "Hey, how MANY   points do I have?"));
    assert!(matches_triggers(&def, "what's my Membership Tier"));
    assert!(!matches_triggers(&def, "how many pointy hats"));
    assert!(!matches_triggers(&def, "points"));
    let mut blank = def.clone();
    blank.triggers = vec![String::new(), "   ".into()];
    assert!(!matches_triggers(&blank, "anything at all"));
}

#[test]
fn ranking_prefers_more_and_longer_matches() {
    let a = vec!["size".to_owned()];
    let b = vec!["what size".to_owned(), "fit guide".to_owned()];
    let c = vec!["size recommendation".to_owned()];
    let d = vec!["loyalty".to_owned()];
    let tools = [
        ("a", a.as_slice()),
        ("b", b.as_slice()),
        ("c", c.as_slice()),
        ("d", d.as_slice()),
    ];
    let ranked = rank_by_triggers(
        tools,
        "What size? Is there a fit guide or a size recommendation",
    );
    let names: Vec<&str> = ranked.iter().map(|m| m.name).collect();
    assert_eq!(names, vec!["b", "c", "a"]);
    assert_eq!(ranked[0].matched, vec!["what size", "fit guide"]);
}

// ---------------------------------------------------------------- resolution

#[test]
fn context_parameters_are_filled_and_explicit_overrides_refused() {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    let store = config(&[]);
    let resolved = resolve_arguments(
        &def,
        &Map::new(),
        &ctx(&store, json!({"customer_email": "a@b.c"})),
    )
    .unwrap();
    assert_eq!(
        Value::Object(resolved),
        json!({"customer_email": "a@b.c", "include_history": false})
    );

    let err = resolve_arguments(&def, &Map::new(), &ctx(&store, json!({}))).unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::MissingParameter);
    assert_eq!(
        err.message,
        "required parameter 'customer_email' (source: conversation) has no value: the call's context has no conversation.customer_email"
    );

    let err = resolve_arguments(
        &def,
        &args(json!({"customer_email": "victim@x.y"})),
        &ctx(&store, json!({"customer_email": "a@b.c"})),
    )
    .unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::InvalidArguments);
    assert!(
        err.message.contains("cannot be passed explicitly"),
        "{}",
        err.message
    );

    let err = resolve_arguments(
        &def,
        &args(json!({"extra": 1})),
        &ctx(&store, json!({"customer_email": "a@b.c"})),
    )
    .unwrap_err();
    assert_eq!(err.message, "unknown argument 'extra'");

    let err = resolve_arguments(
        &def,
        &args(json!({"include_history": "yes"})),
        &ctx(&store, json!({"customer_email": "a@b.c"})),
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "parameter 'include_history' must be of type boolean, got string"
    );
}

#[test]
fn customer_store_and_context_sources() {
    let def = parse_yaml(
        r#"
name: t
description: d
parameters:
  - {name: customer_measurements, type: object, source: customer}
  - {name: product_id, required: true, source: context}
  - {name: limit, type: integer, source: store, required: true}
endpoint: {url: 'https://a.example/{{product_id}}'}
"#,
    )
    .unwrap();
    let store = config(&[("limit", "7")]);
    let call = CallContext {
        customer: args(json!({"measurements": {"chest": 96}})),
        conversation: Map::new(),
        store: &store,
        context: args(json!({"product_id": "p-1"})),
    };
    let resolved = resolve_arguments(&def, &Map::new(), &call).unwrap();
    assert_eq!(
        Value::Object(resolved),
        json!({"customer_measurements": {"chest": 96}, "product_id": "p-1", "limit": 7})
    );
    let empty = config(&[]);
    let call = CallContext {
        store: &empty,
        ..call
    };
    let err = resolve_arguments(&def, &Map::new(), &call).unwrap_err();
    assert_eq!(
        err.message,
        "required parameter 'limit' (source: store) has no value: the owner's configuration has no store.limit"
    );
}

// ---------------------------------------------------------------- rendering

fn render(url: &str, call_args: Value) -> Result<PreparedRequest, HttpToolError> {
    let def = tool(url);
    let store = config(&[
        ("base", "https://api.example.com/"),
        ("host", "api.example.com:8443"),
    ]);
    let resolved = resolve_arguments(
        &def,
        &args(call_args),
        &ctx(&store, json!({"email": "a@b.c"})),
    )?;
    prepare_request(&def, &resolved, &store)
}

#[test]
fn path_and_query_values_are_percent_encoded() {
    let req = render(
        "{{store.base}}/items/{{id}}?q={{q}}&n={{n}}",
        json!({"id": "../admin", "q": "a&b=c#d e", "n": 5}),
    )
    .unwrap();
    assert_eq!(
        req.url,
        "https://api.example.com/items/..%2Fadmin?q=a%26b%3Dc%23d%20e&n=5"
    );
    let req = render(
        "https://{{store.host}}/u/{{id}}",
        json!({"id": "x/../../etc/passwd?y#z"}),
    )
    .unwrap();
    assert_eq!(
        req.url,
        "https://api.example.com:8443/u/x%2F..%2F..%2Fetc%2Fpasswd%3Fy%23z"
    );
    let req = render("https://a.example/{{id}}", json!({"id": "%2e%2e"})).unwrap();
    assert_eq!(req.url, "https://a.example/%252e%252e");
}

#[test]
fn dot_segments_and_empty_segments_from_values_are_refused() {
    for id in ["..", ".", ""] {
        let err = render("https://a.example/files/{{id}}/raw", json!({"id": id})).unwrap_err();
        assert_eq!(err.kind, HttpErrorKind::Render, "{id:?}");
    }
    assert_eq!(
        render("https://a.example/v{{id}}", json!({"id": ".."}))
            .unwrap()
            .url,
        "https://a.example/v.."
    );
}

#[test]
fn placeholder_syntax_in_values_is_data() {
    #[derive(Default)]
    struct Recording(Mutex<Vec<String>>);
    impl ConfigLookup for Recording {
        fn get(&self, key: &str) -> Option<String> {
            self.0.lock().unwrap().push(key.to_owned());
            Some("https://api.example.com".into())
        }
    }
    let def = tool("{{store.base}}/{{id}}?q={{q}}");
    let store = Recording::default();
    let resolved = resolve_arguments(
        &def,
        &args(json!({"id": "{{store.secret_key}}", "q": "{% include 'x' %}"})),
        &ctx(&store, json!({})),
    )
    .unwrap();
    let req = prepare_request(&def, &resolved, &store).unwrap();
    assert_eq!(
        req.url,
        "https://api.example.com/%7B%7Bstore.secret_key%7D%7D?q=%7B%25%20include%20%27x%27%20%25%7D"
    );
    assert_eq!(*store.0.lock().unwrap(), vec!["base".to_owned()]);
}

#[test]
fn missing_values_never_become_empty_url_parts() {
    let err = render("https://a.example/{{id}}?q={{q}}", json!({"id": "x"})).unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::MissingParameter);
    assert_eq!(err.message, "{{q}} has no value but is used in the URL");
    let err = render("https://{{store.nothing}}/x", json!({"id": "x"})).unwrap_err();
    assert_eq!(
        err.message,
        "config value store.nothing is not set; configure it for this tool's owner"
    );
}

/// Found by the `http_definition` fuzz target: a URL whose scheme is not followed by `://` and a
/// host (`https:/`, `https:///`, `https:/\\`) made the renderer take what followed for the path,
/// where a parameter may stand; the URL parser then read that parameter as the host, so the
/// model chose where the request (and its `Authorization` header) went.
#[test]
fn a_parameter_never_becomes_the_host_through_a_short_scheme() {
    for url in [
        "https:/{{id}}/x",
        "https:///{{id}}/x",
        "https:/\\{{id}}/x",
        "http:/{{id}}",
        "https:/+{{store.host}}/x",
        "https:?{{id}}",
        "https:tickets?q={{id}}",
        "HTTPS:evil.example/{{id}}",
    ] {
        let err = render(url, json!({"id": "evil.example"})).unwrap_err();
        assert_eq!(err.kind, HttpErrorKind::Render, "{url}");
        assert!(
            err.message.contains("https://host/"),
            "{url}: {}",
            err.message
        );
        let violations = validate_definition(&tool(url));
        assert_eq!(codes(&violations), vec!["endpoint_render"], "{url}");
    }
    // What is written in full still renders as before.
    assert_eq!(
        render("https://{{store.host}}/x/{{id}}", json!({"id": "a"}))
            .unwrap()
            .url,
        "https://api.example.com:8443/x/a"
    );
    assert_eq!(
        render("{{store.base}}/{{id}}", json!({"id": "a"}))
            .unwrap()
            .url,
        "https://api.example.com/a"
    );
}

#[test]
fn hostile_origin_config_values_are_refused() {
    let def = tool("{{store.base}}/x");
    for base in [
        "https://evil.example/x?",
        "https://a@evil.example",
        "https://a.example\r\nX: y",
        "javascript:alert(1)",
        "",
    ] {
        let store = config(&[("base", base)]);
        let err = prepare_request(&def, &Map::new(), &store).unwrap_err();
        assert_eq!(err.kind, HttpErrorKind::Render, "{base:?}");
    }
}

#[test]
fn huge_values_make_an_over_long_url_error() {
    let err = render(
        "https://a.example/{{id}}",
        json!({"id": "x".repeat(MAX_URL_LEN)}),
    )
    .unwrap_err();
    assert!(err.message.contains("longer than"), "{}", err.message);
}

#[test]
fn header_values_refuse_line_breaks() {
    let mut def = tool("https://a.example/x");
    def.endpoint
        .headers
        .insert("X-Query".into(), "q={{q}}".into());
    let store = config(&[]);
    for q in ["a\r\nX-Admin: 1", "a\nb", "a\rb", "a\0b"] {
        let resolved = resolve_arguments(
            &def,
            &args(json!({"id": "1", "q": q})),
            &ctx(&store, json!({})),
        )
        .unwrap();
        let err = prepare_request(&def, &resolved, &store).unwrap_err();
        assert_eq!(err.kind, HttpErrorKind::Render, "{q:?}");
        assert!(err.message.contains("header 'X-Query'"));
    }
    let resolved = resolve_arguments(
        &def,
        &args(json!({"id": "1", "q": "tab\tok {{x}}"})),
        &ctx(&store, json!({})),
    )
    .unwrap();
    assert_eq!(
        prepare_request(&def, &resolved, &store)
            .unwrap()
            .header("x-query"),
        Some("q=tab\tok {{x}}")
    );
}

#[test]
fn structured_bodies_are_json_encoded_and_typed() {
    let mut def = tool("https://a.example/x");
    def.endpoint.method = Method::Post;
    def.endpoint.body = Some(
        json!({"id": "{{id}}", "text": "q: {{q}}", "filter": "{{filter}}", "n": "{{n}}", "list": ["{{id}}", 3]}),
    );
    let store = config(&[]);
    let hostile = "\", \"admin\": true, \"x\": \"\n\\";
    let resolved = resolve_arguments(
        &def,
        &args(json!({"id": hostile, "q": "{{id}}", "filter": {"a": [1]}})),
        &ctx(&store, json!({})),
    )
    .unwrap();
    let req = prepare_request(&def, &resolved, &store).unwrap();
    let body: Value = serde_json::from_str(req.body.as_deref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"id": hostile, "text": "q: {{id}}", "filter": {"a": [1]}, "n": null, "list": [hostile, 3]})
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
}

#[test]
fn text_bodies_must_stay_json() {
    let mut def = tool("https://a.example/x");
    def.endpoint.method = Method::Post;
    def.endpoint.body = Some(json!("{\"q\": \"{{q}}\", \"n\": {{n}}, \"f\": {{filter}}}"));
    let store = config(&[]);
    let hostile = "x\", \"admin\": true, \"y\": \"";
    let resolved = resolve_arguments(
        &def,
        &args(json!({"id": "1", "q": hostile, "n": 2, "filter": {"k": "v"}})),
        &ctx(&store, json!({})),
    )
    .unwrap();
    let req = prepare_request(&def, &resolved, &store).unwrap();
    let body: Value = serde_json::from_str(req.body.as_deref().unwrap()).unwrap();
    assert_eq!(body, json!({"q": hostile, "n": 2, "f": {"k": "v"}}));
    let resolved = resolve_arguments(
        &def,
        &args(json!({"id": "1", "q": "a", "n": 2})),
        &ctx(&store, json!({})),
    )
    .unwrap();
    assert_eq!(
        prepare_request(&def, &resolved, &store).unwrap_err().kind,
        HttpErrorKind::MissingParameter
    );
}

#[test]
fn credentials_are_refused_outside_headers_at_run_time_too() {
    let def = tool("https://a.example/x?key={{store.api_key}}");
    let store = config(&[("api_key", "sk_live_secret")]);
    let err = prepare_request(&def, &Map::new(), &store).unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::Render);
    assert!(!err.message.contains("sk_live_secret"));
}

// ---------------------------------------------------------------- templates

#[test]
fn template_renders_conditions_loops_and_filters() {
    let vars = args(json!({"points": 120, "tier": "gold", "items": ["a", "b"], "missing": null}));
    let out = render_template(
        "{{ points }} {{ tier|upper }}{% if points > 100 %} big{% endif %}{% for i in items %} {{ i }}{% endfor %}{% if missing > 0 %} never{% endif %}",
        &vars,
    )
    .unwrap();
    assert_eq!(out, "120 GOLD big a b");
}

#[test]
fn template_values_are_never_evaluated() {
    let vars = args(json!({"name": "{{ 7 * 7 }}{% for x in range(9) %}boom{% endfor %}"}));
    assert_eq!(
        render_template("Hi {{ name }}", &vars).unwrap(),
        "Hi {{ 7 * 7 }}{% for x in range(9) %}boom{% endfor %}"
    );
}

#[test]
fn template_fuel_output_and_loader_limits() {
    let vars = Map::new();
    let bomb = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}";
    assert_eq!(
        render_template(bomb, &vars).unwrap_err(),
        TemplateError::OutOfFuel
    );
    let wide = "{% for i in range(5000) %}xxxxxxxxxxxxxxxxxxxx{% endfor %}";
    assert_eq!(
        render_template(wide, &vars).unwrap_err(),
        TemplateError::OutputTooLarge
    );
    let include = "{% include '/etc/passwd' %}";
    let err = render_template(include, &vars).unwrap_err();
    assert!(
        matches!(err, TemplateError::Syntax(_) | TemplateError::Render(_)),
        "{err:?}"
    );
    let recursive = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
    assert!(render_template(recursive, &vars).is_err());
    let huge = "x".repeat(MAX_TEMPLATE_SOURCE + 1);
    assert_eq!(
        compile_template(&huge).unwrap_err(),
        TemplateError::TooLarge { len: huge.len() }
    );
}

// ---------------------------------------------------------------- execution with a canned sender

struct Canned {
    status: u16,
    body: Vec<u8>,
    seen: Mutex<Vec<PreparedRequest>>,
}

impl Canned {
    fn new(status: u16, body: &[u8]) -> Self {
        Self {
            status,
            body: body.to_vec(),
            seen: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl HttpSender for Canned {
    async fn send(&self, req: PreparedRequest) -> Result<SenderResponse, SendError> {
        self.seen.lock().unwrap().push(req);
        Ok(SenderResponse {
            status: self.status,
            headers: Vec::new(),
            body: self.body.clone(),
        })
    }
}

struct Failing(SendError);

#[async_trait]
impl HttpSender for Failing {
    async fn send(&self, _req: PreparedRequest) -> Result<SenderResponse, SendError> {
        Err(self.0.clone())
    }
}

struct Never;

#[async_trait]
impl HttpSender for Never {
    async fn send(&self, _req: PreparedRequest) -> Result<SenderResponse, SendError> {
        std::future::pending().await
    }
}

async fn run_loyalty(sender: &dyn HttpSender) -> Result<HttpToolOutput, HttpToolError> {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    let store = config(&[
        ("loyalty_api_url", "loyalty.example.com"),
        ("loyalty_api_key", "k-123"),
    ]);
    execute(
        &def,
        &Map::new(),
        &ctx(&store, json!({"customer_email": "ann@example.com"})),
        sender,
        &https_only(),
    )
    .await
}

#[tokio::test]
async fn execute_maps_and_renders() {
    let sender = Canned::new(200, br#"{"data": {"current_balance": 1250, "membership_tier": "Gold", "points_needed_for_next_tier": 0}}"#);
    let out = run_loyalty(&sender).await.unwrap();
    assert_eq!(out.status, 200);
    assert_eq!(
        out.text,
        "You have 1250 loyalty points and you're a Gold member!\n"
    );
    assert_eq!(
        out.data,
        json!({"points_balance": 1250, "tier": "Gold", "points_to_next_tier": 0, "expiring_points": null})
    );
    let seen = sender.seen.lock().unwrap();
    assert_eq!(
        seen[0].url,
        "https://loyalty.example.com/api/v1/customers/ann%40example.com/points"
    );
    assert_eq!(seen[0].header("authorization"), Some("Bearer k-123"));
    assert_eq!(seen[0].timeout, Duration::from_secs(10));
    assert_eq!(seen[0].max_response_bytes, MAX_RESPONSE_BYTES);
}

#[tokio::test]
async fn http_statuses_map_to_error_handling_messages() {
    let cases = [
        (
            404,
            HttpErrorKind::NotFound,
            "I couldn't find your loyalty account.",
        ),
        (
            401,
            HttpErrorKind::Unauthorized,
            "The service refused the request: the tool is not authorized.",
        ),
        (
            403,
            HttpErrorKind::Unauthorized,
            "The service refused the request: the tool is not authorized.",
        ),
        (
            429,
            HttpErrorKind::RateLimited,
            "The service is receiving too many requests. Please try again shortly.",
        ),
        (
            500,
            HttpErrorKind::ApiError,
            "I'm having trouble accessing the loyalty system right now.",
        ),
        (
            302,
            HttpErrorKind::ApiError,
            "I'm having trouble accessing the loyalty system right now.",
        ),
        (
            504,
            HttpErrorKind::Timeout,
            "The service did not answer in time. Please try again later.",
        ),
    ];
    for (status, kind, message) in cases {
        let err = run_loyalty(&Canned::new(status, b"{}")).await.unwrap_err();
        assert_eq!(
            (err.kind, err.message.as_str(), err.status),
            (kind, message, Some(status))
        );
    }
}

#[tokio::test]
async fn bad_bodies_and_send_failures() {
    let err = run_loyalty(&Canned::new(200, b"<html>oops</html>"))
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind, err.status),
        (HttpErrorKind::InvalidResponse, Some(200))
    );
    assert_eq!(
        err.message,
        "The service sent a response that could not be read."
    );

    let big = vec![b' '; MAX_RESPONSE_BYTES + 1];
    let err = run_loyalty(&Canned::new(200, &big)).await.unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::TooLarge);

    let err = run_loyalty(&Failing(SendError::Refused("10.0.0.1 is private".into())))
        .await
        .unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::Refused);
    assert!(err.message.contains("10.0.0.1 is private"));

    let err = run_loyalty(&Failing(SendError::Connection("reset".into())))
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind, err.detail.as_deref()),
        (HttpErrorKind::ApiError, Some("connection failed: reset"))
    );
}

#[tokio::test(start_paused = true)]
async fn the_endpoint_timeout_is_enforced_even_if_the_sender_hangs() {
    let err = run_loyalty(&Never).await.unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::Timeout);
    assert_eq!(err.status, None);
}

#[tokio::test]
async fn plain_http_is_refused_at_run_time_unless_allowed() {
    let def = tool("{{store.base}}/{{id}}");
    let store = config(&[("base", "http://api.example.com")]);
    let sender = Canned::new(200, b"{}");
    let call = ctx(&store, json!({}));
    let err = execute(
        &def,
        &args(json!({"id": "1"})),
        &call,
        &sender,
        &https_only(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.message, "the endpoint must use https");
    assert!(sender.seen.lock().unwrap().is_empty());
    let out = execute(
        &def,
        &args(json!({"id": "1"})),
        &call,
        &sender,
        &SecurityRules {
            allow_plain_http: true,
        },
    )
    .await
    .unwrap();
    assert_eq!((out.status, out.text.as_str()), (200, "{}"));
}

#[tokio::test]
async fn template_fuel_exhaustion_is_a_tool_error() {
    let mut def = tool("https://a.example/{{id}}");
    def.response_template = Some(
        "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}".into(),
    );
    let store = config(&[]);
    let err = execute(
        &def,
        &args(json!({"id": "1"})),
        &ctx(&store, json!({})),
        &Canned::new(200, b"{}"),
        &https_only(),
    )
    .await
    .unwrap_err();
    assert_eq!((err.kind, err.status), (HttpErrorKind::Template, Some(200)));
}

#[tokio::test]
async fn endpoint_probe_reports_missing_paths() {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    let store = config(&[
        ("loyalty_api_url", "loyalty.example.com"),
        ("loyalty_api_key", "k"),
    ]);
    let sender = Canned::new(200, br#"{"data": {"current_balance": 1, "membership_tier": "x", "points_needed_for_next_tier": 2}}"#);
    let report = validate_endpoint(
        &def,
        &Map::new(),
        &ctx(&store, json!({"customer_email": "a@b.c"})),
        &sender,
        &https_only(),
    )
    .await;
    assert!(report.ok);
    assert_eq!(report.missing_paths, vec!["expiring_points".to_owned()]);
    let report = validate_endpoint(
        &def,
        &Map::new(),
        &ctx(&store, json!({"customer_email": "a@b.c"})),
        &Canned::new(404, b""),
        &https_only(),
    )
    .await;
    assert_eq!((report.ok, report.status), (false, Some(404)));
}

#[test]
fn config_keys_lists_every_store_reference() {
    let def = parse_yaml(SPEC_LOYALTY).unwrap();
    let keys: Vec<String> = config_keys(&def).into_iter().collect();
    assert_eq!(
        keys,
        vec!["loyalty_api_key".to_owned(), "loyalty_api_url".to_owned()]
    );
}

#[test]
fn duplicate_headers_and_nan_timeouts() {
    let mut def = tool("https://a.example/{{id}}");
    def.endpoint.headers.insert("Accept".into(), "a".into());
    def.endpoint.headers.insert("accept".into(), "b".into());
    def.endpoint.timeout = Some(f64::NAN);
    let found = codes(&validate_definition(&def));
    assert!(found.contains(&"duplicate_header"), "{found:?}");
    assert!(found.contains(&"invalid_timeout"), "{found:?}");
    // Unvalidated, a NaN timeout still cannot panic: it falls back to the default.
    let store = config(&[]);
    let resolved =
        resolve_arguments(&def, &args(json!({"id": "1"})), &ctx(&store, json!({}))).unwrap();
    let req = prepare_request(&def, &resolved, &store).unwrap();
    assert_eq!(req.timeout, Duration::from_secs(10));
    let yaml_nan =
        parse_yaml("name: x\nendpoint: {url: 'https://a.example', timeout: .nan}").unwrap();
    assert!(codes(&validate_definition(&yaml_nan)).contains(&"invalid_timeout"));
}

#[test]
fn caller_context_is_read_but_cannot_supply_store_values() {
    let store = config(&[("loyalty_api_url", "loyalty.example.com")]);
    let caller = json!({
        "conversation": {"customer_email": "a@b.c"},
        "customer": {"tier": "gold"},
        "store": {"loyalty_api_url": "evil.example"},
        "context": null,
    });
    let call = CallContext::from_caller(Some(&caller), &store).unwrap();
    assert_eq!(call.conversation, args(json!({"customer_email": "a@b.c"})));
    assert_eq!(call.customer, args(json!({"tier": "gold"})));
    assert!(call.context.is_empty());
    assert_eq!(
        call.store.get("loyalty_api_url").as_deref(),
        Some("loyalty.example.com")
    );
    assert!(
        CallContext::from_caller(None, &store)
            .unwrap()
            .conversation
            .is_empty()
    );
    let err = CallContext::from_caller(Some(&json!({"customer": "x"})), &store)
        .err()
        .unwrap();
    assert_eq!(
        err.message,
        "the call's context.customer must be a JSON object"
    );
    assert!(CallContext::from_caller(Some(&json!([1])), &store).is_err());
}

#[test]
fn methods_accept_lower_case_and_unicode_is_encoded() {
    let def =
        parse_yaml("name: x\ndescription: d\nendpoint: {url: 'https://a.example', method: post}")
            .unwrap();
    assert_eq!(def.endpoint.method, Method::Post);
    let req = render("https://a.example/{{id}}", json!({"id": "grüße 😀"})).unwrap();
    assert_eq!(req.url, "https://a.example/gr%C3%BC%C3%9Fe%20%F0%9F%98%80");
}
