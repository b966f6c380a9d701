//! How one call runs: parse arguments → look up the tool → apply the spec's tool max limits
//! ([`crate::tool_limits`]) → validate the arguments against its schema → middleware `before` hooks (in order) → executor → output cap → middleware `after`
//! hooks (in reverse order).
//!
//! Middleware is where policy, rate limits, approvals, scrubbing, usage recording and audit
//! plug in, so executors never need to know about them. A `before` hook may rewrite the
//! arguments or refuse the call with a result of its own; an `after` hook may rewrite the result.
//! Every hook sees the same [`Call`], and every call ends in a [`ToolResult`] — failures of any
//! stage are results with an [`ErrorKind`], never panics or Rust errors.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use futures::FutureExt;
use serde_json::{Map, Value};

use crate::model::{ErrorKind, ToolContext, ToolResult};
use crate::registry::{RegisteredTool, ToolRegistry};

/// One call on its way through the pipeline.
#[derive(Debug)]
pub struct Call {
    pub tool: Arc<RegisteredTool>,
    /// Validated arguments; `before` hooks may rewrite them.
    pub args: Value,
    pub ctx: ToolContext,
    /// What middleware holds for as long as the call runs (a concurrency permit, say). Dropped
    /// with the call, so it is released even when the caller goes away mid-call.
    pub held: Vec<Held>,
}

/// Something a middleware keeps alive until its call ends.
pub struct Held(Box<dyn std::any::Any + Send + Sync>);

impl Held {
    pub fn new(value: impl std::any::Any + Send + Sync) -> Held {
        Held(Box::new(value))
    }

    /// The value, if it is a `T` (for the middleware that put it there, in its `after` hook).
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held")
    }
}

/// A cross-cutting step around every execution.
#[async_trait]
pub trait Middleware: Send + Sync {
    /// A short name for logs and debugging.
    fn name(&self) -> &'static str;

    /// Runs before the executor. Return `Err(result)` to stop the call with that result
    /// (`after` hooks of the middleware that already ran still see it).
    async fn before(&self, _call: &mut Call) -> Result<(), ToolResult> {
        Ok(())
    }

    /// Runs after the executor (or after a refusal), in reverse order of `before`.
    async fn after(&self, _call: &Call, _result: &mut ToolResult) {}
}

/// Limits the pipeline itself enforces, whatever the executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineLimits {
    /// Largest serialized result content, in bytes (default 1 MB).
    pub max_output_bytes: usize,
    /// Deepest chain of nested `callTool` calls (default 4).
    pub max_call_depth: u32,
}

impl Default for PipelineLimits {
    fn default() -> Self {
        PipelineLimits {
            max_output_bytes: 1024 * 1024,
            max_call_depth: 4,
        }
    }
}

/// One call of a batch.
#[derive(Debug, Clone)]
pub struct BatchCall {
    pub name: String,
    pub args: Value,
    pub ctx: ToolContext,
}

/// Runs calls against a registry through a middleware stack.
pub struct Pipeline {
    registry: Arc<ToolRegistry>,
    middleware: Vec<Arc<dyn Middleware>>,
    limits: PipelineLimits,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.middleware.iter().map(|m| m.name()).collect();
        f.debug_struct("Pipeline")
            .field("middleware", &names)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    pub fn new(registry: Arc<ToolRegistry>, limits: PipelineLimits) -> Pipeline {
        Pipeline {
            registry,
            middleware: Vec::new(),
            limits,
        }
    }

    /// Appends a middleware; hooks run in the order they were added (`after` in reverse).
    #[must_use]
    pub fn with_middleware(mut self, middleware: Arc<dyn Middleware>) -> Pipeline {
        self.middleware.push(middleware);
        self
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    pub fn limits(&self) -> PipelineLimits {
        self.limits
    }

    /// Runs a call whose arguments arrive as JSON text (as an LLM sends them).
    /// Empty text means no arguments.
    pub async fn execute(&self, name: &str, args_json: &str, ctx: ToolContext) -> ToolResult {
        let started = Instant::now();
        let args = if args_json.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            match serde_json::from_str::<Value>(args_json) {
                Ok(args) => args,
                Err(e) => {
                    return finish(
                        ToolResult::error(
                            ErrorKind::InvalidArguments,
                            format!("arguments for tool '{name}' are not valid JSON: {e}"),
                        ),
                        started,
                    );
                }
            }
        };
        self.execute_value(name, args, ctx).await
    }

    /// Runs a call whose arguments are already parsed.
    pub async fn execute_value(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        let started = Instant::now();
        let res = self.run(name, args, ctx).await;
        finish(res, started)
    }

    /// Runs a call of `tool`, which is not in the registry: code run once, a definition under
    /// test. Everything after the lookup is as for a registered tool (depth, permissions,
    /// schema, every middleware), so such a call meets the same policy, approvals, limits,
    /// scrubbing and records as any other.
    pub async fn execute_unregistered(
        &self,
        tool: Arc<RegisteredTool>,
        args: Value,
        ctx: ToolContext,
    ) -> ToolResult {
        let started = Instant::now();
        let name = tool.name().to_owned();
        let res = self.run_tool(&name, tool, args, ctx).await;
        finish(res, started)
    }

    /// Runs every call at once; each result stands alone (one failure never fails another).
    pub async fn execute_batch(&self, calls: Vec<BatchCall>) -> Vec<ToolResult> {
        let runs = calls
            .into_iter()
            .map(|c| async move { self.execute_value(&c.name, c.args, c.ctx).await });
        futures::future::join_all(runs).await
    }

    async fn run(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        let Some(tool) = self
            .registry
            .get(&ctx.user_id, name)
            .filter(|tool| tool.is_visible_to(ctx.agent_id.as_deref()))
        else {
            if ctx.depth > self.limits.max_call_depth {
                return depth_refusal(name, &ctx, self.limits);
            }
            return ToolResult::error(ErrorKind::NotFound, format!("no tool named '{name}'"));
        };
        self.run_tool(name, tool, args, ctx).await
    }

    async fn run_tool(
        &self,
        name: &str,
        tool: Arc<RegisteredTool>,
        mut args: Value,
        ctx: ToolContext,
    ) -> ToolResult {
        crate::tool_limits::limit_in_place(name, &mut args);
        if ctx.depth > self.limits.max_call_depth {
            return depth_refusal(name, &ctx, self.limits);
        }
        if let Some(granted) = &ctx.granted_permissions
            && !tool.permissions.is_subset(granted)
        {
            let missing: Vec<&str> = tool
                .permissions
                .difference(granted)
                .map(|p| p.as_str())
                .collect();
            return ToolResult::error(
                ErrorKind::Denied,
                format!(
                    "tool '{name}' needs permissions the calling tool does not hold: {}",
                    missing.join(", ")
                ),
            );
        }
        if !args.is_object() {
            return ToolResult::error(
                ErrorKind::InvalidArguments,
                format!("arguments for tool '{name}' must be a JSON object"),
            );
        }
        if let Err(invalid) = tool.schema.check_call(name, &args, |_| None) {
            return invalid;
        }

        let mut call = Call {
            tool,
            args,
            ctx,
            held: Vec::new(),
        };
        let mut n_entered = 0;
        let mut res = None;
        for middleware in &self.middleware {
            n_entered += 1;
            if let Err(refusal) = middleware.before(&mut call).await {
                res = Some(refusal);
                break;
            }
        }
        let mut res = match res {
            Some(refusal) => refusal,
            None => {
                let started = Instant::now();
                let mut res = self.call_executor(&call).await;
                // `after` hooks (usage, metrics) see how long the tool ran, whatever the executor.
                if res.metadata.duration_ms == 0.0 {
                    res.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
                }
                res
            }
        };
        for middleware in self.middleware.iter().take(n_entered).rev() {
            middleware.after(&call, &mut res).await;
        }
        res
    }

    async fn call_executor(&self, call: &Call) -> ToolResult {
        let executor = call.tool.executor.clone();
        let run = AssertUnwindSafe(executor.execute(call.args.clone(), &call.ctx)).catch_unwind();
        let res = tokio::select! {
            biased;
            () = call.ctx.cancellation.cancelled() => {
                return ToolResult::error(ErrorKind::Cancelled, "the call was cancelled");
            }
            res = run => res,
        };
        let res = match res {
            Ok(res) => res,
            Err(_) => {
                tracing::error!(tool = %call.tool.name(), "tool executor panicked");
                return ToolResult::error(
                    ErrorKind::Internal,
                    format!("tool '{}' failed inside Toolsmith", call.tool.name()),
                );
            }
        };
        let res = cap_output(res, self.limits.max_output_bytes);
        crate::content::check_output(&call.tool, res)
    }
}

fn depth_refusal(name: &str, ctx: &ToolContext, limits: PipelineLimits) -> ToolResult {
    ToolResult::error(
        ErrorKind::Denied,
        format!(
            "tool call depth limit reached: '{name}' would be call number {} in a chain of nested callTool calls (limit {})",
            ctx.depth, limits.max_call_depth
        ),
    )
}

/// Replaces a result whose serialized content is larger than `max_bytes` by an
/// `output_too_large` error. The oversized content is dropped, never returned.
pub fn cap_output(res: ToolResult, max_bytes: usize) -> ToolResult {
    let size = match &res.content {
        Value::String(s) => s.len(),
        it => serialized_len(it),
    };
    if size <= max_bytes {
        return res;
    }
    let mut capped = ToolResult::error(
        ErrorKind::OutputTooLarge,
        format!("tool output is {size} bytes, over the limit of {max_bytes} bytes"),
    );
    capped.metadata.console = res.metadata.console;
    capped.metadata.console_truncated = res.metadata.console_truncated;
    capped
}

fn serialized_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` into a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

fn finish(mut res: ToolResult, started: Instant) -> ToolResult {
    res.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    res
}

#[cfg(test)]
mod tests;
