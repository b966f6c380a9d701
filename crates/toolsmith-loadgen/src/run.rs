//! A load run: N clients, each on its own kept-alive connection, calling in a closed loop
//! (next call as soon as the previous answer arrived) through a warm-up and then a measured
//! window; every measured call's latency goes into the [`Summary`].
//!
//! What a call is depends on the [`Kind`]: an MCP `tools/call` of the load tool (the
//! benchmark), the REST execute of the same tool, or `GET /livez` (the HTTP floor) — the last
//! two are same-run baselines to read the MCP figures against.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::error::LoadError;
use crate::http::Conn;
use crate::mcp::Session;
use crate::stats::Summary;
use crate::target::Target;

/// What one call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// MCP `tools/call` over streamable HTTP (protocol 2025-11-25, a session per client).
    Mcp,
    /// MCP `tools/call` over streamable HTTP, protocol 2026-07-28 (no sessions).
    McpStateless,
    /// `POST /api/v1/tools/{tool}/execute` with the same arguments.
    Rest,
    /// `GET /livez`: the cost of an HTTP round trip through the server's middleware.
    Noop,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Mcp => "mcp",
            Kind::McpStateless => "mcp-stateless",
            Kind::Rest => "rest",
            Kind::Noop => "noop",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: Target,
    pub token: Option<String>,
    pub kind: Kind,
    pub clients: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Stop the measured window after this many successful calls (all clients together).
    pub max_calls: Option<u64>,
    pub tool: String,
    /// The arguments of every call of an existing tool (a built-in, say); `None` calls the
    /// load tool with `{"n": …}`.
    pub arguments: Option<Value>,
}

/// The load tool's code: trivial on purpose (the benchmark measures the path, not the JS).
pub const TOOL_CODE: &str = "return { n: args.n + 1 };";

/// Creates the load tool through MCP `create_tool` (an existing tool of that name is kept) and
/// checks that one call of it succeeds.
pub async fn setup(plan: &Plan) -> Result<(), LoadError> {
    let conn = Conn::open(&plan.target, plan.token.as_deref()).await?;
    let mut session = Session::open(conn).await?;
    if let Some(arguments) = &plan.arguments {
        // An existing tool: one call must succeed.
        return match session.call_tool(&plan.tool, arguments).await {
            Ok(_) => Ok(()),
            Err(call) => Err(LoadError::Setup(format!(
                "cannot call tool '{}' with {arguments}: {call}",
                plan.tool
            ))),
        };
    }
    let created = session
        .call_tool(
            "create_tool",
            &json!({
                "name": plan.tool,
                "description": "Load generator tool: returns n + 1.",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"]
                },
                "code": TOOL_CODE
            }),
        )
        .await;
    match session.call_tool(&plan.tool, &json!({"n": 1})).await {
        Ok(result) if result.to_string().contains("\"n\":2") => Ok(()),
        Ok(result) => Err(LoadError::Setup(format!(
            "tool '{}' answered {result}, expected n = 2 (a different tool of that name?)",
            plan.tool
        ))),
        Err(call) => Err(LoadError::Setup(format!(
            "cannot call tool '{}': {call} (create_tool: {})",
            plan.tool,
            match created {
                Ok(v) => v.to_string(),
                Err(e) => e.to_string(),
            }
        ))),
    }
}

/// One client's connection, ready to call.
enum Client {
    Mcp(Session),
    Http(Conn),
}

impl Client {
    async fn open(plan: &Plan) -> Result<Client, LoadError> {
        let conn = Conn::open(&plan.target, plan.token.as_deref()).await?;
        Ok(match plan.kind {
            Kind::Mcp => Client::Mcp(Session::open(conn).await?),
            Kind::McpStateless => Client::Mcp(Session::stateless(conn)),
            Kind::Rest | Kind::Noop => Client::Http(conn),
        })
    }

    async fn call(&mut self, plan: &Plan, n: u64) -> Result<(), LoadError> {
        match (self, plan.kind) {
            (Client::Mcp(session), _) => {
                session.call_tool(&plan.tool, &arguments(plan, n)).await?;
                Ok(())
            }
            (Client::Http(conn), Kind::Noop) => {
                let res = conn.get("/livez").await?;
                check_status(res.status.as_u16(), &res.body)
            }
            (Client::Http(conn), _) => {
                let path = format!("/api/v1/tools/{}/execute", plan.tool);
                let body = json!({"arguments": arguments(plan, n)}).to_string();
                let res = conn.post_json(&path, body, &[]).await?;
                check_status(res.status.as_u16(), &res.body)?;
                let value: Value = serde_json::from_slice(&res.body)
                    .map_err(|e| LoadError::Protocol(e.to_string()))?;
                if value.get("success") != Some(&Value::Bool(true))
                    || value.pointer("/data/isError") == Some(&Value::Bool(true))
                {
                    return Err(LoadError::Protocol(format!("the call failed: {value}")));
                }
                Ok(())
            }
        }
    }
}

/// The arguments of call number `n`.
fn arguments(plan: &Plan, n: u64) -> Value {
    match &plan.arguments {
        Some(fixed) => fixed.clone(),
        None => json!({"n": n}),
    }
}

fn check_status(status: u16, body: &[u8]) -> Result<(), LoadError> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    Err(LoadError::Status {
        status,
        body: String::from_utf8_lossy(body).chars().take(300).collect(),
    })
}

/// What one client measured.
struct Measured {
    latencies: Vec<Duration>,
    errors: u64,
    finished: Instant,
    first_error: Option<LoadError>,
}

/// Runs `plan`. Every client connects (and initializes its MCP session) before the clock
/// starts; a client whose connection breaks counts an error and reconnects.
pub async fn run(plan: &Plan) -> Result<Summary, LoadError> {
    let plan = Arc::new(plan.clone());
    let mut clients = Vec::with_capacity(plan.clients);
    for _ in 0..plan.clients {
        clients.push(Client::open(&plan).await?);
    }
    let start = Instant::now();
    let measure_from = start + plan.warmup;
    let until = measure_from + plan.duration;
    let budget = Arc::new(AtomicU64::new(plan.max_calls.unwrap_or(u64::MAX)));
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|client| {
            let plan = plan.clone();
            let budget = budget.clone();
            tokio::spawn(drive(client, plan, measure_from, until, budget))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut finished = measure_from;
    let mut first_error = None;
    for task in tasks {
        let measured = task
            .await
            .map_err(|e| LoadError::Setup(format!("a client task failed: {e}")))?;
        latencies.extend(measured.latencies);
        errors += measured.errors;
        finished = finished.max(measured.finished);
        first_error = first_error.or(measured.first_error);
    }
    if let Some(e) = &first_error {
        eprintln!("toolsmith-loadgen: first error: {e}");
    }
    let elapsed = finished.saturating_duration_since(measure_from);
    Ok(Summary::new(
        plan.kind.label(),
        plan.clients,
        latencies,
        errors,
        elapsed,
    ))
}

async fn drive(
    mut client: Client,
    plan: Arc<Plan>,
    measure_from: Instant,
    until: Instant,
    budget: Arc<AtomicU64>,
) -> Measured {
    let mut measured = Measured {
        latencies: Vec::new(),
        errors: 0,
        finished: measure_from,
        first_error: None,
    };
    let mut n = 0u64;
    loop {
        let started = Instant::now();
        if started >= until {
            break;
        }
        let in_window = started >= measure_from;
        if in_window && !take(&budget) {
            break;
        }
        n += 1;
        let outcome = client.call(&plan, n).await;
        let latency = started.elapsed();
        match outcome {
            Ok(()) if in_window => measured.latencies.push(latency),
            Ok(()) => {}
            Err(e) => {
                if in_window {
                    measured.errors += 1;
                    // The budget counts successes only.
                    budget.fetch_add(1, Ordering::Relaxed);
                }
                let broken = matches!(e, LoadError::Http(_) | LoadError::Connect { .. });
                measured.first_error.get_or_insert(e);
                if broken {
                    match Client::open(&plan).await {
                        Ok(fresh) => client = fresh,
                        Err(e) => {
                            measured.first_error.get_or_insert(e);
                            break;
                        }
                    }
                }
            }
        }
    }
    measured.finished = Instant::now();
    measured
}

/// Takes one call from the budget; false when it is spent.
fn take(budget: &AtomicU64) -> bool {
    budget
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(1)
        })
        .is_ok()
}
