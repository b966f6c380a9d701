//! [`EgressGuard::origin_client`]: the client handed to a library that speaks to one peer over
//! many requests (rmcp's streamable HTTP client). The URL is checked when it is made, the name
//! at every connection by the guard's DNS hook, and redirects stay within the origin.

use serde_json::Value;
use toolsmith_egress::{EgressGuard, EgressPolicy};

use crate::support::{FixedResolver, TestServer};

async fn get_json(client: &reqwest::Client, url: String) -> Result<Value, reqwest::Error> {
    client
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await
}

/// The guard's refusal somewhere in a `reqwest` error's chain.
fn refusal(error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<toolsmith_egress::EgressError>() {
            return refused.code().to_owned();
        }
        source = e.source();
    }
    format!("no refusal in {error:?}")
}

#[tokio::test]
async fn a_loopback_url_is_refused_unless_listed() {
    let server = TestServer::start().await;
    let closed = EgressGuard::new(EgressPolicy::default()).unwrap();
    let err = closed.origin_client(&server.url("/json")).unwrap_err();
    assert_eq!(err.code(), "address_refused", "{err}");
    for bad in ["file:///etc/passwd", "http://169.254.169.254/", "not a url"] {
        assert!(closed.origin_client(bad).is_err(), "{bad}");
    }

    let open = EgressGuard::new(EgressPolicy {
        allowed_private_hosts: vec![server.host_port().parse().unwrap()],
        ..EgressPolicy::default()
    })
    .unwrap();
    let origin = open.origin_client(&server.url("/json")).unwrap();
    assert_eq!(origin.url.as_str(), server.url("/json"));
    let body = get_json(&origin.client, server.url("/json")).await.unwrap();
    assert_eq!(body["n"], 42);
}

#[tokio::test]
async fn names_are_checked_by_the_dns_hook_at_every_connection() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    let resolver =
        FixedResolver::new(&[("mcp.test", &["127.0.0.1"]), ("evil.test", &["127.0.0.1"])]);
    let guard = EgressGuard::with_resolver(
        EgressPolicy {
            allowed_private_hosts: vec![format!("mcp.test:{port}").parse().unwrap()],
            ..EgressPolicy::default()
        },
        resolver,
    )
    .unwrap();
    let origin = guard
        .origin_client(&format!("http://mcp.test:{port}/json"))
        .unwrap();
    let body = get_json(&origin.client, format!("http://mcp.test:{port}/json"))
        .await
        .unwrap();
    assert_eq!(body["hello"], "world");
    // A name passes the URL check (names are resolved later), and its loopback address is
    // refused inside the hook, before anything connects.
    let origin = guard
        .origin_client(&format!("http://evil.test:{port}/json"))
        .unwrap();
    let err = get_json(&origin.client, format!("http://evil.test:{port}/json"))
        .await
        .unwrap_err();
    assert_eq!(refusal(&err), "address_refused");
}

#[tokio::test]
async fn redirects_stay_within_the_origin() {
    let server = TestServer::start().await;
    let port = server.addr.port();
    let resolver = FixedResolver::new(&[("other.test", &["127.0.0.1"])]);
    let guard = EgressGuard::with_resolver(
        EgressPolicy {
            allowed_private_hosts: vec![
                server.host_port().parse().unwrap(),
                format!("other.test:{port}").parse().unwrap(),
            ],
            ..EgressPolicy::default()
        },
        resolver,
    )
    .unwrap();
    let origin = guard.origin_client(&server.url("/")).unwrap();
    // Within the origin: followed, up to the policy's limit.
    let res = origin
        .client
        .get(server.url("/redirect/5"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.text().await.unwrap(), "end of chain");
    let err = origin
        .client
        .get(server.url("/redirect/6"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(refusal(&err), "too_many_redirects");
    // To another origin — even an allowed one, even the same address under another name.
    let cross = format!("{}?url=http://other.test:{port}/json", server.url("/to"));
    let err = origin.client.get(cross).send().await.unwrap_err();
    assert_eq!(refusal(&err), "redirect_refused");
}
