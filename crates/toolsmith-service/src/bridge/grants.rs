//! Grants: which user or agent may use which bridged server's tools, once the operator switches
//! them on (`mcp_grants = true`). Then a bridged tool is visible and callable for a caller only
//! if a grant of its server to the caller's user, or to the agent its token names, allows the
//! tool, and no such grant denies it (deny wins). No grant: no access. Admins (and the CLI, the
//! local operator) are not bound by grants. An agent named by the caller itself (the
//! `X-Toolsmith-Agent` header) only narrows: its grants can deny, never allow.
//!
//! The grants live in the store; [`Grants`] holds them in memory for the policy gate (one read
//! per write of this process, and one per change-feed poll for the writes of others), so a check
//! costs no store read. The operations (grants, access requests and their decisions) are here
//! too, on [`ToolService`].

use std::sync::{Arc, RwLock};

use chrono::Utc;
use serde_json::json;
use toolsmith_core::ToolContext;
use toolsmith_core::mcp_bridge::{
    AccessRequestRecord, AccessRequestStatus, GrantSubject, McpGrantRecord,
};

use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::{Actor, ToolService};

/// The grants in force.
#[derive(Debug, Default)]
pub struct Grants {
    on: bool,
    table: RwLock<Arc<Vec<McpGrantRecord>>>,
}

impl Grants {
    pub fn new(on: bool) -> Grants {
        Grants {
            on,
            table: RwLock::default(),
        }
    }

    /// Whether grants are switched on.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Installs the stored grants.
    pub fn replace(&self, grants: Vec<McpGrantRecord>) {
        *self
            .table
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(grants);
    }

    fn table(&self) -> Arc<Vec<McpGrantRecord>> {
        self.table
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// `Err(reason)` when grants are on and the caller of `ctx` may not use the upstream tool
    /// `tool` of `server`.
    pub fn check(&self, ctx: &ToolContext, server: &str, tool: &str) -> Result<(), String> {
        if !self.on || ctx.admin {
            return Ok(());
        }
        let table = self.table();
        let mine = |g: &&McpGrantRecord| {
            g.server == server
                && match g.subject_kind {
                    GrantSubject::User => g.subject == ctx.user_id,
                    GrantSubject::Agent => ctx.agent_id.as_deref() == Some(g.subject.as_str()),
                }
        };
        let applicable: Vec<&McpGrantRecord> = table.iter().filter(mine).collect();
        if let Some(denying) = applicable.iter().find(|g| g.enabled && g.denies(tool)) {
            return Err(format!(
                "the {} grant of MCP server '{server}' to '{}' denies '{tool}'",
                denying.subject_kind.as_str(),
                denying.subject
            ));
        }
        let allowed = applicable.iter().any(|g| {
            g.allows(tool) && (g.subject_kind == GrantSubject::User || !ctx.agent_chosen_by_caller)
        });
        if allowed {
            return Ok(());
        }
        let who = match &ctx.agent_id {
            Some(agent) => format!("user '{}' (agent '{agent}')", ctx.user_id),
            None => format!("user '{}'", ctx.user_id),
        };
        Err(format!(
            "no grant gives {who} the tool '{tool}' of MCP server '{server}'; ask an admin for \
             it (POST /api/v1/mcp-access-requests or `toolsmith mcp-grants request`)"
        ))
    }

    /// `Err(reason)` when grants are on and the caller of `ctx` has no enabled grant of
    /// `server` at all: what a server offers besides its tools (its prompts, resources and
    /// completions) is seen with any such grant (`toolAllow` and `toolDeny` name tools only).
    pub fn check_server(&self, ctx: &ToolContext, server: &str) -> Result<(), String> {
        if !self.on || ctx.admin {
            return Ok(());
        }
        let granted = self.table().iter().any(|g| {
            g.server == server
                && g.enabled
                && match g.subject_kind {
                    GrantSubject::User => g.subject == ctx.user_id,
                    GrantSubject::Agent => {
                        !ctx.agent_chosen_by_caller
                            && ctx.agent_id.as_deref() == Some(g.subject.as_str())
                    }
                }
        });
        if granted {
            return Ok(());
        }
        Err(format!(
            "no grant gives user '{}' the MCP server '{server}'; ask an admin for it \
             (POST /api/v1/mcp-access-requests or `toolsmith mcp-grants request`)",
            ctx.user_id
        ))
    }
}

/// A new grant or its replacement (by server and subject).
#[derive(Debug, Clone)]
pub struct GrantInput {
    pub server: String,
    pub subject_kind: GrantSubject,
    pub subject: String,
    pub enabled: bool,
    pub tool_allow: Vec<String>,
    pub tool_deny: Vec<String>,
}

/// A request for access.
#[derive(Debug, Clone)]
pub struct AccessRequestInput {
    pub server: String,
    pub subject_kind: GrantSubject,
    pub subject: String,
    pub tools: Vec<String>,
    pub reason: String,
}

fn plain(field: &str, value: &str, max: usize) -> Result<(), ServiceError> {
    let ok = !value.is_empty()
        && value.chars().count() <= max
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '@'));
    if ok {
        Ok(())
    } else {
        Err(ServiceError::Validation(format!(
            "`{field}` must be 1 to {max} letters, digits or _ - . : @"
        )))
    }
}

fn tool_names(field: &str, tools: &[String]) -> Result<(), ServiceError> {
    if tools.len() > 1000 {
        return Err(ServiceError::Validation(format!(
            "`{field}` may name at most 1000 tools"
        )));
    }
    tools.iter().try_for_each(|t| plain(field, t, 128))
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

impl ToolService {
    /// Whether the server `name` exists (configured or registered).
    fn known_server(&self, name: &str) -> Result<(), ServiceError> {
        self.mcp_server(name).map(|_| ())
    }

    /// Reads the stored grants into the gate (after a write; the change feed on each poll).
    pub async fn refresh_mcp_grants(&self) -> Result<(), ServiceError> {
        let grants = self.store.list_mcp_grants().await?;
        self.policy.grants().replace(grants);
        Ok(())
    }

    /// Every grant.
    pub async fn mcp_grants(&self) -> Result<Vec<McpGrantRecord>, ServiceError> {
        Ok(self.store.list_mcp_grants().await?)
    }

    /// Creates or replaces the grant of a server to a user or agent (admin).
    pub async fn put_mcp_grant(
        &self,
        actor: &Actor,
        input: GrantInput,
    ) -> Result<McpGrantRecord, ServiceError> {
        self.known_server(&input.server)?;
        plain("subject", &input.subject, 128)?;
        tool_names("toolAllow", &input.tool_allow)?;
        tool_names("toolDeny", &input.tool_deny)?;
        let now = Utc::now();
        let grant = McpGrantRecord {
            id: new_id("grant"),
            server: input.server,
            subject_kind: input.subject_kind,
            subject: input.subject,
            enabled: input.enabled,
            tool_allow: input.tool_allow,
            tool_deny: input.tool_deny,
            created_at: now,
            updated_at: now,
            updated_by: actor.user_id.clone(),
        };
        let stored = self.store.put_mcp_grant(&grant).await?;
        self.refresh_mcp_grants().await?;
        self.registry.touch_all();
        self.audit
            .record(
                actor,
                "mcp_grant.put",
                AuditTarget::new("mcp_grant", stored.id.clone(), Some(stored.server.clone())),
                (None, None),
                json!({
                    "subjectKind": stored.subject_kind.as_str(), "subject": stored.subject,
                    "enabled": stored.enabled, "toolAllow": stored.tool_allow,
                    "toolDeny": stored.tool_deny,
                }),
            )
            .await;
        Ok(stored)
    }

    /// Removes a grant (admin); whether there was one.
    pub async fn delete_mcp_grant(&self, actor: &Actor, id: &str) -> Result<(), ServiceError> {
        if !self.store.delete_mcp_grant(id).await? {
            return Err(ServiceError::NotFound(format!("no MCP grant with id {id}")));
        }
        self.refresh_mcp_grants().await?;
        self.registry.touch_all();
        self.audit
            .record(
                actor,
                "mcp_grant.delete",
                AuditTarget::new("mcp_grant", id.to_owned(), None),
                (None, None),
                json!({}),
            )
            .await;
        Ok(())
    }

    /// Files a request for access by `actor` (for their own user, or an agent).
    pub async fn request_mcp_access(
        &self,
        actor: &Actor,
        input: AccessRequestInput,
    ) -> Result<AccessRequestRecord, ServiceError> {
        self.known_server(&input.server)?;
        plain("subject", &input.subject, 128)?;
        tool_names("tools", &input.tools)?;
        if input.reason.chars().count() > 2000 {
            return Err(ServiceError::Validation(
                "`reason` may be at most 2000 characters".to_owned(),
            ));
        }
        if input.subject_kind == GrantSubject::User && input.subject != actor.user_id {
            return Err(ServiceError::Forbidden(format!(
                "a request for user access is for your own user ('{}'); an admin grants others directly",
                actor.user_id
            )));
        }
        if let (GrantSubject::Agent, Some(agent)) = (input.subject_kind, &actor.agent)
            && *agent != input.subject
        {
            return Err(ServiceError::Forbidden(format!(
                "acting as agent '{agent}', you may ask only for that agent"
            )));
        }
        let request = AccessRequestRecord {
            id: new_id("mcpreq"),
            server: input.server,
            subject_kind: input.subject_kind,
            subject: input.subject,
            tools: input.tools,
            reason: input.reason,
            status: AccessRequestStatus::Pending,
            requested_by: actor.user_id.clone(),
            created_at: Utc::now(),
            decided_by: None,
            decided_at: None,
            grant_id: None,
        };
        self.store.create_access_request(&request).await?;
        self.audit
            .record(
                actor,
                "mcp_access.request",
                AuditTarget::new("mcp_access_request", request.id.clone(), Some(request.server.clone())),
                (None, None),
                json!({"subjectKind": request.subject_kind.as_str(), "subject": request.subject, "tools": request.tools}),
            )
            .await;
        Ok(request)
    }

    /// Requests, newest first (optionally of one status); `mine_only` keeps those `actor` filed.
    pub async fn mcp_access_requests(
        &self,
        actor: &Actor,
        status: Option<AccessRequestStatus>,
        mine_only: bool,
    ) -> Result<Vec<AccessRequestRecord>, ServiceError> {
        let mut all = self.store.list_access_requests(status).await?;
        if mine_only {
            all.retain(|r| r.requested_by == actor.user_id);
        }
        Ok(all)
    }

    /// Approves or rejects a pending request (admin); an approval creates or widens the grant
    /// in the same transaction.
    pub async fn decide_mcp_access(
        &self,
        actor: &Actor,
        id: &str,
        approve: bool,
    ) -> Result<AccessRequestRecord, ServiceError> {
        let now = Utc::now();
        let template = McpGrantRecord {
            id: new_id("grant"),
            server: String::new(),
            subject_kind: GrantSubject::User,
            subject: String::new(),
            enabled: false,
            tool_allow: Vec::new(),
            tool_deny: Vec::new(),
            created_at: now,
            updated_at: now,
            updated_by: actor.user_id.clone(),
        };
        let decided = self
            .store
            .decide_access_request(id, approve, &actor.user_id, now, &template)
            .await?
            .ok_or_else(|| {
                ServiceError::NotFound(format!("no pending MCP access request with id {id}"))
            })?;
        if approve {
            self.refresh_mcp_grants().await?;
            self.registry.touch_all();
        }
        self.audit
            .record(
                actor,
                if approve { "mcp_access.approve" } else { "mcp_access.reject" },
                AuditTarget::new("mcp_access_request", decided.id.clone(), Some(decided.server.clone())),
                (None, None),
                json!({"subjectKind": decided.subject_kind.as_str(), "subject": decided.subject, "grant": decided.grant_id}),
            )
            .await;
        Ok(decided)
    }
}
