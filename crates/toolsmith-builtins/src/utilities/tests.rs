//! The shared argument readers: what each accepts and the fix its error names.

use serde_json::json;

use super::*;

#[test]
fn choices_name_every_allowed_value() {
    let args = json!({"unit": "parsecs"});
    assert_eq!(
        choice(&args, "unit", "m", &["m", "km"])
            .unwrap_err()
            .message(),
        "'unit' must be one of: m, km"
    );
    assert_eq!(choice(&json!({}), "unit", "m", &["m", "km"]).unwrap(), "m");
    assert_eq!(
        required_choice(&json!({}), "unit", &["m", "km"])
            .unwrap_err()
            .message(),
        "'unit' is required; use one of: m, km"
    );
    assert_eq!(
        choice(&json!({"unit": 5}), "unit", "m", &["m"])
            .unwrap_err()
            .message(),
        "'unit' must be one of: m"
    );
}

#[test]
fn numbers_and_integers() {
    assert_eq!(opt_int(&json!({"n": 3.0}), "n", 1, 1, 5).unwrap(), 3);
    assert_eq!(opt_int(&json!({}), "n", 1, 1, 5).unwrap(), 1);
    for bad in [json!(6), json!(2.5), json!("3"), json!(1e300)] {
        assert_eq!(
            opt_int(&json!({"n": bad}), "n", 1, 1, 5)
                .unwrap_err()
                .message(),
            "'n' must be an integer from 1 to 5"
        );
    }
    assert_eq!(
        num_arg(&json!({"x": "1"}), "x").unwrap_err().message(),
        "'x' is required and must be a number"
    );
    assert_eq!(opt_num(&json!({"x": null}), "x", 2.5).unwrap(), 2.5);
    assert_eq!(
        opt_bool(&json!({"b": "yes"}), "b", true)
            .unwrap_err()
            .message(),
        "'b' must be true or false"
    );
    assert!(matches!(number(f64::INFINITY), Err(Fail::Run(_))));
    assert_eq!(significant(0.1 + 0.2), 0.3);
    assert_eq!(significant(1.0e-20 / 3.0), 3.333_333_333_33e-21);
    assert_eq!(significant(123_456_789_012_345.0), 123_456_789_012_000.0);
    assert_eq!(round(2.345_67, 2), 2.35);
    assert_eq!(
        round(1e308, 4),
        1e308,
        "too large to scale: returned as it is"
    );
}

#[test]
fn json_values_or_their_text() {
    assert_eq!(json_arg(&json!({"d": [1]}), "d", 10).unwrap(), json!([1]));
    assert_eq!(json_arg(&json!({"d": "[1]"}), "d", 10).unwrap(), json!([1]));
    assert!(
        json_arg(&json!({"d": "[1,"}), "d", 10)
            .unwrap_err()
            .message()
            .contains("not valid JSON")
    );
    assert!(
        json_arg(&json!({"d": "[1, 2, 3, 4]"}), "d", 5)
            .unwrap_err()
            .message()
            .contains("the limit is 5 bytes")
    );
    assert_eq!(
        json_arg(&json!({}), "d", 10).unwrap_err().message(),
        "'d' is required"
    );
    assert!(
        array_arg(&json!({"d": {"a": 1}}), "d", 5)
            .unwrap_err()
            .message()
            .contains("must be an array")
    );
    assert!(
        array_arg(&json!({"d": [1, 2, 3]}), "d", 2)
            .unwrap_err()
            .message()
            .contains("has 3 elements; the limit is 2")
    );
}

#[test]
fn sizes_are_checked_in_bytes() {
    assert!(text_arg(&json!({"t": "ééé"}), "t", 6).is_ok());
    let err = text_arg(&json!({"t": "éééé"}), "t", 6).unwrap_err();
    assert_eq!(
        err.message(),
        "'t' is 8 bytes; the limit is 6 bytes: send a shorter text or split it into parts"
    );
}

fn panics(_: &Value) -> Result<Value, Fail> {
    panic!("a bug in a tool")
}

/// Inline or on the blocking pool, a tool's panic is the pipeline's `internal` result, never a
/// crash, and a tool's `Fail` keeps its kind.
#[tokio::test]
async fn both_ways_of_running_keep_the_pipelines_guarantees() {
    use toolsmith_core::{Pipeline, PipelineLimits, ToolRegistry};
    for runs in [Runs::Inline, Runs::Blocking] {
        let registry = ToolRegistry::default();
        registry
            .register_builtin(pure_tool(regex_tool::definition(), CATEGORY, panics, runs))
            .unwrap();
        registry
            .register_builtin(pure_tool(
                count_text::definition(),
                CATEGORY,
                count_text::run,
                runs,
            ))
            .unwrap();
        let pipeline = Pipeline::new(std::sync::Arc::new(registry), PipelineLimits::default());
        let ctx = || ToolContext::new("default");
        let res = pipeline
            .execute("regex", r#"{"pattern": "a", "text": "a"}"#, ctx())
            .await;
        assert_eq!(
            res.error_kind(),
            Some(ErrorKind::Internal),
            "{runs:?}: {:?}",
            res.content
        );
        let res = pipeline
            .execute("count_text", r#"{"text": "two words"}"#, ctx())
            .await;
        assert_eq!(res.content["words"], 2, "{runs:?}");
        let long = serde_json::json!({"text": "a".repeat(MAX_TEXT_BYTES + 1)}).to_string();
        let res = pipeline.execute("count_text", &long, ctx()).await;
        assert_eq!(
            res.error_kind(),
            Some(ErrorKind::InvalidArguments),
            "{runs:?}"
        );
    }
}
