//! Search as a model meets it (issue 35): `search_tools` through MCP, with every tool group on,
//! over the built-ins alone and with 1,000 custom tools beside them.
//!
//! - `tests/data/search_everyday.json` — 32 everyday requests ("show me my files", "every
//!   Monday at 9am …"), each with the tools that answer it: at least 28 must find one of them
//!   in the top 3.
//! - `tests/data/search_misses.json` — 20 capabilities Toolsmith does not have ("book a flight",
//!   "order a pizza"): at least 18 must get an honest miss (no tool offered, `create_tool`
//!   named), not unrelated tools.
//! - every reply, with 1,000 custom tools, stays under 800 cl100k tokens (the text a model
//!   reads).
//!
//! The 1,000 custom tools are made deterministically from 50 business domains (invoices,
//! shipments, deployments …) and 20 actions, with parameters of their own: realistic neighbours
//! for the built-ins, none of which does anything the miss corpus asks for.

use std::sync::LazyLock;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_service::{Actor, CreateTool, ToolServiceSettings};

use crate::mcp_protocol::Session;
use crate::rest_support::TestApp;

/// Most cl100k tokens one `search_tools` reply may cost with 1,000 custom tools.
const REPLY_TOKEN_BUDGET: usize = 800;

fn corpus(file: &str) -> Value {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The cl100k_base tokens of `text` (OpenAI's GPT-4 encoding, bundled in `tiktoken-rs`).
pub(crate) fn cl100k_tokens(text: &str) -> usize {
    static BPE: LazyLock<tiktoken_rs::CoreBPE> =
        LazyLock::new(|| tiktoken_rs::cl100k_base().expect("the bundled cl100k_base"));
    BPE.encode_ordinary(text).len()
}

/// An application with every tool group switched on (through REST, as an admin does).
pub(crate) async fn all_groups_on() -> TestApp {
    let service = ToolServiceSettings {
        max_tools_per_owner: 2_000,
        ..Default::default()
    };
    let app = TestApp::with_configs(service, Default::default()).await;
    let groups = app
        .get("/api/v1/tool-groups")
        .await
        .assert_ok(StatusCode::OK);
    for group in groups["groups"].as_array().expect("groups") {
        if group["enabled"] != json!(true) {
            let id = group["id"].as_str().expect("a group id");
            app.json(
                Method::PUT,
                &format!("/api/v1/tool-groups/{id}"),
                &json!({"enabled": true}),
            )
            .await
            .assert_ok(StatusCode::OK);
        }
    }
    app
}

/// A business domain of the generated custom tools: `(noun, plural, system, fields)`.
const DOMAINS: &[(&str, &str, &str, &[&str])] = &[
    (
        "invoice",
        "invoices",
        "the accounting system",
        &["customer_id", "amount", "due_date"],
    ),
    (
        "order",
        "orders",
        "the web shop",
        &["order_id", "status", "placed_after"],
    ),
    (
        "shipment",
        "shipments",
        "the carrier's portal",
        &["tracking_code", "carrier", "destination"],
    ),
    (
        "sku",
        "stock items",
        "the inventory",
        &["sku", "warehouse", "quantity"],
    ),
    (
        "customer",
        "customer accounts",
        "the CRM",
        &["account_id", "segment", "region"],
    ),
    (
        "lead",
        "sales leads",
        "the sales pipeline",
        &["lead_id", "stage", "owner"],
    ),
    (
        "deal",
        "deals",
        "the sales pipeline",
        &["deal_id", "value", "close_date"],
    ),
    (
        "employee",
        "employee records",
        "the HR system",
        &["employee_id", "department", "manager"],
    ),
    (
        "leave_request",
        "leave requests",
        "the HR system",
        &["employee_id", "start_date", "days"],
    ),
    (
        "timesheet",
        "timesheets",
        "the time tracker",
        &["week", "employee_id", "hours"],
    ),
    (
        "payroll_run",
        "payroll runs",
        "the payroll service",
        &["period", "country", "currency"],
    ),
    (
        "deployment",
        "deployments",
        "the release pipeline",
        &["service", "environment", "version"],
    ),
    (
        "incident",
        "incidents",
        "the on-call tracker",
        &["severity", "service", "opened_after"],
    ),
    (
        "alert_rule",
        "alert rules",
        "the monitoring stack",
        &["metric", "threshold", "window"],
    ),
    (
        "metric",
        "metrics",
        "the dashboards",
        &["metric", "from", "to"],
    ),
    (
        "log_stream",
        "log streams",
        "the log store",
        &["service", "level", "since"],
    ),
    (
        "feature_flag",
        "feature flags",
        "the flag service",
        &["flag_key", "environment", "rollout"],
    ),
    (
        "experiment",
        "A/B experiments",
        "the experiment platform",
        &["experiment_id", "variant", "metric"],
    ),
    (
        "backup",
        "database backups",
        "the backup vault",
        &["database", "snapshot_id", "retention_days"],
    ),
    (
        "vm",
        "virtual machines",
        "the cloud account",
        &["instance_id", "zone", "size"],
    ),
    (
        "dns_record",
        "DNS records",
        "the DNS provider",
        &["zone", "record_type", "value"],
    ),
    (
        "certificate",
        "TLS certificates",
        "the certificate store",
        &["domain", "expires_before", "issuer"],
    ),
    (
        "build",
        "CI builds",
        "the CI server",
        &["pipeline", "branch", "build_number"],
    ),
    (
        "package_release",
        "package releases",
        "the artifact registry",
        &["package", "version", "channel"],
    ),
    (
        "product",
        "products",
        "the product catalog",
        &["product_id", "price", "category"],
    ),
    (
        "price_list",
        "price lists",
        "the pricing engine",
        &["list_id", "currency", "valid_from"],
    ),
    (
        "coupon",
        "discount coupons",
        "the web shop",
        &["code", "percent_off", "expires"],
    ),
    (
        "refund",
        "refunds",
        "the payments service",
        &["payment_id", "amount", "reason"],
    ),
    (
        "subscription",
        "subscriptions",
        "the billing service",
        &["plan", "customer_id", "renews_on"],
    ),
    (
        "supplier",
        "suppliers",
        "the procurement system",
        &["supplier_id", "country", "rating"],
    ),
    (
        "purchase_order",
        "purchase orders",
        "the procurement system",
        &["po_number", "supplier_id", "total"],
    ),
    (
        "contract",
        "contracts",
        "the legal repository",
        &["contract_id", "counterparty", "renewal_date"],
    ),
    (
        "warehouse_slot",
        "warehouse slots",
        "the warehouse system",
        &["aisle", "bin", "capacity"],
    ),
    (
        "fleet_vehicle",
        "fleet vehicles",
        "the fleet manager",
        &["vehicle_id", "mileage", "service_due"],
    ),
    (
        "course",
        "courses",
        "the learning platform",
        &["course_id", "term", "instructor"],
    ),
    (
        "enrollment",
        "enrollments",
        "the learning platform",
        &["student_id", "course_id", "status"],
    ),
    (
        "grade",
        "grades",
        "the gradebook",
        &["student_id", "assignment", "score"],
    ),
    (
        "survey",
        "survey responses",
        "the survey tool",
        &["survey_id", "question", "answer"],
    ),
    (
        "listing",
        "property listings",
        "the real-estate site",
        &["listing_id", "city", "asking_price"],
    ),
    (
        "tenant",
        "tenants",
        "the property manager",
        &["unit", "lease_end", "rent"],
    ),
    (
        "maintenance_job",
        "maintenance jobs",
        "the facilities desk",
        &["building", "priority", "assignee"],
    ),
    (
        "article",
        "knowledge-base articles",
        "the help center",
        &["article_id", "locale", "section"],
    ),
    (
        "support_case",
        "support cases",
        "the help desk",
        &["case_id", "priority", "queue"],
    ),
    (
        "sla_policy",
        "SLA policies",
        "the help desk",
        &["policy_id", "response_minutes", "tier"],
    ),
    (
        "campaign",
        "marketing campaigns",
        "the marketing suite",
        &["campaign_id", "channel", "budget"],
    ),
    (
        "segment",
        "audience segments",
        "the marketing suite",
        &["segment_id", "rule", "size"],
    ),
    (
        "api_key",
        "partner API keys",
        "the developer portal",
        &["partner", "scope", "expires"],
    ),
    (
        "webhook",
        "outgoing webhooks",
        "the integration hub",
        &["endpoint", "event", "secret_ref"],
    ),
    (
        "report_job",
        "analytics report jobs",
        "the data warehouse",
        &["query_id", "schedule", "format"],
    ),
    (
        "dataset",
        "datasets",
        "the data lake",
        &["dataset", "partition", "owner"],
    ),
];

/// An action of the generated custom tools: `(verb of the name, what it does, extra field)`.
const ACTIONS: &[(&str, &str, &str)] = &[
    (
        "list",
        "Lists the {p} of {s}, newest first, filtered by {f0}",
        "page",
    ),
    (
        "get",
        "Fetches one of the {p} of {s} by {f0}, with every field",
        "include_history",
    ),
    (
        "create",
        "Creates a new entry among the {p} of {s} from {f0} and {f1}",
        "dry_run",
    ),
    (
        "update",
        "Changes fields of one of the {p} of {s} ({f1}, {f2})",
        "reason",
    ),
    (
        "archive",
        "Archives one of the {p} of {s}; archived entries can be restored",
        "note",
    ),
    ("search", "Searches the {p} of {s} by {f0} or {f1}", "query"),
    (
        "export",
        "Exports the {p} of {s} as CSV or JSON for a period",
        "format",
    ),
    (
        "import",
        "Imports {p} into {s} from an uploaded CSV",
        "source_url",
    ),
    (
        "count",
        "Counts the {p} of {s}, grouped by {f1}",
        "group_by",
    ),
    (
        "report",
        "Builds a weekly report on the {p} of {s}: totals by {f1} and {f2}",
        "week",
    ),
    (
        "validate",
        "Checks the {p} of {s} for missing {f1} and inconsistent {f2}",
        "strict",
    ),
    (
        "sync",
        "Synchronises the {p} of {s} with the data warehouse",
        "full",
    ),
    (
        "approve",
        "Approves a pending change to the {p} of {s}",
        "approver",
    ),
    (
        "assign",
        "Assigns one of the {p} of {s} to a team member",
        "assignee",
    ),
    (
        "close",
        "Closes one of the {p} of {s} and records who closed it",
        "resolution",
    ),
    (
        "reopen",
        "Reopens a closed entry of the {p} of {s}",
        "comment",
    ),
    (
        "forecast",
        "Forecasts the {p} of {s} for the next quarter from their history",
        "horizon",
    ),
    (
        "compare",
        "Compares two periods of the {p} of {s} by {f1}",
        "baseline",
    ),
    (
        "tag",
        "Adds labels to the {p} of {s} for reporting",
        "labels",
    ),
    (
        "audit",
        "Lists who changed the {p} of {s}, and when",
        "since",
    ),
];

/// The 1,000 custom tools: every domain with every action, in a fixed order.
pub(crate) fn custom_tools() -> Vec<CreateTool> {
    let mut out = Vec::with_capacity(DOMAINS.len() * ACTIONS.len());
    for (noun, plural, system, fields) in DOMAINS {
        for (verb, what, extra) in ACTIONS {
            let description = what
                .replace("{p}", plural)
                .replace("{s}", system)
                .replace("{f0}", &fields[0].replace('_', " "))
                .replace("{f1}", &fields[1].replace('_', " "))
                .replace("{f2}", &fields[2].replace('_', " "));
            let mut properties = serde_json::Map::new();
            for field in fields.iter().chain([extra]) {
                properties.insert(
                    (*field).to_owned(),
                    json!({"type": "string", "description": field.replace('_', " ")}),
                );
            }
            out.push(CreateTool {
                kind: Default::default(),
                name: format!("{verb}_{noun}"),
                description: format!("{description}."),
                parameters: json!({"type": "object", "properties": properties, "required": [fields[0]]}),
                code: format!("return {{ok: true, action: '{verb}', entity: '{noun}'}};"),
                category: Some(system.trim_start_matches("the ").to_owned()),
                tags: vec![(*noun).replace('_', " ")],
                permissions: Vec::new(),
                requires_approval: None,
                metadata: None,
            });
        }
    }
    out
}

pub(crate) async fn add_custom_tools(app: &TestApp) {
    let person = Actor::user("default");
    for tool in custom_tools() {
        let name = tool.name.clone();
        app.state
            .service
            .create(&person, tool)
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
    }
}

/// One `search_tools` call: the reply as the model reads it (its text) and parsed.
async fn search(session: &Session, query: &str) -> (Value, String) {
    let (is_error, structured, text) = session.ok("search_tools", json!({"query": query})).await;
    assert!(!is_error, "search_tools {query:?} failed: {text}");
    let reply = if structured.is_null() {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{query:?}: {e}: {text}"))
    } else {
        structured
    };
    (reply, text)
}

fn offered(reply: &Value) -> Vec<String> {
    reply["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What one pass over both corpora found.
struct Scores {
    found: usize,
    misses: usize,
    report: Vec<String>,
    most_tokens: (usize, String),
}

async fn run_corpora(session: &Session) -> Scores {
    let everyday = corpus("search_everyday.json");
    let misses = corpus("search_misses.json");
    let mut scores = Scores {
        found: 0,
        misses: 0,
        report: Vec::new(),
        most_tokens: (0, String::new()),
    };
    let count = |text: &str, query: &str, scores: &mut Scores| {
        let tokens = cl100k_tokens(text);
        if tokens > scores.most_tokens.0 {
            scores.most_tokens = (tokens, query.to_owned());
        }
    };
    for case in everyday["requests"].as_array().expect("requests") {
        let query = case["query"].as_str().expect("query");
        let expect: Vec<&str> = case["expect"]
            .as_array()
            .expect("expect")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let (reply, text) = search(session, query).await;
        count(&text, query, &mut scores);
        let top: Vec<String> = offered(&reply).into_iter().take(3).collect();
        if top.iter().any(|name| expect.contains(&name.as_str())) {
            scores.found += 1;
        } else {
            scores.report.push(format!(
                "not in top 3: {query:?} → {top:?} (expected one of {expect:?})"
            ));
        }
    }
    for case in misses["requests"].as_array().expect("requests") {
        let query = case.as_str().expect("a request");
        let (reply, text) = search(session, query).await;
        count(&text, query, &mut scores);
        let tools = offered(&reply);
        if tools.is_empty() && text.contains("create_tool") {
            scores.misses += 1;
        } else {
            scores
                .report
                .push(format!("no honest miss: {query:?} → {tools:?}"));
        }
    }
    scores
}

fn check(scores: &Scores, catalogue: &str) {
    let report = scores.report.join("\n  ");
    eprintln!(
        "search quality ({catalogue}): {}/32 everyday in the top 3, {}/20 honest misses, largest reply {} tokens ({:?})\n  {report}",
        scores.found, scores.misses, scores.most_tokens.0, scores.most_tokens.1
    );
    assert!(
        scores.found >= 28,
        "{catalogue}: only {}/32 everyday requests found their tool in the top 3:\n  {report}",
        scores.found
    );
    assert!(
        scores.misses >= 18,
        "{catalogue}: only {}/20 missing capabilities got an honest miss:\n  {report}",
        scores.misses
    );
}

#[tokio::test]
async fn everyday_requests_find_their_tool_and_missing_capabilities_get_an_honest_miss() {
    let app = all_groups_on().await;
    let session = Session::open(&app.state, "default").await;
    let scores = run_corpora(&session).await;
    check(&scores, "built-ins, every group on");
}

#[tokio::test]
async fn with_1000_custom_tools_search_still_finds_and_misses_and_stays_under_800_tokens() {
    let app = all_groups_on().await;
    add_custom_tools(&app).await;
    let session = Session::open(&app.state, "default").await;
    let scores = run_corpora(&session).await;
    check(&scores, "1,000 custom tools");
    assert!(
        scores.most_tokens.0 < REPLY_TOKEN_BUDGET,
        "the reply to {:?} costs {} cl100k tokens (budget {REPLY_TOKEN_BUDGET})",
        scores.most_tokens.1,
        scores.most_tokens.0
    );
}

#[tokio::test]
async fn a_switched_off_groups_tool_is_found_and_named_with_the_group_that_serves_it() {
    // Out of the box `webFetch` and `codeExecution` are off.
    let app = TestApp::new().await;
    let session = Session::open(&app.state, "default").await;
    for (query, tool, group) in [
        ("fetch a web page", "fetch_web_page", "webFetch"),
        ("run python code", "execute_python", "codeExecution"),
    ] {
        let (reply, text) = search(&session, query).await;
        let entry = reply["tools"]
            .as_array()
            .and_then(|tools| tools.iter().find(|t| t["name"] == tool))
            .unwrap_or_else(|| panic!("{query:?} does not name {tool}: {text}"));
        assert_eq!(entry["offGroup"], group, "{text}");
        assert!(
            text.contains(&format!("toolsmith groups enable {group}")),
            "{query:?}: the reply says how to switch {group} on: {text}"
        );
        // It is not callable until then: no tool of an enabled group was offered instead.
        assert!(!text.contains("No tool here does that"), "{text}");
    }
}

#[tokio::test]
async fn a_search_reply_is_bounded_by_its_limit_and_all_pages() {
    let app = all_groups_on().await;
    let session = Session::open(&app.state, "default").await;
    let (is_error, reply, text) = session
        .ok("search_tools", json!({"query": "files", "limit": 2}))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(offered(&reply).len(), 2, "{text}");
    assert!(reply["more"].as_u64().unwrap_or(0) > 0, "{text}");
    assert!(reply["tools"][0]["summary"].is_string(), "{text}");
    assert!(text.contains("use_tool"), "what to call next: {text}");
    // The default is 5; a limit past 20 counts as 20.
    let (reply, _) = search(&session, "files").await;
    assert_eq!(offered(&reply).len(), 5, "{reply}");
    let (_, reply, _) = session
        .ok("search_tools", json!({"query": "all", "limit": 500}))
        .await;
    assert_eq!(offered(&reply).len(), 20, "{reply}");
    let total = reply["total"].as_u64().expect("a listing has its total");
    assert!(total > 100, "{reply}");
    // "all" pages on with offset, by name, without repeats.
    let (_, next, _) = session
        .ok(
            "search_tools",
            json!({"query": "all", "limit": 20, "offset": 20}),
        )
        .await;
    let first = offered(&reply);
    let second = offered(&next);
    assert_eq!(second.len(), 20, "{next}");
    assert!(first.last() < second.first(), "{first:?} then {second:?}");
    let (_, past, text) = session
        .ok("search_tools", json!({"query": "all", "offset": total + 1}))
        .await;
    assert!(offered(&past).is_empty(), "{text}");
    assert!(text.contains("no more matches"), "{text}");
}
