//! Governance: who may see and call what, what a person must approve, how much may run, what
//! leaves the server, and the record of every privileged action.
//!
//! - [`policy`] — the policy engine's gate: the middleware refusing calls, and the filter the
//!   faces apply to every listing.
//! - [`stored_policy`] — the policy kept in the store (REST `/api/v1/policies`, CLI
//!   `toolsmith policy`), which wins over the configuration file's.
//! - [`approvals`] — human approval of executions: the setting, the middleware that holds
//!   calls, and the decisions.
//! - [`limits`] — the middleware enforcing rate limits and the concurrency guard.
//! - [`scrubbing`] — the middleware that redacts credentials from every result.
//! - [`audit`] — the audit log of privileged actions (store and optional JSONL file).
//! - [`client_requests`] — whether a running tool may ask the caller's client (its model,
//!   its person) now: permission, policy, limits per call and per user per minute.
//! - [`tool_groups`] — which built-in tool groups are on (the policy's `tool_groups`), and the
//!   built-ins hidden because theirs is off.
//! - [`tokens`] — API tokens: what authentication reads and `toolsmith token` writes.
//!
//! Each middleware is wired into the pipeline by
//! [`ToolService::open_with`](crate::ToolService::open_with), in the order documented there.

pub mod approvals;
pub mod audit;
pub mod client_requests;
pub mod limits;
pub mod policy;
pub mod scrubbing;
pub mod stored_policy;
pub mod tokens;
pub mod tool_groups;

pub use stored_policy::PolicyView;
