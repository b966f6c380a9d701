//! A store that cannot write (issue 12, item 12), for real: `toolsmith serve` runs under a file
//! size limit (`prlimit --fsize`, with `SIGXFSZ` ignored as a service manager may), so SQLite's
//! writes past it fail as they do on a full disk. Calls keep succeeding; their usage records
//! wait in the spool instead of being dropped; `/readyz` says the instance cannot write;
//! a REST write answers `503 unavailable`, not `500`; `/metrics` counts the failed writes and
//! spooled records. Once the limit is lifted every record is written: the usage count is exact
//! and nothing was lost.

use std::process::Command;

use serde_json::json;

use super::{Env, Server, prlimit_available};

/// The value of an unlabelled series in the server's `/metrics`.
fn metric(server: &Server, name: &str) -> f64 {
    let text = server.get("/metrics").body;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no series {name} in:\n{text}"))
}

#[test]
fn usage_survives_a_store_that_cannot_write_and_readiness_says_so() {
    if !prlimit_available() {
        return;
    }
    let env = Env::new();
    // The store and the tool exist before the limit applies.
    let tool = json!({
        "name": "work",
        "description": "d",
        "parameters": {"type": "object"},
        "code": "return 1",
    });
    let file = env.write("work.json", &tool.to_string());
    let (code, _, stderr) = env.run(&["tool", "create", "--file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let db = std::fs::metadata(env.data_dir().join("toolsmith.db"))
        .unwrap()
        .len();
    // Room for the server to open the store and write a few batches to the WAL, no more.
    let limit = format!("--fsize={}:unlimited", db + 64 * 1024);
    let server = env.serve_via(
        &[
            "prlimit",
            &limit,
            "sh",
            "-c",
            "trap '' XFSZ; exec \"$0\" \"$@\"",
        ],
        &[],
        &[],
    );
    assert_eq!(server.get("/readyz").status, 200, "{}", server.stderr());

    // Calls succeed while their records cannot be written. How many calls fill the room
    // depends on how the records were batched, so the test calls until a write has failed
    // (each call is answered only after its record is queued), then a few more.
    let mut calls = 0;
    while metric(&server, "toolsmith_usage_write_failures_total") == 0.0 {
        assert!(
            calls < 5_000,
            "5,000 calls and no usage write failed\nstderr: {}",
            server.stderr()
        );
        let res = server.post("/api/v1/tools/work/execute", &json!({"arguments": {}}));
        assert_eq!(res.status, 200, "{}", res.body);
        calls += 1;
    }
    for _ in 0..20 {
        let res = server.post("/api/v1/tools/work/execute", &json!({"arguments": {}}));
        assert_eq!(res.status, 200, "{}", res.body);
        calls += 1;
    }
    assert!(metric(&server, "toolsmith_usage_records_spooled") > 0.0);
    let ready = server.get("/readyz");
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert_eq!(ready.header("retry-after"), Some("1"));
    // A write through the API: 503 with the code the docs name, not 500. A write can still
    // fit where the failed batch did not (SQLite may have reset its WAL meanwhile), so large
    // writes are made until one meets the limit; every one that does not fit must be a 503.
    let padding = format!("return 2 // {}", "x".repeat(150 * 1024));
    let mut created = None;
    for attempt in 0..20 {
        let res = server.post(
            "/api/v1/custom-tools",
            &json!({"name": format!("later_{attempt}"), "description": "d", "parameters": {"type": "object"}, "code": padding}),
        );
        if res.status != 201 {
            created = Some(res);
            break;
        }
    }
    let created = created.expect("20 tools of 150 KB were all written under the file size limit");
    assert_eq!(created.status, 503, "{}", created.body);
    assert_eq!(created.json()["error"]["code"], json!("unavailable"));
    assert!(created.header("retry-after").is_some());

    // Space again: the spool drains, readiness comes back, nothing was lost.
    let lifted = Command::new("prlimit")
        .args([
            "--pid",
            &server.child.id().to_string(),
            "--fsize=unlimited:unlimited",
        ])
        .status()
        .expect("prlimit --pid");
    assert!(lifted.success());
    server.wait_until("readiness after the limit is lifted", || {
        server.get("/readyz").status == 200
    });
    assert_eq!(metric(&server, "toolsmith_usage_records_spooled"), 0.0);
    assert_eq!(metric(&server, "toolsmith_usage_records_lost_total"), 0.0);
    let tool = server.get("/api/v1/custom-tools/work");
    assert_eq!(
        tool.json()["data"]["usageCount"],
        json!(calls),
        "every call's usage is recorded"
    );
    let log = server.stderr();
    assert!(
        log.contains("cannot record tool usage; keeping the records and retrying"),
        "{log}"
    );
    assert!(log.contains("tool usage is recorded again"), "{log}");
}
