//! Agent runs (issue 37) on two real `toolsmith serve` processes sharing one PostgreSQL database
//! and one `TOOLSMITH_SECRET_KEY` (each with its own data directory, as on two hosts), against a
//! scripted OpenAI-compatible model server on 127.0.0.1 that holds every answer, so each run
//! stays `running` until it is cancelled. A run started on one instance is listed, read and
//! cancelled on the other, and the instance running it lets go of its model request within
//! the runner's one-second cancel poll; the per-user `agent_max_running` cap counts the runs of
//! both instances.

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::postgres::database;
use super::{Env, Server};

/// 32 bytes as 64 hex digits: the Config Center key both instances are given.
const SECRET_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// What the model server saw on connection `n` (numbered in the order they were accepted).
#[derive(Debug, PartialEq)]
enum Seen {
    /// A request arrived with this JSON body; it is never answered.
    Request(usize, Value),
    /// The client closed the connection (it gave up on the request).
    Closed(usize),
}

/// A model server on 127.0.0.1 that reads each request and never answers it.
struct HoldingModel {
    host: String,
    seen: Receiver<Seen>,
}

impl HoldingModel {
    fn start() -> HoldingModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
        let host = listener.local_addr().expect("its address").to_string();
        let (tx, seen) = channel();
        std::thread::spawn(move || {
            for (n, conn) in listener.incoming().enumerate() {
                let Ok(conn) = conn else { return };
                let tx = tx.clone();
                std::thread::spawn(move || hold(n, conn, &tx));
            }
        });
        HoldingModel { host, seen }
    }

    /// The next thing seen, waiting at most 30 s for it.
    fn next(&self, what: &str) -> Seen {
        self.seen
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("the model server never saw {what}: {e}"))
    }

    /// The next request's connection number.
    fn request(&self, what: &str) -> usize {
        match self.next(what) {
            Seen::Request(n, body) => {
                assert_eq!(body["model"], "test-model", "{body}");
                n
            }
            other => panic!("expected {what}, got {other:?}"),
        }
    }
}

/// Reads one HTTP request on `conn`, reports it, then holds the connection until the client
/// closes it.
fn hold(n: usize, conn: TcpStream, tx: &Sender<Seen>) {
    let mut reader = BufReader::new(conn);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = tx.send(Seen::Closed(n));
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let body = match reader.read_exact(&mut body) {
        Ok(()) => serde_json::from_slice(&body).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let _ = tx.send(Seen::Request(n, body));
    // Nothing more is sent by a client waiting for its answer: the read ends when it closes.
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    let _ = tx.send(Seen::Closed(n));
}

/// One instance on `url` with its own data directory, the shared key, and `config`.
fn instance(env: &Env, url: &str, config: &str) -> Server {
    env.serve_with_env(
        &[
            "--database-url",
            url,
            "--poll-interval",
            "100ms",
            "--config",
            config,
        ],
        &[("TOOLSMITH_SECRET_KEY", SECRET_KEY)],
    )
}

/// The envelope's `data`, once the status is `status`.
fn ok(response: &super::Response, status: u16) -> Value {
    assert_eq!(response.status, status, "{}", response.body);
    response.json()["data"].take()
}

fn start_run(server: &Server, input: &str) -> super::Response {
    server.post("/api/v1/agents/thinker/runs", &json!({"input": input}))
}

fn run_on(server: &Server, run: &str) -> Value {
    ok(
        &server.get(&format!("/api/v1/agents/thinker/runs/{run}")),
        200,
    )
}

fn cancel_on(server: &Server, run: &str) -> Value {
    ok(
        &server.post(
            &format!("/api/v1/agents/thinker/runs/{run}/cancel"),
            &json!({}),
        ),
        200,
    )
}

/// Waits (at most 10 s: the runner asks the store every second) until the model server sees
/// connection `n` closed, the next thing it should see; how long it took.
fn closed_within(model: &HoldingModel, n: usize, what: &str) -> Duration {
    let since = Instant::now();
    match model.seen.recv_timeout(Duration::from_secs(10)) {
        Ok(Seen::Closed(m)) if m == n => since.elapsed(),
        Ok(other) => panic!("while waiting for {what}: {other:?}"),
        Err(e) => panic!("{what}: the model request was never given up ({e})"),
    }
}

fn runs_active(server: &Server) -> String {
    server
        .get("/metrics")
        .body
        .lines()
        .find(|l| l.starts_with("toolsmith_agent_runs_active "))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn an_agent_run_started_on_one_instance_is_listed_and_cancelled_on_the_other() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let model = HoldingModel::start();
    let (env_a, env_b) = (Env::new(), Env::new());
    let toml = format!(
        "agent_max_running = 2\n\n[egress]\nallowed_private_hosts = [\"{}\"]\nallow_plain_http = true\n",
        model.host
    );
    let config_a = env_a.write("toolsmith.toml", &toml);
    let config_b = env_b.write("toolsmith.toml", &toml);
    let a = instance(&env_a, &url, config_a.to_str().expect("utf-8 path"));
    let b = instance(&env_b, &url, config_b.to_str().expect("utf-8 path"));

    // The model service (its key sealed with the shared key) and the agent, through A.
    ok(
        &a.post(
            "/api/v1/config/services",
            &json!({"name": "local", "fields": [
                {"name": "protocol", "kind": "text", "required": true},
                {"name": "base_url", "kind": "url"},
                {"name": "api_key", "kind": "secret"},
            ]}),
        ),
        201,
    );
    ok(
        &a.post(
            "/api/v1/config/services/local/entries",
            &json!({"values": {"protocol": "openai",
                               "base_url": format!("http://{}/v1", model.host),
                               "api_key": "sk-shared-0123456789"}}),
        ),
        201,
    );
    ok(
        &a.post(
            "/api/v1/agents",
            &json!({"name": "thinker", "instructions": "Think.",
                    "model": {"service": "local", "model": "test-model"}}),
        ),
        201,
    );

    // A run started on A waits for the model.
    let first = ok(&start_run(&a, "Think long."), 202);
    let first = first["id"].as_str().expect("the run's id").to_owned();
    let first_conn = model.request("the run started on A");

    // B lists it and reads it, running.
    let listed = ok(&b.get("/api/v1/agents/thinker/runs"), 200);
    assert_eq!(listed["runs"][0]["id"], first.as_str(), "{listed}");
    assert_eq!(listed["runs"][0]["status"], "running", "{listed}");
    assert_eq!(run_on(&b, &first)["status"], "running");

    // A second run, on B (B opens the service's key too), fills the user's two places: a
    // third is refused on either instance, naming the cap and its setting.
    let second = ok(&start_run(&b, "Think too."), 202);
    let second = second["id"].as_str().expect("the run's id").to_owned();
    let second_conn = model.request("the run started on B");
    for server in [&a, &b] {
        let refused = start_run(server, "One more.");
        assert_eq!(refused.status, 409, "{}", refused.body);
        assert!(
            refused.body.contains("limit_reached")
                && refused.body.contains("agent_max_running")
                && refused.body.contains('2'),
            "{}",
            refused.body
        );
    }

    // Cancelled on B: A gives up its model request within the one-second poll.
    assert_eq!(cancel_on(&b, &first)["status"], "cancelled");
    let took = closed_within(&model, first_conn, "A letting go of the run cancelled on B");
    assert!(took < Duration::from_secs(5), "A let go after {took:?}");
    assert_eq!(run_on(&a, &first)["status"], "cancelled");
    a.wait_until("A counting no run", || {
        runs_active(&a) == "toolsmith_agent_runs_active 0"
    });
    assert_eq!(runs_active(&b), "toolsmith_agent_runs_active 1");

    // The place it held is free again: a run on A fits.
    let third = ok(&start_run(&a, "Again."), 202);
    let third_conn = model.request("the run started on A after the cancel");

    // And the other way round: B's run cancelled on A.
    assert_eq!(cancel_on(&a, &second)["status"], "cancelled");
    closed_within(
        &model,
        second_conn,
        "B letting go of the run cancelled on A",
    );
    assert_eq!(run_on(&b, &second)["status"], "cancelled");
    let third = third["id"].as_str().expect("the run's id");
    assert_eq!(run_on(&b, third)["status"], "running");
    let listed = ok(&a.get("/api/v1/agents/thinker/runs"), 200);
    assert_eq!(listed["runs"].as_array().map(Vec::len), Some(3), "{listed}");
    // Nothing else reached the model, and the third run's request is still held.
    assert_eq!(
        model.seen.try_recv().ok(),
        None,
        "after connection {third_conn}"
    );
}
