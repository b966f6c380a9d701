//! The personal data families (tasks, bookmarks, notes, calendar, contacts) end to end through
//! the service's pipeline, on both backends (`on_sqlite::…`, `on_postgres::…`): every tool's
//! success, filters and sort orders, bad arguments naming the fix, the max limits, and
//! isolation between users and agents.

use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, ToolResult};
use toolsmith_store::testkit::PgCluster;

use super::memory::call;
use super::*;

#[derive(Clone, Copy)]
pub(super) enum Kind {
    Sqlite,
    Postgres,
}

/// A service on a fresh store of one backend, and what keeps the store alive.
pub(super) struct Env {
    pub(super) service: Arc<ToolService>,
    _dir: Option<tempfile::TempDir>,
    _cluster: Option<PgCluster>,
}

/// `None` (the test skipped, the reason printed) when PostgreSQL is not installed.
pub(super) async fn open(kind: Kind, settings: ToolServiceSettings) -> Option<Env> {
    match kind {
        Kind::Sqlite => {
            let f = fixture_with(settings).await;
            Some(Env {
                service: f.service,
                _dir: Some(f._dir),
                _cluster: None,
            })
        }
        Kind::Postgres => {
            let cluster = toolsmith_store::testkit::pg_or_skip()?;
            let url = cluster.create_database().unwrap();
            let store =
                toolsmith_store::PgStore::connect(&url, &toolsmith_store::PgOptions::default())
                    .await
                    .unwrap();
            let service = ToolService::open(settings, Arc::new(store)).await.unwrap();
            Some(Env {
                service,
                _dir: None,
                _cluster: Some(cluster),
            })
        }
    }
}

macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Kind::Sqlite).await })*
        }
        mod on_postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Kind::Postgres).await })*
        }
    };
}
pub(super) use on_both_backends;

on_both_backends!(
    tasks_add_list_filter_sort_complete_update_delete,
    notes_and_bookmarks_search_tags_pins_favorites_and_dedup,
    calendar_ranges_and_contacts,
    bad_arguments_and_limits_name_the_fix,
    one_users_or_agents_records_are_never_visible_to_another,
);

pub(super) async fn ok(s: &ToolService, tool: &str, args: Value) -> Value {
    let res = call(s, "alice", None, tool, args).await;
    assert!(!res.is_error, "{tool}: {res:?}");
    res.content
}

/// Refused as bad arguments, with `words` in the answer.
pub(super) fn refused(res: &ToolResult, words: &str) {
    super::memory::refused(res, ErrorKind::InvalidArguments, words);
}

pub(super) fn field<'a>(list: &'a Value, key: &str, field: &str) -> Vec<&'a str> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .map(|x| x[field].as_str().unwrap_or_default())
        .collect()
}

async fn tasks_add_list_filter_sort_complete_update_delete(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let added = ok(s, "add_task", json!({"title": "File the tax return", "dueDate": "2026-04-30", "priority": "urgent", "category": "Admin", "notes": "Receipts are in the blue folder"})).await;
    let task = &added["task"];
    assert_eq!(task["status"], "pending");
    assert_eq!(task["priority"], "urgent");
    assert_eq!(task["category"], "Admin");
    assert!(task["id"].as_str().unwrap().starts_with("task_"));
    let tax = task["id"].as_str().unwrap().to_owned();
    let batch = ok(s, "batch_add_tasks", json!({"tasks": [
        {"title": "Buy milk", "category": "shopping", "priority": "low"},
        {"title": "Call the plumber", "dueDate": "2026-04-10T09:30:00+02:00", "priority": "high"},
        {"title": "Plan the garden", "dueDate": "2026-06-01"}
    ]})).await;
    assert_eq!(batch["added"], 3);
    assert_eq!(
        field(&batch, "tasks", "priority"),
        ["low", "high", "normal"]
    );
    let plumber = batch["tasks"][1]["id"].as_str().unwrap().to_owned();

    // Default order: soonest due first, undated last.
    let all = ok(s, "list_tasks", json!({})).await;
    assert_eq!(
        field(&all, "tasks", "title"),
        [
            "Call the plumber",
            "File the tax return",
            "Plan the garden",
            "Buy milk"
        ]
    );
    assert_eq!(
        (all["count"].clone(), all["total"].clone()),
        (json!(4), json!(4))
    );
    let by_priority = ok(s, "list_tasks", json!({"sortBy": "priority"})).await;
    assert_eq!(
        field(&by_priority, "tasks", "priority"),
        ["urgent", "high", "normal", "low"]
    );
    for (args, want) in [
        (json!({"priority": "high"}), vec!["Call the plumber"]),
        (json!({"category": "ADMIN"}), vec!["File the tax return"]),
        (json!({"search": "plumber"}), vec!["Call the plumber"]),
        (
            json!({"search": "receipts folder"}),
            vec!["File the tax return"],
        ),
        (
            json!({"dueFrom": "2026-04-10", "dueTo": "2026-04-30"}),
            vec!["Call the plumber", "File the tax return"],
        ),
        (json!({"dueTo": "2026-04-29"}), vec!["Call the plumber"]),
        (json!({"status": "completed"}), vec![]),
        (
            json!({"limit": 1, "offset": 1}),
            vec!["File the tax return"],
        ),
    ] {
        let found = ok(s, "list_tasks", args.clone()).await;
        assert_eq!(field(&found, "tasks", "title"), want, "{args}");
    }

    let done = ok(s, "complete_task", json!({"taskId": tax})).await;
    assert_eq!(done["task"]["status"], "completed");
    assert!(done["task"]["completedAt"].is_string());
    // completedAt follows the status: gone when the task is reopened, back when it is done
    // again through update_task.
    let reopened = ok(
        s,
        "update_task",
        json!({"taskId": tax, "status": "pending"}),
    )
    .await;
    assert!(reopened["task"].get("completedAt").is_none(), "{reopened}");
    let redone = ok(
        s,
        "update_task",
        json!({"taskId": tax, "status": "completed"}),
    )
    .await;
    assert!(redone["task"]["completedAt"].is_string(), "{redone}");
    let found = ok(s, "list_tasks", json!({"status": "completed"})).await;
    assert_eq!(field(&found, "tasks", "id"), [tax.as_str()]);

    let updated = ok(s, "update_task", json!({"taskId": plumber, "status": "in_progress", "dueDate": null, "title": "Call the emergency plumber"})).await;
    assert_eq!(updated["task"]["status"], "in_progress");
    assert!(updated["task"].get("dueDate").is_none());
    assert_eq!(updated["task"]["priority"], "high");
    // The indexes follow the change: no longer due, found by its new words.
    let found = ok(s, "list_tasks", json!({"dueTo": "2026-04-29"})).await;
    assert_eq!(found["count"], 0);
    let found = ok(
        s,
        "list_tasks",
        json!({"search": "emergency", "status": "in_progress"}),
    )
    .await;
    assert_eq!(field(&found, "tasks", "id"), [plumber.as_str()]);

    ok(s, "delete_task", json!({"taskId": plumber})).await;
    let res = call(s, "alice", None, "delete_task", json!({"taskId": plumber})).await;
    refused(&res, "find ids with list_tasks");
    assert_eq!(ok(s, "list_tasks", json!({})).await["total"], 3);
}

async fn notes_and_bookmarks_search_tags_pins_favorites_and_dedup(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let first = ok(s, "add_note", json!({"title": "Sourdough recipe", "content": "500 g flour, 350 g water, **levain** overnight", "category": "recipes", "tags": ["Baking", "bread"]})).await;
    assert_eq!(first["note"]["tags"], json!(["baking", "bread"]));
    assert_eq!(first["note"]["isPinned"], false);
    let batch = ok(s, "batch_add_notes", json!({"notes": [
        {"title": "Standup", "content": "Discussed the release train", "category": "meeting-notes", "isPinned": true},
        {"title": "Gift ideas", "content": "A cello bow for Mia", "tags": ["family"]}
    ]})).await;
    assert_eq!(batch["added"], 2);
    let all = ok(s, "list_notes", json!({})).await;
    assert_eq!(field(&all, "notes", "title")[0], "Standup", "pinned first");
    for (args, want) in [
        (json!({"search": "flour levain"}), vec!["Sourdough recipe"]),
        (json!({"search": "release"}), vec!["Standup"]),
        (
            json!({"tags": ["family", "bread"], "sortBy": "created"}),
            vec!["Gift ideas", "Sourdough recipe"],
        ),
        (json!({"isPinned": true}), vec!["Standup"]),
        (json!({"category": "recipes"}), vec!["Sourdough recipe"]),
    ] {
        let found = ok(s, "list_notes", args.clone()).await;
        assert_eq!(field(&found, "notes", "title"), want, "{args}");
    }
    let id = first["note"]["id"].as_str().unwrap();
    let updated = ok(
        s,
        "update_note",
        json!({"noteId": id, "content": "Rye instead", "isPinned": true, "tags": null}),
    )
    .await;
    assert_eq!(updated["note"]["content"], "Rye instead");
    assert!(updated["note"].get("tags").is_none());
    assert_eq!(
        ok(s, "list_notes", json!({"search": "levain"})).await["count"],
        0
    );
    assert_eq!(
        ok(s, "list_notes", json!({"search": "rye"})).await["count"],
        1
    );
    ok(s, "delete_note", json!({"noteId": id})).await;
    assert_eq!(ok(s, "list_notes", json!({})).await["total"], 2);

    let saved = ok(s, "add_bookmark", json!({"url": "https://doc.rust-lang.org/book/", "title": "The Rust Book", "tags": ["rust"], "isFavorite": true})).await;
    assert_eq!(saved["duplicate"], false);
    let again = ok(
        s,
        "add_bookmark",
        json!({"url": "HTTPS://doc.rust-lang.org/book/ ", "title": "Rust"}),
    )
    .await;
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["bookmark"]["id"], saved["bookmark"]["id"]);
    assert_eq!(again["bookmark"]["title"], "The Rust Book");
    ok(s, "batch_add_bookmarks", json!({"bookmarks": [
        {"url": "https://example.org/pasta", "category": "recipes", "description": "Cacio e pepe"},
        {"url": "https://example.org/tokio", "tags": ["rust", "async"]}
    ]})).await;
    for (args, want) in [
        (
            json!({}),
            vec![
                "https://example.org/tokio",
                "https://example.org/pasta",
                "https://doc.rust-lang.org/book/",
            ],
        ),
        (
            json!({"sortBy": "favorites"}),
            vec![
                "https://doc.rust-lang.org/book/",
                "https://example.org/tokio",
                "https://example.org/pasta",
            ],
        ),
        (
            json!({"isFavorite": false}),
            vec!["https://example.org/tokio", "https://example.org/pasta"],
        ),
        (
            json!({"tags": ["rust"], "sortBy": "created"}),
            vec![
                "https://example.org/tokio",
                "https://doc.rust-lang.org/book/",
            ],
        ),
        (json!({"search": "pepe"}), vec!["https://example.org/pasta"]),
    ] {
        let found = ok(s, "list_bookmarks", args.clone()).await;
        assert_eq!(field(&found, "bookmarks", "url"), want, "{args}");
    }
    ok(
        s,
        "delete_bookmark",
        json!({"bookmarkId": saved["bookmark"]["id"]}),
    )
    .await;
    assert_eq!(ok(s, "list_bookmarks", json!({})).await["total"], 2);
}

async fn calendar_ranges_and_contacts(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let today = chrono::Utc::now().date_naive();
    let day = |n: i64| (today + chrono::Duration::days(n)).to_string();
    ok(s, "add_calendar_event", json!({"title": "Dentist", "startTime": format!("{}T09:00:00", day(2)), "endTime": format!("{}T09:45:00", day(2)), "location": "Main street 4", "reminder": 30, "category": "health"})).await;
    ok(s, "batch_add_calendar_events", json!({"events": [
        {"title": "Last year's party", "startTime": day(-365), "isAllDay": true},
        {"title": "Team offsite", "startTime": format!("{}T08:00:00Z", day(7)), "description": "Bring the roadmap"},
        {"title": "Mia's birthday", "startTime": day(9), "isAllDay": true, "category": "birthday"}
    ]})).await;
    let upcoming = ok(s, "list_calendar_events", json!({})).await;
    assert_eq!(
        field(&upcoming, "events", "title"),
        ["Dentist", "Team offsite", "Mia's birthday"],
        "from today, earliest first"
    );
    assert_eq!(upcoming["events"][0]["reminder"], 30);
    for (args, want) in [
        (
            json!({"startDate": day(-400), "endDate": day(2)}),
            vec!["Last year's party", "Dentist"],
        ),
        (
            json!({"startDate": day(3), "endDate": day(9)}),
            vec!["Team offsite", "Mia's birthday"],
        ),
        (json!({"category": "Birthday"}), vec!["Mia's birthday"]),
        (json!({"search": "roadmap"}), vec!["Team offsite"]),
    ] {
        let found = ok(s, "list_calendar_events", args.clone()).await;
        assert_eq!(field(&found, "events", "title"), want, "{args}");
    }
    let res = call(s, "alice", None, "add_calendar_event", json!({"title": "Backwards", "startTime": "2026-05-01T10:00", "endTime": "2026-05-01T09:00"})).await;
    refused(&res, "'endTime' is before 'startTime'");
    let res = call(s, "alice", None, "batch_add_calendar_events", json!({"events": [{"title": "ok", "startTime": "2026-05-01"}, {"title": "bad", "startTime": "someday"}]})).await;
    refused(
        &res,
        "events[1]: 'startTime': 'someday' is not a date this field reads. Write YYYY-MM-DD",
    );
    assert_eq!(
        ok(
            s,
            "list_calendar_events",
            json!({"startDate": "2000-01-01"})
        )
        .await["count"],
        4,
        "a bad batch adds none"
    );
    let id = upcoming["events"][0]["id"].as_str().unwrap();
    ok(s, "delete_calendar_event", json!({"eventId": id})).await;
    assert_eq!(ok(s, "list_calendar_events", json!({})).await["count"], 2);

    let ada = ok(s, "add_contact", json!({"name": "Ada Lovelace", "email": "ada@example.org", "phone": "+44 20 7946 0000", "company": "Analytical Engines Ltd", "relationship": "Colleague", "birthday": "1815-12-10"})).await;
    assert_eq!(ada["contact"]["isFavorite"], false);
    ok(s, "batch_add_contacts", json!({"contacts": [
        {"name": "Grace Hopper", "company": "US Navy", "relationship": "mentor", "isFavorite": true},
        {"name": "Tom Okafor", "relationship": "colleague", "notes": "Manager; likes chess"}
    ]})).await;
    for (args, want) in [
        (
            json!({}),
            vec!["Grace Hopper", "Tom Okafor", "Ada Lovelace"],
        ),
        (
            json!({"relationship": "colleague", "sortBy": "created"}),
            vec!["Tom Okafor", "Ada Lovelace"],
        ),
        (
            json!({"search": "analytical engines"}),
            vec!["Ada Lovelace"],
        ),
        (json!({"search": "chess"}), vec!["Tom Okafor"]),
        (json!({"isFavorite": true}), vec!["Grace Hopper"]),
    ] {
        let found = ok(s, "list_contacts", args.clone()).await;
        assert_eq!(field(&found, "contacts", "name"), want, "{args}");
    }
    let id = ada["contact"]["id"].as_str().unwrap();
    let updated = ok(
        s,
        "update_contact",
        json!({"contactId": id, "isFavorite": true, "phone": null, "jobTitle": "Mathematician"}),
    )
    .await;
    assert_eq!(updated["contact"]["jobTitle"], "Mathematician");
    assert!(updated["contact"].get("phone").is_none());
    assert_eq!(updated["contact"]["email"], "ada@example.org");
    assert_eq!(
        ok(s, "list_contacts", json!({"isFavorite": true})).await["count"],
        2
    );
    ok(s, "delete_contact", json!({"contactId": id})).await;
    assert_eq!(ok(s, "list_contacts", json!({})).await["total"], 2);
}

async fn bad_arguments_and_limits_name_the_fix(kind: Kind) {
    let mut settings = ToolServiceSettings::default();
    settings.records.max_records_per_collection = 60;
    settings.records.max_record_bytes = 2000;
    let Some(env) = open(kind, settings).await else {
        return;
    };
    let s = &env.service;
    for (tool, args, words) in [
        (
            "add_task",
            json!({"title": "x", "priority": "asap"}),
            "priority",
        ),
        (
            "add_task",
            json!({"title": "x", "dueDate": "some week"}),
            "'dueDate': 'some week' is not a date this field reads. Write YYYY-MM-DD",
        ),
        ("add_task", json!({"title": "   "}), "must not be empty"),
        ("add_task", json!({"title": "a\u{0}b"}), "NUL"),
        (
            "add_task",
            json!({"title": "x", "status": "completed"}),
            "status",
        ),
        ("add_task", json!({}), "title"),
        ("list_tasks", json!({"status": "done"}), "status"),
        (
            "list_tasks",
            json!({"search": "the of a"}),
            "no word to search for",
        ),
        ("list_tasks", json!({"sortBy": "title"}), "sortBy"),
        (
            "list_tasks",
            json!({"dueFrom": "2026-05-02", "dueTo": "2026-05-01T00:00"}),
            "'dueTo' must be after 'dueFrom'",
        ),
        (
            "update_task",
            json!({"taskId": "task_0"}),
            "nothing to change",
        ),
        (
            "update_task",
            json!({"taskId": "task_0", "title": null}),
            "/title",
        ),
        (
            "complete_task",
            json!({"taskId": "task_0"}),
            "find ids with list_tasks",
        ),
        ("batch_add_tasks", json!({"tasks": []}), "tasks"),
        (
            "batch_add_tasks",
            json!({"tasks": [{"title": "ok"}, {"title": "x", "priority": 3}]}),
            "priority",
        ),
        (
            "add_bookmark",
            json!({"url": "javascript:alert(1)"}),
            "http or https URL",
        ),
        (
            "add_bookmark",
            json!({"url": "https://x.org", "tags": [""]}),
            "tags",
        ),
        ("add_note", json!({"title": "no content"}), "content"),
        (
            "add_note",
            json!({"title": "t", "content": "x".repeat(40_000)}),
            "content",
        ),
        (
            "add_calendar_event",
            json!({"title": "t", "startTime": "2026-05-01", "reminder": -5}),
            "reminder",
        ),
        (
            "list_calendar_events",
            json!({"startDate": "someday"}),
            "startDate",
        ),
        (
            "add_contact",
            json!({"name": "Ada", "email": "not an email"}),
            "email",
        ),
        (
            "add_contact",
            json!({"name": "Ada", "birthday": "10/12/1815"}),
            "birthday",
        ),
        (
            "update_contact",
            json!({"contactId": "ct_0", "nickname": "A"}),
            "nickname",
        ),
    ] {
        let res = call(s, "alice", None, tool, args.clone()).await;
        refused(&res, words);
    }
    assert_eq!(
        ok(s, "list_tasks", json!({})).await["total"],
        0,
        "nothing half-added"
    );
    // A record over max_record_bytes.
    let res = call(
        s,
        "alice",
        None,
        "add_note",
        json!({"title": "big", "content": "y ".repeat(1500)}),
    )
    .await;
    refused(&res, "max_record_bytes");
    // The tool max limits: list_tasks returns 20 by default and 50 at most, whatever is asked.
    let tasks: Vec<Value> = (0..50)
        .map(|i| json!({"title": format!("task {i}")}))
        .collect();
    assert_eq!(
        ok(s, "batch_add_tasks", json!({"tasks": tasks})).await["added"],
        50
    );
    let tasks: Vec<Value> = (50..55)
        .map(|i| json!({"title": format!("task {i}")}))
        .collect();
    ok(s, "batch_add_tasks", json!({"tasks": tasks})).await;
    assert_eq!(ok(s, "list_tasks", json!({})).await["count"], 20);
    assert_eq!(
        ok(s, "list_tasks", json!({"limit": 5000})).await["count"],
        50
    );
    let too_many: Vec<Value> = (0..51).map(|i| json!({"title": format!("t{i}")})).collect();
    let res = call(
        s,
        "alice",
        None,
        "batch_add_tasks",
        json!({"tasks": too_many}),
    )
    .await;
    refused(&res, "tasks");
    // max_records_per_collection: the batch stops at the limit and says how many went in.
    let tasks: Vec<Value> = (0..10)
        .map(|i| json!({"title": format!("more {i}")}))
        .collect();
    let res = call(s, "alice", None, "batch_add_tasks", json!({"tasks": tasks})).await;
    refused(&res, "max_records_per_collection");
    refused(&res, "the 5 before it were added");
    assert_eq!(ok(s, "list_tasks", json!({})).await["total"], 60);
    // Another family has its own count.
    ok(
        s,
        "add_note",
        json!({"title": "still fine", "content": "notes are counted apart"}),
    )
    .await;
}

async fn one_users_or_agents_records_are_never_visible_to_another(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let secret = "zebra-secret";
    let mine = [
        (
            "task",
            "taskId",
            ok(s, "add_task", json!({"title": format!("Pay {secret}")})).await["task"]["id"]
                .clone(),
        ),
        (
            "note",
            "noteId",
            ok(s, "add_note", json!({"title": secret, "content": secret})).await["note"]["id"]
                .clone(),
        ),
        (
            "bookmark",
            "bookmarkId",
            ok(
                s,
                "add_bookmark",
                json!({"url": "https://zebra.example.org", "title": secret}),
            )
            .await["bookmark"]["id"]
                .clone(),
        ),
        (
            "event",
            "eventId",
            ok(
                s,
                "add_calendar_event",
                json!({"title": secret, "startTime": "2030-01-01"}),
            )
            .await["event"]["id"]
                .clone(),
        ),
        (
            "contact",
            "contactId",
            ok(s, "add_contact", json!({"name": secret})).await["contact"]["id"].clone(),
        ),
    ];
    let lists = [
        ("list_tasks", "tasks"),
        ("list_notes", "notes"),
        ("list_bookmarks", "bookmarks"),
        ("list_calendar_events", "events"),
        ("list_contacts", "contacts"),
    ];
    for (user, agent) in [
        ("bob", None),
        ("bob", Some("agent-1")),
        ("alice", Some("agent-2")),
    ] {
        for (tool, _) in lists {
            for args in [json!({}), search_args(tool, secret)] {
                let res = call(s, user, agent, tool, args.clone()).await;
                assert!(!res.is_error, "{res:?}");
                assert_eq!(
                    res.content["count"], 0,
                    "{user}/{agent:?} {tool} {args}: {res:?}"
                );
                assert_eq!(res.content["total"], 0, "{user}/{agent:?} {tool}");
            }
        }
        for (_, id_param, id) in &mine {
            let tools: &[&str] = match *id_param {
                "taskId" => &["complete_task", "update_task", "delete_task"],
                "noteId" => &["update_note", "delete_note"],
                "bookmarkId" => &["delete_bookmark"],
                "eventId" => &["delete_calendar_event"],
                _ => &["update_contact", "delete_contact"],
            };
            for tool in tools {
                let mut args = json!({ *id_param: id });
                if tool.starts_with("update_") {
                    let key = if *id_param == "contactId" {
                        "name"
                    } else {
                        "title"
                    };
                    args[key] = json!("taken over");
                }
                let res = call(s, user, agent, tool, args).await;
                refused(&res, "among yours");
            }
        }
        // The same URL elsewhere is a bookmark there, not a duplicate of Alice's.
        let res = call(
            s,
            user,
            agent,
            "add_bookmark",
            json!({"url": "https://zebra.example.org"}),
        )
        .await;
        assert_eq!(res.content["duplicate"], false, "{res:?}");
    }
    // Alice's records are all still hers, unchanged.
    for ((tool, key), (_, _, id)) in lists.iter().zip(&mine) {
        let found = ok(s, tool, search_args(tool, secret)).await;
        assert_eq!(found[*key][0]["id"], *id, "{tool}: {found}");
        assert_eq!(found["count"], 1, "{tool}: {found}");
    }
}

/// A search for `text` (for events, in every date, not only the upcoming ones).
fn search_args(tool: &str, text: &str) -> Value {
    if tool == "list_calendar_events" {
        json!({"search": text, "startDate": "2000-01-01"})
    } else {
        json!({"search": text})
    }
}
