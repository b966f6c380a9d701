//! `db copy` at the store level: SQLite → PostgreSQL → SQLite with rows in every table comes
//! back row for row, a sealed secret still opens with the same key, a non-empty destination is
//! refused unless replacing, one database is never copied onto itself, and a table this build
//! does not know stops the copy. The fresh schemas of both backends hold exactly the tables the
//! copy knows, so a migration that adds a table fails here until the copy covers it.

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use serde_json::json;
use toolsmith_core::{ConfigServiceRecord, ExecutionRecord, ExecutionStatus, ToolStatus};
use toolsmith_secrets::{Cipher, SecretKey};
use toolsmith_store::copy::{
    CopyError, Piece, RawTables, Row, TABLES, check_catalog, copy_database,
};
use toolsmith_store::testkit::{PgCluster, pg_or_skip};
use toolsmith_store::{
    AgentStore, ApiTokenRecord, ApprovalDecision, ApprovalRecord, ApprovalStatus, AuditRecord,
    ConfigStore, GovernanceStore, McpStore, PgOptions, PgStore, RecordStore, SqliteStore, Store,
    TaskStore, ToolStore,
};

use crate::config_secrets::{SECRET, open_secret, sealed_entry};
use crate::tokens::tool;

/// Every row of every copied table, each table's rows in a stable order.
async fn dump(store: &dyn RawTables) -> BTreeMap<&'static str, Vec<Row>> {
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    let collect = async {
        let mut all: BTreeMap<&'static str, Vec<Row>> = BTreeMap::new();
        while let Some(piece) = rx.recv().await {
            if let Piece::Rows(table, rows) = piece {
                all.entry(table.name).or_default().extend(rows);
            }
        }
        all
    };
    let (sent, mut all) = tokio::join!(store.export(TABLES, tx), collect);
    sent.unwrap();
    // JSON maps compare equal whatever their key order; the order rows come in depends on
    // the backend's collation, so sort by the columns that are not JSON.
    for rows in all.values_mut() {
        rows.sort_by_cached_key(|row| {
            row.iter()
                .filter(|v| !matches!(v, toolsmith_store::copy::Value::Json(_)))
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
        });
    }
    all
}

/// A store with rows in every table `db copy` knows; the sealed secret's entry is returned.
async fn fill(store: &SqliteStore, cipher: &Cipher) -> (ConfigServiceRecord, String) {
    let at = Utc.timestamp_opt(1_700_000_000, 123_456_000).unwrap();
    // custom_tools and tool_versions: a tool at version 2.
    let mut kept = tool("kept");
    kept.category = Some("Utilities".to_owned());
    kept.tags = vec!["a".to_owned()];
    kept.requires_approval = true;
    kept.metadata = json!({"z": 1, "a": [1, 2], "nested": {"y": null, "b": "ü"}});
    let kept = store.insert_tool(kept).await.unwrap();
    let mut v2 = kept.clone();
    v2.version = 2;
    v2.revision = 2;
    v2.code = "return 2".to_owned();
    v2.status = ToolStatus::Disabled;
    store.update_tool(&v2, 1).await.unwrap();
    // tool_name_retired: a deleted tool.
    let gone = store.insert_tool(tool("gone")).await.unwrap();
    store.delete_tool("default", &gone.id, 1).await.unwrap();
    // tool_executions (with an agent, and without), usage counters on the tool.
    let runs: Vec<ExecutionRecord> = (0..3)
        .map(|i| ExecutionRecord {
            id: format!("exec_{i:016x}"),
            tool_id: kept.id.clone(),
            tool_name: kept.name.clone(),
            tool_version: 2,
            owner: "default".to_owned(),
            conversation_id: (i == 0).then(|| "conv".to_owned()),
            agent_id: (i == 1).then(|| "support".to_owned()),
            status: if i == 2 {
                ExecutionStatus::Timeout
            } else {
                ExecutionStatus::Success
            },
            error_kind: (i == 2).then(|| "timeout".to_owned()),
            error: (i == 2).then(|| "took too long".to_owned()),
            duration_ms: 1.25 + f64::from(i),
            created_at: at + Duration::seconds(i64::from(i)),
            client_requests: if i == 1 {
                toolsmith_core::record::ClientRequestCounts {
                    logs: 3,
                    progress: 2,
                    samples: 1,
                    elicitations: 1,
                    refused: 1,
                }
            } else {
                Default::default()
            },
            source: Default::default(),
        })
        .collect();
    store.record_executions(&runs).await.unwrap();
    // api_tokens.
    store
        .insert_token(&ApiTokenRecord {
            id: "tok_000000000001".to_owned(),
            user_id: "alice".to_owned(),
            name: "laptop".to_owned(),
            scopes: vec!["tools:read".to_owned()],
            token_hash: "ab".repeat(32),
            created_at: at,
            last_used_at: Some(at),
            agent_id: Some("support".to_owned()),
        })
        .await
        .unwrap();
    // config_services and config_entries, with a sealed secret.
    let mut service = ConfigServiceRecord::new("alice", "smtp", at);
    service.multi_entry = true;
    let service = store.create_config_service(service).await.unwrap();
    let entry = store
        .create_config_entry("alice", sealed_entry(cipher, &service, "work", SECRET))
        .await
        .unwrap();
    // execution_approvals and approval_grants.
    for (id, hash) in [("apr_1", "h1"), ("apr_2", "h2")] {
        store
            .insert_approval(&ApprovalRecord {
                id: id.to_owned(),
                owner: "alice".to_owned(),
                tool_name: "send_mail".to_owned(),
                tool_key: kept.id.clone(),
                caller: "agent-1".to_owned(),
                args_hash: hash.to_owned(),
                args_preview: "{\"to\":\"bob\"}".to_owned(),
                status: ApprovalStatus::Pending,
                decision: None,
                decided_by: None,
                created_at: Utc::now(),
                expires_at: Utc::now() + Duration::hours(1),
                decided_at: None,
            })
            .await
            .unwrap();
    }
    store
        .decide_approval("apr_2", ApprovalDecision::AllowAlways, "bob", Utc::now())
        .await
        .unwrap()
        .unwrap();
    // audit_log.
    for action in ["tool.create", "tool.update"] {
        store
            .insert_audit(&AuditRecord {
                id: 0,
                at,
                actor: "alice".to_owned(),
                actor_kind: "user".to_owned(),
                action: action.to_owned(),
                target_type: "tool".to_owned(),
                target_id: kept.id.clone(),
                target_name: Some("kept".to_owned()),
                before_revision: None,
                after_revision: Some(1),
                request_id: Some("req_1".to_owned()),
                details: json!({"fields": ["code"]}),
            })
            .await
            .unwrap();
    }
    // policies.
    store
        .put_policy(&json!({"profile": "full"}), None, "alice", at)
        .await
        .unwrap()
        .unwrap();
    // data_records (SQLite's full-text index of them is derived, not copied).
    store
        .put_record(
            toolsmith_store::DataRecord {
                collection: "memory".to_owned(),
                id: "mem_1".to_owned(),
                owner: "alice".to_owned(),
                agent: "agent-1".to_owned(),
                document: json!({"content": "Alice prefers green tea", "importance": 0.7}),
                search_text: "Alice prefers green tea".to_owned(),
                dedup_key: Some("fact:alice prefers green tea".to_owned()),
                kind: Some("preference".to_owned()),
                category: None,
                weight: 0.7,
                at: Some(at),
                tags: vec!["drinks".to_owned()],
                created_at: at,
                updated_at: at,
            },
            10,
        )
        .await
        .unwrap();
    // The MCP bridge: a registered server, a grant, and a request decided into a grant.
    let server = toolsmith_store::McpServerRecord {
        name: "files".to_owned(),
        owner: "alice".to_owned(),
        config: json!({"name": "files", "command": "/usr/bin/python3", "args": ["s.py"]}),
        revision: 1,
        created_at: at,
        updated_at: at,
        updated_by: "alice".to_owned(),
    };
    assert!(store.create_mcp_server(&server).await.unwrap());
    let grant = toolsmith_store::McpGrantRecord {
        id: "grant_1".to_owned(),
        server: "files".to_owned(),
        subject_kind: toolsmith_store::GrantSubject::Agent,
        subject: "agent-1".to_owned(),
        enabled: true,
        tool_allow: vec!["echo".to_owned()],
        tool_deny: vec!["wipe".to_owned()],
        created_at: at,
        updated_at: at,
        updated_by: "alice".to_owned(),
    };
    store.put_mcp_grant(&grant).await.unwrap();
    store
        .create_access_request(&toolsmith_store::AccessRequestRecord {
            id: "req_1".to_owned(),
            server: "files".to_owned(),
            subject_kind: toolsmith_store::GrantSubject::User,
            subject: "bob".to_owned(),
            tools: vec!["echo".to_owned()],
            reason: "reading".to_owned(),
            status: toolsmith_store::AccessRequestStatus::Pending,
            requested_by: "bob".to_owned(),
            created_at: at,
            decided_by: None,
            decided_at: None,
            grant_id: None,
        })
        .await
        .unwrap();
    let template = toolsmith_store::McpGrantRecord {
        id: "grant_2".to_owned(),
        enabled: false,
        tool_allow: vec![],
        tool_deny: vec![],
        ..grant
    };
    store
        .decide_access_request("req_1", true, "alice", at, &template)
        .await
        .unwrap()
        .unwrap();
    // A finished tool task, its result holding a NUL (which PostgreSQL's JSONB would refuse).
    assert!(
        store
            .insert_tool_task(
                &toolsmith_store::ToolTaskRecord {
                    id: "task_1".to_owned(),
                    owner: "alice".to_owned(),
                    agent: Some("agent-1".to_owned()),
                    tool: "echo".to_owned(),
                    status: toolsmith_store::ToolTaskStatus::Completed,
                    status_message: None,
                    created_at: at,
                    updated_at: at,
                    ttl_ms: 3_600_000,
                    expires_at: at + Duration::hours(1),
                    result: Some(json!({"content": "a\u{0}b", "isError": false})),
                    instance: "instance-1".to_owned(),
                },
                10,
            )
            .await
            .unwrap()
    );
    // An agent (with its first version), one run of it that ended, and a step holding a NUL.
    let definition: toolsmith_core::agent::AgentDefinition = serde_json::from_value(json!({
        "displayName": "Researcher",
        "instructions": "Find things out.",
        "model": {"service": "local", "model": "qwen"},
        "toolPolicy": {"allow": ["group:core"]},
        "contextFiles": [{"name": "style.md", "text": "Be brief."}],
    }))
    .unwrap();
    assert!(
        store
            .insert_agent(&toolsmith_store::AgentRecord {
                id: "agent_1".to_owned(),
                owner: "alice".to_owned(),
                name: "researcher".to_owned(),
                revision: 1,
                definition,
                created_at: at,
                updated_at: at,
            })
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_agent_run(
                &toolsmith_store::AgentRunRecord {
                    id: "run_1".to_owned(),
                    owner: "alice".to_owned(),
                    caller_agent: None,
                    agent_id: "agent_1".to_owned(),
                    agent_revision: 1,
                    status: toolsmith_store::AgentRunStatus::Completed,
                    input: "what time is it?".to_owned(),
                    output: Some("noon".to_owned()),
                    error: None,
                    usage: toolsmith_core::agent::RunUsage {
                        input_tokens: 12,
                        output_tokens: 3,
                        model_calls: 1,
                        tool_calls: 0,
                        cost: Some(0.000_042),
                    },
                    iterations: 1,
                    created_at: at,
                    updated_at: at,
                    instance: "instance-1".to_owned(),
                    lease_until: Some(at),
                },
                4,
            )
            .await
            .unwrap()
    );
    store
        .add_agent_run_step(&toolsmith_store::AgentRunStep {
            run_id: "run_1".to_owned(),
            seq: 0,
            kind: "tool_result".to_owned(),
            detail: json!({"content": "a\u{0}b"}),
            at,
        })
        .await
        .unwrap();
    // A session with one message (the content a JSON string: a NUL survives the copy).
    toolsmith_store::SessionStore::insert_session(
        store,
        &toolsmith_store::SessionRecord {
            id: "ses_1".to_owned(),
            owner: "alice".to_owned(),
            caller_agent: None,
            agent_id: "agt_1".to_owned(),
            kind: toolsmith_store::SessionKind::Session,
            label: "chat".to_owned(),
            parent: None,
            depth: 0,
            status: toolsmith_store::SessionStatus::Idle,
            task: None,
            result: Some("done".to_owned()),
            error: None,
            last_run: Some("run_1".to_owned()),
            message_count: 0,
            message_bytes: 0,
            trimmed: 0,
            created_at: at,
            updated_at: at,
        },
    )
    .await
    .unwrap();
    let message = toolsmith_store::SessionMessage {
        session_id: "ses_1".to_owned(),
        seq: 0,
        role: "user".to_owned(),
        content: "a\u{0}b".to_owned(),
        run_id: Some("run_1".to_owned()),
        at,
    };
    toolsmith_store::SessionStore::append_session_messages(store, "ses_1", &[message], 10, 1000)
        .await
        .unwrap();
    // An agent link, a delegation over it and a handoff route (issue 38).
    let link: toolsmith_store::AgentLinkRecord = serde_json::from_value(json!({
        "id": "lnk_1", "owner": "alice", "sourceAgent": "agent_1", "targetAgent": "agt_1",
        "direction": "bidirectional", "maxConcurrent": 2, "description": "é",
        "createdAt": at,
    }))
    .unwrap();
    assert!(
        toolsmith_store::DelegationStore::insert_agent_link(store, &link)
            .await
            .unwrap()
    );
    let delegation: toolsmith_store::DelegationRecord = serde_json::from_value(json!({
        "id": "dlg_1", "owner": "alice", "sourceAgent": "agent_1", "targetAgent": "agt_1",
        "linkId": "lnk_1", "mode": "sync", "depth": 1, "runId": "run_1", "status": "completed",
        "task": "a\u{0}b", "result": "noon", "createdAt": at, "updatedAt": at,
    }))
    .unwrap();
    assert_eq!(
        toolsmith_store::DelegationStore::insert_delegation_within(store, &delegation, 2, 2)
            .await
            .unwrap(),
        toolsmith_store::DelegationAdmission::Started
    );
    let route: toolsmith_store::HandoffRoute = serde_json::from_value(json!({
        "sessionId": "ses_1", "owner": "alice", "fromAgent": "agt_1", "toAgent": "agent_1",
        "targetSession": "ses_2", "reason": "billing", "createdAt": at,
    }))
    .unwrap();
    toolsmith_store::DelegationStore::put_handoff_route(store, &route)
        .await
        .unwrap();
    // A prompt, at its first version (issue 40).
    let prompt: toolsmith_store::PromptRecord = serde_json::from_value(json!({
        "id": "prm_1", "owner": "alice", "agent": "bot", "name": "review", "revision": 1,
        "enabled": false, "createdBy": "llm",
        "definition": {"description": "Reviews", "arguments": [{"name": "x", "values": ["é"]}],
            "messages": [{"role": "user", "content": {"type": "text", "text": "{{ x }}"}}]},
        "createdAt": at, "updatedAt": at,
    }))
    .unwrap();
    assert!(
        toolsmith_store::PromptStore::insert_prompt(store, &prompt)
            .await
            .unwrap()
    );
    // A vector collection with one item (issue 39): the embedding crosses as f32s.
    let vectors: toolsmith_store::VectorCollectionRecord = serde_json::from_value(json!({
        "id": "vc-1", "owner": "alice", "name": "docs", "dimensions": 3, "description": "é",
        "count": 0, "createdAt": at, "updatedAt": at,
    }))
    .unwrap();
    assert!(
        toolsmith_store::VectorStore::create_vector_collection(store, &vectors, 10)
            .await
            .unwrap()
    );
    let item = toolsmith_store::VectorItem {
        id: "a".to_owned(),
        embedding: vec![0.25, -1.5, 3.0e-7],
        content: "a text".to_owned(),
        metadata: json!({"k": "v"}),
    };
    assert_eq!(
        toolsmith_store::VectorStore::upsert_vectors(store, "alice", "docs", &[item], 10)
            .await
            .unwrap(),
        Some(1)
    );
    // An organisation and its first owner (issue 41).
    let org: toolsmith_store::OrganizationRecord = serde_json::from_value(json!({
        "id": "org_00000000000000a1", "name": "acme", "displayName": "Acme é",
        "createdAt": at, "createdBy": "alice",
    }))
    .unwrap();
    let owner = toolsmith_store::OrgMemberRecord {
        org_id: org.id.clone(),
        user_id: "alice".to_owned(),
        role: toolsmith_store::OrgRole::Owner,
        added_at: org.created_at,
    };
    assert!(
        toolsmith_store::OrgStore::insert_organization(store, &org, &owner)
            .await
            .unwrap()
    );
    for table in TABLES {
        assert!(
            store.count_rows(table).await.unwrap() > 0,
            "the fixture leaves table {} empty: give it a row, so the copy of it is tested",
            table.name
        );
    }
    (service, entry.id)
}

async fn pg_store(cluster: &PgCluster) -> PgStore {
    let url = cluster.create_database().unwrap();
    PgStore::connect(&url, &PgOptions::default()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_to_postgres_and_back_keeps_every_row_and_secrets_stay_sealed() {
    let Some(cluster) = pg_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = SecretKey::generate().unwrap();
    let cipher = Cipher::new(&key);
    let source = SqliteStore::open(&dir.path().join("source.db"))
        .await
        .unwrap();
    let (service, entry_id) = fill(&source, &cipher).await;
    let pg = pg_store(&cluster).await;

    let counts = copy_database(&source, &pg, false).await.unwrap();
    assert_eq!(counts.len(), TABLES.len());
    assert!(
        counts
            .iter()
            .all(|c| c.source_rows > 0 && c.source_rows == c.destination_rows)
    );
    // The same database reached another way (its unix socket) is still the same database.
    let db = pg.shown().rsplit('/').next().unwrap().to_owned();
    let by_socket = format!(
        "postgres://postgres@/{db}?host={}&port={}",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let alias = PgStore::connect(&by_socket, &PgOptions::default())
        .await
        .unwrap();
    let err = copy_database(&pg, &alias, true).await.unwrap_err();
    assert!(matches!(err, CopyError::SameDatabase { .. }), "{err}");
    let back = SqliteStore::open(&dir.path().join("back.db"))
        .await
        .unwrap();
    copy_database(&pg, &back, false).await.unwrap();

    let original = dump(&source).await;
    assert_eq!(original.len(), TABLES.len());
    assert_eq!(dump(&pg).await, original);
    assert_eq!(dump(&back).await, original);

    // The secret was never opened on the way, and opens on both copies with the same key.
    for store in [&pg as &dyn Store, &back] {
        let entry = store
            .get_config_entry("alice", &entry_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(open_secret(&cipher, &service, &entry).unwrap(), SECRET);
        let other = Cipher::new(&SecretKey::generate().unwrap());
        assert!(open_secret(&other, &service, &entry).is_err());
    }
    // The copies work as stores: the audit log goes on after the copied ids, the grant holds.
    let query = toolsmith_store::AuditQuery {
        limit: 100,
        ..Default::default()
    };
    let before = source.list_audit(&query).await.unwrap();
    let last = before.iter().map(|a| a.id).max().unwrap();
    let mut next = before[0].clone();
    next.id = 0;
    assert!(pg.insert_audit(&next).await.unwrap() > last);
    assert!(back.insert_audit(&next).await.unwrap() > last);
    let tool_key = before[0].target_id.clone();
    assert!(
        pg.has_approval_grant("alice", &tool_key, "agent-1")
            .await
            .unwrap()
    );
    // Copied records are searchable on both copies (SQLite's index rebuilt by its triggers).
    let search = toolsmith_store::RecordQuery {
        owner: "alice".to_owned(),
        agent: "agent-1".to_owned(),
        collection: "memory".to_owned(),
        text: Some("which tea".to_owned()),
        limit: 5,
        ..Default::default()
    };
    for store in [&pg as &dyn Store, &back] {
        let hits = store.query_records(&search).await.unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].record.id, "mem_1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_with_data_is_refused_unless_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let cipher = Cipher::new(&SecretKey::generate().unwrap());
    let source = SqliteStore::open(&dir.path().join("a.db")).await.unwrap();
    fill(&source, &cipher).await;
    let target = SqliteStore::open(&dir.path().join("b.db")).await.unwrap();
    target.insert_tool(tool("already_here")).await.unwrap();

    let err = copy_database(&source, &target, false).await.unwrap_err();
    assert!(matches!(err, CopyError::NotEmpty { .. }), "{err}");
    assert!(err.to_string().contains("custom_tools: 1 rows"), "{err}");
    assert!(
        target
            .get_tool_by_name("default", "already_here")
            .await
            .unwrap()
            .is_some()
    );

    copy_database(&source, &target, true).await.unwrap();
    assert_eq!(dump(&target).await, dump(&source).await);
    assert!(
        target
            .get_tool_by_name("default", "already_here")
            .await
            .unwrap()
            .is_none()
    );

    // The same file under two handles (and another spelling of its path) is one database.
    let again = SqliteStore::open(&dir.path().join(".").join("a.db"))
        .await
        .unwrap();
    let err = copy_database(&source, &again, true).await.unwrap_err();
    assert!(matches!(err, CopyError::SameDatabase { .. }), "{err}");
    assert_eq!(dump(&source).await, dump(&target).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_the_copy_does_not_know_stops_it_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let source = SqliteStore::open(&path).await.unwrap();
    source.insert_tool(tool("t")).await.unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE shiny_new_table (id TEXT PRIMARY KEY)")
        .unwrap();
    let target = SqliteStore::open(&dir.path().join("b.db")).await.unwrap();
    let err = copy_database(&source, &target, false).await.unwrap_err();
    assert!(
        matches!(&err, CopyError::UnknownTable { table, .. } if table == "shiny_new_table"),
        "{err}"
    );
    assert_eq!(target.count_tools("default").await.unwrap(), 0);
}

/// The guard against a table left behind: a fresh database of each backend holds exactly the
/// tables (and columns) the copy lists, copied or named as not copied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_schemas_of_both_backends_are_covered_by_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStore::open(&dir.path().join("a.db")).await.unwrap();
    check_catalog("sqlite", &sqlite.catalog().await.unwrap()).unwrap();
    let Some(cluster) = pg_or_skip() else { return };
    let pg = pg_store(&cluster).await;
    let catalog = pg.catalog().await.unwrap();
    if let Err(e) = check_catalog("postgres", &catalog) {
        panic!(
            "{e}: add the table to toolsmith_store::copy::TABLES (or, for transient state, to \
             NOT_COPIED with the reason)"
        );
    }
}
