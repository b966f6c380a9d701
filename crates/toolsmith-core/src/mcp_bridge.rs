//! The stored records of the MCP bridge: upstream servers registered at run time (REST, CLI),
//! the grants that say which user or agent may use which server's tools, and the requests for
//! access an admin decides. Plain data; the rules live in the service.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An upstream MCP server registered through REST or the CLI (those of the configuration file
/// are not stored). `config` is the service's server configuration as JSON: secrets in it are
/// references to the Config Center, never values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRecord {
    pub name: String,
    /// The user who registered it: Config Center references in its `env` are read from this
    /// user's Config Center.
    pub owner: String,
    pub config: Value,
    /// 1 at creation, + 1 on every update.
    pub revision: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub updated_by: String,
}

/// Who a grant or a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantSubject {
    User,
    Agent,
}

impl GrantSubject {
    pub fn as_str(self) -> &'static str {
        match self {
            GrantSubject::User => "user",
            GrantSubject::Agent => "agent",
        }
    }

    pub fn parse(text: &str) -> Option<GrantSubject> {
        match text {
            "user" => Some(GrantSubject::User),
            "agent" => Some(GrantSubject::Agent),
            _ => None,
        }
    }
}

/// Access of one user or agent to one server's tools. Deny wins over allow; an empty
/// `tool_allow` allows every tool of the server. Tool names are the upstream's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpGrantRecord {
    pub id: String,
    pub server: String,
    pub subject_kind: GrantSubject,
    pub subject: String,
    pub enabled: bool,
    pub tool_allow: Vec<String>,
    pub tool_deny: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub updated_by: String,
}

impl McpGrantRecord {
    /// Whether this grant lets its subject use the upstream tool `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        self.enabled
            && !self.denies(tool)
            && (self.tool_allow.is_empty() || self.tool_allow.iter().any(|t| t == tool))
    }

    /// Whether this grant names `tool` in its deny list (deny wins over any other grant).
    pub fn denies(&self, tool: &str) -> bool {
        self.tool_deny.iter().any(|t| t == tool)
    }

    /// The grant after an approved request for `tools` (empty: the whole server): enabled,
    /// the requested tools allowed and no longer denied. A grant that allowed everything keeps
    /// doing so; a request for everything allows everything.
    pub fn widened(mut self, tools: &[String], by: &str, now: DateTime<Utc>) -> McpGrantRecord {
        if tools.is_empty() {
            self.tool_allow.clear();
            self.tool_deny.clear();
        } else {
            self.tool_deny.retain(|t| !tools.contains(t));
            if !self.enabled || !self.tool_allow.is_empty() {
                if !self.enabled {
                    self.tool_allow.clear();
                }
                for tool in tools {
                    if !self.tool_allow.contains(tool) {
                        self.tool_allow.push(tool.clone());
                    }
                }
            }
        }
        self.enabled = true;
        self.updated_at = now;
        self.updated_by = by.to_owned();
        self
    }
}

/// Where a request for access stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessRequestStatus {
    Pending,
    Approved,
    Rejected,
}

impl AccessRequestStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AccessRequestStatus::Pending => "pending",
            AccessRequestStatus::Approved => "approved",
            AccessRequestStatus::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<AccessRequestStatus> {
        match text {
            "pending" => Some(AccessRequestStatus::Pending),
            "approved" => Some(AccessRequestStatus::Approved),
            "rejected" => Some(AccessRequestStatus::Rejected),
            _ => None,
        }
    }
}

/// A request by a user (for themselves or one of their agents) to use a server's tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessRequestRecord {
    pub id: String,
    pub server: String,
    pub subject_kind: GrantSubject,
    pub subject: String,
    /// The upstream tools asked for; empty: the whole server.
    pub tools: Vec<String>,
    pub reason: String,
    pub status: AccessRequestStatus,
    pub requested_by: String,
    pub created_at: DateTime<Utc>,
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    /// The grant an approval created or widened.
    pub grant_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(enabled: bool, allow: &[&str], deny: &[&str]) -> McpGrantRecord {
        McpGrantRecord {
            id: "g".into(),
            server: "s".into(),
            subject_kind: GrantSubject::User,
            subject: "u".into(),
            enabled,
            tool_allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            tool_deny: deny.iter().map(|s| (*s).to_owned()).collect(),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            updated_by: "admin".into(),
        }
    }

    #[test]
    fn deny_wins_and_an_empty_allow_list_allows_all() {
        let g = grant(true, &[], &["wipe"]);
        assert!(g.allows("echo"));
        assert!(!g.allows("wipe"));
        let g = grant(true, &["echo", "wipe"], &["wipe"]);
        assert!(g.allows("echo") && !g.allows("wipe") && !g.allows("add"));
        assert!(!grant(false, &[], &[]).allows("echo"));
    }

    #[test]
    fn an_approved_request_widens_a_grant() {
        let now = Utc::now();
        let tools = vec!["wipe".to_owned()];
        // A denied tool is allowed after approval; the rest of an allow-all grant stays.
        let g = grant(true, &[], &["wipe", "die"]).widened(&tools, "a", now);
        assert!(g.allows("wipe") && g.allows("echo") && !g.allows("die"));
        // A narrow grant gains the tool; a disabled one is enabled for just the tool.
        let g = grant(true, &["echo"], &[]).widened(&tools, "a", now);
        assert!(g.allows("wipe") && g.allows("echo") && !g.allows("add"));
        let g = grant(false, &["echo"], &[]).widened(&tools, "a", now);
        assert!(g.allows("wipe") && !g.allows("echo"));
        // A request for the whole server opens it.
        let g = grant(true, &["echo"], &["wipe"]).widened(&[], "a", now);
        assert!(g.allows("wipe") && g.allows("add"));
    }
}
