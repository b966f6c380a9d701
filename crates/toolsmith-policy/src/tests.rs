//! Tests of the policy engine: a decision table over profiles, allow, deny, also_allow, users,
//! agents and subagent depth; compile errors (fail closed); serde round trips.

use std::collections::BTreeMap;

use crate::{Caller, GroupCatalog, Policy, PolicyDocument, PolicyError, ToolInfo, ToolKind};

fn catalog() -> GroupCatalog {
    GroupCatalog::new(["core", "fs", "web", "messaging"], ["github"])
}

fn tool(name: &str) -> ToolInfo<'_> {
    let kind = match name {
        "calculate" => ToolKind::Builtin { family: "core" },
        "read_file" => ToolKind::Builtin { family: "fs" },
        "web_fetch" => ToolKind::Builtin { family: "web" },
        "send_message" => ToolKind::Builtin {
            family: "messaging",
        },
        "my_tool" | "other_tool" => ToolKind::Custom,
        "gh_issues" => ToolKind::Mcp { server: "github" },
        _ => panic!("unknown test tool {name}"),
    };
    ToolInfo { name, kind }
}

fn parse(toml_text: &str) -> PolicyDocument {
    toml::from_str(toml_text).unwrap()
}

fn compile(toml_text: &str) -> Result<Policy, PolicyError> {
    parse(toml_text).compile(&catalog())
}

/// The named configurations of the decision table.
fn policies() -> BTreeMap<&'static str, Policy> {
    let sources: &[(&str, &str)] = &[
        ("empty", ""),
        ("minimal", r#"profile = "minimal""#),
        ("coding", r#"profile = "coding""#),
        ("messaging", r#"profile = "messaging""#),
        ("allow", r#"allow = ["calculate", "group:custom"]"#),
        (
            "deny_vs_also",
            r#"
profile = "minimal"
deny = ["group:custom", "web_fetch"]
also_allow = ["my_tool", "web_fetch", "read_file"]
"#,
        ),
        (
            "scopes",
            r#"
profile = "full"
deny = ["gh_issues"]

[agents.coder]
profile = "coding"
also_allow = ["web_fetch"]
deny = ["other_tool"]

[agents.bot]
allow = ["send_message", "calculate"]

[agents.open]
also_allow = ["gh_issues"]

[users.bob]
profile = "minimal"

[users.eve]
deny = ["*"]

[users.carol]
allow = ["group:fs", "calculate"]
"#,
        ),
        (
            "subagents",
            r#"
also_allow = ["my_tool"]

[subagents]
always_deny = ["group:custom"]
leaf_deny = ["web_fetch"]
max_depth = 2
"#,
        ),
        (
            "custom_groups",
            r#"
profile = "research"

[groups]
readers = ["read_file", "group:web"]
research_all = ["group:readers", "calculate"]

[profiles]
research = ["group:research_all", "group:mcp:github"]
"#,
        ),
        (
            "mcp",
            r#"
allow = ["group:mcp", "group:builtin"]
deny = ["group:mcp:github"]
also_allow = ["my_tool"]
"#,
        ),
    ];
    let mut res: BTreeMap<&'static str, Policy> = sources
        .iter()
        .map(|(name, text)| (*name, compile(text).unwrap()))
        .collect();
    res.insert("none", Policy::allow_all());
    res
}

/// (policy, user, agent, depth, tool, reason); allowed is read from the reason.
type Row = (
    &'static str,
    &'static str,
    Option<&'static str>,
    u32,
    &'static str,
    &'static str,
);

const TABLE: &[Row] = &[
    // No policy and an empty policy.
    (
        "none",
        "u",
        None,
        0,
        "gh_issues",
        "allowed: no policy is configured",
    ),
    (
        "none",
        "u",
        Some("a"),
        7,
        "my_tool",
        "allowed: no policy is configured",
    ),
    (
        "empty",
        "u",
        None,
        0,
        "my_tool",
        "allowed by the default profile 'full'",
    ),
    (
        "empty",
        "u",
        None,
        1,
        "gh_issues",
        "allowed by the default profile 'full'",
    ),
    (
        "empty",
        "u",
        None,
        2,
        "calculate",
        "denied: subagent depth 2 exceeds subagents.max_depth 1",
    ),
    // Built-in profiles.
    (
        "minimal",
        "u",
        None,
        0,
        "calculate",
        "allowed by profile 'minimal' of the global policy",
    ),
    (
        "minimal",
        "u",
        None,
        0,
        "read_file",
        "denied: not in profile 'minimal' of the global policy",
    ),
    (
        "minimal",
        "u",
        None,
        0,
        "my_tool",
        "denied: not in profile 'minimal' of the global policy",
    ),
    (
        "minimal",
        "u",
        None,
        0,
        "gh_issues",
        "denied: not in profile 'minimal' of the global policy",
    ),
    (
        "coding",
        "u",
        None,
        0,
        "read_file",
        "allowed by profile 'coding' of the global policy",
    ),
    (
        "coding",
        "u",
        None,
        0,
        "my_tool",
        "allowed by profile 'coding' of the global policy",
    ),
    (
        "coding",
        "u",
        None,
        0,
        "calculate",
        "allowed by profile 'coding' of the global policy",
    ),
    (
        "coding",
        "u",
        None,
        0,
        "web_fetch",
        "denied: not in profile 'coding' of the global policy",
    ),
    (
        "coding",
        "u",
        None,
        0,
        "send_message",
        "denied: not in profile 'coding' of the global policy",
    ),
    (
        "messaging",
        "u",
        None,
        0,
        "send_message",
        "allowed by profile 'messaging' of the global policy",
    ),
    (
        "messaging",
        "u",
        None,
        0,
        "calculate",
        "allowed by profile 'messaging' of the global policy",
    ),
    (
        "messaging",
        "u",
        None,
        0,
        "my_tool",
        "denied: not in profile 'messaging' of the global policy",
    ),
    // Allow list narrows the default profile.
    (
        "allow",
        "u",
        None,
        0,
        "calculate",
        "allowed by the default profile 'full' and 1 allow list(s)",
    ),
    (
        "allow",
        "u",
        None,
        0,
        "other_tool",
        "allowed by the default profile 'full' and 1 allow list(s)",
    ),
    (
        "allow",
        "u",
        None,
        0,
        "read_file",
        "denied: not in the allow list of the global policy",
    ),
    (
        "allow",
        "u",
        None,
        0,
        "gh_issues",
        "denied: not in the allow list of the global policy",
    ),
    // Deny always wins over also_allow (the reference's bug).
    (
        "deny_vs_also",
        "u",
        None,
        0,
        "my_tool",
        "denied by deny entry 'group:custom' of the global policy",
    ),
    (
        "deny_vs_also",
        "u",
        None,
        0,
        "web_fetch",
        "denied by deny entry 'web_fetch' of the global policy",
    ),
    (
        "deny_vs_also",
        "u",
        None,
        0,
        "read_file",
        "allowed by also_allow entry 'read_file' of the global policy",
    ),
    (
        "deny_vs_also",
        "u",
        None,
        0,
        "calculate",
        "allowed by profile 'minimal' of the global policy",
    ),
    (
        "deny_vs_also",
        "u",
        None,
        0,
        "send_message",
        "denied: not in profile 'minimal' of the global policy",
    ),
    // Users and agents.
    (
        "scopes",
        "u",
        None,
        0,
        "gh_issues",
        "denied by deny entry 'gh_issues' of the global policy",
    ),
    (
        "scopes",
        "u",
        None,
        0,
        "web_fetch",
        "allowed by profile 'full' of the global policy",
    ),
    (
        "scopes",
        "u",
        Some("unknown-agent"),
        0,
        "my_tool",
        "allowed by profile 'full' of the global policy",
    ),
    (
        "scopes",
        "u",
        Some("coder"),
        0,
        "read_file",
        "allowed by profile 'coding' of agent 'coder'",
    ),
    (
        "scopes",
        "u",
        Some("coder"),
        0,
        "web_fetch",
        "allowed by also_allow entry 'web_fetch' of agent 'coder'",
    ),
    (
        "scopes",
        "u",
        Some("coder"),
        0,
        "other_tool",
        "denied by deny entry 'other_tool' of agent 'coder'",
    ),
    (
        "scopes",
        "u",
        Some("coder"),
        0,
        "my_tool",
        "allowed by profile 'coding' of agent 'coder'",
    ),
    (
        "scopes",
        "u",
        Some("coder"),
        0,
        "send_message",
        "denied: not in profile 'coding' of agent 'coder'",
    ),
    (
        "scopes",
        "u",
        Some("coder"),
        0,
        "gh_issues",
        "denied by deny entry 'gh_issues' of the global policy",
    ),
    (
        "scopes",
        "u",
        Some("bot"),
        0,
        "send_message",
        "allowed by profile 'full' of the global policy and 1 allow list(s)",
    ),
    (
        "scopes",
        "u",
        Some("bot"),
        0,
        "read_file",
        "denied: not in the allow list of agent 'bot'",
    ),
    (
        "scopes",
        "u",
        Some("open"),
        0,
        "gh_issues",
        "denied by deny entry 'gh_issues' of the global policy",
    ),
    (
        "scopes",
        "bob",
        None,
        0,
        "calculate",
        "allowed by profile 'minimal' of user 'bob'",
    ),
    (
        "scopes",
        "bob",
        None,
        0,
        "read_file",
        "denied: not in profile 'minimal' of user 'bob'",
    ),
    (
        "scopes",
        "bob",
        Some("coder"),
        0,
        "read_file",
        "allowed by profile 'coding' of agent 'coder'",
    ),
    (
        "scopes",
        "bob",
        Some("coder"),
        0,
        "web_fetch",
        "allowed by also_allow entry 'web_fetch' of agent 'coder'",
    ),
    (
        "scopes",
        "eve",
        None,
        0,
        "calculate",
        "denied by deny entry '*' of user 'eve'",
    ),
    (
        "scopes",
        "eve",
        Some("coder"),
        0,
        "web_fetch",
        "denied by deny entry '*' of user 'eve'",
    ),
    (
        "scopes",
        "carol",
        None,
        0,
        "read_file",
        "allowed by profile 'full' of the global policy and 1 allow list(s)",
    ),
    (
        "scopes",
        "carol",
        None,
        0,
        "web_fetch",
        "denied: not in the allow list of user 'carol'",
    ),
    (
        "scopes",
        "carol",
        Some("bot"),
        0,
        "calculate",
        "allowed by profile 'full' of the global policy and 2 allow list(s)",
    ),
    (
        "scopes",
        "carol",
        Some("bot"),
        0,
        "send_message",
        "denied: not in the allow list of user 'carol'",
    ),
    (
        "scopes",
        "carol",
        Some("bot"),
        0,
        "read_file",
        "denied: not in the allow list of agent 'bot'",
    ),
    // Subagent depth.
    (
        "subagents",
        "u",
        None,
        0,
        "my_tool",
        "allowed by also_allow entry 'my_tool' of the global policy",
    ),
    (
        "subagents",
        "u",
        None,
        0,
        "web_fetch",
        "allowed by the default profile 'full'",
    ),
    (
        "subagents",
        "u",
        None,
        1,
        "my_tool",
        "denied by subagents.always_deny entry 'group:custom' (subagent depth 1)",
    ),
    (
        "subagents",
        "u",
        None,
        1,
        "other_tool",
        "denied by subagents.always_deny entry 'group:custom' (subagent depth 1)",
    ),
    (
        "subagents",
        "u",
        None,
        1,
        "web_fetch",
        "allowed by the default profile 'full'",
    ),
    (
        "subagents",
        "u",
        None,
        2,
        "web_fetch",
        "denied by subagents.leaf_deny entry 'web_fetch' (subagent depth 2 is the deepest allowed)",
    ),
    (
        "subagents",
        "u",
        None,
        2,
        "my_tool",
        "denied by subagents.always_deny entry 'group:custom' (subagent depth 2)",
    ),
    (
        "subagents",
        "u",
        None,
        2,
        "calculate",
        "allowed by the default profile 'full'",
    ),
    (
        "subagents",
        "u",
        None,
        3,
        "calculate",
        "denied: subagent depth 3 exceeds subagents.max_depth 2",
    ),
    // User-defined groups (nested) and profiles.
    (
        "custom_groups",
        "u",
        None,
        0,
        "read_file",
        "allowed by profile 'research' of the global policy",
    ),
    (
        "custom_groups",
        "u",
        None,
        0,
        "web_fetch",
        "allowed by profile 'research' of the global policy",
    ),
    (
        "custom_groups",
        "u",
        None,
        0,
        "calculate",
        "allowed by profile 'research' of the global policy",
    ),
    (
        "custom_groups",
        "u",
        None,
        0,
        "gh_issues",
        "allowed by profile 'research' of the global policy",
    ),
    (
        "custom_groups",
        "u",
        None,
        0,
        "my_tool",
        "denied: not in profile 'research' of the global policy",
    ),
    (
        "custom_groups",
        "u",
        None,
        0,
        "send_message",
        "denied: not in profile 'research' of the global policy",
    ),
    // MCP and built-in groups.
    (
        "mcp",
        "u",
        None,
        0,
        "gh_issues",
        "denied by deny entry 'group:mcp:github' of the global policy",
    ),
    (
        "mcp",
        "u",
        None,
        0,
        "send_message",
        "allowed by the default profile 'full' and 1 allow list(s)",
    ),
    (
        "mcp",
        "u",
        None,
        0,
        "my_tool",
        "allowed by also_allow entry 'my_tool' of the global policy",
    ),
    (
        "mcp",
        "u",
        None,
        0,
        "other_tool",
        "denied: not in the allow list of the global policy",
    ),
];

#[test]
fn decision_table() {
    assert!(TABLE.len() >= 50, "table has {} rows", TABLE.len());
    let policies = policies();
    for (row_idx, (policy, user, agent, depth, tool_name, reason)) in TABLE.iter().enumerate() {
        let caller = Caller {
            user,
            agent: *agent,
            depth: *depth,
        };
        let tool = tool(tool_name);
        let policy_ref = &policies[policy];
        let decision = policy_ref.decide(&caller, &tool);
        let expected_allowed = reason.starts_with("allowed");
        assert_eq!(
            (decision.allowed, decision.reason.as_str()),
            (expected_allowed, *reason),
            "row {row_idx}: policy {policy}, {caller:?}, tool {tool_name}"
        );
        assert_eq!(
            policy_ref.allows(&caller, &tool),
            expected_allowed,
            "row {row_idx}"
        );
    }
}

#[test]
fn filter_keeps_allowed_items_in_order() {
    let policy = compile(r#"profile = "coding""#).unwrap();
    let names = vec![
        "web_fetch",
        "read_file",
        "gh_issues",
        "my_tool",
        "calculate",
    ];
    let caller = Caller {
        user: "u",
        agent: None,
        depth: 0,
    };
    let kept = policy.filter(&caller, names, |name| tool(name));
    assert_eq!(kept, vec!["read_file", "my_tool", "calculate"]);
}

#[track_caller]
fn check_error(toml_text: &str, code: &str, message: &str) {
    let err = compile(toml_text).unwrap_err();
    assert_eq!((err.code(), err.to_string().as_str()), (code, message));
}

#[test]
fn unknown_profiles_fail_closed() {
    check_error(
        r#"profile = "everything""#,
        "unknown_profile",
        "unknown profile 'everything' in the global policy",
    );
    check_error(
        "[agents.x]\nprofile = \"Full\"",
        "unknown_profile",
        "unknown profile 'Full' in agent 'x'",
    );
    check_error(
        "[users.bob]\nprofile = \"\"",
        "unknown_profile",
        "unknown profile '' in user 'bob'",
    );
}

#[test]
fn unknown_groups_fail_closed() {
    check_error(
        r#"allow = ["group:nope"]"#,
        "unknown_group",
        "unknown group 'group:nope' in allow of the global policy",
    );
    check_error(
        r#"deny = ["group:mcp:gitlab"]"#,
        "unknown_group",
        "unknown group 'group:mcp:gitlab' in deny of the global policy",
    );
    check_error(
        "[agents.a]\nalso_allow = [\"group:\"]",
        "unknown_group",
        "unknown group 'group:' in also_allow of agent 'a'",
    );
    check_error(
        "[groups]\nmine = [\"group:missing\"]",
        "unknown_group",
        "unknown group 'group:missing' in group 'mine'",
    );
    check_error(
        "[profiles]\np = [\"group:missing\"]",
        "unknown_group",
        "unknown group 'group:missing' in profile 'p'",
    );
    check_error(
        "[subagents]\nleaf_deny = [\"group:x\"]",
        "unknown_group",
        "unknown group 'group:x' in subagents.leaf_deny",
    );
}

#[test]
fn invalid_entries_are_refused() {
    check_error(
        r#"allow = ["web_*"]"#,
        "invalid_entry",
        "invalid entry 'web_*' in allow of the global policy: only '*' alone is a wildcard; name tools or use a group",
    );
    check_error(
        r#"deny = [""]"#,
        "invalid_entry",
        "invalid entry '' in deny of the global policy: an entry must not be empty",
    );
    check_error(
        r#"deny = ["a b"]"#,
        "invalid_entry",
        "invalid entry 'a b' in deny of the global policy: an entry must not contain whitespace",
    );
}

#[test]
fn builtin_names_cannot_be_redefined() {
    check_error(
        "[groups]\ncustom = [\"x\"]",
        "shadows_builtin",
        "user-defined group 'custom' takes the name of a built-in one",
    );
    check_error(
        "[groups]\ncore = [\"x\"]",
        "shadows_builtin",
        "user-defined group 'core' takes the name of a built-in one",
    );
    check_error(
        "[groups]\n\"mcp:x\" = [\"x\"]",
        "shadows_builtin",
        "user-defined group 'mcp:x' takes the name of a built-in one",
    );
    check_error(
        "[profiles]\nfull = [\"x\"]",
        "shadows_builtin",
        "user-defined profile 'full' takes the name of a built-in one",
    );
}

#[test]
fn group_cycles_are_refused() {
    check_error(
        "[groups]\na = [\"group:b\"]\nb = [\"group:a\"]",
        "group_cycle",
        "group 'a' contains itself (through a -> b -> a)",
    );
    check_error(
        "[groups]\nself = [\"x\", \"group:self\"]",
        "group_cycle",
        "group 'self' contains itself (through self -> self)",
    );
}

#[test]
fn builtin_profiles_compile_against_an_empty_catalog() {
    for profile in crate::BUILTIN_PROFILES {
        let config = PolicyDocument {
            profile: Some((*profile).to_owned()),
            ..PolicyDocument::default()
        };
        let policy = config.compile(&GroupCatalog::default()).unwrap();
        let caller = Caller {
            user: "u",
            agent: None,
            depth: 0,
        };
        let expected = matches!(*profile, "full" | "coding");
        assert_eq!(
            policy.allows(&caller, &tool("my_tool")),
            expected,
            "{profile}"
        );
    }
}

const EXAMPLE: &str = r#"
profile = "coding"
allow = ["*"]
deny = ["group:mcp:github"]
also_allow = ["web_fetch"]

[agents.reviewer]
profile = "readonly"
deny = ["group:custom"]

[users.alice]
also_allow = ["send_message"]

[groups]
readers = ["read_file", "group:web"]

[profiles]
readonly = ["group:readers", "calculate"]

[subagents]
always_deny = ["group:custom"]
leaf_deny = ["web_fetch"]
max_depth = 2
"#;

#[test]
fn toml_round_trip() {
    let config = parse(EXAMPLE);
    assert_eq!(
        config.agents["reviewer"].profile.as_deref(),
        Some("readonly")
    );
    assert_eq!(config.subagents.max_depth, 2);
    let text = toml::to_string(&config).unwrap();
    assert_eq!(parse(&text), config);
    config.compile(&catalog()).unwrap();
}

#[test]
fn json_accepts_camel_case_and_defaults() {
    let config: PolicyDocument = serde_json::from_value(serde_json::json!({
        "alsoAllow": ["x"],
        "subagents": { "alwaysDeny": ["y"], "maxDepth": 3 },
    }))
    .unwrap();
    assert_eq!(config.also_allow, vec!["x"]);
    assert_eq!(
        (
            config.subagents.always_deny.as_slice(),
            config.subagents.max_depth
        ),
        (&["y".to_owned()][..], 3)
    );
    let default: PolicyDocument = serde_json::from_str("{}").unwrap();
    assert_eq!(default.subagents.max_depth, 1);
    let round: PolicyDocument =
        serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
    assert_eq!(round, config);
}

#[test]
fn unknown_keys_are_errors() {
    let err = toml::from_str::<PolicyDocument>("alow = [\"x\"]").unwrap_err();
    assert!(err.to_string().contains("unknown field `alow`"), "{err}");
    let err = toml::from_str::<PolicyDocument>("[agents.a]\nprofle = \"x\"").unwrap_err();
    assert!(err.to_string().contains("unknown field `profle`"), "{err}");
}

#[test]
fn the_documented_example_compiles() {
    let doc = include_str!("../../../docs/policy.md");
    let start = doc.find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let policy = compile(&doc[start..end]).unwrap();
    let reviewer = Caller {
        user: "alice",
        agent: Some("reviewer"),
        depth: 0,
    };
    assert!(policy.allows(&reviewer, &tool("read_file")));
    assert!(!policy.allows(&reviewer, &tool("my_tool")));
    let alice = Caller {
        user: "alice",
        agent: None,
        depth: 0,
    };
    assert!(policy.allows(&alice, &tool("send_message")));
    assert!(!policy.allows(&alice, &tool("gh_issues")));
}

/// A capability a running tool asks for (`mcp:sampling`) is denied only by an entry naming it:
/// profiles, allow lists and `*` are about tools.
#[test]
fn a_capability_is_denied_only_by_an_entry_naming_it() {
    let caller = |user, agent, depth| Caller { user, agent, depth };
    let policy = compile(
        r#"
        profile = "minimal"
        allow = ["calculate"]
        [users.bob]
        deny = ["mcp:sampling"]
        [agents.scout]
        deny = ["mcp:elicitation"]
        [subagents]
        always_deny = ["mcp:sampling"]
        "#,
    )
    .unwrap();
    assert_eq!(
        policy.denies_by_name(&caller("ann", None, 0), "mcp:sampling"),
        None
    );
    assert_eq!(
        policy
            .denies_by_name(&caller("bob", None, 0), "mcp:sampling")
            .as_deref(),
        Some("denied by deny entry 'mcp:sampling' of user 'bob'")
    );
    assert_eq!(
        policy
            .denies_by_name(&caller("ann", Some("scout"), 0), "mcp:elicitation")
            .as_deref(),
        Some("denied by deny entry 'mcp:elicitation' of agent 'scout'")
    );
    assert_eq!(
        policy
            .denies_by_name(&caller("ann", None, 1), "mcp:sampling")
            .as_deref(),
        Some("denied by subagents.always_deny entry 'mcp:sampling' (subagent depth 1)")
    );
    assert!(
        policy
            .denies_by_name(&caller("ann", None, 2), "mcp:sampling")
            .unwrap()
            .contains("exceeds subagents.max_depth")
    );
    let everything = compile(r#"deny = ["*"]"#).unwrap();
    assert_eq!(
        everything.denies_by_name(&caller("ann", None, 0), "mcp:sampling"),
        None
    );
    assert_eq!(
        Policy::allow_all().denies_by_name(&caller("ann", None, 0), "mcp:sampling"),
        None
    );
}
