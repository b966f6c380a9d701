//! End-to-end tests of the `toolsmith` binary: every test runs the real executable on a fresh
//! temporary data directory and checks its stdout, stderr and exit code.
//!
//! - `support` — running the binary.
//! - `lifecycle` — create, list, get, update, enable/disable, approve/reject, delete, history,
//!   rollback, stats.
//! - `run` — `run` and `run-code`, with the spec's examples and large inputs.
//! - `errors` — exit codes, corrupt databases, database URLs, help.

#[path = "cli/errors.rs"]
mod errors;
#[path = "cli/lifecycle.rs"]
mod lifecycle;
#[path = "cli/run.rs"]
mod run;
#[path = "cli/support.rs"]
mod support;
