//! npm dependencies of JS tools through REST (issue 33), against the public npm registry: spec
//! 002's own `data.parse_csv` with `csv-parse`, created and called as written; its calls run
//! from the package cache with the registry out of reach; a dependency change is a new version;
//! what the service refuses and what it never trusts from a caller (the lock).

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;
use toolsmith_service::packages::{DEFAULT_NPM_REGISTRY, NpmSettings};

use crate::rest_support::TestApp;

/// Spec 002's example (docs of dynamic-mcp's `dynamic.tool.create`), verbatim.
const PARSE_CSV: &str = r#"{
  "tool": {
    "name": "data.parse_csv",
    "description": "Parse CSV text into JSON rows",
    "code": "const { parse } = await import('csv-parse/sync');\nconst records = parse(args.csv, { columns: true });\nreturn { rows: records, count: records.length };",
    "dependencies": [
      { "name": "csv-parse", "version": "^5.5.0" }
    ],
    "image": "node:lts-slim",
    "timeoutMs": 30000
  }
}"#;

/// Debian's bundle of the machine's trusted roots.
const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

fn settings(registry: &str, cache: &std::path::Path) -> ToolServiceSettings {
    ToolServiceSettings {
        name_rule: toolsmith_core::name::NameRule::Wide,
        npm: NpmSettings {
            registry: registry.to_owned(),
            cache_dir: Some(cache.to_path_buf()),
            // The machine's roots too, as an operator behind a TLS-inspecting proxy sets them.
            ca_file: Some(SYSTEM_ROOTS.into()).filter(|p: &std::path::PathBuf| p.exists()),
            ..NpmSettings::default()
        },
        ..ToolServiceSettings::default()
    }
}

/// The spec's tool as a REST create body: its fields, `image` and `timeoutMs` in `metadata`.
fn rest_body() -> Value {
    let spec: Value = serde_json::from_str(PARSE_CSV).unwrap();
    let tool = &spec["tool"];
    json!({
        "name": tool["name"],
        "description": tool["description"],
        "parameters": {"type": "object", "properties": {"csv": {"type": "string"}}, "required": ["csv"]},
        "code": tool["code"],
        "dependencies": tool["dependencies"],
        "metadata": {"image": tool["image"], "timeoutMs": tool["timeoutMs"]},
    })
}

/// A registry URL nothing listens on.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

#[tokio::test]
async fn spec_002s_parse_csv_installs_csv_parse_and_runs_from_the_cache_with_the_registry_out_of_reach()
 {
    let cache = tempfile::tempdir().unwrap();
    let app = TestApp::with_configs(
        settings(DEFAULT_NPM_REGISTRY, cache.path()),
        ServerSettings::default(),
    )
    .await;
    let tool = app
        .post("/api/v1/custom-tools", &rest_body())
        .await
        .assert_ok(StatusCode::CREATED);
    let lock = &tool["metadata"]["packageLock"];
    let csv_parse = lock["root"]["csv-parse"].as_str().unwrap().to_owned();
    assert!(csv_parse.starts_with("csv-parse@5."), "{lock}");
    assert!(
        lock["packages"][&csv_parse]["integrity"]
            .as_str()
            .unwrap()
            .starts_with("sha512-"),
        "{lock}"
    );
    assert_eq!(
        tool["metadata"]["dependencies"],
        json!([{"name": "csv-parse", "version": "^5.5.0"}])
    );

    let csv = "name,qty\nwidget,3\n\"gadget, large\",5\n";
    let expected = json!({
        "rows": [{"name": "widget", "qty": "3"}, {"name": "gadget, large", "qty": "5"}],
        "count": 2,
    });
    let path = format!(
        "/api/v1/custom-tools/{}/execute",
        tool["id"].as_str().unwrap()
    );
    let res = app
        .post(&path, &json!({"arguments": {"csv": csv}}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(res["content"], expected, "{res}");

    // The same store and cache, the registry now a closed port: the call needs no network.
    let offline = app
        .reopen(
            settings(&closed_port(), cache.path()),
            ServerSettings::default(),
        )
        .await;
    let res = offline
        .post(&path, &json!({"arguments": {"csv": csv}}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(res["content"], expected, "{res}");
    assert_eq!(res["isError"], false, "{res}");
}

#[tokio::test]
async fn dependencies_are_part_of_the_version_and_the_lock_is_never_the_callers() {
    let cache = tempfile::tempdir().unwrap();
    let app = TestApp::with_configs(
        settings(DEFAULT_NPM_REGISTRY, cache.path()),
        ServerSettings::default(),
    )
    .await;
    // A caller's own `packageLock` is replaced by what the registry resolves.
    let forged = json!({"root": {"csv-parse": "csv-parse@0.0.1"}, "packages": {"csv-parse@0.0.1": {
        "name": "csv-parse", "version": "0.0.1", "integrity": "sha512-AAAA", "tarball": "http://127.0.0.1:9/x.tgz"}}});
    let mut body = rest_body();
    body["metadata"]["packageLock"] = forged;
    let tool = app
        .post("/api/v1/custom-tools", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    assert!(
        tool["metadata"]["packageLock"]["root"]["csv-parse"]
            .as_str()
            .unwrap()
            .starts_with("csv-parse@5."),
        "{tool}"
    );
    assert_eq!(tool["version"], 1);
    let id = tool["id"].as_str().unwrap().to_owned();

    // Another range: a new version of the tool, with its own lock.
    let updated = app
        .patch(
            &format!("/api/v1/custom-tools/{id}"),
            &json!({"dependencies": [{"name": "csv-parse", "version": "~5.5.0"}]}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(updated["version"], 2, "{updated}");
    assert!(
        updated["metadata"]["packageLock"]["root"]["csv-parse"]
            .as_str()
            .unwrap()
            .starts_with("csv-parse@5.5."),
        "{updated}"
    );
    // The same declaration again changes nothing.
    let same = app
        .patch(
            &format!("/api/v1/custom-tools/{id}"),
            &json!({"dependencies": [{"name": "csv-parse", "version": "~5.5.0"}]}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(same["revision"], updated["revision"], "{same}");

    // What is refused, and why.
    for (body, expected) in [
        (
            json!({"name": "cmd_dep", "kind": "command", "description": "d", "parameters": {"type": "object"},
                   "code": "{\"command\": \"echo hi\"}", "dependencies": [{"name": "csv-parse", "version": "5"}]}),
            "dependencies are for JS tools",
        ),
        (
            json!({"name": "git_dep", "description": "d", "parameters": {"type": "object"}, "code": "return 1",
                   "dependencies": [{"name": "x", "version": "git+https://example.com/x.git"}]}),
            "only registry versions are installed",
        ),
        (
            json!({"name": "no_such_dep", "description": "d", "parameters": {"type": "object"}, "code": "return 1",
                   "dependencies": [{"name": "toolsmith-no-such-package-x9q2", "version": "1"}]}),
            "has no package 'toolsmith-no-such-package-x9q2'",
        ),
        (
            json!({"name": "bad_shape", "description": "d", "parameters": {"type": "object"}, "code": "return 1",
                   "dependencies": [{"package": "csv-parse"}]}),
            "dependencies must be a list of",
        ),
    ] {
        let message = app
            .post("/api/v1/custom-tools", &body)
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(message.contains(expected), "{body}: {message}");
    }
}

#[tokio::test]
async fn a_rollback_brings_back_the_versions_dependencies_and_lock_and_history_shows_them() {
    let cache = tempfile::tempdir().unwrap();
    let app = TestApp::with_configs(
        settings(DEFAULT_NPM_REGISTRY, cache.path()),
        ServerSettings::default(),
    )
    .await;
    let v1 = app
        .post("/api/v1/custom-tools", &rest_body())
        .await
        .assert_ok(StatusCode::CREATED);
    let id = v1["id"].as_str().unwrap().to_owned();
    // Version 2: another exact version, so another lock.
    let v2 = app
        .patch(
            &format!("/api/v1/custom-tools/{id}"),
            &json!({"dependencies": [{"name": "csv-parse", "version": "5.4.1"}]}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(v2["version"], 2, "{v2}");
    assert_eq!(
        v2["metadata"]["packageLock"]["root"]["csv-parse"],
        "csv-parse@5.4.1"
    );
    assert_ne!(v1["metadata"]["packageLock"], v2["metadata"]["packageLock"]);

    // The history holds each version's dependencies and lock.
    let history = app
        .get(&format!("/api/v1/custom-tools/{id}/versions"))
        .await
        .assert_ok(StatusCode::OK);
    let of = |version: i64| {
        history["versions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["version"] == version)
            .cloned()
            .unwrap_or_else(|| panic!("no version {version}: {history}"))
    };
    assert_eq!(
        of(1)["metadata"]["dependencies"],
        v1["metadata"]["dependencies"],
        "{history}"
    );
    assert_eq!(
        of(1)["metadata"]["packageLock"],
        v1["metadata"]["packageLock"],
        "{history}"
    );
    assert_eq!(
        of(2)["metadata"]["dependencies"],
        v2["metadata"]["dependencies"],
        "{history}"
    );
    assert_eq!(
        of(2)["metadata"]["packageLock"],
        v2["metadata"]["packageLock"],
        "{history}"
    );

    // Rolling back to version 1 restores its declaration and its lock, as version 3.
    let v3 = app
        .post(
            &format!("/api/v1/custom-tools/{id}/rollback"),
            &json!({"version": 1}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(v3["version"], 3, "{v3}");
    assert_eq!(
        v3["metadata"]["dependencies"], v1["metadata"]["dependencies"],
        "{v3}"
    );
    assert_eq!(
        v3["metadata"]["packageLock"], v1["metadata"]["packageLock"],
        "{v3}"
    );
    // The rest of the metadata is the tool's, not the version's.
    assert_eq!(v3["metadata"]["image"], "node:lts-slim", "{v3}");
    let res = app
        .post(
            &format!("/api/v1/custom-tools/{id}/execute"),
            &json!({"arguments": {"csv": "a\n1\n"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        res["content"],
        json!({"rows": [{"a": "1"}], "count": 1}),
        "{res}"
    );
}

#[tokio::test]
async fn a_dry_run_installs_the_definitions_dependencies_and_its_code_imports_them() {
    let cache = tempfile::tempdir().unwrap();
    let app = TestApp::with_configs(
        settings(DEFAULT_NPM_REGISTRY, cache.path()),
        ServerSettings::default(),
    )
    .await;
    let mut body = rest_body();
    body["testArgs"] = json!({"csv": "name,qty\nwidget,3\n"});
    let res = app
        .post("/api/v1/custom-tools/test", &body)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        res["content"],
        json!({"rows": [{"name": "widget", "qty": "3"}], "count": 1}),
        "{res}"
    );
    assert_eq!(res["isError"], false, "{res}");
    // Nothing is stored.
    let listed = app
        .get("/api/v1/custom-tools")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 0, "{listed}");

    // The same checks as a create: refused with the reason, before anything runs.
    for (dependencies, expected) in [
        (
            json!([{"name": "x", "version": "git+https://example.com/x.git"}]),
            "only registry versions are installed",
        ),
        (
            json!([{"name": "toolsmith-no-such-package-x9q2", "version": "1"}]),
            "has no package 'toolsmith-no-such-package-x9q2'",
        ),
    ] {
        let mut body = rest_body();
        body["dependencies"] = dependencies;
        body["testArgs"] = json!({"csv": "a\n1\n"});
        let message = app
            .post("/api/v1/custom-tools/test", &body)
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(message.contains(expected), "{message}");
    }
}
