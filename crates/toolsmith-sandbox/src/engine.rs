//! One execution, start to finish, on the thread that runs it: a fresh QuickJS runtime and
//! context, the prelude, the tool, the loop that drives promises and host calls, and the
//! [`ToolResult`] that comes out.
//!
//! [`serve`] makes a runtime ready *before* its job arrives (context, prelude, lock-down), waits
//! for the job, runs it, replies, and only then tears the runtime down. A runtime serves exactly
//! one job and no script has touched it before; preparing ahead and tearing down after the reply
//! keeps both costs out of the caller's latency.
//!
//! The sandbox context is built *without* the `Eval` intrinsic: code only enters as bytecode
//! compiled outside (`compile.rs`). Its allocator enforces the memory limit, the interrupt
//! handler the CPU and wall-clock limits (`limits.rs`), QuickJS the stack limit.
//!
//! Values only cross as text: the arguments and `context` go in as JSON strings that
//! `JSON.parse` turns into fresh objects inside the sandbox, and the result comes out as the
//! JSON string that `JSON.stringify` made inside the sandbox, under the same limits (so
//! `toJSON`, getters and proxies on the returned value are bounded too), and is parsed here.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use rquickjs::context::intrinsic;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Object, Persistent, Promise, Runtime, Value};
use serde_json::{Map, Value as Json};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use toolsmith_core::{ErrorKind, PermissionSet, ToolResult};

use crate::compile::{self, CompileError, Compiler, Needs, TOOL_MODULE};
use crate::console::ConsoleBuffer;
use crate::grants;
use crate::guards;
use crate::host::{self, Event, HostBridge, JobSlot, JobState};
use crate::limits::{self, Limit, Watchdog};
use crate::lockdown;
use crate::modules::{JsPackages, Modules};
use crate::pool::InFlight;
use crate::raw::{self, CountingAllocator, LazyIntrinsic};
use crate::sched::{NoSlot, Ticket};
use crate::utils;
use crate::{HostCalls, JsLimits};

/// The built-in objects a sandbox context is created with. Not `Eval` (no code from strings),
/// not `Performance` (no high-resolution clock), not `DOMException`. Typed arrays, `Map`/`Set`,
/// `Date` and `WeakRef`/`FinalizationRegistry` are added before the tool runs when its source mentions them
/// (`compile::Needs`), or when `utils.js` is loaded (`JobSlot::ensure` adds each at most once).
type Intrinsics = (
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::Promise,
);

/// A job and where its result goes.
pub(crate) struct Job {
    pub(crate) exec: Execution,
    pub(crate) reply: oneshot::Sender<ToolResult>,
}

/// Everything needed to run one job.
pub(crate) struct Execution {
    pub(crate) code: String,
    pub(crate) args_json: String,
    pub(crate) context_json: String,
    /// The Config Center snapshot as JSON, if the job has one.
    pub(crate) config_json: Option<String>,
    /// The npm packages the tool may import.
    pub(crate) packages: Option<Arc<JsPackages>>,
    /// `process.env`.
    pub(crate) env: Option<Arc<BTreeMap<String, String>>>,
    /// The tool's permissions: `network`, `filesystem` and `shell` each add a global.
    pub(crate) permissions: PermissionSet,
    pub(crate) limits: JsLimits,
    pub(crate) deadline: Instant,
    pub(crate) cancelled: Arc<AtomicBool>,
    pub(crate) events: mpsc::Receiver<Event>,
    pub(crate) events_tx: mpsc::Sender<Event>,
    pub(crate) host: Arc<dyn HostCalls>,
    pub(crate) handle: Option<Handle>,
    /// The execution's claim on a CPU slot: held while script code runs, given back while it
    /// waits.
    pub(crate) ticket: Arc<Ticket>,
    /// Counts the execution against the cap: answered before the reply is sent, and until
    /// this is dropped, after the runtime is freed.
    pub(crate) in_flight: InFlight,
}

impl Drop for Execution {
    fn drop(&mut self) {
        // Also after a panic: a slot is never lost.
        self.ticket.finish();
    }
}

/// Prepares a runtime, takes one job from `next`, runs it and replies, then tears the runtime
/// down. `done` is called when the job has finished with the thread, before its CPU slot is
/// given back and its reply sent. Returns `false` when `next` had no job (the pool is shutting
/// down).
pub(crate) fn serve(
    compiler: &mut Compiler,
    next: impl FnOnce() -> Option<Job>,
    done: impl FnOnce(),
) -> bool {
    let watchdog = Rc::new(Watchdog::new());
    let slot = Rc::new(JobSlot::default());
    let prepared = Sandbox::start(&watchdog).and_then(|sandbox| {
        let hooks = sandbox
            .context
            .with(|ctx| prepare(&ctx, &slot).map(|hooks| Persistent::save(&ctx, hooks)))
            .map_err(|e| format!("could not prepare the sandbox: {e}"))?;
        Ok(Prepared { hooks, sandbox })
    });
    let Some(job) = next() else { return false };
    let result = match prepared {
        Ok(prepared) => {
            let sandbox = &prepared.sandbox;
            sandbox
                .runtime
                .set_max_stack_size(limits::clamp_stack(job.exec.limits.max_stack_bytes));
            let modules = Modules::new(
                job.exec.packages.clone(),
                job.exec.env.as_deref(),
                slot.clone(),
            );
            let (resolver, loader) = modules.loader();
            sandbox.runtime.set_loader(resolver, loader);
            let result = sandbox.context.with(|ctx| {
                let hooks = match prepared
                    .hooks
                    .clone()
                    .restore(&ctx)
                    .and_then(|hooks| Hooks::from_object(&hooks))
                {
                    Ok(hooks) => hooks,
                    Err(e) => return internal(format!("could not prepare the sandbox: {e}")),
                };
                guards::set_memory(job.exec.limits.memory_bytes);
                Run {
                    ctx: &ctx,
                    modules: &modules,
                    hooks: &hooks,
                    watchdog: &watchdog,
                    slot: &slot,
                    exec: &job.exec,
                }
                .execute(compiler)
            });
            done();
            job.exec.ticket.finish();
            job.exec.in_flight.answered();
            let _ = job.reply.send(result);
            // The runtime is torn down here, after the reply.
            return true;
        }
        Err(message) => internal(message),
    };
    done();
    job.exec.in_flight.answered();
    let _ = job.reply.send(result);
    true
}

/// A runtime made ready for a job. Fields drop in order, also when a panic unwinds: the value
/// kept from Rust (the saved hooks) before the runtime it lives in.
struct Prepared {
    hooks: Persistent<Object<'static>>,
    sandbox: Sandbox,
}

/// A fresh runtime and context. The context is declared first so it is dropped first.
struct Sandbox {
    context: Context,
    runtime: Runtime,
}

impl Sandbox {
    fn start(watchdog: &Rc<Watchdog>) -> Result<Sandbox, String> {
        let allocator = CountingAllocator::new(watchdog.memory_limit(), watchdog.memory_flag());
        let runtime = Runtime::new_with_alloc(allocator)
            .map_err(|e| format!("could not start a JS runtime: {e}"))?;
        let handler = watchdog.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || handler.should_stop())));
        let context = Context::custom::<Intrinsics>(&runtime)
            .map_err(|e| format!("could not start a JS context: {e}"))?;
        Ok(Sandbox { context, runtime })
    }
}

/// The functions `install` hands back.
struct Hooks<'js> {
    /// `run(main, argsJson, contextJson, maxOutputChars, maxConsoleChars, configJson, granted)`
    /// → promise of the result's JSON text, its length when over the output
    /// limit, or a report of what went wrong.
    run: Function<'js>,
    /// `load()` → the support module (`support.js`): `settle(id, ok, payload)` settles a pending
    /// `callTool` or `fetch` promise, `describe(error)` → `{message, stack, stackOverflow}`.
    load: Function<'js>,
}

impl<'js> Hooks<'js> {
    fn from_object(hooks: &Object<'js>) -> rquickjs::Result<Self> {
        Ok(Hooks {
            run: hooks.get("run")?,
            load: hooks.get("load")?,
        })
    }

    /// `name` of the support module, which is loaded if it was not yet.
    fn support(&self, name: &str) -> rquickjs::Result<Function<'js>> {
        let support: Object<'js> = self.load.call(())?;
        support.get(name)
    }
}

/// Evaluates the prelude and calls its `install`, which sets up the globals, then locks the
/// context down (`lockdown.rs`) and installs the native guards (`guards.rs`); returns the hooks
/// object.
fn prepare<'js>(ctx: &Ctx<'js>, slot: &Rc<JobSlot>) -> rquickjs::Result<Object<'js>> {
    let bytecode =
        compile::prelude().map_err(|e| rquickjs::Exception::throw_internal(ctx, &e.to_string()))?;
    let host = utils::host_object(ctx, slot.clone())?;
    let (module, _evaluated) = raw::load_module(ctx, &bytecode)?.eval()?;
    while ctx.execute_pending_job() {}
    let install: Function<'js> = module.get("install")?;
    let hooks: Object<'js> = install.call((host,))?;
    let run: Function<'js> = hooks.get("run")?;
    let generators: Vec<Function<'js>> = hooks.get("generators")?;
    let mut kinds = vec![run];
    kinds.extend(generators);
    lockdown::install(ctx, &kinds)?;
    guards::install(ctx)?;
    Ok(hooks)
}

/// How a script ended, before it is turned into a result.
enum Outcome {
    /// The JSON text of the returned value.
    Returned(String),
    /// The JSON text of a result of MCP content the `mcp` builders made (`mcp.js`).
    Blocks(String),
    /// The returned value's JSON is longer than the output limit (at least this many bytes).
    TooLarge(usize),
    /// The script threw.
    Threw(Thrown),
    /// The script awaits something nothing can settle any more.
    NeverSettles,
    /// A limit fired; the watchdog knows which.
    Stopped,
    /// Something went wrong on our side.
    Internal(String),
}

struct Thrown {
    message: String,
    stack: Option<String>,
    stack_overflow: bool,
}

/// One job in a prepared context.
struct Run<'a, 'js> {
    ctx: &'a Ctx<'js>,
    modules: &'a Rc<Modules>,
    hooks: &'a Hooks<'js>,
    watchdog: &'a Watchdog,
    slot: &'a JobSlot,
    exec: &'a Execution,
}

impl<'js> Run<'_, 'js> {
    /// Runs the job and returns its result (without `duration_ms`, which the caller measures).
    fn execute(&self, compiler: &mut Compiler) -> ToolResult {
        let exec = self.exec;
        if exec.cancelled.load(Ordering::Relaxed) {
            return Limit::Cancelled.result(&exec.limits);
        }
        if Instant::now() >= exec.deadline {
            return Limit::Wall.result(&exec.limits);
        }
        if let Err(no_slot) = exec.ticket.acquire(exec.deadline, &exec.cancelled) {
            return no_slot_limit(no_slot).result(&exec.limits);
        }
        let (tool, needs) = match compiler.tool(&exec.code) {
            Ok(compiled) => compiled,
            Err(CompileError::Syntax(message)) => {
                let what = if message.starts_with("SyntaxError") {
                    "has a syntax error"
                } else {
                    "does not compile"
                };
                return ToolResult::error(
                    ErrorKind::ExecutionError,
                    format!("the tool code {what}: {message}"),
                );
            }
            Err(CompileError::Internal(message)) => return internal(message),
        };

        self.watchdog.arm(
            &exec.limits,
            exec.deadline,
            exec.cancelled.clone(),
            exec.ticket.clone(),
        );
        self.slot.begin(JobState {
            bridge: HostBridge::new(
                exec.host.clone(),
                exec.handle.clone(),
                exec.events_tx.clone(),
                &exec.permissions,
            ),
            console: ConsoleBuffer::new(exec.limits.max_console_bytes),
        });
        let outcome = self.run(&tool, needs);
        // A script that went over its CPU time in a stretch that never reached the interrupt
        // handler (a long native built-in) does not succeed.
        if matches!(outcome, Outcome::Returned(_) | Outcome::Blocks(_)) {
            self.watchdog.check_cpu();
        }
        // Host calls still running are aborted when the job state is dropped.
        let state = self.slot.end();

        let mut result = match self.watchdog.fired() {
            Some(limit) => limit.result(&exec.limits),
            None => outcome_result(outcome, &exec.limits),
        };
        if let Some(state) = state {
            let (entries, truncated) = state.console.take();
            result.metadata.console = entries;
            result.metadata.console_truncated = truncated;
        }
        result
    }

    fn run(&self, tool: &raw::Bytecode, needs: Needs) -> Outcome {
        let wanted = [
            (needs.typed_arrays, LazyIntrinsic::TypedArrays),
            (needs.map_set, LazyIntrinsic::MapSet),
            (needs.date, LazyIntrinsic::Date),
            (needs.weak_refs, LazyIntrinsic::WeakRefs),
        ];
        for (wanted, intrinsic) in wanted {
            if wanted && !self.slot.ensure(self.ctx, intrinsic) {
                let _ = self.ctx.catch();
                return self.failed("could not add built-in objects to the sandbox".to_owned());
            }
        }
        if let Err(e) = grants::install(self.ctx, &self.hooks.load, &self.exec.permissions) {
            return self.failed(format!("could not add the permitted globals: {e}"));
        }
        if needs.mcp
            && let Err(e) = grants::install_mcp(self.ctx, &self.hooks.load)
        {
            return self.failed(format!("could not add mcp: {e}"));
        }
        if needs.node
            && let Err(e) = self.modules.install_node(self.ctx)
        {
            let _ = self.ctx.catch();
            return self.failed(format!("could not add process and Buffer: {e}"));
        }
        let main = match self.load_tool(tool) {
            Ok(main) => main,
            Err(outcome) => return outcome,
        };
        let limits = &self.exec.limits;
        let promise: Promise<'js> = match self.hooks.run.call((
            main,
            self.exec.args_json.as_str(),
            self.exec.context_json.as_str(),
            limits.max_output_bytes as f64,
            limits.max_console_bytes as f64,
            self.exec.config_json.as_deref(),
            grants::bits(&self.exec.permissions),
        )) {
            Ok(promise) => promise,
            Err(e) => return self.failed(format!("could not start the tool: {e}")),
        };
        match self.drive(&promise) {
            Some(outcome) => outcome,
            None => self.read_report(&promise),
        }
    }

    /// `Internal`, unless a limit explains the failure.
    fn failed(&self, message: String) -> Outcome {
        if self.watchdog.fired().is_some() {
            return Outcome::Stopped;
        }
        Outcome::Internal(message)
    }

    /// Evaluates the tool module and returns its default export, the tool function.
    fn load_tool(&self, tool: &raw::Bytecode) -> Result<Value<'js>, Outcome> {
        let ctx = self.ctx;
        let module = raw::load_module(ctx, tool)
            .map_err(|e| self.failed(format!("could not load the tool code: {e}")))?;
        let (module, evaluated) = match module.eval() {
            Ok(it) => it,
            Err(rquickjs::Error::Exception) => return Err(self.thrown(ctx.catch())),
            Err(e) => return Err(self.failed(format!("could not run the tool code: {e}"))),
        };
        while ctx.execute_pending_job() {
            if self.watchdog.fired().is_some() {
                return Err(Outcome::Stopped);
            }
        }
        if evaluated.state() == PromiseState::Rejected {
            let thrown = match evaluated.result::<Value<'js>>() {
                Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                _ => Value::new_undefined(ctx.clone()),
            };
            return Err(self.thrown(thrown));
        }
        module
            .get("default")
            .map_err(|e| self.failed(format!("could not find the tool function: {e}")))
    }

    /// `Threw`, with the error described inside the sandbox.
    fn thrown(&self, thrown: Value<'js>) -> Outcome {
        if self.watchdog.fired().is_some() {
            return Outcome::Stopped;
        }
        let described = self
            .hooks
            .support("describe")
            .and_then(|describe| describe.call::<_, Object<'js>>((thrown,)));
        match described {
            Ok(report) => Outcome::Threw(read_thrown(&report)),
            Err(e) => self.failed(format!("could not describe the tool's error: {e}")),
        }
    }

    /// Runs jobs and host calls until `promise` settles. `Some` when the script ended another
    /// way.
    fn drive(&self, promise: &Promise<'js>) -> Option<Outcome> {
        loop {
            while self.ctx.execute_pending_job() {
                if self.watchdog.fired().is_some() {
                    return Some(Outcome::Stopped);
                }
            }
            if self.watchdog.fired().is_some() {
                return Some(Outcome::Stopped);
            }
            if promise.state() != PromiseState::Pending {
                return None;
            }
            if self.slot.with(|job| job.bridge.pending()).unwrap_or(0) == 0 {
                return Some(Outcome::NeverSettles);
            }
            let left = self.exec.deadline.saturating_duration_since(Instant::now());
            // Waiting costs no CPU slot: others run meanwhile.
            self.exec.ticket.release();
            let event = self.exec.events.recv_timeout(left);
            if let Ok(Event::HostCall { .. }) = event
                && let Err(no_slot) = self
                    .exec
                    .ticket
                    .resume(self.exec.deadline, &self.exec.cancelled)
            {
                self.watchdog.fire(no_slot_limit(no_slot));
                return Some(Outcome::Stopped);
            }
            match event {
                Ok(Event::HostCall { id, result }) => {
                    self.slot.with(|job| job.bridge.settled());
                    let (ok, payload) = match result {
                        Ok(content) => (true, content.to_string()),
                        Err(message) => (false, message),
                    };
                    let settled = self
                        .hooks
                        .support("settle")
                        .and_then(|settle| settle.call::<_, ()>((id as f64, ok, payload)));
                    if let Err(e) = settled {
                        return Some(self.failed(format!("could not settle a host call: {e}")));
                    }
                }
                Ok(Event::Cancelled) => {
                    self.watchdog.fire(Limit::Cancelled);
                    return Some(Outcome::Stopped);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.watchdog.fire(Limit::Wall);
                    return Some(Outcome::Stopped);
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Some(Outcome::Internal(
                        "the host call channel closed unexpectedly".to_owned(),
                    ));
                }
            }
        }
    }

    /// What `run` resolved with: the result's JSON text (in a one-item list for a result of
    /// MCP content), its length when that is over the output limit, or a report `{ok: false,
    /// message, stack, stackOverflow}`.
    fn read_report(&self, promise: &Promise<'js>) -> Outcome {
        let report = match promise.result::<Value<'js>>() {
            Some(Ok(report)) => report,
            _ => return self.failed("the tool's promise ended without a report".to_owned()),
        };
        if let Some(json) = report.as_string() {
            return match json.to_string() {
                Ok(json) => Outcome::Returned(json),
                Err(e) => self.failed(format!("could not read the tool's result: {e}")),
            };
        }
        if let Some(len) = report.as_number() {
            return Outcome::TooLarge(len as usize);
        }
        if let Some(list) = report.as_array() {
            return match list.get::<String>(0) {
                Ok(json) => Outcome::Blocks(json),
                Err(e) => self.failed(format!("could not read the tool's result: {e}")),
            };
        }
        match report.into_object() {
            Some(report) => Outcome::Threw(read_thrown(&report)),
            None => self.failed("the tool's promise ended without a report".to_owned()),
        }
    }
}

fn read_thrown(report: &Object<'_>) -> Thrown {
    Thrown {
        message: report
            .get::<_, String>("message")
            .unwrap_or_else(|_| "the tool threw an error".to_owned()),
        stack: report
            .get::<_, Option<String>>("stack")
            .ok()
            .flatten()
            .map(|s| without_internal_frames(&s))
            .filter(|s| !s.is_empty())
            .map(|s| code_columns(&s)),
        stack_overflow: report.get::<_, bool>("stackOverflow").unwrap_or(false),
    }
}

/// A stack without the frames of the sandbox's own modules (`mcp.js`, `io.js` …), which are
/// compiled without line information and read `at reject (<null>:0:1)`: nothing the tool's
/// author can look at (a rejected `mcp.sample` had only that frame).
fn without_internal_frames(stack: &str) -> String {
    stack
        .lines()
        .filter(|line| !line.contains("(<null>:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Stack locations on the first line of tool code count columns from the end of the module
/// header, as the code's author sees them.
fn code_columns(stack_line: &str) -> String {
    let mark = format!("{TOOL_MODULE}:1:");
    let Some((head, after)) = stack_line.split_once(&mark) else {
        return stack_line.to_owned();
    };
    let n_digits = after
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after.len());
    let (digits, tail) = after.split_at_checked(n_digits).unwrap_or((after, ""));
    let Ok(column) = digits.parse::<usize>() else {
        return stack_line.to_owned();
    };
    format!("{head}{mark}{}{tail}", compile::code_column(column))
}

/// The limit a failure to get a CPU slot counts as.
pub(crate) fn no_slot_limit(no_slot: NoSlot) -> Limit {
    match no_slot {
        NoSlot::Cancelled => Limit::Cancelled,
        NoSlot::Deadline | NoSlot::Retired => Limit::Wall,
    }
}

fn internal(message: String) -> ToolResult {
    tracing::error!(error = %message, "sandbox execution failed");
    ToolResult::error(ErrorKind::Internal, message)
}

fn outcome_result(outcome: Outcome, limits: &JsLimits) -> ToolResult {
    match outcome {
        Outcome::Returned(json) => returned(json, limits),
        Outcome::Blocks(json) => returned_blocks(json, limits),
        Outcome::TooLarge(len) => too_large(len, limits),
        Outcome::Threw(thrown) => threw(thrown, limits),
        Outcome::NeverSettles => ToolResult::error(
            ErrorKind::ExecutionError,
            "the tool never finished: it awaits a promise that nothing can settle any more",
        ),
        // A limit fired without the watchdog noticing cannot happen; report it as what it is.
        Outcome::Stopped => internal("the tool was stopped for no known reason".to_owned()),
        Outcome::Internal(message) => internal(message),
    }
}

fn too_large(len: usize, limits: &JsLimits) -> ToolResult {
    ToolResult::error(
        ErrorKind::OutputTooLarge,
        format!(
            "the tool's result is {len} bytes or more as JSON, over the output limit of {}",
            limits::fmt_bytes(limits.max_output_bytes)
        ),
    )
}

fn returned(json: String, limits: &JsLimits) -> ToolResult {
    if json.len() > limits.max_output_bytes {
        return too_large(json.len(), limits);
    }
    match host::parse_json(&json) {
        Ok(content) => ToolResult::ok(content),
        // Valid JSON that serde will not read: nested deeper than it allows.
        Err(e) => ToolResult::error(
            ErrorKind::ExecutionError,
            format!("the tool's result cannot be read as JSON: {e}"),
        ),
    }
}

/// A result of MCP content (`{content, structuredContent?, isError?, _meta?}`, made by the
/// `mcp` builders), checked by `toolsmith_core::content`.
fn returned_blocks(json: String, limits: &JsLimits) -> ToolResult {
    let read = returned(json, limits);
    if read.is_error {
        return read;
    }
    let Json::Object(mut result) = read.content else {
        return internal("a result of MCP content is not an object".to_owned());
    };
    let blocks = match result.remove("content") {
        Some(Json::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    let is_error = result.remove("isError") == Some(Json::Bool(true));
    let meta = match result.remove("_meta") {
        Some(Json::Object(meta)) => Some(meta),
        _ => None,
    };
    ToolResult::blocks(blocks, result.remove("structuredContent"), meta, is_error).unwrap_or_else(
        |e| {
            ToolResult::error(
                ErrorKind::ExecutionError,
                format!("the tool's mcp.result is not valid MCP content: {e}"),
            )
        },
    )
}

fn threw(thrown: Thrown, limits: &JsLimits) -> ToolResult {
    let mut details = Map::new();
    if let Some(stack) = thrown.stack {
        details.insert("stack".to_owned(), Json::String(stack));
    }
    if thrown.stack_overflow {
        return ToolResult::error_with(
            ErrorKind::StackOverflow,
            format!(
                "the tool went deeper than its stack limit of {} (runaway recursion?): {}",
                limits::fmt_bytes(limits::clamp_stack(limits.max_stack_bytes)),
                thrown.message
            ),
            details,
        );
    }
    ToolResult::error_with(ErrorKind::ExecutionError, thrown.message, details)
}

#[cfg(test)]
mod tests;
