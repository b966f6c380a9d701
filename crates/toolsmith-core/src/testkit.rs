//! The one rule for a test's missing prerequisite (bubblewrap, PostgreSQL, Chromium, `prlimit`,
//! `setpriv`, the MCP clients of `tests/clients`, schemathesis, node …), for every test crate of
//! the workspace (feature `testkit`, enabled by their dev-dependencies only).
//!
//! A missing prerequisite **fails** the test, with what is missing and how to install it — on
//! every machine, CI or not. Only the person running the tests can say otherwise, on purpose, with
//! `TOOLSMITH_ALLOW_SKIP=1` ([`ALLOW_SKIP`]): then the test returns early instead, the skip is
//! printed to stderr and, when `TOOLSMITH_SKIP_LOG` ([`SKIP_LOG`]) names a file, appended to it
//! as one line `test<TAB>prerequisite<TAB>reason` (scripts/test.sh sets it and prints the
//! skipped tests, grouped by prerequisite, at the end of the run). CI never sets the variable.
//!
//! ```ignore
//! let Some(sandbox) = testkit::require("bubblewrap", CommandSandbox::probe().await) else {
//!     return;
//! };
//! ```

use std::fmt::Display;
use std::io::Write;

/// The variable that allows a missing prerequisite to skip a test: exactly `1`.
pub const ALLOW_SKIP: &str = "TOOLSMITH_ALLOW_SKIP";
/// The file each allowed skip is appended to (one line each), when set.
pub const SKIP_LOG: &str = "TOOLSMITH_SKIP_LOG";

/// How the prerequisites are installed, named in every failure.
const INSTALL: &str = "install the system packages with `bash scripts/install-system-deps.sh` \
     (bubblewrap, util-linux, postgresql, chromium, git, python3, nodejs) and the test clients with \
     `bash scripts/install-test-deps.sh` (the MCP SDKs, the MCP Inspector, node and schemathesis \
     under tests/clients)";

/// Whether the person running the tests allowed skips (`TOOLSMITH_ALLOW_SKIP=1`).
pub fn skip_allowed() -> bool {
    std::env::var(ALLOW_SKIP).is_ok_and(|v| v == "1")
}

/// `prerequisite` is missing, for `reason`: panics (the test fails) with what is missing and how
/// to install it, unless skips are allowed; then records the skip, and the caller returns early
/// (or leaves out the case that needed it).
#[track_caller]
#[allow(clippy::panic)] // Test support: the panic is the test's failure.
pub fn missing(prerequisite: &str, reason: impl Display) {
    if !skip_allowed() {
        panic!(
            "missing test prerequisite {prerequisite}: {reason}\n\
             To fix: {INSTALL}.\n\
             To skip the tests that need it instead, on purpose: set {ALLOW_SKIP}=1."
        );
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test thread)")
        .to_owned();
    let reason = reason.to_string().replace(['\n', '\t'], " ");
    let line = format!("{test}\t{prerequisite}\t{reason}\n");
    eprint!("SKIPPED ({ALLOW_SKIP}=1): {line}");
    if let Some(path) = std::env::var_os(SKIP_LOG) {
        // One write of one line in append mode: concurrent test processes do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!(
                "cannot record the skip in {SKIP_LOG}={}: {e}",
                std::path::Path::new(&path).display()
            );
        }
    }
}

/// The value of `found`, or (through [`missing`]) a failure — or, when skips are allowed, `None`
/// after recording the skip.
#[track_caller]
pub fn require<T, E: Display>(prerequisite: &str, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(value) => Some(value),
        Err(reason) => {
            missing(prerequisite, reason);
            None
        }
    }
}

/// `true` if `path` exists; otherwise [`missing`] (`what` is not installed) and `false`.
#[track_caller]
pub fn require_path(what: &str, path: &std::path::Path) -> bool {
    if path.exists() {
        return true;
    }
    missing(
        what,
        format_args!("not installed (missing {})", path.display()),
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_prerequisite_is_returned() {
        assert_eq!(require::<u8, String>("x", Ok(3)), Some(3));
        assert!(require_path("the root", std::path::Path::new("/")));
    }
}
