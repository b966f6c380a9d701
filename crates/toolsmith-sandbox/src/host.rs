//! The bridge between a running script and [`HostCalls`]: `utils.callTool`,
//! `utils.listTools` and `fetch`.
//!
//! A script runs on a plain thread; `HostCalls::call_tool` is async and belongs on the
//! caller's tokio runtime. `callTool` therefore *spawns* the host call on that runtime (the
//! handle is captured in `JsSandbox::run`) and returns an id at once; `support.js` keeps a pending
//! promise for the id. When the host call finishes, its result comes back to the script's thread over a
//! channel as an [`Event`], and the driving loop (`engine.rs`) settles the promise inside the
//! sandbox: content as a fresh `JSON.parse` copy, an error as a new `Error` carrying the tool's
//! message. While a script awaits host calls its thread blocks on that channel, up to the
//! deadline, holding no CPU slot (`sched.rs`), so a host call that hangs ends as `timeout` and
//! costs no core meanwhile.
//!
//! When the execution ends, every host call still running is aborted.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::mpsc;

use rquickjs::Ctx;
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use toolsmith_core::{LogLevel, Permission, PermissionSet};

use crate::console::ConsoleBuffer;
use crate::raw::{self, LazyIntrinsic};
use crate::{
    ClientNote, FetchRequest, HostCalls, MAX_CLIENT_NOTE_BYTES, MAX_CLIENT_NOTES,
    MAX_CLIENT_NOTES_BYTES, MAX_CLIENT_REQUEST_BYTES,
};

/// Host calls one script may have running at once.
pub(crate) const MAX_PENDING_HOST_CALLS: usize = 16;

/// The job a runtime is running, as its native functions see it. A runtime is prepared before
/// its job arrives, so the natives are created once per runtime and find the job here. Also
/// remembers which optional built-ins the runtime's context has been given.
#[derive(Default)]
pub(crate) struct JobSlot {
    current: RefCell<Option<JobState>>,
    added: Cell<[bool; 4]>,
}

/// The host side of the running job.
pub(crate) struct JobState {
    pub(crate) bridge: HostBridge,
    pub(crate) console: ConsoleBuffer,
}

impl JobSlot {
    pub(crate) fn begin(&self, state: JobState) {
        *self.current.borrow_mut() = Some(state);
    }

    pub(crate) fn end(&self) -> Option<JobState> {
        self.current.borrow_mut().take()
    }

    /// Adds `intrinsic` to the context unless it has it already; `false` if QuickJS failed (the
    /// exception is pending).
    pub(crate) fn ensure(&self, ctx: &Ctx<'_>, intrinsic: LazyIntrinsic) -> bool {
        let index = match intrinsic {
            LazyIntrinsic::TypedArrays => 0,
            LazyIntrinsic::MapSet => 1,
            LazyIntrinsic::Date => 2,
            LazyIntrinsic::WeakRefs => 3,
        };
        let mut added = self.added.get();
        if let Some(slot) = added.get_mut(index) {
            if *slot {
                return true;
            }
            *slot = true;
        }
        self.added.set(added);
        if !raw::add_intrinsic(ctx, intrinsic) {
            return false;
        }
        if intrinsic == LazyIntrinsic::TypedArrays {
            // No shared memory.
            let globals = ctx.globals();
            return globals.remove("SharedArrayBuffer").is_ok()
                && globals.remove("Atomics").is_ok();
        }
        true
    }

    /// `f` of the running job, if there is one. `f` must not call into JavaScript.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&JobState) -> R) -> Option<R> {
        self.current.borrow().as_ref().map(f)
    }
}

/// What reaches a waiting execution from outside.
pub(crate) enum Event {
    /// A `callTool` or `fetch` finished.
    HostCall {
        id: u64,
        result: Result<Value, String>,
    },
    /// The caller of `run` went away.
    Cancelled,
}

/// The host side of one execution.
pub(crate) struct HostBridge {
    host: Arc<dyn HostCalls>,
    handle: Option<Handle>,
    events: mpsc::Sender<Event>,
    pending: Cell<usize>,
    next_id: Cell<u64>,
    tasks: RefCell<Vec<JoinHandle<()>>>,
    /// The tool may ask the client's model (`sampling`) and the person (`elicitation`).
    may_sample: bool,
    may_elicit: bool,
    /// `mcp.log` / `mcp.progress` messages passed on, and their bytes.
    notes: Cell<usize>,
    note_bytes: Cell<usize>,
    /// A message was dropped (over a cap) already.
    dropped: Cell<bool>,
}

/// What happened to an `mcp.log` or `mcp.progress` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoteOutcome {
    Sent,
    /// Over a cap: dropped. `first` for the first message dropped in this execution.
    Dropped {
        first: bool,
    },
}

impl HostBridge {
    pub(crate) fn new(
        host: Arc<dyn HostCalls>,
        handle: Option<Handle>,
        events: mpsc::Sender<Event>,
        permissions: &PermissionSet,
    ) -> Self {
        HostBridge {
            host,
            handle,
            events,
            pending: Cell::new(0),
            next_id: Cell::new(1),
            tasks: RefCell::new(Vec::new()),
            may_sample: permissions.contains(&Permission::Sampling),
            may_elicit: permissions.contains(&Permission::Elicitation),
            notes: Cell::new(0),
            note_bytes: Cell::new(0),
            dropped: Cell::new(false),
        }
    }

    /// Passes `mcp.log(level, data, logger)` on (`data_json` made by `JSON.stringify` in the
    /// sandbox), unless it is over a cap.
    pub(crate) fn log(
        &self,
        level: &str,
        data_json: &str,
        logger: Option<String>,
    ) -> Result<NoteOutcome, String> {
        let level = LogLevel::parse(level).map_err(|e| format!("mcp.log: {e}"))?;
        let size = data_json.len() + logger.as_ref().map_or(0, String::len);
        if let Some(dropped) = self.over_caps(size) {
            return Ok(dropped);
        }
        let data = parse_json(data_json)
            .map_err(|e| format!("mcp.log: the data cannot be read as JSON: {e}"))?;
        self.host.notify(ClientNote::Log {
            level,
            logger,
            data,
        });
        Ok(NoteOutcome::Sent)
    }

    /// Passes `mcp.progress(progress, total, message)` on, unless it is over a cap.
    pub(crate) fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> NoteOutcome {
        let size = 64 + message.as_ref().map_or(0, String::len);
        if let Some(dropped) = self.over_caps(size) {
            return dropped;
        }
        self.host.notify(ClientNote::Progress {
            progress,
            total,
            message,
        });
        NoteOutcome::Sent
    }

    /// `Some` when a message of `size` bytes would pass one of the execution's caps; else
    /// counts it.
    fn over_caps(&self, size: usize) -> Option<NoteOutcome> {
        let (notes, bytes) = (self.notes.get(), self.note_bytes.get());
        let over = notes >= MAX_CLIENT_NOTES
            || size > MAX_CLIENT_NOTE_BYTES
            || bytes.saturating_add(size) > MAX_CLIENT_NOTES_BYTES;
        if over {
            let first = !self.dropped.replace(true);
            return Some(NoteOutcome::Dropped { first });
        }
        self.notes.set(notes + 1);
        self.note_bytes.set(bytes + size);
        None
    }

    /// Starts `mcp.sample(params)` or `mcp.elicit(params)` (`sample` says which) on the host;
    /// the client's answer arrives later as an [`Event::HostCall`].
    pub(crate) fn ask_client(&self, sample: bool, params_json: &str) -> Result<u64, String> {
        let (what, allowed, permission) = if sample {
            ("mcp.sample", self.may_sample, Permission::Sampling)
        } else {
            ("mcp.elicit", self.may_elicit, Permission::Elicitation)
        };
        if !allowed {
            let asking = if sample {
                "asks the client's model"
            } else {
                "asks the user"
            };
            return Err(format!(
                "{what} {asking}, which a tool may do only when it declares permissions: [\"{permission}\"] (set it with create_tool or update_custom_tool)"
            ));
        }
        self.ready(what)?;
        if params_json.len() > MAX_CLIENT_REQUEST_BYTES {
            return Err(format!(
                "{what}: the request is {} bytes as JSON, over the limit of {MAX_CLIENT_REQUEST_BYTES} bytes",
                params_json.len()
            ));
        }
        let mut params = parse_json(params_json)
            .map_err(|e| format!("{what}: the request cannot be read as JSON: {e}"))?;
        // A URL request is matched to its completion by an id MCP requires; one is made when
        // the tool gave none.
        if let Some(request) = params.as_object_mut()
            && request.get("mode").and_then(Value::as_str) == Some("url")
            && !request.contains_key("elicitationId")
        {
            request.insert(
                "elicitationId".to_owned(),
                Value::String(uuid::Uuid::new_v4().to_string()),
            );
        }
        let host = self.host.clone();
        if sample {
            self.spawn(async move { host.sample(params).await })
        } else {
            self.spawn(async move { host.elicit(params).await })
        }
    }

    /// Starts `name(args)` on the host; the result arrives later as an [`Event::HostCall`].
    pub(crate) fn call_tool(&self, name: String, args_json: &str) -> Result<u64, String> {
        self.ready("callTool")?;
        let args = parse_json(args_json)
            .map_err(|e| format!("callTool: the arguments cannot be read as JSON: {e}"))?;
        let host = self.host.clone();
        self.spawn(async move { host.call_tool(&name, args).await })
    }

    /// Starts a `fetch` on the host; the response arrives later as an [`Event::HostCall`]
    /// whose content is `{status, statusText, headers: [[name, value]], url, body}`.
    pub(crate) fn fetch(
        &self,
        url: String,
        method: String,
        headers_json: &str,
        body: Option<String>,
    ) -> Result<u64, String> {
        self.ready("fetch")?;
        let headers: Vec<(String, String)> = serde_json::from_str(headers_json)
            .map_err(|e| format!("fetch: the headers cannot be read: {e}"))?;
        let request = FetchRequest {
            url,
            method,
            headers,
            body,
        };
        let host = self.host.clone();
        self.spawn(async move {
            let response = host.fetch(request).await?;
            Ok(json!({
                "status": response.status,
                "statusText": response.status_text,
                "headers": response.headers,
                "url": response.url,
                "body": response.body,
            }))
        })
    }

    /// Whether another host call may start.
    fn ready(&self, what: &str) -> Result<(), String> {
        if self.pending.get() >= MAX_PENDING_HOST_CALLS {
            return Err(format!(
                "{what}: too many host calls at once (at most {MAX_PENDING_HOST_CALLS} may be pending)"
            ));
        }
        if self.handle.is_none() {
            return Err(format!(
                "{what} is not available: the sandbox was not called from a tokio runtime"
            ));
        }
        Ok(())
    }

    /// Spawns `call` on the caller's runtime and returns the id its result will carry.
    fn spawn(
        &self,
        call: impl Future<Output = Result<Value, String>> + Send + 'static,
    ) -> Result<u64, String> {
        let Some(handle) = &self.handle else {
            return Err("the sandbox was not called from a tokio runtime".to_owned());
        };
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.pending.set(self.pending.get() + 1);
        let events = self.events.clone();
        let task = handle.spawn(async move {
            let result = call.await;
            // The execution may have finished already; then nobody wants the result.
            let _ = events.send(Event::HostCall { id, result });
        });
        let mut tasks = self.tasks.borrow_mut();
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
        Ok(id)
    }

    /// A host call's result was handed to the script.
    pub(crate) fn settled(&self) {
        self.pending.set(self.pending.get().saturating_sub(1));
    }

    /// Host calls started and not yet settled.
    pub(crate) fn pending(&self) -> usize {
        self.pending.get()
    }

    /// `listTools()` as JSON.
    pub(crate) fn list_tools_json(&self) -> String {
        Value::Array(self.host.list_tools()).to_string()
    }
}

impl Drop for HostBridge {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().drain(..) {
            task.abort();
        }
    }
}

/// Parses JSON made by `JSON.stringify` inside the sandbox. That JSON may escape a lone UTF-16
/// surrogate (`"\ud800"`), which serde refuses; such escapes become U+FFFD, as they would in
/// any UTF-8 text.
pub(crate) fn parse_json(json: &str) -> serde_json::Result<Value> {
    match serde_json::from_str(json) {
        Ok(value) => Ok(value),
        Err(e) => match replace_lone_surrogates(json) {
            Some(fixed) => serde_json::from_str(&fixed),
            None => Err(e),
        },
    }
}

/// `json` with every `\uD800`–`\uDFFF` escape that is not half of a pair replaced by
/// `\uFFFD`; `None` if there was none.
fn replace_lone_surrogates(json: &str) -> Option<String> {
    fn escape_at(bytes: &[u8], at: usize) -> Option<u16> {
        if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        let hex = bytes.get(at + 2..at + 6)?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    }
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut changed = false;
    let mut copied = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(bytes, i) else {
            // Some other escape: skip it whole, so an escaped backslash is not read as one.
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => {
                let low = escape_at(bytes, i + 6);
                if low.is_some_and(|u| (0xDC00..=0xDFFF).contains(&u)) {
                    i += 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            out.push_str(json.get(copied..i).unwrap_or_default());
            out.push_str("\\ufffd");
            copied = i + 6;
            changed = true;
        }
        i += 6;
    }
    if !changed {
        return None;
    }
    out.push_str(json.get(copied..).unwrap_or_default());
    Some(out)
}

#[cfg(test)]
mod tests;
