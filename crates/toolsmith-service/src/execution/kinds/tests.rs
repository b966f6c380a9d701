//! The tool kinds through the service: what each kind checks at create and update, the
//! permissions it implies, and (for commands) real runs in the OS sandbox.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, Permission, ToolContext, ToolKind, ToolResult, ToolStatus};
use toolsmith_store::{SqliteStore, Store};

use crate::{
    Actor, CreateTool, ServiceError, ToolPatch, ToolRef, ToolService, ToolServiceSettings,
};

struct Fixture {
    _dir: tempfile::TempDir,
    service: Arc<ToolService>,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(&dir.path().join("toolsmith.db"))
            .await
            .unwrap(),
    );
    let service = ToolService::open(ToolServiceSettings::default(), store)
        .await
        .unwrap();
    Fixture { _dir: dir, service }
}

fn command_tool(name: &str, spec: Value, parameters: Value) -> CreateTool {
    CreateTool {
        name: name.to_owned(),
        kind: ToolKind::Command,
        description: format!("command tool {name}"),
        parameters,
        code: spec.to_string(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

fn echo_tool(name: &str) -> CreateTool {
    command_tool(
        name,
        json!({"command": "echo {{.word}}", "timeoutSeconds": 10}),
        json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}),
    )
}

fn http_tool(yaml: &str) -> CreateTool {
    CreateTool {
        name: "check_loyalty_points".to_owned(),
        kind: ToolKind::Http,
        description: "Check loyalty points".to_owned(),
        parameters: json!({"type": "object"}),
        code: yaml.to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

const LOYALTY: &str = include_str!("../../../../../examples/http-tools/loyalty_points.yaml");

async fn run(service: &ToolService, name: &str, args: Value) -> ToolResult {
    service
        .execute(name, args, ToolContext::new("default"))
        .await
}

/// Whether the command sandbox works here: a missing one fails the test, or (with
/// `TOOLSMITH_ALLOW_SKIP=1`) is recorded as a skip ([`toolsmith_core::testkit`]).
async fn sandbox_or_skip(service: &ToolService) -> bool {
    toolsmith_core::testkit::require(
        "bubblewrap (the command sandbox)",
        service.command_runtime().sandbox().await,
    )
    .is_some()
}

#[tokio::test]
async fn a_command_tool_implies_shell_and_waits_for_approval_when_the_model_creates_it() {
    let f = fixture().await;
    let by_user = f
        .service
        .create(&Actor::user("default"), echo_tool("say"))
        .await
        .unwrap();
    assert_eq!(by_user.kind, ToolKind::Command);
    assert_eq!(by_user.status, ToolStatus::Active);
    assert!(by_user.permissions.contains(&Permission::Shell));
    assert!(!by_user.permissions.contains(&Permission::Network));

    let by_model = f
        .service
        .create(&Actor::llm("default"), echo_tool("say_llm"))
        .await
        .unwrap();
    assert_eq!(by_model.status, ToolStatus::PendingApproval);

    let mut networked = echo_tool("say_net");
    networked.code = json!({"command": "echo {{.word}}", "network": true}).to_string();
    let networked = f
        .service
        .create(&Actor::user("default"), networked)
        .await
        .unwrap();
    assert!(networked.permissions.contains(&Permission::Network));
}

#[tokio::test]
async fn bad_command_definitions_are_refused_with_the_reason() {
    let f = fixture().await;
    let user = Actor::user("default");
    let cases = [
        (json!("echo {{.word}}"), "spec as JSON"),
        (json!({"command": "echo {{.other}}"}), "'other'"),
        (json!({"command": "rm -rf / {{.word}}"}), "invalid"),
        (
            json!({"command": "echo {{.word}}", "timeoutSeconds": 100000}),
            "invalid",
        ),
        (
            json!({"command": "echo {{.word}}", "shell": "bash"}),
            "spec as JSON",
        ),
    ];
    for (i, (spec, expected)) in cases.into_iter().enumerate() {
        let mut input = echo_tool(&format!("bad_{i}"));
        input.code = match spec {
            Value::String(s) => s,
            other => other.to_string(),
        };
        let err = f.service.create(&user, input).await.unwrap_err();
        assert!(matches!(err, ServiceError::Validation(_)), "{err:?}");
        assert!(err.to_string().contains(expected), "case {i}: {err}");
    }
    // A command tool can no more take a built-in's name than a JS tool can.
    let err = f
        .service
        .create(&user, echo_tool("calculate"))
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NameTaken(_)), "{err:?}");
}

#[tokio::test]
async fn a_command_tool_runs_in_the_sandbox_with_its_arguments_quoted() {
    let f = fixture().await;
    if !sandbox_or_skip(&f.service).await {
        return;
    }
    f.service
        .create(&Actor::user("default"), echo_tool("say"))
        .await
        .unwrap();
    let res = run(&f.service, "say", json!({"word": "hello $(id) `id`; id"})).await;
    assert!(!res.is_error, "{res:?}");
    assert_eq!(res.content["stdout"], "hello $(id) `id`; id\n");
    assert_eq!(res.content["exitCode"], 0);

    let mut failing = command_tool(
        "fail",
        json!({"command": "ls /nonexistent-{{.x}}"}),
        json!({"type": "object", "properties": {"x": {"type": "string"}}}),
    );
    failing.description = "fails".to_owned();
    f.service
        .create(&Actor::user("default"), failing)
        .await
        .unwrap();
    let res = run(&f.service, "fail", json!({"x": "dir"})).await;
    assert_eq!(res.error_kind(), Some(ErrorKind::ExecutionError));
    assert!(
        res.content["stderr"]
            .as_str()
            .unwrap()
            .contains("nonexistent"),
        "{res:?}"
    );
}

#[tokio::test]
async fn a_denied_command_is_refused_after_rendering() {
    let f = fixture().await;
    if !sandbox_or_skip(&f.service).await {
        return;
    }
    let input = command_tool(
        "run_script",
        json!({"command": "echo {{.script}}"}),
        json!({"type": "object", "properties": {"script": {"type": "string"}}}),
    );
    f.service
        .create(&Actor::user("default"), input)
        .await
        .unwrap();
    let res = run(&f.service, "run_script", json!({"script": "rm -rf /"})).await;
    assert_eq!(res.error_kind(), Some(ErrorKind::Denied), "{res:?}");
}

#[tokio::test]
async fn an_http_tool_derives_its_schema_from_the_explicit_parameters() {
    let f = fixture().await;
    let mut input = http_tool(LOYALTY);
    // Plain http is refused by default; the example's origin comes from the config, so it
    // passes registration, and https is enforced again on the rendered URL.
    let created = f
        .service
        .create(&Actor::user("default"), input.clone())
        .await
        .unwrap();
    assert_eq!(created.kind, ToolKind::Http);
    assert!(created.permissions.contains(&Permission::Network));
    let props = created.parameters["properties"].as_object().unwrap();
    assert!(props.contains_key("include_history"), "{props:?}");
    assert!(
        !props.contains_key("customer_email"),
        "filled from the conversation, not the model"
    );

    input.name = "loyalty_llm".to_owned();
    input.code = LOYALTY.replace("name: check_loyalty_points", "name: loyalty_llm");
    // `network` is not a dangerous permission (the egress guard bounds it): the model's HTTP
    // tool is active at once, but every execution of it requires approval.
    let by_model = f
        .service
        .create(&Actor::llm("default"), input)
        .await
        .unwrap();
    assert_eq!(by_model.status, ToolStatus::Active);
    assert!(by_model.requires_approval);

    let res = run(&f.service, "check_loyalty_points", json!({})).await;
    assert!(res.is_error, "no conversation context, no config: {res:?}");
    let message = res.error_message().unwrap_or_default();
    assert!(
        message.contains("customer_email") || message.contains("store"),
        "{message}"
    );
}

#[tokio::test]
async fn bad_http_definitions_are_refused() {
    let f = fixture().await;
    let user = Actor::user("default");
    for (i, yaml) in [
        "not: [valid",
        "name: x\n",
        &LOYALTY.replace("method: GET", "method: TRACE"),
        &"a: &a [1]\n".repeat(10_000),
    ]
    .into_iter()
    .enumerate()
    {
        let err = f.service.create(&user, http_tool(yaml)).await.unwrap_err();
        assert!(
            matches!(err, ServiceError::Validation(_) | ServiceError::TooLarge(_)),
            "case {i}: {err:?}"
        );
    }
}

#[tokio::test]
async fn updating_a_command_tool_rechecks_it() {
    let f = fixture().await;
    let user = Actor::user("default");
    f.service.create(&user, echo_tool("say")).await.unwrap();
    let patch = ToolPatch {
        code: Some(json!({"command": "echo {{.missing}}"}).to_string()),
        ..ToolPatch::default()
    };
    let err = f
        .service
        .update(&user, &ToolRef::Name("say".to_owned()), patch, None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'missing'"), "{err}");
    // Dropping the shell permission is not possible: the kind implies it.
    let patch = ToolPatch {
        permissions: Some(Vec::new()),
        ..ToolPatch::default()
    };
    let updated = f
        .service
        .update(&user, &ToolRef::Name("say".to_owned()), patch, None)
        .await
        .unwrap();
    assert!(updated.permissions.contains(&Permission::Shell));
}

#[tokio::test]
async fn a_command_tools_env_is_sealed_at_rest_and_redacted_from_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let key = toolsmith_secrets::SecretKey::generate().unwrap();
    let connectors = crate::Connectors {
        cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
        ..crate::Connectors::default()
    };
    let service = ToolService::open_with(ToolServiceSettings::default(), store.clone(), connectors)
        .await
        .unwrap();
    let secret = "hunter2-correct-horse";
    let input = command_tool(
        "show_token",
        json!({"command": "echo token=$API_TOKEN {{.x}}", "env": {"API_TOKEN": secret}}),
        json!({"type": "object", "properties": {"x": {"type": "string"}}}),
    );
    let created = service
        .create(&Actor::user("default"), input)
        .await
        .unwrap();
    assert!(!created.code.contains(secret), "{}", created.code);
    assert!(created.code.contains("v1:"), "{}", created.code);
    let stored = store
        .get_tool("default", &created.id)
        .await
        .unwrap()
        .unwrap();
    assert!(!stored.code.contains(secret));
    if !sandbox_or_skip(&service).await {
        return;
    }
    let res = run(&service, "show_token", json!({"x": "end"})).await;
    assert!(!res.is_error, "{res:?}");
    let stdout = res.content["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("token="), "{stdout}");
    assert!(
        !stdout.contains(secret),
        "the env value was redacted: {stdout}"
    );
    assert!(stdout.contains("[REDACTED]"), "{stdout}");
}

fn scoped_echo(name: &str, scope: &str) -> CreateTool {
    command_tool(
        name,
        json!({"command": "echo {{.word}}", "timeoutSeconds": 10, "scope": scope}),
        json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}),
    )
}

fn as_agent(agent: Option<&str>) -> ToolContext {
    let mut ctx = ToolContext::new("default");
    ctx.agent_id = agent.map(str::to_owned);
    ctx
}

#[tokio::test]
async fn a_per_agent_command_tool_exists_only_for_its_agent() {
    let f = fixture().await;
    let user = Actor::user("default");
    f.service
        .create(&user, scoped_echo("support_echo", "agent:support"))
        .await
        .unwrap();
    f.service
        .create(&user, scoped_echo("shared_echo", "global"))
        .await
        .unwrap();

    let names = |agent: Option<&str>| -> Vec<String> {
        let mut ctx = toolsmith_core::ToolContext::new("default");
        ctx.agent_id = agent.map(str::to_owned);
        f.service
            .visible_tools(&ctx)
            .iter()
            .filter(|t| !t.is_builtin())
            .map(|t| t.name().to_owned())
            .collect()
    };
    assert_eq!(names(Some("support")), ["shared_echo", "support_echo"]);
    assert_eq!(names(Some("sales")), ["shared_echo"]);
    assert_eq!(names(None), ["shared_echo"]);

    // Another agent (or no agent) calling it by name finds nothing, before anything runs.
    for agent in [Some("sales"), None] {
        let res = f
            .service
            .execute("support_echo", json!({"word": "hi"}), as_agent(agent))
            .await;
        assert_eq!(
            res.error_kind(),
            Some(ErrorKind::NotFound),
            "{agent:?}: {res:?}"
        );
    }
    if sandbox_or_skip(&f.service).await {
        let res = f
            .service
            .execute(
                "support_echo",
                json!({"word": "hi"}),
                as_agent(Some("support")),
            )
            .await;
        assert!(!res.is_error, "{res:?}");
        assert_eq!(res.content["stdout"], "hi\n");
    }
}

#[tokio::test]
async fn a_per_agent_tool_cannot_shadow_a_built_in_and_a_bad_scope_is_refused() {
    let f = fixture().await;
    let user = Actor::user("default");
    // The reference let a per-agent tool take a built-in's name for its agent.
    let err = f
        .service
        .create(&user, scoped_echo("calculate", "agent:support"))
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NameTaken(_)), "{err:?}");
    for bad in ["agent:", "agent:a b", "everyone"] {
        let err = f
            .service
            .create(&user, scoped_echo("odd", bad))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("scope"), "{bad}: {err}");
    }
    assert!(f.service.registry().get("default", "odd").is_none());
}
