//! What the service records about calls, and what it reports from those records.
//!
//! - [`usage`] — the middleware that records usage and executions of custom tools (batched,
//!   off the call path).
//! - [`analytics`] — execution figures (success rate, p95, trend) and the anomaly rule, pure
//!   over the store's samples.
//! - [`reports`] — the analytics operations of [`ToolService`](crate::ToolService) and the
//!   retention of execution history.
//! - [`server_report`] — the server-wide analytics (every owner's calls; an admin's view).
//! - [`agent_metrics`] — the agent runs' series (runs, steps, tokens).
//! - this module — Prometheus metrics of every call, below.
//!
//! Process metrics in the Prometheus text format (`GET /metrics`): executions by tool and
//! status, a duration histogram, sandbox limit hits, rate-limit refusals, queue depth, and
//! usage records spooled for a retry or lost.
//!
//! [`Telemetry`] is pipeline middleware (its `after` hook sees every finished call, refused
//! ones included) plus a few gauges read at scrape time. A series of executions is labelled
//! with the tool's name and its id (`tool_id`: the custom tool's id, or the built-in's name), so
//! two owners' tools of one name count apart. Labels are bounded: once [`MAX_TOOL_LABELS`]
//! distinct custom tools have been seen, further ones share `tool="custom", tool_id="other"`,
//! so a flood of tools cannot blow up the series count.

pub mod agent_metrics;
pub mod analytics;
pub mod reports;
pub mod server_report;
pub mod usage;

pub use reports::{MetricsReport, ToolMetricsReport, ToolMetricsRow};
pub use server_report::ServerMetricsReport;

use std::collections::HashSet;
use std::sync::Mutex;

use async_trait::async_trait;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use toolsmith_core::{Call, ErrorKind, Middleware, ToolResult};

/// Most distinct custom tools (by id) given series of their own.
pub const MAX_TOOL_LABELS: usize = 500;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExecutionLabels {
    tool: String,
    tool_id: String,
    source: &'static str,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SourceLabels {
    source: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

/// The figures the service publishes.
pub struct Telemetry {
    registry: Registry,
    executions: Family<ExecutionLabels, Counter>,
    durations: Family<SourceLabels, Histogram>,
    limit_hits: Family<LimitLabels, Counter>,
    rate_limited: Counter,
    denied: Counter,
    queue_depth: Gauge,
    approvals_pending: Gauge,
    usage: usage::UsageMetrics,
    /// The agent runs' series.
    pub agents: agent_metrics::AgentMetrics,
    tool_labels: Mutex<HashSet<String>>,
}

impl Default for Telemetry {
    fn default() -> Self {
        Telemetry::new()
    }
}

impl Telemetry {
    pub fn new() -> Telemetry {
        let mut registry = Registry::with_prefix("toolsmith");
        let executions = Family::<ExecutionLabels, Counter>::default();
        registry.register(
            "executions",
            "Finished tool calls by tool, source (builtin, custom or mcp) and status",
            executions.clone(),
        );
        let durations = Family::<SourceLabels, Histogram>::new_with_constructor(|| {
            // 0.1 ms … ~100 s
            Histogram::new(exponential_buckets(0.0001, 4.0, 11))
        });
        registry.register(
            "execution_duration_seconds",
            "Wall-clock duration of tool calls that ran",
            durations.clone(),
        );
        let limit_hits = Family::<LimitLabels, Counter>::default();
        registry.register(
            "sandbox_limit_hits",
            "Calls stopped by a sandbox limit (timeout, cpu, memory, stack, output)",
            limit_hits.clone(),
        );
        let rate_limited = Counter::default();
        registry.register(
            "rate_limit_rejections",
            "Calls refused by a rate limit or concurrency cap",
            rate_limited.clone(),
        );
        let denied = Counter::default();
        registry.register(
            "denied",
            "Calls refused by the policy, a permission or an approval rule",
            denied.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register(
            "usage_queue_depth",
            "Execution records waiting to be written",
            queue_depth.clone(),
        );
        let approvals_pending = Gauge::default();
        registry.register(
            "approvals_pending",
            "Executions waiting for a person's decision",
            approvals_pending.clone(),
        );
        let usage = usage::UsageMetrics::default();
        registry.register(
            "usage_records_lost",
            "Execution records given up: the spool was full, or the store refused them",
            usage.lost.clone(),
        );
        registry.register(
            "usage_write_failures",
            "Failed store writes of execution records (each is retried or counted as lost)",
            usage.write_failures.clone(),
        );
        registry.register(
            "usage_records_spooled",
            "Execution records the store could not take yet, waiting for a retry",
            usage.spooled.clone(),
        );
        let agents = agent_metrics::AgentMetrics::default();
        agents.register(&mut registry);
        Telemetry {
            registry,
            executions,
            durations,
            limit_hits,
            rate_limited,
            denied,
            queue_depth,
            approvals_pending,
            usage,
            agents,
            tool_labels: Mutex::new(HashSet::new()),
        }
    }

    /// The usage writer's figures (lost and spooled records, failed writes), to hand to
    /// [`usage::UsageRecorder::start`].
    pub fn usage_metrics(&self) -> usage::UsageMetrics {
        self.usage.clone()
    }

    /// The text exposition, with the gauges set to the given current values.
    pub fn render(&self, queue_depth: usize, approvals_pending: usize) -> String {
        self.queue_depth
            .set(i64::try_from(queue_depth).unwrap_or(i64::MAX));
        self.approvals_pending
            .set(i64::try_from(approvals_pending).unwrap_or(i64::MAX));
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            tracing::warn!("cannot encode the metrics");
        }
        out
    }

    /// The `(tool, tool_id)` labels of a call: a built-in's name twice, a custom tool's name and
    /// id while fewer than [`MAX_TOOL_LABELS`] custom tools have series, else `custom`/`other`.
    fn tool_labels(&self, name: &str, custom_id: Option<&str>) -> (String, String) {
        let Some(id) = custom_id else {
            return (name.to_owned(), name.to_owned());
        };
        let mut seen = self
            .tool_labels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.contains(id) || seen.len() < MAX_TOOL_LABELS {
            seen.insert(id.to_owned());
            return (name.to_owned(), id.to_owned());
        }
        ("custom".to_owned(), "other".to_owned())
    }

    fn record(&self, name: &str, origin: Origin<'_>, result: &ToolResult) {
        let (source, custom_id) = match origin {
            Origin::Builtin => ("builtin", None),
            Origin::Custom(id) => ("custom", Some(id)),
            Origin::Mcp(_) => ("mcp", None),
        };
        let status = match result.error_kind() {
            None => "success",
            Some(ErrorKind::Timeout | ErrorKind::CpuLimit) => "timeout",
            Some(ErrorKind::Denied) => "denied",
            Some(ErrorKind::RateLimited) => "rate_limited",
            Some(ErrorKind::ApprovalRequired) => "approval_required",
            Some(_) => "error",
        };
        let (tool, tool_id) = match origin {
            // A bridged tool's id is its server: the upstream's names are as many as it lists.
            Origin::Mcp(server) => (name.to_owned(), format!("mcp:{server}")),
            _ => self.tool_labels(name, custom_id),
        };
        self.executions
            .get_or_create(&ExecutionLabels {
                tool,
                tool_id,
                source,
                status,
            })
            .inc();
        match result.error_kind() {
            Some(ErrorKind::RateLimited) => {
                self.rate_limited.inc();
                return;
            }
            Some(ErrorKind::Denied | ErrorKind::ApprovalRequired) => {
                self.denied.inc();
                return;
            }
            Some(kind) => {
                let limit = match kind {
                    ErrorKind::Timeout => Some("timeout"),
                    ErrorKind::CpuLimit => Some("cpu"),
                    ErrorKind::MemoryLimit => Some("memory"),
                    ErrorKind::StackOverflow => Some("stack"),
                    ErrorKind::OutputTooLarge => Some("output"),
                    _ => None,
                };
                if let Some(limit) = limit {
                    self.limit_hits.get_or_create(&LimitLabels { limit }).inc();
                }
            }
            None => {}
        }
        self.durations
            .get_or_create(&SourceLabels { source })
            .observe(result.metadata.duration_ms / 1000.0);
    }
}

#[async_trait]
impl Middleware for Telemetry {
    fn name(&self) -> &'static str {
        "telemetry"
    }

    async fn after(&self, call: &Call, result: &mut ToolResult) {
        let origin = match &call.tool.origin {
            toolsmith_core::ToolOrigin::BuiltIn { .. } => Origin::Builtin,
            toolsmith_core::ToolOrigin::Custom { id, .. } => Origin::Custom(id),
            toolsmith_core::ToolOrigin::Mcp { server, .. } => Origin::Mcp(server),
        };
        self.record(call.tool.name(), origin, result);
    }
}

/// Where a finished call's tool comes from, for its labels: `source` `builtin`, `custom`
/// (its id) or `mcp` (its server, as `tool_id="mcp:<server>"`).
#[derive(Clone, Copy)]
enum Origin<'a> {
    Builtin,
    Custom(&'a str),
    Mcp(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str, metric: &str) -> Vec<String> {
        text.lines()
            .filter(|line| line.starts_with(metric))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn two_owners_tools_of_one_name_have_series_of_their_own() {
        let telemetry = Telemetry::new();
        let ok = ToolResult::ok(serde_json::json!(1));
        telemetry.record("work2", Origin::Custom("tool_aaaaaaaaaaaaaaaa"), &ok);
        telemetry.record("work2", Origin::Custom("tool_bbbbbbbbbbbbbbbb"), &ok);
        telemetry.record("work2", Origin::Custom("tool_bbbbbbbbbbbbbbbb"), &ok);
        telemetry.record("calculate", Origin::Builtin, &ok);
        let text = telemetry.render(0, 0);
        let lines = lines_of(&text, "toolsmith_executions_total");
        assert!(
            lines.contains(&r#"toolsmith_executions_total{tool="work2",tool_id="tool_aaaaaaaaaaaaaaaa",source="custom",status="success"} 1"#.to_owned()),
            "{text}"
        );
        assert!(
            lines.contains(&r#"toolsmith_executions_total{tool="work2",tool_id="tool_bbbbbbbbbbbbbbbb",source="custom",status="success"} 2"#.to_owned()),
            "{text}"
        );
        assert!(
            lines.contains(&r#"toolsmith_executions_total{tool="calculate",tool_id="calculate",source="builtin",status="success"} 1"#.to_owned()),
            "{text}"
        );
    }

    #[test]
    fn series_stay_bounded_however_many_tools_run() {
        let telemetry = Telemetry::new();
        let ok = ToolResult::ok(serde_json::json!(1));
        for i in 0..MAX_TOOL_LABELS + 300 {
            telemetry.record("work", Origin::Custom(&format!("tool_{i:016}")), &ok);
        }
        // A tool seen before the cap keeps its own series.
        telemetry.record("work", Origin::Custom(&format!("tool_{:016}", 0)), &ok);
        let text = telemetry.render(0, 0);
        let lines = lines_of(&text, "toolsmith_executions_total");
        assert_eq!(
            lines.len(),
            MAX_TOOL_LABELS + 1,
            "one series per tool up to the cap, then one"
        );
        assert!(
            lines.contains(&r#"toolsmith_executions_total{tool="custom",tool_id="other",source="custom",status="success"} 300"#.to_owned()),
            "{text}"
        );
        assert!(
            lines.contains(&r#"toolsmith_executions_total{tool="work",tool_id="tool_0000000000000000",source="custom",status="success"} 2"#.to_owned()),
            "{text}"
        );
    }
}
