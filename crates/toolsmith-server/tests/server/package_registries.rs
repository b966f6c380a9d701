//! Issue 31: a `package_manager` install reaches only the package registries. The run has a
//! network namespace of its own with no route out; its one way out is the server's registry
//! proxy (CONNECT to the allowlisted registry hosts, each resolved through the egress guard).
//! Every test here sends traffic only to loopback and to the package registries.

use std::net::TcpListener;

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_service::ToolServiceSettings;

use crate::rest_support::{TestApp, approved, code_execution_app, command_sandbox_works, execute};

/// Runs `package_manager` with `arguments`: the call waits for a person, who allows it once.
async fn approved_install(app: &TestApp, arguments: Value) -> Value {
    approved(app, "package_manager", arguments, |_| {})
        .await
        .assert_ok(StatusCode::OK)
}

/// A server with `codeExecution` on and its workspaces in `dir`, when the command sandbox
/// works here (a missing one fails the test, or skips it with `TOOLSMITH_ALLOW_SKIP=1`).
async fn app_in(dir: &std::path::Path, settings: ToolServiceSettings) -> Option<TestApp> {
    if !command_sandbox_works().await {
        return None;
    }
    let workspace = toolsmith_builtins::workspace::WorkspaceSettings::new(dir.join("workspaces"));
    Some(code_execution_app(settings, workspace).await)
}

/// Run by npm as the workspace's `preinstall` script (`allowScripts: true`): connects straight
/// to `127.0.0.1:PORT`, then asks the proxy named by `HTTPS_PROXY` for a tunnel to each
/// target, printing one line per attempt.
const PROBE: &str = r#"
const net = require('net');
const [port, ...targets] = process.argv.slice(2);
function direct(next) {
  const s = net.connect(Number(port), '127.0.0.1');
  s.on('connect', () => { console.log('direct: connected'); s.destroy(); next(); });
  s.on('error', e => { console.log('direct: ' + e.code); next(); });
}
function tunnel(i) {
  if (i >= targets.length) return;
  const proxy = process.env.HTTPS_PROXY;
  if (!proxy) { console.log('tunnel ' + targets[i] + ': no proxy'); return tunnel(i + 1); }
  const u = new URL(proxy);
  const s = net.connect(Number(u.port), u.hostname);
  let answer = '';
  s.on('connect', () => s.write('CONNECT ' + targets[i] + ' HTTP/1.1\r\nHost: ' + targets[i] + '\r\nConnection: close\r\n\r\n'));
  s.on('data', d => { answer += d; });
  s.on('error', e => { answer += 'error ' + e.code; });
  s.on('close', () => { console.log('tunnel ' + targets[i] + ': ' + JSON.stringify(answer)); tunnel(i + 1); });
}
direct(() => tunnel(0));
"#;

/// The registries an install may reach here: the defaults and `localhost`, a name the egress
/// guard refuses (loopback), to show a registry is resolved under the guard's rules.
fn settings() -> ToolServiceSettings {
    let mut settings = ToolServiceSettings::default();
    settings.package_registries.push("localhost".to_owned());
    settings
}

/// Issue 31: `allowScripts: true` ran a workspace script with the host's network: it reached
/// a listener on the host's loopback (and 169.254.169.254). Now the run has no route out: the
/// same connection does not arrive; and the proxy, its one way out, refuses a host that is not
/// a registry, a registry that resolves to a loopback address and a port other than 443,
/// each with the reason (and sends nothing anywhere).
#[tokio::test]
async fn an_install_reaches_neither_the_hosts_loopback_nor_anything_but_the_registries() {
    let dir = tempfile::tempdir().unwrap();
    let Some(app) = app_in(dir.path(), settings()).await else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let manifest = json!({
        "name": "w", "version": "1.0.0",
        "scripts": {"preinstall": format!(
            "node probe.js {port} example.com:443 localhost:443 registry.npmjs.org:80 127.0.0.1:{port}"
        )}
    });
    for (path, content) in [
        ("package.json", manifest.to_string()),
        ("probe.js", PROBE.to_owned()),
    ] {
        execute(
            &app,
            "write_file",
            json!({"path": path, "content": content}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    let out = approved_install(
        &app,
        json!({"command": "npm install", "allowScripts": true}),
    )
    .await;
    let stdout = out["content"]["stdout"].as_str().unwrap_or_default();
    assert!(stdout.contains("direct: "), "the probe did not run: {out}");
    assert!(
        !stdout.contains("direct: connected"),
        "an install script reached the host's loopback: {out}"
    );
    let answer = |target: &str| -> String {
        let prefix = format!("tunnel {target}: ");
        let line = stdout
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no answer for {target}: {out}"));
        serde_json::from_str::<String>(line).unwrap()
    };
    for (target, reason) in [
        ("example.com:443", "'example.com' is not a package registry"),
        (
            "localhost:443",
            "the egress guard refused package registry 'localhost'",
        ),
        ("registry.npmjs.org:80", "over HTTPS only (port 443)"),
        (&format!("127.0.0.1:{port}"), "not a package registry"),
    ] {
        let text = answer(target);
        assert!(
            text.starts_with("HTTP/1.1 403") && text.contains(reason),
            "{target}: {text}"
        );
    }
    assert!(
        answer("example.com:443").contains("package_registries"),
        "the refusal names the setting: {out}"
    );
    // The run is over: a connection that had arrived would wait in the listener's backlog.
    listener.set_nonblocking(true).unwrap();
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "a connection from the install arrived: {out}"
    );
}

/// The registries stay reachable: a real `pip download` from PyPI and a real `npm view` of the
/// npm registry go through the proxy (the only traffic off this machine in these tests).
#[tokio::test]
async fn pip_and_npm_reach_their_registries_through_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    // Some build machines reach the registries through a gateway at a reserved address, which
    // the egress guard refuses unless the operator lists the names: as an operator would.
    let mut settings = ToolServiceSettings::default();
    for host in toolsmith_builtins::exec::DEFAULT_REGISTRIES {
        settings
            .egress
            .allowed_private_hosts
            .push(format!("{host}:443").parse().unwrap());
    }
    let Some(app) = app_in(dir.path(), settings).await else {
        return;
    };
    let pip = approved_install(
        &app,
        json!({"command": "pip download six==1.16.0 --no-deps --dest=dl"}),
    )
    .await;
    assert_eq!(pip["content"]["exitCode"], 0, "{pip}");
    let listed = execute(&app, "list_files", json!({"path": "dl"}))
        .await
        .assert_ok(StatusCode::OK);
    assert!(
        listed
            .to_string()
            .contains("six-1.16.0-py2.py3-none-any.whl"),
        "{listed}"
    );
    let npm = approved_install(&app, json!({"command": "npm view left-pad@1.3.0 version"})).await;
    assert_eq!(npm["content"]["exitCode"], 0, "{npm}");
    assert_eq!(
        npm["content"]["stdout"].as_str().map(str::trim),
        Some("1.3.0"),
        "{npm}"
    );
}

/// A registry the operator did not list is refused with the reason, which pip shows.
#[tokio::test]
async fn pip_names_the_setting_when_pypi_is_not_a_listed_registry() {
    let dir = tempfile::tempdir().unwrap();
    let settings = ToolServiceSettings {
        package_registries: vec!["registry.npmjs.org".to_owned()],
        ..ToolServiceSettings::default()
    };
    let Some(app) = app_in(dir.path(), settings).await else {
        return;
    };
    let out = approved_install(
        &app,
        json!({"command": "pip download six==1.16.0 --no-deps --dest=dl"}),
    )
    .await;
    assert_ne!(out["content"]["exitCode"], 0, "{out}");
    let stderr = out["content"]["stderr"].as_str().unwrap_or_default();
    assert!(
        stderr.contains("'pypi.org' is not a package registry")
            && stderr.contains("package_registries"),
        "{out}"
    );
}
