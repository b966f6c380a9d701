//! Execution: how a stored tool of each kind is checked and run, and its ways out.
//!
//! - [`kinds`] — what each tool kind (`js`, `command`, `http`) checks on create, update and
//!   dry run, the permissions it implies, and the executor it gets.
//! - [`factory`] — the JS executors and the per-owner HTTP sender and egress guard.
//! - [`js_tool`] — the executor that runs a stored JS tool in the sandbox, and the host side of
//!   `utils.callTool` / `utils.listTools`.
//! - [`command_tool`] — the executor of command tools (OS sandbox, `toolsmith-command`).
//! - [`code_host`] — the built-in code tools' way into the command and JS sandboxes.
//! - [`http_tool`] — the executor of HTTP tools (spec 004, `toolsmith-httptool`).
//! - [`egress`] — the way out to the network of `fetch` and HTTP tools (the egress guard).
//!
//! A new tool kind adds its checks and executor to [`kinds`] and, when it needs one, an
//! executor module here.

pub(crate) mod code_host;
pub mod command_tool;
pub mod egress;
pub(crate) mod factory;
pub mod http_tool;
pub mod js_tool;
pub(crate) mod kinds;
pub(crate) mod task_caller;
