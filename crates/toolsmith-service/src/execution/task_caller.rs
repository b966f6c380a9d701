//! How scheduled tasks reach this server (`toolsmith_builtins::schedule::TaskCaller`): a
//! task's tool is checked and called as its owner (and agent) through the service's pipeline,
//! so policy, approval, rate limits, scrubbing, usage and audit hold for a run exactly as for
//! a call the owner makes.

use std::sync::{OnceLock, Weak};

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{ErrorKind, ToolContext, ToolResult};

use crate::ToolService;

/// Built before the service it serves; [`ServiceTaskCaller::bind`] gives it the service.
#[derive(Default)]
pub(crate) struct ServiceTaskCaller {
    service: OnceLock<Weak<ToolService>>,
}

impl std::fmt::Debug for ServiceTaskCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceTaskCaller")
    }
}

impl ServiceTaskCaller {
    pub(crate) fn bind(&self, service: &std::sync::Arc<ToolService>) {
        let _ = self.service.set(std::sync::Arc::downgrade(service));
    }

    fn service(&self) -> Option<std::sync::Arc<ToolService>> {
        self.service.get().and_then(Weak::upgrade)
    }
}

/// The context of a task's call: [`context`], held to the agent definition's tool policy
/// when the task acts as one of Toolsmith's agents (a run made it), as the run's own calls
/// are. A task of an agent definition that is gone runs nothing.
async fn scoped_context(
    service: &ToolService,
    owner: &str,
    agent: Option<&str>,
) -> Result<ToolContext, String> {
    let mut ctx = context(owner, agent);
    let Some(agent) = agent.filter(|agent| crate::agents::is_definition_id(agent)) else {
        return Ok(ctx);
    };
    let record = service
        .store()
        .get_agent(owner, agent)
        .await
        .map_err(|e| format!("the agent '{agent}' cannot be read now ({e}); try again"))?
        .filter(|record| record.id == agent)
        .ok_or_else(|| {
            format!(
                "this task acts as the agent '{agent}', which is no longer defined: its \
                 tasks run nothing; delete the task"
            )
        })?;
    let scope = service
        .agent_scope(&record, &ToolContext::new(owner))
        .map_err(|e| e.to_string())?;
    ctx.narrowing = Some(scope);
    Ok(ctx)
}

fn context(owner: &str, agent: Option<&str>) -> ToolContext {
    let mut ctx = ToolContext::new(owner);
    ctx.agent_id = agent.map(str::to_owned);
    // Kept by every nested call: nothing a run calls may make, change or trigger tasks.
    ctx.scheduled_run = true;
    // Nobody to log to or ask while a task runs: sampling and elicitation say where they work.
    ctx.client = Some(toolsmith_core::Client::absent(
        toolsmith_core::Door::Scheduled,
    ));
    ctx
}

#[async_trait]
impl toolsmith_builtins::schedule::TaskCaller for ServiceTaskCaller {
    async fn check(&self, tool: &str, owner: &str, agent: Option<&str>) -> Result<(), String> {
        let Some(service) = self.service() else {
            return Err("the server is shutting down; try again".to_owned());
        };
        let shown: String = tool.chars().take(100).collect();
        match service.registry.get(owner, tool) {
            None if service.registry.is_hidden_builtin(tool) => {
                Err(toolsmith_builtins::groups::disabled_message(tool))
            }
            None => Err(format!(
                "there is no tool '{shown}' you can call: find the tool to schedule with \
                 search_tools"
            )),
            Some(found) => {
                let ctx = scoped_context(&service, owner, agent).await?;
                match service.policy().check(&ctx, &found) {
                    Ok(()) if found.is_visible_to(agent) => Ok(()),
                    Ok(()) => Err(format!(
                        "you may not call '{shown}', so a task cannot either: schedule a tool \
                         you can call"
                    )),
                    Err(reason) => Err(format!(
                        "you may not call '{shown}' ({reason}), so a task cannot either: \
                         schedule a tool you can call"
                    )),
                }
            }
        }
    }

    async fn call(&self, tool: &str, args: Value, owner: &str, agent: Option<&str>) -> ToolResult {
        let Some(service) = self.service() else {
            return ToolResult::error(ErrorKind::Internal, "the server is shutting down");
        };
        if service.registry.get(owner, tool).is_none() && service.registry.is_hidden_builtin(tool) {
            // The history says which group, and how to switch it back on.
            return ToolResult::error(
                ErrorKind::NotFound,
                toolsmith_builtins::groups::disabled_message(tool),
            );
        }
        match scoped_context(&service, owner, agent).await {
            Ok(ctx) => service.execute(tool, args, ctx).await,
            Err(why) => ToolResult::error(ErrorKind::Denied, why),
        }
    }

    async fn agent_has_token(&self, owner: &str, agent: &str) -> Result<bool, String> {
        let Some(service) = self.service() else {
            return Err("the server is shutting down".to_owned());
        };
        let tokens = service.list_tokens().await.map_err(|e| e.to_string())?;
        Ok(tokens
            .iter()
            .any(|t| t.user_id == owner && t.agent_id.as_deref() == Some(agent)))
    }

    fn scheduling_enabled(&self) -> bool {
        // The group's tools are hidden exactly while it is off.
        self.service()
            .is_some_and(|service| !service.registry.is_hidden_builtin("create_scheduled_task"))
    }
}
