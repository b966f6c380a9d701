//! TLS to PostgreSQL: libpq's `sslmode`, `sslrootcert`, `sslcert` and `sslkey` parameters of
//! a `postgres://` URL, taken out before the driver reads the URL (it knows only `disable`,
//! `prefer` and `require`, and no certificate files) and turned into a rustls connector.
//!
//! The modes mean what libpq's documentation says they mean:
//! - `disable`: plain TCP.
//! - `prefer` (and `allow`): TLS when the server offers it, the certificate not checked.
//!   With no `sslmode` at all the connection stays plain, as it always has here.
//! - `require`: TLS or no connection; the certificate is not checked — unless `sslrootcert` is
//!   given, when it is checked as `verify-ca` checks it (libpq's rule).
//! - `verify-ca`: TLS, the server's chain must lead to a CA of `sslrootcert`.
//! - `verify-full`: as `verify-ca`, and the certificate must name the host connected to.
//!
//! `sslrootcert` is a PEM file of CA certificates, or `system` for the bundled Mozilla roots
//! (the egress guard's). `sslcert` and `sslkey` are a PEM client certificate and its key.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::SslMode as DriverMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The URL parameters this module takes out of a URL before the driver sees it.
const OWN_PARAMETERS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, String> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode={other} is not a mode; use disable, prefer, require, verify-ca or \
                     verify-full"
                ));
            }
        })
    }
}

/// How connections to one database are made: the driver's mode and, unless TLS is off, the
/// connector.
#[derive(Clone)]
pub(crate) struct PgTls {
    mode: SslMode,
    connector: Option<MakeRustlsConnect>,
}

impl fmt::Debug for PgTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgTls").field("mode", &self.mode).finish()
    }
}

/// The TLS settings of a URL.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TlsParameters {
    mode: Option<SslMode>,
    root_cert: Option<String>,
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
}

/// Splits `url` into what the driver reads and the TLS settings this module reads. A
/// key=value connection string is passed through untouched (its `sslmode` is the driver's);
/// the certificate parameters exist only in the URL form.
pub(crate) fn split_url(url: &str) -> Result<(String, TlsParameters), String> {
    let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
    if !is_url {
        if let Some(name) = OWN_PARAMETERS
            .iter()
            .skip(1)
            .find(|name| url.contains(&format!("{name}=")))
        {
            return Err(format!(
                "{name} is read from the URL form only; write \
                 postgres://user@host:port/database?sslmode=verify-full&{name}=…"
            ));
        }
        return Ok((url.to_owned(), TlsParameters::default()));
    }
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), TlsParameters::default()));
    };
    let mut kept = Vec::new();
    let mut params = TlsParameters::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .map_err(|_| format!("the value of {key} is not UTF-8"))?
            .into_owned();
        match key {
            "sslmode" => params.mode = Some(SslMode::parse(&value)?),
            "sslrootcert" => params.root_cert = Some(value),
            "sslcert" => params.client_cert = Some(PathBuf::from(value)),
            "sslkey" => params.client_key = Some(PathBuf::from(value)),
            _ => kept.push(pair),
        }
    }
    let driver_url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((driver_url, params))
}

impl PgTls {
    /// The connector for `params`, with every file read now: a missing or unreadable file is
    /// an error at start-up, naming the parameter and the path.
    pub(crate) fn new(params: &TlsParameters) -> Result<PgTls, String> {
        let mode = match (params.mode, &params.root_cert) {
            // libpq: `require` with a root certificate checks the chain.
            (Some(SslMode::Require), Some(_)) => SslMode::VerifyCa,
            (Some(mode), _) => mode,
            (None, _) if params.root_cert.is_some() || params.client_cert.is_some() => {
                SslMode::Prefer
            }
            (None, _) => SslMode::Disable,
        };
        if mode == SslMode::Disable {
            return Ok(PgTls {
                mode,
                connector: None,
            });
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match mode {
            SslMode::VerifyCa | SslMode::VerifyFull => {
                let Some(root) = &params.root_cert else {
                    return Err(format!(
                        "sslmode={} needs sslrootcert: the CA certificates (a PEM file) the \
                         server's certificate must lead to, or sslrootcert=system for the \
                         bundled public roots",
                        if mode == SslMode::VerifyCa {
                            "verify-ca"
                        } else {
                            "verify-full"
                        }
                    ));
                };
                let roots = root_store(root)?;
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| format!("sslrootcert={root}: {e}"))?;
                if mode == SslMode::VerifyFull {
                    webpki
                } else {
                    Arc::new(ChainOnly(webpki))
                }
            }
            _ => Arc::new(Unchecked(provider.clone())),
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match (&params.client_cert, &params.client_key) {
            (Some(cert), Some(key)) => {
                let chain = certificates(cert, "sslcert")?;
                let key = PrivateKeyDer::from_pem_file(key)
                    .map_err(|e| format!("sslkey={}: {e}", key.display()))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("sslcert/sslkey: {e}"))?
            }
            (None, None) => builder.with_no_client_auth(),
            (Some(_), None) => {
                return Err(
                    "sslcert needs sslkey: the client certificate's private key (a PEM file)"
                        .to_owned(),
                );
            }
            (None, Some(_)) => {
                return Err("sslkey needs sslcert: the client certificate (a PEM file)".to_owned());
            }
        };
        Ok(PgTls {
            mode,
            connector: Some(MakeRustlsConnect::new(config)),
        })
    }

    /// Sets the driver's own mode to match (it decides whether to ask the server for TLS).
    pub(crate) fn configure(&self, config: &mut tokio_postgres::Config) {
        config.ssl_mode(match self.mode {
            SslMode::Disable => DriverMode::Disable,
            SslMode::Prefer => DriverMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => DriverMode::Require,
        });
    }

    /// Opens one connection outside the pool (start-up checks, the change feed), driven on a
    /// task of its own: its notifications arrive on the receiver, which closes when the
    /// connection ends. Abort the task to close the connection.
    pub(crate) async fn connect(
        &self,
        config: &tokio_postgres::Config,
    ) -> Result<Direct, tokio_postgres::Error> {
        let (tx, messages) = tokio::sync::mpsc::unbounded_channel();
        let (client, driver) = match &self.connector {
            None => {
                let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
                (client, spawn_driver(connection, tx))
            }
            Some(tls) => {
                let (client, connection) = config.connect(tls.clone()).await?;
                (client, spawn_driver(connection, tx))
            }
        };
        Ok(Direct {
            client,
            messages,
            driver,
        })
    }

    /// A pool manager for `config` with this connector.
    pub(crate) fn manager(
        &self,
        config: tokio_postgres::Config,
        manager_config: deadpool_postgres::ManagerConfig,
    ) -> deadpool_postgres::Manager {
        match &self.connector {
            None => deadpool_postgres::Manager::from_config(
                config,
                tokio_postgres::NoTls,
                manager_config,
            ),
            Some(tls) => {
                deadpool_postgres::Manager::from_config(config, tls.clone(), manager_config)
            }
        }
    }
}

/// A connection outside the pool, from [`PgTls::connect`].
pub(crate) struct Direct {
    pub(crate) client: tokio_postgres::Client,
    pub(crate) messages: tokio::sync::mpsc::UnboundedReceiver<tokio_postgres::AsyncMessage>,
    pub(crate) driver: tokio::task::JoinHandle<()>,
}

/// Drives a connection on a task of its own, forwarding its notices and notifications.
fn spawn_driver<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
    out: tokio::sync::mpsc::UnboundedSender<tokio_postgres::AsyncMessage>,
) -> tokio::task::JoinHandle<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        use futures::StreamExt;
        while let Some(message) = messages.next().await {
            match message {
                Ok(message) => {
                    if out.send(message).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "PostgreSQL: a connection outside the pool broke");
                    return;
                }
            }
        }
    })
}

/// The CA certificates of `sslrootcert`.
fn root_store(root: &str) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if root == "system" {
        for der in webpki_root_certs::TLS_SERVER_ROOT_CERTS {
            // A bundled root the parser rejects is skipped, as rustls' own loaders do.
            let _ = roots.add(der.clone());
        }
        return Ok(roots);
    }
    for cert in certificates(Path::new(root), "sslrootcert")? {
        roots
            .add(cert)
            .map_err(|e| format!("sslrootcert={root}: not a CA certificate rustls accepts: {e}"))?;
    }
    Ok(roots)
}

/// Every certificate of a PEM file; none is an error.
fn certificates(path: &Path, parameter: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{parameter}={shown}: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{parameter}={shown}: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "{parameter}={shown}: no PEM certificate in the file"
        ));
    }
    Ok(certs)
}

/// `verify-ca`: the chain must lead to a trusted CA; the name in the certificate is not
/// compared with the host.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // webpki checks the chain before the name: a name error means the chain was good.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` and `require`: encrypted, the server's certificate not checked (libpq's meaning;
/// the handshake's signatures still are).
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_never_sees_the_tls_parameters_and_keeps_the_others() {
        let (url, params) = split_url(
            "postgres://u:p@db:5432/app?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(url, "postgres://u:p@db:5432/app?application_name=x");
        assert_eq!(params.mode, Some(SslMode::VerifyFull));
        assert_eq!(params.root_cert.as_deref(), Some("/etc/ca.pem"));
        let (url, params) = split_url("postgres://u@db/app?sslmode=require").unwrap();
        assert_eq!(url, "postgres://u@db/app");
        assert_eq!(params.mode, Some(SslMode::Require));
    }

    #[test]
    fn a_wrong_mode_or_a_missing_file_names_the_parameter() {
        let err = split_url("postgres://u@db/app?sslmode=verify").unwrap_err();
        assert!(err.contains("sslmode=verify is not a mode"), "{err}");
        let (_, params) =
            split_url("postgres://u@db/app?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
                .unwrap();
        let err = PgTls::new(&params).unwrap_err();
        assert!(err.contains("sslrootcert=/nonexistent/ca.pem"), "{err}");
        let (_, params) = split_url("postgres://u@db/app?sslmode=verify-ca").unwrap();
        let err = PgTls::new(&params).unwrap_err();
        assert!(err.contains("needs sslrootcert"), "{err}");
        let err = split_url("host=db sslrootcert=/ca.pem").unwrap_err();
        assert!(err.contains("URL form"), "{err}");
    }

    #[test]
    fn a_file_that_holds_no_certificate_or_no_key_is_refused_naming_the_parameter() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage.pem");
        std::fs::write(&garbage, "not a certificate\n\u{0}\u{ff}").unwrap();
        let shown = garbage.display().to_string();
        let (_, params) = split_url(&format!(
            "postgres://u@db/app?sslmode=verify-full&sslrootcert={shown}"
        ))
        .unwrap();
        let err = PgTls::new(&params).unwrap_err();
        assert!(err.contains(&format!("sslrootcert={shown}")), "{err}");
        let (_, params) = split_url(&format!(
            "postgres://u@db/app?sslmode=require&sslcert={shown}&sslkey={shown}"
        ))
        .unwrap();
        let err = PgTls::new(&params).unwrap_err();
        assert!(err.contains("sslcert=") || err.contains("sslkey="), "{err}");
    }

    #[test]
    fn require_with_a_root_certificate_checks_the_chain_as_libpq_does() {
        let (_, params) =
            split_url("postgres://u@db/app?sslmode=require&sslrootcert=system").unwrap();
        assert_eq!(PgTls::new(&params).unwrap().mode, SslMode::VerifyCa);
        let (_, params) = split_url("postgres://u@db/app").unwrap();
        assert_eq!(PgTls::new(&params).unwrap().mode, SslMode::Disable);
    }
}
