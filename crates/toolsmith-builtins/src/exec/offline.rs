//! What a run that reached for the network is told: code runs with no network at all (the
//! command sandbox has a network namespace of its own), so a script that fetches a URL or
//! installs with its own tools fails deep in a library, with a long traceback ending in a DNS
//! failure. When a run failed that way, its reply gets a `hint` naming the fix (the web tools,
//! `package_manager`), and its `stderr` keeps only its last lines.

use serde_json::{Value, json};
use toolsmith_core::object;

/// What the reply of a run that failed for want of a network says.
pub const NO_NETWORK: &str = "There is no network here: code runs with no network access, so \
     this run could not reach the host it asked for. Fetch web pages and APIs with the web \
     tools instead (fetch_web_page, http_request, json_api; group webFetch, which an admin \
     switches on) and pass what they return to your code; install packages with \
     package_manager.";

/// Lines of `stderr` kept after a network failure (the end of a traceback says what failed).
const KEPT_LINES: usize = 4;

/// What a program prints when a name did not resolve or no route exists (Python, curl, wget,
/// Node, Go, Rust), lower-cased.
const SIGNS: &[&str] = &[
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
    "could not resolve host",
    "unable to resolve host",
    "network is unreachable",
    "eai_again",
    "getaddrinfo enotfound",
    "failed to lookup address",
];

/// Adds the [`NO_NETWORK`] hint to the reply `out` of a failed run whose `stderr` shows a
/// network failure, keeping the last [`KEPT_LINES`] lines of `stderr`.
pub fn explain(out: &mut Value) {
    if out.get("success") != Some(&Value::Bool(false)) {
        return;
    }
    let Some(stderr) = out.get("stderr").and_then(Value::as_str) else {
        return;
    };
    let lower = stderr.to_lowercase();
    if !SIGNS.iter().any(|sign| lower.contains(sign)) {
        return;
    }
    let lines: Vec<&str> = stderr.lines().collect();
    let kept = lines.len().saturating_sub(KEPT_LINES);
    let tail = lines.get(kept..).unwrap_or_default().join("\n");
    let stderr = if kept == 0 {
        tail
    } else {
        format!("[{kept} earlier lines cut]\n{tail}")
    };
    object::set(out, "stderr", json!(stderr));
    object::set(out, "hint", json!(NO_NETWORK));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_lookup_is_explained_and_its_traceback_cut() {
        let traceback: Vec<String> = (0..44).map(|i| format!("  frame {i}")).collect();
        let stderr = format!(
            "Traceback (most recent call last):\n{}\nsocket.gaierror: [Errno -3] Temporary \
             failure in name resolution\nurllib.error.URLError: <urlopen error [Errno -3] \
             Temporary failure in name resolution>",
            traceback.join("\n")
        );
        let mut out = json!({"success": false, "exitCode": 1, "stderr": stderr});
        explain(&mut out);
        assert_eq!(out["hint"], NO_NETWORK);
        let kept = out["stderr"].as_str().unwrap();
        assert!(kept.starts_with("[43 earlier lines cut]"), "{kept}");
        assert!(kept.ends_with("name resolution>"), "{kept}");

        // A run that succeeded, or failed otherwise, is left as it is.
        for out in [
            json!({"success": true, "stderr": "could not resolve host (a warning)"}),
            json!({"success": false, "stderr": "ZeroDivisionError: division by zero"}),
        ] {
            let mut changed = out.clone();
            explain(&mut changed);
            assert_eq!(changed, out);
        }
    }
}
