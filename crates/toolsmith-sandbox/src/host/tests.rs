//! Unit tests of reading the sandbox's JSON.

use serde_json::json;

use super::*;

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    assert_eq!(parse_json(r#""a\ud800b""#).unwrap(), json!("a\u{fffd}b"));
    assert_eq!(
        parse_json(r#"["\udc00", "x"]"#).unwrap(),
        json!(["\u{fffd}", "x"])
    );
    assert_eq!(parse_json(r#""\ud83d\ude00""#).unwrap(), json!("😀"));
    assert_eq!(parse_json(r#""\\ud800""#).unwrap(), json!("\\ud800"));
    assert_eq!(
        parse_json(r#""\ud800\ud800""#).unwrap(),
        json!("\u{fffd}\u{fffd}")
    );
}

#[test]
fn other_errors_stay_errors() {
    assert!(parse_json("{").is_err());
    assert_eq!(replace_lone_surrogates(r#""plain""#), None);
}
