//! The caller's mail account: the Config Center service [`SERVICE`](super::SERVICE) read into
//! an [`Account`] (the SMTP and IMAP servers, how each is secured, the login and the sender),
//! and the addresses to reach a server at, checked by the egress guard.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::Value;

use super::SERVICE;
use crate::outside;
use crate::web::{Call, ToolError};

/// How a connection to a mail server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Security {
    /// TLS from the first byte (SMTP 465, IMAP 993).
    Tls,
    /// A plain connection upgraded with STARTTLS before the login (SMTP 587, IMAP 143).
    StartTls,
    /// No TLS at all: only for a server on the same machine or network, and only when the
    /// service says so.
    None,
}

impl Security {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Security::Tls => "tls",
            Security::StartTls => "starttls",
            Security::None => "none",
        }
    }
}

/// One server of the account.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub host: String,
    pub port: u16,
    pub security: Security,
}

/// The caller's mail account, as the service configures it.
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub smtp: Option<Server>,
    pub imap: Option<Server>,
    pub username: String,
    pub password: String,
    /// The sender's address (`from`, else the username when it is an address).
    pub from: Option<String>,
    pub from_name: Option<String>,
    /// The certificates of `ca_certificate` (a self-hosted server's own CA), trusted besides
    /// the bundled public roots.
    pub ca_certificates: Vec<CertificateDer<'static>>,
    /// Whether a sent mail is saved into the mailbox's Sent folder (`save_sent`, default yes).
    pub save_sent: bool,
}

/// The fields of the service, for the messages that say what to set.
pub(crate) const FIELDS: &str = "smtp_host, smtp_port, smtp_security (tls, starttls or none), \
     imap_host, imap_port, imap_security, username, password (secret), from, from_name, \
     ca_certificate (PEM, a self-hosted server's CA), save_sent (true or false)";

fn not_configured(what: &str) -> ToolError {
    ToolError::NotConfigured(format!(
        "{what}: create the Config Center service '{SERVICE}' with the fields {FIELDS}, e.g. \
         `toolsmith config set {SERVICE} smtp_host=smtp.example.com imap_host=imap.example.com \
         username=anna@example.com` and `printf %s \"$PASSWORD\" | toolsmith config set \
         {SERVICE} password=@-`"
    ))
}

/// The text of field `name` (a string, or a number for a port).
fn text(values: &BTreeMap<String, Value>, name: &str) -> Option<String> {
    match values.get(name)? {
        Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A host name or an IP address, nothing that could be read as more (a path, a login, a port).
fn valid_host(host: &str) -> bool {
    host.parse::<IpAddr>().is_ok()
        || (host.len() <= 253
            && host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            }))
}

fn server(
    values: &BTreeMap<String, Value>,
    protocol: &str,
    default_security: Security,
    ports: (u16, u16, u16),
) -> Result<Option<Server>, ToolError> {
    let Some(host) = text(values, &format!("{protocol}_host")) else {
        return Ok(None);
    };
    if !valid_host(&host) {
        return Err(ToolError::NotConfigured(format!(
            "the Config Center service '{SERVICE}' has {protocol}_host '{host}', which is not a \
             host name or an IP address: set it to the mail server's name, e.g. \
             {protocol}.example.com (the port goes in {protocol}_port)"
        )));
    }
    let security = match text(values, &format!("{protocol}_security"))
        .map(|s| s.to_ascii_lowercase())
        .as_deref()
    {
        None => default_security,
        Some("tls" | "ssl" | "implicit") => Security::Tls,
        Some("starttls") => Security::StartTls,
        Some("none" | "plain") => Security::None,
        Some(other) => {
            return Err(ToolError::NotConfigured(format!(
                "the Config Center service '{SERVICE}' has {protocol}_security '{other}': use \
                 tls, starttls or none"
            )));
        }
    };
    let port = match text(values, &format!("{protocol}_port")) {
        Some(port) => port.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
            ToolError::NotConfigured(format!(
                "the Config Center service '{SERVICE}' has {protocol}_port '{port}': set a \
                 port number from 1 to 65535"
            ))
        })?,
        None => match security {
            Security::Tls => ports.0,
            Security::StartTls => ports.1,
            Security::None => ports.2,
        },
    };
    Ok(Some(Server {
        host: host.to_ascii_lowercase(),
        port,
        security,
    }))
}

/// The caller's account, or what to configure.
pub(crate) async fn account(call: &Call<'_>) -> Result<Account, ToolError> {
    let values = outside::values(call, SERVICE)
        .await
        .ok_or_else(|| not_configured("no mail account is configured here"))?;
    let smtp = server(&values, "smtp", Security::StartTls, (465, 587, 25))?;
    let imap = server(&values, "imap", Security::Tls, (993, 143, 143))?;
    let username = text(&values, "username")
        .ok_or_else(|| not_configured("the mail account has no username"))?;
    let password = text(&values, "password")
        .ok_or_else(|| not_configured("the mail account has no password"))?;
    let from = text(&values, "from").or_else(|| Some(username.clone()).filter(|u| u.contains('@')));
    let ca_certificates = match text(&values, "ca_certificate") {
        Some(pem) => ca_certificates(&pem)?,
        None => Vec::new(),
    };
    let save_sent = match values.get("save_sent") {
        Some(Value::Bool(save)) => *save,
        _ => match text(&values, "save_sent")
            .map(|s| s.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("true" | "yes" | "1" | "on") => true,
            Some("false" | "no" | "0" | "off") => false,
            Some(other) => {
                return Err(ToolError::NotConfigured(format!(
                    "the Config Center service '{SERVICE}' has save_sent '{other}': use true or \
                     false"
                )));
            }
        },
    };
    Ok(Account {
        smtp,
        imap,
        username,
        password,
        from,
        from_name: text(&values, "from_name"),
        ca_certificates,
        save_sent,
    })
}

/// The certificates of field `ca_certificate` (one or more PEM blocks), or what is wrong.
pub(crate) fn ca_certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, ToolError> {
    let bad = |why: String| {
        ToolError::NotConfigured(format!(
            "the Config Center service '{SERVICE}' has a ca_certificate that {why}: set it to \
             the PEM text of the CA that signed the mail server's certificate (from -----BEGIN \
             CERTIFICATE----- to -----END CERTIFICATE-----), or remove the field to trust only \
             public CAs"
        ))
    };
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("is not valid PEM ({e})")))?;
    if certs.is_empty() {
        return Err(bad("holds no certificate".to_owned()));
    }
    for cert in &certs {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(cert.clone())
            .map_err(|e| bad(format!("holds a certificate that cannot be a root ({e})")))?;
    }
    Ok(certs)
}

/// What to change when a TLS handshake failed with `error`, or nothing.
pub(crate) fn tls_hint(protocol: &str, error: &str) -> String {
    if error.contains("UnknownIssuer") || error.contains("invalid peer certificate") {
        " — the server's certificate is signed by neither a public CA nor the one in \
         ca_certificate: for a server with its own CA, put that CA's certificate (PEM) in the \
         service's field ca_certificate"
            .to_owned()
    } else if error.contains("corrupt message") || error.contains("InvalidContentType") {
        format!(
            " — the server answered in plain text, not TLS: this port expects STARTTLS, so set \
             {protocol}_security=starttls, or use the server's TLS port"
        )
    } else {
        String::new()
    }
}

impl Account {
    /// The SMTP server, or what to configure.
    pub(crate) fn smtp(&self) -> Result<&Server, ToolError> {
        self.smtp
            .as_ref()
            .ok_or_else(|| not_configured("the mail account has no SMTP server (smtp_host)"))
    }

    /// The IMAP server, or what to configure.
    pub(crate) fn imap(&self) -> Result<&Server, ToolError> {
        self.imap
            .as_ref()
            .ok_or_else(|| not_configured("the mail account has no IMAP server (imap_host)"))
    }
}

/// The addresses to connect to `server` at, as the egress guard allows them for the caller.
pub(crate) async fn addresses(
    call: &Call<'_>,
    server: &Server,
) -> Result<Vec<SocketAddr>, ToolError> {
    Ok(call
        .client
        .connect_addresses(&call.ctx.user_id, &server.host, server.port)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values(v: Value) -> BTreeMap<String, Value> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn ports_follow_the_security_unless_set() {
        let v = values(json!({"smtp_host": "smtp.example.com", "smtp_security": "tls"}));
        let s = server(&v, "smtp", Security::StartTls, (465, 587, 25))
            .unwrap()
            .unwrap();
        assert_eq!((s.port, s.security), (465, Security::Tls));
        let v =
            values(json!({"imap_host": "127.0.0.1", "imap_port": 1143, "imap_security": "none"}));
        let s = server(&v, "imap", Security::Tls, (993, 143, 143))
            .unwrap()
            .unwrap();
        assert_eq!((s.port, s.security), (1143, Security::None));
    }

    #[test]
    fn a_host_that_says_more_than_a_name_is_refused() {
        for bad in ["evil.com/x", "user@host", "host:25", "a..b", "-\r\nRCPT"] {
            let v = values(json!({"smtp_host": bad}));
            let e = server(&v, "smtp", Security::StartTls, (465, 587, 25)).unwrap_err();
            assert!(e.to_string().contains("not a host name"), "{bad}: {e}");
        }
        let v = values(json!({"smtp_host": "smtp.example.com", "smtp_security": "ssl3"}));
        let e = server(&v, "smtp", Security::StartTls, (465, 587, 25)).unwrap_err();
        assert!(e.to_string().contains("use tls, starttls or none"), "{e}");
    }
}
