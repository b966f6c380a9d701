//! A test harness: serves MCP over stdio on the SQLite store at the path given, as
//! `toolsmith mcp` will. The MCP client tests (`tests/mcp_clients.rs`) start it as the stdio
//! server of the Python and TypeScript SDKs and of the Inspector CLI.
//!
//! Usage: `mcp_stdio <path/to/toolsmith.db> [--compat dynamic-mcp]`. Logs go to stderr.

use std::sync::Arc;

use anyhow::Context;
use toolsmith_server::{AppState, ServerConfig};
use toolsmith_service::{ServiceConfig, ToolService};
use toolsmith_store::{SqliteStore, Store};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut argv = std::env::args().skip(1);
    let db = argv
        .next()
        .context("usage: mcp_stdio <path/to/toolsmith.db> [--compat dynamic-mcp]")?;
    let mut config = ServerConfig::default();
    match (argv.next().as_deref(), argv.next().as_deref()) {
        (None, _) => {}
        (Some("--compat"), Some("dynamic-mcp")) => config.compat_dynamic_mcp = true,
        other => anyhow::bail!("unexpected arguments: {other:?}"),
    }
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(std::path::Path::new(&db))
            .await
            .with_context(|| format!("opening the store at {db}"))?,
    );
    let service = ToolService::open(ServiceConfig::default(), store).await?;
    let state = AppState {
        service,
        config: Arc::new(config),
    };
    toolsmith_server::mcp::serve_stdio(state).await
}
