//! HTTP tools by their own file format: import a spec-004 definition (YAML or JSON) as a tool
//! of kind `http`, and suggest the tools whose triggers match a user's message.

use serde::Serialize;
use toolsmith_core::{CustomToolRecord, ToolKind, ToolStatus};
use toolsmith_store::ToolQuery;

use super::ToolService;
use crate::error::ServiceError;
use crate::input::{Actor, CreateTool};

/// A tool whose triggers match a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    pub name: String,
    pub description: String,
    /// The triggers found in the message.
    pub matched: Vec<String>,
}

impl ToolService {
    /// Creates an `http` tool from a spec-004 definition; its name, description and category
    /// come from the definition.
    pub async fn import_http_tool(
        &self,
        actor: &Actor,
        text: &str,
    ) -> Result<CustomToolRecord, ServiceError> {
        let definition = crate::execution::kinds::http_definition(text)?;
        let input = CreateTool {
            name: definition.name.clone(),
            kind: ToolKind::Http,
            description: definition.description.clone(),
            parameters: serde_json::json!({"type": "object"}),
            code: text.to_owned(),
            category: None,
            tags: Vec::new(),
            permissions: Vec::new(),
            requires_approval: None,
            metadata: None,
        };
        self.create(actor, input).await
    }

    /// The actor's active HTTP tools whose triggers occur in `message` (case-insensitive
    /// phrase match), most matched triggers first.
    pub async fn suggest(
        &self,
        actor: &Actor,
        message: &str,
    ) -> Result<Vec<Suggestion>, ServiceError> {
        let mut query = ToolQuery::owner(actor.user_id.clone());
        query.status = Some(ToolStatus::Active);
        query.limit = 1000;
        let page = self.store().list_tools(&query).await?;
        let http: Vec<(CustomToolRecord, Vec<String>)> = page
            .tools
            .into_iter()
            .filter(|t| t.kind == ToolKind::Http)
            .filter_map(|t| {
                let triggers = toolsmith_httptool::parse_any(&t.code).ok()?.triggers;
                Some((t, triggers))
            })
            .collect();
        let ranked = toolsmith_httptool::rank_by_triggers(
            http.iter()
                .map(|(t, triggers)| (t.name.as_str(), triggers.as_slice())),
            message,
        );
        Ok(ranked
            .into_iter()
            .filter_map(|m| {
                let (tool, _) = http.iter().find(|(t, _)| t.name == m.name)?;
                Some(Suggestion {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                    matched: m.matched.iter().map(ToString::to_string).collect(),
                })
            })
            .collect())
    }
}
