//! Custom Data over REST (`/api/v1/data/custom…`) through the real router with bearer tokens:
//! tables made, described and deleted, records added, listed with
//! filters and sorts, searched, read, changed and deleted with the tools' checks; what the tools
//! store is what REST shows; tables and records in a person's export and gone after erasure;
//! and no table or record of one user (or agent) reachable by another through any route.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::rest_data::{caller, tool};
use crate::rest_support::TestApp;

const BASE: &str = "/api/v1/data/custom";

fn films() -> Value {
    json!({
        "table": "films",
        "displayName": "Films to watch",
        "columns": [
            {"name": "title", "type": "text", "required": true},
            {"name": "genre", "type": "text"},
            {"name": "rating", "type": "number"},
            {"name": "seen", "type": "boolean", "default": false}
        ]
    })
}

fn titles(list: &Value) -> Vec<&str> {
    list["records"]
        .as_array()
        .unwrap_or_else(|| panic!("no records in {list}"))
        .iter()
        .map(|r| r["title"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_and_records_through_rest_and_tools_alike() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let made = alice
        .send(Method::POST, BASE, Some(&films()))
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(made["table"]["name"], "films");
    let one = alice
        .send(
            Method::POST,
            &format!("{BASE}/films/records"),
            Some(&json!({"title": "Alien", "genre": "sci-fi", "rating": 8.5})),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(one["record"]["seen"], false);
    let alien = one["record"]["id"].as_str().unwrap().to_owned();
    for body in [
        json!({"title": "Heat", "genre": "crime", "rating": 8}),
        json!({"title": "Arrival", "genre": "sci-fi", "rating": 9, "seen": true}),
    ] {
        alice
            .send(Method::POST, &format!("{BASE}/films/records"), Some(&body))
            .await
            .assert_ok(StatusCode::CREATED);
    }
    // The tool sees what REST stored, and the other way round.
    tool(
        &app,
        "alice",
        "add_custom_record",
        json!({"table": "films", "data": {"title": "Brazil", "genre": "comedy"}}),
    )
    .await;
    let listed = tool(
        &app,
        "alice",
        "list_custom_records",
        json!({"table": "films", "sortBy": "title"}),
    )
    .await;
    assert_eq!(titles(&listed), ["Alien", "Arrival", "Brazil", "Heat"]);

    let tables = alice.get(BASE).await.assert_ok(StatusCode::OK);
    assert_eq!(tables["tables"][0]["recordCount"], 4);
    let described = alice
        .get(&format!("{BASE}/films"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(described["table"]["columns"].as_array().unwrap().len(), 4);

    let filter = "%7B%22genre%22%3A%22sci-fi%22%7D"; // {"genre":"sci-fi"}
    for (query, want) in [
        (
            format!("?filter={filter}&sortBy=rating&sortOrder=desc"),
            vec!["Arrival", "Alien"],
        ),
        (
            "?sortBy=title&limit=2&offset=1".to_owned(),
            vec!["Arrival", "Brazil"],
        ),
        ("?query=crime".to_owned(), vec!["Heat"]),
        (
            format!("?query=alien%20arrival&filter={filter}"),
            vec!["Alien", "Arrival"],
        ),
    ] {
        let got = alice
            .get(&format!("{BASE}/films/records{query}"))
            .await
            .assert_ok(StatusCode::OK);
        let mut got = titles(&got);
        if query.starts_with("?query=alien") {
            got.sort_unstable();
        }
        assert_eq!(got, want, "{query}");
    }
    let path = format!("{BASE}/films/records/{alien}");
    let read = alice.get(&path).await.assert_ok(StatusCode::OK);
    assert_eq!(read["record"]["genre"], "sci-fi");
    let changed = alice
        .send(
            Method::PATCH,
            &path,
            Some(&json!({"seen": true, "genre": null})),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(changed["record"]["seen"], true);
    assert!(changed["record"].get("genre").is_none());

    // Bad input: named, 422 for the tools' checks, 400 for the query string, 404 for what is
    // not yours.
    for (method, url, body, status, code) in [
        (
            Method::POST,
            BASE.to_owned(),
            Some(json!({"table": "Bad Name", "columns": [{"name": "a", "type": "text"}]})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::POST,
            BASE.to_owned(),
            Some(films()),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::POST,
            format!("{BASE}/films/records"),
            Some(json!({"rating": 1})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::POST,
            format!("{BASE}/films/records"),
            Some(json!({"title": "x", "rating": "good"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::GET,
            format!("{BASE}/films/records?limit=51"),
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::GET,
            format!("{BASE}/films/records?sortBy=budget"),
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::GET,
            format!("{BASE}/films/records?filter=not-json"),
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::GET,
            format!("{BASE}/films/records?query=x&sortBy=title"),
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
        ),
        (
            Method::GET,
            format!("{BASE}/films/records?colour=red"),
            None,
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
        (
            Method::GET,
            format!("{BASE}/films/records/row_nope"),
            None,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::GET,
            format!("{BASE}/books"),
            None,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::GET,
            format!("{BASE}/books%27%3B%20DROP%20TABLE%20data_records/records"),
            None,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            Method::DELETE,
            format!("{BASE}/films"),
            None,
            StatusCode::BAD_REQUEST,
            "confirmation_required",
        ),
    ] {
        alice
            .send(method.clone(), &url, body.as_ref())
            .await
            .assert_error(status, code);
    }
    alice
        .send(Method::DELETE, &path, None)
        .await
        .assert_ok(StatusCode::OK);
    alice
        .get(&path)
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // The export carries the table and its records; deleting the table takes its records.
    let export = alice
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    let collections: Vec<&str> = export["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["collection"].as_str().unwrap())
        .collect();
    assert_eq!(
        collections.iter().filter(|c| **c == "custom_table").count(),
        1
    );
    assert_eq!(
        collections
            .iter()
            .filter(|c| c.starts_with("custom_row:"))
            .count(),
        3
    );
    let gone = alice
        .send(Method::DELETE, &format!("{BASE}/films?confirm=true"), None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(gone["recordsDeleted"], 3);
    let export = alice
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(export["records"], json!([]), "{export}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_route_or_export_shows_one_users_or_agents_tables_to_another() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let secret = "zebracorn";
    let made = alice
        .send(
            Method::POST,
            BASE,
            Some(&json!({"table": "vault", "columns": [{"name": "title", "type": "text"}]})),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let table_id = made["table"]["id"].as_str().unwrap().to_owned();
    let row = alice
        .send(
            Method::POST,
            &format!("{BASE}/vault/records"),
            Some(&json!({"title": secret})),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let row_id = row["record"]["id"].as_str().unwrap().to_owned();
    let bob = caller(&app, "bob", None).await;
    let alices_agent = caller(&app, "alice", Some("agent-1")).await;
    for other in [&bob, &alices_agent] {
        let tables = other.get(BASE).await.assert_ok(StatusCode::OK);
        assert_eq!(tables["count"], 0, "{tables}");
        for table in ["vault", table_id.as_str()] {
            let records = format!("{BASE}/{table}/records");
            let one = format!("{records}/{row_id}");
            for (method, url, body) in [
                (Method::GET, format!("{BASE}/{table}"), None),
                (Method::DELETE, format!("{BASE}/{table}?confirm=true"), None),
                (Method::GET, records.clone(), None),
                (Method::GET, format!("{records}?query={secret}"), None),
                (Method::POST, records.clone(), Some(json!({"title": "x"}))),
                (Method::GET, one.clone(), None),
                (Method::PATCH, one.clone(), Some(json!({"title": "taken"}))),
                (Method::DELETE, one.clone(), None),
            ] {
                other
                    .send(method, &url, body.as_ref())
                    .await
                    .assert_error(StatusCode::NOT_FOUND, "not_found");
            }
        }
        // A table of the same name there is theirs, and holds nothing of Alice's.
        other
            .send(
                Method::POST,
                BASE,
                Some(&json!({"table": "vault", "columns": [{"name": "title", "type": "text"}]})),
            )
            .await
            .assert_ok(StatusCode::CREATED);
        let search = other
            .get(&format!("{BASE}/vault/records?query={secret}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(search["count"], 0, "{search}");
        other
            .get(&format!("{BASE}/vault/records/{row_id}"))
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
    let export = bob
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert!(!export.to_string().contains(secret), "{export}");
    // Alice's erasure takes her tables and records, every agent's, and none of Bob's.
    let erased = alice
        .send(Method::DELETE, "/api/v1/data?confirm=true", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(erased["deleted"], 3, "{erased}");
    assert_eq!(bob.get(BASE).await.assert_ok(StatusCode::OK)["count"], 1);
    assert_eq!(alice.get(BASE).await.assert_ok(StatusCode::OK)["count"], 0);
}
