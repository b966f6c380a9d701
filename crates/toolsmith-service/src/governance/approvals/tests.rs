//! Human approval of executions through the service: which calls wait under each setting, what
//! each decision allows (exactly one call, or the tool for one caller), expiry, revocation on a
//! code change, and answers given during the call by an approver.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{
    ApprovalAnswer, ApprovalPrompt, ApprovalQuestion, Approver, ErrorKind, Permission, ToolContext,
    ToolResult,
};
use toolsmith_store::{ApprovalDecision, ApprovalStatus, SqliteStore, Store};

use super::ExecutionApproval;
use crate::{
    Actor, CreateTool, ServiceError, ToolPatch, ToolRef, ToolService, ToolServiceSettings,
};

async fn open(mode: ExecutionApproval, ttl: Duration) -> (tempfile::TempDir, Arc<ToolService>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let config = ToolServiceSettings {
        execution_approval: mode,
        approval_ttl: ttl,
        ..ToolServiceSettings::default()
    };
    (dir, ToolService::open(config, store).await.unwrap())
}

fn echo(name: &str, permissions: Vec<Permission>) -> CreateTool {
    CreateTool {
        name: name.to_owned(),
        kind: Default::default(),
        description: "echoes".to_owned(),
        parameters: json!({"type": "object"}),
        code: "return args;".to_owned(),
        category: None,
        tags: Vec::new(),
        permissions,
        requires_approval: None,
        metadata: None,
    }
}

fn ctx(agent: Option<&str>) -> ToolContext {
    let mut ctx = ToolContext::new("alice");
    ctx.agent_id = agent.map(str::to_owned);
    ctx
}

async fn call(service: &ToolService, name: &str, args: Value, agent: Option<&str>) -> ToolResult {
    service.execute(name, args, ctx(agent)).await
}

fn approval_id(res: &ToolResult) -> String {
    assert_eq!(
        res.error_kind(),
        Some(ErrorKind::ApprovalRequired),
        "{res:?}"
    );
    let id = res.content["approvalId"].as_str().unwrap().to_owned();
    assert!(
        res.content["error"].as_str().unwrap().contains(&id),
        "{res:?}"
    );
    id
}

#[tokio::test]
async fn an_llm_tool_waits_and_allow_once_lets_exactly_that_call_run_once() {
    let (_dir, service) = open(ExecutionApproval::LlmTools, Duration::from_secs(120)).await;
    service
        .create(&Actor::llm("alice"), echo("by_model", vec![]))
        .await
        .unwrap();
    service
        .create(&Actor::user("alice"), echo("by_person", vec![]))
        .await
        .unwrap();

    // A person's own tool runs; the model's waits, and asking again finds the same approval.
    assert!(
        !call(&service, "by_person", json!({"x": 1}), None)
            .await
            .is_error
    );
    let first = approval_id(&call(&service, "by_model", json!({"x": 1}), None).await);
    let again = approval_id(&call(&service, "by_model", json!({"x": 1}), None).await);
    assert_eq!(first, again);
    let pending = service
        .approvals()
        .list(Some("alice"), true, 10)
        .await
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool_name, "by_model");
    assert_eq!(service.approvals().pending_count().await, 1);

    service
        .approvals()
        .decide(Some("alice"), &first, ApprovalDecision::AllowOnce, "alice")
        .await
        .unwrap();
    // Other arguments are another call: not allowed by this approval.
    let other = approval_id(&call(&service, "by_model", json!({"x": 2}), None).await);
    assert_ne!(other, first);
    let ran = call(&service, "by_model", json!({"x": 1}), None).await;
    assert!(!ran.is_error, "{ran:?}");
    assert_eq!(ran.content, json!({"x": 1}));
    // Once only.
    let next = approval_id(&call(&service, "by_model", json!({"x": 1}), None).await);
    assert_ne!(next, first);
    // A decided approval cannot be decided again; another owner cannot see it.
    let err = service
        .approvals()
        .decide(
            Some("alice"),
            &first,
            ApprovalDecision::AllowAlways,
            "alice",
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::InvalidState(_)), "{err:?}");
    let err = service
        .approvals()
        .decide(
            Some("mallory"),
            &next,
            ApprovalDecision::AllowOnce,
            "mallory",
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    // The model never decides, not even its own user's approval, whichever door it uses.
    for model in [
        Actor::llm("alice"),
        Actor::for_caller("alice", Some("bot".to_owned())),
    ] {
        let err = service
            .approvals()
            .decide_as(
                &model,
                Some("alice"),
                &next,
                ApprovalDecision::AllowAlways,
                super::Via::Api,
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ServiceError::Forbidden(_)), "{err:?}");
    }
    let still = service.approvals().get(Some("alice"), &next).await.unwrap();
    assert_eq!(still.status, ApprovalStatus::Pending);
}

#[tokio::test]
async fn allow_always_holds_for_that_caller_until_the_code_changes() {
    let (_dir, service) = open(ExecutionApproval::LlmTools, Duration::from_secs(120)).await;
    service
        .create(&Actor::llm("alice"), echo("t", vec![]))
        .await
        .unwrap();
    let id = approval_id(&call(&service, "t", json!({}), Some("bot")).await);
    service
        .approvals()
        .decide(None, &id, ApprovalDecision::AllowAlways, "admin")
        .await
        .unwrap();
    for n in 0..3 {
        let res = call(&service, "t", json!({"n": n}), Some("bot")).await;
        assert!(!res.is_error, "{res:?}");
    }
    // Another agent is another caller.
    approval_id(&call(&service, "t", json!({}), Some("other-bot")).await);
    // New code is not what the person allowed.
    service
        .update(
            &Actor::user("alice"),
            &ToolRef::Name("t".to_owned()),
            ToolPatch {
                code: Some("return {changed: true};".to_owned()),
                ..ToolPatch::default()
            },
            None,
        )
        .await
        .unwrap();
    approval_id(&call(&service, "t", json!({}), Some("bot")).await);
}

#[tokio::test]
async fn deny_and_expiry_keep_the_call_from_running() {
    let (_dir, service) = open(ExecutionApproval::LlmTools, Duration::from_secs(60)).await;
    service
        .create(&Actor::llm("alice"), echo("t", vec![]))
        .await
        .unwrap();
    let denied = approval_id(&call(&service, "t", json!({}), None).await);
    let record = service
        .approvals()
        .decide(Some("alice"), &denied, ApprovalDecision::Deny, "alice")
        .await
        .unwrap();
    assert_eq!(record.status, ApprovalStatus::Denied);
    // Issue 36: the denial is final for its call. The same call is told who denied it and
    // when, never run, and no new approval is asked for; another call is a new request.
    let again = call(&service, "t", json!({}), None).await;
    assert_eq!(again.error_kind(), Some(ErrorKind::Denied), "{again:?}");
    assert_eq!(again.content["approvalId"], denied.as_str());
    assert_eq!(again.content["deniedBy"], "alice");
    assert!(
        again.content["error"]
            .as_str()
            .unwrap()
            .contains("denied by alice at "),
        "{again:?}"
    );
    assert_eq!(service.approvals().pending_count().await, 0);
    let other = approval_id(&call(&service, "t", json!({"x": 1}), None).await);
    assert_ne!(other, denied);

    // An approval whose time is up cannot be decided any more. A ttl of zero has it expire as
    // it is made, so no test waits for a clock.
    let (_dir, service) = open(ExecutionApproval::LlmTools, Duration::ZERO).await;
    service
        .create(&Actor::llm("alice"), echo("t", vec![]))
        .await
        .unwrap();
    let expired = approval_id(&call(&service, "t", json!({}), None).await);
    let err = service
        .approvals()
        .decide(
            Some("alice"),
            &expired,
            ApprovalDecision::AllowOnce,
            "alice",
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("expired"), "{err}");
    assert_eq!(service.approvals().pending_count().await, 0);
}

#[tokio::test]
async fn the_setting_chooses_which_tools_wait() {
    let (_dir, dangerous) = open(ExecutionApproval::Dangerous, Duration::from_secs(60)).await;
    dangerous
        .create(&Actor::llm("alice"), echo("plain", vec![]))
        .await
        .unwrap();
    dangerous
        .create(
            &Actor::user("alice"),
            echo("networked", vec![Permission::Network]),
        )
        .await
        .unwrap();
    assert!(!call(&dangerous, "plain", json!({}), None).await.is_error);
    approval_id(&call(&dangerous, "networked", json!({}), None).await);

    let (_dir2, off) = open(ExecutionApproval::Off, Duration::from_secs(60)).await;
    off.create(&Actor::llm("alice"), echo("plain", vec![]))
        .await
        .unwrap();
    assert!(!call(&off, "plain", json!({}), None).await.is_error);

    assert_eq!("dangerous".parse(), Ok(ExecutionApproval::Dangerous));
    assert!(
        "sometimes"
            .parse::<ExecutionApproval>()
            .unwrap_err()
            .contains("llm_tools")
    );
}

/// An approver that answers as told and remembers what it was asked.
struct Scripted {
    answer: Option<ApprovalAnswer>,
    asked: Mutex<Vec<ApprovalQuestion>>,
}

#[async_trait]
impl ApprovalPrompt for Scripted {
    async fn ask(&self, question: &ApprovalQuestion) -> Option<ApprovalAnswer> {
        self.asked.lock().unwrap().push(question.clone());
        self.answer
    }
}

async fn call_with(
    service: &ToolService,
    answer: Option<ApprovalAnswer>,
    args: Value,
) -> (ToolResult, Vec<ApprovalQuestion>) {
    let approver = Arc::new(Scripted {
        answer,
        asked: Mutex::new(Vec::new()),
    });
    let mut ctx = ctx(None);
    ctx.approver = Some(Approver(approver.clone()));
    let res = service.execute("t", args, ctx).await;
    let asked = approver.asked.lock().unwrap().clone();
    (res, asked)
}

#[tokio::test]
async fn an_approver_answers_during_the_call() {
    let (_dir, service) = open(ExecutionApproval::LlmTools, Duration::from_secs(60)).await;
    service
        .create(&Actor::llm("alice"), echo("t", vec![]))
        .await
        .unwrap();

    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz123456";
    let (res, asked) = call_with(
        &service,
        Some(ApprovalAnswer::AllowOnce),
        json!({"key": secret}),
    )
    .await;
    assert!(!res.is_error, "{res:?}");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool_name, "t");
    // The person sees the arguments, scrubbed.
    assert!(
        !asked[0].args_preview.contains(secret),
        "{}",
        asked[0].args_preview
    );
    // Allowed once: the next identical call asks again.
    let (res, asked) =
        call_with(&service, Some(ApprovalAnswer::Deny), json!({"key": secret})).await;
    assert_eq!(res.error_kind(), Some(ErrorKind::Denied), "{res:?}");
    assert_eq!(asked.len(), 1);
    // No answer (declined form, unsupported client): the approval stays pending.
    let (res, _) = call_with(&service, None, json!({"n": 1})).await;
    let id = approval_id(&res);
    assert_eq!(
        service
            .approvals()
            .get(Some("alice"), &id)
            .await
            .unwrap()
            .status,
        ApprovalStatus::Pending
    );
    // Allow always, asked in the client: later calls are not asked at all.
    let (res, _) = call_with(&service, Some(ApprovalAnswer::AllowAlways), json!({"n": 2})).await;
    assert!(!res.is_error, "{res:?}");
    let (res, asked) = call_with(&service, Some(ApprovalAnswer::Deny), json!({"n": 3})).await;
    assert!(!res.is_error, "{res:?}");
    assert!(asked.is_empty());
}

#[tokio::test]
async fn under_dangerous_the_builtins_that_touch_files_or_the_network_wait_too() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let mut policy = toolsmith_policy::PolicyDocument::default();
    policy.tool_groups.enable = vec!["webFetch".to_owned()];
    let config = ToolServiceSettings {
        execution_approval: ExecutionApproval::Dangerous,
        policy: Some(policy),
        ..ToolServiceSettings::default()
    };
    let service = ToolService::open(config, store).await.unwrap();
    for (tool, args) in [
        ("write_file", json!({"path": "a.txt", "content": "x"})),
        ("delete_file", json!({"path": "a.txt"})),
        ("http_request", json!({"url": "https://example.com"})),
        ("fetch_web_page", json!({"url": "https://example.com"})),
        (
            "download_file",
            json!({"url": "https://example.com/a", "path": "a"}),
        ),
    ] {
        approval_id(&call(&service, tool, args, None).await);
    }
    let res = call(&service, "calculate", json!({"expression": "2+2"}), None).await;
    assert!(!res.is_error, "{res:?}");
}
