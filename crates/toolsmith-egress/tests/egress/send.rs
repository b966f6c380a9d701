//! Sending through the guard to a loopback server the test starts (allowed explicitly as a
//! private host): bodies, headers, redirects checked hop by hop, and every cap.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;
use toolsmith_egress::{EgressGuard, EgressPolicy, OutboundRequest, PrivateHost};

use crate::support::{FixedResolver, TestServer, other_port};

fn policy_for(server: &TestServer) -> EgressPolicy {
    EgressPolicy {
        allowed_private_hosts: vec![server.host_port().parse().unwrap()],
        ..EgressPolicy::default()
    }
}

fn get(url: String) -> OutboundRequest {
    OutboundRequest {
        method: "GET".to_owned(),
        url,
        ..OutboundRequest::default()
    }
}

async fn setup() -> (TestServer, EgressGuard) {
    let server = TestServer::start().await;
    let guard = EgressGuard::new(policy_for(&server)).unwrap();
    (server, guard)
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap()
}

#[tokio::test]
async fn get_returns_status_headers_and_body() {
    let (server, guard) = setup().await;
    let res = guard.send(get(server.url("/json"))).await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.status_text, "OK");
    assert_eq!(json(&res.body)["hello"], "world");
    assert!(
        res.headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("application/json"))
    );
    assert_eq!(res.final_url, server.url("/json"));
}

#[tokio::test]
async fn post_sends_method_headers_and_body() {
    let (server, guard) = setup().await;
    let res = guard
        .send(OutboundRequest {
            method: "post".to_owned(),
            url: server.url("/echo"),
            headers: vec![("X-Test".to_owned(), "yes".to_owned())],
            body: Some(b"{\"a\":1}".to_vec()),
        })
        .await
        .unwrap();
    let echoed = json(&res.body);
    assert_eq!(echoed["method"], "POST");
    assert_eq!(echoed["xTest"], "yes");
    assert_eq!(echoed["body"], "{\"a\":1}");
}

#[tokio::test]
async fn error_statuses_are_responses_not_errors() {
    let (server, guard) = setup().await;
    let res = guard.send(get(server.url("/status/404"))).await.unwrap();
    assert_eq!(res.status, 404);
    assert_eq!(res.body, b"status 404");
    let res = guard.send(get(server.url("/status/503"))).await.unwrap();
    assert_eq!(res.status, 503);
}

#[tokio::test]
async fn bad_methods_and_headers_are_refused() {
    let (server, guard) = setup().await;
    for (method, headers) in [
        ("CONNECT", vec![]),
        ("TRACE", vec![]),
        ("GET", vec![("Host".to_owned(), "other".to_owned())]),
        (
            "GET",
            vec![("Transfer-Encoding".to_owned(), "chunked".to_owned())],
        ),
        ("GET", vec![("Content-Length".to_owned(), "5".to_owned())]),
        ("GET", vec![("bad header".to_owned(), "x".to_owned())]),
        (
            "GET",
            vec![("x-a".to_owned(), "line\r\nInjected: 1".to_owned())],
        ),
    ] {
        let err = guard
            .send(OutboundRequest {
                method: method.to_owned(),
                url: server.url("/echo"),
                headers: headers.clone(),
                body: None,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), "invalid_request", "{method} {headers:?}: {err}");
    }
}

#[tokio::test]
async fn the_server_port_must_be_the_listed_one() {
    let (server, guard) = setup().await;
    let (_held, port) = other_port().await;
    let err = guard
        .send(get(format!("http://127.0.0.1:{port}/json")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "address_refused");
    // Without the listing, the test server itself is refused.
    let closed = EgressGuard::new(EgressPolicy::default()).unwrap();
    let err = closed.send(get(server.url("/json"))).await.unwrap_err();
    assert_eq!(err.code(), "address_refused");
}

#[tokio::test]
async fn redirects_to_refused_addresses_are_refused() {
    let (server, guard) = setup().await;
    let (_held, port) = other_port().await;
    for target in [
        format!("http://127.0.0.1:{port}/json"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[::1]/".to_owned(),
        "http://2130706433/".to_owned(),
        "http://localhost/".to_owned(),
        "file:///etc/passwd".to_owned(),
    ] {
        for code in [301, 302, 303, 307, 308] {
            let url = format!("{}?code={code}&url={}", server.url("/to"), encode(&target));
            let err = guard.send(get(url)).await.unwrap_err();
            let expected = if target.starts_with("file:") {
                "scheme_not_allowed"
            } else {
                "address_refused"
            };
            assert_eq!(err.code(), expected, "{code} to {target}: {err}");
        }
    }
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let (server, guard) = setup().await;
    let res = guard.send(get(server.url("/redirect/5"))).await.unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, b"end of chain");
    assert_eq!(res.final_url, server.url("/redirect/0"));
    let err = guard
        .send(get(server.url("/redirect/6")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "too_many_redirects");
}

#[tokio::test]
async fn see_other_turns_a_post_into_a_get_without_body() {
    let (server, guard) = setup().await;
    let res = guard
        .send(OutboundRequest {
            method: "POST".to_owned(),
            url: server.url("/see-other"),
            headers: vec![("content-type".to_owned(), "text/plain".to_owned())],
            body: Some(b"secret body".to_vec()),
        })
        .await
        .unwrap();
    let echoed = json(&res.body);
    assert_eq!(echoed["method"], "GET");
    assert_eq!(echoed["body"], "");
    assert_eq!(echoed["contentType"], Value::Null);
}

#[tokio::test]
async fn credentials_do_not_follow_a_redirect_to_another_origin() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    let resolver = FixedResolver::new(&[("other.test", &["127.0.0.1"])]);
    let policy = EgressPolicy {
        allowed_private_hosts: vec![
            server.host_port().parse().unwrap(),
            format!("other.test:{port}").parse().unwrap(),
        ],
        ..EgressPolicy::default()
    };
    let guard = EgressGuard::with_resolver(policy, resolver).unwrap();
    let auth = vec![("Authorization".to_owned(), "Bearer s3cret".to_owned())];
    let same = format!("{}?url=/echo", server.url("/to"));
    let res = guard
        .send(OutboundRequest {
            url: same,
            headers: auth.clone(),
            ..OutboundRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(json(&res.body)["authorization"], "Bearer s3cret");
    let cross = format!("{}?url=http://other.test:{port}/echo", server.url("/to"));
    let res = guard
        .send(OutboundRequest {
            url: cross,
            headers: auth,
            ..OutboundRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(json(&res.body)["authorization"], Value::Null);
    assert_eq!(res.final_url, format!("http://other.test:{port}/echo"));
}

#[tokio::test]
async fn names_connect_to_the_checked_address_from_one_lookup() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    let resolver =
        FixedResolver::new(&[("api.test", &["127.0.0.1"]), ("evil.test", &["127.0.0.1"])]);
    let policy = EgressPolicy {
        allowed_private_hosts: vec![format!("api.test:{port}").parse().unwrap()],
        ..EgressPolicy::default()
    };
    let guard = EgressGuard::with_resolver(policy, resolver.clone()).unwrap();
    let res = guard
        .send(get(format!("http://api.test:{port}/json")))
        .await
        .unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(resolver.lookups.load(Ordering::SeqCst), 1);
    // The same server under a name not listed: refused inside the DNS hook, before connecting.
    let err = guard
        .send(get(format!("http://evil.test:{port}/json")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "address_refused", "{err}");
    assert!(err.to_string().contains("evil.test"), "{err}");
}

#[tokio::test]
async fn responses_over_the_cap_are_refused_while_streaming() {
    let server = TestServer::start().await;
    let guard = EgressGuard::new(EgressPolicy {
        max_response_bytes: 10 * 1024,
        ..policy_for(&server)
    })
    .unwrap();
    let res = guard.send(get(server.url("/big/10240"))).await.unwrap();
    assert_eq!(res.body.len(), 10 * 1024);
    let res = guard.send(get(server.url("/drip/10240"))).await.unwrap();
    assert_eq!(res.body.len(), 10 * 1024);
    for path in ["/big/10241", "/drip/10241", "/drip/10000000"] {
        let err = guard.send(get(server.url(path))).await.unwrap_err();
        assert_eq!(err.code(), "response_too_large", "{path}");
    }
}

#[tokio::test]
async fn a_hanging_server_hits_the_total_timeout() {
    let server = TestServer::start().await;
    let guard = EgressGuard::new(EgressPolicy {
        total_timeout: Duration::from_millis(300),
        ..policy_for(&server)
    })
    .unwrap();
    let err = guard.send(get(server.url("/hang"))).await.unwrap_err();
    assert_eq!(err.code(), "timeout");
}

#[tokio::test]
async fn a_session_caps_requests_refused_ones_included() {
    let server = TestServer::start().await;
    let guard = EgressGuard::new(EgressPolicy {
        max_requests: 3,
        ..policy_for(&server)
    })
    .unwrap();
    let session = guard.session();
    assert!(session.send(get(server.url("/json"))).await.is_ok());
    let refused = session
        .send(get("http://10.0.0.1/".to_owned()))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "address_refused");
    // A clone shares the budget.
    assert!(
        session
            .clone()
            .send(get(server.url("/redirect/2")))
            .await
            .is_ok()
    );
    let err = session.send(get(server.url("/json"))).await.unwrap_err();
    assert_eq!(err.code(), "too_many_requests");
    assert_eq!(session.requests_sent(), 3);
    // A new session has a new budget.
    assert!(guard.session().send(get(server.url("/json"))).await.is_ok());
}

#[tokio::test]
async fn concurrent_sends_never_pass_the_cap() {
    let server = Arc::new(TestServer::start().await);
    let guard = EgressGuard::new(EgressPolicy {
        max_requests: 5,
        ..policy_for(&server)
    })
    .unwrap();
    let session = guard.session();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let session = session.clone();
            let url = server.url("/json");
            tokio::spawn(async move { session.send(get(url)).await.is_ok() })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        ok += usize::from(task.await.unwrap());
    }
    assert_eq!(ok, 5);
}

#[test]
fn private_host_port_parsing_matches_server_addresses() {
    let host: PrivateHost = "127.0.0.1:41234".parse().unwrap();
    assert_eq!(host.to_string(), "127.0.0.1:41234");
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
