//! The custom-tool contract: round trips, owner isolation, listing and search, revisions,
//! history, usage counters, executions and analytics samples, under concurrency too.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;
use toolsmith_core::{
    CreatedBy, CustomToolRecord, ExecutionRecord, ExecutionSource, ExecutionStatus, Permission,
    ToolKind, ToolStatus,
};

use super::{Backend, on_both_backends};
use crate::{StoreError, ToolPage, ToolQuery, ToolStats};

pub(crate) fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 123_456_000)
        .unwrap()
}

pub(crate) fn tool(owner: &str, name: &str) -> CustomToolRecord {
    CustomToolRecord {
        id: CustomToolRecord::new_id(),
        owner: owner.to_owned(),
        name: name.to_owned(),
        kind: ToolKind::Js,
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        code: "return 1".to_owned(),
        category: Some("Utilities".to_owned()),
        tags: vec!["a".to_owned(), "b".to_owned()],
        permissions: [Permission::Network, Permission::Shell]
            .into_iter()
            .collect(),
        status: ToolStatus::Active,
        requires_approval: true,
        created_by: CreatedBy::Llm,
        version: 1,
        revision: 1,
        usage_count: 0,
        last_used_at: None,
        metadata: json!({"k": [1, 2]}),
        created_at: at(0),
        updated_at: at(0),
    }
}

pub(crate) fn execution(
    tool: &CustomToolRecord,
    status: ExecutionStatus,
    secs: i64,
) -> ExecutionRecord {
    ExecutionRecord {
        id: format!("exec_{}", uuid_like(secs)),
        tool_id: tool.id.clone(),
        tool_name: tool.name.clone(),
        tool_version: tool.version,
        owner: tool.owner.clone(),
        conversation_id: Some("conv".to_owned()),
        agent_id: None,
        status,
        error_kind: (status != ExecutionStatus::Success).then(|| "timeout".to_owned()),
        error: None,
        duration_ms: 1.5,
        created_at: at(secs),
        client_requests: Default::default(),
        source: Default::default(),
    }
}

fn uuid_like(n: i64) -> String {
    format!("{n:016x}")
}

async fn every_field_round_trips(backend: &Backend) {
    let store = backend.store();
    let mut original = tool("default", "round_trip");
    original.last_used_at = Some(at(5));
    original.category = None;
    let stored = store.insert_tool(original.clone()).await.unwrap();
    assert_eq!(stored, original);
    assert_eq!(
        store.get_tool("default", &original.id).await.unwrap(),
        Some(original.clone())
    );
    assert_eq!(
        store
            .get_tool_by_name("default", "round_trip")
            .await
            .unwrap(),
        Some(original)
    );
    assert_eq!(
        store
            .get_tool("default", "tool_0000000000000000")
            .await
            .unwrap(),
        None
    );
    store.ping().await.unwrap();
}

async fn names_are_unique_per_owner(backend: &Backend) {
    let store = backend.store();
    store.insert_tool(tool("alice", "same")).await.unwrap();
    let err = store.insert_tool(tool("alice", "same")).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::NameTaken { name } if name == "same"),
        "{err}"
    );
    store.insert_tool(tool("bob", "same")).await.unwrap();
    assert_eq!(store.count_tools("alice").await.unwrap(), 1);
    assert_eq!(store.count_tools("bob").await.unwrap(), 1);
}

async fn owners_never_see_each_other(backend: &Backend) {
    let store = backend.store();
    let alices = store.insert_tool(tool("alice", "secret")).await.unwrap();
    assert_eq!(store.get_tool("bob", &alices.id).await.unwrap(), None);
    assert_eq!(store.get_tool_by_name("bob", "secret").await.unwrap(), None);
    // Only an admin's decision looks a tool up by its id alone.
    assert_eq!(
        store.get_tool_of_any_owner(&alices.id).await.unwrap(),
        Some(alices.clone())
    );
    assert_eq!(
        store
            .get_tool_of_any_owner("tool_0000000000000000")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .list_tools(&ToolQuery::owner("bob"))
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(store.tool_stats("bob").await.unwrap(), ToolStats::default());
    assert!(
        store
            .list_versions("bob", &alices.id)
            .await
            .unwrap()
            .is_empty()
    );
    let err = store
        .update_tool(
            &CustomToolRecord {
                owner: "bob".into(),
                ..alices.clone()
            },
            1,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    let err = store.delete_tool("bob", &alices.id, 1).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
}

async fn list_filters_search_and_pages(backend: &Backend) {
    let store = backend.store();
    for (name, status, created_by, category, description) in [
        (
            "alpha",
            ToolStatus::Active,
            CreatedBy::User,
            Some("Math"),
            "adds numbers",
        ),
        (
            "beta",
            ToolStatus::Disabled,
            CreatedBy::Llm,
            Some("Math"),
            "subtracts 100%",
        ),
        (
            "gamma",
            ToolStatus::PendingApproval,
            CreatedBy::Llm,
            None,
            "fetches WEATHER",
        ),
        (
            "delta_x",
            ToolStatus::Active,
            CreatedBy::Llm,
            Some("Text"),
            "slugs",
        ),
    ] {
        let mut t = tool("default", name);
        t.status = status;
        t.created_by = created_by;
        t.category = category.map(str::to_owned);
        t.description = description.to_owned();
        store.insert_tool(t).await.unwrap();
    }
    let names = |page: ToolPage| page.tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    let all = store
        .list_tools(&ToolQuery::owner("default"))
        .await
        .unwrap();
    assert_eq!(all.total, 4);
    assert_eq!(names(all), ["alpha", "beta", "delta_x", "gamma"]);
    let q = ToolQuery {
        status: Some(ToolStatus::Active),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(store.list_tools(&q).await.unwrap()),
        ["alpha", "delta_x"]
    );
    let q = ToolQuery {
        category: Some("Math".into()),
        created_by: Some(CreatedBy::Llm),
        ..ToolQuery::owner("default")
    };
    assert_eq!(names(store.list_tools(&q).await.unwrap()), ["beta"]);
    let q = ToolQuery {
        search: Some("weather".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(names(store.list_tools(&q).await.unwrap()), ["gamma"]);
    let q = ToolQuery {
        search: Some("%".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(store.list_tools(&q).await.unwrap()),
        ["beta"],
        "% is literal"
    );
    let q = ToolQuery {
        search: Some("_".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(store.list_tools(&q).await.unwrap()),
        ["delta_x"],
        "_ is literal"
    );
    let q = ToolQuery {
        search: Some("TEXT".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(store.list_tools(&q).await.unwrap()),
        ["delta_x"],
        "category is searched"
    );
    let q = ToolQuery {
        limit: 2,
        offset: 1,
        ..ToolQuery::owner("default")
    };
    let page = store.list_tools(&q).await.unwrap();
    assert_eq!(page.total, 4);
    assert_eq!(names(page), ["beta", "delta_x"]);
}

async fn update_is_compare_and_swap_on_the_revision(backend: &Backend) {
    let store = backend.store();
    let original = store.insert_tool(tool("default", "t")).await.unwrap();
    let mut next = original.clone();
    next.description = "changed".into();
    next.revision = 2;
    next.updated_at = at(10);
    store.update_tool(&next, 1).await.unwrap();
    assert_eq!(
        store.get_tool("default", &original.id).await.unwrap(),
        Some(next.clone())
    );
    let mut stale = next.clone();
    stale.revision = 3;
    let err = store.update_tool(&stale, 1).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::RevisionConflict {
                expected: 1,
                actual: 2
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("expected revision 1") && err.to_string().contains("revision 2")
    );
    let ghost = CustomToolRecord {
        id: "tool_00000000000000ff".into(),
        ..next
    };
    assert!(matches!(
        store.update_tool(&ghost, 2).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

async fn renaming_onto_a_taken_name_is_refused(backend: &Backend) {
    let store = backend.store();
    store.insert_tool(tool("default", "one")).await.unwrap();
    let two = store.insert_tool(tool("default", "two")).await.unwrap();
    let renamed = CustomToolRecord {
        name: "one".into(),
        revision: 2,
        ..two.clone()
    };
    let err = store.update_tool(&renamed, 1).await.unwrap_err();
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err}");
    assert_eq!(store.get_tool("default", &two.id).await.unwrap(), Some(two));
}

async fn versions_are_appended_when_the_version_moves(backend: &Backend) {
    let store = backend.store();
    let v1 = store.insert_tool(tool("default", "v")).await.unwrap();
    let v1_same = CustomToolRecord {
        description: "words only".into(),
        revision: 2,
        ..v1.clone()
    };
    store.update_tool(&v1_same, 1).await.unwrap();
    let v2 = CustomToolRecord {
        code: "return 2".into(),
        version: 2,
        revision: 3,
        updated_at: at(20),
        ..v1_same
    };
    store.update_tool(&v2, 2).await.unwrap();
    let versions = store.list_versions("default", &v1.id).await.unwrap();
    let summary: Vec<(i64, &str)> = versions
        .iter()
        .map(|v| (v.version, v.code.as_str()))
        .collect();
    assert_eq!(summary, [(2, "return 2"), (1, "return 1")]);
    assert_eq!(versions[0].created_at, at(20));
    let one = store
        .get_version("default", &v1.id, 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (one.description.as_str(), one.permissions.clone()),
        ("the v tool", v1.permissions.clone())
    );
    assert_eq!(store.get_version("default", &v1.id, 3).await.unwrap(), None);
}

/// Each version keeps the tool's metadata as it was then (its npm dependencies and their lock
/// among it), so history and rollback see them.
async fn versions_keep_the_metadata_they_were_made_with(backend: &Backend) {
    let store = backend.store();
    let first = json!({"dependencies": [{"name": "csv-parse", "version": "^5.5.0"}],
        "packageLock": {"root": {"csv-parse": "csv-parse@5.6.0"}}, "image": "node:lts-slim"});
    let v1 = store
        .insert_tool(CustomToolRecord {
            metadata: first.clone(),
            ..tool("default", "meta")
        })
        .await
        .unwrap();
    let second = json!({"dependencies": [{"name": "csv-parse", "version": "5.4.1"}],
        "packageLock": {"root": {"csv-parse": "csv-parse@5.4.1"}}});
    let v2 = CustomToolRecord {
        metadata: second.clone(),
        version: 2,
        revision: 2,
        ..v1.clone()
    };
    store.update_tool(&v2, 1).await.unwrap();
    let versions = store.list_versions("default", &v1.id).await.unwrap();
    let kept: Vec<(i64, &serde_json::Value)> =
        versions.iter().map(|v| (v.version, &v.metadata)).collect();
    assert_eq!(kept, [(2, &second), (1, &first)]);
    let one = store
        .get_version("default", &v1.id, 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(one.metadata, first);
}

async fn delete_removes_tool_and_history_but_keeps_executions(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("default", "gone")).await.unwrap();
    store
        .record_execution(&execution(&t, ExecutionStatus::Success, 1))
        .await
        .unwrap();
    let err = store.delete_tool("default", &t.id, 5).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::RevisionConflict {
                expected: 5,
                actual: 1
            }
        ),
        "{err}"
    );
    store.delete_tool("default", &t.id, 1).await.unwrap();
    assert_eq!(store.get_tool("default", &t.id).await.unwrap(), None);
    assert!(
        store
            .list_versions("default", &t.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .list_executions("default", Some(&t.id), None, None, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(matches!(
        store.delete_tool("default", &t.id, 1).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

async fn a_recreated_tool_starts_above_the_old_revisions(backend: &Backend) {
    let store = backend.store();
    let first = store.insert_tool(tool("default", "phoenix")).await.unwrap();
    let bumped = CustomToolRecord {
        revision: 7,
        ..first.clone()
    };
    store.update_tool(&bumped, 1).await.unwrap();
    store.delete_tool("default", &first.id, 7).await.unwrap();
    let second = store.insert_tool(tool("default", "phoenix")).await.unwrap();
    assert_eq!(second.revision, 8);
    let other_owner = store.insert_tool(tool("other", "phoenix")).await.unwrap();
    assert_eq!(other_owner.revision, 1);
}

async fn usage_does_not_touch_the_revision_and_survives_updates(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("default", "used")).await.unwrap();
    store.record_usage("default", &t.id, at(30)).await.unwrap();
    let updated = CustomToolRecord {
        description: "new".into(),
        revision: 2,
        ..t.clone()
    };
    store.update_tool(&updated, 1).await.unwrap();
    store.record_usage("default", &t.id, at(40)).await.unwrap();
    let now = store.get_tool("default", &t.id).await.unwrap().unwrap();
    assert_eq!(
        (now.usage_count, now.last_used_at, now.revision),
        (2, Some(at(40)), 2)
    );
    assert_eq!(now.description, "new");
}

async fn stats_count_by_status_creator_and_usage(backend: &Backend) {
    let store = backend.store();
    let statuses = [
        ToolStatus::Active,
        ToolStatus::Active,
        ToolStatus::Disabled,
        ToolStatus::PendingApproval,
        ToolStatus::Rejected,
    ];
    for (idx, status) in statuses.into_iter().enumerate() {
        let mut t = tool("default", &format!("t{idx}"));
        t.status = status;
        t.created_by = if idx == 0 {
            CreatedBy::User
        } else {
            CreatedBy::Llm
        };
        t.usage_count = idx as i64;
        store.insert_tool(t).await.unwrap();
    }
    let stats = store.tool_stats("default").await.unwrap();
    assert_eq!(
        stats,
        ToolStats {
            total: 5,
            active: 2,
            disabled: 1,
            pending_approval: 1,
            rejected: 1,
            created_by_llm: 4,
            created_by_user: 1,
            total_usage: 10
        }
    );
    let active: Vec<String> = store
        .active_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(active, ["t0", "t1"]);
}

async fn executions_are_listed_newest_first(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let b = store.insert_tool(tool("default", "b")).await.unwrap();
    store
        .record_execution(&execution(&a, ExecutionStatus::Success, 1))
        .await
        .unwrap();
    store
        .record_execution(&execution(&b, ExecutionStatus::Timeout, 2))
        .await
        .unwrap();
    store
        .record_execution(&execution(&a, ExecutionStatus::Error, 3))
        .await
        .unwrap();
    let all = store
        .list_executions("default", None, None, None, 10)
        .await
        .unwrap();
    let order: Vec<(&str, ExecutionStatus)> = all
        .iter()
        .map(|e| (e.tool_name.as_str(), e.status))
        .collect();
    assert_eq!(
        order,
        [
            ("a", ExecutionStatus::Error),
            ("b", ExecutionStatus::Timeout),
            ("a", ExecutionStatus::Success)
        ]
    );
    assert_eq!(all[1], execution(&b, ExecutionStatus::Timeout, 2));
    assert_eq!(
        store
            .list_executions("default", Some(&a.id), None, None, 1)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .list_executions("stranger", None, None, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn executions_are_filtered_by_the_agent_that_made_them(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let b = store.insert_tool(tool("default", "b")).await.unwrap();
    let by = |agent: Option<&str>, tool: &CustomToolRecord, minute: i64| ExecutionRecord {
        id: format!("exec_{}_{minute}", tool.name),
        agent_id: agent.map(str::to_owned),
        ..execution(tool, ExecutionStatus::Success, minute)
    };
    store
        .record_executions(&[
            by(Some("planner"), &a, 1),
            by(None, &a, 2),
            by(Some("writer"), &b, 3),
            by(Some("planner"), &b, 4),
        ])
        .await
        .unwrap();
    let names = |rows: Vec<ExecutionRecord>| -> Vec<(String, Option<String>)> {
        rows.into_iter()
            .map(|e| (e.tool_name, e.agent_id))
            .collect()
    };
    let planner = Some("planner".to_owned());
    assert_eq!(
        names(
            store
                .list_executions("default", None, Some("planner"), None, 10)
                .await
                .unwrap()
        ),
        [
            ("b".to_owned(), planner.clone()),
            ("a".to_owned(), planner.clone())
        ]
    );
    assert_eq!(
        names(
            store
                .list_executions("default", Some(&a.id), Some("planner"), None, 10)
                .await
                .unwrap()
        ),
        [("a".to_owned(), planner)]
    );
    assert!(
        store
            .list_executions("default", None, Some("nobody"), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Without the filter, every caller's, the agent kept as recorded.
    let all = store
        .list_executions("default", None, None, None, 10)
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[2].agent_id, None);
}

async fn executions_keep_what_the_run_asked_of_its_client(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let asked = toolsmith_core::record::ClientRequestCounts {
        logs: 7,
        progress: 3,
        samples: 2,
        elicitations: 1,
        refused: 4,
    };
    store
        .record_executions(&[
            ExecutionRecord {
                client_requests: asked,
                ..execution(&a, ExecutionStatus::Success, 2)
            },
            execution(&a, ExecutionStatus::Success, 1),
        ])
        .await
        .unwrap();
    let rows = store
        .list_executions("default", Some(&a.id), None, None, 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].client_requests, asked);
    assert!(rows[1].client_requests.is_empty());
}

async fn executions_keep_their_source_and_are_filtered_by_it(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    // A built-in's and a bridged tool's calls are recorded under their names, owned by the
    // caller; they never move a custom tool's counters, even one whose id they would match.
    let other = |source: ExecutionSource, name: &str, secs: i64| ExecutionRecord {
        id: format!("exec_{name}_{secs}"),
        tool_id: name.to_owned(),
        tool_name: name.to_owned(),
        tool_version: 0,
        source,
        ..execution(&a, ExecutionStatus::Success, secs)
    };
    store
        .record_executions(&[
            execution(&a, ExecutionStatus::Success, 1),
            other(ExecutionSource::Builtin, "calculate", 2),
            other(ExecutionSource::Mcp, "up__echo", 3),
            ExecutionRecord {
                tool_id: a.id.clone(),
                ..other(ExecutionSource::Builtin, "calculate", 4)
            },
        ])
        .await
        .unwrap();
    let sources = |rows: Vec<ExecutionRecord>| -> Vec<(String, ExecutionSource)> {
        rows.into_iter().map(|e| (e.tool_name, e.source)).collect()
    };
    let all = store
        .list_executions("default", None, None, None, 10)
        .await
        .unwrap();
    assert_eq!(
        sources(all),
        [
            ("calculate".to_owned(), ExecutionSource::Builtin),
            ("up__echo".to_owned(), ExecutionSource::Mcp),
            ("calculate".to_owned(), ExecutionSource::Builtin),
            ("a".to_owned(), ExecutionSource::Custom),
        ]
    );
    for (source, expected) in [
        (ExecutionSource::Custom, vec!["a"]),
        (ExecutionSource::Builtin, vec!["calculate", "calculate"]),
        (ExecutionSource::Mcp, vec!["up__echo"]),
    ] {
        let rows = store
            .list_executions("default", None, None, Some(source), 10)
            .await
            .unwrap();
        let names: Vec<String> = rows.into_iter().map(|e| e.tool_name).collect();
        assert_eq!(names, expected, "{source:?}");
    }
    let builtin = store
        .list_executions(
            "default",
            Some("calculate"),
            None,
            Some(ExecutionSource::Builtin),
            10,
        )
        .await
        .unwrap();
    assert_eq!(builtin.len(), 1);
    assert!(
        store
            .list_executions("stranger", None, None, Some(ExecutionSource::Builtin), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let counted = store.get_tool("default", &a.id).await.unwrap().unwrap();
    assert_eq!(
        counted.usage_count, 1,
        "only the custom tool's own call counts"
    );
}

async fn concurrent_writers_all_land(backend: &Backend) {
    let store = backend.store();
    let mut tasks = Vec::new();
    for task in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let t = store
                    .insert_tool(tool("default", &format!("t{task}_{i}")))
                    .await
                    .unwrap();
                store.record_usage("default", &t.id, at(i)).await.unwrap();
                store.get_tool("default", &t.id).await.unwrap().unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let stats = store.tool_stats("default").await.unwrap();
    assert_eq!((stats.total, stats.total_usage), (200, 200));
}

async fn usage_recorded_during_updates_is_never_lost(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("default", "busy")).await.unwrap();
    let mut usage = Vec::new();
    for i in 0..50 {
        let (store, id) = (store.clone(), t.id.clone());
        usage.push(tokio::spawn(async move {
            store
                .record_usage("default", &id, at(100 + i))
                .await
                .unwrap();
        }));
    }
    let mut current = t.clone();
    for rev in 1..=20 {
        current.description = format!("edit {rev}");
        current.revision = rev + 1;
        store.update_tool(&current, rev).await.unwrap();
    }
    for task in usage {
        task.await.unwrap();
    }
    let now = store.get_tool("default", &t.id).await.unwrap().unwrap();
    assert_eq!(
        (now.usage_count, now.last_used_at, now.revision),
        (50, Some(at(149)), 21)
    );
    assert_eq!(now.description, "edit 20");
    assert_eq!(store.tool_stats("default").await.unwrap().total_usage, 50);
}

async fn last_used_at_never_moves_backwards_and_unknown_tools_are_not_found(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("default", "u")).await.unwrap();
    store.record_usage("default", &t.id, at(50)).await.unwrap();
    store.record_usage("default", &t.id, at(40)).await.unwrap();
    let now = store.get_tool("default", &t.id).await.unwrap().unwrap();
    assert_eq!((now.usage_count, now.last_used_at), (2, Some(at(50))));
    let err = store
        .record_usage("stranger", &t.id, at(60))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
}

async fn search_folds_case_beyond_ascii(backend: &Backend) {
    let store = backend.store();
    let mut t = tool("default", "umlaut");
    t.description = "Prüft ÜBERWEISUNGEN".into();
    store.insert_tool(t).await.unwrap();
    store.insert_tool(tool("default", "plain")).await.unwrap();
    for needle in ["überweisungen", "PRÜFT", "Umlaut"] {
        let q = ToolQuery {
            search: Some(needle.into()),
            ..ToolQuery::owner("default")
        };
        let page = store.list_tools(&q).await.unwrap();
        let names: Vec<_> = page.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["umlaut"], "{needle}");
    }
    let q = ToolQuery {
        search: Some(String::new()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(store.list_tools(&q).await.unwrap().total, 2);
}

async fn pages_past_the_end_are_empty_but_counted(backend: &Backend) {
    let store = backend.store();
    for i in 0..5 {
        store
            .insert_tool(tool("default", &format!("p{i}")))
            .await
            .unwrap();
    }
    for (limit, offset, expected) in [
        (10, 10, vec![]),
        (0, 0, vec![]),
        (2, 4, vec!["p4"]),
        (3, 0, vec!["p0", "p1", "p2"]),
    ] {
        let q = ToolQuery {
            limit,
            offset,
            ..ToolQuery::owner("default")
        };
        let page = store.list_tools(&q).await.unwrap();
        let names: Vec<_> = page.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!((page.total, names), (5, expected), "{limit}/{offset}");
    }
}

async fn a_renamed_tool_retires_its_old_name(backend: &Backend) {
    let store = backend.store();
    let first = store.insert_tool(tool("default", "old")).await.unwrap();
    let renamed = CustomToolRecord {
        name: "new".into(),
        revision: 2,
        ..first.clone()
    };
    store.update_tool(&renamed, 1).await.unwrap();
    assert_eq!(
        store.get_tool_by_name("default", "new").await.unwrap(),
        Some(renamed)
    );
    let again = store.insert_tool(tool("default", "old")).await.unwrap();
    assert_eq!(again.revision, 3);
}

async fn versions_never_go_backwards_and_ids_are_unique(backend: &Backend) {
    let store = backend.store();
    let mut t = tool("default", "v");
    t.version = 3;
    let t = store.insert_tool(t).await.unwrap();
    assert_eq!(
        store
            .list_versions("default", &t.id)
            .await
            .unwrap()
            .iter()
            .map(|v| v.version)
            .collect::<Vec<_>>(),
        [3]
    );
    let back = CustomToolRecord {
        version: 2,
        revision: 2,
        ..t.clone()
    };
    let err = store.update_tool(&back, 1).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Backend(_)) && err.to_string().contains("version 2"),
        "{err}"
    );
    assert_eq!(
        store.get_tool("default", &t.id).await.unwrap(),
        Some(t.clone())
    );
    let twin = CustomToolRecord {
        name: "twin".into(),
        ..t.clone()
    };
    let err = store.insert_tool(twin).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Backend(_)) && err.to_string().contains(&t.id),
        "{err}"
    );
}

async fn timestamps_are_kept_to_the_microsecond(backend: &Backend) {
    let store = backend.store();
    let mut t = tool("default", "precise");
    t.created_at = Utc.timestamp_opt(1_700_000_000, 123_456_789).unwrap();
    t.updated_at = t.created_at;
    let stored = store.insert_tool(t).await.unwrap();
    let micros = Utc.timestamp_opt(1_700_000_000, 123_456_000).unwrap();
    assert_eq!((stored.created_at, stored.updated_at), (micros, micros));
    assert_eq!(
        store.get_tool("default", &stored.id).await.unwrap(),
        Some(stored)
    );
}

async fn an_unmeasured_duration_is_stored_as_zero(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("default", "d")).await.unwrap();
    let mut e = execution(&t, ExecutionStatus::Success, 1);
    e.duration_ms = f64::NAN;
    store.record_execution(&e).await.unwrap();
    let listed = store
        .list_executions("default", None, None, None, 10)
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].duration_ms, 0.0);
}

async fn search_combines_with_filters_and_pages(backend: &Backend) {
    let store = backend.store();
    for i in 0..12 {
        let mut t = tool("default", &format!("report_{i:02}"));
        t.status = if i % 3 == 0 {
            ToolStatus::Disabled
        } else {
            ToolStatus::Active
        };
        store.insert_tool(t).await.unwrap();
    }
    store
        .insert_tool(tool("default", "unrelated"))
        .await
        .unwrap();
    store.insert_tool(tool("other", "report_99")).await.unwrap();
    let q = ToolQuery {
        search: Some("RePoRt".into()),
        status: Some(ToolStatus::Active),
        limit: 3,
        offset: 2,
        ..ToolQuery::owner("default")
    };
    let page = store.list_tools(&q).await.unwrap();
    let names: Vec<_> = page.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(page.total, 8);
    assert_eq!(names, ["report_04", "report_05", "report_07"]);
    let q = ToolQuery { offset: 8, ..q };
    let page = store.list_tools(&q).await.unwrap();
    assert_eq!((page.total, page.tools.len()), (8, 0));
}

async fn a_batch_of_executions_is_one_commit_counting_usage_per_tool(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let b = store.insert_tool(tool("default", "b")).await.unwrap();
    let gone = store.insert_tool(tool("default", "gone")).await.unwrap();
    store
        .delete_tool("default", &gone.id, gone.revision)
        .await
        .unwrap();
    // Out of order on purpose: last_used_at is the latest of the batch, not the last one.
    let batch = [
        execution(&a, ExecutionStatus::Success, 5),
        execution(&b, ExecutionStatus::Error, 6),
        execution(&a, ExecutionStatus::Timeout, 9),
        execution(&gone, ExecutionStatus::Success, 10),
        execution(&a, ExecutionStatus::Success, 7),
    ];
    store.record_executions(&batch).await.unwrap();
    store.record_executions(&[]).await.unwrap();

    let a_after = store.get_tool("default", &a.id).await.unwrap().unwrap();
    assert_eq!(a_after.usage_count, 3);
    assert_eq!(a_after.last_used_at, Some(at(9)));
    assert_eq!(a_after.revision, a.revision, "usage is not a change");
    let b_after = store.get_tool("default", &b.id).await.unwrap().unwrap();
    assert_eq!(
        (b_after.usage_count, b_after.last_used_at),
        (1, Some(at(6)))
    );
    // Every execution row is kept, the deleted tool's included.
    let all = store
        .list_executions("default", None, None, None, 10)
        .await
        .unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all[0], execution(&gone, ExecutionStatus::Success, 10));

    // An older batch never moves last_used_at backwards.
    store
        .record_executions(&[execution(&a, ExecutionStatus::Success, 1)])
        .await
        .unwrap();
    let a_later = store.get_tool("default", &a.id).await.unwrap().unwrap();
    assert_eq!(
        (a_later.usage_count, a_later.last_used_at),
        (4, Some(at(9)))
    );
}

async fn a_failing_batch_commits_nothing(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    // Two rows with one id: the second insert fails, so the first must not stay.
    let batch = [
        execution(&a, ExecutionStatus::Success, 1),
        execution(&a, ExecutionStatus::Success, 1),
    ];
    assert!(store.record_executions(&batch).await.is_err());
    let after = store.get_tool("default", &a.id).await.unwrap().unwrap();
    assert_eq!(after.usage_count, 0);
    assert!(
        store
            .list_executions("default", None, None, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn refused_executions_are_recorded_but_not_counted_as_uses(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let batch = [
        execution(&a, ExecutionStatus::Success, 1),
        execution(&a, ExecutionStatus::RateLimited, 2),
        execution(&a, ExecutionStatus::Denied, 3),
    ];
    store.record_executions(&batch).await.unwrap();
    let after = store.get_tool("default", &a.id).await.unwrap().unwrap();
    assert_eq!((after.usage_count, after.last_used_at), (1, Some(at(1))));
    assert_eq!(
        store
            .list_executions("default", None, None, None, 10)
            .await
            .unwrap()
            .len(),
        3
    );
}

async fn execution_samples_cover_a_window_per_owner_and_tool_and_pruning_keeps_usage(
    backend: &Backend,
) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let b = store.insert_tool(tool("default", "b")).await.unwrap();
    let other = store.insert_tool(tool("other", "a")).await.unwrap();
    let batch = [
        execution(&a, ExecutionStatus::Success, 10),
        execution(&a, ExecutionStatus::Timeout, 20),
        execution(&b, ExecutionStatus::Error, 30),
        execution(&a, ExecutionStatus::RateLimited, 40),
        ExecutionRecord {
            id: "exec_other".to_owned(),
            ..execution(&other, ExecutionStatus::Success, 35)
        },
    ];
    store.record_executions(&batch).await.unwrap();

    let since_15 = store
        .execution_samples("default", None, at(15), 100)
        .await
        .unwrap();
    let seen: Vec<(&str, ExecutionStatus)> = since_15
        .iter()
        .map(|s| (s.tool_name.as_str(), s.status))
        .collect();
    assert_eq!(
        seen,
        [
            ("a", ExecutionStatus::RateLimited),
            ("b", ExecutionStatus::Error),
            ("a", ExecutionStatus::Timeout)
        ]
    );
    assert_eq!(since_15[2].error_kind.as_deref(), Some("timeout"));
    assert_eq!(since_15[2].created_at, at(20));
    let only_a = store
        .execution_samples("default", Some(&a.id), at(0), 100)
        .await
        .unwrap();
    assert_eq!(only_a.len(), 3);
    assert!(only_a.iter().all(|s| s.tool_id == a.id));
    let capped = store
        .execution_samples("default", None, at(0), 2)
        .await
        .unwrap();
    assert_eq!(capped.len(), 2);
    assert_eq!(capped[0].created_at, at(40), "the newest are kept");

    assert_eq!(store.prune_executions(at(25)).await.unwrap(), 2);
    let left = store
        .execution_samples("default", None, at(0), 100)
        .await
        .unwrap();
    assert_eq!(left.len(), 2);
    let a_now = store.get_tool("default", &a.id).await.unwrap().unwrap();
    assert_eq!(
        a_now.usage_count, 2,
        "pruning history keeps the usage counters"
    );
    assert_eq!(
        store
            .execution_samples("other", None, at(0), 100)
            .await
            .unwrap()
            .len(),
        1
    );
}

async fn server_samples_cover_every_owner_with_its_agent_newest_first(backend: &Backend) {
    let store = backend.store();
    let a = store.insert_tool(tool("default", "a")).await.unwrap();
    let other = store.insert_tool(tool("other", "b")).await.unwrap();
    let batch = [
        execution(&a, ExecutionStatus::Success, 10),
        ExecutionRecord {
            agent_id: Some("planner".to_owned()),
            ..execution(&a, ExecutionStatus::Error, 20)
        },
        ExecutionRecord {
            id: "exec_other".to_owned(),
            agent_id: Some("helper".to_owned()),
            ..execution(&other, ExecutionStatus::Success, 30)
        },
    ];
    store.record_executions(&batch).await.unwrap();
    let all = store.server_execution_samples(at(0), 100).await.unwrap();
    let seen: Vec<(&str, &str, Option<&str>, ExecutionStatus)> = all
        .iter()
        .map(|s| {
            (
                s.owner.as_str(),
                s.sample.tool_name.as_str(),
                s.agent_id.as_deref(),
                s.sample.status,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("other", "b", Some("helper"), ExecutionStatus::Success),
            ("default", "a", Some("planner"), ExecutionStatus::Error),
            ("default", "a", None, ExecutionStatus::Success),
        ]
    );
    assert_eq!(all[0].sample.created_at, at(30));
    assert_eq!(all[1].sample.tool_id, a.id);
    assert!((all[1].sample.duration_ms - 1.5).abs() < 1e-9);
    let since_15 = store.server_execution_samples(at(15), 100).await.unwrap();
    assert_eq!(since_15.len(), 2, "the window");
    let capped = store.server_execution_samples(at(0), 1).await.unwrap();
    assert_eq!(capped.len(), 1);
    assert_eq!(capped[0].owner, "other", "the newest are kept");
}

on_both_backends!(
    every_field_round_trips,
    names_are_unique_per_owner,
    owners_never_see_each_other,
    list_filters_search_and_pages,
    update_is_compare_and_swap_on_the_revision,
    renaming_onto_a_taken_name_is_refused,
    versions_are_appended_when_the_version_moves,
    versions_keep_the_metadata_they_were_made_with,
    delete_removes_tool_and_history_but_keeps_executions,
    a_recreated_tool_starts_above_the_old_revisions,
    usage_does_not_touch_the_revision_and_survives_updates,
    stats_count_by_status_creator_and_usage,
    executions_are_listed_newest_first,
    executions_are_filtered_by_the_agent_that_made_them,
    executions_keep_what_the_run_asked_of_its_client,
    executions_keep_their_source_and_are_filtered_by_it,
    concurrent_writers_all_land,
    usage_recorded_during_updates_is_never_lost,
    last_used_at_never_moves_backwards_and_unknown_tools_are_not_found,
    search_folds_case_beyond_ascii,
    pages_past_the_end_are_empty_but_counted,
    a_renamed_tool_retires_its_old_name,
    versions_never_go_backwards_and_ids_are_unique,
    timestamps_are_kept_to_the_microsecond,
    an_unmeasured_duration_is_stored_as_zero,
    search_combines_with_filters_and_pages,
    a_batch_of_executions_is_one_commit_counting_usage_per_tool,
    a_failing_batch_commits_nothing,
    refused_executions_are_recorded_but_not_counted_as_uses,
    execution_samples_cover_a_window_per_owner_and_tool_and_pruning_keeps_usage,
    server_samples_cover_every_owner_with_its_agent_newest_first,
);
