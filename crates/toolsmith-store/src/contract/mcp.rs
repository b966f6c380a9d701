//! The MCP bridge's contract: registered servers (a taken name refused, updates checked against
//! the revision), grants (one per server and subject, replaced in place), and access requests
//! decided once, an approval writing its grant in the same transaction, of concurrent
//! deciders exactly one winning.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;

use super::{Backend, on_both_backends};
use crate::{
    AccessRequestRecord, AccessRequestStatus, GrantSubject, McpGrantRecord, McpServerRecord,
};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn server(name: &str) -> McpServerRecord {
    McpServerRecord {
        name: name.to_owned(),
        owner: "alice".to_owned(),
        config: json!({"name": name, "command": "/usr/bin/python3", "args": ["-u", "s.py"]}),
        revision: 1,
        created_at: at(0),
        updated_at: at(0),
        updated_by: "alice".to_owned(),
    }
}

fn grant(id: &str, subject: &str) -> McpGrantRecord {
    McpGrantRecord {
        id: id.to_owned(),
        server: "files".to_owned(),
        subject_kind: GrantSubject::User,
        subject: subject.to_owned(),
        enabled: true,
        tool_allow: vec![],
        tool_deny: vec!["wipe".to_owned()],
        created_at: at(0),
        updated_at: at(0),
        updated_by: "admin".to_owned(),
    }
}

fn request(id: &str, subject: &str, tools: &[&str]) -> AccessRequestRecord {
    AccessRequestRecord {
        id: id.to_owned(),
        server: "files".to_owned(),
        subject_kind: GrantSubject::User,
        subject: subject.to_owned(),
        tools: tools.iter().map(|t| (*t).to_owned()).collect(),
        reason: "I need to wipe".to_owned(),
        status: AccessRequestStatus::Pending,
        requested_by: subject.to_owned(),
        created_at: at(1),
        decided_by: None,
        decided_at: None,
        grant_id: None,
    }
}

fn template(id: &str) -> McpGrantRecord {
    McpGrantRecord {
        enabled: false,
        tool_allow: vec![],
        tool_deny: vec![],
        ..grant(id, "")
    }
}

async fn servers_are_created_once_and_updated_against_their_revision(backend: &Backend) {
    let store = backend.store();
    assert!(store.list_mcp_servers().await.unwrap().is_empty());
    assert!(store.create_mcp_server(&server("files")).await.unwrap());
    assert!(!store.create_mcp_server(&server("files")).await.unwrap());
    assert!(store.create_mcp_server(&server("db")).await.unwrap());
    let listed = store.list_mcp_servers().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].name, "db");
    assert_eq!(listed[1], server("files"));

    let mut changed = server("files");
    changed.config = json!({"name": "files", "command": "/usr/bin/node"});
    changed.updated_at = at(5);
    changed.updated_by = "bob".to_owned();
    let stored = store
        .update_mcp_server(&changed, Some(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.revision, 2);
    assert_eq!(stored.created_at, at(0));
    assert_eq!(stored.updated_by, "bob");
    assert_eq!(stored.config["command"], "/usr/bin/node");
    assert_eq!(
        store.update_mcp_server(&changed, Some(1)).await.unwrap(),
        Err(Some(2))
    );
    assert_eq!(
        store
            .update_mcp_server(&server("nope"), None)
            .await
            .unwrap(),
        Err(None)
    );
    assert!(store.delete_mcp_server("files").await.unwrap());
    assert!(!store.delete_mcp_server("files").await.unwrap());
    assert_eq!(store.list_mcp_servers().await.unwrap().len(), 1);
}

async fn a_grant_is_one_per_server_and_subject(backend: &Backend) {
    let store = backend.store();
    let first = store.put_mcp_grant(&grant("g1", "bob")).await.unwrap();
    assert_eq!(first, grant("g1", "bob"));
    // The same subject again: the row is replaced in place, its id and creation kept.
    let mut again = grant("g2", "bob");
    again.tool_allow = vec!["echo".to_owned()];
    again.updated_at = at(9);
    let stored = store.put_mcp_grant(&again).await.unwrap();
    assert_eq!(stored.id, "g1");
    assert_eq!(stored.created_at, at(0));
    assert_eq!(stored.updated_at, at(9));
    assert_eq!(stored.tool_allow, ["echo"]);
    let mut agent = grant("g3", "bob");
    agent.subject_kind = GrantSubject::Agent;
    store.put_mcp_grant(&agent).await.unwrap();
    let all = store.list_mcp_grants().await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(backend.count_rows("mcp_grants").await, 2);
    assert!(store.delete_mcp_grant("g1").await.unwrap());
    assert!(!store.delete_mcp_grant("g1").await.unwrap());
    assert_eq!(store.list_mcp_grants().await.unwrap(), [agent]);
}

async fn an_approved_request_writes_its_grant_and_is_decided_once(backend: &Backend) {
    let store = backend.store();
    // Bob's grant denies `wipe`; his request for it, approved, lifts that.
    store.put_mcp_grant(&grant("g1", "bob")).await.unwrap();
    store
        .create_access_request(&request("r1", "bob", &["wipe"]))
        .await
        .unwrap();
    store
        .create_access_request(&request("r2", "carol", &["echo"]))
        .await
        .unwrap();
    let pending = store
        .list_access_requests(Some(AccessRequestStatus::Pending))
        .await
        .unwrap();
    assert_eq!(pending.len(), 2);
    let approved = store
        .decide_access_request("r1", true, "admin", at(10), &template("gnew"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approved.status, AccessRequestStatus::Approved);
    assert_eq!(approved.decided_by.as_deref(), Some("admin"));
    assert_eq!(approved.decided_at, Some(at(10)));
    assert_eq!(approved.grant_id.as_deref(), Some("g1"));
    let grants = store.list_mcp_grants().await.unwrap();
    assert_eq!(grants.len(), 1);
    assert!(grants[0].allows("wipe") && grants[0].allows("echo"));
    // Decided once.
    assert!(
        store
            .decide_access_request("r1", false, "admin", at(11), &template("gx"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .decide_access_request("nope", true, "admin", at(11), &template("gx"))
            .await
            .unwrap()
            .is_none()
    );
    // Carol had no grant: one is created for just what she asked.
    let carol = store
        .decide_access_request("r2", true, "admin", at(12), &template("g2"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(carol.grant_id.as_deref(), Some("g2"));
    let grants = store.list_mcp_grants().await.unwrap();
    let carols = grants.iter().find(|g| g.subject == "carol").unwrap();
    assert!(carols.allows("echo") && !carols.allows("add"));
    assert_eq!(carols.created_at, at(0), "{carols:?}");

    store
        .create_access_request(&request("r3", "dave", &[]))
        .await
        .unwrap();
    let rejected = store
        .decide_access_request("r3", false, "admin", at(13), &template("g3"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rejected.status, AccessRequestStatus::Rejected);
    assert!(rejected.grant_id.is_none());
    assert!(
        !store
            .list_mcp_grants()
            .await
            .unwrap()
            .iter()
            .any(|g| g.subject == "dave")
    );
    let all = store.list_access_requests(None).await.unwrap();
    assert_eq!(all.len(), 3);
    assert!(
        store
            .list_access_requests(Some(AccessRequestStatus::Pending))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn concurrent_decisions_on_one_request_have_one_winner(backend: &Backend) {
    let store = backend.store();
    store
        .create_access_request(&request("r1", "bob", &["echo"]))
        .await
        .unwrap();
    let deciders = (0..8).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .decide_access_request(
                    "r1",
                    i % 2 == 0,
                    "admin",
                    at(20),
                    &template(&format!("g{i}")),
                )
                .await
                .unwrap()
        })
    });
    let mut winners = 0;
    for decider in deciders {
        if decider.await.unwrap().is_some() {
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
    assert!(store.list_mcp_grants().await.unwrap().len() <= 1);
}

on_both_backends!(
    servers_are_created_once_and_updated_against_their_revision,
    a_grant_is_one_per_server_and_subject,
    an_approved_request_writes_its_grant_and_is_decided_once,
    concurrent_decisions_on_one_request_have_one_winner,
);
