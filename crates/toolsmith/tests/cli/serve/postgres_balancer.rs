//! MCP behind a load balancer, with two real `toolsmith serve` processes on one PostgreSQL
//! database: a 2026-07-28 client needs no stickiness (each request stands alone, so
//! consecutive calls may land on different instances), and a 2025-11-25 session sent to an
//! instance that did not create it gets the spec's 404, which tells the client to initialize
//! again.

use serde_json::{Value, json};

use super::postgres::{create, database, two_instances};
use super::{Env, Response, mcp_post, mcp_session, read_response};

/// One 2026-07-28 request (no session: the version in a header and in `_meta`, the method and
/// tool name in `Mcp-Method` / `Mcp-Name`).
pub(super) fn mcp_stateless(addr: &str, id: u64, method: &str, mut params: Value) -> Response {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
    read_response(stream).expect("an answer from /mcp")
}

/// A bodiless `GET` (the event stream) or `DELETE` (closing) of `/mcp` for a session.
fn session_request(addr: &str, method: &str, session: &str) -> Response {
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Accept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
    read_response(stream).expect("an answer from /mcp")
}

/// The JSON-RPC message of an MCP answer, whether it came as a JSON body or as SSE events.
pub(super) fn rpc(response: &Response) -> Value {
    let body = response.body.trim();
    if body.starts_with('{') {
        return response.json();
    }
    body.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in: {}", response.body))
}

#[test]
fn a_stateless_client_calls_through_either_instance_in_turn() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    assert_eq!(create(&a, "roaming"), 201);
    // B knows the tool once A's notice arrived: wait for it through REST.
    // (Not `GET /api/v1/custom-tools/…`: that reads the shared database, which has the tool
    // at once, while calls are served from B's catalogue, which has it once the notice came.)
    b.wait_until("the tool reaching B's catalogue", || {
        b.get("/api/v1/tools").body.contains("\"roaming\"")
    });
    // One client, consecutive requests: A, B, A, B — as a round-robin balancer sends them.
    for (i, server) in [&a, &b, &a, &b].into_iter().enumerate() {
        let id = i as u64 + 1;
        let answer = rpc(&mcp_stateless(
            &server.addr,
            id,
            "tools/call",
            json!({"name": "roaming", "arguments": {}}),
        ));
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
        assert!(answer.to_string().contains("roaming ran"), "{answer}");
        let listed = rpc(&mcp_stateless(
            &server.addr,
            id + 100,
            "tools/list",
            json!({}),
        ));
        assert!(listed.to_string().contains("\"roaming\""), "{listed}");
    }
}

#[test]
fn a_session_sent_to_the_other_instance_is_not_found_and_the_client_starts_over_there() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    let session = mcp_session(&a.addr);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(mcp_post(&a.addr, Some(&session), &list).status, 200);

    // The balancer sends the session's next request to B, which never saw it: 404, the
    // spec's answer for a session the server does not have (the client must initialize).
    let lost = mcp_post(&b.addr, Some(&session), &list);
    assert_eq!(lost.status, 404, "{}", lost.body);
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    assert_eq!(mcp_post(&b.addr, Some(&session), &ping).status, 404);
    // Its event stream, and closing it, are not found on B either.
    assert_eq!(session_request(&b.addr, "GET", &session).status, 404);
    assert_eq!(session_request(&b.addr, "DELETE", &session).status, 404);

    // The client starts over on B, and that session works there.
    let fresh = mcp_session(&b.addr);
    assert_ne!(fresh, session);
    let listed = mcp_post(&b.addr, Some(&fresh), &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        rpc(&listed)["result"]["tools"].is_array(),
        "{}",
        listed.body
    );
    // A still serves the session it created.
    assert_eq!(mcp_post(&a.addr, Some(&session), &ping).status, 200);
}
