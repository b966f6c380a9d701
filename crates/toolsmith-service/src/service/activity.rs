//! What a person watching the server reads besides the tools themselves: an owner's recent
//! executions (filtered by tool, status, calling agent and source: custom, built-in or bridged) and a cheap change signal over every stored tool,
//! which the web UI polls to refresh within a second or two of a change made elsewhere.

use toolsmith_core::{ExecutionRecord, ExecutionSource, ExecutionStatus, ToolOrigin};

use super::ToolService;
use crate::error::ServiceError;
use crate::input::{Actor, ToolRef};

/// The most executions one read returns.
pub const MAX_EXECUTIONS: u32 = 1000;

impl ToolService {
    /// The actor's most recent executions, newest first: at most `limit` (capped at
    /// [`MAX_EXECUTIONS`]), of one tool if `tool` is given (a custom tool by name or id, or a
    /// built-in or bridged tool by name), of one status if `status` is, made by one agent if
    /// `caller` is (the agent id the calls named), of one source if `source` is.
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
        source: Option<ExecutionSource>,
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
            Some(tool) => Some(self.recorded_tool_id(actor, tool).await?),
            None => None,
        };
        let read = if status.is_some() {
            MAX_EXECUTIONS
        } else {
            limit
        };
        let mut rows = self
            .store
            .list_executions(&actor.user_id, tool_id.as_deref(), caller, source, read)
            .await?;
        if let Some(status) = status {
            rows.retain(|r| r.status == status);
        }
        rows.truncate(limit as usize);
        Ok(rows)
    }

    /// The id a tool's calls are recorded under: a custom tool's id, or the name of a built-in
    /// or bridged tool (when the actor has no custom tool of that name).
    async fn recorded_tool_id(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<String, ServiceError> {
        match self.get(actor, tool).await {
            Ok(found) => Ok(found.id),
            Err(ServiceError::NotFound(missing)) => match tool {
                ToolRef::Name(name) => match self.registry.get(&actor.user_id, name) {
                    Some(found) if !matches!(found.origin, ToolOrigin::Custom { .. }) => {
                        Ok(name.clone())
                    }
                    _ => Err(ServiceError::NotFound(missing)),
                },
                ToolRef::Id(_) => Err(ServiceError::NotFound(missing)),
            },
            Err(other) => Err(other),
        }
    }

    /// A value that changes whenever any stored custom tool is created, changed or deleted
    /// (by this process or another one on the same store). It says nothing else: callers
    /// re-read what they show when it moves.
    pub async fn tools_change_token(&self) -> Result<String, ServiceError> {
        Ok(self.store.tools_fingerprint().await?)
    }
}
