//! Tests of the lifecycle rules, one rule at a time, against a real SQLite store and the real
//! sandbox.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::{CreatedBy, ErrorKind, Permission, ToolContext, ToolStatus};
use toolsmith_store::{SqliteStore, Store, ToolQuery};

use super::*;
use crate::input::{Actor, CreateTool, DeleteOptions, RunCode, ToolPatch, ToolRef};
use toolsmith_core::{CustomToolRecord, ToolResult};
use toolsmith_store::ToolStats;

struct Fixture {
    _dir: tempfile::TempDir,
    service: Arc<ToolService>,
}

async fn open_at(path: &Path, config: ToolServiceSettings) -> Arc<ToolService> {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(path).await.unwrap());
    ToolService::open(config, store).await.unwrap()
}

async fn fixture() -> Fixture {
    fixture_with(ToolServiceSettings::default()).await
}

async fn fixture_with(config: ToolServiceSettings) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let service = open_at(&dir.path().join("toolsmith.db"), config).await;
    Fixture { _dir: dir, service }
}

fn user() -> Actor {
    Actor::user("default")
}

fn llm() -> Actor {
    Actor::llm("default")
}

fn tool(name: &str, code: &str) -> CreateTool {
    CreateTool {
        kind: Default::default(),
        name: name.to_owned(),
        description: format!("test tool {name}"),
        parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
        code: code.to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

fn with_perms(mut input: CreateTool, permissions: &[Permission]) -> CreateTool {
    input.permissions = permissions.to_vec();
    input
}

fn by_name(name: &str) -> ToolRef {
    ToolRef::Name(name.to_owned())
}

async fn run(service: &ToolService, name: &str, args: Value) -> ToolResult {
    service
        .execute(name, args, ToolContext::new("default"))
        .await
}

async fn count(service: &ToolService) -> u64 {
    service.stats(&user()).await.unwrap().total
}

#[tokio::test]
async fn user_created_tools_are_active() {
    let f = fixture().await;
    let created = f
        .service
        .create(
            &user(),
            with_perms(tool("a", "return 1"), &[Permission::Shell]),
        )
        .await
        .unwrap();
    assert_eq!(created.status, ToolStatus::Active);
    assert_eq!(created.created_by, CreatedBy::User);
    assert!(!created.requires_approval);
    assert_eq!((created.version, created.revision), (1, 1));
    assert!(
        created.id.starts_with("tool_") && created.id.len() == 21,
        "{}",
        created.id
    );
    assert_eq!(run(&f.service, "a", json!({})).await.content, json!(1));
}

#[tokio::test]
async fn llm_created_tools_with_dangerous_permissions_wait_for_approval() {
    let f = fixture().await;
    for (name, perm) in [
        ("s", Permission::Shell),
        ("f", Permission::Filesystem),
        ("e", Permission::Email),
    ] {
        let created = f
            .service
            .create(&llm(), with_perms(tool(name, "return 1"), &[perm]))
            .await
            .unwrap();
        assert_eq!(created.status, ToolStatus::PendingApproval, "{perm}");
        assert!(created.requires_approval);
        assert_eq!(
            run(&f.service, name, json!({})).await.error_kind(),
            Some(ErrorKind::NotFound)
        );
    }
    let safe = f
        .service
        .create(
            &llm(),
            with_perms(tool("n", "return 1"), &[Permission::Network]),
        )
        .await
        .unwrap();
    assert_eq!(safe.status, ToolStatus::Active);
    assert!(
        safe.requires_approval,
        "every LLM-created tool requires approval"
    );
    let plain = f
        .service
        .create(&llm(), tool("p", "return 1"))
        .await
        .unwrap();
    assert_eq!(plain.status, ToolStatus::Active);
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_stored() {
    let f = fixture().await;
    let cases: Vec<(CreateTool, &str)> = vec![
        (tool("Bad-Name", "return 1"), "validation_error"),
        (tool("", "return 1"), "validation_error"),
        (tool(&"a".repeat(65), "return 1"), "validation_error"),
        (tool("calculate", "return 1"), "name_taken"),
        (tool("x", "require('fs')"), "validation_error"),
        (tool("x", "return ("), "validation_error"),
        (tool("x", ""), "validation_error"),
        (tool("x", &"a".repeat(200 * 1024 + 1)), "too_large"),
        (
            CreateTool {
                kind: Default::default(),
                parameters: json!({"type": "string"}),
                ..tool("x", "return 1")
            },
            "validation_error",
        ),
        (
            CreateTool {
                kind: Default::default(),
                parameters: json!("not json"),
                ..tool("x", "return 1")
            },
            "validation_error",
        ),
        (
            CreateTool {
                kind: Default::default(),
                description: "  ".into(),
                ..tool("x", "return 1")
            },
            "validation_error",
        ),
        (
            CreateTool {
                kind: Default::default(),
                description: "d".repeat(4001),
                ..tool("x", "return 1")
            },
            "too_large",
        ),
        (
            CreateTool {
                kind: Default::default(),
                metadata: Some(json!([1])),
                ..tool("x", "return 1")
            },
            "validation_error",
        ),
    ];
    for (input, code) in cases {
        let name = input.name.chars().take(20).collect::<String>();
        let err = f.service.create(&user(), input).await.unwrap_err();
        assert_eq!(err.code(), code, "{name}: {err}");
    }
    assert_eq!(count(&f.service).await, 0);
}

#[tokio::test]
async fn a_builtin_name_is_never_persisted() {
    // Known defect of the reference: such a tool was stored and crashed the next start-up.
    let f = fixture().await;
    let err = f
        .service
        .create(&llm(), tool("get_current_datetime", "return 1"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("built-in"), "{err}");
    assert!(
        f.service
            .store()
            .get_tool_by_name("default", "get_current_datetime")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_stored_tool_that_collides_with_a_builtin_does_not_stop_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolsmith.db");
    {
        let service = open_at(&path, ToolServiceSettings::default()).await;
        let mut record = service
            .create(&user(), tool("fine", "return 'fine'"))
            .await
            .unwrap();
        // As if an older build had stored a tool whose name a newer build made a built-in.
        record.id = CustomToolRecord::new_id();
        record.name = "calculate".to_owned();
        service.store().insert_tool(record).await.unwrap();
    }
    let service = open_at(&path, ToolServiceSettings::default()).await;
    assert_eq!(
        service.startup_warnings().len(),
        1,
        "{:?}",
        service.startup_warnings()
    );
    assert!(service.startup_warnings()[0].contains("calculate"));
    assert_eq!(
        run(&service, "fine", json!({})).await.content,
        json!("fine")
    );
    let calc = run(&service, "calculate", json!({"expression": "1+2"})).await;
    assert_eq!(
        calc.content["result"],
        json!(3.0),
        "the built-in still answers: {calc:?}"
    );
}

#[tokio::test]
async fn names_are_unique_per_owner() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("same", "return 1"))
        .await
        .unwrap();
    let err = f
        .service
        .create(&llm(), tool("same", "return 2"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "name_taken");
    f.service
        .create(&Actor::user("other"), tool("same", "return 3"))
        .await
        .unwrap();
    assert_eq!(run(&f.service, "same", json!({})).await.content, json!(1));
    let other = f
        .service
        .execute("same", json!({}), ToolContext::new("other"))
        .await;
    assert_eq!(other.content, json!(3));
}

#[tokio::test]
async fn owners_cannot_see_or_run_each_others_tools() {
    let f = fixture().await;
    let mine = f
        .service
        .create(&user(), tool("private_tool", "return 1"))
        .await
        .unwrap();
    let stranger = Actor::user("stranger");
    let err = f
        .service
        .get(&stranger, &ToolRef::Id(mine.id.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_found");
    assert_eq!(
        f.service
            .list(&stranger, ToolQuery::owner("default"))
            .await
            .unwrap()
            .total,
        0
    );
    let res = f
        .service
        .execute("private_tool", json!({}), ToolContext::new("stranger"))
        .await;
    assert_eq!(res.error_kind(), Some(ErrorKind::NotFound));
    let err = f
        .service
        .delete(&stranger, &ToolRef::Id(mine.id), DeleteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_found");
}

#[tokio::test]
async fn parameters_may_come_as_a_json_string() {
    let f = fixture().await;
    let input = CreateTool {
        kind: Default::default(),
        parameters: json!(
            "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]}"
        ),
        ..tool("stringy", "return args.q")
    };
    let created = f.service.create(&llm(), input).await.unwrap();
    assert_eq!(created.parameters["required"], json!(["q"]));
    let res = run(&f.service, "stringy", json!({})).await;
    assert_eq!(res.error_kind(), Some(ErrorKind::InvalidArguments));
}

#[tokio::test]
async fn max_tools_per_owner() {
    let f = fixture_with(ToolServiceSettings {
        max_tools_per_owner: 2,
        ..ToolServiceSettings::default()
    })
    .await;
    f.service
        .create(&user(), tool("a", "return 1"))
        .await
        .unwrap();
    f.service
        .create(&user(), tool("b", "return 1"))
        .await
        .unwrap();
    let err = f
        .service
        .create(&user(), tool("c", "return 1"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "limit_reached");
    f.service
        .create(&Actor::user("other"), tool("c", "return 1"))
        .await
        .unwrap();
}

#[tokio::test]
async fn update_bumps_version_only_for_code_or_parameters() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("t", "return 1"))
        .await
        .unwrap();
    let patch = ToolPatch {
        description: Some("new words".into()),
        ..ToolPatch::default()
    };
    let described = f
        .service
        .update(&user(), &by_name("t"), patch, Some(1))
        .await
        .unwrap();
    assert_eq!((described.version, described.revision), (1, 2));
    let patch = ToolPatch {
        code: Some("return 2".into()),
        ..ToolPatch::default()
    };
    let recoded = f
        .service
        .update(&user(), &by_name("t"), patch, Some(2))
        .await
        .unwrap();
    assert_eq!((recoded.version, recoded.revision), (2, 3));
    assert_eq!(
        run(&f.service, "t", json!({})).await.content,
        json!(2),
        "the new code runs at once"
    );
    let schema = json!({"type": "object", "properties": {"y": {"type": "string"}}});
    let patch = ToolPatch {
        parameters: Some(schema),
        ..ToolPatch::default()
    };
    let reparam = f
        .service
        .update(&user(), &by_name("t"), patch, None)
        .await
        .unwrap();
    assert_eq!((reparam.version, reparam.revision), (3, 4));
}

#[tokio::test]
async fn empty_and_no_op_patches_change_nothing() {
    // Known defect of the reference: an empty patch still bumped the revision.
    let f = fixture().await;
    let created = f
        .service
        .create(&user(), tool("t", "return 1"))
        .await
        .unwrap();
    let same = f
        .service
        .update(&user(), &by_name("t"), ToolPatch::default(), Some(1))
        .await
        .unwrap();
    assert_eq!(same, created);
    let patch = ToolPatch {
        name: Some("t".into()),
        code: Some("return 1".into()),
        description: Some(created.description.clone()),
        ..ToolPatch::default()
    };
    let same = f
        .service
        .update(&user(), &by_name("t"), patch, Some(1))
        .await
        .unwrap();
    assert_eq!(same.revision, 1);
    assert_eq!(
        f.service.get(&user(), &by_name("t")).await.unwrap(),
        created
    );
}

#[tokio::test]
async fn rename_only_when_explicit() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("old_name", "return 1"))
        .await
        .unwrap();
    let patch = ToolPatch {
        name: Some("new_name".into()),
        ..ToolPatch::default()
    };
    let err = f
        .service
        .update(&user(), &by_name("old_name"), patch, None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("newName"), "{err}");
    let patch = ToolPatch {
        new_name: Some("calculate".into()),
        ..ToolPatch::default()
    };
    let err = f
        .service
        .update(&user(), &by_name("old_name"), patch, None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "name_taken");
    let patch = ToolPatch {
        new_name: Some("new_name".into()),
        ..ToolPatch::default()
    };
    let renamed = f
        .service
        .update(&user(), &by_name("old_name"), patch, None)
        .await
        .unwrap();
    assert_eq!((renamed.name.as_str(), renamed.revision), ("new_name", 2));
    assert_eq!(
        run(&f.service, "old_name", json!({})).await.error_kind(),
        Some(ErrorKind::NotFound)
    );
    assert_eq!(
        run(&f.service, "new_name", json!({})).await.content,
        json!(1)
    );
}

#[tokio::test]
async fn stale_revisions_conflict_and_change_nothing() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("t", "return 1"))
        .await
        .unwrap();
    let patch = ToolPatch {
        code: Some("return 2".into()),
        ..ToolPatch::default()
    };
    let err = f
        .service
        .update(&user(), &by_name("t"), patch, Some(7))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "revision_conflict");
    assert!(
        err.to_string().contains('7') && err.to_string().contains('1'),
        "{err}"
    );
    assert_eq!(
        run(&f.service, "t", json!({})).await.content,
        json!(1),
        "registry unchanged"
    );
    for res in [
        f.service.disable(&user(), &by_name("t"), Some(0)).await,
        f.service.enable(&user(), &by_name("t"), Some(2)).await,
        f.service
            .delete(
                &user(),
                &by_name("t"),
                DeleteOptions {
                    confirm: true,
                    expected_revision: Some(9),
                },
            )
            .await,
    ] {
        assert_eq!(res.unwrap_err().code(), "revision_conflict");
    }
    assert_eq!(
        f.service
            .get(&user(), &by_name("t"))
            .await
            .unwrap()
            .revision,
        1
    );
}

#[tokio::test]
async fn a_stale_revision_never_hits_a_recreated_tool() {
    let f = fixture().await;
    let first = f
        .service
        .create(&user(), tool("t", "return 1"))
        .await
        .unwrap();
    f.service
        .delete(&user(), &by_name("t"), DeleteOptions::default())
        .await
        .unwrap();
    let second = f
        .service
        .create(&user(), tool("t", "return 2"))
        .await
        .unwrap();
    assert!(
        second.revision > first.revision,
        "{} > {}",
        second.revision,
        first.revision
    );
    let patch = ToolPatch {
        code: Some("return 3".into()),
        ..ToolPatch::default()
    };
    let err = f
        .service
        .update(&user(), &by_name("t"), patch, Some(first.revision))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "revision_conflict");
}

#[tokio::test]
async fn enable_and_disable_are_idempotent() {
    // Known defect of the reference: a repeated disable still bumped the revision.
    let f = fixture().await;
    f.service
        .create(&user(), tool("t", "return 1"))
        .await
        .unwrap();
    let enabled = f
        .service
        .enable(&user(), &by_name("t"), None)
        .await
        .unwrap();
    assert_eq!(enabled.revision, 1);
    let disabled = f
        .service
        .disable(&user(), &by_name("t"), Some(1))
        .await
        .unwrap();
    assert_eq!(
        (disabled.status, disabled.revision),
        (ToolStatus::Disabled, 2)
    );
    assert_eq!(
        run(&f.service, "t", json!({})).await.error_kind(),
        Some(ErrorKind::NotFound)
    );
    let again = f
        .service
        .disable(&user(), &by_name("t"), None)
        .await
        .unwrap();
    assert_eq!(again.revision, 2);
    let enabled = f
        .service
        .enable(&user(), &by_name("t"), Some(2))
        .await
        .unwrap();
    assert_eq!((enabled.status, enabled.revision), (ToolStatus::Active, 3));
    assert_eq!(run(&f.service, "t", json!({})).await.content, json!(1));
}

#[tokio::test]
async fn pending_and_rejected_tools_become_active_only_by_approval() {
    let f = fixture().await;
    f.service
        .create(
            &llm(),
            with_perms(tool("p", "return 1"), &[Permission::Shell]),
        )
        .await
        .unwrap();
    assert_eq!(
        f.service
            .enable(&user(), &by_name("p"), None)
            .await
            .unwrap_err()
            .code(),
        "invalid_state"
    );
    assert_eq!(
        f.service
            .disable(&user(), &by_name("p"), None)
            .await
            .unwrap_err()
            .code(),
        "invalid_state"
    );
    let rejected = f.service.reject(&user(), &by_name("p")).await.unwrap();
    assert_eq!(rejected.status, ToolStatus::Rejected);
    assert_eq!(
        f.service
            .enable(&user(), &by_name("p"), None)
            .await
            .unwrap_err()
            .code(),
        "invalid_state"
    );
    assert_eq!(
        f.service
            .approve(&user(), &by_name("p"))
            .await
            .unwrap_err()
            .code(),
        "invalid_state"
    );
    assert_eq!(
        run(&f.service, "p", json!({})).await.error_kind(),
        Some(ErrorKind::NotFound)
    );
}

#[tokio::test]
async fn only_a_person_approves() {
    let f = fixture().await;
    f.service
        .create(
            &llm(),
            with_perms(tool("p", "return 'ok'"), &[Permission::Filesystem]),
        )
        .await
        .unwrap();
    let err = f.service.approve(&llm(), &by_name("p")).await.unwrap_err();
    assert_eq!(err.code(), "forbidden");
    assert_eq!(
        f.service
            .reject(&llm(), &by_name("p"))
            .await
            .unwrap_err()
            .code(),
        "forbidden"
    );
    let approved = f.service.approve(&user(), &by_name("p")).await.unwrap();
    assert_eq!(
        (approved.status, approved.revision),
        (ToolStatus::Active, 2)
    );
    // Approving the tool makes it callable; each execution of a model's tool still waits for a
    // person (Layer 8, `approvals.rs`).
    assert_eq!(
        run(&f.service, "p", json!({})).await.error_kind(),
        Some(toolsmith_core::ErrorKind::ApprovalRequired)
    );
    let err = f.service.approve(&user(), &by_name("p")).await.unwrap_err();
    assert_eq!(err.code(), "invalid_state", "approve only from pending");
}

#[tokio::test]
async fn llm_changes_to_dangerous_tools_go_back_to_approval() {
    let f = fixture().await;
    f.service
        .create(&llm(), tool("t", "return 1"))
        .await
        .unwrap();
    let patch = ToolPatch {
        description: Some("harmless".into()),
        ..ToolPatch::default()
    };
    let same_status = f
        .service
        .update(&llm(), &by_name("t"), patch, None)
        .await
        .unwrap();
    assert_eq!(same_status.status, ToolStatus::Active);
    let patch = ToolPatch {
        permissions: Some(vec![Permission::Shell]),
        ..ToolPatch::default()
    };
    let pending = f
        .service
        .update(&llm(), &by_name("t"), patch, None)
        .await
        .unwrap();
    assert_eq!(pending.status, ToolStatus::PendingApproval);
    assert_eq!(
        run(&f.service, "t", json!({})).await.error_kind(),
        Some(ErrorKind::NotFound)
    );
    f.service.approve(&user(), &by_name("t")).await.unwrap();
    let patch = ToolPatch {
        code: Some("return 2".into()),
        ..ToolPatch::default()
    };
    let pending = f
        .service
        .update(&llm(), &by_name("t"), patch, None)
        .await
        .unwrap();
    assert_eq!(
        pending.status,
        ToolStatus::PendingApproval,
        "new code of a shell tool needs a human"
    );
    // A person changing the same tool needs no approval.
    f.service.approve(&user(), &by_name("t")).await.unwrap();
    let patch = ToolPatch {
        code: Some("return 3".into()),
        ..ToolPatch::default()
    };
    let active = f
        .service
        .update(&user(), &by_name("t"), patch, None)
        .await
        .unwrap();
    assert_eq!(active.status, ToolStatus::Active);
    let patch = ToolPatch {
        requires_approval: Some(false),
        ..ToolPatch::default()
    };
    assert_eq!(
        f.service
            .update(&llm(), &by_name("t"), patch, None)
            .await
            .unwrap_err()
            .code(),
        "forbidden"
    );
}

#[tokio::test]
async fn llm_deletes_only_its_own_tools_and_only_when_confirmed() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("users", "return 1"))
        .await
        .unwrap();
    f.service
        .create(&llm(), tool("models", "return 1"))
        .await
        .unwrap();
    let confirmed = DeleteOptions {
        confirm: true,
        expected_revision: None,
    };
    let err = f
        .service
        .delete(&llm(), &by_name("users"), confirmed)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "forbidden");
    assert!(err.to_string().contains("created by a user"), "{err}");
    assert!(
        err.to_string().contains("`toolsmith tool delete users`")
            && err.to_string().contains("web UI"),
        "names the server's doors: {err}"
    );
    let err = f
        .service
        .delete(&llm(), &by_name("models"), DeleteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "confirmation_required");
    assert_eq!(count(&f.service).await, 2);
    let gone = f
        .service
        .delete(&llm(), &by_name("models"), confirmed)
        .await
        .unwrap();
    assert_eq!(gone.name, "models");
    assert_eq!(
        run(&f.service, "models", json!({})).await.error_kind(),
        Some(ErrorKind::NotFound)
    );
    f.service
        .delete(&user(), &by_name("users"), DeleteOptions::default())
        .await
        .unwrap();
    assert_eq!(count(&f.service).await, 0);
}

#[tokio::test]
async fn stats_count_statuses_creators_and_usage() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("a", "return 1"))
        .await
        .unwrap();
    f.service
        .create(&user(), tool("b", "return 1"))
        .await
        .unwrap();
    f.service
        .disable(&user(), &by_name("b"), None)
        .await
        .unwrap();
    f.service
        .create(
            &llm(),
            with_perms(tool("c", "return 1"), &[Permission::Email]),
        )
        .await
        .unwrap();
    f.service
        .create(
            &llm(),
            with_perms(tool("d", "return 1"), &[Permission::Email]),
        )
        .await
        .unwrap();
    f.service.reject(&user(), &by_name("d")).await.unwrap();
    run(&f.service, "a", json!({})).await;
    run(&f.service, "a", json!({})).await;
    let stats = f.service.stats(&user()).await.unwrap();
    assert_eq!(
        stats,
        ToolStats {
            total: 4,
            active: 1,
            disabled: 1,
            pending_approval: 1,
            rejected: 1,
            created_by_llm: 2,
            created_by_user: 2,
            total_usage: 2,
        }
    );
}

#[tokio::test]
async fn usage_is_recorded_on_success_and_failure() {
    let f = fixture().await;
    let created = f
        .service
        .create(
            &user(),
            tool(
                "flaky",
                "if (args.x) throw new Error('boom ' + args.x); return 'fine'",
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        run(&f.service, "flaky", json!({})).await.content,
        json!("fine")
    );
    let failed = run(&f.service, "flaky", json!({"x": 7})).await;
    assert!(failed.is_error);
    assert!(
        failed.error_message().unwrap().contains("boom 7"),
        "{failed:?}"
    );
    let after = f.service.get(&user(), &by_name("flaky")).await.unwrap();
    assert_eq!(after.usage_count, 2);
    assert!(after.last_used_at.is_some());
    assert_eq!(
        after.revision, created.revision,
        "usage is not a change of the tool"
    );
    f.service.flush_usage().await;
    let executions = f
        .service
        .store()
        .list_executions("default", Some(&created.id), None, None, 10)
        .await
        .unwrap();
    let statuses: Vec<&str> = executions.iter().map(|e| e.status.as_str()).collect();
    assert_eq!(statuses, ["error", "success"]);
    assert_eq!(executions[0].error_kind.as_deref(), Some("execution_error"));
}

#[tokio::test]
async fn versions_and_rollback() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("v", "return 'one'"))
        .await
        .unwrap();
    let patch = ToolPatch {
        code: Some("return 'two'".into()),
        ..ToolPatch::default()
    };
    f.service
        .update(&user(), &by_name("v"), patch, None)
        .await
        .unwrap();
    let rolled = f
        .service
        .rollback(&user(), &by_name("v"), 1, Some(2))
        .await
        .unwrap();
    assert_eq!(
        (rolled.version, rolled.revision, rolled.code.as_str()),
        (3, 3, "return 'one'")
    );
    assert_eq!(run(&f.service, "v", json!({})).await.content, json!("one"));
    let versions: Vec<i64> = f
        .service
        .versions(&user(), &by_name("v"))
        .await
        .unwrap()
        .iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(versions, [3, 2, 1]);
    let err = f
        .service
        .rollback(&user(), &by_name("v"), 42, None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_found");
}

#[tokio::test]
async fn active_tools_are_loaded_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolsmith.db");
    {
        let service = open_at(&path, ToolServiceSettings::default()).await;
        service
            .create(&user(), tool("kept", "return 'kept'"))
            .await
            .unwrap();
        service
            .create(&user(), tool("off", "return 'off'"))
            .await
            .unwrap();
        service
            .disable(&user(), &by_name("off"), None)
            .await
            .unwrap();
    }
    let service = open_at(&path, ToolServiceSettings::default()).await;
    assert!(service.startup_warnings().is_empty());
    assert_eq!(
        run(&service, "kept", json!({})).await.content,
        json!("kept")
    );
    assert_eq!(
        run(&service, "off", json!({})).await.error_kind(),
        Some(ErrorKind::NotFound)
    );
}

#[tokio::test]
async fn the_specs_examples_run() {
    let f = fixture().await;
    let word_frequency = CreateTool {
        kind: Default::default(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ..tool(
            "word_frequency",
            r#"const words = args.text.toLowerCase().match(/\b\w+\b/g) || [];
const freq = {};
for (const word of words) { freq[word] = (freq[word] || 0) + 1; }
const sorted = Object.entries(freq).sort((a, b) => b[1] - a[1]).slice(0, 20);
return { totalWords: words.length, uniqueWords: Object.keys(freq).length, top20: sorted };"#,
        )
    };
    f.service.create(&user(), word_frequency).await.unwrap();
    let res = run(
        &f.service,
        "word_frequency",
        json!({"text": "the cat and the hat"}),
    )
    .await;
    assert_eq!(res.content["totalWords"], json!(5));
    assert_eq!(res.content["uniqueWords"], json!(4));
    assert_eq!(res.content["top20"][0], json!(["the", 2]));
    let misplaced = run(&f.service, "word_frequency", json!({"txt": "oops"})).await;
    assert_eq!(misplaced.error_kind(), Some(ErrorKind::InvalidArguments));

    let csv_analyzer = CreateTool {
        kind: Default::default(),
        parameters: json!({"type": "object", "properties": {"csv": {"type": "string"}, "numeric_column": {"type": "string"}}, "required": ["csv"]}),
        ..tool(
            "csv_analyzer",
            r#"const records = utils.parseCsv(args.csv);
if (records.length === 0) return { error: 'No records found in CSV' };
const columns = Object.keys(records[0]);
const result = { rowCount: records.length, columns: columns, id: utils.uuid(), analyzedAt: utils.now() };
if (args.numeric_column && columns.includes(args.numeric_column)) {
  const values = records.map(r => parseFloat(r[args.numeric_column])).filter(v => !isNaN(v));
  result.stats = { count: values.length, sum: utils.sum(values), avg: utils.round(utils.avg(values), 2),
                   min: Math.min(...values), max: Math.max(...values) };
}
return result;"#,
        )
    };
    f.service.create(&user(), csv_analyzer).await.unwrap();
    let csv = "name,price\napple,1.5\npear,2\nplum,3.25\n";
    let res = run(
        &f.service,
        "csv_analyzer",
        json!({"csv": csv, "numeric_column": "price"}),
    )
    .await;
    assert!(!res.is_error, "{res:?}");
    assert_eq!(res.content["rowCount"], json!(3));
    assert_eq!(res.content["columns"], json!(["name", "price"]));
    assert_eq!(
        res.content["stats"],
        json!({"count": 3, "sum": 6.75, "avg": 2.25, "min": 1.5, "max": 3.25})
    );
}

#[tokio::test]
async fn call_tool_reaches_builtins_and_respects_permissions() {
    let f = fixture().await;
    f.service
        .create(
            &user(),
            tool(
                "adder",
                "const r = await utils.callTool('calculate', {expression: '2+3'}); return r.result",
            ),
        )
        .await
        .unwrap();
    let sum = run(&f.service, "adder", json!({})).await;
    assert_eq!(sum.content.as_f64(), Some(5.0), "{sum:?}");
    f.service
        .create(
            &user(),
            with_perms(tool("netty", "return 'net'"), &[Permission::Network]),
        )
        .await
        .unwrap();
    f.service.create(&user(), tool("sneaky", "try { return await utils.callTool('netty', {}) } catch (e) { return 'refused: ' + e.message }")).await.unwrap();
    let res = run(&f.service, "sneaky", json!({})).await;
    let text = res.content.as_str().unwrap_or_default().to_owned();
    assert!(
        text.starts_with("refused: ") && text.contains("network"),
        "{res:?}"
    );
    f.service
        .create(
            &user(),
            with_perms(
                tool("allowed", "return await utils.callTool('netty', {})"),
                &[Permission::Network],
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        run(&f.service, "allowed", json!({})).await.content,
        json!("net")
    );
}

#[tokio::test]
async fn call_tool_recursion_stops_at_the_depth_limit() {
    let f = fixture().await;
    f.service
        .create(
            &user(),
            tool("forever", "return await utils.callTool('forever', {})"),
        )
        .await
        .unwrap();
    let res = run(&f.service, "forever", json!({})).await;
    assert!(res.is_error);
    assert!(res.error_message().unwrap().contains("depth"), "{res:?}");
    let after = run(&f.service, "calculate", json!({"expression": "1"})).await;
    assert!(
        !after.is_error,
        "the pipeline is healthy after the runaway chain: {after:?}"
    );
}

/// Under `toolsmith mcp` (stdio) the refusal names the only door there is: the CLI on that store.
#[tokio::test]
async fn a_refused_delete_names_the_doors_of_stdio() {
    let f = fixture_with(ToolServiceSettings {
        approval_doors: crate::ApprovalDoors::Local {
            store_option: "--data-dir /srv/ts".to_owned(),
        },
        ..ToolServiceSettings::default()
    })
    .await;
    f.service
        .create(&user(), tool("users", "return 1"))
        .await
        .unwrap();
    let err = f
        .service
        .delete(
            &llm(),
            &by_name("users"),
            DeleteOptions {
                confirm: true,
                expected_revision: None,
            },
        )
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("`toolsmith --data-dir /srv/ts tool delete users`")
            && !message.contains("in the Toolsmith web UI"),
        "{message}"
    );
}

/// `timeoutMs` (dynamic-mcp's field) may shorten the operator's `js_wall_time`, never lengthen
/// it: on a stored tool and on a one-off run alike.
#[tokio::test]
async fn timeout_ms_never_exceeds_the_servers_wall_time() {
    let mut config = ToolServiceSettings::default();
    config.js_limits.wall_time = std::time::Duration::from_millis(300);
    let f = fixture_with(config).await;
    // Busy until a limit stops it: the wall clock (300 ms) long before the CPU limit (5 s).
    let never = "while (true) {} return 1;";
    let mut input = tool("waits_forever", never);
    input.metadata = Some(json!({"timeoutMs": 120000}));
    f.service.create(&user(), input).await.unwrap();
    let mut shorter = tool("waits_briefly", never);
    shorter.metadata = Some(json!({"timeoutMs": 100}));
    f.service.create(&user(), shorter).await.unwrap();
    let one_off = |ms| RunCode {
        code: never.into(),
        args: None,
        permissions: Vec::new(),
        timeout_ms: Some(ms),
        dependencies: Vec::new(),
    };
    let results = [
        (
            "stored, 120000",
            run(&f.service, "waits_forever", json!({})).await,
            "300 ms",
        ),
        (
            "stored, 100",
            run(&f.service, "waits_briefly", json!({})).await,
            "100 ms",
        ),
        (
            "one-off, 120000",
            f.service
                .run_ephemeral(
                    &llm(),
                    one_off(120_000),
                    ToolContext::new("default"),
                    crate::RunRights::default(),
                )
                .await,
            "300 ms",
        ),
    ];
    for (what, res, limit) in results {
        assert_eq!(
            res.error_kind(),
            Some(ErrorKind::Timeout),
            "{what}: {res:?}"
        );
        let message = res.content.to_string();
        assert!(
            message.contains(&format!("time limit of {limit}")),
            "{what}: {message}"
        );
    }
}

#[tokio::test]
async fn ephemeral_runs_store_nothing() {
    let f = fixture().await;
    let res = f
        .service
        .run_ephemeral(
            &llm(),
            RunCode {
                code: "return args.a * 2".into(),
                args: Some(json!({"a": 21})),
                permissions: Vec::new(),
                timeout_ms: None,
                dependencies: Vec::new(),
            },
            ToolContext::new("default"),
            crate::RunRights::default(),
        )
        .await;
    assert_eq!(res.content, json!(42));
    let bad = f
        .service
        .run_ephemeral(
            &llm(),
            RunCode {
                code: "eval('1')".into(),
                args: None,
                permissions: Vec::new(),
                timeout_ms: None,
                dependencies: Vec::new(),
            },
            ToolContext::new("default"),
            crate::RunRights::default(),
        )
        .await;
    assert_eq!(bad.error_kind(), Some(ErrorKind::InvalidArguments));
    assert_eq!(count(&f.service).await, 0);
    let tested = f
        .service
        .test_tool(
            &user(),
            tool("dry", "return args.x + 1"),
            json!({"x": 1}),
            ToolContext::new("default"),
            crate::RunRights::default(),
        )
        .await;
    assert_eq!(tested.content, json!(2));
    assert_eq!(tested.metadata.extra.get("testMode"), Some(&json!(true)));
    let tested = f
        .service
        .test_tool(
            &user(),
            tool("dry", "return 1"),
            json!({"x": "one"}),
            ToolContext::new("default"),
            crate::RunRights::default(),
        )
        .await;
    assert_eq!(tested.error_kind(), Some(ErrorKind::InvalidArguments));
    assert_eq!(count(&f.service).await, 0);
}

#[tokio::test]
async fn resync_from_store_follows_another_process_and_only_real_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolsmith.db");
    let here = open_at(&path, ToolServiceSettings::default()).await;
    let there = open_at(&path, ToolServiceSettings::default()).await;
    assert_eq!(here.resync_from_store().await.unwrap(), 0);

    there.create(&user(), tool("t", "return 1")).await.unwrap();
    there
        .create(&user(), tool("u", "return 'u'"))
        .await
        .unwrap();
    assert_eq!(here.resync_from_store().await.unwrap(), 2);
    assert_eq!(run(&here, "t", json!({})).await.content, json!(1));
    let version = here.registry().catalog_version("default");
    assert_eq!(here.resync_from_store().await.unwrap(), 0);
    assert_eq!(
        here.registry().catalog_version("default"),
        version,
        "no change, no bump"
    );

    let patch = ToolPatch {
        code: Some("return 2".into()),
        ..ToolPatch::default()
    };
    there
        .update(&user(), &by_name("t"), patch, None)
        .await
        .unwrap();
    there.disable(&user(), &by_name("u"), None).await.unwrap();
    assert_eq!(here.resync_from_store().await.unwrap(), 2);
    assert_eq!(run(&here, "t", json!({})).await.content, json!(2));
    assert!(here.registry().get("default", "u").is_none());

    there
        .delete(&user(), &by_name("t"), DeleteOptions::default())
        .await
        .unwrap();
    assert_eq!(here.resync_from_store().await.unwrap(), 1);
    assert!(here.registry().get("default", "t").is_none());
}

#[tokio::test]
async fn names_of_toolsmiths_own_mcp_tools_are_reserved() {
    let f = fixture().await;
    for name in ["create_tool", "use_tool", "search_tools"] {
        let err = f
            .service
            .create(&llm(), tool(name, "return 1"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "name_taken", "{name}: {err}");
        assert!(
            err.to_string().contains("Toolsmith's own MCP tools"),
            "{err}"
        );
    }
    f.service
        .create(&user(), tool("fine", "return 1"))
        .await
        .unwrap();
    let patch = ToolPatch {
        new_name: Some("batch_use_tool".into()),
        ..ToolPatch::default()
    };
    let err = f
        .service
        .update(&user(), &by_name("fine"), patch, None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "name_taken");
    assert_eq!(count(&f.service).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_of_a_burst_of_concurrent_calls_is_counted_exactly() {
    let f = fixture().await;
    f.service
        .create(&user(), tool("burst", "return args.x ?? 0"))
        .await
        .unwrap();
    let calls = (0..300).map(|i| {
        let service = f.service.clone();
        async move { run(&service, "burst", json!({"x": i})).await }
    });
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");
    // Reads through the service see every call made before them.
    let after = f.service.get(&user(), &by_name("burst")).await.unwrap();
    assert_eq!(after.usage_count, 300);
    let stats = f.service.stats(&user()).await.unwrap();
    assert_eq!(stats.total_usage, 300);
    let executions = f
        .service
        .store()
        .list_executions("default", Some(&after.id), None, None, 1000)
        .await
        .unwrap();
    assert_eq!(executions.len(), 300);
}

#[tokio::test]
async fn file_tools_keep_each_users_workspace_apart_and_need_filesystem_in_js() {
    let workspaces = tempfile::tempdir().unwrap();
    let f = fixture_with(ToolServiceSettings {
        workspace: Some(crate::WorkspaceSettings::new(workspaces.path().join("ws"))),
        ..ToolServiceSettings::default()
    })
    .await;
    let call = |user: &'static str, tool: &'static str, args: Value| {
        f.service.execute(tool, args, ToolContext::new(user))
    };
    let res = call(
        "alice",
        "write_file",
        json!({"path": "note.txt", "content": "alice only"}),
    )
    .await;
    assert!(!res.is_error, "{res:?}");
    let res = call("bob", "read_file", json!({"path": "note.txt"})).await;
    assert!(
        res.error_message()
            .unwrap_or_default()
            .contains("does not exist"),
        "{res:?}"
    );
    let res = call("bob", "list_directory", json!({})).await;
    assert_eq!(res.content["count"], 0, "{res:?}");
    let res = call("alice", "read_file", json!({"path": "note.txt"})).await;
    assert_eq!(res.content["content"], "alice only", "{res:?}");
    assert!(f.service.workspaces().is_some());

    // A JS tool reaches the file tools through callTool only when it holds `filesystem`.
    call(
        "default",
        "write_file",
        json!({"path": "n.txt", "content": "mine"}),
    )
    .await;
    let code = "try { return (await utils.callTool('read_file', {path: 'n.txt'})).content } catch (e) { return 'refused: ' + e.message }";
    f.service
        .create(&user(), tool("plain_reader", code))
        .await
        .unwrap();
    let res = run(&f.service, "plain_reader", json!({})).await;
    let text = res.content.as_str().unwrap_or_default();
    assert!(
        text.starts_with("refused: ") && text.contains("filesystem"),
        "{res:?}"
    );
    f.service
        .create(
            &user(),
            with_perms(tool("fs_reader", code), &[Permission::Filesystem]),
        )
        .await
        .unwrap();
    assert_eq!(
        run(&f.service, "fs_reader", json!({})).await.content,
        json!("mine")
    );
}

/// A one-page HTTP server on 127.0.0.1 (the only address the web tests reach); its address.
async fn one_page_server(html: &'static str) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 1024];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    html.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(html.as_bytes()).await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn the_specs_summarize_url_example_runs_end_to_end_through_web_fetch() {
    let addr = one_page_server(
        "<html><head><title>Spec</title></head><body><p>one two three four five</p></body></html>",
    )
    .await;
    let mut config = ToolServiceSettings::default();
    config.egress.allowed_private_hosts = vec![addr.to_string().parse().unwrap()];
    let f = fixture_with(config).await;
    let url = format!("http://{addr}/article");
    let code = "const content = await utils.callTool('web_fetch', { url: args.url });\n\
        const text = typeof content === 'string' ? content : JSON.stringify(content);\n\
        const words = text.split(/\\s+/).length;\n\
        return { url: args.url, wordCount: words, preview: utils.truncate(text, 500), fetchedAt: utils.now() };";
    let mut summarize = with_perms(tool("summarize_url", code), &[Permission::Network]);
    summarize.parameters = json!({
        "type": "object",
        "properties": {"url": {"type": "string", "description": "URL to summarize"}},
        "required": ["url"]
    });
    f.service.create(&user(), summarize).await.unwrap();
    // The group is off by default: web_fetch does not exist for the tool yet.
    let res = run(&f.service, "summarize_url", json!({"url": url})).await;
    assert!(res.is_error, "{res:?}");
    f.service
        .set_tool_group(&user(), "web", true)
        .await
        .unwrap();
    let res = run(&f.service, "summarize_url", json!({"url": url})).await;
    assert!(!res.is_error, "{res:?}");
    assert_eq!(res.content["url"], json!(url));
    let preview = res.content["preview"].as_str().unwrap();
    assert!(preview.contains("one two three four five"), "{preview}");
    assert!(preview.contains("\"title\":\"Spec\""), "{preview}");
    assert!(res.content["wordCount"].as_u64().unwrap() >= 5, "{res:?}");
    // Without `network`, the tool cannot reach web_fetch.
    let plain = "try { return await utils.callTool('web_fetch', { url: args.url }) } catch (e) { return 'refused: ' + e.message }";
    f.service
        .create(&user(), tool("no_net", plain))
        .await
        .unwrap();
    let res = run(&f.service, "no_net", json!({"url": url})).await;
    let text = res.content.as_str().unwrap_or_default();
    assert!(
        text.starts_with("refused: ") && text.contains("network"),
        "{res:?}"
    );
}

mod custom;
mod finance;
mod goals;
mod js_workspace;
mod memory;
mod pdf_git;
mod personal;
mod racing;
mod schedule;
