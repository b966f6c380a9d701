//! What a person watching the server reads besides the tools themselves: an owner's recent
//! executions (filtered by tool, status and calling agent) and a cheap change signal over every stored tool,
//! which the web UI polls to refresh within a second or two of a change made elsewhere.

use toolsmith_core::{ExecutionRecord, ExecutionStatus};

use super::ToolService;
use crate::error::ServiceError;
use crate::input::{Actor, ToolRef};

/// The most executions one read returns.
pub const MAX_EXECUTIONS: u32 = 1000;

impl ToolService {
    /// The actor's most recent executions, newest first: at most `limit` (capped at
    /// [`MAX_EXECUTIONS`]), of one tool if `tool` is given, of one status if `status` is, made
    /// by one agent if `caller` is (the agent id the calls named).
    ///
    /// With a status filter the newest [`MAX_EXECUTIONS`] rows are read and filtered, so an
    /// old execution of a rare status may be missed; the UI shows recent activity, nothing more.
    ///
    /// An actor acting as an agent sees only its own calls, never its user's other agents'
    /// (asking for another agent's finds none); a person sees every call of theirs.
    pub async fn executions(
        &self,
        actor: &Actor,
        tool: Option<&ToolRef>,
        status: Option<ExecutionStatus>,
        caller: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ExecutionRecord>, ServiceError> {
        let caller = match (actor.agent.as_deref(), caller) {
            (Some(own), Some(asked)) if asked != own => return Ok(Vec::new()),
            (Some(own), _) => Some(own),
            (None, asked) => asked,
        };
        self.flush_usage().await;
        let limit = limit.clamp(1, MAX_EXECUTIONS);
        let tool_id = match tool {
            Some(tool) => Some(self.get(actor, tool).await?.id),
            None => None,
        };
        let read = if status.is_some() {
            MAX_EXECUTIONS
        } else {
            limit
        };
        let mut rows = self
            .store
            .list_executions(&actor.user_id, tool_id.as_deref(), caller, read)
            .await?;
        if let Some(status) = status {
            rows.retain(|r| r.status == status);
        }
        rows.truncate(limit as usize);
        Ok(rows)
    }

    /// A value that changes whenever any stored custom tool is created, changed or deleted
    /// (by this process or another one on the same store). It says nothing else: callers
    /// re-read what they show when it moves.
    pub async fn tools_change_token(&self) -> Result<String, ServiceError> {
        Ok(self.store.tools_fingerprint().await?)
    }
}
