//! Code run once (`run_js_ephemeral`, `toolsmith run-code`) and dry runs of a definition (REST
//! `POST /api/v1/custom-tools/test`): calls through the pipeline like any other, never beside it.
//!
//! Each run is a call of a *one-off tool* that exists for that call only: `run_js_ephemeral` for
//! code run once, the definition's own name for a dry run. So the caller's identity and agent
//! meet the policy (which decides on that name, as a custom tool), the approval gate, the rate
//! limits and concurrency caps, the scrubber, usage analytics and telemetry, and the owner's
//! egress allowlist, exactly as a stored tool's call would; `utils.callTool` inside the code is
//! a nested call of the same caller.
//!
//! - Approval follows the permissions asked for: a run asking for `network`, `shell`,
//!   `filesystem` or `email` is marked `requires_approval`, unless a person who may create tools
//!   ([`RunRights::create_tools`]) runs it — the approval the tool's creation would need. The
//!   one-off tool's id (`ephemeral_…` / `unsaved_…`) is a hash of its kind, permissions and
//!   code, so an approval or an `allow_always` grant covers exactly that code.
//! - Secrets: code run once gets no Config Center values; a dry run gets the services its
//!   metadata declares only for a caller who may read them ([`RunRights::read_secrets`]).
//! - Every run is audited (`code.run`: the one-off tool's name and id, kind, permissions,
//!   outcome; never the code or the arguments).

use std::sync::Arc;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use toolsmith_core::name::validate_name;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{
    ErrorKind, Permission, PermissionSet, RegisteredTool, ToolContext, ToolDefinition,
    ToolExecutor, ToolKind, ToolOrigin, ToolResult,
};

use super::ToolService;
use super::validation::normalize_parameters;
use crate::config_center::dependencies;
use crate::error::ServiceError;
use crate::execution::kinds::ExecutorSource;
use crate::governance::audit::AuditTarget;
use crate::input::{Actor, CreateTool, RunCode};

/// The name of code run once, for the policy, the limits and the records.
pub const EPHEMERAL_TOOL: &str = "run_js_ephemeral";

/// The id prefix of a dry run's one-off tool (`unsaved_…`). Dry runs are not stored as
/// executions (the tool does not exist yet); the audit log's `code.run` keeps each.
pub(crate) const DRY_RUN_PREFIX: &str = "unsaved";

/// Whether `tool_id` is a dry run's one-off tool.
pub(crate) fn is_dry_run(tool_id: &str) -> bool {
    tool_id
        .strip_prefix(DRY_RUN_PREFIX)
        .is_some_and(|rest| rest.starts_with('_'))
}

/// What the caller of a one-off run may do beyond running it (the interface knows its scopes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunRights {
    /// May read the Config Center (an admin, the local operator): a dry run then gets the
    /// services its metadata declares. Otherwise it gets none.
    pub read_secrets: bool,
    /// A person who may create tools (`tools:write`, not an agent): a run asking for risky
    /// permissions then needs no more approval than creating that tool would. A model, or a
    /// caller who may only execute, needs a person's approval for such a run.
    pub create_tools: bool,
}

/// A one-off tool in the making.
struct OneOff<'a> {
    name: &'a str,
    /// `ephemeral` or `unsaved`.
    id_prefix: &'a str,
    description: String,
    kind: ToolKind,
    code: &'a str,
    parameters: Value,
    permissions: PermissionSet,
    executor: Arc<dyn ToolExecutor>,
    /// Code a model wrote (a resource template's): each run is marked `requiresApproval`, as a
    /// model's tool is.
    model_written: bool,
}

impl ToolService {
    /// Runs code once as a call of [`EPHEMERAL_TOOL`] by the caller of `ctx` (whose user is
    /// `actor`'s), storing nothing.
    pub async fn run_ephemeral(
        &self,
        actor: &Actor,
        run: RunCode,
        ctx: ToolContext,
        rights: RunRights,
    ) -> ToolResult {
        if let Err(e) = self.check_js_code(&run.code) {
            return ToolResult::error(ErrorKind::InvalidArguments, e.to_string());
        }
        let args = run.args.unwrap_or_else(|| Value::Object(Map::new()));
        if !args.is_object() {
            return ToolResult::error(ErrorKind::InvalidArguments, "args must be a JSON object");
        }
        let packages = if run.dependencies.is_empty() {
            None
        } else {
            let declared = json!({ super::npm::DEPENDENCIES: run.dependencies });
            match self.one_off_packages(ToolKind::Js, Some(&declared)).await {
                Ok(packages) => packages,
                Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
            }
        };
        let permissions: PermissionSet = run.permissions.into_iter().collect();
        let mut executor = self.js_executor_with_config(
            EPHEMERAL_TOOL,
            run.code.as_str().into(),
            permissions.clone(),
            actor.user_id.clone(),
            Vec::new(),
        );
        if let Some(ms) = run.timeout_ms {
            if !(1..=crate::tool_settings::MAX_TIMEOUT_MS).contains(&ms) {
                return ToolResult::error(
                    ErrorKind::InvalidArguments,
                    format!(
                        "timeoutMs must be from 1 to {} milliseconds, got {ms}",
                        crate::tool_settings::MAX_TIMEOUT_MS
                    ),
                );
            }
            // Shorter than the operator's `js_wall_time`, never longer.
            executor.limits.wall_time =
                std::time::Duration::from_millis(ms).min(executor.limits.wall_time);
        }
        executor.packages = packages;
        let one_off = OneOff {
            name: EPHEMERAL_TOOL,
            id_prefix: "ephemeral",
            description: "JavaScript run once".to_owned(),
            kind: ToolKind::Js,
            code: &run.code,
            parameters: json!({"type": "object"}),
            permissions,
            executor: Arc::new(executor),
            model_written: false,
        };
        self.run_one_off(actor, one_off, args, ctx, rights).await
    }

    /// Runs a resource template's code (`resources/user.rs`) once, as the reader's call of the
    /// one-off tool `resource_template`, with the URI's variables as `args` and no permission.
    /// `model_written`: a model wrote the template, so the run needs what a model's tool's run
    /// needs (`requiresApproval`).
    pub(crate) async fn run_template_code(
        &self,
        reader: &Actor,
        template: &str,
        code: &str,
        args: Value,
        ctx: ToolContext,
        model_written: bool,
    ) -> ToolResult {
        let name = crate::resources::user::TEMPLATE_TOOL;
        let executor = self.js_executor_with_config(
            name,
            code.into(),
            PermissionSet::new(),
            reader.user_id.clone(),
            Vec::new(),
        );
        let one_off = OneOff {
            name,
            id_prefix: "template",
            description: format!("The code of the resource template '{template}'"),
            kind: ToolKind::Js,
            code,
            parameters: json!({"type": "object"}),
            permissions: PermissionSet::new(),
            executor: Arc::new(executor),
            model_written,
        };
        self.run_one_off(reader, one_off, args, ctx, RunRights::default())
            .await
    }

    /// Validates a tool definition as `create` would and runs it once on `args` as a call of a
    /// tool of that name by the caller of `ctx`, storing nothing (the REST dry run,
    /// `testMode: true`).
    pub async fn test_tool(
        &self,
        actor: &Actor,
        input: CreateTool,
        args: Value,
        ctx: ToolContext,
        rights: RunRights,
    ) -> ToolResult {
        // The dependencies first (network): resolved and installed as a create would.
        let packages = match self
            .one_off_packages(input.kind, input.metadata.as_ref())
            .await
        {
            Ok(packages) => packages,
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
        };
        let checked = (|| {
            validate_name(&input.name, self.config.name_rule)
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
            // Checked whatever the rights, so a bad declaration fails the same for everyone.
            let declared: Vec<String> = dependencies::services_of(
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
                permissions: checked.permissions.clone(),
                declared: if rights.read_secrets {
                    declared
                } else {
                    Vec::new()
                },
                config_values: rights.read_secrets,
                timeout: input
                    .metadata
                    .as_ref()
                    .and_then(crate::tool_settings::timeout),
                packages,
            })?;
            Ok::<_, ServiceError>((schema, checked, executor))
        })();
        let (schema, checked, executor) = match checked {
            Ok(it) => it,
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
        };
        if let Err(invalid) = schema.check_call(&input.name, &args, |_| None) {
            return invalid;
        }
        let one_off = OneOff {
            name: &input.name,
            id_prefix: DRY_RUN_PREFIX,
            description: input.description.clone(),
            kind: input.kind,
            code: &input.code,
            parameters: checked.parameters,
            permissions: checked.permissions,
            executor,
            model_written: false,
        };
        let mut res = self.run_one_off(actor, one_off, args, ctx, rights).await;
        res.metadata
            .extra
            .insert("testMode".to_owned(), Value::Bool(true));
        res
    }

    /// Runs `one_off` through the pipeline for the caller of `ctx`, and audits the run.
    async fn run_one_off(
        &self,
        actor: &Actor,
        one_off: OneOff<'_>,
        args: Value,
        mut ctx: ToolContext,
        rights: RunRights,
    ) -> ToolResult {
        // The call is the actor's: an interface cannot run it in another user's name.
        ctx.user_id.clone_from(&actor.user_id);
        let risky = one_off
            .permissions
            .iter()
            .any(|p| p.is_dangerous() || *p == Permission::Network);
        let as_creator = rights.create_tools && !actor.is_llm();
        let id = one_off_id(
            one_off.id_prefix,
            one_off.kind,
            &one_off.permissions,
            one_off.code,
        );
        let tool = RegisteredTool::new(
            ToolDefinition::new(one_off.name, one_off.description, one_off.parameters),
            ToolOrigin::Custom {
                id: id.clone(),
                owner: actor.user_id.clone(),
            },
            one_off.permissions.clone(),
            one_off.executor,
        );
        let tool = match tool {
            Ok(tool) => tool.with_requires_approval(one_off.model_written || risky && !as_creator),
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
        };
        let res = self
            .pipeline
            .execute_unregistered(Arc::new(tool), args, ctx)
            .await;
        let permissions: Vec<&str> = one_off.permissions.iter().map(|p| p.as_str()).collect();
        self.audit
            .record(
                actor,
                "code.run",
                AuditTarget::new("code", id, Some(one_off.name.to_owned())),
                (None, None),
                json!({
                    "kind": one_off.kind, "permissions": permissions,
                    "outcome": res.error_kind().map_or("success", |k| k.as_str()),
                }),
            )
            .await;
        res
    }
}

/// The id of a one-off tool: `prefix_` and 16 hex digits of the SHA-256 of what it runs.
fn one_off_id(prefix: &str, kind: ToolKind, permissions: &PermissionSet, code: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(kind.as_str().as_bytes());
    for permission in permissions {
        hash.update(b"\0");
        hash.update(permission.as_str().as_bytes());
    }
    hash.update(b"\0\0");
    hash.update(code.as_bytes());
    // The first 8 bytes of the digest: 16 hex digits.
    let digest = hash.finalize();
    format!(
        "{prefix}_{}",
        hex::encode(digest.get(..8).unwrap_or_default())
    )
}
