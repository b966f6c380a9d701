//! The custom-tool lifecycle: the one API every interface (CLI, REST, MCP, UI) calls.
//!
//! [`ToolService`] owns the rules of the spec — who may create, update, approve, enable and
//! delete what, and which status a tool lands in — and keeps the registry in step with the
//! store: a write is committed to the store first, and only then does the registry change, so a
//! failed write leaves both as they were.
//!
//! The crate is cut into module trees with one job each:
//!
//! - [`service`] — the core: [`ToolService`], its wiring, the lifecycle of custom tools,
//!   registry sync and the kind-independent validation.
//! - [`governance`] — policy, approvals, rate limits, credential scrubbing, the audit log and
//!   the stored policy.
//! - [`execution`] — the tool kinds, their executors, the host calls and the egress adapter.
//! - [`config_center`] — the Config Center's operations, its run-time cache and the tools'
//!   declared dependencies.
//! - [`telemetry`] — Prometheus metrics, usage recording and execution analytics.
//! - [`bridge`] — external MCP servers' tools in the catalogue (the MCP bridge).
//! - [`packages`] — JS tools' npm dependencies: resolution, the checked tarballs, the
//!   content-addressed cache the sandbox's module loader reads.
//! - [`agents`] — agents Toolsmith runs (issue 37): definitions, model providers, the runner.
//! - [`tool_tasks`] — tool calls run on as tasks (MCP tasks, REST's asynchronous execute),
//!   kept in the store with their results for a bounded time.
//! - [`input`] — the request shapes ([`CreateTool`], [`ToolPatch`], [`ToolRef`], [`Actor`]).

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

pub mod agents;
pub mod bridge;
mod builtin_chat;
pub mod command_fields;
pub mod config_center;
mod error;
pub mod execution;
pub mod governance;
pub mod input;
pub mod orgs;
pub mod packages;
pub mod prompts;
pub mod resources;
pub mod service;
pub mod telemetry;
pub mod tool_moves;
pub mod tool_settings;
pub mod tool_tasks;

pub use config_center::{EntryInput, EntryView, ServiceInput, ServicePatch, ServiceView};
pub use error::ServiceError;
pub use governance::PolicyView;
pub use governance::approvals::{ApprovalDoors, ApprovalView, ExecutionApproval};
pub use governance::audit::AuditTarget;
pub use governance::limits::{LimitsSettings, Rate};
pub use input::{Actor, CreateTool, DeleteOptions, RunCode, ToolPatch, ToolRef};
pub use service::{
    Connectors, EPHEMERAL_TOOL, RunRights, Suggestion, ToolService, ToolServiceSettings,
};
pub use telemetry::analytics::{Anomaly, Period};
pub use telemetry::{MetricsReport, ServerMetricsReport, ToolMetricsReport, ToolMetricsRow};
pub use tool_tasks::TaskSettings;
pub use toolsmith_builtins::git::{GitSettings, parse_author as parse_git_author};
pub use toolsmith_builtins::workspace::WorkspaceSettings;
pub use toolsmith_store::{ToolPage, ToolQuery, ToolStats};
