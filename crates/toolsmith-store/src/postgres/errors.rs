//! Turning driver and pool errors into [`StoreError`]s: constraint violations by name, and at
//! connect time the difference between "not reachable yet" (worth retrying) and "refused"
//! (wrong password, no such database: retrying cannot help).

use tokio_postgres::error::SqlState;

use crate::StoreError;

/// Any driver error, as a backend error. Text PostgreSQL cannot store (a NUL character) gets a
/// message that says so instead of the driver's.
pub(crate) fn pg(e: tokio_postgres::Error) -> StoreError {
    if matches!(
        e.code(),
        Some(c) if *c == SqlState::UNTRANSLATABLE_CHARACTER
            || *c == SqlState::CHARACTER_NOT_IN_REPERTOIRE
            || *c == SqlState::INVALID_TEXT_REPRESENTATION
    ) {
        return StoreError::Backend(
            format!(
                "PostgreSQL cannot store this text (it contains a NUL character, \\u0000, which \
                 PostgreSQL text and JSONB refuse); remove it and try again: {e}"
            )
            .into(),
        );
    }
    if is_unavailable(&e) {
        return StoreError::Unavailable {
            reason: format!("PostgreSQL: {}", connect_reason(&e)),
        };
    }
    StoreError::Backend(Box::new(e))
}

/// The server's state, not the request: the connection is gone or failed on I/O, or the
/// server answered with a connection exception (class 08), insufficient resources (53: disk
/// full, out of memory, too many connections), an operator intervention (57P: shutting down,
/// starting up) or a read-only transaction (a standby).
fn is_unavailable(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let c = code.code();
            c.starts_with("08")
                || c.starts_with("53")
                || c.starts_with("57P")
                || *code == SqlState::READ_ONLY_SQL_TRANSACTION
        }
        None => {
            e.as_db_error().is_none()
                && std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        }
    }
}

/// The name of the unique constraint (or index) `e` violated, if that is what it is.
pub(crate) fn unique_violation(e: &tokio_postgres::Error) -> Option<&str> {
    let db = e.as_db_error()?;
    (*db.code() == SqlState::UNIQUE_VIOLATION).then(|| db.constraint().unwrap_or(""))
}

/// Pool errors: a connection could not be had.
pub(crate) fn pool(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => pg(e),
        e @ (deadpool_postgres::PoolError::Timeout(_) | deadpool_postgres::PoolError::Closed) => {
            StoreError::Unavailable {
                reason: format!("no database connection available: {e}"),
            }
        }
        other => StoreError::Backend(format!("no database connection available: {other}").into()),
    }
}

/// Whether a failure to connect is worth retrying: the server is not reachable (yet) or is
/// starting up or shutting down. Authentication failures, a missing database or role and
/// configuration errors are final.
pub(crate) fn is_transient_connect(e: &tokio_postgres::Error) -> bool {
    match e.code() {
        Some(code) => {
            *code == SqlState::CANNOT_CONNECT_NOW
                || *code == SqlState::ADMIN_SHUTDOWN
                || *code == SqlState::CRASH_SHUTDOWN
                || *code == SqlState::TOO_MANY_CONNECTIONS
        }
        // No SQLSTATE: the TCP connection itself failed (refused, reset, timed out).
        None => {
            let text = e.to_string();
            // A TLS failure (the server refuses TLS, a certificate not trusted) does not heal by
            // waiting.
            !text.contains("invalid configuration")
                && !text.contains("password missing")
                && !text.contains("TLS")
        }
    }
}

/// A one-line reason for a failed connection, naming the fix for the common cases.
pub(crate) fn connect_reason(e: &tokio_postgres::Error) -> String {
    let detail = e
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(": ");
                text.push_str(&s.to_string());
                source = s.source();
            }
            text
        });
    match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD => {
            format!("{detail} (check the user and password in the database URL)")
        }
        Some(c) if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            format!("{detail} (the server refused this user; check pg_hba.conf and the URL)")
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            format!("{detail} (create it first: createdb <name>, or fix the URL)")
        }
        _ => match tls_hint(&detail) {
            Some(hint) => format!("{detail} ({hint})"),
            None => detail,
        },
    }
}

/// What to do about a failed TLS handshake, from the words of rustls and the driver.
fn tls_hint(detail: &str) -> Option<&'static str> {
    if detail.contains("server does not support TLS") {
        Some("the server has ssl off: turn it on, or connect with sslmode=prefer or disable")
    } else if detail.contains("NotValidForName") || detail.contains("not valid for name") {
        Some(
            "the server's certificate does not name the host in the URL: connect by a name the \
             certificate holds, or use sslmode=verify-ca to check the chain only",
        )
    } else if detail.contains("UnknownIssuer") || detail.contains("BadSignature") {
        Some("the server's certificate does not lead to a CA of sslrootcert: check that file")
    } else if detail.contains("Expired") || detail.contains("NotValidYet") {
        Some("the server's certificate is outside its validity dates")
    } else {
        None
    }
}
