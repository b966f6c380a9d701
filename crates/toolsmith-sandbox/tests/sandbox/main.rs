//! Integration tests of the JS sandbox, through its public API only.

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

mod basics;
mod builtins;
mod config;
mod fetch;
mod host_calls;
mod hostile;
mod io_wait;
mod limits;
mod mcp;
mod mcp_content;
mod modules;
mod pool;
mod support;
mod utils;
