//! Every `reqwest` client the guard builds starts here: rustls on `ring` (reqwest is built
//! without its default provider, aws-lc-rs, a C and cmake build), the bundled webpki roots as
//! the only trust anchors (no platform store, so a host's certificate store cannot widen what
//! is trusted), no proxy from the environment (a proxy would resolve names out of the guard's
//! sight), and the guard's DNS hook.

use std::sync::{Arc, Once};
use std::time::Duration;

use reqwest::{Certificate, ClientBuilder};

use crate::resolve::GuardResolver;

/// Time to set up one connection.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client builder with the guard's TLS, proxy and DNS settings; the caller adds its
/// redirect policy and builds.
pub(crate) fn client_builder(hook: GuardResolver) -> ClientBuilder {
    install_ring();
    reqwest::Client::builder()
        .tls_certs_only(bundled_roots())
        .no_proxy()
        .referer(false)
        .connect_timeout(CONNECT_TIMEOUT)
        .dns_resolver(Arc::new(hook))
        .user_agent(concat!("toolsmith/", env!("CARGO_PKG_VERSION")))
}

/// Makes `ring` the process's rustls provider, once. reqwest reads the installed provider when
/// a client is built (and would panic without one); a provider some other part of the process
/// installed first is kept (only `ring` is compiled in).
fn install_ring() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn bundled_roots() -> Vec<Certificate> {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| Certificate::from_der(der).ok())
        .collect()
}
