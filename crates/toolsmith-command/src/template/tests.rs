//! Tests of template parsing and one-pass rendering, including hostile values.

use serde_json::{Map, Value, json};

use super::{RenderError, Template, TemplateError, render};

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("test arguments are objects"),
    }
}

#[track_caller]
fn check(template: &str, arguments: Value, expected: &str) {
    assert_eq!(render(template, &args(arguments)).unwrap(), expected);
}

#[track_caller]
fn check_err(template: &str, expected: &str) {
    let err = Template::parse(template).unwrap_err();
    assert_eq!(err.code(), expected, "{err}");
}

#[test]
fn renders_the_spec_example() {
    check(
        "dig +short {{.record_type}} {{.domain}}",
        json!({"record_type": "MX", "domain": "example.com"}),
        "dig +short 'MX' 'example.com'",
    );
}

#[test]
fn spaces_inside_braces_and_repeated_placeholders() {
    check("echo {{ .a }} {{.a}}", json!({"a": "x"}), "echo 'x' 'x'");
    let template = Template::parse("a {{.x}} b {{.y}} {{.x}}").unwrap();
    assert_eq!(template.placeholders(), ["x", "y"]);
}

#[test]
fn missing_and_null_render_as_empty_quoted_strings() {
    check(
        "grep {{.pattern}} {{.file}}",
        json!({"file": null}),
        "grep '' ''",
    );
}

#[test]
fn non_string_values_render_canonically() {
    check(
        "t {{.n}} {{.f}} {{.b}} {{.arr}} {{.obj}}",
        json!({"n": 42, "f": -1.5, "b": true, "arr": [1, "x'y"], "obj": {"k": "v"}}),
        r#"t '42' '-1.5' 'true' '[1,"x'\''y"]' '{"k":"v"}'"#,
    );
}

/// Reference mistake: a value containing `{{.other}}` was expanded a second time.
#[test]
fn a_value_containing_a_placeholder_is_never_expanded_again() {
    check(
        "echo {{.a}} {{.b}}",
        json!({"a": "{{.b}}", "b": "$(touch /tmp/pwned)"}),
        "echo '{{.b}}' '$(touch /tmp/pwned)'",
    );
    check(
        "echo {{.a}}",
        json!({"a": "{{.a}}{{.a}}"}),
        "echo '{{.a}}{{.a}}'",
    );
}

#[test]
fn shell_metacharacters_stay_inside_one_quoted_word() {
    check(
        "echo {{.a}}",
        json!({"a": "it's $(id) `id`; rm && x\n|y"}),
        "echo 'it'\\''s $(id) `id`; rm && x\n|y'",
    );
}

#[test]
fn nul_bytes_are_refused() {
    let err = render("echo {{.a}}", &args(json!({"a": "x\u{0}y"}))).unwrap_err();
    assert_eq!(err, RenderError::NulByte { param: "a".into() });
    // Inside an array the NUL is JSON-escaped, so no raw NUL reaches the shell.
    check(
        "echo {{.a}}",
        json!({"a": ["x\u{0}"]}),
        r#"echo '["x\u0000"]'"#,
    );
    check_err("echo \u{0}", "template_nul_byte");
}

#[test]
fn huge_values_are_refused() {
    let err = render("echo {{.a}}", &args(json!({"a": "x".repeat(200_000)}))).unwrap_err();
    assert_eq!(err.code(), "rendered_too_long");
}

#[test]
fn malformed_placeholders_are_refused() {
    check_err("echo {{.a", "template_unterminated_placeholder");
    check_err("echo {{a}}", "template_invalid_placeholder");
    check_err("echo {{.}}", "template_invalid_placeholder");
    check_err("echo {{.1a}}", "template_invalid_placeholder");
    check_err("echo {{.a | printf}}", "template_invalid_placeholder");
    check_err("echo {{.a-b}}", "template_invalid_placeholder");
    check_err("echo {{.ｒ}}", "template_invalid_placeholder");
    check_err(
        &format!("echo {{{{.{}}}}}", "a".repeat(65)),
        "template_invalid_placeholder",
    );
    check_err("   ", "template_empty");
}

#[test]
fn placeholders_inside_quotes_or_escapes_are_refused() {
    check_err("echo \"{{.a}}\"", "template_placeholder_in_quotes");
    check_err("echo '{{.a}}'", "template_placeholder_in_quotes");
    check_err("echo `echo {{.a}}`", "template_placeholder_in_quotes");
    check_err("echo \\{{.a}}", "template_placeholder_in_quotes");
    check_err("echo \"$(echo {{.a}})\"", "template_placeholder_in_quotes");
    let err = Template::parse("echo \"x {{.name}}\"").unwrap_err();
    assert_eq!(
        err,
        TemplateError::PlaceholderInQuotes {
            name: "name".into(),
            offset: 8,
            context: "double quotes",
        }
    );
}

#[test]
fn quotes_closed_before_a_placeholder_are_fine() {
    check(
        "echo \"a\" 'b' \\\" {{.x}}",
        json!({"x": "1"}),
        "echo \"a\" 'b' \\\" '1'",
    );
    check(
        "echo $(basename {{.x}})",
        json!({"x": "/a b"}),
        "echo $(basename '/a b')",
    );
    check(
        "echo \"it's\" {{.x}}",
        json!({"x": "1"}),
        "echo \"it's\" '1'",
    );
}

/// A quote inside a `#` comment does not open anything: the shell skips the comment to the end
/// of the line, and so does the checker (the reported bypass: `$(id)` ran from a value).
#[test]
fn comments_are_skipped_like_the_shell_does() {
    check_err(
        "echo hi # don't\necho \"Hello '{{.a}}'\"",
        "template_placeholder_in_quotes",
    );
    check_err("echo hi # {{.a}}", "template_placeholder_in_quotes");
    check(
        "# it's a comment\necho {{.a}} # and 'this'",
        json!({"a": "$(id)"}),
        "# it's a comment\necho '$(id)' # and 'this'",
    );
    // `#` inside a word or after `$` is no comment.
    check(
        "echo a#'b' $# {{.a}}",
        json!({"a": "1"}),
        "echo a#'b' $# '1'",
    );
}

/// Quotes nested in expansions inside double quotes are read differently by shells: no
/// placeholder may follow them.
#[test]
fn nested_quotes_in_expansions_stop_placeholders() {
    check_err(
        "echo \"$(echo \"{{.a}}\")\"",
        "template_placeholder_in_quotes",
    );
    check_err("echo \"$(echo \"x\")\" {{.a}}", "template_quoting_unclear");
    check_err("echo \"${x:-\"y\"}\" {{.a}}", "template_quoting_unclear");
    check_err("echo $'a' {{.a}}", "template_quoting_unclear");
    check(
        "cp \"${HOME}/x\" \"$(date)\" {{.a}}",
        json!({"a": "y"}),
        "cp \"${HOME}/x\" \"$(date)\" 'y'",
    );
}

#[test]
fn unterminated_quotes_and_here_documents_are_refused() {
    check_err("echo 'abc {{.x}}", "template_placeholder_in_quotes");
    check_err("echo {{.x}} 'abc", "template_unterminated_quote");
    check_err("cat <<EOF\n{{.x}}\nEOF", "template_here_document");
    assert!(Template::parse("cat <<EOF\nhello\nEOF").is_ok());
}

#[test]
fn skeleton_renders_placeholders_as_empty_words() {
    let template = Template::parse("curl {{.url}} | sh").unwrap();
    assert_eq!(template.skeleton(), "curl '' | sh");
}
