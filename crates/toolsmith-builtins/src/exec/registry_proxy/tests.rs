//! The registry proxy on its real Unix socket, with the real egress guard resolving names
//! through a table (the guard's resolver seam), so a registry name can resolve to a metadata
//! or private address without any DNS: each is refused before a connection is tried.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_egress::{EgressGuard, EgressPolicy, NameResolver};

use super::*;

/// Names resolved from a table; any other name fails to resolve.
struct Table(HashMap<&'static str, IpAddr>);

impl NameResolver for Table {
    fn lookup(
        &self,
        host: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'static>> {
        let found = self.0.get(host).copied();
        Box::pin(async move {
            found
                .map(|ip| vec![ip])
                .ok_or(std::io::ErrorKind::NotFound.into())
        })
    }
}

fn registries() -> PackageRegistries {
    let table = Table(HashMap::from([
        ("pypi.org", "169.254.169.254".parse().unwrap()),
        ("registry.npmjs.org", "10.1.2.3".parse().unwrap()),
        ("files.pythonhosted.org", "127.0.0.1".parse().unwrap()),
    ]));
    let guard = EgressGuard::with_resolver(EgressPolicy::default(), Arc::new(table)).unwrap();
    PackageRegistries::new(DEFAULT_REGISTRIES.iter().map(|h| (*h).to_owned()), guard).unwrap()
}

/// Sends `request` to the proxy and reads the answer to its end.
async fn ask(proxy: &OpenProxy, request: &str) -> String {
    let mut stream = UnixStream::connect(proxy.socket()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

fn connect(target: &str) -> String {
    format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n")
}

#[tokio::test]
async fn the_proxy_refuses_every_host_but_the_registries_and_registries_that_resolve_inside() {
    let proxy = registries().open().unwrap();
    for (request, status, reason) in [
        (
            connect("pypi.org:443"),
            "403",
            "'pypi.org' is a link-local address (cloud metadata lives there)",
        ),
        (
            connect("registry.npmjs.org:443"),
            "403",
            "a private-network address",
        ),
        (
            connect("files.pythonhosted.org:443"),
            "403",
            "a loopback address",
        ),
        (
            connect("169.254.169.254:80"),
            "403",
            "'169.254.169.254' is not a package registry",
        ),
        (
            connect("example.com:443"),
            "403",
            "package installs reach only pypi.org, files.pythonhosted.org, registry.npmjs.org (the operator's package_registries setting)",
        ),
        (connect("PyPI.org.:22"), "403", "over HTTPS only (port 443)"),
        (
            "GET http://pypi.org/simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n".to_owned(),
            "405",
            "over HTTPS only (CONNECT to port 443)",
        ),
    ] {
        let answer = ask(&proxy, &request).await;
        // The reason is the answer's text and its status line (pip shows only that line).
        let status_line = answer.lines().next().unwrap_or_default();
        assert!(
            status_line.starts_with(&format!("HTTP/1.1 {status} ")) && status_line.contains(reason),
            "{request}: {answer}"
        );
        let body = answer.split_once("\r\n\r\n").map(|(_, body)| body);
        assert!(body.is_some_and(|body| body.contains(reason)), "{answer}");
    }
}

#[test]
fn registries_are_host_names_only() {
    let guard = EgressGuard::new(EgressPolicy::default()).unwrap();
    for host in [
        "https://pypi.org",
        "pypi.org:443",
        "10.0.0.1",
        "pypi.org/simple",
        "",
    ] {
        let err = PackageRegistries::new([host.to_owned()], guard.clone()).unwrap_err();
        assert!(err.contains("not a host name"), "{host}: {err}");
    }
    let ok = PackageRegistries::new(["Mirror.Example.".to_owned()], guard).unwrap();
    assert_eq!(ok.hosts(), ["mirror.example"]);
}

#[tokio::test]
async fn the_proxy_is_gone_when_its_run_ends() {
    let proxy = registries().open().unwrap();
    let socket = proxy.socket().to_path_buf();
    assert!(socket.exists());
    drop(proxy);
    assert!(!socket.exists() && !socket.parent().unwrap().exists());
}

#[test]
fn the_relay_starts_the_managers_command_in_the_managers_language() {
    let pip = relayed(vec![
        "python3".into(),
        "-m".into(),
        "pip".into(),
        "list".into(),
    ]);
    assert_eq!(pip[..2], ["python3", "-c"]);
    assert!(pip[2].contains("'/run/toolsmith/proxy.sock'") && pip[2].contains("3128"));
    assert_eq!(pip[3..], ["python3", "-m", "pip", "list"]);
    let npm = relayed(vec!["npm".into(), "view".into(), "x".into()]);
    assert_eq!(npm[..2], ["node", "-e"]);
    assert_eq!(npm[3..], ["--", "npm", "view", "x"]);
}
