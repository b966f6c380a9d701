//! The operator's rules for outbound requests: [`EgressPolicy`], the allowed-domain patterns
//! ([`DomainPattern`]) and the private hosts an operator may open up ([`PrivateHost`]).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::time::Duration;

use crate::error::EgressError;

/// What outbound requests may do. `Default` is the safe setting: any public host, no private
/// host, plain http allowed, 5 MiB responses, 30 s, 10 requests per execution, 5 redirects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressPolicy {
    /// Empty: any public host. Otherwise only hosts matching one of these.
    pub allowed_domains: Vec<DomainPattern>,
    /// Hosts (with an optional port) that may resolve to private, loopback or other refused
    /// addresses: on-premises APIs, and a test's own loopback server. Empty by default.
    pub allowed_private_hosts: Vec<PrivateHost>,
    /// Whether `http:` URLs are allowed besides `https:`.
    pub allow_plain_http: bool,
    /// Largest response body, enforced while it streams in.
    pub max_response_bytes: usize,
    /// Time for one request, redirects and body included.
    pub total_timeout: Duration,
    /// Requests one [`EgressSession`](crate::EgressSession) (one execution) may make.
    pub max_requests: usize,
    /// Redirects followed for one request.
    pub max_redirects: usize,
}

impl Default for EgressPolicy {
    fn default() -> Self {
        EgressPolicy {
            allowed_domains: Vec::new(),
            allowed_private_hosts: Vec::new(),
            allow_plain_http: true,
            max_response_bytes: 5 * 1024 * 1024,
            total_timeout: Duration::from_secs(30),
            max_requests: 10,
            max_redirects: 5,
        }
    }
}

/// An allowed domain: an exact name (`api.example.com`) or `*.example.com`, which matches the
/// subdomains of `example.com` at any depth but not `example.com` itself. Case-insensitive; a
/// trailing dot is ignored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DomainPattern {
    /// Lowercase, no trailing dot, without the `*.`.
    name: String,
    wildcard: bool,
}

impl DomainPattern {
    /// Whether `host` (already lowercase, no trailing dot) matches.
    pub fn matches(&self, host: &str) -> bool {
        if !self.wildcard {
            return host == self.name;
        }
        host.strip_suffix(self.name.as_str())
            .is_some_and(|prefix| prefix.ends_with('.'))
    }
}

impl FromStr for DomainPattern {
    type Err = EgressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let (wildcard, rest) = match lower.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, lower.as_str()),
        };
        let name = rest.strip_suffix('.').unwrap_or(rest);
        if !is_host_name(name) {
            return Err(EgressError::InvalidPolicy(format!(
                "'{s}' is not a domain name or a '*.domain' pattern"
            )));
        }
        Ok(DomainPattern {
            name: name.to_owned(),
            wildcard,
        })
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.wildcard {
            f.write_str("*.")?;
        }
        f.write_str(&self.name)
    }
}

/// A host (name or IP address) and optional port allowed to reach refused addresses:
/// `intranet.corp`, `10.0.0.5:8443`, `[fd00::1]:443`, `127.0.0.1:41234`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrivateHost {
    /// Lowercase name without trailing dot, or an IP address in canonical text form.
    host: String,
    port: Option<u16>,
}

impl PrivateHost {
    /// Whether this entry allows `host` (normalized as in [`normalize_host`]) on `port`.
    pub(crate) fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.host == host && (self.port.is_none() || port.is_none() || self.port == port)
    }
}

impl FromStr for PrivateHost {
    type Err = EgressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            EgressError::InvalidPolicy(format!("'{s}' is not a host, host:port, or [IPv6]:port"))
        };
        let s = s.trim();
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (inside, after) = rest.split_once(']').ok_or_else(bad)?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':').ok_or_else(bad)?),
            };
            (inside, port)
        } else {
            match s.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port)),
                _ => (s, None),
            }
        };
        let port = port
            .map(|p| p.parse::<u16>().map_err(|_| bad()))
            .transpose()?;
        let host = match host.parse::<IpAddr>() {
            Ok(ip) => ip.to_string(),
            Err(_) => {
                let lower = host.to_ascii_lowercase();
                let name = lower.strip_suffix('.').unwrap_or(&lower).to_owned();
                if !is_host_name(&name) {
                    return Err(bad());
                }
                name
            }
        };
        Ok(PrivateHost { host, port })
    }
}

impl fmt::Display for PrivateHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.host.contains(':'), self.port) {
            (true, Some(port)) => write!(f, "[{}]:{port}", self.host),
            (false, Some(port)) => write!(f, "{}:{port}", self.host),
            (_, None) => f.write_str(&self.host),
        }
    }
}

/// Lowercase, one trailing dot removed, IPv6 brackets removed.
pub(crate) fn normalize_host(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let lower = host.to_ascii_lowercase();
    lower.strip_suffix('.').unwrap_or(&lower).to_owned()
}

/// Letters, digits, `-` and `_` in non-empty dot-separated labels of at most 63 characters.
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}
