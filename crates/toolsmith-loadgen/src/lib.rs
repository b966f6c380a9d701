//! `toolsmith-loadgen`: load for a running `toolsmith serve` on loopback — N concurrent MCP
//! streamable-HTTP clients calling one trivial JS tool, with REST and HTTP no-op baselines —
//! reported as calls/s and latency percentiles.
//!
//! - [`target`] — the URL, loopback only;
//! - [`http`] — one kept-alive HTTP/1.1 connection per client;
//! - [`mcp`] — the MCP session (2025-11-25) and JSON-RPC answers;
//! - [`run`] — the tool's setup and the closed-loop run;
//! - [`stats`] — calls/s and percentiles.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

pub mod error;
pub mod http;
pub mod mcp;
pub mod run;
pub mod stats;
pub mod target;

pub use error::LoadError;
pub use run::{Kind, Plan, run, setup};
pub use stats::Summary;
pub use target::Target;
