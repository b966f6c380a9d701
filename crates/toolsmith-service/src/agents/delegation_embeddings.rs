//! The semantic half of `delegate_search` (spec 001 §7's hybrid discovery): the cosine
//! similarity of the query's embedding and each target's, from the caller's user's Config
//! Center service `embeddings` (the `vectorSearch` tools' client,
//! `toolsmith_builtins::vectors::embed`, through the egress guard). Without that service, or
//! when it fails, the search is full text alone and says why.

use toolsmith_builtins::vectors::embed;
use toolsmith_builtins::web::{Call, ToolError};
use toolsmith_core::ToolContext;
use toolsmith_core::agent::AgentRecord;
use toolsmith_core::delegation::AgentLinkRecord;

use crate::ToolService;

/// Targets embedded for one search (the others are found by full text only).
pub const MAX_EMBEDDED: usize = 256;
/// The similarity at which a target no word matches is still found.
pub const MIN_SIMILARITY: f64 = 0.5;
/// How much similarity counts against the full-text score (a name match weighs 3 a word).
pub const SIMILARITY_WEIGHT: f64 = 10.0;
/// Characters of a target's instructions embedded.
const INSTRUCTIONS_CHARS: usize = 2000;

/// What the embeddings gave a search: each target's similarity to the query (in the order of
/// the targets; `None` past [`MAX_EMBEDDED`]), or why there is none.
pub(crate) enum Similarity {
    Scores(Vec<Option<f64>>),
    Unavailable(String),
}

impl Similarity {
    pub(crate) fn of(&self, index: usize) -> Option<f64> {
        match self {
            Similarity::Scores(scores) => scores.get(index).copied().flatten(),
            Similarity::Unavailable(_) => None,
        }
    }
}

/// What is embedded of a target: its name, display name, link description and instructions.
fn target_text(agent: &AgentRecord, link: &AgentLinkRecord) -> String {
    let instructions: String = agent
        .definition
        .instructions
        .chars()
        .take(INSTRUCTIONS_CHARS)
        .collect();
    format!(
        "{} {}\n{}\n{instructions}",
        agent.name.replace('_', " "),
        agent.definition.display_name,
        link.description
    )
}

impl ToolService {
    /// The similarity of `query` to each of `targets`, by the caller's embeddings service.
    pub(crate) async fn target_similarity(
        &self,
        ctx: &ToolContext,
        query: &str,
        targets: &[(AgentRecord, AgentLinkRecord)],
    ) -> Similarity {
        let Some(client) = self.builtins.web.as_deref() else {
            return Similarity::Unavailable("this server reaches no outside service".to_owned());
        };
        let mut texts = vec![query.to_owned()];
        texts.extend(
            targets
                .iter()
                .take(MAX_EMBEDDED)
                .map(|(agent, link)| target_text(agent, link)),
        );
        let call = Call {
            client,
            env: &self.builtins,
            ctx,
            args: serde_json::Value::Null,
        };
        match embed::embed(&call, &texts).await {
            Ok(embeddings) => {
                let Some((first, rest)) = embeddings.vectors.split_first() else {
                    return Similarity::Unavailable(
                        "the embeddings service answered no embedding".to_owned(),
                    );
                };
                let mut scores: Vec<Option<f64>> =
                    rest.iter().map(|v| Some(embed::cosine(first, v))).collect();
                scores.resize(targets.len(), None);
                Similarity::Scores(scores)
            }
            Err(ToolError::NotConfigured(why)) => {
                Similarity::Unavailable(format!("full text only; for search by meaning too, {why}"))
            }
            Err(e) => {
                tracing::warn!(user = %ctx.user_id, "delegate_search's embeddings failed: {e}");
                Similarity::Unavailable(format!("full text only: {e}"))
            }
        }
    }
}
