//! Running tools: any visible tool through the whole pipeline, and the runs that store nothing
//! (`run_js_ephemeral`, the REST dry run) — capped, scrubbed and timed like a pipeline call.

use serde_json::{Map, Value};
use toolsmith_core::name::validate_custom_name;
use toolsmith_core::pipeline::cap_output;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{ErrorKind, ToolContext, ToolResult};

use super::ToolService;
use super::validation::normalize_parameters;
use crate::config_center::dependencies;
use crate::error::ServiceError;
use crate::execution::kinds::ExecutorSource;
use crate::input::{Actor, CreateTool, RunCode};

impl ToolService {
    /// Runs any tool the actor can see, through the whole pipeline.
    pub async fn execute(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        self.pipeline.execute_value(name, args, ctx).await
    }

    /// Runs code once in the sandbox without storing anything (`run_js_ephemeral`).
    pub async fn run_ephemeral(&self, actor: &Actor, run: RunCode) -> ToolResult {
        if let Err(e) = self.check_js_code(&run.code) {
            return ToolResult::error(ErrorKind::InvalidArguments, e.to_string());
        }
        let args = run.args.unwrap_or_else(|| Value::Object(Map::new()));
        if !args.is_object() {
            return ToolResult::error(ErrorKind::InvalidArguments, "args must be a JSON object");
        }
        let executor = self.js_executor(
            "ephemeral",
            run.code.into(),
            run.permissions.into_iter().collect(),
        );
        self.run_unregistered(&executor, args, actor).await
    }

    /// Validates a tool definition as `create` would and runs it once on `args`, storing nothing
    /// (the REST dry run, `testMode: true`).
    pub async fn test_tool(&self, actor: &Actor, input: CreateTool, args: Value) -> ToolResult {
        let checked = (|| {
            validate_custom_name(&input.name)
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
            self.check_description(&input.description)?;
            let parameters = normalize_parameters(input.parameters.clone())?;
            let checked = self.check_definition(
                input.kind,
                &input.code,
                parameters,
                input.permissions.iter().copied().collect(),
            )?;
            let schema = CompiledSchema::compile(&checked.parameters)
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
            let declared = dependencies::services_of(
                &actor.user_id,
                input.kind,
                &input.code,
                input.metadata.as_ref().unwrap_or(&Value::Null),
            )?
            .into_iter()
            .map(|s| s.name)
            .collect();
            let executor = self.executor_for(ExecutorSource {
                kind: input.kind,
                tool_id: "unsaved",
                name: &input.name,
                owner: &actor.user_id,
                code: &input.code,
                permissions: checked.permissions,
                declared,
            })?;
            Ok::<_, ServiceError>((schema, executor))
        })();
        let (schema, executor) = match checked {
            Ok(it) => it,
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
        };
        let violations = schema.violations(&args);
        if !violations.is_empty() {
            return ToolResult::error_with(
                ErrorKind::InvalidArguments,
                format!("invalid arguments for tool '{}'", input.name),
                toolsmith_core::schema::violation_details(&violations, schema.schema()),
            );
        }
        let mut res = self.run_unregistered(executor.as_ref(), args, actor).await;
        res.metadata
            .extra
            .insert("testMode".to_owned(), Value::Bool(true));
        res
    }

    async fn run_unregistered(
        &self,
        executor: &dyn toolsmith_core::ToolExecutor,
        args: Value,
        actor: &Actor,
    ) -> ToolResult {
        let started = std::time::Instant::now();
        let ctx = ToolContext::new(actor.user_id.clone());
        let res = executor.execute(args, &ctx).await;
        let mut res = cap_output(res, self.config.pipeline_limits.max_output_bytes);
        self.scrub.scrub(&actor.user_id, &mut res).await;
        res.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        res
    }
}
