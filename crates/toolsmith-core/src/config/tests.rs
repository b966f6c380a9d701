//! Tests of the Config Center's records and rules, including hostile input.

use chrono::TimeZone;
use serde_json::json;

use super::*;

type Change = Box<dyn Fn(&mut ConfigServiceRecord)>;

fn now() -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000, 0).unwrap()
}

fn service() -> ConfigServiceRecord {
    ConfigServiceRecord::new("alice", "weatherapi", now())
}

fn values(v: Value) -> BTreeMap<String, Value> {
    serde_json::from_value(v).unwrap()
}

fn field(name: &str, kind: FieldKind, required: bool) -> ConfigField {
    ConfigField {
        name: name.to_owned(),
        label: String::new(),
        kind,
        required,
        description: None,
    }
}

#[test]
fn a_new_service_has_the_default_fields_and_is_valid() {
    let s = service();
    assert!(s.id.starts_with("svc_") && s.id.len() == 20);
    assert_eq!(
        s.fields
            .iter()
            .map(|f| (f.name.as_str(), f.kind, f.required))
            .collect::<Vec<_>>(),
        vec![
            ("api_key", FieldKind::Secret, true),
            ("base_url", FieldKind::Url, false)
        ]
    );
    s.validate().unwrap();
    assert!(ConfigEntryRecord::new_id().starts_with("cfg_"));
}

#[test]
fn records_serialize_in_camel_case_and_round_trip() {
    let mut s = service();
    s.docs_url = Some("https://www.weatherapi.com/docs/".to_owned());
    s.registered_by = vec!["fetch_weather".to_owned()];
    let j = serde_json::to_value(&s).unwrap();
    for key in [
        "displayName",
        "docsUrl",
        "multiEntry",
        "registeredBy",
        "autoRegistered",
        "createdAt",
    ] {
        assert!(j.get(key).is_some(), "{key}");
    }
    assert_eq!(j["fields"][0]["kind"], "secret");
    assert_eq!(serde_json::from_value::<ConfigServiceRecord>(j).unwrap(), s);

    let entry = ConfigEntryRecord {
        id: ConfigEntryRecord::new_id(),
        service_id: s.id.clone(),
        label: "default".to_owned(),
        is_default: true,
        values: [
            (
                "api_key".to_owned(),
                StoredValue::Secret("v1:AAAA".to_owned()),
            ),
            (
                "base_url".to_owned(),
                StoredValue::Url("https://x.test".to_owned()),
            ),
        ]
        .into(),
        revision: 1,
        created_at: now(),
        updated_at: now(),
    };
    let j = serde_json::to_value(&entry).unwrap();
    assert_eq!(j["values"]["api_key"], json!({"secret": "v1:AAAA"}));
    assert_eq!(j["isDefault"], true);
    assert_eq!(
        serde_json::from_value::<ConfigEntryRecord>(j).unwrap(),
        entry
    );
}

#[test]
fn field_definitions_accept_type_as_an_alias_and_default_the_rest() {
    let f: ConfigField = serde_json::from_value(json!({"name": "host", "type": "text"})).unwrap();
    assert_eq!(f, field("host", FieldKind::Text, false));
    assert!(
        serde_json::from_value::<ConfigField>(json!({"name": "x", "kind": "password"})).is_err()
    );
    assert_eq!("url".parse::<FieldKind>(), Ok(FieldKind::Url));
    assert!("URL".parse::<FieldKind>().is_err());
}

#[test]
fn service_names_follow_the_tool_naming_rule() {
    for ok in ["a", "weatherapi", "smtp_2", &"a".repeat(64)] {
        validate_config_name("service name", ok).unwrap();
    }
    for bad in [
        "",
        "Weather",
        "1api",
        "_x",
        "a-b",
        "a.b",
        "a b",
        "naïve",
        "ａ",
        "a\0",
        "a\n",
        &"a".repeat(65),
    ] {
        let mut s = service();
        s.name = bad.to_owned();
        let err = s.validate().unwrap_err();
        assert!(
            matches!(err.code(), "invalid_name" | "too_large"),
            "{bad:?}"
        );
        assert!(!err.to_string().contains('\0'));
    }
}

#[test]
fn service_texts_and_urls_are_checked() {
    let cases: Vec<(&str, Change)> = vec![
        (
            "empty display",
            Box::new(|s| s.display_name = " ".to_owned()),
        ),
        (
            "long display",
            Box::new(|s| s.display_name = "x".repeat(129)),
        ),
        (
            "control display",
            Box::new(|s| s.display_name = "a\u{1b}[31m".to_owned()),
        ),
        (
            "long description",
            Box::new(|s| s.description = Some("x".repeat(2001))),
        ),
        (
            "empty category",
            Box::new(|s| s.category = Some(String::new())),
        ),
        (
            "javascript url",
            Box::new(|s| s.docs_url = Some("javascript:alert(1)".to_owned())),
        ),
        (
            "file url",
            Box::new(|s| s.docs_url = Some("file:///etc/passwd".to_owned())),
        ),
        (
            "no host",
            Box::new(|s| s.docs_url = Some("https://".to_owned())),
        ),
        (
            "spaces",
            Box::new(|s| s.docs_url = Some("https://a.test/x y".to_owned())),
        ),
        (
            "huge url",
            Box::new(|s| s.docs_url = Some(format!("https://a.test/{}", "x".repeat(3000)))),
        ),
        (
            "bad tool",
            Box::new(|s| s.registered_by = vec!["Bad-Tool".to_owned()]),
        ),
        (
            "many tools",
            Box::new(|s| s.registered_by = (0..1001).map(|i| format!("t{i}")).collect()),
        ),
    ];
    for (what, change) in cases {
        let mut s = service();
        change(&mut s);
        assert!(s.validate().is_err(), "{what}");
    }
    let mut s = service();
    s.description = Some("line one\nline two".to_owned());
    s.docs_url = Some("HTTPS://Example.com:8443/docs?x=1#y".to_owned());
    s.validate().unwrap();
}

#[test]
fn field_lists_are_checked() {
    let mut s = service();
    s.fields = vec![];
    assert_eq!(s.validate().unwrap_err().code(), "invalid_field");
    s.fields = vec![
        field("a", FieldKind::Text, false),
        field("a", FieldKind::Url, false),
    ];
    assert_eq!(s.validate().unwrap_err().code(), "invalid_field");
    s.fields = (0..33)
        .map(|i| field(&format!("f{i}"), FieldKind::Text, false))
        .collect();
    assert_eq!(s.validate().unwrap_err().code(), "too_large");
    s.fields = vec![field("Bad", FieldKind::Text, false)];
    assert_eq!(s.validate().unwrap_err().code(), "invalid_name");
    let mut f = field("ok", FieldKind::Text, false);
    f.label = "x".repeat(129);
    s.fields = vec![f];
    assert_eq!(s.validate().unwrap_err().code(), "too_large");
}

#[test]
fn entry_values_are_checked_against_their_fields() {
    let mut s = service();
    s.fields.push(field("port", FieldKind::Number, false));
    s.fields.push(field("tls", FieldKind::Boolean, false));
    s.fields.push(field("user", FieldKind::Text, false));
    let ok = values(
        json!({"api_key": "sk-1", "base_url": "https://api.test/v1", "port": 587, "tls": true, "user": "me", }),
    );
    check_entry_values(&s.fields, &ok).unwrap();
    // null counts as absent for optional fields.
    check_entry_values(
        &s.fields,
        &values(json!({"api_key": "k", "base_url": null})),
    )
    .unwrap();

    let bad = [
        (json!({"base_url": "https://a.test"}), "missing_field"),
        (json!({"api_key": ""}), "missing_field"),
        (json!({"api_key": null}), "missing_field"),
        (json!({"api_key": "k", "nope": 1}), "unknown_field"),
        (json!({"api_key": 42}), "invalid_value"),
        (json!({"api_key": ["k"]}), "invalid_value"),
        (json!({"api_key": "k\u{0}"}), "invalid_value"),
        (
            json!({"api_key": "k", "base_url": "ftp://a.test"}),
            "invalid_value",
        ),
        (
            json!({"api_key": "k", "base_url": "http://"}),
            "invalid_value",
        ),
        (json!({"api_key": "k", "port": "587"}), "invalid_value"),
        (json!({"api_key": "k", "tls": "true"}), "invalid_value"),
        (json!({"api_key": "k", "user": {"a": 1}}), "invalid_value"),
        (
            json!({"api_key": "x".repeat(MAX_VALUE_LEN + 1)}),
            "too_large",
        ),
        (
            json!({"api_key": "k", "user": "é".repeat(MAX_VALUE_LEN / 2 + 1)}),
            "too_large",
        ),
    ];
    for (v, code) in bad {
        let err = check_entry_values(&s.fields, &values(v.clone())).unwrap_err();
        assert_eq!(err.code(), code, "{v}");
    }
    // The largest allowed value passes.
    check_entry_values(
        &s.fields,
        &values(json!({"api_key": "x".repeat(MAX_VALUE_LEN)})),
    )
    .unwrap();
}

#[test]
fn stored_values_must_match_kinds_and_secrets_must_be_sealed() {
    let s = service();
    let stored = |pairs: Vec<(&str, StoredValue)>| -> BTreeMap<String, StoredValue> {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    };
    check_stored_values(
        &s.fields,
        &stored(vec![(
            "api_key",
            StoredValue::Secret("v1:QUJD+/==".to_owned()),
        )]),
    )
    .unwrap();
    let bad = [
        stored(vec![("api_key", StoredValue::Text("v1:QUJD".to_owned()))]),
        stored(vec![(
            "api_key",
            StoredValue::Secret("sk-plaintext".to_owned()),
        )]),
        stored(vec![("api_key", StoredValue::Secret("v1:".to_owned()))]),
        stored(vec![(
            "api_key",
            StoredValue::Secret("v1:abc def".to_owned()),
        )]),
        stored(vec![(
            "api_key",
            StoredValue::Secret(format!("v1:{}", "A".repeat(MAX_SEALED_LEN))),
        )]),
        stored(vec![(
            "base_url",
            StoredValue::Url("gopher://x".to_owned()),
        )]),
        stored(vec![("other", StoredValue::Boolean(true))]),
    ];
    for v in bad {
        assert!(check_stored_values(&s.fields, &v).is_err(), "{v:?}");
    }
}

#[test]
fn plain_values_convert_only_for_matching_non_secret_kinds() {
    assert_eq!(
        StoredValue::plain(FieldKind::Text, &json!("a")),
        Some(StoredValue::Text("a".to_owned()))
    );
    assert_eq!(
        StoredValue::plain(FieldKind::Number, &json!(1.5))
            .unwrap()
            .plain_json(),
        Some(json!(1.5))
    );
    assert_eq!(
        StoredValue::plain(FieldKind::Boolean, &json!(false)),
        Some(StoredValue::Boolean(false))
    );
    assert_eq!(StoredValue::plain(FieldKind::Secret, &json!("k")), None);
    assert_eq!(StoredValue::plain(FieldKind::Number, &json!("1")), None);
    assert_eq!(StoredValue::Secret("v1:x".to_owned()).plain_json(), None);
}

#[test]
fn entries_report_missing_required_fields_and_check_labels() {
    let s = service();
    let mut e = ConfigEntryRecord {
        id: ConfigEntryRecord::new_id(),
        service_id: s.id.clone(),
        label: "work".to_owned(),
        is_default: true,
        values: BTreeMap::new(),
        revision: 1,
        created_at: now(),
        updated_at: now(),
    };
    assert_eq!(e.missing_required(&s), vec!["api_key"]);
    e.values.insert(
        "api_key".to_owned(),
        StoredValue::Secret("v1:QQ==".to_owned()),
    );
    assert!(e.missing_required(&s).is_empty());
    e.validate(&s).unwrap();
    for bad in ["", " work", "work ", "a\nb", "\u{7}", &"x".repeat(129)] {
        e.label = bad.to_owned();
        assert!(e.validate(&s).is_err(), "{bad:?}");
    }
    e.label = "Personal – Gmail 📧".to_owned();
    e.validate(&s).unwrap();
}
