//! The pipeline end to end with small in-test executors: argument parsing and validation,
//! middleware order and refusals, the output cap, panics, cancellation, nested-call rules and
//! batches.

use super::*;

use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use crate::model::{Permission, PermissionSet, ToolDefinition, ToolExecutor};
use crate::registry::ToolOrigin;

/// Returns its arguments.
struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::ok(args)
    }
}

/// Panics.
struct Panics;

#[async_trait]
impl ToolExecutor for Panics {
    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> ToolResult {
        panic!("boom");
    }
}

/// Sleeps for `ms` milliseconds, then answers.
struct Slow;

#[async_trait]
impl ToolExecutor for Slow {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(10_000);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ToolResult::ok(json!({"slept": ms}))
    }
}

/// Returns a string of `size` bytes.
struct Big;

#[async_trait]
impl ToolExecutor for Big {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        let size = args.get("size").and_then(Value::as_u64).unwrap_or(0);
        let mut res = ToolResult::ok(json!({"data": "x".repeat(usize::try_from(size).unwrap())}));
        res.metadata.console.push(crate::model::ConsoleEntry {
            level: crate::model::ConsoleLevel::Log,
            message: "made it".into(),
        });
        res
    }
}

/// Fails with an execution error.
struct Fails;

#[async_trait]
impl ToolExecutor for Fails {
    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::error(ErrorKind::ExecutionError, "it broke")
    }
}

/// Records that it ran in a shared log.
struct Logs(Arc<Mutex<Vec<String>>>);

#[async_trait]
impl ToolExecutor for Logs {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        self.0.lock().unwrap().push("exec".into());
        ToolResult::ok(args)
    }
}

fn echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "What to echo."},
            "times": {"type": "integer", "minimum": 1, "maximum": 3}
        },
        "required": ["text"],
        "additionalProperties": false
    })
}

fn tool(
    name: &str,
    parameters: Value,
    permissions: &[Permission],
    executor: Arc<dyn ToolExecutor>,
) -> RegisteredTool {
    RegisteredTool::new(
        ToolDefinition::new(name, name, parameters),
        ToolOrigin::BuiltIn {
            provider: "test".into(),
        },
        permissions.iter().copied().collect(),
        executor,
    )
    .unwrap()
}

fn open() -> Value {
    json!({"type": "object"})
}

fn registry() -> Arc<ToolRegistry> {
    let registry = ToolRegistry::default();
    for t in [
        tool("echo", echo_schema(), &[], Arc::new(Echo)),
        tool("panics", open(), &[], Arc::new(Panics)),
        tool("slow", open(), &[], Arc::new(Slow)),
        tool("big", open(), &[], Arc::new(Big)),
        tool("fails", open(), &[], Arc::new(Fails)),
        tool(
            "fetch",
            open(),
            &[Permission::Network, Permission::Filesystem],
            Arc::new(Echo),
        ),
    ] {
        registry.register_builtin(t).unwrap();
    }
    registry
        .upsert_custom(
            RegisteredTool::new(
                ToolDefinition::new("private", "alice's", open()),
                ToolOrigin::Custom {
                    id: "p1".into(),
                    owner: "alice".into(),
                },
                PermissionSet::new(),
                Arc::new(Echo),
            )
            .unwrap(),
        )
        .unwrap();
    Arc::new(registry)
}

fn pipeline() -> Pipeline {
    Pipeline::new(registry(), PipelineLimits::default())
}

async fn run(p: &Pipeline, name: &str, args: &str) -> ToolResult {
    p.execute(name, args, ToolContext::new("default")).await
}

fn kind(res: &ToolResult) -> Option<ErrorKind> {
    res.error_kind()
}

#[test]
fn default_limits() {
    let limits = PipelineLimits::default();
    assert_eq!(limits.max_output_bytes, 1024 * 1024);
    assert_eq!(limits.max_call_depth, 4);
    let p = pipeline();
    assert_eq!(p.limits(), limits);
    assert_eq!(p.registry().stats().builtin, 6);
}

#[tokio::test]
async fn a_valid_call_returns_the_executor_result() {
    let p = pipeline();
    let res = run(&p, "echo", r#"{"text":"hi","times":2}"#).await;
    assert!(!res.is_error);
    assert_eq!(res.content, json!({"text": "hi", "times": 2}));
    assert_eq!(res.error_kind(), None);
    assert!(res.metadata.duration_ms >= 0.0);
}

#[tokio::test]
async fn malformed_json_is_invalid_arguments() {
    let p = pipeline();
    for args in [
        r#"{"text": "#,
        "{text: 1}",
        "nope",
        r#"{"text":"a"} trailing"#,
    ] {
        let res = run(&p, "echo", args).await;
        assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments), "{args}");
        let message = res.error_message().unwrap();
        assert!(message.contains("not valid JSON"), "{message}");
        assert!(message.contains("'echo'"), "{message}");
    }
}

#[tokio::test]
async fn arguments_must_be_an_object() {
    let p = pipeline();
    for args in ["[]", "\"text\"", "42", "null", "true"] {
        let res = run(&p, "echo", args).await;
        assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments), "{args}");
        assert_eq!(
            res.error_message().unwrap(),
            "arguments for tool 'echo' must be a JSON object"
        );
    }
    // Even a tool with an open schema never sees a non-object.
    let res = run(&p, "slow", "[1, 2]").await;
    assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments));
}

#[tokio::test]
async fn empty_argument_text_means_no_arguments() {
    let p = pipeline();
    for args in ["", "   ", "\n\t"] {
        let res = run(&p, "big", args).await;
        assert!(!res.is_error, "{args:?}: {:?}", res.content);
        assert_eq!(res.content, json!({"data": ""}));
    }
    // ... which a schema with required properties then refuses.
    let res = run(&p, "echo", "").await;
    assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments));
}

#[tokio::test]
async fn unknown_tool_is_not_found() {
    let p = pipeline();
    let res = run(&p, "nope", "{}").await;
    assert!(res.is_error);
    assert_eq!(kind(&res), Some(ErrorKind::NotFound));
    assert_eq!(res.error_message().unwrap(), "no tool named 'nope'");
    assert_eq!(res.content["kind"], "not_found");
    assert!(res.metadata.duration_ms >= 0.0);
}

#[tokio::test]
async fn custom_tools_are_visible_to_their_owner_only() {
    let p = pipeline();
    let res = run(&p, "private", "{}").await;
    assert_eq!(kind(&res), Some(ErrorKind::NotFound));
    let res = p
        .execute("private", r#"{"a":1}"#, ToolContext::new("alice"))
        .await;
    assert_eq!(res.content, json!({"a": 1}));
}

#[tokio::test]
async fn schema_violations_are_listed_with_pointers_and_the_schema() {
    let p = pipeline();
    let res = run(&p, "echo", r#"{"text": 5, "times": 9}"#).await;
    assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments));
    let violations = res.content["violations"].as_array().unwrap();
    let mut paths: Vec<&str> = violations
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/text", "/times"]);
    for v in violations {
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        assert!(
            v["schemaPath"].as_str().is_some_and(|m| !m.is_empty()),
            "{v}"
        );
    }
    assert_eq!(res.content["schema"], echo_schema());
    let message = res.error_message().unwrap();
    assert!(
        message.starts_with("invalid arguments for tool 'echo': "),
        "{message}"
    );
    assert!(
        message.contains("/text: ") && message.contains("/times: "),
        "{message}"
    );
}

#[tokio::test]
async fn a_missing_required_property_points_at_the_root() {
    let p = pipeline();
    let res = run(&p, "echo", "{}").await;
    assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments));
    assert_eq!(res.content["violations"][0]["path"], "");
    let message = res.error_message().unwrap();
    assert!(message.contains("/: "), "{message}");
    assert!(message.contains("text"), "{message}");
}

#[tokio::test]
async fn a_misplaced_argument_is_refused() {
    let p = pipeline();
    let res = run(&p, "echo", r#"{"text": "hi", "txet": "oops"}"#).await;
    assert_eq!(kind(&res), Some(ErrorKind::InvalidArguments));
    let violations = res.content["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(
        violations[0]["message"].as_str().unwrap().contains("txet"),
        "{violations:?}"
    );
    assert_eq!(res.content["schema"]["additionalProperties"], false);
}

/// Logs its hooks; optionally refuses in `before` or rewrites arguments / results.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    refuse: bool,
    set_text: Option<&'static str>,
}

impl Recorder {
    fn new(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Recorder {
        Recorder {
            name,
            log: log.clone(),
            refuse: false,
            set_text: None,
        }
    }
}

#[async_trait]
impl Middleware for Recorder {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn before(&self, call: &mut Call) -> Result<(), ToolResult> {
        self.log
            .lock()
            .unwrap()
            .push(format!("before:{}", self.name));
        if let Some(text) = self.set_text {
            call.args["text"] = json!(text);
        }
        if self.refuse {
            return Err(ToolResult::error(
                ErrorKind::Denied,
                format!("{} says no", self.name),
            ));
        }
        Ok(())
    }

    async fn after(&self, call: &Call, result: &mut ToolResult) {
        self.log.lock().unwrap().push(format!(
            "after:{}:{}:{}",
            self.name,
            call.tool.name(),
            result.error_kind().map_or("ok", ErrorKind::as_str)
        ));
        result
            .metadata
            .extra
            .insert(format!("seen_by_{}", self.name), json!(true));
    }
}

fn logging_registry(log: &Arc<Mutex<Vec<String>>>) -> Arc<ToolRegistry> {
    let registry = ToolRegistry::default();
    registry
        .register_builtin(tool(
            "logged",
            echo_schema(),
            &[],
            Arc::new(Logs(log.clone())),
        ))
        .unwrap();
    Arc::new(registry)
}

#[tokio::test]
async fn middleware_runs_before_in_order_and_after_in_reverse() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let p = Pipeline::new(logging_registry(&log), PipelineLimits::default())
        .with_middleware(Arc::new(Recorder::new("m1", &log)))
        .with_middleware(Arc::new(Recorder::new("m2", &log)));
    let res = run(&p, "logged", r#"{"text":"hi"}"#).await;
    assert!(!res.is_error);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "before:m1",
            "before:m2",
            "exec",
            "after:m2:logged:ok",
            "after:m1:logged:ok"
        ]
    );
    assert_eq!(res.metadata.extra["seen_by_m1"], true);
    assert_eq!(res.metadata.extra["seen_by_m2"], true);
    let debug = format!("{p:?}");
    assert!(debug.contains("m1") && debug.contains("m2"), "{debug}");
}

#[tokio::test]
async fn a_refusal_skips_the_executor_but_entered_middleware_still_sees_it() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut refuser = Recorder::new("m2", &log);
    refuser.refuse = true;
    let p = Pipeline::new(logging_registry(&log), PipelineLimits::default())
        .with_middleware(Arc::new(Recorder::new("m1", &log)))
        .with_middleware(Arc::new(refuser))
        .with_middleware(Arc::new(Recorder::new("m3", &log)));
    let res = run(&p, "logged", r#"{"text":"hi"}"#).await;
    assert_eq!(kind(&res), Some(ErrorKind::Denied));
    assert_eq!(res.error_message().unwrap(), "m2 says no");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "before:m1",
            "before:m2",
            "after:m2:logged:denied",
            "after:m1:logged:denied"
        ]
    );
    assert!(!res.metadata.extra.contains_key("seen_by_m3"));
}

#[tokio::test]
async fn middleware_does_not_run_for_calls_refused_earlier() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let p = Pipeline::new(logging_registry(&log), PipelineLimits::default())
        .with_middleware(Arc::new(Recorder::new("m1", &log)));
    assert_eq!(
        kind(&run(&p, "nope", "{}").await),
        Some(ErrorKind::NotFound)
    );
    assert_eq!(
        kind(&run(&p, "logged", "{}").await),
        Some(ErrorKind::InvalidArguments)
    );
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn middleware_can_rewrite_arguments() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut rewriter = Recorder::new("scrub", &log);
    rewriter.set_text = Some("[redacted]");
    let p =
        Pipeline::new(registry(), PipelineLimits::default()).with_middleware(Arc::new(rewriter));
    let res = run(&p, "echo", r#"{"text":"secret","times":1}"#).await;
    assert_eq!(res.content, json!({"text": "[redacted]", "times": 1}));
}

#[tokio::test]
async fn output_over_the_cap_is_replaced_not_returned() {
    let limits = PipelineLimits {
        max_output_bytes: 100,
        ..PipelineLimits::default()
    };
    let p = Pipeline::new(registry(), limits);
    // {"data":"…"} is 11 bytes of framing.
    let res = run(&p, "big", r#"{"size": 89}"#).await;
    assert!(!res.is_error, "exactly at the cap is fine");
    let res = run(&p, "big", r#"{"size": 90}"#).await;
    assert_eq!(kind(&res), Some(ErrorKind::OutputTooLarge));
    assert_eq!(
        res.error_message().unwrap(),
        "tool output is 101 bytes, over the limit of 100 bytes"
    );
    assert!(
        !res.content_text().contains("xxxx"),
        "{}",
        res.content_text()
    );
    assert_eq!(
        res.metadata.console.len(),
        1,
        "the console survives the cap"
    );

    let p = pipeline();
    let res = run(&p, "big", r#"{"size": 2000000}"#).await;
    assert_eq!(kind(&res), Some(ErrorKind::OutputTooLarge));
    assert!(res.content_text().len() < 200);
}

#[test]
fn cap_output_counts_strings_raw_and_values_serialized() {
    let s = ToolResult::ok(json!("abcd"));
    assert!(!cap_output(s.clone(), 4).is_error);
    assert_eq!(
        cap_output(s, 3).error_kind(),
        Some(ErrorKind::OutputTooLarge)
    );
    let v = ToolResult::ok(json!({"a": "é"}));
    // {"a":"é"} is 10 bytes.
    assert!(!cap_output(v.clone(), 10).is_error);
    assert_eq!(
        cap_output(v, 9).error_kind(),
        Some(ErrorKind::OutputTooLarge)
    );
}

#[tokio::test]
async fn a_panicking_executor_is_an_internal_error() {
    let p = pipeline();
    let res = run(&p, "panics", "{}").await;
    assert!(res.is_error);
    assert_eq!(kind(&res), Some(ErrorKind::Internal));
    assert_eq!(
        res.error_message().unwrap(),
        "tool 'panics' failed inside Toolsmith"
    );
    assert!(!res.content_text().contains("boom"));
    // The pipeline is still usable.
    assert!(!run(&p, "echo", r#"{"text":"x"}"#).await.is_error);
}

/// On the paused clock the cancel comes 50 ms into the 10 s call, whatever the machine's load:
/// virtual time moves only once the call is parked in its executor.
#[tokio::test(start_paused = true)]
async fn cancellation_ends_the_call() {
    let p = pipeline();
    let ctx = ToolContext::new("default");
    let token = ctx.cancellation.clone();
    let started = tokio::time::Instant::now();
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    };
    let (res, ()) = tokio::join!(p.execute("slow", r#"{"ms": 10000}"#, ctx), cancel);
    assert_eq!(kind(&res), Some(ErrorKind::Cancelled));
    assert_eq!(res.error_message().unwrap(), "the call was cancelled");
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(50),
        "cut off mid-call"
    );

    // Already cancelled: the executor never runs.
    let ctx = ToolContext::new("default");
    ctx.cancellation.cancel();
    let res = p.execute("echo", r#"{"text":"x"}"#, ctx).await;
    assert_eq!(kind(&res), Some(ErrorKind::Cancelled));

    // A nested call inherits its caller's cancellation.
    let outer = ToolContext::new("default");
    let nested = outer.nested(PermissionSet::new(), None);
    outer.cancellation.cancel();
    let res = p.execute("echo", r#"{"text":"x"}"#, nested).await;
    assert_eq!(kind(&res), Some(ErrorKind::Cancelled));
}

#[tokio::test]
async fn a_slow_call_finishes_when_not_cancelled() {
    let p = pipeline();
    let res = run(&p, "slow", r#"{"ms": 20}"#).await;
    assert_eq!(res.content, json!({"slept": 20}));
    assert!(
        res.metadata.duration_ms >= 20.0,
        "{}",
        res.metadata.duration_ms
    );
}

#[tokio::test]
async fn call_depth_is_limited() {
    let p = pipeline();
    let mut ctx = ToolContext::new("default");
    let all: PermissionSet = Permission::ALL.into_iter().collect();
    for depth in 1..=4 {
        ctx = ctx.nested(all.clone(), None);
        assert_eq!(ctx.depth, depth);
        let res = p.execute("echo", r#"{"text":"x"}"#, ctx.clone()).await;
        assert!(!res.is_error, "depth {depth}: {:?}", res.content);
    }
    ctx = ctx.nested(all, None);
    assert_eq!(ctx.depth, 5);
    let res = p.execute("echo", r#"{"text":"x"}"#, ctx).await;
    assert_eq!(kind(&res), Some(ErrorKind::Denied));
    let message = res.error_message().unwrap();
    assert!(message.contains("depth limit"), "{message}");
    assert!(message.contains("limit 4"), "{message}");
}

#[tokio::test]
async fn a_nested_call_may_not_gain_permissions() {
    let p = pipeline();
    let outer = ToolContext::new("default");

    let only_network = outer.nested(PermissionSet::from([Permission::Network]), None);
    let res = p.execute("fetch", "{}", only_network).await;
    assert_eq!(kind(&res), Some(ErrorKind::Denied));
    let message = res.error_message().unwrap();
    assert!(message.contains("filesystem"), "{message}");
    assert!(!message.contains("network"), "{message}");

    let none = outer.nested(PermissionSet::new(), None);
    let res = p.execute("fetch", "{}", none.clone()).await;
    assert_eq!(kind(&res), Some(ErrorKind::Denied));
    // A tool needing nothing is always reachable.
    assert!(!p.execute("echo", r#"{"text":"x"}"#, none).await.is_error);

    let enough = outer.nested(
        PermissionSet::from([
            Permission::Network,
            Permission::Filesystem,
            Permission::Shell,
        ]),
        None,
    );
    assert!(!p.execute("fetch", "{}", enough).await.is_error);
    // Calls from outside carry no grant and are not limited by it.
    assert!(!p.execute("fetch", "{}", outer).await.is_error);
}

#[tokio::test]
async fn a_batch_keeps_results_independent_and_in_order() {
    let p = pipeline();
    let call = |name: &str, args: Value| BatchCall {
        name: name.to_owned(),
        args,
        ctx: ToolContext::new("default"),
    };
    let results = p
        .execute_batch(vec![
            call("slow", json!({"ms": 100})),
            call("echo", json!({"text": "one"})),
            call("fails", json!({})),
            call("panics", json!({})),
            call("nope", json!({})),
            call("echo", json!({"text": 1})),
            call("slow", json!({"ms": 100})),
            call("echo", json!({"text": "two"})),
        ])
        .await;
    let kinds: Vec<Option<ErrorKind>> = results.iter().map(ToolResult::error_kind).collect();
    assert_eq!(
        kinds,
        [
            None,
            None,
            Some(ErrorKind::ExecutionError),
            Some(ErrorKind::Internal),
            Some(ErrorKind::NotFound),
            Some(ErrorKind::InvalidArguments),
            None,
            None
        ]
    );
    assert_eq!(results[0].content, json!({"slept": 100}));
    assert_eq!(results[1].content, json!({"text": "one"}));
    assert_eq!(results[2].error_message().unwrap(), "it broke");
    assert_eq!(results[7].content, json!({"text": "two"}));
    assert!(results.iter().all(|r| r.metadata.duration_ms >= 0.0));
    assert!(results[0].metadata.duration_ms >= 100.0);

    assert!(p.execute_batch(Vec::new()).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_batch_runs_its_calls_at_once() {
    let p = pipeline();
    let calls = (0..5)
        .map(|_| BatchCall {
            name: "slow".to_owned(),
            args: json!({"ms": 1000}),
            ctx: ToolContext::new("default"),
        })
        .collect();
    let started = tokio::time::Instant::now();
    let results = p.execute_batch(calls).await;
    // On the paused clock, five one-second sleeps side by side take one second, not five.
    assert_eq!(started.elapsed(), Duration::from_millis(1000));
    assert!(results.iter().all(|r| r.content == json!({"slept": 1000})));
}

#[tokio::test]
async fn duration_is_filled_on_every_path() {
    let p = pipeline();
    let results = [
        run(&p, "slow", r#"{"ms": 30}"#).await,
        run(&p, "echo", "not json").await,
        run(&p, "nope", "").await,
        run(&p, "panics", "").await,
    ];
    assert!(results[0].metadata.duration_ms >= 30.0);
    for res in &results {
        assert!(res.metadata.duration_ms.is_finite() && res.metadata.duration_ms >= 0.0);
    }
    let res = p
        .execute_value("slow", json!({"ms": 15}), ToolContext::new("default"))
        .await;
    assert!(res.metadata.duration_ms >= 15.0);
}
