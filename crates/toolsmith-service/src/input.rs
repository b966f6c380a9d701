//! Request shapes for lifecycle operations, as every interface hands them to the service.
//!
//! A new tool's definition reaches the service as [`CreateTool`], mapped from the one wire
//! shape every face reads (`toolsmith_server::definition::CreateToolBody`: REST, MCP's
//! `create_tool`, the CLI's tool files); `CreateTool`'s own `Deserialize` serves code that builds
//! one from JSON directly (tests, embedders). Field names accept the spec's camelCase and the
//! MCP tools' snake_case alike. Unknown fields are refused, so a misspelt field is an error
//! instead of being silently ignored.

use serde::Deserialize;
use serde_json::Value;
use toolsmith_core::{CreatedBy, Permission, ToolKind};

/// Who is acting: a user id and whether a person or a model is behind the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub user_id: String,
    pub kind: CreatedBy,
    /// The request this action belongs to (REST `X-Request-Id`), for the audit log.
    pub request_id: Option<String>,
    /// The agent acting for the user, if one is named (an agent-bound token, or the
    /// `X-Toolsmith-Agent` header), for the audit log.
    pub agent: Option<String>,
}

impl Actor {
    /// A person (UI, REST, CLI).
    pub fn user(user_id: impl Into<String>) -> Actor {
        Actor {
            user_id: user_id.into(),
            kind: CreatedBy::User,
            request_id: None,
            agent: None,
        }
    }

    /// A model (MCP control-plane tools).
    pub fn llm(user_id: impl Into<String>) -> Actor {
        Actor {
            user_id: user_id.into(),
            kind: CreatedBy::Llm,
            request_id: None,
            agent: None,
        }
    }

    /// This actor, acting within request `request_id`.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Actor {
        self.request_id = Some(request_id.into());
        self
    }

    /// This actor, acting as `agent` (if any).
    #[must_use]
    pub fn with_agent(mut self, agent: Option<String>) -> Actor {
        self.agent = agent;
        self
    }

    pub fn is_llm(&self) -> bool {
        self.kind == CreatedBy::Llm
    }
}

/// How a request names a tool: by id (`tool_<16 hex>`) or by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRef {
    Id(String),
    Name(String),
}

impl ToolRef {
    /// An id if the text looks like one, a name otherwise.
    pub fn parse(text: &str) -> ToolRef {
        if toolsmith_core::name::is_tool_id(text) {
            ToolRef::Id(text.to_owned())
        } else {
            ToolRef::Name(text.to_owned())
        }
    }
}

impl std::fmt::Display for ToolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolRef::Id(id) => write!(f, "with id {id}"),
            ToolRef::Name(name) => write!(f, "named '{name}'"),
        }
    }
}

/// A new custom tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTool {
    pub name: String,
    /// `js` (default), `command` or `http`: what `code` holds (see `kinds.rs`).
    #[serde(default)]
    pub kind: ToolKind,
    pub description: String,
    /// A JSON Schema object, or the same as a JSON string (as LLMs often send it).
    pub parameters: Value,
    pub code: String,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// Ignored for LLM-created tools, which always require approval.
    #[serde(default, alias = "requires_approval")]
    pub requires_approval: Option<bool>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// A partial update. Absent fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolPatch {
    /// If given, must equal the current name (renaming is explicit: use `new_name`).
    #[serde(default)]
    pub name: Option<String>,
    /// Renames the tool.
    #[serde(default, alias = "new_name")]
    pub new_name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Option<Value>,
    #[serde(default)]
    pub code: Option<String>,
    /// `""` clears the category.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub permissions: Option<Vec<Permission>>,
    #[serde(default, alias = "requires_approval")]
    pub requires_approval: Option<bool>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// Options of a delete.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// The LLM must confirm every delete.
    pub confirm: bool,
    pub expected_revision: Option<i64>,
}

/// Code to run once, without storing anything.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunCode {
    pub code: String,
    #[serde(default)]
    pub args: Option<Value>,
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// This run's wall-clock limit, 1 to 120,000 ms (dynamic-mcp's `timeoutMs`), capped by the
    /// server's `js_wall_time` (which applies without it).
    #[serde(default, alias = "timeout_ms")]
    pub timeout_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_refs() {
        assert_eq!(
            ToolRef::parse("tool_0123456789abcdef"),
            ToolRef::Id("tool_0123456789abcdef".into())
        );
        assert_eq!(
            ToolRef::parse("tool_thing"),
            ToolRef::Name("tool_thing".into())
        );
        assert_eq!(
            ToolRef::parse("word_frequency"),
            ToolRef::Name("word_frequency".into())
        );
    }

    #[test]
    fn unknown_fields_and_permissions_are_refused() {
        let bad = serde_json::from_value::<CreateTool>(serde_json::json!({
            "name": "a", "description": "d", "parameters": {"type": "object"}, "code": "return 1",
            "permisions": ["network"]
        }));
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("unknown field `permisions`")
        );
        let bad = serde_json::from_value::<CreateTool>(serde_json::json!({
            "name": "a", "description": "d", "parameters": {"type": "object"}, "code": "return 1",
            "permissions": ["root"]
        }));
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("unknown variant `root`")
        );
    }
}
