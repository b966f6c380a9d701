//! Scrubbing without data loss (issue 31), through the REST API: the user's own data — notes,
//! workspace files, table rows, memories, a generated password, error messages naming a path —
//! round-trips byte for byte through read → edit → write, while the platform's secrets (the
//! caller's exact Config Center values) are still scrubbed from everything, and the credential
//! patterns still apply to what code returns. A placeholder the scrubber left is never written
//! back over the value it hid.

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::rest_support::{TestApp, TestResponse};

/// Credential-looking lines a person keeps in their own notes and files.
const CORPUS: &[&str] = &[
    "wifi password: correct-horse-9",
    "DB_PASSWORD=s3cr3t-Value_42",
    "api_key=sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345",
    "Authorization: Bearer abcdefghijklmnop0123456789",
    "postgres://app:hunter2-pw@db.internal:5432/app",
    "github: ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "{\"password\": \"p@ss w0rd\", \"nextPageToken\": \"CiAKGjBpNDd2\"}",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
];

/// The caller's Config Center secret: a platform secret, scrubbed from every result.
const PLATFORM_SECRET: &str = "vault-key-Zq8Xw3Lp9";

async fn app() -> (TestApp, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let settings = ToolServiceSettings {
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            ws.path().join("workspaces"),
        )),
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    app.config_secret("vault", PLATFORM_SECRET).await;
    (app, ws)
}

async fn execute(app: &TestApp, tool: &str, arguments: Value) -> TestResponse {
    app.post(
        &format!("/api/v1/tools/{tool}/execute"),
        &json!({"arguments": arguments}),
    )
    .await
}

/// The tool's result content; fails the test on an error.
async fn ok(app: &TestApp, tool: &str, arguments: Value) -> Value {
    let res = execute(app, tool, arguments).await;
    let body = res.assert_ok(StatusCode::OK);
    assert_ne!(body["isError"], true, "{tool}: {body}");
    body
}

fn corpus_text() -> String {
    CORPUS.join("\n")
}

#[tokio::test]
async fn the_users_own_data_round_trips_byte_for_byte_through_read_edit_write() {
    let (app, _ws) = app().await;
    let text = corpus_text();

    // Notes: add, read, edit the text it read, read again.
    let added = ok(&app, "add_note", json!({"title": "creds", "content": text})).await;
    let id = added.to_string();
    let id = id
        .split("\"id\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the note's id")
        .to_owned();
    let listed = ok(&app, "list_notes", json!({})).await;
    let read = find_string(&listed, "content").expect("the note's content");
    assert_eq!(read, text, "list_notes changed the user's note");
    let edited = format!("{read}\nnew line");
    ok(
        &app,
        "update_note",
        json!({"noteId": id, "content": edited}),
    )
    .await;
    let listed = ok(&app, "list_notes", json!({})).await;
    assert_eq!(find_string(&listed, "content").unwrap(), edited);

    // A workspace `.env`: write, read, change another line, write back, read.
    ok(&app, "write_file", json!({"path": ".env", "content": text})).await;
    let read = ok(&app, "read_file", json!({"path": ".env"})).await;
    let content = find_string(&read, "content").expect("read_file's content");
    assert_eq!(content, text, "read_file changed the user's file");
    let edited = content.replace("wifi", "WIFI");
    ok(
        &app,
        "write_file",
        json!({"path": ".env", "content": edited}),
    )
    .await;
    let read = ok(&app, "read_file", json!({"path": ".env"})).await;
    assert_eq!(find_string(&read, "content").unwrap(), edited);

    // A custom table's row and a memory.
    ok(
        &app,
        "create_custom_table",
        json!({"table": "creds", "columns": [{"name": "line", "type": "text"}]}),
    )
    .await;
    for line in CORPUS {
        ok(
            &app,
            "add_custom_record",
            json!({"table": "creds", "data": {"line": line}}),
        )
        .await;
        ok(&app, "remember", json!({"content": line, "type": "fact"})).await;
    }
    let rows = ok(&app, "list_custom_records", json!({"table": "creds"})).await;
    let memories = ok(&app, "recall", json!({"query": "password key token"})).await;
    for line in CORPUS {
        let quoted = serde_json::to_string(line).unwrap();
        assert!(rows.to_string().contains(&quoted), "row {line}: {rows}");
        assert!(!rows.to_string().contains("[REDACTED]"), "{rows}");
        let all = ok(&app, "recall", json!({"query": line})).await;
        assert!(
            all.to_string().contains(&quoted) || memories.to_string().contains(&quoted),
            "memory {line}: {all}"
        );
    }

    // A generated password is the caller's value.
    let generated = ok(&app, "generate_password", json!({"length": 16})).await;
    let password = find_string(&generated, "password").expect("a password");
    assert_eq!(password.chars().count(), 16, "{generated}");
    assert_ne!(password, "[REDACTED]");

    // An error naming a path is not mangled.
    let outside = execute(&app, "read_file", json!({"path": "/etc/passwd"})).await;
    assert!(outside.text.contains("/etc/passwd"), "{}", outside.text);
    assert!(!outside.text.contains("[REDACTED]"), "{}", outside.text);
}

#[tokio::test]
async fn platform_secrets_never_leave_and_their_placeholder_is_never_written_back() {
    let (app, _ws) = app().await;
    let text = format!("the vault key is {PLATFORM_SECRET}\nother: line");

    // A file holding the caller's exact Config Center secret reads back with it hidden.
    ok(
        &app,
        "write_file",
        json!({"path": "keys.txt", "content": text}),
    )
    .await;
    let read = ok(&app, "read_file", json!({"path": "keys.txt"})).await;
    assert!(!read.to_string().contains(PLATFORM_SECRET), "{read}");
    let shown = find_string(&read, "content").unwrap();
    assert!(shown.contains("[REDACTED]"), "{shown}");
    // Writing back what was read (one other line changed) is refused, naming the fix ...
    let back = execute(
        &app,
        "write_file",
        json!({"path": "keys.txt", "content": shown.replace("other", "OTHER")}),
    )
    .await;
    back.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(back.text.contains("edit_file"), "{}", back.text);
    // ... the file still holds the secret (edit_file of the other line works) ...
    ok(
        &app,
        "edit_file",
        json!({"path": "keys.txt", "oldText": "other", "newText": "OTHER"}),
    )
    .await;
    let bytes = std::fs::read_to_string(workspace_file(&app, "keys.txt")).unwrap();
    assert_eq!(bytes, text.replace("other", "OTHER"));

    // The same for a note's field.
    let added = ok(&app, "add_note", json!({"title": "vault", "content": text})).await;
    let id = find_string(&added, "id").unwrap();
    let listed = ok(&app, "list_notes", json!({})).await;
    let shown = find_string(&listed, "content").unwrap();
    assert!(shown.contains("[REDACTED]") && !listed.to_string().contains(PLATFORM_SECRET));
    let back = execute(&app, "update_note", json!({"noteId": id, "content": shown})).await;
    back.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    let stored = app
        .get(&format!("/api/v1/data/notes/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert!(stored.to_string().contains(PLATFORM_SECRET), "{stored}");

    // Code's results keep both: the platform secret and the credential patterns are scrubbed.
    let code = format!(
        "return {{mine: '{PLATFORM_SECRET}', b64: utils.base64Encode('{PLATFORM_SECRET}'), \
         cfg: 'password: hunter2-long', token: 'ghp_0123456789abcdefghijABCDEFGHIJ012345'}};"
    );
    app.create_tool(&json!({
        "name": "leaky",
        "description": "returns credentials",
        "parameters": {"type": "object"},
        "code": code,
    }))
    .await;
    let leaked = ok(&app, "leaky", json!({})).await;
    let leaked_text = leaked.to_string();
    assert!(!leaked_text.contains(PLATFORM_SECRET), "{leaked_text}");
    assert!(!leaked_text.contains("hunter2-long"), "{leaked_text}");
    assert!(!leaked_text.contains("ghp_0123"), "{leaked_text}");
    assert!(
        leaked_text.contains("password: [REDACTED]"),
        "{leaked_text}"
    );
}

/// The first string under `key` anywhere in `value`.
fn find_string(value: &Value, key: &str) -> Option<String> {
    match value {
        Value::Object(map) => map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| map.values().find_map(|v| find_string(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_string(v, key)),
        _ => None,
    }
}

/// Where the unauthenticated caller's (user `default`) workspace keeps `name` on disk.
fn workspace_file(app: &TestApp, name: &str) -> std::path::PathBuf {
    let workspaces = app
        .state
        .service
        .workspaces()
        .expect("the server has workspaces");
    let ws = workspaces
        .for_owner("default", None)
        .expect("the caller's workspace");
    ws.root_path().join(name)
}
