//! The semantic half of `delegate_search` (spec 001 §7's hybrid discovery): the cosine
//! similarity of the query's embedding and each target's, from the caller's user's Config
//! Center service `embeddings` — the ranking `search_tools` and memory `recall` share
//! ([`toolsmith_builtins::vectors::hybrid`]). Without that service, or when it fails, the
//! search is full text alone and says why.

use toolsmith_builtins::vectors::hybrid::{self, Similarity};
use toolsmith_core::ToolContext;
use toolsmith_core::agent::AgentRecord;
use toolsmith_core::delegation::AgentLinkRecord;

use crate::ToolService;

/// Characters of a target's instructions embedded.
const INSTRUCTIONS_CHARS: usize = 2000;

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
        let texts: Vec<String> = targets
            .iter()
            .map(|(agent, link)| target_text(agent, link))
            .collect();
        hybrid::similarity(&self.builtins, ctx, query, &texts, "delegate_search").await
    }
}
