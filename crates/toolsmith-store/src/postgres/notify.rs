//! The change feed on PostgreSQL's `LISTEN`/`NOTIFY`.
//!
//! Sending: every write calls [`notify`] inside its transaction, so the notice is delivered
//! when the write commits and never for a write that rolled back. The notice runs under a
//! savepoint: if `pg_notify` itself fails, the savepoint is rolled back, a warning is logged,
//! and the write goes on (a failed notice never fails the write; other instances then catch up
//! at their next resync). Payloads are bounded well under PostgreSQL's 8000-byte limit.
//!
//! Receiving: [`subscribe`] keeps one dedicated connection (outside the pool) that `LISTEN`s.
//! It sends [`FeedEvent::Resync`] when the subscription starts and after every reconnection
//! (notices sent while it was away are not replayed by PostgreSQL, so the receiver reloads
//! everything once), drops this handle's own notices, and reconnects with backoff (100 ms
//! doubling to 5 s) for as long as someone receives.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, GenericClient};

use crate::{Change, ChangeKind, FeedEvent, StoreError};

/// The channel every instance sends on and listens to.
pub(crate) const CHANNEL: &str = "toolsmith_changes";

/// Longest id or owner put in a payload (they are short in practice; this bounds the size).
const MAX_FIELD: usize = 512;

fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_FIELD) {
        Some((cut, _)) => text.get(..cut).unwrap_or(text).to_owned(),
        None => text.to_owned(),
    }
}

/// Sends a change notice inside the caller's transaction; never fails the transaction.
pub(crate) async fn notify(
    tx: &impl GenericClient,
    instance: &str,
    kind: ChangeKind,
    id: &str,
    owner: &str,
    revision: Option<i64>,
) -> Result<(), StoreError> {
    let change = Change {
        kind,
        id: bounded(id),
        owner: bounded(owner),
        revision,
        instance: instance.to_owned(),
    };
    let payload = serde_json::to_string(&change).unwrap_or_default();
    tx.batch_execute("SAVEPOINT toolsmith_notify")
        .await
        .map_err(super::errors::pg)?;
    match tx
        .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
        .await
    {
        Ok(_) => tx.batch_execute("RELEASE SAVEPOINT toolsmith_notify").await,
        Err(e) => {
            tracing::warn!(error = %e, kind = ?kind, id, "cannot send a change notice; other instances will see the change at their next resync");
            tx.batch_execute("ROLLBACK TO SAVEPOINT toolsmith_notify")
                .await
        }
    }
    .map_err(super::errors::pg)
}

/// Starts the listener task; it ends when the receiver is dropped.
pub(crate) fn subscribe(
    mut config: tokio_postgres::Config,
    tls: super::tls::PgTls,
    instance: String,
) -> mpsc::Receiver<FeedEvent> {
    let (out, rx) = mpsc::channel(1024);
    // A silent network failure must not leave the listener waiting forever.
    config.keepalives(true);
    config.keepalives_idle(Duration::from_secs(30));
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(100);
        while !out.is_closed() {
            match listen_once(&config, &tls, &instance, &out).await {
                Ok(()) => delay = Duration::from_millis(100),
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "change feed: the LISTEN connection failed; reconnecting");
                }
            }
            if out.is_closed() {
                return;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(5));
        }
    });
    rx
}

/// One connection's life: connect, `LISTEN`, announce a resync, forward notices until the
/// connection ends. `Ok` when it had been established (the next attempt starts at the
/// shortest backoff again).
async fn listen_once(
    config: &tokio_postgres::Config,
    tls: &super::tls::PgTls,
    instance: &str,
    out: &mpsc::Sender<FeedEvent>,
) -> Result<(), tokio_postgres::Error> {
    let super::tls::Direct {
        client,
        messages: mut incoming,
        driver,
    } = tls.connect(config).await?;
    let listened = client.batch_execute(&format!("LISTEN {CHANNEL}")).await;
    if let Err(e) = listened {
        driver.abort();
        return Err(e);
    }
    tracing::debug!("change feed: listening for changes of other instances");
    if out.send(FeedEvent::Resync).await.is_ok() {
        while let Some(message) = incoming.recv().await {
            let AsyncMessage::Notification(notice) = message else {
                continue;
            };
            let change: Change = match serde_json::from_str(notice.payload()) {
                Ok(change) => change,
                Err(e) => {
                    tracing::warn!(error = %e, "change feed: an unreadable notice; resyncing");
                    if out.send(FeedEvent::Resync).await.is_err() {
                        break;
                    }
                    continue;
                }
            };
            if change.instance == instance {
                continue;
            }
            if out.send(FeedEvent::Changed(change)).await.is_err() {
                break;
            }
        }
    }
    driver.abort();
    drop(client);
    Ok(())
}
