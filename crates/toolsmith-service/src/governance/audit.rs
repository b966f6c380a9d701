//! The audit log: every privileged action — a tool created, changed, deleted, enabled,
//! disabled, approved or rejected; an execution approval decided; a Config Center service or
//! entry written; a policy or token changed — with its actor, target, revisions before and
//! after, and request id.
//!
//! An actor acting as an agent (an agent-bound token, the `X-Toolsmith-Agent` header, a model
//! through MCP with one) is recorded with it: `details.actorAgent`. An actor acting in an
//! organisation is recorded as the person (`actor`), with the organisation's id in
//! `details.actorOrganization`.
//!
//! Entries go to the store (`audit_log`) and, when configured, are appended as JSON lines to a
//! file. Writing them never fails the action they describe (the action is already committed);
//! a failure is logged. Entries never carry secrets: `details` names what changed (field names,
//! statuses, decisions), never a Config Center value or a command tool's env.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_store::{AuditQuery, AuditRecord, Store};

use crate::error::ServiceError;
use crate::input::Actor;

/// What an action was done to.
#[derive(Debug, Clone)]
pub struct AuditTarget {
    /// `tool`, `approval`, `config_service`, `config_entry`, `policy`, `token`.
    pub kind: &'static str,
    pub id: String,
    pub name: Option<String>,
}

impl AuditTarget {
    pub fn new(kind: &'static str, id: impl Into<String>, name: Option<String>) -> AuditTarget {
        AuditTarget {
            kind,
            id: id.into(),
            name,
        }
    }
}

/// Appends audit entries to the store and, optionally, to a JSONL file.
pub struct AuditLog {
    store: Arc<dyn Store>,
    file: Option<(PathBuf, Mutex<std::fs::File>)>,
}

impl AuditLog {
    /// An audit log in the store, mirrored to `jsonl` (created if missing, appended to) if given.
    pub fn open(store: Arc<dyn Store>, jsonl: Option<&Path>) -> Result<AuditLog, ServiceError> {
        let file = match jsonl {
            None => None,
            Some(path) => {
                let mut options = std::fs::OpenOptions::new();
                options.create(true).append(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    options.mode(0o600);
                }
                let file = options.open(path).map_err(|e| {
                    ServiceError::Validation(format!(
                        "cannot open the audit log file {}: {e}",
                        path.display()
                    ))
                })?;
                Some((path.to_path_buf(), Mutex::new(file)))
            }
        };
        Ok(AuditLog { store, file })
    }

    /// Records one action of `actor` on `target`.
    pub async fn record(
        &self,
        actor: &Actor,
        action: &str,
        target: AuditTarget,
        revisions: (Option<i64>, Option<i64>),
        mut details: Value,
    ) {
        if let (Some(agent), Value::Object(map)) = (&actor.agent, &mut details) {
            map.entry("actorAgent")
                .or_insert_with(|| Value::String(agent.clone()));
        }
        if actor.organization().is_some() && details.is_null() {
            details = json!({});
        }
        if let (Some(org), Value::Object(map)) = (actor.organization(), &mut details) {
            map.entry("actorOrganization")
                .or_insert_with(|| Value::String(org.to_owned()));
        }
        let mut entry = AuditRecord {
            id: 0,
            at: Utc::now(),
            actor: actor.person().to_owned(),
            actor_kind: actor.kind.to_string(),
            action: action.to_owned(),
            target_type: target.kind.to_owned(),
            target_id: target.id,
            target_name: target.name,
            before_revision: revisions.0,
            after_revision: revisions.1,
            request_id: actor.request_id.clone(),
            details,
        };
        match self.store.insert_audit(&entry).await {
            Ok(id) => entry.id = id,
            Err(e) => tracing::error!(action, error = %e, "could not write the audit log"),
        }
        if let Some((path, file)) = &self.file {
            let mut line = view(&entry).to_string();
            line.push('\n');
            let mut file = file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Err(e) = file.write_all(line.as_bytes()) {
                tracing::error!(path = %path.display(), error = %e, "could not append to the audit log file");
            }
        }
    }

    /// Entries, newest first.
    pub async fn list(&self, query: &AuditQuery) -> Result<Vec<Value>, ServiceError> {
        let entries = self.store.list_audit(query).await?;
        Ok(entries.iter().map(view).collect())
    }
}

/// An entry as the API, the CLI and the JSONL file show it.
pub fn view(entry: &AuditRecord) -> Value {
    json!({
        "id": entry.id,
        "at": entry.at,
        "actor": entry.actor,
        "actorKind": entry.actor_kind,
        "action": entry.action,
        "targetType": entry.target_type,
        "targetId": entry.target_id,
        "targetName": entry.target_name,
        "beforeRevision": entry.before_revision,
        "afterRevision": entry.after_revision,
        "requestId": entry.request_id,
        "details": entry.details,
    })
}
