//! Operating two real `toolsmith serve` instances on one PostgreSQL database: the database
//! restarted under load (both instances survive, catch up through the change feed, and lose
//! no acknowledged write), a change made while the listeners were cut off (it arrives by the
//! resync after they reconnect), and how fast a tool created through one reaches an MCP
//! client of the other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_store::testkit::pg_or_skip;

use super::{Env, ListChanged, Server, request, try_request};

fn create_body(name: &str) -> Vec<u8> {
    json!({"name": name, "description": "d", "parameters": {"type": "object"},
           "code": format!("return '{name} ran';")})
    .to_string()
    .into_bytes()
}

/// What the load saw: the names whose create was acknowledged (201), when, and every other
/// answer.
#[derive(Default)]
struct Seen {
    acked: Vec<(String, Instant)>,
    /// (what: `create` or `call`, status, body).
    refused: Vec<(&'static str, u16, String)>,
    executed: usize,
}

/// Runs `threads` clients until `stop`: each creates a tool and calls `warm`, alternating
/// between the two instances.
fn load(
    addrs: [String; 2],
    threads: usize,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
) -> Vec<std::thread::JoinHandle<()>> {
    (0..threads)
        .map(|t| {
            let (addrs, stop, seen) = (addrs.clone(), Arc::clone(&stop), Arc::clone(&seen));
            std::thread::spawn(move || {
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let addr = &addrs[(t + i) % 2];
                    let name = format!("load_{t}_{i}");
                    let body = create_body(&name);
                    let created =
                        try_request(addr, "POST", "/api/v1/custom-tools", Some(body.as_slice()));
                    let call = json!({"arguments": {}}).to_string();
                    let ran = try_request(
                        addr,
                        "POST",
                        "/api/v1/tools/warm/execute",
                        Some(call.as_bytes()),
                    );
                    let mut seen = seen.lock().unwrap();
                    match created {
                        Ok(r) if r.status == 201 => seen.acked.push((name, Instant::now())),
                        Ok(r) => seen.refused.push(("create", r.status, r.body)),
                        Err(e) => panic!("instance {addr} stopped answering: {e}"),
                    }
                    match ran {
                        Ok(r) if r.status == 200 => seen.executed += 1,
                        Ok(r) => seen.refused.push(("call", r.status, r.body)),
                        Err(e) => panic!("instance {addr} stopped answering: {e}"),
                    }
                }
            })
        })
        .collect()
}

/// Whether `server`'s registry serves tool `name` (a call goes through the registry, not the
/// store).
fn serves(server: &Server, name: &str) -> bool {
    let call = json!({"arguments": {}});
    server
        .post(&format!("/api/v1/tools/{name}/execute"), &call)
        .status
        == 200
}

#[test]
fn postgres_restarted_under_load_loses_no_acknowledged_write_and_both_instances_catch_up() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().expect("database");
    let env = Env::new();
    // No polling to speak of: what reaches an instance comes by notice, or by the resync the
    // listener does after it reconnects. The load creates tools as fast as the machine allows
    // (about 1,000 in its 7 s on an idle development machine): the owner's limit is raised so
    // that only the outage refuses a create.
    let args = [
        "--database-url",
        url.as_str(),
        "--poll-interval",
        "1h",
        "--max-tools-per-owner",
        "1000000",
    ];
    let mut a = env.serve(&args);
    let mut b = env.serve(&args);
    let warm = request(
        &a.addr,
        "POST",
        "/api/v1/custom-tools",
        Some(create_body("warm").as_slice()),
    );
    assert_eq!(warm.status, 201, "{}", warm.body);
    b.wait_until("B serves the tool created on A", || serves(&b, "warm"));

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let workers = load(
        [a.addr.clone(), b.addr.clone()],
        4,
        Arc::clone(&stop),
        Arc::clone(&seen),
    );
    std::thread::sleep(Duration::from_millis(1500));
    cluster.stop().expect("stop PostgreSQL");
    let stopped = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    // While the database is down, the instances answer (503 for what needs the store) and say
    // they are not ready.
    assert_eq!(a.get("/readyz").status, 503);
    assert_eq!(b.get("/readyz").status, 503);
    cluster.restart().expect("restart PostgreSQL");
    let restarted = Instant::now();
    a.wait_until("A ready again", || a.get("/readyz").status == 200);
    b.wait_until("B ready again", || b.get("/readyz").status == 200);
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().expect("a load thread failed");
    }

    let seen = seen.lock().unwrap();
    let before = seen.acked.iter().filter(|(_, at)| *at < stopped).count();
    let after = seen.acked.iter().filter(|(_, at)| *at > restarted).count();
    assert!(
        before > 0 && after > 0,
        "acknowledged creates: {before} before the stop, {after} after the restart"
    );
    // What the database could not do was answered 503 (retry later) — never a 401 because
    // the tokens could not be read. The one exception: a refused call's answer is withheld
    // (500) when the owner's secrets, which it must be scrubbed of, cannot be read (fail
    // closed); a call that ran says so instead (200, `result_withheld`, counted as executed).
    let withheld_logged = a.stderr().contains("the result was withheld")
        || b.stderr().contains("the result was withheld");
    for (what, status, body) in &seen.refused {
        let withheld = *what == "call" && *status == 500 && withheld_logged;
        assert!(*status == 503 || withheld, "{what}: {status} {body}");
    }
    assert!(seen.executed > 0);
    for server in [&mut a, &mut b] {
        assert!(
            server.child.try_wait().expect("wait").is_none(),
            "an instance exited:\n{}",
            server.stderr()
        );
    }
    // No acknowledged create is lost: each one is stored, and each instance's registry serves
    // it (those created on the other instance while this one's listener was away came with the
    // resync after it reconnected).
    let (last, _) = seen.acked.last().expect("an acknowledged create");
    for server in [&a, &b] {
        server.wait_until("the last acknowledged tool is served", || {
            serves(server, last)
        });
    }
    for (name, _) in &seen.acked {
        let stored = a.get(&format!("/api/v1/custom-tools/{name}"));
        assert_eq!(stored.status, 200, "{name} was acknowledged but is gone");
        for server in [&a, &b] {
            assert!(
                serves(server, name),
                "{} does not serve {name}",
                server.addr
            );
        }
    }
    eprintln!(
        "restart under load: {} creates acknowledged ({before} before the stop, {after} after \
         the restart), {} refused (503, or a withheld call result), {} calls of a loaded tool answered",
        seen.acked.len(),
        seen.refused.len(),
        seen.executed
    );
}

/// p-th percentile of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[test]
fn a_tool_created_through_one_instance_reaches_an_mcp_client_of_the_other_within_a_second() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().expect("database");
    let env = Env::new();
    // Changes reach B by notice; the 1 h poll cannot be what delivers them.
    let args = ["--database-url", url.as_str(), "--poll-interval", "1h"];
    let a = env.serve(&args);
    let b = env.serve(&args);
    let mut b_changes = ListChanged::open(&b.addr);
    let mut latencies = Vec::with_capacity(100);
    for i in 0..100 {
        let body = create_body(&format!("propagated_{i}"));
        let sent = Instant::now();
        let created = request(
            &a.addr,
            "POST",
            "/api/v1/custom-tools",
            Some(body.as_slice()),
        );
        assert_eq!(created.status, 201, "{}", created.body);
        b_changes.next(&format!("tool {i} created on A"));
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    let (p50, p99, max) = (
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        latencies[latencies.len() - 1],
    );
    eprintln!("A→B list_changed over 100 creates: p50 {p50:?}, p99 {p99:?}, max {max:?}");
    assert!(
        max < Duration::from_secs(1),
        "a change took {max:?} to reach B (p50 {p50:?}, p99 {p99:?})"
    );
}

/// The listeners of both instances are cut off and cannot reconnect (the database refuses new
/// connections; pooled ones keep working) while a tool is created through A: its notice reaches
/// no one, so B can only learn of it from the resync its listener does once it is back.
#[test]
fn a_change_made_while_the_other_instance_was_not_listening_reaches_it_by_the_resync() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().expect("database");
    let db = url.rsplit('/').next().expect("database name").to_owned();
    let env = Env::new();
    let args = ["--database-url", url.as_str(), "--poll-interval", "1h"];
    let a = env.serve(&args);
    let b = env.serve(&args);
    let created = |name: &str| {
        request(
            &a.addr,
            "POST",
            "/api/v1/custom-tools",
            Some(create_body(name).as_slice()),
        )
        .status
    };
    assert_eq!(created("before"), 201);
    b.wait_until("B serves the tool created on A", || serves(&b, "before"));

    cluster
        .psql(&format!("ALTER DATABASE {db} WITH ALLOW_CONNECTIONS false"))
        .expect("refuse new connections");
    let cut = cluster
        .psql(&format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = '{db}' AND query LIKE 'LISTEN%'"
        ))
        .expect("cut the listeners");
    assert_eq!(cut, "2", "each instance has one listening connection");
    assert_eq!(created("while_away"), 201);
    // Long enough for the listeners to fail at least once more.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !serves(&b, "while_away"),
        "B heard of it while not listening"
    );
    cluster
        .psql(&format!("ALTER DATABASE {db} WITH ALLOW_CONNECTIONS true"))
        .expect("allow connections again");
    b.wait_until(
        "B serves the tool created while it was not listening",
        || serves(&b, "while_away"),
    );
    assert!(
        b.stderr().contains("the LISTEN connection"),
        "B's log does not show the lost listener:\n{}",
        b.stderr()
    );
}

/// Issue 31: a call that ran while the database was down — so its result could not be
/// scrubbed of the owner's secrets — says the tool ran and its result was withheld, with the
/// execution's id: REST answers 200 with `result_withheld` (not a 500 that invites a retry),
/// MCP the same kind and `ran: true`, and usage records the run as `withheld`, not as the
/// tool's error.
#[test]
fn a_call_that_ran_during_an_outage_says_its_result_was_withheld_not_that_the_tool_failed() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().expect("database");
    let env = Env::new();
    let server = env.serve(&["--database-url", url.as_str()]);
    let made = server.post(
        "/api/v1/custom-tools",
        &json!({"name": "work", "description": "d", "parameters": {"type": "object"},
                "code": "return 'work done';"}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let session = super::mcp_session(&server.addr);
    cluster.stop().expect("stop PostgreSQL");

    let rest = server.post("/api/v1/tools/work/execute", &json!({"arguments": {}}));
    assert_eq!(rest.status, 200, "{}", rest.body);
    let data = &rest.json()["data"];
    assert_eq!(data["isError"], true, "{data}");
    assert_eq!(data["metadata"]["errorKind"], "result_withheld", "{data}");
    assert_eq!(data["content"]["ran"], true, "{data}");
    let message = data["content"]["error"].as_str().unwrap_or_default();
    assert!(message.contains("do not retry it blindly"), "{message}");
    assert!(!rest.body.contains("work done"), "{}", rest.body);
    let rest_run = data["content"]["executionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no execution id: {data}"))
        .to_owned();

    let mcp = super::postgres_balancer::rpc(&super::mcp_post(
        &server.addr,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "work", "arguments": {}}}),
    ));
    let result = &mcp["result"];
    assert_eq!(result["isError"], true, "{mcp}");
    assert_eq!(
        result["structuredContent"]["kind"], "result_withheld",
        "{mcp}"
    );
    assert_eq!(result["structuredContent"]["ran"], true, "{mcp}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("[result_withheld]"), "{text}");
    let mcp_run = result["structuredContent"]["executionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no execution id: {mcp}"))
        .to_owned();

    cluster.restart().expect("restart PostgreSQL");
    server.wait_until("ready again", || server.get("/readyz").status == 200);
    // The runs are recorded (from the spool) as withheld, not as the tool's errors.
    server.wait_until("both runs recorded as withheld", || {
        let listed = server.get("/api/v1/executions?tool=work&status=withheld");
        listed.body.contains(&rest_run) && listed.body.contains(&mcp_run)
    });
    let errors = server.get("/api/v1/executions?tool=work&status=error");
    assert_eq!(errors.status, 200, "{}", errors.body);
    assert!(
        !errors.body.contains(&rest_run) && !errors.body.contains(&mcp_run),
        "{}",
        errors.body
    );
}

/// Issue 31, the CLI's face of the withheld result: `toolsmith run` of a tool that ran while
/// the database went away (stopped while the tool waited on a request the test answers)
/// exits 7, not 10 or 1, and names the tool ran and the execution to check.
#[test]
fn toolsmith_run_of_a_call_that_ran_during_an_outage_exits_7_naming_the_run() {
    use std::io::{Read as _, Write as _};
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().expect("database");
    let env = Env::new();
    let gate = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = gate.local_addr().expect("addr").port();
    let config = env.write(
        "toolsmith.toml",
        &format!("[egress]\nallowed_private_hosts = [\"127.0.0.1:{port}\"]\n"),
    );
    let config = config.to_str().expect("a path");
    let tool = json!({
        "name": "gated", "description": "d", "parameters": {"type": "object"},
        "permissions": ["network"],
        "code": format!("await fetch('http://127.0.0.1:{port}/'); return 'gated ran';"),
    });
    let file = env.write("gated.json", &tool.to_string());
    let global = ["--database-url", url.as_str()];
    let mut create = global.to_vec();
    create.extend(["tool", "create", "--file", file.to_str().expect("a path")]);
    let made = env
        .command(&create)
        .env("TOOLSMITH_CONFIG", config)
        .output()
        .expect("tool create");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );

    let mut run = global.to_vec();
    run.extend(["run", "gated"]);
    let child = env
        .command(&run)
        .env("TOOLSMITH_CONFIG", config)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("toolsmith run");
    // The tool is running once its request arrives: the database goes away, then it gets
    // its answer and returns.
    let (mut request, _) = gate.accept().expect("the tool's request");
    let mut head = [0u8; 1024];
    let _ = request.read(&mut head).expect("read the request");
    cluster.stop().expect("stop PostgreSQL");
    request
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        .expect("answer");
    drop(request);
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(7),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(stderr.contains("the tool ran"), "{stderr}");
    assert!(stderr.contains("(execution exec_"), "{stderr}");
    assert!(!stdout.contains("gated ran"), "{stdout}");
    cluster.restart().expect("restart PostgreSQL");
}
