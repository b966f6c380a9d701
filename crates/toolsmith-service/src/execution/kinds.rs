//! What each tool kind means to the lifecycle: the checks a definition of that kind passes on
//! create, update and dry run, the permissions the kind implies, and the executor that runs it.
//!
//! | kind | `code` holds | implied permissions | parameters |
//! | --- | --- | --- | --- |
//! | `js` | the body of an async function | — | as given |
//! | `command` | a [`CommandToolSpec`] as JSON | `shell` (+ `network` if the spec asks) | as given; every placeholder must be one of them |
//! | `http` | a spec-004 definition, YAML or JSON | `network` | derived from the definition's `explicit` parameters |
//!
//! The implied permissions are what make an LLM-created command or HTTP tool wait for approval
//! (they are dangerous permissions), whatever the caller declared.

use std::sync::Arc;

use serde_json::Value;
use toolsmith_command::CommandToolSpec;
use toolsmith_core::model::Effect;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{
    CustomToolRecord, Permission, PermissionSet, ToolDefinition, ToolExecutor, ToolKind,
};
use toolsmith_httptool::{HttpToolDefinition, Method, SecurityRules};

use crate::error::ServiceError;
use crate::execution::command_tool::CommandToolExecutor;
use crate::execution::http_tool::HttpToolExecutor;
use crate::service::ToolService;

/// A definition that passed its kind's checks.
pub(crate) struct CheckedDefinition {
    pub parameters: Value,
    pub permissions: PermissionSet,
}

/// What a tool's executor is made from.
pub(crate) struct ExecutorSource<'a> {
    pub kind: ToolKind,
    /// The tool's id (`"unsaved"` for a dry run): secrets in its env are bound to it.
    pub tool_id: &'a str,
    pub name: &'a str,
    pub owner: &'a str,
    pub code: &'a str,
    pub permissions: PermissionSet,
    /// The Config Center services the tool declares.
    pub declared: Vec<String>,
    /// Whether an HTTP tool's `store.*` values come from the owner's Config Center (a stored
    /// tool; a dry run by a caller who may read it) or are all absent.
    pub config_values: bool,
    /// The tool's own wall-clock limit (`metadata.timeoutMs`, JS tools): it may shorten the
    /// server's `js_wall_time`, never lengthen it (the operator's limit is the ceiling).
    pub timeout: Option<std::time::Duration>,
    /// The npm packages a JS tool resolved (`metadata.packageLock`).
    pub packages: Option<Arc<crate::packages::PackageLock>>,
}

impl ToolService {
    /// Checks `code` as a definition of `kind` and settles its parameters and permissions.
    pub(crate) fn check_definition(
        &self,
        kind: ToolKind,
        code: &str,
        parameters: Value,
        mut permissions: PermissionSet,
    ) -> Result<CheckedDefinition, ServiceError> {
        if code.len() > self.config().max_code_bytes {
            return Err(ServiceError::TooLarge(format!(
                "tool code is {} bytes, over the limit of {} bytes",
                code.len(),
                self.config().max_code_bytes
            )));
        }
        let parameters = match kind {
            ToolKind::Js => {
                self.check_js_code(code)?;
                parameters
            }
            ToolKind::Command => {
                let spec = command_spec(code)?;
                permissions.insert(Permission::Shell);
                if spec.network {
                    permissions.insert(Permission::Network);
                }
                check_placeholders_declared(&spec, &parameters)?;
                parameters
            }
            ToolKind::Http => {
                let definition = http_definition(code)?;
                let violations = toolsmith_httptool::validate_security(
                    &definition,
                    &self.http_rules(),
                    &|_origin: &str| Ok(()),
                );
                if !violations.is_empty() {
                    return Err(violations_error(
                        "the HTTP tool",
                        violations
                            .iter()
                            .map(|v| format!("{}: {}", v.path, v.message)),
                    ));
                }
                permissions.insert(Permission::Network);
                toolsmith_httptool::parameters_schema(&definition)
            }
        };
        CompiledSchema::compile(&parameters)
            .map_err(|e| ServiceError::Validation(e.to_string()))?;
        Ok(CheckedDefinition {
            parameters,
            permissions,
        })
    }

    /// A command tool's code with every `env` value sealed (values already sealed stay), so
    /// the store never holds them in plaintext. Other kinds' code is returned as it is.
    pub(crate) fn seal_command_env(
        &self,
        kind: ToolKind,
        owner: &str,
        tool_id: &str,
        code: String,
    ) -> Result<String, ServiceError> {
        if kind != ToolKind::Command {
            return Ok(code);
        }
        let mut spec = command_spec(&code)?;
        if spec.env.is_empty() {
            return Ok(code);
        }
        let cipher = self.config_cache().cipher().ok_or_else(|| {
            ServiceError::InvalidState(
                "no secret key is configured, so a command tool's env cannot be stored".to_owned(),
            )
        })?;
        for (name, value) in spec.env.iter_mut() {
            if value.starts_with(toolsmith_secrets::SEALED_PREFIX) {
                continue;
            }
            *value = cipher
                .seal(value, &env_place(owner, tool_id, name))
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
        }
        serde_json::to_string(&spec).map_err(|e| ServiceError::Validation(e.to_string()))
    }

    /// A command tool's code with its sealed `env` values bound to owner `to` instead of
    /// `from` (a tool moving between owners: each value is sealed to its owner, tool and
    /// name). Other kinds' code, and code without sealed values, is returned as it is.
    pub(crate) fn reseal_command_env(
        &self,
        kind: ToolKind,
        tool_id: &str,
        (from, to): (&str, &str),
        code: String,
    ) -> Result<String, ServiceError> {
        if kind != ToolKind::Command {
            return Ok(code);
        }
        let mut spec = command_spec(&code)?;
        let sealed = |v: &String| v.starts_with(toolsmith_secrets::SEALED_PREFIX);
        if !spec.env.values().any(sealed) {
            return Ok(code);
        }
        let cipher = self.config_cache().cipher().ok_or_else(|| {
            ServiceError::InvalidState("no secret key to open the tool's env".to_owned())
        })?;
        for (name, value) in spec.env.iter_mut().filter(|(_, v)| sealed(v)) {
            let plain = cipher
                .open(value, &env_place(from, tool_id, name))
                .map_err(|e| ServiceError::Validation(format!("cannot open env {name}: {e}")))?;
            *value = cipher
                .seal(plain.as_ref(), &env_place(to, tool_id, name))
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
        }
        serde_json::to_string(&spec).map_err(|e| ServiceError::Validation(e.to_string()))
    }

    /// The executor of a stored definition; an error if it no longer passes its checks.
    pub(crate) fn executor_for(
        &self,
        source: ExecutorSource<'_>,
    ) -> Result<Arc<dyn ToolExecutor>, ServiceError> {
        let ExecutorSource {
            kind,
            tool_id,
            name,
            owner,
            code,
            permissions,
            declared,
            config_values,
            timeout,
            packages,
        } = source;
        Ok(match kind {
            ToolKind::Js => {
                let mut executor = self.js_executor_with_config(
                    name,
                    code.into(),
                    permissions,
                    owner.to_owned(),
                    declared,
                );
                if let Some(timeout) = timeout {
                    executor.limits.wall_time = timeout.min(executor.limits.wall_time);
                }
                executor.packages = packages;
                Arc::new(executor)
            }
            ToolKind::Command => {
                let mut spec = command_spec(code)?;
                for (env_name, value) in spec.env.iter_mut() {
                    if !value.starts_with(toolsmith_secrets::SEALED_PREFIX) {
                        continue;
                    }
                    let cipher = self.config_cache().cipher().ok_or_else(|| {
                        ServiceError::InvalidState(
                            "no secret key to open the tool's env".to_owned(),
                        )
                    })?;
                    *value = cipher
                        .open(value, &env_place(owner, tool_id, env_name))
                        .map_err(|e| {
                            ServiceError::Validation(format!("cannot open env {env_name}: {e}"))
                        })?
                        .to_string();
                }
                let template = spec
                    .validate()
                    .map_err(|e| ServiceError::Validation(e.to_string()))?;
                Arc::new(CommandToolExecutor {
                    runtime: self.command_runtime().clone(),
                    tool_name: name.to_owned(),
                    spec,
                    template,
                })
            }
            ToolKind::Http => Arc::new(HttpToolExecutor {
                tool_name: name.to_owned(),
                owner: owner.to_owned(),
                definition: Arc::new(http_definition(code)?),
                sender: self.http_sender_for(owner),
                values: if config_values {
                    self.config_cache().clone()
                } else {
                    Arc::new(crate::execution::http_tool::NoStoreValues)
                },
                rules: self.http_rules(),
            }),
        })
    }

    pub(crate) fn http_rules(&self) -> SecurityRules {
        SecurityRules {
            allow_plain_http: self.config().allow_plain_http,
        }
    }
}

/// The metadata key where a tool's owner may state its MCP annotations (booleans:
/// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`).
pub(crate) const ANNOTATIONS: &str = "annotations";

/// The MCP annotations an owner may state in `metadata.annotations`.
pub(crate) const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// A stored tool's definition as the registry holds it: the record's, with its MCP annotations
/// computed from its kind ([`annotations`]).
pub(crate) fn definition(record: &CustomToolRecord) -> ToolDefinition {
    let mut definition = record.definition();
    definition.annotations = Some(annotations(record));
    definition
}

/// What a custom tool's annotations say, computed from what it is: an HTTP tool reaches the
/// network (open world) and is read-only with `GET`, idempotent with `PUT` and `DELETE`; a JS
/// or command tool runs code whose effects only its owner knows, so it is neither read-only
/// nor idempotent, and open world only with `network`. What the owner states in
/// `metadata.annotations` wins, except that a tool that reaches the network is always open
/// world.
pub(crate) fn annotations(record: &CustomToolRecord) -> Value {
    let network = record.has_permission(Permission::Network);
    let (effect, open_world) = match record.kind {
        ToolKind::Http => {
            let effect =
                toolsmith_httptool::load_definition(&record.code).map_or(Effect::Runs, |d| match d
                    .endpoint
                    .method
                {
                    Method::Get => Effect::Reads,
                    Method::Put => Effect::Changes,
                    Method::Delete => Effect::Deletes,
                    Method::Post | Method::Patch => Effect::Runs,
                });
            (effect, true)
        }
        ToolKind::Command | ToolKind::Js => (Effect::Runs, network),
    };
    let declared = record
        .metadata
        .get(ANNOTATIONS)
        .and_then(Value::as_object)
        .map(|declared| {
            HINTS
                .iter()
                .filter_map(|key| Some((*key, declared.get(*key)?.as_bool()?)))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let read_only = declared
        .iter()
        .find(|(key, _)| *key == "readOnlyHint")
        .map(|(_, value)| *value);
    let effect = match (read_only, effect) {
        (Some(true), _) => Effect::Reads,
        (Some(false), Effect::Reads) => Effect::Runs,
        (_, effect) => effect,
    };
    let mut hints = effect.annotations(open_world);
    if let Value::Object(hints) = &mut hints {
        for (key, value) in declared {
            if key == "openWorldHint" && open_world {
                continue;
            }
            hints.insert(key.to_owned(), Value::Bool(value));
        }
    }
    hints
}

/// A tool's `metadata.annotations`, if given, must be an object of the four MCP hints, each a
/// boolean.
pub(crate) fn check_annotations(metadata: &Value) -> Result<(), ServiceError> {
    let Some(declared) = metadata.get(ANNOTATIONS) else {
        return Ok(());
    };
    let fix = "metadata.annotations takes booleans readOnlyHint, destructiveHint, \
               idempotentHint and openWorldHint (e.g. {\"readOnlyHint\": true}); the title is \
               metadata.title";
    let Value::Object(declared) = declared else {
        return Err(ServiceError::Validation(format!(
            "metadata.annotations must be an object: {fix}"
        )));
    };
    for (key, value) in declared {
        if !HINTS.contains(&key.as_str()) || !value.is_boolean() {
            return Err(ServiceError::Validation(format!(
                "metadata.annotations.{} is not usable: {fix}",
                key.chars().take(64).collect::<String>()
            )));
        }
    }
    Ok(())
}

/// The agent a stored tool exists for: a command tool's `scope`; every other kind is global.
pub(crate) fn agent_scope(kind: ToolKind, code: &str) -> Option<String> {
    match kind {
        ToolKind::Command => serde_json::from_str::<CommandToolSpec>(code)
            .ok()
            .and_then(|spec| spec.agent_scope().map(str::to_owned)),
        ToolKind::Js | ToolKind::Http => None,
    }
}

/// Where a command tool's env value is bound: the tool and the variable.
fn env_place<'a>(
    owner: &'a str,
    tool_id: &'a str,
    name: &'a str,
) -> toolsmith_secrets::SecretPlace<'a> {
    toolsmith_secrets::SecretPlace {
        owner,
        service_id: "command-env",
        entry_id: tool_id,
        field: name,
    }
}

fn command_spec(code: &str) -> Result<CommandToolSpec, ServiceError> {
    let spec: CommandToolSpec = serde_json::from_str(code).map_err(|e| {
        ServiceError::Validation(format!(
            "a command tool's code must be its spec as JSON ({{\"command\": \"…\", \"timeoutSeconds\": …}}): {e}"
        ))
    })?;
    spec.validate().map_err(|e| {
        violations_error(
            "the command tool",
            e.violations.iter().map(ToString::to_string),
        )
    })?;
    Ok(spec)
}

/// Loads an HTTP tool's definition; a failure says "invalid HTTP tool definition" once, and
/// what is wrong.
pub(crate) fn http_definition(code: &str) -> Result<HttpToolDefinition, ServiceError> {
    toolsmith_httptool::load_definition(code).map_err(|e| {
        ServiceError::Validation(match e {
            // Its message already says what it is.
            toolsmith_httptool::LoadError::Invalid(_) => e.to_string(),
            toolsmith_httptool::LoadError::Parse(_) => {
                format!("invalid HTTP tool definition: {e}")
            }
        })
    })
}

/// Every `{{.name}}` of the template must be a declared parameter, or the model could never
/// fill it.
fn check_placeholders_declared(
    spec: &CommandToolSpec,
    parameters: &Value,
) -> Result<(), ServiceError> {
    let template = spec
        .validate()
        .map_err(|e| ServiceError::Validation(e.to_string()))?;
    let declared = parameters.get("properties").and_then(Value::as_object);
    let missing: Vec<String> = template
        .placeholders()
        .into_iter()
        .filter(|name| !declared.is_some_and(|props| props.contains_key(*name)))
        .map(|name| format!("'{name}'"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Validation(format!(
            "the command template uses {} but the parameters do not declare {}",
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        )))
    }
}

fn violations_error(what: &str, violations: impl Iterator<Item = String>) -> ServiceError {
    let list: Vec<String> = violations.collect();
    ServiceError::Validation(format!("{what} is invalid: {}", list.join("; ")))
}

#[cfg(test)]
mod tests;
