//! Where the load goes: parsing `http://HOST:PORT` and refusing anything but loopback.
//!
//! The generator opens many connections and sends thousands of requests a second; pointed at
//! someone else's server that is an attack, so only loopback targets are accepted (the address
//! is classified before any connection is made).

use std::net::{IpAddr, SocketAddr};

use crate::error::LoadError;

/// A loopback HTTP server to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Where to connect.
    pub addr: SocketAddr,
    /// The `Host` header (as given: `127.0.0.1:8787`, `localhost:8787`).
    pub host: String,
}

impl Target {
    /// Parses `http://HOST[:PORT][/]` (port 80 by default); HOST must be a loopback IP
    /// address or `localhost` (which means 127.0.0.1). No `https`, no path, no user info.
    pub fn parse(url: &str) -> Result<Target, LoadError> {
        let bad = |why: &str| LoadError::BadUrl {
            url: url.to_owned(),
            why: why.to_owned(),
        };
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("only http:// URLs are supported"))?;
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.is_empty() || authority.contains(['/', '@', '?', '#']) {
            return Err(bad("expected http://HOST:PORT with no path"));
        }
        let (host, port) = split_host_port(authority).ok_or_else(|| bad("bad HOST:PORT"))?;
        let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
            IpAddr::from([127, 0, 0, 1])
        } else {
            host.parse().map_err(|_| LoadError::NotLoopback {
                host: host.to_owned(),
            })?
        };
        if !ip.is_loopback() {
            return Err(LoadError::NotLoopback {
                host: host.to_owned(),
            });
        }
        Ok(Target {
            addr: SocketAddr::new(ip, port),
            host: authority.to_owned(),
        })
    }
}

/// `host:port`, `[v6]:port`, `host` or `[v6]` → (host without brackets, port).
fn split_host_port(authority: &str) -> Option<(&str, u16)> {
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after {
            "" => 80,
            p => p.strip_prefix(':')?.parse().ok()?,
        };
        return Some((host, port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host, port.parse().ok()?)),
        Some(_) => None,
        None => Some((authority, 80)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_targets_parse() {
        let t = Target::parse("http://127.0.0.1:8787").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8787".parse().unwrap());
        assert_eq!(t.host, "127.0.0.1:8787");
        let t = Target::parse("http://localhost:9/").unwrap();
        assert_eq!(t.addr, "127.0.0.1:9".parse().unwrap());
        assert_eq!(t.host, "localhost:9");
        let t = Target::parse("http://[::1]:8787").unwrap();
        assert_eq!(t.addr, "[::1]:8787".parse().unwrap());
        assert_eq!(Target::parse("http://127.9.9.9").unwrap().addr.port(), 80);
    }

    #[test]
    fn anything_but_loopback_is_refused_without_connecting() {
        for url in [
            "http://10.0.0.1:8787",
            "http://192.168.1.1",
            "http://0.0.0.0:8787",
            "http://[::]:8787",
            "http://[2001:db8::1]:80",
            "http://example.com:8787",
            "http://127.0.0.1.nip.io:8787",
            "http://localhost.example.com",
        ] {
            let err = Target::parse(url).unwrap_err();
            assert_eq!(err.code(), "not_loopback", "{url}: {err}");
        }
    }

    #[test]
    fn malformed_urls_are_refused() {
        for url in [
            "",
            "127.0.0.1:8787",
            "https://127.0.0.1:8787",
            "http://",
            "http://127.0.0.1:8787/mcp",
            "http://user@127.0.0.1:8787",
            "http://127.0.0.1:99999",
            "http://127.0.0.1:port",
            "http://[::1",
            "http://::1:8787",
        ] {
            let err = Target::parse(url).unwrap_err();
            assert_eq!(err.code(), "bad_url", "{url}: {err}");
        }
    }
}
