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

use crate::console::ConsoleBuffer;
use crate::raw::{self, LazyIntrinsic};
use crate::{FetchRequest, HostCalls};

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
}

impl HostBridge {
    pub(crate) fn new(
        host: Arc<dyn HostCalls>,
        handle: Option<Handle>,
        events: mpsc::Sender<Event>,
    ) -> Self {
        HostBridge {
            host,
            handle,
            events,
            pending: Cell::new(0),
            next_id: Cell::new(1),
            tasks: RefCell::new(Vec::new()),
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
