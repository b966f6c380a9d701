//! The code tools' way into this server's sandboxes (`toolsmith_builtins::exec::CodeHost`):
//! the command sandbox, probed once per process ([`CommandRuntime`], shared with command
//! tools), and JavaScript run in the JS sandbox as a JS tool of the caller with no
//! permissions — the engine, limits and checks of every JS tool, inside the pipeline call of
//! `execute_javascript` (so its policy, approval, limits and scrubbing hold).

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_command::CommandSandbox;
use toolsmith_core::{ErrorKind, PermissionSet, ToolContext, ToolExecutor, ToolResult};

use super::command_tool::CommandRuntime;
use crate::ToolService;

/// Built before the service it serves; [`ServiceCodeHost::bind`] gives it the service.
pub(crate) struct ServiceCodeHost {
    commands: Arc<CommandRuntime>,
    service: OnceLock<Weak<ToolService>>,
}

impl std::fmt::Debug for ServiceCodeHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceCodeHost")
    }
}

impl ServiceCodeHost {
    pub(crate) fn new(commands: Arc<CommandRuntime>) -> Self {
        ServiceCodeHost {
            commands,
            service: OnceLock::new(),
        }
    }

    pub(crate) fn bind(&self, service: &Arc<ToolService>) {
        let _ = self.service.set(Arc::downgrade(service));
    }
}

#[async_trait]
impl toolsmith_builtins::exec::CodeHost for ServiceCodeHost {
    async fn command_sandbox(&self) -> Result<Arc<CommandSandbox>, String> {
        self.commands.sandbox().await
    }

    async fn run_js(
        &self,
        code: &str,
        args: Value,
        ctx: &ToolContext,
        timeout: Duration,
    ) -> ToolResult {
        let Some(service) = self.service.get().and_then(Weak::upgrade) else {
            return ToolResult::error(
                ErrorKind::Internal,
                "the server is shutting down; try again",
            );
        };
        if let Err(e) = service.check_js_code(code) {
            return ToolResult::error(ErrorKind::InvalidArguments, e.to_string());
        }
        let mut executor = service.js_executor_with_config(
            "execute_javascript",
            code.into(),
            PermissionSet::new(),
            ctx.user_id.clone(),
            Vec::new(),
        );
        executor.limits.wall_time = executor.limits.wall_time.min(timeout);
        executor.execute(args, ctx).await
    }
}
