//! Every hard limit: each ends with its own error kind and message, and the same sandbox runs
//! the next call normally afterwards.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolsmith_core::ErrorKind;
use toolsmith_sandbox::JsLimits;

use crate::support::*;

/// Runs `code` with `limits` on a fresh sandbox, checks the kind and message, then checks that
/// the sandbox still works.
async fn check_limit(code: &str, limits: JsLimits, kind: ErrorKind, message: &str) {
    let sandbox = sandbox();
    let res = sandbox
        .run(job_with(code, json!({}), limits, Arc::new(NoHost)))
        .await;
    assert_eq!(failed(&res, kind), message, "code: {code}");
    still_works(&sandbox).await;
}

const MEMORY: &str = "the tool used more memory than its limit of 16 MB";
const CPU: &str = "the tool used more CPU time than its limit of 200 ms";
const WALL: &str = "the tool did not finish within its time limit of 300 ms";

#[tokio::test]
async fn a_growing_array_hits_the_memory_limit() {
    check_limit(
        "const a = []; while (true) a.push({ n: a.length, s: 'y'.repeat(64) + a.length })",
        small_limits(),
        ErrorKind::MemoryLimit,
        MEMORY,
    )
    .await;
}

#[tokio::test]
async fn a_100_mb_string_hits_the_memory_limit() {
    check_limit(
        "return 'x'.repeat(1e8).length",
        small_limits(),
        ErrorKind::MemoryLimit,
        MEMORY,
    )
    .await;
}

#[tokio::test]
async fn catching_the_out_of_memory_error_does_not_hide_it() {
    check_limit(
        "let caught = 0; for (let i = 0; i < 3; i++) { try { 'x'.repeat(1e8) } catch (e) { caught++ } } return caught",
        small_limits(),
        ErrorKind::MemoryLimit,
        MEMORY,
    )
    .await;
}

#[tokio::test]
async fn an_endless_loop_hits_the_cpu_limit() {
    check_limit("while (true) {}", small_limits(), ErrorKind::CpuLimit, CPU).await;
}

#[tokio::test]
async fn an_endless_loop_hits_the_wall_clock_when_cpu_is_plentiful() {
    check_limit("while (true) {}", wall_limits(), ErrorKind::Timeout, WALL).await;
}

#[tokio::test]
async fn an_endless_async_loop_hits_the_cpu_limit() {
    check_limit(
        "let n = 0; while (true) { await null; n++ }",
        small_limits(),
        ErrorKind::CpuLimit,
        CPU,
    )
    .await;
}

#[tokio::test]
async fn an_endless_async_loop_hits_the_wall_clock() {
    check_limit(
        "async function spin() { while (true) { await Promise.resolve() } } await spin()",
        wall_limits(),
        ErrorKind::Timeout,
        WALL,
    )
    .await;
}

#[tokio::test]
async fn catching_the_interrupt_does_not_keep_the_script_alive() {
    check_limit(
        "try { while (true) {} } catch (e) {} return 'escaped'",
        small_limits(),
        ErrorKind::CpuLimit,
        CPU,
    )
    .await;
    check_limit(
        "for (;;) { try { while (true) {} } catch (e) { } finally { continue } }",
        small_limits(),
        ErrorKind::CpuLimit,
        CPU,
    )
    .await;
    check_limit(
        "async function f() { while (true) {} } try { await f() } catch (e) { } while (true) {}",
        small_limits(),
        ErrorKind::CpuLimit,
        CPU,
    )
    .await;
}

#[tokio::test]
async fn a_catastrophic_regex_hits_the_cpu_limit() {
    check_limit(
        "return /(a+)+$/.test('a'.repeat(40) + '!')",
        small_limits(),
        ErrorKind::CpuLimit,
        CPU,
    )
    .await;
}

#[tokio::test]
async fn deep_recursion_hits_the_stack_limit() {
    let sandbox = sandbox();
    let res = sandbox
        .run(job(
            "function down(n) { return down(n + 1) + 1 }\nreturn down(0)",
        ))
        .await;
    assert_eq!(
        failed(&res, ErrorKind::StackOverflow),
        "the tool went deeper than its stack limit of 256 KB (runaway recursion?): RangeError: Maximum call stack size exceeded"
    );
    assert_eq!(res.content["stack"], json!("at down (tool.js:1:35)"));
    still_works(&sandbox).await;
}

#[tokio::test]
async fn a_10_mb_result_is_too_large() {
    let limits = JsLimits {
        memory_bytes: 64 * 1024 * 1024,
        max_output_bytes: 1024 * 1024,
        ..small_limits()
    };
    check_limit(
        "return 'x'.repeat(10 * 1024 * 1024)",
        limits,
        ErrorKind::OutputTooLarge,
        "the tool's result is 10485762 bytes or more as JSON, over the output limit of 1 MB",
    )
    .await;
}

#[tokio::test]
async fn a_result_just_over_the_limit_in_utf8_is_too_large() {
    let limits = JsLimits {
        max_output_bytes: 10,
        ..small_limits()
    };
    // 5 characters, 10 bytes of UTF-8 between the quotes.
    check_limit(
        "return 'ééééé'",
        limits,
        ErrorKind::OutputTooLarge,
        "the tool's result is 12 bytes or more as JSON, over the output limit of 10 bytes",
    )
    .await;
}

#[tokio::test]
async fn huge_console_output_is_cut_not_an_error() {
    let sandbox = sandbox();
    let res = sandbox
        .run(job(
            "for (let i = 0; i < 20000; i++) console.log('line ' + i + ' ' + 'z'.repeat(100)); return 'finished'",
        ))
        .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!("finished"));
    assert!(res.metadata.console_truncated);
    let kept: usize = res.metadata.console.iter().map(|e| e.message.len()).sum();
    assert_eq!(kept, 4 * 1024);
    assert_eq!(
        res.metadata.console[0].message,
        format!("line 0 {}", "z".repeat(100))
    );
    still_works(&sandbox).await;
}

#[tokio::test]
async fn one_huge_console_line_is_cut() {
    let res = run("console.log('q'.repeat(1e6)); return 1").await;
    assert_eq!(res.content, json!(1));
    assert!(res.metadata.console_truncated);
    assert_eq!(res.metadata.console.len(), 1);
    assert_eq!(res.metadata.console[0].message, "q".repeat(4096));
}

#[tokio::test]
async fn the_wall_clock_covers_awaits_that_never_end() {
    check_limit(
        "let n = 0; while (true) { await new Promise(r => r()); n++ }",
        wall_limits(),
        ErrorKind::Timeout,
        WALL,
    )
    .await;
}

#[tokio::test]
async fn a_promise_nothing_can_settle_ends_at_once() {
    let started = std::time::Instant::now();
    let res = run("await new Promise(() => {}); return 1").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the tool never finished: it awaits a promise that nothing can settle any more"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
