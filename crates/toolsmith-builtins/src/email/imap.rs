//! Reading: an IMAP session (async-imap on tokio) with the account's IMAP server, over a
//! connection to the addresses the egress guard checked — TLS from the start (tokio-rustls on
//! `ring`, the bundled roots), STARTTLS, or (only when the service says `none`) plain — and the
//! few commands the tools need, each with its arguments quoted as IMAP strings.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_imap::{Client, Session};
use futures::TryStreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::account::{Account, Security, Server, tls_hint};
use super::{SERVICE, TIMEOUT};
use crate::web::ToolError;

/// The connection under the session: plain, or TLS.
#[derive(Debug)]
pub(crate) enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// A failure talking to the IMAP server, naming the server and the service to check.
pub(crate) fn failed(server: &Server, what: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::Provider(format!(
        "{what} at {}:{} ({}) failed: {e}; check the Config Center service '{SERVICE}' \
         (imap_host, imap_port, imap_security, username, password)",
        server.host,
        server.port,
        server.security.as_str()
    ))
}

fn tls_connector(account: &Account) -> Result<TlsConnector, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().cloned());
    for cert in &account.ca_certificates {
        roots
            .add(cert.clone())
            .map_err(|e| format!("ca_certificate: {e}"))?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

async fn tls(account: &Account, server: &Server, tcp: TcpStream) -> Result<Conn, ToolError> {
    let name = rustls::pki_types::ServerName::try_from(server.host.clone())
        .map_err(|e| failed(server, "TLS", e))?;
    let connector = tls_connector(account).map_err(|e| failed(server, "setting up TLS", e))?;
    let stream = connector.connect(name, tcp).await.map_err(|e| {
        let e = e.to_string();
        let hint = tls_hint("imap", &e);
        failed(server, "the TLS handshake", format!("{e}{hint}"))
    })?;
    Ok(Conn::Tls(Box::new(stream)))
}

/// Opens a session: connects to `addrs`, secures the connection as the service says and logs
/// in as the account's user.
pub(crate) async fn open(
    account: &Account,
    addrs: Vec<SocketAddr>,
) -> Result<Session<Conn>, ToolError> {
    let server = account.imap()?;
    let open = async {
        let tcp = TcpStream::connect(&addrs[..])
            .await
            .map_err(|e| failed(server, "connecting to the IMAP server", e))?;
        let client = match server.security {
            Security::Tls => {
                let mut client = Client::new(tls(account, server, tcp).await?);
                greeting(server, &mut client).await?;
                client
            }
            Security::None => {
                let mut client = Client::new(Conn::Plain(tcp));
                greeting(server, &mut client).await?;
                client
            }
            Security::StartTls => {
                let mut client = Client::new(Conn::Plain(tcp));
                greeting(server, &mut client).await?;
                client
                    .run_command_and_check_ok("STARTTLS", None)
                    .await
                    .map_err(|e| failed(server, "STARTTLS", e))?;
                let Conn::Plain(tcp) = client.into_inner() else {
                    return Err(failed(server, "STARTTLS", "the connection was already TLS"));
                };
                Client::new(tls(account, server, tcp).await?)
            }
        };
        client
            .login(&account.username, &account.password)
            .await
            .map_err(|(e, _)| {
                let e = e.to_string();
                if server.security == Security::None
                    && (e.contains("PRIVACYREQUIRED") || e.contains("Plaintext authentication"))
                {
                    failed(
                        server,
                        "logging in to the IMAP server",
                        format!(
                            "{e} — this server takes a login only over TLS: set \
                             imap_security=starttls, or tls with its TLS port (usually 993)"
                        ),
                    )
                } else {
                    failed(server, "logging in to the IMAP server", e)
                }
            })
    };
    tokio::time::timeout(TIMEOUT, open)
        .await
        .map_err(|_| failed(server, "connecting", "it took longer than 60 s"))?
}

async fn greeting(server: &Server, client: &mut Client<Conn>) -> Result<(), ToolError> {
    match client.read_response().await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(failed(
            server,
            "the greeting",
            "the server closed the connection",
        )),
        Err(e) => Err(failed(server, "the greeting", e)),
    }
}

/// `text` as an IMAP quoted string; CR, LF and NUL cannot be quoted and are refused.
pub(crate) fn quoted(what: &str, text: &str) -> Result<String, ToolError> {
    if text.chars().any(|c| matches!(c, '\r' | '\n' | '\0')) {
        return Err(ToolError::Args(format!(
            "'{what}' holds a line break or NUL, which a search cannot carry: give one line"
        )));
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// `work` on `session`, within the time an exchange may take; the session is logged out after
/// it, whatever it answered.
pub(crate) async fn run<T>(
    server: &Server,
    mut session: Session<Conn>,
    work: impl AsyncFnOnce(&mut Session<Conn>) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let result = tokio::time::timeout(TIMEOUT, work(&mut session))
        .await
        .map_err(|_| failed(server, "the IMAP exchange", "it took longer than 60 s"));
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), session.logout()).await;
    result?
}

/// Selects `folder` (read-only unless `write`), or says it does not exist.
pub(crate) async fn select(
    server: &Server,
    session: &mut Session<Conn>,
    folder: &str,
    write: bool,
) -> Result<async_imap::types::Mailbox, ToolError> {
    let name = folder.to_owned();
    let result = if write {
        session.select(&name).await
    } else {
        session.examine(&name).await
    };
    result.map_err(|e| match e {
        async_imap::error::Error::No(_) | async_imap::error::Error::Bad(_) => {
            ToolError::Args(format!(
                "there is no folder '{folder}' in this mailbox ({e}): use INBOX, or a folder \
                 the mail client shows"
            ))
        }
        other => failed(server, "opening the folder", other),
    })
}

/// The UIDs matching `criteria` in the selected folder, newest (highest) first.
pub(crate) async fn search(
    server: &Server,
    session: &mut Session<Conn>,
    criteria: &str,
) -> Result<Vec<u32>, ToolError> {
    let found = session
        .uid_search(criteria)
        .await
        .map_err(|e| failed(server, "searching", e))?;
    let mut uids: Vec<u32> = found.into_iter().collect();
    uids.sort_unstable_by_key(|u| std::cmp::Reverse(*u));
    Ok(uids)
}

/// One fetched message: its UID, flags, size and the bytes asked for (header or whole).
pub(crate) struct Fetched {
    pub uid: u32,
    pub seen: bool,
    pub size: Option<u32>,
    pub bytes: Vec<u8>,
}

/// Fetches `items` (an IMAP fetch list whose data is `BODY.PEEK[HEADER]` or `BODY.PEEK[]`)
/// of the messages `uids`.
pub(crate) async fn fetch(
    server: &Server,
    session: &mut Session<Conn>,
    uids: &[u32],
    whole: bool,
) -> Result<Vec<Fetched>, ToolError> {
    if uids.is_empty() {
        return Ok(Vec::new());
    }
    let set = uids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let items = if whole {
        "(UID FLAGS RFC822.SIZE BODY.PEEK[])"
    } else {
        "(UID FLAGS RFC822.SIZE BODY.PEEK[HEADER])"
    };
    let fetches: Vec<_> = session
        .uid_fetch(&set, items)
        .await
        .map_err(|e| failed(server, "fetching", e))?
        .try_collect()
        .await
        .map_err(|e| failed(server, "fetching", e))?;
    Ok(fetches
        .iter()
        .filter_map(|f| {
            let bytes = if whole { f.body() } else { f.header() };
            Some(Fetched {
                uid: f.uid?,
                seen: f
                    .flags()
                    .any(|flag| matches!(flag, async_imap::types::Flag::Seen)),
                size: f.size,
                bytes: bytes.unwrap_or_default().to_vec(),
            })
        })
        .collect())
}

/// The size of message `uid`, or `None` when the folder holds no such message.
pub(crate) async fn size_of(
    server: &Server,
    session: &mut Session<Conn>,
    uid: u32,
) -> Result<Option<u32>, ToolError> {
    let fetches: Vec<_> = session
        .uid_fetch(uid.to_string(), "(UID RFC822.SIZE)")
        .await
        .map_err(|e| failed(server, "fetching", e))?
        .try_collect()
        .await
        .map_err(|e| failed(server, "fetching", e))?;
    Ok(fetches
        .iter()
        .find(|f| f.uid == Some(uid))
        .map(|f| f.size.unwrap_or(0)))
}

/// The folder the server marks with the SPECIAL-USE attribute `wanted` (RFC 6154: `\Sent`,
/// `\Trash`), if there is one.
pub(crate) async fn special_folder(
    server: &Server,
    session: &mut Session<Conn>,
    wanted: async_imap::types::NameAttribute<'static>,
) -> Result<Option<String>, ToolError> {
    let names: Vec<_> = session
        .list(Some(""), Some("*"))
        .await
        .map_err(|e| failed(server, "listing the folders", e))?
        .try_collect()
        .await
        .map_err(|e| failed(server, "listing the folders", e))?;
    Ok(names
        .iter()
        .find(|n| n.attributes().contains(&wanted))
        .map(|n| n.name().to_owned()))
}

/// Adds `message` to `folder`, marked read (a sent mail's copy).
pub(crate) async fn append_seen(
    server: &Server,
    session: &mut Session<Conn>,
    folder: &str,
    message: &[u8],
) -> Result<(), ToolError> {
    session
        .append(folder, Some("(\\Seen)"), None, message)
        .await
        .map_err(|e| failed(server, "saving the copy", e))
}

/// Moves message `uid` of the selected folder to `folder` (MOVE where the server has it, else
/// a copy and the original deleted).
pub(crate) async fn move_to(
    server: &Server,
    session: &mut Session<Conn>,
    uid: u32,
    folder: &str,
) -> Result<(), ToolError> {
    let has_move = session
        .capabilities()
        .await
        .map_err(|e| failed(server, "moving", e))?
        .has_str("MOVE");
    if has_move {
        return session
            .uid_mv(uid.to_string(), folder)
            .await
            .map_err(|e| failed(server, "moving", e));
    }
    session
        .uid_copy(uid.to_string(), folder)
        .await
        .map_err(|e| failed(server, "copying", e))?;
    delete(server, session, uid).await
}

/// Marks message `uid` deleted and expunges it (only it, where the server has UIDPLUS).
pub(crate) async fn delete(
    server: &Server,
    session: &mut Session<Conn>,
    uid: u32,
) -> Result<(), ToolError> {
    let _: Vec<_> = session
        .uid_store(uid.to_string(), "+FLAGS.SILENT (\\Deleted)")
        .await
        .map_err(|e| failed(server, "deleting", e))?
        .try_collect()
        .await
        .map_err(|e| failed(server, "deleting", e))?;
    let uidplus = session
        .capabilities()
        .await
        .map_err(|e| failed(server, "deleting", e))?
        .has_str("UIDPLUS");
    if uidplus {
        let _: Vec<_> = session
            .uid_expunge(uid.to_string())
            .await
            .map_err(|e| failed(server, "expunging", e))?
            .try_collect()
            .await
            .map_err(|e| failed(server, "expunging", e))?;
    } else {
        let _: Vec<_> = session
            .expunge()
            .await
            .map_err(|e| failed(server, "expunging", e))?
            .try_collect()
            .await
            .map_err(|e| failed(server, "expunging", e))?;
    }
    Ok(())
}
