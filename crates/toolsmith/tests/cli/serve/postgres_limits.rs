//! Rate limits and the per-user concurrency cap shared by two real `toolsmith serve` processes
//! on one PostgreSQL database: what one user spends through either instance, by any door (REST
//! execute, MCP `tools/call` in both protocol generations, a dry run, a nested
//! `utils.callTool`), comes out of one budget; and the slots of an instance that dies free
//! themselves.

use serde_json::{Value, json};

use super::postgres::{database, two_instances};
use super::postgres_balancer::{mcp_stateless, rpc};
use super::{Env, Server, busy_code, mcp_post, mcp_session, wait_for_cpu};

fn create_tool(server: &Server, name: &str, code: &str) {
    let created = server.post(
        "/api/v1/custom-tools",
        &json!({"name": name, "description": "d", "parameters": {"type": "object"},
                "code": code}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
}

fn execute(server: &Server, tool: &str) -> (u16, Value) {
    let r = server.post(
        &format!("/api/v1/tools/{tool}/execute"),
        &json!({"arguments": {}}),
    );
    let body = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    (r.status, body)
}

fn dry_run(server: &Server) -> (u16, Value) {
    let r = server.post(
        "/api/v1/custom-tools/test",
        &json!({"name": "dry", "description": "d", "parameters": {"type": "object"},
                "code": "return 'dry ran';", "testArgs": {}}),
    );
    let body = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    (r.status, body)
}

fn session_call(server: &Server, session: &str, tool: &str) -> Value {
    rpc(&mcp_post(
        &server.addr,
        Some(session),
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": tool, "arguments": {}}}),
    ))
}

fn stateless_call(server: &Server, tool: &str) -> Value {
    rpc(&mcp_stateless(
        &server.addr,
        9,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    ))
}

/// A bucket of 10 for the local user (refilling one token a minute, so nothing comes back
/// while the test runs): 14 token spends spread over both instances and every door are
/// exactly 10 allowed and 4 refused, each refusal the door's own rate-limit answer.
#[test]
fn a_rate_limit_for_one_user_holds_across_two_instances_on_every_door() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &["--rate-per-user", "1:10"]);
    create_tool(&a, "limited", "return 'limited ran';");
    create_tool(
        &a,
        "caller",
        "const inner = await utils.callTool('limited', {}); return {inner};",
    );
    // The catalogue, not the store: `/api/v1/custom-tools/{id}` reads the shared store, so it
    // answers before the other instance's registry has the tool.
    for server in [&a, &b] {
        server.wait_until("the tools reaching both instances", || {
            let body = server.get("/api/v1/tools").body;
            body.contains("\"limited\"") && body.contains("\"caller\"")
        });
    }
    let session_b = mcp_session(&b.addr);

    // Ten tokens, spent through both instances and every door.
    let ran = |(status, body): (u16, Value)| {
        assert_eq!(status, 200, "{body}");
        assert_ne!(body["data"]["metadata"]["errorKind"], json!("rate_limited"));
    };
    ran(execute(&a, "limited")); // 1
    ran(execute(&b, "limited")); // 2
    let answer = session_call(&b, &session_b, "limited"); // 3
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    let answer = stateless_call(&a, "limited"); // 4
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    let (status, body) = dry_run(&b); // 5
    assert_eq!(status, 200, "{body}");
    assert!(body.to_string().contains("dry ran"), "{body}");
    let (status, body) = execute(&a, "caller"); // 6 and, nested, 7
    assert_eq!(status, 200, "{body}");
    assert!(body.to_string().contains("limited ran"), "{body}");
    ran(execute(&b, "limited")); // 8
    ran(execute(&a, "limited")); // 9
    ran(execute(&b, "limited")); // 10

    // Four more, one through each door of either instance: every one refused.
    let (status, body) = execute(&a, "limited");
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], json!("rate_limited"), "{body}");
    let (status, body) = dry_run(&a);
    assert_eq!(status, 429, "{body}");
    let answer = session_call(&b, &session_b, "limited");
    assert_eq!(
        answer["error"]["data"]["kind"],
        json!("rate_limited"),
        "{answer}"
    );
    let answer = stateless_call(&b, "limited");
    assert_eq!(
        answer["error"]["data"]["kind"],
        json!("rate_limited"),
        "{answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("rate limit per user")),
        "{answer}"
    );

    // The refusals are counted where they happened: two on each instance.
    for server in [&a, &b] {
        let metrics = server.get("/metrics").body;
        assert!(
            metrics.contains("toolsmith_rate_limit_rejections_total 2"),
            "{metrics}"
        );
    }
}

/// Two slots for the local user: with one busy call on each instance, a third call is
/// refused on both; once they end, calls run again. Then an instance that dies holding both
/// slots: the other refuses at first (the slots are leased), and its calls run again once the
/// dead instance's leases lapse (15 s), without anyone giving them back.
#[test]
fn the_per_user_concurrency_cap_holds_across_two_instances_and_survives_one_dying() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let db = url.rsplit('/').next().unwrap_or_default().to_owned();
    let slots_held = || {
        cluster
            .psql_in(
                &db,
                "SELECT count(*) FROM limit_slots WHERE expires_at > now()",
            )
            .expect("psql")
    };
    let env = Env::new();
    let (mut a, b) = two_instances(&env, &url, &["--max-concurrent-per-user", "2"]);
    create_tool(&a, "busy", &busy_code(4000));
    create_tool(&a, "quick", "return 'quick ran';");
    for server in [&a, &b] {
        server.wait_until("the tools reaching both instances", || {
            let body = server.get("/api/v1/tools").body;
            body.contains("\"busy\"") && body.contains("\"quick\"")
        });
    }
    let busy = |server: &Server| {
        let addr = server.addr.clone();
        std::thread::spawn(move || {
            super::try_request(
                &addr,
                "POST",
                "/api/v1/tools/busy/execute",
                Some(json!({"arguments": {}}).to_string().as_bytes()),
            )
            .map(|r| r.status)
            .ok()
        })
    };
    let refused = |(status, body): &(u16, Value)| {
        *status == 429
            && body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("too many of your executions are running"))
    };

    // One busy call on each instance, each seen burning CPU (inside its slot) before the next
    // starts, so no probe races them for a slot.
    let running = [&a, &b].map(|server| {
        let base = server.cpu_ticks();
        let call = busy(server);
        wait_for_cpu(server, base, 20);
        call
    });
    // Once both busy calls hold their slots, a quick call is refused on either instance.
    for server in [&a, &b] {
        let on = execute(server, "quick");
        assert!(refused(&on), "{on:?}");
    }
    for call in running {
        assert_eq!(call.join().unwrap(), Some(200));
    }
    // Both slots were given back at once.
    for server in [&a, &b] {
        let (status, body) = execute(server, "quick");
        assert_eq!(status, 200, "{body}");
    }

    // A takes both slots and dies (SIGKILL: nothing is given back).
    let running = [busy(&a), busy(&a)];
    b.wait_until("A holding both slots", || slots_held() == "2");
    let held = execute(&b, "quick");
    assert!(refused(&held), "{held:?}");
    a.signal("KILL");
    let _ = a.child.wait();
    for call in running {
        let _ = call.join();
    }
    let right_after = execute(&b, "quick");
    assert!(refused(&right_after), "{right_after:?}");
    b.wait_until("A's leases lapsing", || execute(&b, "quick").0 == 200);
}
