//! Custom Data (user-defined tables and their rows) end to end through the service's pipeline,
//! on both backends (`on_sqlite::…`, `on_postgres::…`): every tool's success, filters, sorts
//! and search, bad arguments naming the fix, hostile input (huge rows, thousands of columns,
//! names and values that look like SQL), the limits, and isolation between users and agents.

use serde_json::{Value, json};
use toolsmith_builtins::custom::ops as custom_ops;
use toolsmith_builtins::data::Records;
use toolsmith_core::data::RecordScope;

use super::memory::call;
use super::personal::{Kind, ok, on_both_backends, open, refused};
use super::racing::{Racing, Write};
use super::*;

on_both_backends!(
    tables_are_created_described_listed_and_deleted_with_their_rows,
    rows_are_added_filtered_sorted_searched_read_changed_and_deleted,
    bad_arguments_hostile_input_and_limits_name_the_fix,
    one_users_or_agents_tables_and_rows_are_never_visible_to_another,
    a_table_deleted_while_rows_are_added_keeps_no_stray_row,
);

fn titles(list: &Value) -> Vec<&str> {
    list["records"]
        .as_array()
        .unwrap_or_else(|| panic!("no records in {list}"))
        .iter()
        .map(|r| r["title"].as_str().unwrap_or_default())
        .collect()
}

fn books() -> Value {
    json!({
        "table": "books",
        "displayName": "My Books",
        "description": "Books I read or want to read",
        "columns": [
            {"name": "title", "type": "text", "required": true},
            {"name": "author", "type": "text"},
            {"name": "rating", "type": "number"},
            {"name": "finished", "type": "boolean", "default": false},
            {"name": "read_on", "type": "date"},
            {"name": "started_at", "type": "datetime"},
            {"name": "meta", "type": "json"}
        ]
    })
}

async fn tables_are_created_described_listed_and_deleted_with_their_rows(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let created = ok(s, "create_custom_table", books()).await;
    assert_eq!(created["table"]["name"], "books");
    assert_eq!(created["table"]["displayName"], "My Books");
    assert_eq!(
        created["table"]["columns"][3],
        json!({"name": "finished", "type": "boolean", "required": false, "default": false})
    );
    let id = created["table"]["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("tbl_"), "{id}");
    ok(
        s,
        "create_custom_table",
        json!({"table": "workouts", "columns": [{"name": "kind", "type": "text"}]}),
    )
    .await;
    ok(
        s,
        "add_custom_record",
        json!({"table": "books", "data": {"title": "Dune"}}),
    )
    .await;
    ok(
        s,
        "add_custom_record",
        json!({"table": id, "data": {"title": "Emma"}}),
    )
    .await;

    let listed = ok(s, "list_custom_tables", json!({})).await;
    assert_eq!(listed["count"], 2);
    assert_eq!(
        listed["tables"][0],
        json!({"id": id, "name": "books", "displayName": "My Books", "description": "Books I read or want to read", "columnCount": 7, "recordCount": 2})
    );
    assert_eq!(listed["tables"][1]["name"], "workouts");
    assert_eq!(listed["tables"][1]["displayName"], "workouts");

    let described = ok(s, "describe_custom_table", json!({"table": "books"})).await;
    assert_eq!(described["table"]["stats"]["recordCount"], 2);
    assert_eq!(described["table"]["columns"].as_array().unwrap().len(), 7);
    assert_eq!(described["table"]["columns"][0]["required"], true);
    assert_eq!(
        ok(s, "describe_custom_table", json!({"table": id})).await["table"]["name"],
        "books"
    );

    // A name is one table: a second one is refused, not merged.
    let res = call(s, "alice", None, "create_custom_table", books()).await;
    refused(&res, "exists already");

    // Deleting needs confirm, then takes every row with it.
    let res = call(
        s,
        "alice",
        None,
        "delete_custom_table",
        json!({"table": "books", "confirm": false}),
    )
    .await;
    refused(&res, "confirm");
    let deleted = ok(
        s,
        "delete_custom_table",
        json!({"table": "books", "confirm": true}),
    )
    .await;
    assert_eq!(
        (
            deleted["deleted"].clone(),
            deleted["recordsDeleted"].clone()
        ),
        (json!(true), json!(2))
    );
    let res = call(
        s,
        "alice",
        None,
        "describe_custom_table",
        json!({"table": "books"}),
    )
    .await;
    refused(&res, "list_custom_tables");
    let res = call(
        s,
        "alice",
        None,
        "list_custom_records",
        json!({"table": "books"}),
    )
    .await;
    refused(&res, "no custom table 'books'");
    // Made again under the same name, the table starts empty.
    ok(s, "create_custom_table", books()).await;
    let again = ok(s, "list_custom_records", json!({"table": "books"})).await;
    assert_eq!(
        (again["count"].clone(), again["total"].clone()),
        (json!(0), json!(0))
    );
    assert_eq!(ok(s, "list_custom_tables", json!({})).await["count"], 2);
}

async fn rows_are_added_filtered_sorted_searched_read_changed_and_deleted(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    ok(s, "create_custom_table", books()).await;
    let added = ok(
        s,
        "add_custom_record",
        json!({"table": "books", "data": {
            "title": "Dune", "author": "Frank Herbert", "rating": 9, "read_on": "2026-03-01",
            "started_at": "2026-02-20T21:15:00+01:00", "meta": {"pages": 412, "tags": ["desert"]}
        }}),
    )
    .await;
    let dune = &added["record"];
    assert!(dune["id"].as_str().unwrap().starts_with("row_"));
    // Defaults are filled in, times kept in UTC.
    assert_eq!(dune["finished"], false);
    assert_eq!(dune["started_at"], "2026-02-20T20:15:00Z");
    assert_eq!(dune["meta"]["pages"], 412);
    assert!(dune["createdAt"].is_string() && dune["updatedAt"].is_string());
    let dune_id = dune["id"].as_str().unwrap().to_owned();
    let batch = ok(
        s,
        "batch_add_custom_records",
        json!({"table": "books", "records": [
            {"title": "Emma", "author": "Jane Austen", "rating": 7.5, "finished": true, "read_on": "2025-12-24"},
            {"title": "Persuasion", "author": "Jane Austen", "rating": 8, "finished": true},
            {"title": "Neuromancer", "author": "William Gibson", "rating": 8},
        ]}),
    )
    .await;
    assert_eq!(batch["added"], 3);
    assert_eq!(batch["records"].as_array().unwrap().len(), 3);

    // Newest first by default.
    let all = ok(s, "list_custom_records", json!({"table": "books"})).await;
    assert_eq!(titles(&all), ["Neuromancer", "Persuasion", "Emma", "Dune"]);
    assert_eq!(
        (all["count"].clone(), all["total"].clone()),
        (json!(4), json!(4))
    );
    for (args, want) in [
        (
            json!({"sortBy": "rating", "sortOrder": "desc"}),
            vec!["Dune", "Neuromancer", "Persuasion", "Emma"],
        ),
        (
            json!({"sortBy": "title"}),
            vec!["Dune", "Emma", "Neuromancer", "Persuasion"],
        ),
        (
            json!({"sortBy": "read_on"}),
            vec!["Emma", "Dune", "Neuromancer", "Persuasion"],
        ),
        (
            json!({"filter": {"author": "Jane Austen"}, "sortBy": "title"}),
            vec!["Emma", "Persuasion"],
        ),
        (
            json!({"filter": {"finished": true, "rating": 8}}),
            vec!["Persuasion"],
        ),
        (
            json!({"filter": {"rating": 8.0}, "sortBy": "title", "sortOrder": "desc"}),
            vec!["Persuasion", "Neuromancer"],
        ),
        (json!({"filter": {"read_on": "2026-03-01"}}), vec!["Dune"]),
        (json!({"filter": {"author": "jane austen"}}), vec![]),
        (
            json!({"sortBy": "title", "limit": 2, "offset": 1}),
            vec!["Emma", "Neuromancer"],
        ),
    ] {
        let mut args = args;
        args["table"] = json!("books");
        let got = ok(s, "list_custom_records", args.clone()).await;
        assert_eq!(titles(&got), want, "{args}");
    }

    // Full-text search over the text columns, stemmed, best first.
    let found = ok(
        s,
        "search_custom_records",
        json!({"table": "books", "query": "austen persuasion"}),
    )
    .await;
    assert_eq!(titles(&found)[0], "Persuasion");
    assert_eq!(found["count"], 2);
    let found = ok(
        s,
        "search_custom_records",
        json!({"table": "books", "query": "herbert", "filter": {"finished": false}}),
    )
    .await;
    assert_eq!(titles(&found), ["Dune"]);
    assert_eq!(
        ok(
            s,
            "search_custom_records",
            json!({"table": "books", "query": "desert"})
        )
        .await["count"],
        0,
        "json columns are not searched"
    );

    let got = ok(
        s,
        "get_custom_record",
        json!({"table": "books", "recordId": dune_id}),
    )
    .await;
    assert_eq!(got["record"]["author"], "Frank Herbert");
    let updated = ok(
        s,
        "update_custom_record",
        json!({"table": "books", "recordId": dune_id, "data": {"rating": 10, "author": null, "finished": true}}),
    )
    .await;
    assert_eq!(updated["record"]["rating"], 10);
    assert_eq!(updated["record"]["finished"], true);
    assert!(updated["record"].get("author").is_none(), "{updated}");
    assert_eq!(updated["record"]["createdAt"], dune["createdAt"]);
    // The search follows the change.
    assert_eq!(
        ok(
            s,
            "search_custom_records",
            json!({"table": "books", "query": "herbert"})
        )
        .await["count"],
        0
    );
    let deleted = ok(
        s,
        "delete_custom_record",
        json!({"table": "books", "recordId": dune_id}),
    )
    .await;
    assert_eq!(deleted["deleted"], true);
    let res = call(
        s,
        "alice",
        None,
        "get_custom_record",
        json!({"table": "books", "recordId": dune_id}),
    )
    .await;
    refused(&res, "find ids with list_custom_records");
    assert_eq!(
        ok(s, "list_custom_records", json!({"table": "books"})).await["total"],
        3
    );
}

async fn bad_arguments_hostile_input_and_limits_name_the_fix(kind: Kind) {
    let mut settings = ToolServiceSettings::default();
    settings.records.max_records_per_collection = 60;
    settings.records.max_record_bytes = 20_000;
    let Some(env) = open(kind, settings).await else {
        return;
    };
    let s = &env.service;
    ok(s, "create_custom_table", books()).await;
    let many_columns: Vec<Value> = (0..10_000)
        .map(|i| json!({"name": format!("c{i}"), "type": "text"}))
        .collect();
    let column = |c: Value| json!({"table": "t", "columns": [c]});
    for (tool, args, words) in [
        // Names: syntax checked before anything is stored; SQL-looking ones refused.
        (
            "create_custom_table",
            json!({"table": "books; DROP TABLE data_records; --", "columns": [{"name": "a", "type": "text"}]}),
            "table",
        ),
        (
            "create_custom_table",
            json!({"table": "Books", "columns": [{"name": "a", "type": "text"}]}),
            "table",
        ),
        (
            "create_custom_table",
            json!({"table": "x".repeat(49), "columns": [{"name": "a", "type": "text"}]}),
            "table",
        ),
        (
            "create_custom_table",
            column(json!({"name": "a') OR 1=1 --", "type": "text"})),
            "columns",
        ),
        (
            "create_custom_table",
            column(json!({"name": "$.title", "type": "text"})),
            "columns",
        ),
        (
            "create_custom_table",
            column(json!({"name": "id", "type": "text"})),
            "reserved",
        ),
        (
            "create_custom_table",
            column(json!({"name": "a", "type": "varchar"})),
            "type",
        ),
        (
            "create_custom_table",
            column(json!({"name": "a", "type": "number", "default": "many"})),
            "default",
        ),
        (
            "create_custom_table",
            column(json!({"name": "a", "type": "text", "required": true, "default": "x"})),
            "drop one of them",
        ),
        (
            "create_custom_table",
            json!({"table": "t", "columns": [{"name": "a", "type": "text"}, {"name": "a", "type": "number"}]}),
            "must differ",
        ),
        (
            "create_custom_table",
            json!({"table": "t", "columns": []}),
            "columns",
        ),
        (
            "create_custom_table",
            json!({"table": "t", "columns": many_columns}),
            "columns",
        ),
        (
            "create_custom_table",
            json!({"table": "t", "displayName": "a\u{0}b", "columns": [{"name": "a", "type": "text"}]}),
            "control characters",
        ),
        // Rows: every value of its column's type; unknown and missing columns named.
        (
            "add_custom_record",
            json!({"table": "books", "data": {"author": "x"}}),
            "column 'title' is required",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x", "rating": "nine"}}),
            "column 'rating' is of type number",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x", "finished": "yes"}}),
            "boolean",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x", "read_on": "03/01/2026"}}),
            "YYYY-MM-DD",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x", "started_at": "soon"}}),
            "datetime",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x", "genre": "y"}}),
            "has no column 'genre'",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "a\u{0}b"}}),
            "NUL",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x".repeat(10_001)}}),
            "title",
        ),
        (
            "add_custom_record",
            json!({"table": "books", "data": {"title": "x", "meta": "y".repeat(17_000)}}),
            "meta",
        ),
        (
            "add_custom_record",
            json!({"table": "films", "data": {"title": "x"}}),
            "create_custom_table",
        ),
        ("add_custom_record", json!({"table": "books"}), "data"),
        (
            "batch_add_custom_records",
            json!({"table": "books", "records": [{"title": "ok"}, {"rating": 1}]}),
            "records[1]",
        ),
        (
            "batch_add_custom_records",
            json!({"table": "books", "records": []}),
            "records",
        ),
        (
            "list_custom_records",
            json!({"table": "books", "filter": {"meta": {}}}),
            "cannot be filtered",
        ),
        (
            "list_custom_records",
            json!({"table": "books", "filter": {"rating": "high"}}),
            "rating",
        ),
        (
            "list_custom_records",
            json!({"table": "books", "filter": {"x') OR 1=1 --": 1}}),
            "has no column",
        ),
        (
            "list_custom_records",
            json!({"table": "books", "sortBy": "meta"}),
            "cannot be sorted",
        ),
        (
            "list_custom_records",
            json!({"table": "books", "sortBy": "pages"}),
            "sortBy",
        ),
        (
            "list_custom_records",
            json!({"table": "books", "sortBy": "createdAt", "sortOrder": "asc"}),
            "newest first only",
        ),
        (
            "search_custom_records",
            json!({"table": "books", "query": "the of a"}),
            "no word to search for",
        ),
        ("search_custom_records", json!({"table": "books"}), "query"),
        (
            "update_custom_record",
            json!({"table": "books", "recordId": "row_0", "data": {}}),
            "changes nothing",
        ),
        (
            "update_custom_record",
            json!({"table": "books", "recordId": "row_0", "data": {"title": "x"}}),
            "find ids",
        ),
        (
            "delete_custom_record",
            json!({"table": "books", "recordId": "row_0"}),
            "find ids",
        ),
        ("delete_custom_table", json!({"table": "books"}), "confirm"),
    ] {
        let res = call(s, "alice", None, tool, args.clone()).await;
        refused(&res, words);
    }
    let row = ok(
        s,
        "add_custom_record",
        json!({"table": "books", "data": {"title": "Kept"}}),
    )
    .await;
    let id = row["record"]["id"].clone();
    let res = call(
        s,
        "alice",
        None,
        "update_custom_record",
        json!({"table": "books", "recordId": id, "data": {"title": null}}),
    )
    .await;
    refused(&res, "cannot be cleared");
    // Values that look like SQL or FTS syntax are data, stored and found as such.
    let hostile = "'); DROP TABLE data_records; -- \" OR NEAR(a b) * ^title:x";
    let stored = ok(
        s,
        "add_custom_record",
        json!({"table": "books", "data": {"title": hostile, "author": "Robert'); DROP"}}),
    )
    .await;
    assert_eq!(stored["record"]["title"], hostile);
    let found = ok(
        s,
        "list_custom_records",
        json!({"table": "books", "filter": {"title": hostile}}),
    )
    .await;
    assert_eq!(found["count"], 1);
    assert_eq!(
        ok(
            s,
            "search_custom_records",
            json!({"table": "books", "query": hostile})
        )
        .await["count"],
        1
    );
    assert_eq!(
        ok(s, "list_custom_records", json!({"table": "books"})).await["total"],
        2,
        "nothing half-added"
    );
    // A row over max_record_bytes, and a batch over 50 rows.
    let res = call(s, "alice", None, "add_custom_record", json!({"table": "books", "data": {"title": "t", "author": "a".repeat(9000), "meta": {"x": "b".repeat(12_000)}}})).await;
    refused(&res, "max_record_bytes");
    let rows: Vec<Value> = (0..51).map(|i| json!({"title": format!("b{i}")})).collect();
    let res = call(
        s,
        "alice",
        None,
        "batch_add_custom_records",
        json!({"table": "books", "records": rows}),
    )
    .await;
    refused(&res, "records");
    // The tool max limits: 20 by default, 50 at most whatever is asked.
    let rows: Vec<Value> = (0..50)
        .map(|i| json!({"title": format!("book {i}")}))
        .collect();
    assert_eq!(
        ok(
            s,
            "batch_add_custom_records",
            json!({"table": "books", "records": rows})
        )
        .await["added"],
        50
    );
    assert_eq!(
        ok(s, "list_custom_records", json!({"table": "books"})).await["count"],
        20
    );
    assert_eq!(
        ok(
            s,
            "list_custom_records",
            json!({"table": "books", "limit": 5000})
        )
        .await["count"],
        50
    );
    assert_eq!(
        ok(
            s,
            "search_custom_records",
            json!({"table": "books", "query": "book"})
        )
        .await["count"],
        20
    );
    assert_eq!(
        ok(
            s,
            "search_custom_records",
            json!({"table": "books", "query": "book", "limit": 500})
        )
        .await["count"],
        50
    );
    // Rows per table: max_records_per_collection; a batch stops there and says how far it got.
    let rows: Vec<Value> = (0..10)
        .map(|i| json!({"title": format!("more {i}")}))
        .collect();
    let res = call(
        s,
        "alice",
        None,
        "batch_add_custom_records",
        json!({"table": "books", "records": rows}),
    )
    .await;
    refused(&res, "max_records_per_collection");
    refused(&res, "the 8 before it were added");
    // Tables per user: 50, across the user's agents.
    for i in 1..49 {
        ok(
            s,
            "create_custom_table",
            json!({"table": format!("t{i}"), "columns": [{"name": "a", "type": "text"}]}),
        )
        .await;
    }
    let res = call(
        s,
        "alice",
        Some("agent-1"),
        "create_custom_table",
        json!({"table": "t49", "columns": [{"name": "a", "type": "text"}]}),
    )
    .await;
    assert!(!res.is_error, "{res:?}");
    let res = call(
        s,
        "alice",
        None,
        "create_custom_table",
        json!({"table": "t50", "columns": [{"name": "a", "type": "text"}]}),
    )
    .await;
    refused(&res, "50 custom tables");
    assert_eq!(ok(s, "list_custom_tables", json!({})).await["count"], 49);
}

async fn one_users_or_agents_tables_and_rows_are_never_visible_to_another(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let secret = "zebra-secret";
    let table = ok(
        s,
        "create_custom_table",
        json!({"table": "vault", "columns": [{"name": "title", "type": "text"}]}),
    )
    .await;
    let table_id = table["table"]["id"].clone();
    let row = ok(
        s,
        "add_custom_record",
        json!({"table": "vault", "data": {"title": secret}}),
    )
    .await;
    let row_id = row["record"]["id"].clone();
    for (user, agent) in [
        ("bob", None),
        ("bob", Some("agent-1")),
        ("alice", Some("agent-2")),
    ] {
        let listed = call(s, user, agent, "list_custom_tables", json!({})).await;
        assert_eq!(listed.content["count"], 0, "{user}/{agent:?}: {listed:?}");
        for name in [json!("vault"), table_id.clone()] {
            for (tool, args) in [
                ("describe_custom_table", json!({"table": name})),
                (
                    "delete_custom_table",
                    json!({"table": name, "confirm": true}),
                ),
                (
                    "add_custom_record",
                    json!({"table": name, "data": {"title": "x"}}),
                ),
                (
                    "batch_add_custom_records",
                    json!({"table": name, "records": [{"title": "x"}]}),
                ),
                ("list_custom_records", json!({"table": name})),
                (
                    "search_custom_records",
                    json!({"table": name, "query": secret}),
                ),
                (
                    "get_custom_record",
                    json!({"table": name, "recordId": row_id}),
                ),
                (
                    "update_custom_record",
                    json!({"table": name, "recordId": row_id, "data": {"title": "taken"}}),
                ),
                (
                    "delete_custom_record",
                    json!({"table": name, "recordId": row_id}),
                ),
            ] {
                let res = call(s, user, agent, tool, args).await;
                refused(&res, "among yours");
            }
        }
        // A table of the same name elsewhere is that caller's own, empty, and sees nothing.
        let theirs = call(
            s,
            user,
            agent,
            "create_custom_table",
            json!({"table": "vault", "columns": [{"name": "title", "type": "text"}]}),
        )
        .await;
        assert!(!theirs.is_error, "{theirs:?}");
        for (tool, args) in [
            ("list_custom_records", json!({"table": "vault"})),
            (
                "search_custom_records",
                json!({"table": "vault", "query": secret}),
            ),
        ] {
            let res = call(s, user, agent, tool, args).await;
            assert_eq!(res.content["count"], 0, "{user}/{agent:?} {tool}: {res:?}");
        }
        let res = call(
            s,
            user,
            agent,
            "get_custom_record",
            json!({"table": "vault", "recordId": row_id}),
        )
        .await;
        refused(&res, "among yours");
    }
    // Alice's table and row are hers, unchanged.
    let found = ok(
        s,
        "search_custom_records",
        json!({"table": "vault", "query": secret}),
    )
    .await;
    assert_eq!(found["records"][0]["id"], row_id);
    assert_eq!(found["count"], 1);
    assert_eq!(
        ok(s, "list_custom_tables", json!({})).await["tables"][0]["recordCount"],
        1
    );
}

async fn a_table_deleted_while_rows_are_added_keeps_no_stray_row(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let scope = RecordScope::new("alice", None);
    let table = json!({"table": "log", "columns": [{"name": "title", "type": "text"}]});
    for batch in [false, true] {
        let records = env.service.records();
        // The table deleted (definition, then rows) just before the first row is inserted:
        // the worst interleaving of an add and a deletion, made deterministic.
        let racing = Racing::once(&env.service, Write::Put, |inner, record| {
            Box::pin(async move {
                if record.collection.starts_with("custom_row:") {
                    let args = json!({"table": "log", "confirm": true});
                    custom_ops::delete_table(&inner, &record.scope(), &args)
                        .await
                        .unwrap();
                    true
                } else {
                    false
                }
            })
        });
        custom_ops::create_table(&records, &scope, &table)
            .await
            .unwrap();
        let id = custom_ops::table_arg(&records, &scope, &json!({"table": "log"}))
            .await
            .unwrap()
            .id;
        let refused = if batch {
            let rows = json!({"table": "log", "records": [{"title": "a"}, {"title": "b"}]});
            custom_ops::batch_add_rows(&racing, &scope, &rows).await
        } else {
            let row = json!({"table": "log", "data": {"title": "a"}});
            custom_ops::add_row(&racing, &scope, &row).await
        }
        .unwrap_err();
        assert!(
            refused
                .message()
                .contains("was deleted while the rows were being added"),
            "{}",
            refused.message()
        );
        // Nothing is left under the deleted table's id, not even where only export looks.
        let rows = format!("custom_row:{id}");
        assert_eq!(
            records.tally(&scope, &rows).await.unwrap().total,
            0,
            "batch {batch}"
        );
    }
}
