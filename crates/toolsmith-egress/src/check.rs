//! Checks that need no network: [`check_url`] parses a URL the way browsers do (so `2130706433`,
//! `0177.0.0.1`, `0x7f.1` and `127.1` all become `127.0.0.1`), then applies the scheme rule,
//! the allowed domains, and the address rule to IP literals and to names that are loopback by
//! definition (`localhost`, `*.localhost`). [`check_addresses`] applies the address rule to
//! what a name resolved to.

use std::net::IpAddr;

use url::{Host, Url};

use crate::classify::{AddressClass, classify};
use crate::error::EgressError;
use crate::policy::{DomainPattern, EgressPolicy, PrivateHost, normalize_host};

/// Longest URL accepted.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// Parses `input` and checks everything that can be checked without resolving it.
///
/// A name that passes may still resolve to a refused address; sending (or
/// [`EgressGuard::resolve_checked`](crate::EgressGuard::resolve_checked)) checks that.
pub fn check_url(input: &str, policy: &EgressPolicy) -> Result<Url, EgressError> {
    check_url_for(input, policy, &[])
}

/// [`check_url`], where a host must also match `owner_domains` when that list is not empty.
pub(crate) fn check_url_for(
    input: &str,
    policy: &EgressPolicy,
    owner_domains: &[DomainPattern],
) -> Result<Url, EgressError> {
    if input.len() > MAX_URL_BYTES {
        return Err(EgressError::InvalidUrl(format!(
            "the URL is longer than {MAX_URL_BYTES} bytes"
        )));
    }
    let url = Url::parse(input).map_err(|e| EgressError::InvalidUrl(e.to_string()))?;
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_plain_http => {}
        "http" => return Err(EgressError::PlainHttpNotAllowed),
        other => return Err(EgressError::SchemeNotAllowed(other.to_owned())),
    }
    let host = url
        .host()
        .ok_or_else(|| EgressError::InvalidUrl("the URL has no host".to_owned()))?;
    let port = url.port_or_known_default();
    let (name, literal) = match host {
        Host::Domain(domain) => (normalize_host(domain), None),
        Host::Ipv4(ip) => (ip.to_string(), Some(IpAddr::V4(ip))),
        Host::Ipv6(ip) => (ip.to_string(), Some(IpAddr::V6(ip))),
    };
    if name.is_empty() {
        return Err(EgressError::InvalidUrl(
            "the URL has an empty host".to_owned(),
        ));
    }
    for list in [&policy.allowed_domains[..], owner_domains] {
        if !list.is_empty() && !list.iter().any(|p| p.matches(&name)) {
            return Err(EgressError::DomainNotAllowed(name));
        }
    }
    let private_ok = private_allowed(&policy.allowed_private_hosts, &name, port);
    let class = match literal {
        Some(ip) => classify(ip),
        None if name == "localhost" || name.ends_with(".localhost") => Some(AddressClass::Loopback),
        None => None,
    };
    if let Some(class) = class
        && !private_ok
    {
        return Err(EgressError::AddressRefused { host: name, class });
    }
    Ok(url)
}

/// Checks what `host` resolved to: any refused address refuses the whole request, unless the
/// host is an allowed private host (`port` `None` matches any listed port).
pub(crate) fn check_addresses(
    host: &str,
    port: Option<u16>,
    addrs: &[IpAddr],
    private_hosts: &[PrivateHost],
) -> Result<(), EgressError> {
    if addrs.is_empty() {
        return Err(EgressError::DnsFailed {
            host: host.to_owned(),
            reason: "the name has no addresses".to_owned(),
        });
    }
    if private_allowed(private_hosts, host, port) {
        return Ok(());
    }
    match addrs.iter().find_map(|ip| classify(*ip)) {
        Some(class) => Err(EgressError::AddressRefused {
            host: host.to_owned(),
            class,
        }),
        None => Ok(()),
    }
}

fn private_allowed(list: &[PrivateHost], host: &str, port: Option<u16>) -> bool {
    list.iter().any(|p| p.allows(host, port))
}
