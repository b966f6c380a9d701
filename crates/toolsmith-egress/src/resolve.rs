//! Name resolution: the [`NameResolver`] seam (the system resolver by default; tests inject
//! their own), and [`GuardResolver`], the `reqwest` DNS hook that resolves *and checks* in one
//! step, so the connection goes to the very addresses that were checked (no second lookup for
//! DNS rebinding to slip into).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::check::check_addresses;
use crate::error::EgressError;
use crate::policy::{PrivateHost, normalize_host};

/// Turns a host name into addresses. Implement it to resolve names your own way (tests map
/// names to fixed addresses).
pub trait NameResolver: Send + Sync + 'static {
    /// The addresses of `host` (a name, never an IP literal).
    fn lookup(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo`, on tokio's blocking pool).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl NameResolver for SystemResolver {
    fn lookup(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Resolves `host` with `resolver` and checks every address.
pub(crate) async fn resolve_and_check(
    resolver: &dyn NameResolver,
    host: &str,
    port: Option<u16>,
    private_hosts: &[PrivateHost],
) -> Result<Vec<IpAddr>, EgressError> {
    let addrs = resolver
        .lookup(host)
        .await
        .map_err(|e| EgressError::DnsFailed {
            host: host.to_owned(),
            reason: e.to_string(),
        })?;
    check_addresses(host, port, &addrs, private_hosts)?;
    Ok(addrs)
}

/// The DNS hook given to the `reqwest` client. It sees no port; the port of an allowed
/// private host is checked on the URL before every request (`check_url_for`).
pub(crate) struct GuardResolver {
    pub(crate) resolver: Arc<dyn NameResolver>,
    pub(crate) private_hosts: Arc<Vec<PrivateHost>>,
}

impl Resolve for GuardResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = self.resolver.clone();
        let private_hosts = self.private_hosts.clone();
        let host = normalize_host(name.as_str());
        Box::pin(async move {
            let addrs = resolve_and_check(&*resolver, &host, None, &private_hosts).await?;
            let addrs: Addrs = Box::new(
                addrs
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}
