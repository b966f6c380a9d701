//! Agent teams (issue 38, spec 001 §8) on two real `toolsmith serve` processes sharing one
//! PostgreSQL database: a team made on one instance is the other's too, and when two agents
//! claim the same task at the same moment — one through each instance — exactly one wins, for
//! every task of the board (the claim is the store's conditional `UPDATE`).

use std::io::Write as _;
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use serde_json::{Value, json};

use super::postgres::{database, two_instances};
use super::{Env, Response, Server, read_response};

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
    // A refusal the tool names (invalid arguments) is a 422 with the message.
    if response.status == 422 {
        return (response.json()["error"].take(), true);
    }
    let data = ok(&response, 200);
    (data["result"].clone(), data["isError"] == true)
}

fn agent(server: &Server, name: &str) -> String {
    let made = ok(
        &server.post(
            "/api/v1/agents",
            &json!({"name": name, "model": {"service": "local", "model": "m"},
                    "toolPolicy": {"allow": ["group:teams"]}}),
        ),
        201,
    );
    made["id"].as_str().expect("an id").to_owned()
}

#[test]
fn two_agents_claiming_one_task_on_two_instances_one_wins() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &["--enable-group", "teams"]);
    let lead = agent(&a, "lead");
    let alice = agent(&a, "alice");
    let bob = agent(&a, "bob");
    ok(
        &a.post(
            "/api/v1/teams",
            &json!({"name": "crew", "lead": "lead", "members": ["alice", "bob"]}),
        ),
        201,
    );
    // B knows the team at once: it is the database's.
    let listed = ok(&b.get("/api/v1/teams"), 200);
    assert_eq!(listed["teams"][0]["name"], "crew", "{listed}");

    const TASKS: usize = 12;
    let mut ids = Vec::new();
    for n in 0..TASKS {
        let (made, error) = call_as(
            &a.addr,
            &lead,
            "team_tasks",
            &json!({"action": "create", "subject": format!("task {n}")}),
        );
        assert!(!error, "{made}");
        ids.push(made["task"]["id"].as_str().expect("an id").to_owned());
    }
    // For each task, alice on A and bob on B claim it at the same moment.
    let mut winners = Vec::new();
    for id in &ids {
        let start = Arc::new(Barrier::new(2));
        let claims: Vec<_> = [
            (a.addr.clone(), alice.clone()),
            (b.addr.clone(), bob.clone()),
        ]
        .into_iter()
        .map(|(addr, who)| {
            let (start, id) = (Arc::clone(&start), id.clone());
            std::thread::spawn(move || {
                start.wait();
                call_as(
                    &addr,
                    &who,
                    "team_tasks",
                    &json!({"action": "claim", "task_id": id}),
                )
            })
        })
        .collect();
        let results: Vec<(Value, bool)> = claims
            .into_iter()
            .map(|claim| claim.join().expect("the claim"))
            .collect();
        let won: Vec<&Value> = results.iter().filter(|(_, e)| !e).map(|(r, _)| r).collect();
        assert_eq!(won.len(), 1, "exactly one claim of {id} wins: {results:?}");
        let lost = results.iter().find(|(_, e)| *e).expect("a refused claim");
        assert!(lost.0.to_string().contains("claimed"), "{results:?}");
        winners.push(
            won[0]["task"]["claimedBy"]
                .as_str()
                .expect("a claimer")
                .to_owned(),
        );
    }
    // Each instance reads the same board: every task in progress, by the one that won it.
    for server in [&a, &b] {
        let board = ok(&server.get("/api/v1/teams/crew/board"), 200);
        for (id, winner) in ids.iter().zip(&winners) {
            let task = board["tasks"]
                .as_array()
                .and_then(|t| t.iter().find(|t| t["id"] == id.as_str()))
                .unwrap_or_else(|| panic!("{id} on the board: {board}"));
            assert_eq!(task["status"], "in_progress", "{task}");
            assert_eq!(task["claimedBy"], winner.as_str(), "{task}");
        }
    }
}
