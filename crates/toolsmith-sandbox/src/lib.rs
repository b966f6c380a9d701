//! The JavaScript sandbox: runs the body of an async function in a fresh QuickJS runtime per
//! execution, with hard memory, CPU, wall-clock, stack, output and console limits; at most one
//! execution per CPU slot runs script code at once, and executions awaiting host calls hold no
//! slot.
//!
//! The only things a script sees are those injected here: `args`, `context`, `utils`,
//! `console`, and what the tool's permissions add: `fetch` (`network`), `fs` (`filesystem`) and
//! `shell` (`shell`). `fs` and `shell` are `callTool`s of fixed built-in tools (`read_file`,
//! `write_file`, …, `execute_shell`), so the host governs them as it governs any call. A tool
//! that mentions `mcp` also gets the `mcp` global, its side of the conversation with the client
//! that called it: `mcp.log` and `mcp.progress` ([`HostCalls::notify`], capped per execution),
//! `mcp.sample` and `mcp.elicit` ([`HostCalls::sample`], [`HostCalls::elicit`]; only with the
//! `sampling` / `elicitation` permission).
//!
//! # Using it
//!
//! Build one [`JsSandbox`] (it owns the threads) and share it, e.g. as
//! `Arc<JsSandbox>`; call [`JsSandbox::run`] from any tokio task. Every outcome is a
//! [`ToolResult`]: a thrown error is `execution_error` with `{"error", "kind", "stack"}`, and
//! each limit has its own kind (`memory_limit`, `cpu_limit`, `timeout`, `stack_overflow`,
//! `output_too_large`; `busy` past the cap of executions in flight, `cancelled` when the caller
//! went away).
//! Console output is in `metadata.console`, never in the server log.
//!
//! [`HostCalls`] is the script's way out: `utils.callTool(name, args)` calls
//! [`HostCalls::call_tool`] on the caller's tokio runtime and resolves with the `Ok` content (as
//! a fresh copy) or rejects with an `Error` whose message is the `Err` string, which the script
//! may catch. `fetch` works the same way through [`HostCalls::fetch`]. While a script awaits
//! host calls it holds no CPU slot, so thousands of waiting executions cost threads and memory,
//! not cores, and a nested [`JsSandbox::run`] (a JS tool calling a JS tool) cannot deadlock the
//! sandbox. Nesting depth is the host's business.
//!
//! # Map of the crate
//!
//! - `pool.rs`: a thread per execution in flight (`busy` past the cap), threads kept ready with
//!   a prepared runtime, and the async side of [`JsSandbox::run`].
//! - `sched.rs`: the CPU slots (one per worker): held only while script code runs, handed on
//!   after a quantum when others wait, served round-robin across users.
//! - `engine.rs`: one execution in a fresh runtime, prepared before its job arrives: prelude,
//!   tool, the loop that drives promises and host calls, and the [`ToolResult`] that comes out.
//! - `guards.rs`: the length guards of the generic array methods, native functions installed
//!   in every context before tool code runs.
//! - `limits.rs`: the watchdog behind the interrupt handler (CPU, wall clock, cancellation) and
//!   the messages of every limit.
//! - `raw.rs`: the only `unsafe` code: the allocator that enforces the memory limit, loading
//!   bytecode, adding optional built-ins to a context, and reading `+x.length` of any value.
//! - `compile.rs`: source to bytecode, outside the sandbox (which cannot compile anything).
//! - `prelude.js`: runs first in every context: defines `utils` and `console`, and the hooks
//!   `engine.rs` drives.
//! - `lockdown.rs`: no code from strings, no shared memory, no stack-trace hooks, natively
//!   in every context before tool code runs.
//! - `grants.rs`: the globals permissions add (`fetch`, `fs`, `shell`), native functions that
//!   load the support module on first use.
//! - `support.js`: error descriptions, `console`, settling host calls; loaded when first
//!   needed, and itself loads the rest when first needed:
//! - `utils.js`, `io.js` / `utils.rs`: the `utils` helpers; `fetch`, `fs` and `shell`; and the
//!   native functions they call; each loaded only when a tool uses it.
//! - `mcp.js`: the `mcp` global (log, progress, sample, elicit), loaded when a tool first
//!   touches `mcp`; its caps and permission checks are in `host.rs`.
//! - `host.rs`: `utils.callTool` / `utils.listTools` / `fetch` over [`HostCalls`].
//! - `console.rs`: the capped console.
//! - `checks.rs`: [`check_code`], the registration-time checks.
//!
//! Security rests on the engine, not on [`check_code`]: the sandbox context has no `Eval`
//! intrinsic (QuickJS itself refuses to compile strings there), no module loader, no timers,
//! no shared memory, no `std`/`os`, and nothing of the host but plain values and the few native
//! functions the prelude, `support.js` and `utils.js` wrap.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod checks;
mod compile;
mod console;
mod engine;
mod grants;
mod guards;
mod host;
mod limits;
mod lockdown;
mod modules;
mod pool;
mod raw;
mod sched;
#[cfg(test)]
mod ui_api;
mod utils;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{LogLevel, PermissionSet, ToolResult};

pub use modules::{JsPackage, JsPackages};

/// The fixed `process.version` of the sandbox (`node.js`): the Node.js major the Node-isms
/// follow. No Node.js runs.
pub const NODE_VERSION: &str = "v22.0.0";

/// Hard limits of one execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsLimits {
    /// Heap limit of the runtime (default 50 MB).
    pub memory_bytes: usize,
    /// Thread CPU time (default 5 s).
    pub cpu_time: Duration,
    /// Wall clock, including awaited promises, host calls and waiting for a CPU slot
    /// (default 30 s).
    pub wall_time: Duration,
    /// Native stack the script may use (default 512 KB).
    pub max_stack_bytes: usize,
    /// Largest serialized return value (default 1 MB).
    pub max_output_bytes: usize,
    /// Total console output kept (default 64 KB).
    pub max_console_bytes: usize,
}

impl Default for JsLimits {
    fn default() -> Self {
        JsLimits {
            memory_bytes: 50 * 1024 * 1024,
            cpu_time: Duration::from_secs(5),
            wall_time: Duration::from_secs(30),
            max_stack_bytes: 512 * 1024,
            max_output_bytes: 1024 * 1024,
            max_console_bytes: 64 * 1024,
        }
    }
}

/// How many executions may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Executions that may run JavaScript at once: the CPU slots (default: the number of
    /// cores). An execution awaiting a host call holds none.
    pub workers: usize,
    /// Executions in flight at once — running, waiting for a CPU slot, or awaiting host calls;
    /// past it calls get a `busy` error at once (default 1024).
    pub max_in_flight: usize,
}

/// The default of [`PoolSettings::max_in_flight`].
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

/// What the script is told about its call (`context` inside the sandbox).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsCallContext {
    pub tool_name: String,
    pub call_id: String,
    pub conversation_id: Option<String>,
    pub user_id: String,
}

/// A `fetch` a script made, as the host receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRequest {
    pub url: String,
    /// Upper-case; `GET` when the script gave none.
    pub method: String,
    /// In the order the script gave them.
    pub headers: Vec<(String, String)>,
    /// `None` when the script sent no body; objects arrive `JSON.stringify`'d.
    pub body: Option<String>,
}

/// The host's answer to a [`FetchRequest`]; the script sees it as a WHATWG-shaped `Response`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FetchResponse {
    pub status: u16,
    pub status_text: String,
    /// `headers.get(name)` matches names case-insensitively and joins repeats with `, `.
    pub headers: Vec<(String, String)>,
    /// The URL that answered (after redirects): `response.url`.
    pub url: String,
    /// The body as text (the host decodes it, lossily for bytes that are not UTF-8).
    pub body: String,
}

/// A message a script sends its caller's client while it runs (`mcp.log`, `mcp.progress`):
/// fire and forget. The sandbox has checked its shape and counted it against the execution's
/// caps ([`MAX_CLIENT_NOTES`], [`MAX_CLIENT_NOTE_BYTES`], [`MAX_CLIENT_NOTES_BYTES`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ClientNote {
    /// `mcp.log(level, data, logger?)`: MCP `notifications/message`.
    Log {
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
    /// `mcp.progress(progress, total?, message?)`: MCP `notifications/progress`; `progress`
    /// increases from one note to the next.
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// `mcp.log` and `mcp.progress` messages one execution may send; the rest are dropped, with
/// one warning in its console.
pub const MAX_CLIENT_NOTES: usize = 1000;
/// The largest `mcp.log` message (its data as JSON, with the logger's name) or progress
/// message; a larger one is dropped like the rest.
pub const MAX_CLIENT_NOTE_BYTES: usize = 64 * 1024;
/// The bytes of `mcp.log` and `mcp.progress` messages one execution may send in all.
pub const MAX_CLIENT_NOTES_BYTES: usize = 1024 * 1024;
/// The largest `mcp.sample` or `mcp.elicit` request, as JSON.
pub const MAX_CLIENT_REQUEST_BYTES: usize = 1024 * 1024;

/// What a script reaches outside the sandbox: `utils.callTool`, `utils.listTools`, `fetch`,
/// and the caller's client through `mcp`.
#[async_trait]
pub trait HostCalls: Send + Sync {
    /// Runs another tool; `Ok` carries its content, `Err` its error message.
    async fn call_tool(&self, name: &str, args: Value) -> Result<Value, String>;
    /// `[{name, description, parameters}]` of the tools this script may call.
    fn list_tools(&self) -> Vec<Value>;
    /// Sends a script's `fetch` (only scripts with the `network` permission have `fetch`).
    /// `Err` rejects the script's promise with an `Error` carrying the message. Every request
    /// must go through the egress guard; the default refuses all.
    async fn fetch(&self, request: FetchRequest) -> Result<FetchResponse, String> {
        let _ = request;
        Err("network access is not configured".to_owned())
    }
    /// Passes on a script's `mcp.log` or `mcp.progress` message. Called on the script's
    /// thread, in the order the script sent them: must not block (queue it and return).
    /// The default drops it.
    fn notify(&self, note: ClientNote) {
        let _ = note;
    }
    /// `await mcp.sample(params)`: `sampling/createMessage`'s params (checked for shape by the
    /// sandbox, only for a tool with the `sampling` permission), its result out. `Err` rejects
    /// the script's promise with an `Error` carrying the message.
    async fn sample(&self, params: Value) -> Result<Value, String> {
        let _ = params;
        Err(
            "asking the client's model is not possible here: this call has no MCP client"
                .to_owned(),
        )
    }
    /// `await mcp.elicit(params)`: `elicitation/create`'s params (checked for shape, only for
    /// a tool with the `elicitation` permission), its result out.
    async fn elicit(&self, params: Value) -> Result<Value, String> {
        let _ = params;
        Err("asking the user is not possible here: this call has no MCP client".to_owned())
    }
}

/// One execution request.
pub struct JsJob {
    pub code: String,
    pub args: Value,
    pub context: JsCallContext,
    pub permissions: PermissionSet,
    pub limits: JsLimits,
    pub host: Arc<dyn HostCalls>,
    /// The Config Center snapshot the `utils.getApiKey` family reads, synchronously:
    /// `{"<service>": {"service": {name, displayName, …}, "entries": [{label, isDefault,
    /// values: {field: value}}]}}`, holding only the services the tool declares. `None`: the
    /// accessors find nothing (`undefined`, `null`, `[]`).
    pub config: Option<Value>,
    /// The npm packages the tool may `import()`, unpacked by the host (`None`: none; an
    /// import fails naming the dependency to declare).
    pub packages: Option<Arc<JsPackages>>,
    /// `process.env` (`None`: an empty object). Only what the operator chose to pass.
    pub env: Option<Arc<BTreeMap<String, String>>>,
}

/// Why code was refused before it ever ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error("tool code is empty")]
    Empty,
    #[error("tool code is {len} bytes, over the limit of {max} bytes")]
    TooLarge { len: usize, max: usize },
    #[error("tool code contains forbidden pattern '{pattern}': {hint}")]
    Forbidden {
        pattern: &'static str,
        hint: &'static str,
    },
    #[error("tool code has a syntax error: {0}")]
    Syntax(String),
}

/// The sandbox: runs [`JsJob`]s, at most `max_in_flight` at once, at most `workers` of them
/// running script code at any moment.
///
/// Cheap to share (`Arc<JsSandbox>`); `run` may be called from any number of tokio tasks at
/// once. Dropping the sandbox lets its threads finish what they run and exit.
pub struct JsSandbox {
    pool: pool::Pool,
}

impl JsSandbox {
    /// Starts `config.workers` threads (at least one), each with a runtime prepared.
    pub fn new(config: PoolSettings) -> JsSandbox {
        JsSandbox {
            pool: pool::Pool::new(config),
        }
    }

    /// Runs a job and returns its result; every failure is a result with an error kind.
    ///
    /// Must be called from within a tokio runtime with time enabled (host calls are spawned on
    /// it). The wall-clock limit counts from this call, queueing included. Dropping the future
    /// cancels the job.
    pub async fn run(&self, job: JsJob) -> ToolResult {
        self.pool.run(job).await
    }

    /// Executions in flight now (including any stuck in native code and retired).
    pub fn in_flight(&self) -> usize {
        self.pool.in_flight()
    }
}

/// Registration-time checks: size, forbidden patterns, and that the code compiles.
///
/// A speed bump that gives friendly hints, never the wall: everything it refuses is also
/// refused (or harmless) at run time.
pub fn check_code(code: &str, max_bytes: usize) -> Result<(), CodeError> {
    checks::check_code(code, max_bytes)
}
