//! The heart of Toolsmith: what a tool *is*, where active tools live, and how one call runs.
//!
//! - [`agent`] — agents Toolsmith runs: a stored definition ([`agent::AgentRecord`]), its runs
//!   and their steps.
//! - [`agent_session`] — sessions with those agents and subagents (spec 001 §2, §6): a
//!   session's record and its messages.
//! - [`model`] — [`ToolDefinition`], [`ToolContext`], [`ToolResult`] and the error classes a
//!   result can carry ([`ErrorKind`]).
//! - [`record`] — the stored shape of a custom tool ([`CustomToolRecord`]) and its history,
//!   shared by the store and the service.
//! - [`client`] — what the caller's client can do for a running tool ([`Client`]: log,
//!   progress, sampling, elicitation), set on the call's [`ToolContext`] by the MCP server.
//! - [`config`] — the Config Center's records ([`ConfigServiceRecord`], [`ConfigEntryRecord`])
//!   and their validation; secrets appear only sealed.
//! - [`content`] — a result of content blocks (text, image, audio, resources) and structured
//!   content ([`ContentForm`]), and the check of their shapes.
//! - [`name`] and [`schema`] — the rules a custom tool's name and parameter schema must follow,
//!   and validation of call arguments against that schema.
//! - [`narrowing`] — [`Narrowing`]: what a call and every call nested in it may reach, set by
//!   a door with a scope of its own (an agent run's `toolPolicy`), asked by the policy.
//! - [`object`] — [`object::set`]: a field of a JSON object written without `Value`'s
//!   `IndexMut`, which panics on a value that is not an object.
//! - [`registry`] — [`ToolRegistry`]: built-in tools (grouped by provider) and the active custom
//!   tools of every owner.
//! - [`prompt`] — prompts made at runtime: a stored, versioned definition
//!   ([`prompt::PromptRecord`]) whose messages are rendered from its arguments.
//! - [`pipeline`] — [`Pipeline`]: parse → look up → tool max limits → validate → middleware
//!   `before` → executor → output cap → middleware `after`, plus parallel batches.
//! - [`data`] — the agent's own records (memory, tasks, notes …) as one generic shape
//!   ([`data::DataRecord`]) the store keeps and searches.
//! - [`mcp_bridge`] — the MCP bridge's stored records: registered upstream servers, grants
//!   and access requests.
//! - `testkit` (feature `testkit`, tests only) — the one rule for a test's missing
//!   prerequisite: fail, or skip and record it with `TOOLSMITH_ALLOW_SKIP=1`.
//! - [`tool_limits`] — the spec's table of count limits the pipeline applies to every call.
//! - [`tool_task`] — a tool call run on as a task (MCP tasks, REST's asynchronous execute):
//!   [`ToolTaskRecord`] and its [`ToolTaskStatus`].
//!
//! This crate does no I/O and assumes nothing about who calls it: no HTTP, no MCP, no database.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

pub mod agent;
pub mod agent_session;
pub mod approval;
pub mod client;
pub mod config;
pub mod content;
pub mod data;
pub mod delegation;
pub mod governance;
pub mod mcp_bridge;
pub mod model;
pub mod name;
pub mod narrowing;
pub mod object;
pub mod organization;
pub mod pipeline;
pub mod prompt;
pub mod query;
pub mod record;
pub mod registry;
pub mod schema;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod tool_limits;
pub mod tool_task;
pub mod vector;

pub use approval::{ApprovalAnswer, ApprovalPrompt, ApprovalQuestion, Approver};
pub use client::{
    CallerClient, Capability, Client, ClientCapabilities, ClientError, Door, LogLevel,
};
pub use config::{
    ConfigEntryRecord, ConfigError, ConfigField, ConfigServiceRecord, FieldKind, StoredValue,
};
pub use content::ContentForm;
pub use governance::{
    ApiTokenRecord, ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, AuditQuery,
    AuditRecord, LimitOutcome, LimitRequest, RateBucketSpend, SlotRequest, StoredPolicy,
};
pub use model::{
    ConsoleEntry, ConsoleLevel, ErrorKind, Permission, PermissionSet, ResultMetadata, ToolContext,
    ToolDefinition, ToolExecutor, ToolResult,
};
pub use narrowing::{Narrowing, Narrows};
pub use pipeline::{BatchCall, Call, Held, Middleware, Pipeline, PipelineLimits};
pub use record::{
    CreatedBy, CustomToolRecord, ExecutionRecord, ExecutionSource, ExecutionStatus, ToolKind,
    ToolStatus, ToolVersionRecord,
};
pub use registry::{
    RegisteredTool, RegistryError, RegistryStats, ResultSource, ToolOrigin, ToolRegistry,
};
pub use schema::json_type;
pub use tool_task::{ToolTaskRecord, ToolTaskStatus};
