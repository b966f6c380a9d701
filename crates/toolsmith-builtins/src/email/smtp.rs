//! Sending: an [`Outgoing`] mail built with lettre's message builder (addresses parsed, headers
//! encoded, attachments as MIME parts) and handed to the account's SMTP server over a
//! connection to the addresses the egress guard checked — TLS from the start, STARTTLS, or
//! (only when the service says `none`) plain — with rustls on `ring` and the bundled roots.

use std::net::SocketAddr;

use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{
    AsyncSmtpConnection, Certificate, CertificateStore, TlsParameters,
};
use lettre::transport::smtp::extension::ClientId;

use super::TIMEOUT;
use super::account::{Account, Security, Server, tls_hint};
use crate::web::ToolError;

/// A file to attach: its name in the mail, its type and its bytes.
pub(crate) struct OutgoingFile {
    pub name: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// A mail to send.
pub(crate) struct Outgoing {
    pub to: Vec<Mailbox>,
    pub cc: Vec<Mailbox>,
    pub bcc: Vec<Mailbox>,
    pub subject: String,
    pub body: String,
    pub html: bool,
    pub in_reply_to: Option<String>,
    pub references: Option<String>,
    pub attachments: Vec<OutgoingFile>,
}

/// What was sent: the new mail's Message-ID, who it went to and the mail as sent (for the
/// Sent folder).
pub(crate) struct Sent {
    pub message_id: String,
    pub recipients: usize,
    pub bytes: Vec<u8>,
}

fn provider(server: &Server, what: &str, e: impl std::fmt::Display) -> ToolError {
    let e = e.to_string();
    let hint = tls_hint("smtp", &e);
    ToolError::Provider(format!(
        "{what} at {}:{} ({}) failed: {e}{hint}. Nothing was sent; check the Config Center service \
         '{}' (smtp_host, smtp_port, smtp_security, username, password)",
        server.host,
        server.port,
        server.security.as_str(),
        super::SERVICE
    ))
}

/// TLS for `host`: rustls on `ring`, trusting the bundled web PKI roots (as the egress guard
/// does) and the account's `ca_certificate`, never the platform's store.
fn tls_for(account: &Account, server: &Server) -> Result<TlsParameters, ToolError> {
    let mut builder =
        TlsParameters::builder(server.host.clone()).certificate_store(CertificateStore::None);
    for root in webpki_root_certs::TLS_SERVER_ROOT_CERTS {
        if let Ok(cert) = Certificate::from_der(root.to_vec()) {
            builder = builder.add_root_certificate(cert);
        }
    }
    for root in &account.ca_certificates {
        let cert = Certificate::from_der(root.to_vec())
            .map_err(|e| provider(server, "reading ca_certificate", e))?;
        builder = builder.add_root_certificate(cert);
    }
    builder
        .build_rustls()
        .map_err(|e| provider(server, "setting up TLS", e))
}

/// The mail `send` sends: its Message-ID, its number of recipients and the message.
pub(crate) fn build(
    from: Mailbox,
    mail: Outgoing,
) -> Result<(String, usize, lettre::Message), ToolError> {
    let domain = from.email.domain().to_owned();
    let message_id = format!("<{}@{domain}>", uuid::Uuid::new_v4());
    let recipients = mail.to.len() + mail.cc.len() + mail.bcc.len();
    let mut builder = lettre::Message::builder()
        .from(from)
        .subject(mail.subject)
        .message_id(Some(message_id.clone()))
        .user_agent("Toolsmith".to_owned());
    for to in mail.to {
        builder = builder.to(to);
    }
    for cc in mail.cc {
        builder = builder.cc(cc);
    }
    for bcc in mail.bcc {
        builder = builder.bcc(bcc);
    }
    if let Some(id) = mail.in_reply_to {
        builder = builder.in_reply_to(id);
    }
    if let Some(refs) = mail.references {
        builder = builder.references(refs);
    }
    let text = if mail.html {
        SinglePart::html(mail.body)
    } else {
        SinglePart::plain(mail.body)
    };
    let message = if mail.attachments.is_empty() {
        builder.singlepart(text)
    } else {
        let mut parts = MultiPart::mixed().singlepart(text);
        for file in mail.attachments {
            let kind = ContentType::parse(&file.content_type)
                .or_else(|_| ContentType::parse("application/octet-stream"))
                .map_err(|e| ToolError::Args(format!("an attachment's type is not valid: {e}")))?;
            parts = parts.singlepart(Attachment::new(file.name).body(file.bytes, kind));
        }
        builder.multipart(parts)
    }
    .map_err(|e| ToolError::Args(format!("the mail could not be built: {e}")))?;
    Ok((message_id, recipients, message))
}

/// Builds the mail from `from` and sends it through the account's SMTP server.
pub(crate) async fn send(
    account: &Account,
    addrs: Vec<SocketAddr>,
    from: Mailbox,
    mail: Outgoing,
) -> Result<Sent, ToolError> {
    let server = account.smtp()?;
    let domain = from.email.domain().to_owned();
    let (message_id, recipients, message) = build(from, mail)?;
    let envelope = message.envelope().clone();
    let bytes = message.formatted();

    let hello = ClientId::Domain(domain);
    let exchange = async {
        let implicit = match server.security {
            Security::Tls => Some(tls_for(account, server)?),
            Security::StartTls | Security::None => None,
        };
        let mut conn =
            AsyncSmtpConnection::connect_tokio1(&addrs[..], Some(TIMEOUT), &hello, implicit, None)
                .await
                .map_err(|e| provider(server, "connecting to the SMTP server", e))?;
        if server.security == Security::StartTls {
            if !conn.can_starttls() {
                return Err(provider(
                    server,
                    "STARTTLS",
                    "the server does not offer STARTTLS (use smtp_security=tls with its TLS \
                     port, usually 465)",
                ));
            }
            conn.starttls(tls_for(account, server)?, &hello)
                .await
                .map_err(|e| provider(server, "STARTTLS", e))?;
        }
        let mechanisms = [Mechanism::Plain, Mechanism::Login];
        if server.security == Security::None
            && conn.can_starttls()
            && conn.server_info().get_auth_mechanism(&mechanisms).is_none()
        {
            // A server that offers a login only after STARTTLS: sending without one would be
            // refused (or relayed unauthenticated), and the password must not go in clear.
            let _ = conn.quit().await;
            return Err(provider(
                server,
                "logging in to the SMTP server",
                "the server takes a login only over TLS (it offers STARTTLS): set \
                 smtp_security=starttls, or tls with its TLS port (usually 465)",
            ));
        }
        if conn.server_info().get_auth_mechanism(&mechanisms).is_some() {
            let credentials = Credentials::new(account.username.clone(), account.password.clone());
            conn.auth(&mechanisms, &credentials)
                .await
                .map_err(|e| provider(server, "logging in to the SMTP server", e))?;
        }
        conn.send(&envelope, &bytes)
            .await
            .map_err(|e| provider(server, "sending", e))?;
        let _ = conn.quit().await;
        Ok(())
    };
    tokio::time::timeout(TIMEOUT, exchange)
        .await
        .map_err(|_| provider(server, "the SMTP exchange", "it took longer than 60 s"))??;
    Ok(Sent {
        message_id,
        recipients,
        bytes,
    })
}
