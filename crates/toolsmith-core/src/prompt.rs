//! Prompts made at runtime (issue 40): reusable instructions with arguments, stored, versioned
//! and owned like tools ([`PromptRecord`], every revision kept as a [`PromptVersionRecord`]).
//! A prompt's messages are templates rendered from its arguments (the rendering, and every
//! rule a definition must follow, live in the service). Plain data.
//!
//! A prompt runs nothing: getting one renders text from the caller's own arguments and hands
//! the messages to the caller's client, which decides what to send to its model.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::record::CreatedBy;

/// What a prompt is: everything its author writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptDefinition {
    /// The name people read (the `name` is the prompt's handle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for (shown in a client's prompt menu).
    #[serde(default)]
    pub description: String,
    /// The arguments it takes, in order.
    #[serde(default)]
    pub arguments: Vec<PromptArgumentSpec>,
    /// The messages it renders to, in order.
    pub messages: Vec<PromptMessageSpec>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptArgumentSpec {
    /// Its name in the templates (`{{ name }}`): letters, digits and `_`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    /// Values offered by `completion/complete` (filtered by what the user typed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptRole {
    User,
    Assistant,
}

/// One message of a prompt: a role and one content block (its text fields are templates).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptMessageSpec {
    pub role: PromptRole,
    pub content: PromptContent,
}

/// A message's content, in MCP's content-block shapes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum PromptContent {
    /// Text; a template.
    Text { text: String },
    /// An image, base64 (not a template).
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64 (not a template).
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource: its `uri` and `text` are templates, a `blob` is base64.
    Resource { resource: PromptResource },
}

/// The resource a message embeds: text or a blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptResource {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// A stored prompt: its definition, owned by one user (and, when `agent` is set, seen only by
/// that agent of the user), at a revision (each change of the definition is one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptRecord {
    pub id: String,
    pub owner: String,
    /// The agent identity that alone sees it; `None`: the user and all their agents.
    pub agent: Option<String>,
    /// Unique per owner; the naming rule of tools.
    pub name: String,
    pub revision: i64,
    /// A disabled prompt is kept but not listed or served over MCP.
    pub enabled: bool,
    /// Who wrote the current revision: a person, or a model.
    pub created_by: CreatedBy,
    pub definition: PromptDefinition,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl PromptRecord {
    /// Whether a caller acting as `agent` (`None`: the person) sees it.
    pub fn is_visible_to(&self, agent: Option<&str>) -> bool {
        self.agent
            .as_deref()
            .is_none_or(|scope| agent == Some(scope))
    }
}

/// One revision of a prompt's definition, as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersionRecord {
    pub prompt_id: String,
    pub revision: i64,
    pub created_by: CreatedBy,
    pub definition: PromptDefinition,
    pub created_at: DateTime<Utc>,
}

/// What the store's `update_prompt` found (a revision-checked change of a prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptUpdate {
    Updated,
    /// No prompt of that id belongs to the owner.
    NotFound,
    /// The stored revision is not the one before the new one.
    Conflict {
        actual: i64,
    },
    /// Another prompt of the owner has the new name.
    NameTaken,
}
