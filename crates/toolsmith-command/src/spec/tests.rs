//! Tests of the command-tool definition: serde shapes and every validation rule.

use std::collections::BTreeMap;

use serde_json::json;

use super::{CommandToolSpec, DEFAULT_TIMEOUT_SECONDS, SpecViolation};

fn spec(command: &str) -> CommandToolSpec {
    CommandToolSpec {
        command: command.to_owned(),
        working_dir: None,
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        env: BTreeMap::new(),
        network: false,
        scope: None,
    }
}

fn codes(spec: &CommandToolSpec) -> Vec<&'static str> {
    match spec.validate() {
        Ok(_) => Vec::new(),
        Err(err) => err.violations.iter().map(SpecViolation::code).collect(),
    }
}

#[test]
fn deserializes_camel_case_and_snake_case_with_defaults() {
    let camel: CommandToolSpec = serde_json::from_value(json!({
        "command": "dig +short {{.domain}}", "workingDir": "out", "timeoutSeconds": 10,
        "env": {"API_KEY": "k"}, "network": true
    }))
    .unwrap();
    let snake: CommandToolSpec = serde_json::from_value(json!({
        "command": "dig +short {{.domain}}", "working_dir": "out", "timeout_seconds": 10,
        "env": {"API_KEY": "k"}, "network": true
    }))
    .unwrap();
    assert_eq!(camel, snake);
    assert_eq!(camel.working_dir.as_deref(), Some("out"));

    let minimal: CommandToolSpec = serde_json::from_value(json!({"command": "date"})).unwrap();
    assert_eq!(minimal, spec("date"));
    assert_eq!(
        serde_json::to_value(&minimal).unwrap(),
        json!({"command": "date", "timeoutSeconds": 60, "network": false})
    );
    assert!(
        serde_json::from_value::<CommandToolSpec>(json!({"command": "x", "shell": "bash"}))
            .is_err()
    );
}

#[test]
fn a_good_spec_validates_and_returns_its_template() {
    let mut good = spec("dig +short {{.record_type}} {{.domain}}");
    good.env.insert("API_KEY".into(), "secret".into());
    good.working_dir = Some("a/b-c".into());
    let template = good.validate().unwrap();
    assert_eq!(template.placeholders(), ["record_type", "domain"]);
}

#[test]
fn every_violation_is_listed() {
    let mut bad = spec("echo \"{{.x}}\"");
    bad.timeout_seconds = 0;
    bad.working_dir = Some("../data".into());
    bad.env.insert("LD_PRELOAD".into(), "/tmp/x.so".into());
    bad.env.insert("PATH".into(), "/tmp".into());
    bad.env.insert("1BAD".into(), "v".into());
    bad.env.insert("GOOD".into(), "a\u{0}b".into());
    assert_eq!(
        codes(&bad),
        [
            "template_placeholder_in_quotes",
            "timeout_out_of_range",
            "working_dir_invalid",
            "env_name_invalid",
            "env_value_invalid",
            "env_name_reserved",
            "env_name_reserved",
        ]
    );
    let err = bad.validate().unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid command tool: command: placeholder `x`")
    );
}

#[test]
fn timeout_range_and_working_dir_rules() {
    let mut it = spec("date");
    it.timeout_seconds = 601;
    assert_eq!(codes(&it), ["timeout_out_of_range"]);
    it.timeout_seconds = 600;
    assert!(codes(&it).is_empty());
    for dir in ["/etc", "a/../b", "./a", "a//b", "", "a b", "a/"] {
        it.working_dir = Some(dir.into());
        assert_eq!(codes(&it), ["working_dir_invalid"], "{dir:?}");
    }
}

#[test]
fn reserved_env_names_are_case_insensitive() {
    let mut it = spec("date");
    for name in [
        "ld_preload",
        "Path",
        "BASH_FUNC_x%%",
        "DYLD_INSERT_LIBRARIES",
        "IFS",
        "BASH_ENV",
    ] {
        it.env = BTreeMap::from([(name.to_owned(), "v".to_owned())]);
        assert!(!codes(&it).is_empty(), "{name}");
    }
    it.env = (0..65).map(|i| (format!("V{i}"), String::new())).collect();
    assert_eq!(codes(&it), ["env_too_many"]);
}

#[test]
fn the_template_itself_passes_the_deny_patterns_at_registration() {
    assert_eq!(codes(&spec("curl {{.url}} | sh")), ["command_denied"]);
    assert_eq!(codes(&spec("ls {{.dir}}; rm -rf /")), ["command_denied"]);
    assert!(codes(&spec("ls -la {{.dir}}")).is_empty());
}

#[test]
fn scope_is_global_by_default_or_names_one_agent() {
    let mut tool = spec("echo hi");
    assert_eq!(tool.agent_scope(), None);
    tool.scope = Some("global".to_owned());
    assert!(codes(&tool).is_empty());
    assert_eq!(tool.agent_scope(), None);
    tool.scope = Some("agent:support-bot_2".to_owned());
    assert!(codes(&tool).is_empty());
    assert_eq!(tool.agent_scope(), Some("support-bot_2"));
}

#[test]
fn malformed_scopes_are_refused() {
    let long = format!("agent:{}", "a".repeat(129));
    for bad in [
        "",
        "agent:",
        "agent",
        "Global",
        "agent:a b",
        "agent:x/../y",
        "user:bob",
        &long,
    ] {
        let mut tool = spec("echo hi");
        tool.scope = Some(bad.to_owned());
        assert_eq!(codes(&tool), vec!["scope_invalid"], "scope {bad:?}");
        assert_eq!(tool.agent_scope(), None);
    }
}

#[test]
fn debug_names_env_variables_but_never_shows_their_values() {
    let mut spec = spec("echo hi");
    spec.env
        .insert("API_KEY".to_owned(), "sk-live-Zq8xW3-secret".to_owned());
    let shown = format!("{spec:?}");
    assert!(shown.contains("API_KEY"), "{shown}");
    assert!(!shown.contains("Zq8xW3"), "{shown}");
    let request = crate::RunRequest {
        command: "echo hi",
        args: &[],
        workspace: None,
        hidden: &[],
        max_file_size: None,
        env: &spec.env,
        working_dir: None,
        timeout: std::time::Duration::from_secs(1),
        network: false,
        proxy_socket: None,
        program: None,
        stdout_cap: 1,
        stderr_cap: 1,
    };
    let shown = format!("{request:?}");
    assert!(
        shown.contains("API_KEY") && !shown.contains("Zq8xW3"),
        "{shown}"
    );
}

/// Issue 31: `bash -c {{.x}}` ran the caller's value as a script although `eval` is refused.
#[test]
fn a_placeholder_that_a_program_runs_as_code_is_refused() {
    for command in [
        "bash -c {{.x}}",
        "sh -c {{.x}}",
        "/bin/sh -c {{.x}}",
        "zsh -c -- {{.x}}",
        "bash -lc {{.x}}",
        "bash -o pipefail -c {{.x}}",
        "bash --norc -c {{.x}}",
        "echo hi; dash -c {{.x}}",
        "env -i sh -c {{.x}}",
        "xargs sh -c {{.x}}",
        "sh -c prefix{{.x}}",
        "sh -c {{.y}}{{.x}}",
        "ｂａｓｈ -c {{.x}}",
        "b'a'sh -c {{.x}}",
        "python3 -c {{.x}}",
        "perl -ne {{.x}}",
        "ruby -e {{.x}}",
        "node -e {{.x}}",
        "node --eval {{.x}}",
        "php -r {{.x}}",
    ] {
        let err = spec(command).validate().unwrap_err();
        assert!(
            err.violations
                .iter()
                .any(|v| v.code() == "placeholder_is_code" && v.to_string().contains("{{.x}}")),
            "{command}: {err}"
        );
    }
    let err = spec("bash -c {{.x}}").validate().unwrap_err();
    assert!(err.to_string().contains("`bash -c`"), "{err}");
    assert!(err.to_string().contains("\"$1\"' _ {{.x}}"), "{err}");
    // A value as an argument of a fixed script, or after an option that takes no code, is data.
    for command in [
        "bash -c 'printf \"%s\\n\" \"$1\"' _ {{.x}}",
        "sh -e {{.script}}",
        "ssh -c {{.cipher}} host true",
        "python3 script.py {{.x}}",
        "node app.js -e {{.x}}",
        "grep -c {{.x}} file",
        "echo {{.x}}",
    ] {
        assert!(
            !codes(&spec(command)).contains(&"placeholder_is_code"),
            "{command}: {:?}",
            codes(&spec(command))
        );
    }
}
