//! The egress guard: every outbound HTTP request a tool makes (`fetch` in JS tools, HTTP
//! tools) goes through it, so no tool can reach the server's own network.
//!
//! # What it refuses
//!
//! - Schemes other than `http`/`https` (and `http` when the policy says so).
//! - Hosts that are, or resolve to, loopback, private, link-local (cloud metadata), CGNAT,
//!   multicast, broadcast, unspecified, documentation or reserved addresses, in IPv4 and IPv6,
//!   including IPv6 forms that embed such an IPv4 address ([`classify`]). A name with any
//!   refused address is refused. URLs are parsed as browsers parse them, so odd spellings
//!   (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`, trailing dots) are seen for what they are.
//! - Hosts outside the allowed domains, when a list is set (policy and per owner).
//! - More than `max_redirects` redirects, more than `max_requests` requests per session,
//!   responses over `max_response_bytes` (enforced while streaming), requests over
//!   `total_timeout`.
//!
//! # How
//!
//! The `reqwest` client resolves names only through [`NameResolver`] wrapped in a hook that
//! checks every address before handing it over, so the connection goes to the addresses that
//! were checked: there is no second lookup for DNS rebinding to exploit. Proxies from the
//! environment are ignored. Redirects are followed here, not by `reqwest`, and every hop is
//! checked like the first (credentials are dropped when a redirect leaves the origin).
//!
//! # Map
//!
//! - `policy.rs`: [`EgressPolicy`], [`DomainPattern`], [`PrivateHost`].
//! - `classify.rs`: [`classify`], [`AddressClass`].
//! - `check.rs`: [`check_url`] and the address check.
//! - `resolve.rs`: [`NameResolver`], [`SystemResolver`], the DNS hook.
//! - `guard.rs`: [`EgressGuard`], [`EgressSession`], sending, redirects, the size cap;
//!   [`OriginClient`].
//! - `tls.rs`: the client settings every client shares (rustls on `ring`, bundled roots).
//! - `error.rs`: [`EgressError`].

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod check;
mod classify;
mod error;
mod guard;
mod policy;
mod resolve;
mod tls;

pub use check::{MAX_URL_BYTES, check_url};
pub use classify::{AddressClass, classify};
pub use error::EgressError;
pub use guard::{
    CheckedUrl, EgressGuard, EgressSession, OriginClient, OutboundRequest, OutboundResponse,
};
pub use policy::{DomainPattern, EgressPolicy, PrivateHost};
pub use resolve::{NameResolver, SystemResolver};
