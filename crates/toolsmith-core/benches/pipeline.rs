//! The pipeline's own overhead: a built-in-like tool called directly through its executor
//! (the baseline) against the same tool through `Pipeline::execute` (parse the JSON arguments,
//! look up, validate against the schema, middleware, output cap), measured in one run.

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use toolsmith_core::{
    Pipeline, PipelineLimits, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor,
    ToolOrigin, ToolRegistry, ToolResult,
};

struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::ok(json!({"text": args["text"], "n": args["n"]}))
    }
}

fn pipeline() -> Pipeline {
    let registry = Arc::new(ToolRegistry::default());
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 1000}, "n": {"type": "integer", "minimum": 0}},
        "required": ["text"],
        "additionalProperties": false
    });
    let tool = RegisteredTool::new(
        ToolDefinition::new("echo", "echoes", schema),
        ToolOrigin::BuiltIn {
            provider: "bench".to_owned(),
        },
        Default::default(),
        Arc::new(Echo),
    )
    .expect("valid schema");
    registry.register_builtin(tool).expect("fresh registry");
    Pipeline::new(registry, PipelineLimits::default())
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().expect("tokio runtime");
    let pipeline = pipeline();
    let args_json = r#"{"text": "hello world", "n": 3}"#;
    let mut group = c.benchmark_group("pipeline_overhead");
    group.bench_function("executor_direct", |b| {
        b.to_async(&rt).iter(|| async {
            let args: Value = serde_json::from_str(black_box(args_json)).expect("json");
            black_box(Echo.execute(args, &ToolContext::new("default")).await)
        });
    });
    group.bench_function("through_pipeline", |b| {
        b.to_async(&rt).iter(|| async {
            let res = pipeline
                .execute("echo", black_box(args_json), ToolContext::new("default"))
                .await;
            assert!(!res.is_error);
            black_box(res)
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
