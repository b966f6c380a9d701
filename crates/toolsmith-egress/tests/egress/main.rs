//! Integration tests of the egress guard, through its public API only. Hostile addresses are
//! checked by classification and resolution (a test resolver), never connected to; requests
//! only go to servers the tests start on 127.0.0.1.

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

mod origin;
mod policy;
mod send;
mod ssrf;
mod support;
