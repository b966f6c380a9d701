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
///
/// **The one rule for who made a tool:** a caller acting as an agent (an agent-bound token, or
/// the `X-Toolsmith-Agent` header) is a model, whatever the door — REST, MCP, the CLI, the UI.
/// [`Actor::for_caller`] and [`Actor::with_agent`] are the only ways to name an agent, and both
/// make the actor a model, so no face can build a person acting as an agent: tools such an
/// actor creates are `createdBy: llm` and it changes, decides and deletes tools under the
/// model's rules (`service/lifecycle.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub user_id: String,
    pub kind: CreatedBy,
    /// The request this action belongs to (REST `X-Request-Id`), for the audit log.
    pub request_id: Option<String>,
    /// The agent acting for the user, if one is named (an agent-bound token, or the
    /// `X-Toolsmith-Agent` header), for the audit log.
    pub agent: Option<String>,
    /// A person holding the `admin` scope: decides pending tools of any owner (by id). Never
    /// set for a model ([`Actor::with_admin`]).
    pub admin: bool,
    /// The person acting, when the actor acts in an organisation: `user_id` is then the
    /// organisation's id (the owner of what is read and written) and this the person's user id,
    /// whom the audit log names as the actor ([`Actor::person`]). `None` otherwise.
    pub member: Option<String>,
}

impl Actor {
    /// A person (UI, REST, CLI).
    pub fn user(user_id: impl Into<String>) -> Actor {
        Actor {
            user_id: user_id.into(),
            kind: CreatedBy::User,
            request_id: None,
            agent: None,
            admin: false,
            member: None,
        }
    }

    /// A model (MCP control-plane tools).
    pub fn llm(user_id: impl Into<String>) -> Actor {
        Actor {
            user_id: user_id.into(),
            kind: CreatedBy::Llm,
            request_id: None,
            agent: None,
            admin: false,
            member: None,
        }
    }

    /// The actor behind a caller's identity, for every face that takes people and agents
    /// alike (REST, the UI): a model when it acts as `agent`, a person otherwise.
    pub fn for_caller(user_id: impl Into<String>, agent: Option<String>) -> Actor {
        Actor::user(user_id).with_agent(agent)
    }

    /// This actor as an admin, if `admin` and it is a person (a model never is one).
    #[must_use]
    pub fn with_admin(mut self, admin: bool) -> Actor {
        self.admin = admin && !self.is_llm();
        self
    }

    /// This actor, acting within request `request_id`.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Actor {
        self.request_id = Some(request_id.into());
        self
    }

    /// This actor, acting as `agent` (if any). An actor acting as an agent is a model, and no
    /// admin: whoever holds the token, the agent is what acts.
    #[must_use]
    pub fn with_agent(mut self, agent: Option<String>) -> Actor {
        if agent.is_some() {
            self.kind = CreatedBy::Llm;
            self.admin = false;
        }
        self.agent = agent;
        self
    }

    /// This actor, acting in an organisation as the person `member` (if any; `user_id` is the
    /// organisation's id). Never an admin there: no one holds `admin` through an organisation.
    #[must_use]
    pub fn with_member(mut self, member: Option<String>) -> Actor {
        if member.is_some() {
            self.admin = false;
        }
        self.member = member;
        self
    }

    /// Who is behind this actor: the person acting in an organisation, the user otherwise. The
    /// audit log's actor and an approval's `decidedBy`.
    pub fn person(&self) -> &str {
        self.member.as_deref().unwrap_or(&self.user_id)
    }

    /// The organisation the actor acts in (its id), if any.
    pub fn organization(&self) -> Option<&str> {
        self.member.as_ref().map(|_| self.user_id.as_str())
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
    /// npm dependencies `[{name, version}]` (JS tools); `[]` removes them. Kept as
    /// `metadata.dependencies`.
    #[serde(default)]
    pub dependencies: Option<Vec<crate::packages::Dependency>>,
    /// Replaces the JSON Schema of the tool's structured content (kept as
    /// `metadata.outputSchema`; the rest of the metadata stays as it is).
    #[serde(default, alias = "output_schema")]
    pub output_schema: Option<Value>,
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
    /// npm dependencies `[{name, version}]` the code imports: resolved and installed (the
    /// same checks as a tool's) before the run.
    #[serde(default)]
    pub dependencies: Vec<crate::packages::Dependency>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_actor_acting_as_an_agent_is_a_model_and_no_admin() {
        let person = Actor::for_caller("alice", None).with_admin(true);
        assert_eq!((person.kind, person.admin), (CreatedBy::User, true));
        let agent = Actor::for_caller("alice", Some("bot".into())).with_admin(true);
        assert_eq!((agent.kind, agent.admin), (CreatedBy::Llm, false));
        let late = Actor::user("alice")
            .with_admin(true)
            .with_agent(Some("bot".into()));
        assert_eq!((late.kind, late.admin), (CreatedBy::Llm, false));
        assert!(!Actor::llm("alice").with_admin(true).admin);
    }

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
