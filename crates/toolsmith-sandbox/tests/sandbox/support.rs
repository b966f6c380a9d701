//! Helpers shared by the integration tests: small limits, test hosts, and one-line ways to run
//! code and check what came back.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, PermissionSet, ToolResult};
use toolsmith_sandbox::{HostCalls, JsCallContext, JsJob, JsLimits, JsSandbox, PoolSettings};

/// A host with no tools.
pub struct NoHost;

#[async_trait]
impl HostCalls for NoHost {
    async fn call_tool(&self, name: &str, _args: Value) -> Result<Value, String> {
        Err(format!("no tool named '{name}' in this test"))
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }
}

/// Limits small enough that every limit test ends fast.
pub fn small_limits() -> JsLimits {
    JsLimits {
        memory_bytes: 16 * 1024 * 1024,
        cpu_time: Duration::from_millis(200),
        wall_time: Duration::from_secs(5),
        max_stack_bytes: 256 * 1024,
        max_output_bytes: 64 * 1024,
        max_console_bytes: 4 * 1024,
    }
}

/// Small limits with a short wall clock and a CPU limit that cannot fire first.
pub fn wall_limits() -> JsLimits {
    JsLimits {
        cpu_time: Duration::from_secs(30),
        wall_time: Duration::from_millis(300),
        ..small_limits()
    }
}

/// A sandbox of its own, for tests that need to know what ran on it before.
pub fn sandbox() -> JsSandbox {
    JsSandbox::new(PoolSettings {
        workers: 2,
        max_in_flight: 64,
    })
}

/// One sandbox shared by the tests that only look at results.
pub fn shared() -> &'static JsSandbox {
    static SHARED: LazyLock<JsSandbox> = LazyLock::new(sandbox);
    &SHARED
}

pub fn context() -> JsCallContext {
    JsCallContext {
        tool_name: "test_tool".to_owned(),
        call_id: "call_1".to_owned(),
        conversation_id: Some("conv_1".to_owned()),
        user_id: "user_1".to_owned(),
    }
}

pub fn job(code: &str) -> JsJob {
    job_with(code, json!({}), small_limits(), Arc::new(NoHost))
}

pub fn job_with(code: &str, args: Value, limits: JsLimits, host: Arc<dyn HostCalls>) -> JsJob {
    JsJob {
        code: code.to_owned(),
        args,
        context: context(),
        permissions: PermissionSet::new(),
        limits,
        host,
        config: None,
        packages: None,
        env: None,
    }
}

/// Runs `code` on the shared sandbox with the small limits.
pub async fn run(code: &str) -> ToolResult {
    shared().run(job(code)).await
}

/// Runs `code` and returns its content, failing the test on an error result.
pub async fn value(code: &str) -> Value {
    let res = run(code).await;
    assert!(!res.is_error, "{code} failed: {}", res.content);
    res.content
}

/// Asserts that `res` failed with `kind`, and returns its message.
#[track_caller]
pub fn failed(res: &ToolResult, kind: ErrorKind) -> String {
    assert!(
        res.is_error,
        "expected {kind}, got success: {}",
        res.content
    );
    assert_eq!(res.error_kind(), Some(kind), "content: {}", res.content);
    assert_eq!(res.content["kind"], json!(kind.as_str()));
    res.error_message().unwrap_or_default().to_owned()
}

/// The proof that a sandbox still works after something went wrong in it.
pub async fn still_works(sandbox: &JsSandbox) {
    let res = sandbox
        .run(job("const a = [1, 2, 3]; return a.map(x => x * 2)"))
        .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!([2, 4, 6]));
}

/// The sandbox's execution threads alive now (nextest runs each test in a process of its own).
pub fn sandbox_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim() == "toolsmith-js")
        })
        .count()
}

/// Runs `work` while a thread samples [`sandbox_threads`] every 0.5 ms; returns its output and
/// the most threads seen.
pub async fn most_sandbox_threads_during<T>(
    work: impl std::future::Future<Output = T>,
) -> (T, usize) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let done = Arc::new(AtomicBool::new(false));
    let sampler = std::thread::spawn({
        let done = done.clone();
        move || {
            let mut most = 0;
            while !done.load(Ordering::SeqCst) {
                most = most.max(sandbox_threads());
                std::thread::sleep(Duration::from_micros(500));
            }
            most
        }
    });
    let output = work.await;
    done.store(true, Ordering::SeqCst);
    let most = sampler.join().expect("the sampler thread");
    (output, most)
}
