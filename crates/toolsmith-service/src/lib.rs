//! The custom-tool lifecycle: the one API every interface (CLI, REST, MCP, UI) calls.
//!
//! [`ToolService`] owns the rules of the spec — who may create, update, approve, enable and
//! delete what, and which status a tool lands in — and keeps the registry in step with the
//! store: a write is committed to the store first, and only then does the registry change, so a
//! failed write leaves both as they were.
//!
//! - [`service`] — [`ToolService`] and its operations.
//! - [`input`] — the request shapes ([`CreateTool`], [`ToolPatch`], [`ToolRef`], [`Actor`]).
//! - [`config_center`] — the Config Center at run time (decrypted, cached per owner) and, in
//!   `service/config.rs`, its operations.
//! - [`egress`] — the way out to the network of `fetch` and HTTP tools (the egress guard).
//! - `kinds` — what each tool kind (`js`, `command`, `http`) checks and runs with;
//!   [`command_tool`] and [`http_tool`] are the executors of the other two kinds.
//! - [`js_tool`] — the executor that runs a stored JS tool in the sandbox, and the host side of
//!   `utils.callTool` / `utils.listTools`.
//! - [`usage`] — the middleware that records usage and executions of custom tools.
//! - [`policy`] — the policy engine's gate: the middleware refusing calls, and the filter the
//!   faces apply to every listing.
//! - [`telemetry`] — Prometheus metrics of every call (`GET /metrics`).
//! - [`scrubbing`] — the middleware that redacts credentials from every result.
//! - [`audit`] — the audit log of privileged actions (store and optional JSONL file).
//! - [`approvals`] — human approval of executions: the setting, the middleware that holds
//!   calls, and the decisions.
//! - [`limits`] — the middleware enforcing rate limits and the concurrency guard.
//! - [`analytics`] — execution figures (success rate, p95, trend) and the anomaly rule.

pub mod analytics;
pub mod approvals;
pub mod audit;
pub mod command_tool;
pub mod config_center;
pub mod egress;
mod error;
pub mod http_tool;
pub mod input;
pub mod js_tool;
mod kinds;
pub mod limits;
pub mod policy;
pub mod scrubbing;
pub mod service;
pub mod telemetry;
pub mod usage;

pub use error::ServiceError;
pub use input::{Actor, CreateTool, DeleteOptions, RunCode, ToolPatch, ToolRef};
pub use limits::{LimitsConfig, Rate};
pub use service::{
    Connectors, EntryInput, EntryView, MetricsReport, PolicyView, ServiceConfig, ServiceInput,
    ServicePatch, ServiceView, Suggestion, ToolMetricsReport, ToolMetricsRow, ToolService,
};
pub use toolsmith_store::{ToolPage, ToolQuery, ToolStats};
