//! End-to-end tests of the `toolsmith` binary, in one test binary: every test runs the real
//! executable on a fresh temporary data directory and checks its stdout, stderr and exit code.
//!
//! - `support` — running the binary.
//! - `lifecycle` — create, list, get, update, enable/disable, approve/reject, delete, history,
//!   rollback, stats.
//! - `run` — `run` and `run-code`, with the spec's examples and large inputs.
//! - `errors` — exit codes, corrupt databases, database URLs, help.
//! - `serve` — `toolsmith serve` as a process: HTTP, signals, the CLI against a running server;
//!   `serve::postgres`: two instances on one PostgreSQL database; `serve::postgres_ops`: the
//!   database restarted under load, listeners cut off, and A→B change latency; `serve::full_disk`: a store
//!   that cannot write; `serve::logs`: no argument
//!   value in the server's log.
//! - `token` — `toolsmith token`.
//! - `mcp_servers` — `toolsmith mcp-servers`, with a real upstream.
//! - `mcp_organization` — `toolsmith mcp --organization`: a member's stdio session in an
//!   organisation, with the role; a stranger and an organisation as `--user` refused.
//! - `mcp_conformance` — the official MCP conformance suite against `serve`, with the example
//!   pack `examples/mcp-conformance/tools/` loaded.
//! - `mcp_surface` — prompts and resources through the official TypeScript and Python SDKs and
//!   the MCP Inspector CLI, over stdio and HTTP, in both protocol generations, on both backends.
//! - `db_copy` — `toolsmith db copy` between SQLite and PostgreSQL.
//! - `ui_browser` — the web UI in headless Chromium (playwright-core), against `serve`.
//! - `store_files` — the key file and the database file: missing, wrong, empty, unwritable.
//! - `docs_map` — every path, type and crate edge ARCHITECTURE.md and CONTRIBUTING.md name exists.
//! - `dynamic_mcp_suite` — dynamic-mcp's own MCP-level tests (tests/clients/dynamic-mcp, vitest)
//!   against `toolsmith mcp` and `toolsmith serve` with `--compat dynamic-mcp`.

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

mod agents;
mod db_copy;
mod docs_map;
mod dynamic_mcp_suite;
mod errors;
mod lifecycle;
mod mcp_conformance;
mod mcp_organization;
mod mcp_servers;
mod mcp_surface;
mod oauth;
mod orgs;
mod prompts;
mod read_only;
mod resources;
mod run;
mod serve;
mod store_files;
mod support;
mod timezone;
mod token;
mod ui_browser;
