//! The MCP bridge: external MCP servers' tools in the catalogue, governed like Toolsmith's own.
//!
//! Each configured server (`[[mcp_servers]]`, [`McpServerConfig`]) gets one task
//! (`upstream.rs`) that starts the program, speaks MCP to it with rmcp's client, lists its tools
//! and registers them as `ToolOrigin::Mcp` tools named `<prefix><tool>`. From then on a bridged
//! call is a call like any other: the pipeline checks the schema, the policy (`group:mcp`,
//! `group:mcp:<server>`), approvals, rate limits, scrubs the upstream's answer and records it.
//! A name already taken (a built-in, a custom tool, another server's tool) is refused and shown
//! in the server's status; nothing is shadowed.
//!
//! The task keeps the set true over time: the upstream's `list_changed` re-lists; a health check
//! every 30 s re-lists too (a failed one ends the connection); when the connection ends the
//! server's tools are removed and it reconnects with exponential backoff (2 s doubling to 60 s,
//! 10 attempts, then it waits for [`Bridge::retry`]), re-listing on every reconnect. Each change
//! moves the registry's version, so Toolsmith's own MCP clients get `list_changed`.
//!
//! - `config.rs`: the configuration of one server and its checks.
//! - `upstream.rs`: the connection task.
//! - `tool.rs`: an upstream tool as a registered tool, and the call forwarding.
//! - `status.rs`: what REST and the CLI show.

mod config;
mod status;
mod tool;
mod upstream;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::task::JoinHandle;
use toolsmith_core::ToolRegistry;

pub use config::{DEFAULT_CALL_TIMEOUT, MAX_CALL_TIMEOUT, McpServerConfig};
pub use status::{ServerState, ServerStatus};

/// Every configured upstream server and its connection task.
pub struct Bridge {
    servers: BTreeMap<String, Arc<upstream::Upstream>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("servers", &self.servers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Bridge {
    /// Checks every entry (names unique, each valid); nothing is started.
    pub fn validate(configs: &[McpServerConfig]) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for config in configs {
            config.validate()?;
            if !seen.insert(config.name.as_str()) {
                return Err(format!(
                    "mcp_servers: the name '{}' is used twice; each server needs its own",
                    config.name
                ));
            }
        }
        Ok(())
    }

    /// Starts a connection task per enabled server (on the current tokio runtime); returns at
    /// once, so a slow or broken upstream never delays start-up.
    pub fn start(configs: &[McpServerConfig], registry: Arc<ToolRegistry>) -> Bridge {
        let servers: BTreeMap<String, Arc<upstream::Upstream>> = configs
            .iter()
            .map(|c| (c.name.clone(), Arc::new(upstream::Upstream::new(c.clone()))))
            .collect();
        let tasks = servers
            .values()
            .filter(|u| u.config.enabled)
            .map(|u| tokio::spawn(upstream::run(u.clone(), registry.clone())))
            .collect();
        Bridge {
            servers,
            tasks: Mutex::new(tasks),
        }
    }

    /// The configured servers' names (the policy's `mcp:<server>` groups).
    pub fn server_names(configs: &[McpServerConfig]) -> std::collections::BTreeSet<String> {
        configs.iter().map(|c| c.name.clone()).collect()
    }

    /// Every server's status, by name.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers.values().map(|u| u.status()).collect()
    }

    /// Makes a server that is down try again now. `false` if no server has that name.
    pub fn retry(&self, name: &str) -> bool {
        self.servers.get(name).is_some_and(|u| {
            u.retry_now.notify_one();
            true
        })
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
    }
}
