use serde_json::json;

use super::providers::{Agent, Task, command_line};
use super::{scrub, task_of};

#[test]
fn providers_are_parsed_and_custom_names_checked() {
    let claude = Agent::parse("claude-code").unwrap();
    assert_eq!(claude.program, "claude");
    assert_eq!(claude.key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
    assert_eq!(claude.policy_field, "claude_code");
    let aider = Agent::parse("custom:aider").unwrap();
    assert_eq!(aider.service, "coding_agent_aider");
    assert_eq!(aider.policy_field, "custom_aider");
    assert!(aider.key_env.is_none() && aider.api_host.is_none());
    for bad in [
        "gpt",
        "custom:",
        "custom:../bin/sh",
        "custom:-x",
        "custom:A",
        "custom:a b",
    ] {
        assert!(Agent::parse(bad).is_err(), "{bad}");
    }
    let fields = json!({"api_key_env": "LD_PRELOAD"});
    let fields: std::collections::BTreeMap<_, _> = serde_json::from_value(fields).unwrap();
    assert!(aider.clone().with_custom_fields(Some(&fields)).is_err());
    let fields: std::collections::BTreeMap<_, _> = serde_json::from_value(
        json!({"api_key_env": "OPENAI_API_KEY", "api_host": "API.openai.com."}),
    )
    .unwrap();
    let aider = aider.with_custom_fields(Some(&fields)).unwrap();
    assert_eq!(aider.api_host.as_deref(), Some("api.openai.com"));
    let fields: std::collections::BTreeMap<_, _> =
        serde_json::from_value(json!({"api_host": "https://x.example/"})).unwrap();
    assert!(
        Agent::parse("custom:x")
            .unwrap()
            .with_custom_fields(Some(&fields))
            .is_err()
    );
}

#[test]
fn the_prompt_is_one_argument_after_the_options() {
    let task = Task {
        prompt: "--help; rm -rf /".to_owned(),
        model: Some("sonnet".to_owned()),
        max_turns: Some(3),
        max_budget_usd: Some(0.5),
    };
    let line = command_line(
        &Agent::parse("claude-code").unwrap(),
        "/usr/bin/claude",
        &task,
    );
    assert_eq!(line.first().map(String::as_str), Some("/usr/bin/claude"));
    assert_eq!(line.last().map(String::as_str), Some("--help; rm -rf /"));
    assert_eq!(line[line.len() - 2], "--");
    assert!(line.windows(2).any(|w| w == ["--max-turns", "3"]));
    assert!(line.windows(2).any(|w| w == ["--max-budget-usd", "0.5"]));
    let codex = command_line(&Agent::parse("codex").unwrap(), "codex", &task);
    assert_eq!(codex[1], "exec");
    assert_eq!(codex.last().map(String::as_str), Some("--help; rm -rf /"));
    let gemini = command_line(&Agent::parse("gemini-cli").unwrap(), "gemini", &task);
    assert!(gemini.ends_with(&["--prompt".to_owned(), "--help; rm -rf /".to_owned()]));
}

#[test]
fn arguments_are_checked_and_the_key_is_cut_out() {
    assert!(task_of(&json!({"prompt": "  "})).is_err());
    assert!(task_of(&json!({"prompt": "x", "model": "--yolo"})).is_err());
    assert!(task_of(&json!({"prompt": "x", "timeout_seconds": 0})).is_err());
    assert!(task_of(&json!({"prompt": "x", "timeout_seconds": 601})).is_err());
    let (task, timeout) = task_of(&json!({"prompt": "fix it"})).unwrap();
    assert_eq!((task.prompt.as_str(), timeout), ("fix it", 300));
    assert_eq!(
        scrub("key=sk-abcdef sk-abcdef", Some("sk-abcdef")),
        "key=[api_key withheld] [api_key withheld]"
    );
    assert_eq!(scrub("abc", None), "abc");
}
