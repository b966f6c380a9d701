//! Delegation (issue 38, spec 001 §7) on two real `toolsmith serve` processes sharing one
//! PostgreSQL database, against a model server on 127.0.0.1 that answers each request only
//! when the test says: a delegation started on one instance runs there, is listed running on
//! the other, finishes, and is in the other's history with its result — both ways, async and
//! sync — and one started on A is cancelled from B, which stops A's run of it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use super::postgres::{database, two_instances};
use super::{Env, Response, Server, read_response};

/// What the model server saw.
enum Seen {
    /// A request with its JSON body, and the connection to answer it on.
    Request(Value, TcpStream),
    /// The client closed a connection whose request was not answered (it gave up on it).
    GaveUp(Value),
}

/// A model server on 127.0.0.1 whose requests wait for the test's answer (also used by
/// `postgres_sessions`).
pub(super) struct Model {
    pub(super) host: String,
    seen: Receiver<Seen>,
}

impl Model {
    pub(super) fn start() -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
        let host = listener.local_addr().expect("its address").to_string();
        let (tx, seen) = channel();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let answer = conn.try_clone().expect("a second handle");
                    let mut reader = BufReader::new(conn);
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
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
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let _ = tx.send(Seen::Request(body.clone(), answer));
                    // Until the client closes: an answered request ends with our close too.
                    let mut rest = Vec::new();
                    if reader.read_to_end(&mut rest).is_ok() {
                        let _ = tx.send(Seen::GaveUp(body));
                    }
                });
            }
        });
        Model { host, seen }
    }

    /// The next request (at most 30 s away): the task it carries and its connection.
    pub(super) fn request(&self, what: &str) -> (String, TcpStream) {
        loop {
            match self.seen.recv_timeout(Duration::from_secs(30)) {
                Ok(Seen::Request(body, conn)) => {
                    let text = body["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .and_then(|m| m["content"].as_str())
                        .unwrap_or_default()
                        .to_owned();
                    return (text, conn);
                }
                // A connection the provider's client closed after its answer.
                Ok(Seen::GaveUp(_)) => {}
                Err(e) => panic!("the model server never saw {what}: {e}"),
            }
        }
    }

    /// Waits (at most 10 s: a run asks the store every second) until the request whose last
    /// message is `text` is given up.
    pub(super) fn given_up(&self, text: &str) {
        loop {
            match self.seen.recv_timeout(Duration::from_secs(10)) {
                Ok(Seen::GaveUp(body))
                    if body["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .is_some_and(|m| m["content"] == text) =>
                {
                    return;
                }
                Ok(_) => {}
                Err(e) => panic!("the request '{text}' was never given up: {e}"),
            }
        }
    }
}

/// Answers a held request with a final answer `text`.
pub(super) fn answer(mut conn: TcpStream, text: &str) {
    let body = json!({
        "id": "chatcmpl-p", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
    .to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).expect("answer");
    conn.write_all(body.as_bytes()).expect("answer");
    let _ = conn.shutdown(std::net::Shutdown::Write);
}

fn ok(response: &Response, status: u16) -> Value {
    assert_eq!(response.status, status, "{}", response.body);
    response.json()["data"].take()
}

/// Calls the built-in `tool` on `addr` as the agent `agent`: its result and whether it is an
/// error.
fn call_as(addr: &str, agent: &str, tool: &str, args: &Value) -> (Value, bool) {
    let body = json!({"arguments": args}).to_string();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let head = format!(
        "POST /api/v1/tools/{tool}/execute HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nX-Toolsmith-Agent: {agent}\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send");
    stream.write_all(body.as_bytes()).expect("send");
    let response = read_response(stream).expect("an answer");
    let data = ok(&response, 200);
    (data["result"].clone(), data["isError"] == true)
}

/// The user's delegations as `server` lists them (`?active=true` with `active`).
fn delegations(server: &Server, active: bool) -> Vec<Value> {
    let path = if active {
        "/api/v1/delegations?active=true"
    } else {
        "/api/v1/delegations"
    };
    ok(&server.get(path), 200)["delegations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn one(server: &Server, id: &str) -> Value {
    delegations(server, false)
        .into_iter()
        .find(|d| d["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not listed on {}", server.addr))
}

#[test]
fn a_delegation_started_on_one_instance_finishes_and_is_listed_on_the_other() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let model = Model::start();
    let env = Env::new();
    let config = env.write(
        "toolsmith.toml",
        &format!(
            "[egress]\nallowed_private_hosts = [\"{}\"]\nallow_plain_http = true\n",
            model.host
        ),
    );
    let config = config.to_str().expect("a utf-8 path");
    let (a, b) = two_instances(
        &env,
        &url,
        &["--config", config, "--enable-group", "delegation"],
    );
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
                "base_url": format!("http://{}/v1", model.host), "api_key": "none"}}),
        ),
        201,
    );
    let mut ids = Vec::new();
    for name in ["lead", "billing"] {
        let made = ok(
            &a.post(
                "/api/v1/agents",
                &json!({"name": name, "instructions": format!("You are {name}."),
                    "model": {"service": "local", "model": "test-model"},
                    "toolPolicy": {"allow": ["group:delegation"]}}),
            ),
            201,
        );
        ids.push(made["id"].as_str().expect("an id").to_owned());
    }
    let lead = ids[0].clone();
    // The link, made on B: it is the database's.
    ok(
        &b.post(
            "/api/v1/agent-links",
            &json!({"from": "lead", "to": "billing", "direction": "bidirectional"}),
        ),
        201,
    );

    // Async on A: billing's run is A's, and B lists the delegation running.
    let (started, error) = call_as(
        &a.addr,
        &lead,
        "delegate",
        &json!({"agent": "billing", "task": "refund order 7", "mode": "async"}),
    );
    assert!(!error, "{started}");
    assert_eq!(started["status"], "running", "{started}");
    let id = started["id"].as_str().expect("an id").to_owned();
    let (asked, conn) = model.request("billing's run for A's delegation");
    assert_eq!(
        asked,
        "[a task delegated to you by agent 'lead']\nrefund order 7"
    );
    let running = delegations(&b, true);
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(
        (&running[0]["id"], &running[0]["mode"]),
        (&json!(id), &json!("async"))
    );
    let (listed, _) = call_as(&b.addr, &lead, "delegate", &json!({"action": "list"}));
    assert_eq!(listed["delegations"][0]["id"], id.as_str(), "{listed}");
    // It finishes on A; B reads it completed, with its result, in the list and the history.
    answer(conn, "refunded order 7");
    b.wait_until("B reading A's delegation completed", || {
        one(&b, &id)["status"] == "completed"
    });
    assert_eq!(one(&b, &id)["result"], "refunded order 7");
    let (history, _) = call_as(&b.addr, &lead, "delegate", &json!({"action": "history"}));
    let entry = history["delegations"]
        .as_array()
        .and_then(|all| all.iter().find(|d| d["id"] == id.as_str()))
        .unwrap_or_else(|| panic!("not in B's history: {history}"));
    assert_eq!(
        (&entry["status"], &entry["result"], &entry["to"]),
        (
            &json!("completed"),
            &json!("refunded order 7"),
            &json!("billing")
        ),
        "{entry}"
    );
    assert!(delegations(&a, true).is_empty());

    // Sync on B, the other way: the caller waits on B, A lists it once it has ended.
    let caller = {
        let addr = b.addr.clone();
        let lead = lead.clone();
        std::thread::spawn(move || {
            call_as(
                &addr,
                &lead,
                "delegate",
                &json!({"agent": "billing", "task": "invoice 12"}),
            )
        })
    };
    let (_, conn) = model.request("billing's run for B's delegation");
    answer(conn, "invoiced 12");
    let (done, error) = caller.join().expect("the sync call");
    assert!(!error, "{done}");
    assert_eq!(
        (&done["status"], &done["result"], &done["mode"]),
        (&json!("completed"), &json!("invoiced 12"), &json!("sync"))
    );
    let on_a = one(&a, done["id"].as_str().expect("an id"));
    assert_eq!(
        (&on_a["status"], &on_a["result"]),
        (&json!("completed"), &json!("invoiced 12"))
    );

    // Started on A, cancelled from B: A's run gives its model request up.
    let (started, _) = call_as(
        &a.addr,
        &lead,
        "delegate",
        &json!({"agent": "billing", "task": "audit the ledger", "mode": "async"}),
    );
    let id = started["id"].as_str().expect("an id").to_owned();
    let (asked, _conn) = model.request("billing's run to cancel");
    let (cancelled, error) = call_as(
        &b.addr,
        &lead,
        "delegate",
        &json!({"action": "cancel", "id": id}),
    );
    assert!(!error, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    model.given_up(&asked);
    a.wait_until("A reading the delegation cancelled", || {
        one(&a, &id)["status"] == "cancelled"
    });
    assert!(delegations(&a, true).is_empty() && delegations(&b, true).is_empty());
}
