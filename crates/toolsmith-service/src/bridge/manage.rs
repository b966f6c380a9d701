//! The service's operations on upstream servers: status, and registering, changing, retrying and
//! removing the servers kept in the store (REST and the CLI, admin only at those faces). The
//! configuration file's servers are shown but changed only in the file.
//!
//! Every write is checked (the entry's own rules, a name free of the configuration file's, the
//! program among `mcp_allowed_commands`, each `env` name credential-like or among
//! `mcp_allowed_env`, no credential-like `env` or header value in clear), stored, applied to this process's bridge and audited;
//! other processes on the store apply it at their next change-feed poll
//! ([`ToolService::refresh_mcp_servers_from_store`]).

use chrono::Utc;
use serde_json::json;
use toolsmith_core::mcp_bridge::McpServerRecord;

use super::{Bridge, McpServerRegistration, Origin, ServerStatus, Transport};
use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::{Actor, ToolService};

/// What REST and the CLI send to register or change a server: its configuration.
pub type ServerInput = McpServerRegistration;

impl ToolService {
    fn bridge(&self) -> Result<&Bridge, ServiceError> {
        self.bridge
            .as_ref()
            .ok_or_else(|| ServiceError::InvalidState("the MCP bridge is not running".to_owned()))
    }

    /// Every bridged MCP server's status, by name (empty when there is none).
    pub fn mcp_servers(&self) -> Vec<ServerStatus> {
        self.bridge.as_ref().map(Bridge::status).unwrap_or_default()
    }

    /// One server's status.
    pub fn mcp_server(&self, name: &str) -> Result<ServerStatus, ServiceError> {
        self.bridge()?
            .status_of(name)
            .ok_or_else(|| not_found(name))
    }

    /// Connects the enabled servers this process has not started — all, or those in `names` —
    /// for a CLI command that opened the service without `autostart` and needs them; the names
    /// started (in the background: poll their status).
    pub fn connect_mcp_servers(&self, names: Option<&[String]>) -> Vec<String> {
        self.bridge
            .as_ref()
            .map(|b| b.connect(names))
            .unwrap_or_default()
    }

    /// The servers that would bridge a tool named `tool` (its prefix, allow and deny lists),
    /// so the CLI connects only those before running it.
    pub fn mcp_servers_of_tool(&self, tool: &str) -> Vec<String> {
        self.bridge
            .as_ref()
            .map(|b| b.servers_of_tool(tool))
            .unwrap_or_default()
    }

    /// How long a call of the bridged tool `tool` may take (its server's
    /// `call_timeout_seconds`; the longest, if several servers' prefixes match); `None` for a
    /// tool no server would bridge. The HTTP faces let a request that runs it last that long,
    /// even past their own request limit.
    pub fn mcp_call_timeout(&self, tool: &str) -> Option<std::time::Duration> {
        self.bridge.as_ref()?.call_timeout_of_tool(tool)
    }

    /// Makes the bridged MCP server `name` reconnect now; `false` if there is none by that name.
    pub fn retry_mcp_server(&self, name: &str) -> bool {
        self.bridge.as_ref().is_some_and(|b| b.retry(name))
    }

    /// Checks what a registration or change may not do: break the entry's rules, start a
    /// program the operator did not allow, or reach a URL the egress guard refuses (checked
    /// again, with the name resolved, at every connection).
    fn check_registered(&self, config: &McpServerRegistration) -> Result<(), ServiceError> {
        config.validate().map_err(ServiceError::Validation)?;
        config
            .check_no_clear_secrets()
            .map_err(ServiceError::Validation)?;
        let launcher = &self.bridge()?.launcher;
        match config.transport {
            Transport::Stdio => {
                launcher
                    .launch
                    .check(&config.command)
                    .map_err(ServiceError::Forbidden)?;
                for name in config.env.keys() {
                    launcher.launch.check_env(name).map_err(|why| {
                        ServiceError::Forbidden(format!("mcp_servers '{}': {why}", config.name))
                    })?;
                }
            }
            Transport::StreamableHttp | Transport::Sse => {
                let url = config.url.as_deref().unwrap_or_default();
                launcher.egress.check_url(url).map_err(|e| {
                    ServiceError::Forbidden(format!(
                        "the egress guard refuses '{url}': {e} (an upstream on a private or loopback address must be listed in allowed_private_hosts)"
                    ))
                })?;
            }
        }
        Ok(())
    }

    /// Registers a server and starts it (in the background); its status.
    pub async fn register_mcp_server(
        &self,
        actor: &Actor,
        config: McpServerRegistration,
    ) -> Result<ServerStatus, ServiceError> {
        self.check_registered(&config)?;
        let _guard = self.write_lock.lock().await;
        let bridge = self.bridge()?;
        if bridge.origin(&config.name) == Some(Origin::Config) {
            return Err(from_file(&config.name));
        }
        let now = Utc::now();
        let record = McpServerRecord {
            name: config.name.clone(),
            owner: actor.user_id.clone(),
            config: serde_json::to_value(&config)
                .map_err(|e| ServiceError::Validation(e.to_string()))?,
            revision: 1,
            created_at: now,
            updated_at: now,
            updated_by: actor.user_id.clone(),
        };
        if !self.store.create_mcp_server(&record).await? {
            return Err(ServiceError::NameTaken(format!(
                "an MCP server named '{}' is registered already; change it with an update, or pick another name",
                config.name
            )));
        }
        let name = config.name.clone();
        self.policy.add_mcp_server(&name);
        bridge.insert(
            config,
            Origin::Registered {
                owner: record.owner.clone(),
                revision: 1,
            },
        );
        self.audit_server(actor, "mcp_server.create", &record, (None, Some(1)))
            .await;
        self.mcp_server(&name)
    }

    /// Replaces a registered server's configuration (if its revision is `expected_revision`,
    /// when given) and restarts it; its status.
    pub async fn update_mcp_server(
        &self,
        actor: &Actor,
        config: McpServerRegistration,
        expected_revision: Option<i64>,
    ) -> Result<ServerStatus, ServiceError> {
        self.check_registered(&config)?;
        let _guard = self.write_lock.lock().await;
        let bridge = self.bridge()?;
        let owner = match bridge.origin(&config.name) {
            Some(Origin::Config) => return Err(from_file(&config.name)),
            Some(Origin::Registered { owner, .. }) => owner,
            None => return Err(not_found(&config.name)),
        };
        let record = McpServerRecord {
            name: config.name.clone(),
            owner,
            config: serde_json::to_value(&config)
                .map_err(|e| ServiceError::Validation(e.to_string()))?,
            revision: 0,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            updated_by: actor.user_id.clone(),
        };
        let stored = match self
            .store
            .update_mcp_server(&record, expected_revision)
            .await?
        {
            Ok(stored) => stored,
            Err(None) => return Err(not_found(&config.name)),
            Err(Some(actual)) => {
                return Err(ServiceError::RevisionConflict {
                    expected: expected_revision.unwrap_or_default(),
                    actual,
                });
            }
        };
        let name = config.name.clone();
        bridge
            .replace(
                config,
                Origin::Registered {
                    owner: stored.owner.clone(),
                    revision: stored.revision,
                },
            )
            .await;
        self.audit_server(
            actor,
            "mcp_server.update",
            &stored,
            (Some(stored.revision - 1), Some(stored.revision)),
        )
        .await;
        self.mcp_server(&name)
    }

    /// Removes a registered server: its program ends and its tools leave the catalogue. Refused
    /// while the policy in force names its group (`group:mcp:<name>`).
    pub async fn remove_mcp_server(&self, actor: &Actor, name: &str) -> Result<(), ServiceError> {
        let _guard = self.write_lock.lock().await;
        let bridge = self.bridge()?;
        match bridge.origin(name) {
            Some(Origin::Config) => return Err(from_file(name)),
            Some(Origin::Registered { .. }) => {}
            None => return Err(not_found(name)),
        }
        if let Some(policy) = self.policy_in_force().await?
            && self.policy.names_mcp_server(&policy, &self.registry, name)
        {
            return Err(ServiceError::InvalidState(format!(
                "the policy in force names group:mcp:{name}; take it out of the policy first"
            )));
        }
        if !self.store.delete_mcp_server(name).await? {
            return Err(not_found(name));
        }
        bridge.remove(name).await;
        self.policy.remove_mcp_server(name);
        self.audit
            .record(
                actor,
                "mcp_server.delete",
                AuditTarget::new("mcp_server", name.to_owned(), Some(name.to_owned())),
                (None, None),
                json!({}),
            )
            .await;
        Ok(())
    }

    /// The policy in force: the stored one, else the configuration file's.
    async fn policy_in_force(
        &self,
    ) -> Result<Option<toolsmith_policy::PolicyDocument>, ServiceError> {
        match self.store.get_policy().await? {
            Some(stored) => serde_json::from_value(stored.document)
                .map(Some)
                .map_err(|e| ServiceError::Validation(format!("the stored policy: {e}"))),
            None => Ok(self.config.policy.clone()),
        }
    }

    /// Brings this process's bridge in line with the servers stored by any process (the change
    /// feed calls it on every poll); how many servers were started, restarted or stopped.
    pub async fn refresh_mcp_servers_from_store(&self) -> Result<usize, ServiceError> {
        let stored = self.store.list_mcp_servers().await?;
        let _guard = self.write_lock.lock().await;
        let bridge = self.bridge()?;
        let mut changed = 0;
        for record in &stored {
            let origin = Origin::Registered {
                owner: record.owner.clone(),
                revision: record.revision,
            };
            match bridge.origin(&record.name) {
                Some(current) if current == origin => continue,
                Some(Origin::Config) => continue,
                _ => {}
            }
            match stored_config(record) {
                Ok(config) => {
                    self.policy.add_mcp_server(&record.name);
                    bridge.replace(config, origin).await;
                    changed += 1;
                }
                Err(why) => tracing::warn!(server = %record.name, "{why}"),
            }
        }
        for status in bridge.status() {
            let registered = matches!(bridge.origin(&status.name), Some(Origin::Registered { .. }));
            if registered && !stored.iter().any(|r| r.name == status.name) {
                bridge.remove(&status.name).await;
                changed += 1;
            }
        }
        Ok(changed)
    }

    async fn audit_server(
        &self,
        actor: &Actor,
        action: &str,
        record: &McpServerRecord,
        revisions: (Option<i64>, Option<i64>),
    ) {
        // The configuration without env values (references only, but names suffice here).
        let config = &record.config;
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("mcp_server", record.name.clone(), Some(record.name.clone())),
                revisions,
                json!({
                    "transport": config.get("transport").cloned().unwrap_or_else(|| json!("stdio")),
                    "command": config["command"],
                    "args": config["args"],
                    "envNames": config["env"].as_object().map(|e| e.keys().cloned().collect::<Vec<_>>()),
                    "url": config.get("url"),
                    "headerNames": config.get("headers").and_then(|h| h.as_object()).map(|h| h.keys().cloned().collect::<Vec<_>>()),
                }),
            )
            .await;
    }
}

/// A stored server's configuration, checked like a new one (a row written by a newer or
/// broken process is skipped with the reason).
pub(crate) fn stored_config(record: &McpServerRecord) -> Result<McpServerRegistration, String> {
    let config: McpServerRegistration = serde_json::from_value(record.config.clone())
        .map_err(|e| format!("the stored MCP server '{}' is unreadable: {e}", record.name))?;
    if config.name != record.name {
        return Err(format!(
            "the stored MCP server '{}' names itself '{}'",
            record.name, config.name
        ));
    }
    config.validate()?;
    Ok(config)
}

fn not_found(name: &str) -> ServiceError {
    ServiceError::NotFound(format!("no MCP server named '{name}'"))
}

fn from_file(name: &str) -> ServiceError {
    ServiceError::Forbidden(format!(
        "the MCP server '{name}' is defined in the configuration file ([[mcp_servers]]); change or remove it there"
    ))
}
