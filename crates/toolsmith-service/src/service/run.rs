//! Running tools: any visible tool through the whole pipeline. Code run once and dry runs are
//! calls through the same pipeline too ([`super::one_off`]).

use serde_json::Value;
use toolsmith_core::{ToolContext, ToolResult};

use super::ToolService;

impl ToolService {
    /// Runs any tool the actor can see, through the whole pipeline.
    pub async fn execute(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        self.pipeline.execute_value(name, args, ctx).await
    }
}
