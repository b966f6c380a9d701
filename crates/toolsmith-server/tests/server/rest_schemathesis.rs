//! Schemathesis (from PyPI) against the real router on a real socket: the OpenAPI document
//! validates, and a bounded property-based run with every check finds no 5xx and no answer that
//! breaks the document (`scripts/schemathesis.sh`).
//!
//! Needs python3 with venv and PyPI the first time (the script installs into the repo's ignored
//! `.venv`). When that is missing the test fails, or skips with `TOOLSMITH_ALLOW_SKIP=1`
//! (`toolsmith_core::testkit`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::Command;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{ToolService, ToolServiceSettings};

/// What the script exits with when it cannot install its tools.
const PREREQUISITE_MISSING: i32 = 3;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_and_no_schema_break() {
    let has_python = Command::new("python3")
        .args(["-c", "import venv"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success());
    if !has_python {
        return toolsmith_core::testkit::missing(
            "python3 with venv (for schemathesis)",
            "`python3 -c 'import venv'` failed",
        );
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let service = ToolService::open_sqlite(
        ToolServiceSettings::default(),
        &dir.path().join("toolsmith.db"),
        toolsmith_service::Connectors::default(),
    )
    .await
    .expect("service opens");
    let state = AppState::new(service, Arc::new(ServerSettings::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolsmith_server::app::serve(listener, state, async move {
        let _ = stop_rx.await;
    }));

    let output = Command::new("bash")
        .arg(repo_root().join("scripts/schemathesis.sh"))
        .arg(format!("http://{addr}"))
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("the script runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");

    let _ = stop_tx.send(());
    server
        .await
        .expect("server task")
        .expect("server stops cleanly");

    if output.status.code() == Some(PREREQUISITE_MISSING) {
        return toolsmith_core::testkit::missing(
            "schemathesis",
            "scripts/schemathesis.sh could not install it (see above)",
        );
    }
    assert!(
        output.status.success(),
        "schemathesis found failures (exit {:?}); see the report above",
        output.status.code()
    );
    assert!(
        stdout.contains("openapi.json: OK"),
        "the document was validated"
    );
}
