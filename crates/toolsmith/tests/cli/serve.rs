//! End-to-end tests of `toolsmith serve` and `toolsmith mcp`: the real binary on an ephemeral
//! loopback port (`--port 0`, the address read from its `listening on` line), driven over
//! plain HTTP/1.1, stopped with real signals.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod full_disk;
mod logs;
mod postgres;
mod postgres_agents;
mod postgres_balancer;
mod postgres_delegation;
mod postgres_limits;
mod postgres_ops;
mod postgres_scheduler;
mod postgres_sessions;
mod postgres_teams;

// --- running the binary ---------------------------------------------------------------------

/// A scratch directory with the data directory inside.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn data_dir(&self) -> PathBuf {
        self.path().join("data")
    }

    fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, content).expect("write file");
        path
    }

    /// The binary with a clean environment (no TOOLSMITH_* from the caller) on this data dir.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("TOOLSMITH_") || var == "RUST_LOG" {
                cmd.env_remove(var);
            }
        }
        cmd.env("TOOLSMITH_DATA_DIR", self.data_dir())
            .current_dir(self.path())
            .args(args);
        cmd
    }

    /// Runs a CLI command to completion; returns (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run toolsmith");
        (
            out.status.code().expect("exit code"),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Creates a custom tool with the CLI (another process than any server).
    fn create_tool(&self, name: &str, code: &str) {
        self.create_tool_with(&[], name, code);
    }

    /// [`Env::create_tool`] with global options (`--database-url …`) first.
    fn create_tool_with(&self, global: &[&str], name: &str, code: &str) {
        let tool = json!({
            "name": name,
            "description": format!("test tool {name}"),
            "parameters": {"type": "object", "properties": {}},
            "code": code,
        });
        let file = self.write(&format!("{name}.json"), &tool.to_string());
        let mut args = global.to_vec();
        args.extend(["tool", "create", "--file", file.to_str().unwrap()]);
        let (code, stdout, stderr) = self.run(&args);
        assert_eq!(
            code, 0,
            "tool create failed\nstdout: {stdout}\nstderr: {stderr}"
        );
    }

    /// Starts `toolsmith serve --port 0 ARGS` and waits for its `listening on` line.
    fn serve(&self, args: &[&str]) -> Server {
        self.serve_with_env(args, &[])
    }

    fn serve_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Server {
        self.serve_via(&[], args, env)
    }

    /// [`Env::serve_with_env`], with the binary started through `prefix` (e.g. `prlimit …`).
    fn serve_via(&self, prefix: &[&str], args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut all = vec!["serve"];
        if !args.contains(&"--port") && !env.iter().any(|(k, _)| *k == "TOOLSMITH_PORT") {
            all.extend(["--port", "0"]);
        }
        all.extend_from_slice(args);
        let stderr_path = self.path().join(format!("serve-{}.log", uuid_like()));
        let stderr = std::fs::File::create(&stderr_path).expect("log file");
        let mut command = self.command(&all);
        if let Some((program, rest)) = prefix.split_first() {
            let mut wrapped = Command::new(program);
            wrapped
                .args(rest)
                .arg(command.get_program())
                .args(command.get_args());
            for (key, value) in command.get_envs() {
                match value {
                    Some(value) => wrapped.env(key, value),
                    None => wrapped.env_remove(key),
                };
            }
            wrapped.current_dir(self.path());
            command = wrapped;
        }
        let mut child = command
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start toolsmith serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read stdout");
        let Some(addr) = line.trim().strip_prefix("toolsmith listening on http://") else {
            let status = child.wait().expect("wait");
            panic!(
                "no listening line (got {line:?}, {status})\nstderr: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        };
        Server {
            addr: addr.to_owned(),
            child,
            stdout,
            stderr_path,
        }
    }
}

/// A distinct suffix for log files of one test.
fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// A running server; killed if the test ends without stopping it.
struct Server {
    addr: String,
    child: Child,
    stdout: BufReader<ChildStdout>,
    stderr_path: PathBuf,
}

impl Server {
    fn get(&self, path: &str) -> Response {
        request(&self.addr, "GET", path, None)
    }

    fn post(&self, path: &str, body: &Value) -> Response {
        request(&self.addr, "POST", path, Some(body.to_string().as_bytes()))
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for the process to exit (killing it, and failing, if it is still running after
    /// `within`); returns its status and the rest of stdout. The wait is the exit itself
    /// (`wait(2)`); a watchdog thread keeps the deadline.
    fn wait(&mut self, within: Duration) -> (ExitStatus, String) {
        let pid = self.child.id().to_string();
        let (exited, deadline) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            let late = deadline.recv_timeout(within) == Err(RecvTimeoutError::Timeout);
            if late {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
            late
        });
        let status = self.child.wait().expect("wait");
        let _ = exited.send(());
        assert!(
            !watchdog.join().expect("the watchdog"),
            "the server did not exit within {within:?}\nstderr: {}",
            self.stderr()
        );
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).expect("read stdout");
        (status, rest)
    }

    /// Waits until `check` holds, for at most 30 s, asking again every 50 ms: for what the
    /// server only answers when asked (`/metrics`, `/readyz`, `/proc`), where there is no event
    /// to wait on.
    fn wait_until(&self, what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !check() {
            assert!(
                Instant::now() < deadline,
                "{what} did not happen within 30 s\nstderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// CPU time (user + system, in clock ticks) the server has used so far.
    #[cfg(target_os = "linux")]
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("read /proc/PID/stat");
        // Fields after the command name (which may contain spaces) start at ") ".
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        // utime and stime are fields 14 and 15 of the whole line: 11 and 12 here.
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// --- a tiny HTTP/1.1 client -----------------------------------------------------------------

#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn request(addr: &str, method: &str, path: &str, body: Option<&[u8]>) -> Response {
    try_request(addr, method, path, body).unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

fn try_request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    send(&mut stream, addr, method, path, body)?;
    read_response(stream)
}

fn send(
    stream: &mut TcpStream,
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
) -> std::io::Result<()> {
    let body = body.unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

fn read_response(mut stream: TcpStream) -> std::io::Result<Response> {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return Err(std::io::Error::other(format!(
            "no complete response: {text:?}"
        )));
    };
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line: {head}")))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// A POST whose body is `n` bytes of junk: 413 if `n` is over the body limit, 4xx otherwise.
fn post_junk(server: &Server, n: usize) -> u16 {
    let body = vec![b'x'; n];
    request(
        &server.addr,
        "POST",
        "/api/v1/custom-tools/test",
        Some(&body),
    )
    .status
}

/// A JS tool body that keeps the CPU busy for `ms` milliseconds, then answers.
fn busy_code(ms: u64) -> String {
    format!(
        "const end = Date.now() + {ms}; let spins = 0; while (Date.now() < end) {{ spins++; }} \
         return {{done: true}};"
    )
}

/// Waits (bounded) until the server has burnt `ticks` more clock ticks of CPU than `base`:
/// proof that a busy tool is running inside it.
#[cfg(target_os = "linux")]
fn wait_for_cpu(server: &Server, base: u64, ticks: u64) {
    server.wait_until("the busy tool starting", || {
        server.cpu_ticks() >= base + ticks
    });
}

// --- tests ----------------------------------------------------------------------------------

#[test]
fn serve_answers_health_and_the_api_with_hardened_headers() {
    let env = Env::new();
    let mut server = env.serve(&[]);
    assert!(server.addr.starts_with("127.0.0.1:"), "{}", server.addr);
    assert_ne!(server.addr, "127.0.0.1:0");

    let live = server.get("/livez");
    assert_eq!(live.status, 200);
    assert_eq!(live.json(), json!({"status": "ok"}));
    let ready = server.get("/readyz");
    assert_eq!(ready.status, 200, "{}", ready.body);

    let tools = server.get("/api/v1/tools");
    assert_eq!(tools.status, 200, "{}", tools.body);
    let doc = tools.json();
    assert_eq!(doc["success"], json!(true));
    assert!(tools.body.contains("\"calculate\""), "{}", tools.body);
    for (header, value) in [
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
    ] {
        assert_eq!(tools.header(header), Some(value), "{header}: {tools:?}");
    }
    assert!(
        tools
            .header("content-security-policy")
            .is_some_and(|csp| csp.contains("default-src")),
        "{tools:?}"
    );

    server.signal("INT");
    let (status, rest) = server.wait(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "stderr: {}", server.stderr());
    assert_eq!(rest, "", "nothing but the listening line on stdout");
}

#[test]
fn a_public_address_without_auth_is_refused() {
    let env = Env::new();
    let mut cmd = env.command(&["serve", "--bind", "0.0.0.0", "--port", "0"]);
    let out = cmd.stdin(Stdio::null()).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0") && stderr.contains("not a loopback"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "toolsmith --data-dir {} token create",
            env.data_dir().display()
        )) && stderr.contains("TOOLSMITH_ADMIN_TOKEN"),
        "the message says how to configure auth: {stderr}"
    );
}

#[test]
fn flags_beat_the_environment_which_beats_the_file() {
    let env = Env::new();
    // The file alone: bind 0.0.0.0 would be refused, so the env's loopback bind must win; the
    // body limit shows which source won.
    let config = env.write(
        "toolsmith.toml",
        "bind = \"0.0.0.0\"\nport = 0\nbody_limit = \"2KB\"\nrequest_timeout = \"30s\"\n",
    );
    let config = config.to_str().unwrap();

    let file_only = env.serve_with_env(&["--config", config], &[("TOOLSMITH_BIND", "127.0.0.1")]);
    assert_eq!(post_junk(&file_only, 3 * 1024), 413, "file: 2KB");
    assert_ne!(post_junk(&file_only, 1024), 413);
    drop(file_only);

    let env_over_file = env.serve_with_env(
        &[],
        &[
            ("TOOLSMITH_CONFIG", config),
            ("TOOLSMITH_BIND", "127.0.0.1"),
            ("TOOLSMITH_BODY_LIMIT", "4KB"),
        ],
    );
    assert_ne!(post_junk(&env_over_file, 3 * 1024), 413, "env: 4KB");
    assert_eq!(post_junk(&env_over_file, 5 * 1024), 413, "env: 4KB");
    drop(env_over_file);

    let flag_over_env = env.serve_with_env(
        &[
            "--config",
            config,
            "--body-limit",
            "8KB",
            "--bind",
            "127.0.0.1",
        ],
        &[
            ("TOOLSMITH_BODY_LIMIT", "4KB"),
            ("TOOLSMITH_BIND", "0.0.0.0"),
        ],
    );
    assert_ne!(post_junk(&flag_over_env, 5 * 1024), 413, "flag: 8KB");
    assert_eq!(post_junk(&flag_over_env, 9 * 1024), 413, "flag: 8KB");

    // Without any source: the default 1 MB.
    let defaults = env.serve(&[]);
    assert_ne!(post_junk(&defaults, 9 * 1024), 413, "default: 1MB");
}

#[test]
fn an_unknown_key_in_the_file_is_a_clear_error() {
    let env = Env::new();
    let config = env.write("toolsmith.toml", "port = 0\nbody_limt = \"2KB\"\n");
    let (code, stdout, stderr) = env.run(&["serve", "--config", config.to_str().unwrap()]);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("unknown field `body_limt`") && stderr.contains("line 2"),
        "{stderr}"
    );
    assert!(
        stderr.contains("toolsmith.toml"),
        "names the file: {stderr}"
    );

    let (code, _, stderr) = env.run(&["serve", "--config", "missing.toml"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read the configuration file missing.toml"),
        "{stderr}"
    );
}

#[test]
fn serve_help_documents_every_option() {
    let env = Env::new();
    let (code, help, _) = env.run(&["serve", "--help"]);
    assert_eq!(code, 0);
    for option in [
        "--bind",
        "--port",
        "--data-dir",
        "--database-url",
        "--config",
        "--body-limit",
        "--request-timeout",
        "--shutdown-timeout",
        "--allowed-host",
        "--compat",
        "--admin-token",
        "--read-only",
        "--max-tools-per-owner",
        "--js-memory",
        "--js-cpu-time",
        "--js-wall-time",
        "--js-max-output",
        "--poll-interval",
        "TOOLSMITH_BIND",
        "TOOLSMITH_PORT",
        "TOOLSMITH_DATA_DIR",
        "TOOLSMITH_DATABASE_URL",
        "TOOLSMITH_CONFIG",
        "TOOLSMITH_COMPAT",
        "docs/configuration.md",
    ] {
        assert!(
            help.contains(option),
            "serve --help lacks {option}:\n{help}"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_lets_an_in_flight_tool_call_finish() {
    let env = Env::new();
    // Busy for long enough (in wall-clock time) that even on a loaded machine the server burns
    // the few ticks `wait_for_cpu` looks for before the call ends.
    env.create_tool("slow", &busy_code(3000));
    let mut server = env.serve(&[]);
    assert_eq!(server.get("/livez").status, 200);
    let base = server.cpu_ticks();

    let addr = server.addr.clone();
    let call = std::thread::spawn(move || {
        request(
            &addr,
            "POST",
            "/api/v1/tools/slow/execute",
            Some(json!({"arguments": {}}).to_string().as_bytes()),
        )
    });
    wait_for_cpu(&server, base, 5);
    server.signal("TERM");

    let response = call.join().expect("the call thread");
    assert_eq!(response.status, 200, "{}", response.body);
    assert!(response.body.contains("\"done\":true"), "{}", response.body);
    let (status, rest) = server.wait(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "stderr: {}", server.stderr());
    assert_eq!(rest, "");
    // And the server accepts nothing any more.
    assert!(try_request(&server.addr, "GET", "/livez", None).is_err());
}

#[cfg(target_os = "linux")]
#[test]
fn the_shutdown_timeout_bounds_what_in_flight_calls_get() {
    let env = Env::new();
    env.create_tool("slower", &busy_code(4000));
    let mut server = env.serve(&["--shutdown-timeout", "200ms"]);
    let base = server.cpu_ticks();
    let addr = server.addr.clone();
    let call = std::thread::spawn(move || {
        try_request(
            &addr,
            "POST",
            "/api/v1/tools/slower/execute",
            Some(json!({"arguments": {}}).to_string().as_bytes()),
        )
    });
    wait_for_cpu(&server, base, 15);
    server.signal("TERM");
    let (status, _) = server.wait(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "stderr: {}", server.stderr());
    let outcome = call.join().expect("the call thread");
    assert!(
        outcome.is_err(),
        "the call was cut off, not answered: {outcome:?}"
    );
    // The store is intact: the CLI still reads it.
    let (code, stdout, stderr) = env.run(&["tool", "list"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stdout.contains("slower"), "{stdout}");
}

#[test]
fn a_tool_created_by_another_process_reaches_the_running_server() {
    let env = Env::new();
    let server = env.serve(&["--poll-interval", "100ms"]);
    let mut changes = ListChanged::open(&server.addr);
    let path = "/api/v1/tools/fresh/execute";
    let call = json!({"arguments": {}});
    assert_eq!(server.post(path, &call).status, 404);

    env.create_tool("fresh", "return 'made elsewhere';");
    changes.next("the tool created by the CLI");
    let response = server.post(path, &call);
    assert_eq!(response.status, 200, "{}", response.body);
    assert!(
        response.body.contains("made elsewhere"),
        "{}",
        response.body
    );
    let listed = server.get("/api/v1/tools");
    assert!(listed.body.contains("\"fresh\""), "{}", listed.body);

    // A disable elsewhere takes it away again.
    let (code, _, stderr) = env.run(&["tool", "disable", "fresh"]);
    assert_eq!(code, 0, "{stderr}");
    changes.next("the tool disabled by the CLI");
    assert_eq!(server.post(path, &call).status, 404);
}

#[test]
fn mcp_over_stdio_answers_initialize_and_nothing_else() {
    let env = Env::new();
    let mut child = env
        .command(&["mcp"])
        .env("TOOLSMITH_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolsmith mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "serve-test", "version": "1.0"},
        },
    });
    writeln!(stdin, "{initialize}").expect("write initialize");
    stdin.flush().expect("flush");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read the answer");
    let answer: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert_eq!(answer["result"]["serverInfo"]["name"], json!("toolsmith"));
    assert_eq!(
        answer["result"]["capabilities"]["tools"]["listChanged"],
        json!(true)
    );

    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read stdout");
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(rest, "", "only protocol messages on stdout");
    assert!(!stderr.is_empty(), "debug logs went to stderr");
}

#[test]
fn mcp_rejects_a_bad_configuration_before_speaking() {
    let env = Env::new();
    let (code, stdout, stderr) = env.run(&["mcp", "--js-memory", "12 parsecs"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("--js-memory"), "{stderr}");
}

#[test]
fn rate_limits_answer_429_with_retry_after_and_record_the_refusal() {
    let env = Env::new();
    let server = env.serve(&["--rate-per-user", "1:2"]);
    let created = server.post(
        "/api/v1/custom-tools",
        &json!({"name": "limited", "description": "d", "parameters": {"type": "object"}, "code": "return 1"}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let run = || server.post("/api/v1/tools/limited/execute", &json!({"arguments": {}}));
    assert_eq!(run().status, 200);
    assert_eq!(run().status, 200);
    let refused = run();
    assert_eq!(refused.status, 429, "{}", refused.body);
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!(
        (1..=60).contains(&retry),
        "a bucket of 1/min refills within a minute: {retry}"
    );
    assert_eq!(refused.json()["error"]["code"], json!("rate_limited"));
    // The health probe and the control plane are not executions: they keep answering.
    assert_eq!(server.get("/livez").status, 200);
    let tool = server.get("/api/v1/custom-tools/limited");
    assert_eq!(tool.status, 200, "{}", tool.body);
    assert_eq!(
        tool.json()["data"]["usageCount"],
        json!(2),
        "a refused call is not a use"
    );
}

/// A secret stored in the Config Center appears in no REST answer, no listing, no metrics, no
/// CLI output and no log line of a whole scenario (debug logging on); in the database only
/// its sealed form exists. A tool that returns the secret gets it redacted.
#[test]
fn a_config_secret_appears_nowhere_but_sealed_in_the_database() {
    const SECRET: &str = "purple-monkey-dishwasher-8817";
    let env = Env::new();
    let server = env.serve_with_env(&[], &[("RUST_LOG", "debug")]);
    let mut seen = String::new();
    let mut record = |r: Response| -> Value {
        seen.push_str(&r.body);
        seen.push('\n');
        serde_json::from_str(&r.body).unwrap_or(Value::Null)
    };

    let created = record(server.post("/api/v1/config/services", &json!({"name": "weatherapi"})));
    assert_eq!(created["success"], true, "{created}");
    let entry = record(server.post(
        "/api/v1/config/services/weatherapi/entries",
        &json!({"values": {"api_key": SECRET, "base_url": "https://api.example.com"}}),
    ));
    assert_eq!(entry["success"], true, "{entry}");
    assert_ne!(entry["data"]["values"]["api_key"], SECRET);
    let tool = record(server.post(
        "/api/v1/custom-tools",
        &json!({
            "name": "leaky",
            "description": "returns its key",
            "parameters": {"type": "object", "properties": {}},
            "code": "const k = utils.getApiKey('weatherapi'); console.log('key is ' + k); return {k, len: k.length, url: utils.getFieldValue('weatherapi', 'base_url')};",
            "requiredApiKeys": [{"name": "weatherapi", "displayName": "WeatherAPI"}],
        }),
    ));
    assert_eq!(tool["success"], true, "{tool}");
    let run = record(server.post("/api/v1/tools/leaky/execute", &json!({"arguments": {}})));
    assert_eq!(run["data"]["isError"], false, "{run}");
    assert_eq!(
        run["data"]["content"]["len"],
        SECRET.len(),
        "the tool read the real key"
    );
    assert_eq!(run["data"]["content"]["k"], "[REDACTED]");
    assert_eq!(run["data"]["content"]["url"], "https://api.example.com");
    for path in [
        "/api/v1/config/services",
        "/api/v1/config/services/weatherapi",
        "/api/v1/custom-tools",
        "/api/v1/custom-tools/leaky",
        "/api/v1/tools",
        "/api/v1/tools/definitions",
        "/api/v1/metrics/tools",
        "/metrics",
    ] {
        let r = server.get(path);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        record(r);
    }
    let (code, stdout, stderr) = env.run(&["config", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("weatherapi (configured)"), "{stdout}");
    seen.push_str(&stdout);
    seen.push_str(&stderr);
    seen.push_str(&server.stderr());
    drop(server);

    assert!(!seen.contains(SECRET), "the secret leaked:\n{seen}");
    let mut database = Vec::new();
    for entry in std::fs::read_dir(env.data_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("toolsmith.db")
        {
            database.extend(std::fs::read(&path).unwrap());
        }
    }
    let database = String::from_utf8_lossy(&database);
    assert!(
        !database.contains(SECRET),
        "the secret is in the database in plaintext"
    );
    assert!(database.contains("v1:"), "the sealed value is stored");
}

/// A call of a tool that requires approval waits on the running server; `toolsmith approvals`
/// in another process decides it, and the same call then runs. `toolsmith run` is a person at
/// the terminal, whose own call needs no one else.
#[test]
fn an_approval_decided_with_the_cli_releases_the_call_on_the_server() {
    let env = Env::new();
    let tool = json!({
        "name": "guarded", "description": "needs approval", "requiresApproval": true,
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "code": "return args.n * 2;",
    });
    let file = env.write("guarded.json", &tool.to_string());
    let (code, _, stderr) = env.run(&["tool", "create", "--file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let server = env.serve(&[]);
    let path = "/api/v1/tools/guarded/execute";
    let call = json!({"arguments": {"n": 21}});

    let waiting = server.post(path, &call).json();
    assert_eq!(
        waiting["data"]["metadata"]["errorKind"], "approval_required",
        "{waiting}"
    );
    let id = waiting["data"]["content"]["approvalId"]
        .as_str()
        .unwrap()
        .to_owned();

    let (code, stdout, stderr) = env.run(&["--json", "approvals", "list"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed[0]["id"], id.as_str(), "{stdout}");
    assert_eq!(listed[0]["arguments"], "{\"n\":21}");
    let (code, stdout, stderr) = env.run(&["approvals", "allow", &id]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("allowed"), "{stdout}");
    // Deciding twice is a conflict (exit 5); an unknown id is not found (exit 4).
    assert_eq!(env.run(&["approvals", "deny", &id]).0, 5);
    assert_eq!(env.run(&["approvals", "deny", "apr_0000000000000000"]).0, 4);

    let ran = server.post(path, &call).json();
    assert_eq!(ran["data"]["isError"], false, "{ran}");
    assert_eq!(ran["data"]["content"], 42);

    let (code, stdout, stderr) = env.run(&["run", "guarded", "--args", "{\"n\": 2}"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "4");
}

/// `toolsmith policy set` in another process reaches the running server within its poll
/// interval; `toolsmith policy clear` takes it back.
#[test]
fn a_policy_stored_with_the_cli_reaches_the_running_server() {
    let env = Env::new();
    let server = env.serve(&["--poll-interval", "100ms"]);
    let mut changes = ListChanged::open(&server.addr);
    let has_calculate = || server.get("/api/v1/tools").body.contains("\"calculate\"");
    assert!(has_calculate());
    let file = env.write("policy.toml", "deny = [\"calculate\"]\n");
    let (code, stdout, stderr) = env.run(&["policy", "set", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("source: store (revision 1)"), "{stdout}");
    changes.next("the stored policy");
    assert!(!has_calculate());
    let bad = env.write("bad.toml", "profile = \"everything\"\n");
    assert_eq!(env.run(&["policy", "set", bad.to_str().unwrap()]).0, 3);
    let (code, _, stderr) = env.run(&["policy", "clear"]);
    assert_eq!(code, 0, "{stderr}");
    changes.next("the cleared policy");
    assert!(has_calculate());
}

/// Tool groups from every way in: `--disable-group` hides a group's tools, an unknown group in
/// `TOOLSMITH_ENABLE_GROUPS` stops the start naming the groups, and `toolsmith groups disable`
/// in another process reaches the running server (it stores the policy).
#[test]
fn tool_groups_switch_from_flags_the_environment_and_the_cli() {
    let env = Env::new();
    let server = env.serve(&["--poll-interval", "100ms", "--disable-group", "core"]);
    assert!(
        !has_calculate_on(&server),
        "--disable-group hides the group's tools"
    );
    drop(server);
    let out = env
        .command(&["groups", "enable", "pdf"])
        .env("TOOLSMITH_ENABLE_GROUPS", "nope")
        .output()
        .expect("run toolsmith");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a configuration error: {stderr}"
    );
    assert!(
        stderr.contains("unknown group 'nope'") && stderr.contains("codeExecution"),
        "{stderr}"
    );
    let (code, stdout, stderr) = env.run(&["groups", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("codeExecution"), "{stdout}");
    let (code, stdout, stderr) = env.run(&["--json", "groups", "of", "calculate"]);
    assert_eq!(code, 0, "{stderr}");
    let of: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(of[0]["id"], "core");

    let server = env.serve(&["--poll-interval", "100ms"]);
    let mut changes = ListChanged::open(&server.addr);
    assert!(has_calculate_on(&server));
    let (code, _, stderr) = env.run(&["groups", "disable", "core"]);
    assert_eq!(code, 0, "{stderr}");
    changes.next("the group switched off");
    assert!(!has_calculate_on(&server));
    let (code, _, stderr) = env.run(&["groups", "disable", "filesystem"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = env.run(&["groups", "enable", "git"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("enable 'filesystem' too"), "{stderr}");
}

fn has_calculate_on(server: &Server) -> bool {
    server.get("/api/v1/tools").body.contains("\"calculate\"")
}

// --- connection and session limits -----------------------------------------------------------

/// Whether `prlimit` runs: a missing one fails the test, or (with `TOOLSMITH_ALLOW_SKIP=1`) is
/// recorded as a skip ([`toolsmith_core::testkit`]).
fn prlimit_available() -> bool {
    let found = Command::new("prlimit")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        toolsmith_core::testkit::missing("prlimit (util-linux)", "`prlimit --version` did not run");
    }
    found
}

/// Opens `n` connections that send the start of a request and never finish it.
fn stalled_connections(addr: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| {
            let mut stream = TcpStream::connect(addr).ok()?;
            stream
                .write_all(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                .ok()?;
            Some(stream)
        })
        .collect()
}

/// 400 connections that never finish a request, against a server allowed 384 open files:
/// before the fix they used up its descriptors and `/livez` hung until they went away. Now
/// the server stays under its cap, closes the longest-idle ones, and answers at once.
#[test]
fn stalled_connections_cannot_take_the_server_down() {
    if !prlimit_available() {
        return;
    }
    let env = Env::new();
    let server = env.serve_via(&["prlimit", "--nofile=384:384"], &[], &[]);
    let stalled = stalled_connections(&server.addr, 400);
    assert!(
        stalled.len() > 384,
        "only {} connections opened",
        stalled.len()
    );
    let mut stream = TcpStream::connect(&server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    send(&mut stream, &server.addr, "GET", "/livez", None).unwrap();
    let response = read_response(stream).expect("/livez answers while 400 connections stall");
    assert_eq!(response.status, 200, "{}", response.body);
    let api = server.get("/api/v1/tools");
    assert_eq!(api.status, 200, "{}", api.body);
    drop(stalled);
    assert!(
        !server.stderr().contains("Too many open files"),
        "{}",
        server.stderr()
    );
}

/// A client that starts a request and never finishes its headers is disconnected after the
/// header-read timeout.
#[test]
fn a_request_whose_headers_never_end_is_cut_off() {
    let env = Env::new();
    let server = env.serve(&["--header-read-timeout", "1s"]);
    let mut stalled = stalled_connections(&server.addr, 1).pop().expect("connect");
    stalled
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut rest = Vec::new();
    let read = stalled.read_to_end(&mut rest);
    assert!(
        read.is_ok(),
        "the connection was still open after 20 s: {read:?}"
    );
}

/// `serve` raises its soft open-file limit to the hard one.
#[cfg(target_os = "linux")]
#[test]
fn serve_raises_the_open_file_limit_to_the_hard_limit() {
    if !prlimit_available() {
        return;
    }
    let env = Env::new();
    let server = env.serve_via(&["prlimit", "--nofile=100:4096"], &[], &[]);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.child.id()))
        .expect("read /proc/PID/limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("open files line");
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4096", "4096"], "{line}");
}

/// POSTs one JSON-RPC message to `/mcp` (protocol 2025-11-25, with the session if given).
fn mcp_post(addr: &str, session: Option<&str>, body: &Value) -> Response {
    let body = body.to_string();
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    read_response(stream).expect("an answer from /mcp")
}

fn mcp_initialize(addr: &str) -> Response {
    mcp_post(
        addr,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "limits-test", "version": "1"}}}),
    )
}

/// A 2025-11-25 session on `addr`, initialized (`initialize`, `notifications/initialized`).
fn mcp_session(addr: &str) -> String {
    let init = mcp_initialize(addr);
    assert_eq!(init.status, 200, "{}", init.body);
    let id = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = mcp_post(addr, Some(&id), &initialized);
    assert_eq!(ack.status, 202, "{}", ack.body);
    id
}

fn mcp_ping(addr: &str, session: &str) -> u16 {
    mcp_post(
        addr,
        Some(session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .status
}

/// An MCP session of the local user with its GET event stream open (protocol 2025-11-25):
/// what a test waits on when a change made by another process must reach the running server.
/// The server sends `notifications/tools/list_changed` once the change is in its registry, so
/// the test needs no polling of the API and no guess of the poll interval.
struct ListChanged {
    stream: BufReader<TcpStream>,
    /// The session's id, for requests made in it (`mcp_post`).
    session: String,
}

impl ListChanged {
    fn open(addr: &str) -> ListChanged {
        let id = mcp_session(addr);
        let mut stream = TcpStream::connect(addr).expect("connect");
        let head = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
             Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).expect("send");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut stream = BufReader::new(stream);
        // The stream is attached to the session once its head has come back.
        let mut line = String::new();
        stream
            .read_line(&mut line)
            .expect("the event stream's status");
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
        while line != "\r\n" {
            line.clear();
            assert_ne!(stream.read_line(&mut line).expect("a header"), 0);
        }
        ListChanged {
            stream,
            session: id,
        }
    }

    /// Blocks until the next `notifications/tools/list_changed` (30 s at most).
    fn next(&mut self, what: &str) {
        self.next_of("notifications/tools/list_changed", what);
    }

    /// Blocks until the next notification `method` (30 s at most); the methods of every
    /// notification read on the way, that one last.
    fn until(&mut self, method: &str, what: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut line = String::new();
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {method} for {what} within 30 s: {seen:?}"
            );
            self.stream.get_ref().set_read_timeout(Some(left)).unwrap();
            line.clear();
            match self.stream.read_line(&mut line) {
                Ok(0) => panic!("the event stream ended before {what}"),
                Ok(_) => {}
                Err(e) => panic!("no {method} for {what}: {e} ({seen:?})"),
            }
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let Ok(message) = serde_json::from_str::<serde_json::Value>(data.trim()) else {
                continue;
            };
            if let Some(name) = message["method"].as_str() {
                seen.push(name.to_owned());
                if name == method {
                    return seen;
                }
            }
        }
    }

    /// Blocks until the next notification `method` (30 s at most).
    fn next_of(&mut self, method: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut line = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no list_changed for {what} within 30 s");
            self.stream.get_ref().set_read_timeout(Some(left)).unwrap();
            line.clear();
            match self.stream.read_line(&mut line) {
                Ok(0) => panic!("the event stream ended before {what}"),
                Ok(_) if line.contains(method) => return,
                Ok(_) => {}
                Err(e) => panic!("no list_changed for {what}: {e}"),
            }
        }
    }
}

/// One user opening sessions without end keeps at most its cap (the oldest go); past the
/// total a new session is refused with 503; an unused session expires and its place is freed.
#[test]
fn mcp_sessions_are_capped_per_user_and_in_total_and_expire() {
    let env = Env::new();
    let server = env.serve(&[
        "--mcp-max-sessions-per-user",
        "3",
        "--mcp-max-sessions",
        "100",
    ]);
    let ids: Vec<String> = (0..10)
        .map(|_| {
            let r = mcp_initialize(&server.addr);
            assert_eq!(r.status, 200, "{}", r.body);
            r.header("mcp-session-id").expect("a session id").to_owned()
        })
        .collect();
    for id in &ids[..7] {
        assert_eq!(
            mcp_ping(&server.addr, id),
            404,
            "an evicted session is gone"
        );
    }
    for id in &ids[7..] {
        assert_eq!(mcp_ping(&server.addr, id), 200, "the newest sessions live");
    }
    let metrics = server.get("/metrics").body;
    assert!(
        metrics.contains("toolsmith_mcp_sessions_open 3"),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolsmith_mcp_sessions_evicted_total 7"),
        "{metrics}"
    );
    drop(server);

    let server = env.serve(&["--mcp-max-sessions", "2"]);
    for _ in 0..2 {
        assert_eq!(mcp_initialize(&server.addr).status, 200);
    }
    let refused = mcp_initialize(&server.addr);
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(refused.header("retry-after").is_some());
    assert!(
        refused.body.contains("mcp_max_sessions"),
        "{}",
        refused.body
    );
    drop(server);

    let server = env.serve(&["--mcp-session-idle-timeout", "1s"]);
    let r = mcp_initialize(&server.addr);
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    // Watch /metrics (a ping would use the session and keep it alive).
    server.wait_until("the unused session expiring", || {
        server
            .get("/metrics")
            .body
            .contains("toolsmith_mcp_sessions_expired_total 1")
    });
    assert!(
        server
            .get("/metrics")
            .body
            .contains("toolsmith_mcp_sessions_open 0")
    );
    assert_eq!(
        mcp_ping(&server.addr, &id),
        404,
        "the expired session is gone"
    );
}
