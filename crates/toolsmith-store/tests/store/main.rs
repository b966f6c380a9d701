//! The store's integration tests, one test binary for the crate (each binary links the whole
//! store): one module per topic, each against a real SQLite file (`copy` also against a private
//! PostgreSQL cluster from the test kit).

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

mod config_secrets;
mod copy;
mod crash;
mod pg_tls;
mod tokens;
