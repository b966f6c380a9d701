//! The caller's scheduled tasks outside tool calls (REST): [`TaskApi`]'s operations with the
//! server's record store and task caller, their answers as [`ServiceError`]s.

use serde_json::Value;
use toolsmith_builtins::schedule::api::{TaskApi, TaskApiError, TaskOp, every_agents_tasks};
use toolsmith_core::ToolContext;
use toolsmith_core::data::RecordScope;

use super::ToolService;
use super::data_api::service_error;
use crate::ServiceError;

impl ToolService {
    /// Runs `op` on the scheduled tasks of `ctx`'s user (and agent); the reply is what the
    /// scheduler's tool replies.
    pub async fn scheduled_task_op(
        &self,
        ctx: &ToolContext,
        op: TaskOp<'_>,
        body: &Value,
    ) -> Result<Value, ServiceError> {
        let (Some(records), Some(caller)) =
            (self.builtins.data.clone(), self.builtins.tasks.clone())
        else {
            return Err(ServiceError::InvalidState(
                "this server keeps no scheduled tasks: it was started without a record store"
                    .to_owned(),
            ));
        };
        let scope = RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref());
        TaskApi::new(records, caller)
            .run(scope, ctx, op, body, chrono::Utc::now())
            .await
            .map_err(task_api_error)
    }

    /// The scheduled tasks of `owner` made as any of its agents (or as none), each with its
    /// `agent`: a person's view of their own and their agents' automation, and an admin's of
    /// any user's. `args` are `list_scheduled_tasks`'s (`status`, `limit`, `offset`).
    pub async fn every_agents_scheduled_tasks(
        &self,
        owner: &str,
        args: &Value,
    ) -> Result<Value, ServiceError> {
        let tasks = self
            .store
            .owner_collection_records(owner, toolsmith_builtins::schedule::COLLECTION, 1000, 0)
            .await?;
        every_agents_tasks(&tasks, args).map_err(task_api_error)
    }
}

fn task_api_error(e: TaskApiError) -> ServiceError {
    match e {
        TaskApiError::NotFound(m) => ServiceError::NotFound(m),
        TaskApiError::Off(m) => ServiceError::InvalidState(m),
        TaskApiError::Fail(fail) => service_error(fail),
    }
}
