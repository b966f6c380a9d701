//! `toolsmith serve`: the HTTP server (REST under `/api/v1`, MCP at `/mcp`, `/livez`,
//! `/readyz`), on one validated [`Settings`].
//!
//! Start-up, in order: open the store and the service; refuse a non-loopback address unless
//! authentication is configured; bind; print `toolsmith listening on http://ADDR` (the address
//! actually bound, so `--port 0` is usable); start the change feed; serve.
//!
//! Shutdown on SIGINT or SIGTERM: stop accepting connections, end MCP streams, let in-flight
//! requests finish for at most the shutdown timeout, then drop them. Store writes are
//! transactions (SQLite or PostgreSQL), so a dropped request never leaves anything half-written; the process ends by
//! returning from `main`, never with `process::exit` while a write may run.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;
use toolsmith_server::AppState;

use crate::exit::SUCCESS;
use crate::settings::{ConfigError, Settings};
use crate::{database, feed, output};

pub async fn run(settings: Settings) -> anyhow::Result<u8> {
    let files = crate::nofile::raise();
    let mut server_config = settings.server.clone();
    let fitted = crate::nofile::fit_connections(server_config.max_connections, files);
    if fitted < server_config.max_connections {
        tracing::info!(
            configured = server_config.max_connections,
            open_file_limit = ?files,
            max_connections = fitted,
            "max_connections lowered to fit the open-file limit"
        );
        server_config.max_connections = fitted;
    }
    tracing::debug!(database = %settings.database, "opening the store");
    let service = database::open_service(
        &settings.database,
        settings.service.clone(),
        settings.database_startup_timeout,
    )
    .await?;
    let state = AppState::new(service.clone(), Arc::new(server_config));
    // Scheduled tasks run while the server does (each due run once across instances).
    let _scheduler = service.start_scheduler();

    let addrs = resolve(&settings.bind, settings.port).await?;
    if !addrs.iter().all(|a| is_loopback(a.ip()))
        && !toolsmith_server::auth::auth_configured(&state).await
    {
        return Err(ConfigError(format!(
            "refusing to listen on {}: it is not a loopback address and no authentication is \
             configured, so anyone who can reach it could create and run tools. Create an API \
             token first (`toolsmith {} token create --user USER --scopes tools:read,tools:write,\
             tools:execute`) or set an admin token (--admin-token, TOOLSMITH_ADMIN_TOKEN or \
             admin_token in the configuration file); or listen on 127.0.0.1 / ::1 / localhost",
            settings.bind,
            settings.database.cli_option()
        ))
        .into());
    }

    let listener = tokio::net::TcpListener::bind(addrs.as_slice())
        .await
        .with_context(|| format!("cannot listen on {}:{}", settings.bind, settings.port))?;
    let local = listener
        .local_addr()
        .context("cannot read the listening address")?;
    output::stdout(&format!("toolsmith listening on http://{local}\n"))?;
    tracing::info!(address = %local, database = %settings.database, "serving");

    let stop_feed = CancellationToken::new();
    let feed = feed::spawn(service.clone(), settings.poll_interval, stop_feed.clone());
    let housekeeping = crate::housekeeping::spawn(service.clone(), stop_feed.clone());

    let stop = CancellationToken::new();
    let server = toolsmith_server::app::serve(listener, state, stop.clone().cancelled_owned());
    let mut server = std::pin::pin!(server);
    let outcome = tokio::select! {
        res = &mut server => res,
        signal = shutdown_signal() => {
            tracing::info!(signal, timeout_secs = settings.shutdown_timeout.as_secs_f64(), "shutting down");
            stop.cancel();
            tokio::select! {
                res = tokio::time::timeout(settings.shutdown_timeout, &mut server) => match res {
                    Ok(res) => res,
                    Err(_) => {
                        tracing::warn!("in-flight requests did not finish within the shutdown timeout; cancelling them");
                        Ok(())
                    }
                },
                signal = shutdown_signal() => {
                    tracing::warn!(signal, "second signal: cancelling in-flight requests now");
                    Ok(())
                }
            }
        }
    };
    stop_feed.cancel();
    let _ = feed.await;
    let _ = housekeeping.await;
    // Running tool tasks fail with a message saying why: nothing resumes them elsewhere.
    service.stop_tool_tasks().await;
    service.end_sandbox_sessions().await;
    service.flush_usage().await;
    outcome.context("the server failed")?;
    Ok(SUCCESS)
}

/// The socket addresses of `host:port`; `localhost` is the loopback addresses.
async fn resolve(host: &str, port: u16) -> anyhow::Result<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .with_context(|| format!("cannot resolve the address '{host}'"))?
        .collect();
    anyhow::ensure!(
        !addrs.is_empty(),
        "the address '{host}' resolves to nothing"
    );
    Ok(addrs)
}

/// 127.0.0.0/8, ::1, and IPv4-mapped loopback.
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Waits for SIGINT or SIGTERM; returns the signal's name.
pub async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut int), Ok(mut term)) => tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            _ => {
                tracing::warn!("cannot install signal handlers; stop the server with Ctrl-C");
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses() {
        for ip in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "0.0.0.0",
            "::",
            "10.0.0.1",
            "192.168.1.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_loopback(ip.parse().unwrap()), "{ip}");
        }
    }
}
