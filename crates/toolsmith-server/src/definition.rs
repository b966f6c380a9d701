//! The one wire shape of a tool definition: what REST's create and dry run, MCP's `create_tool`
//! and the CLI's tool files are read into, and the one mapping from it to the service's
//! [`CreateTool`].
//!
//! [`CreateToolBody`] holds every field a definition may have: the service's own (`name`,
//! `kind`, `description`, `parameters`, `code`, `category`, `tags`, `permissions`,
//! `requiresApproval`, `metadata`), spec 001's command form (`command`, `timeoutSeconds`,
//! `workingDir`, `env`, `network`, `scope`, and `enabled`), and `requiredApiKeys` and
//! `createdBy`. Names are camelCase, with the snake_case spellings spec 001 and the MCP tools
//! use as aliases; unknown fields are refused; its OpenAPI schema is derived from it. A new field
//! of a tool definition is added here (and to `CreateTool` when the service must know it), and
//! every face reads it.
//!
//! What each face keeps of its own, because it truly differs:
//! - REST: the dry run's `testArgs` / `testArguments` ([`TestToolBody`]: they are taken out of
//!   the object and the rest is read as a create, so an unknown field is still refused with
//!   serde's message naming it), and `createdBy` may not be `llm` (`rest/custom_tools.rs`).
//! - MCP: `create_tool`'s input schema (`mcp/control_plane.rs`), written for models: snake_case
//!   names, descriptions that say what to write, and none of `requiresApproval`, `metadata` or
//!   `createdBy` (a model's tool always needs approval). Arguments are checked against it
//!   before they are read into [`CreateToolBody`].
//! - The CLI: `codeFile`, and snake_case for every field name (`toolsmith`'s `input.rs`).
//! - dynamic-mcp compatibility (`mcp/compat.rs`): spec 002's own vocabulary (`title`,
//!   `inputSchema`, `timeoutMs`, `image`, `dependencies`), one shape for its create and its
//!   patch, mapped to the service's input directly.

use std::borrow::Cow;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use toolsmith_core::ToolKind;
use toolsmith_service::command_fields::CommandFields;
use toolsmith_service::{CreateTool, ServiceError};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;
use utoipa::{PartialSchema, ToSchema};

use crate::rest::types::{Creator, Kind, ToolPermission, parameters_schema};

/// A new custom tool. Tools created through REST are created by a person (`createdBy: user`)
/// and start `active`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({
    "name": "word_count",
    "description": "Counts the words of a text",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text"}},
        "required": ["text"]
    },
    "code": "return { words: args.text.split(/\\s+/).filter(Boolean).length };",
    "category": "Text",
    "tags": ["words", "count"]
}))]
pub struct CreateToolBody {
    /// `^[a-z][a-z0-9_]*$`, at most 64 characters, not the name of a built-in or of another of
    /// your tools.
    #[schema(
        pattern = "^[a-z][a-z0-9_]*$",
        min_length = 1,
        max_length = 64,
        example = "word_count"
    )]
    pub name: String,
    /// What `code` holds: `js` (default), `command` or `http` (see docs/tool-kinds.md).
    #[serde(default)]
    pub kind: Kind,
    /// What the tool does, for the model that will call it (at most 4,000 characters by default).
    #[schema(min_length = 1, example = "Counts the words of a text")]
    pub description: String,
    #[schema(schema_with = parameters_schema)]
    pub parameters: Value,
    /// For `js`, the body of an async JavaScript function (`args` holds the arguments); for
    /// `command`, the spec as JSON; for `http`, the YAML or JSON definition. A command tool may
    /// instead give its fields at the top level (`command`, `timeout_seconds` …, spec 001).
    #[serde(default)]
    #[schema(example = "return { words: args.text.split(/\\s+/).filter(Boolean).length };")]
    pub code: Option<String>,
    /// A command tool's template (spec 001 §13's form): makes the tool kind `command`; the
    /// fields below go with it. Give these or `code`, not both.
    #[serde(default)]
    pub command: Option<String>,
    /// Command tools: wall-clock limit of one run, 1 to 600 (default 60).
    #[serde(
        default,
        alias = "timeout_seconds",
        deserialize_with = "crate::rest::types::optional_unsigned"
    )]
    pub timeout_seconds: Option<u64>,
    /// Command tools: a relative directory inside the run's workspace.
    #[serde(default, alias = "working_dir")]
    pub working_dir: Option<String>,
    /// Command tools: variables given to the command (stored encrypted).
    #[serde(default)]
    pub env: Option<std::collections::BTreeMap<String, String>>,
    /// Command tools: share the host's network.
    #[serde(default)]
    pub network: Option<bool>,
    /// Command tools: `global` (default) or `agent:<id>`.
    #[serde(default)]
    pub scope: Option<String>,
    /// `false` creates the tool disabled (spec 001); default `true`.
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub category: Option<String>,
    /// Search tags (at most 32, each at most 64 characters).
    #[serde(default)]
    #[schema(max_items = 32)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub permissions: Vec<ToolPermission>,
    /// Every execution needs a person's confirmation (default `false`).
    #[serde(default)]
    pub requires_approval: Option<bool>,
    /// Free-form JSON object.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
    /// Accepted for compatibility; tools created through REST are always `user`.
    #[serde(default)]
    pub created_by: Option<Creator>,
    /// Config Center services the tool needs (`[{name, displayName?, description?, category?,
    /// docsUrl?}]`): registered automatically, kept in `metadata.requiredApiKeys`.
    #[serde(default, alias = "required_api_keys")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub required_api_keys: Option<Vec<Value>>,
    /// JS tools: npm packages the code may `await import()` (`[{name, version}]`, a semver
    /// range or a dist-tag), resolved and installed when the tool is created; kept in
    /// `metadata.dependencies`, what they resolved to in `metadata.packageLock`
    /// (docs/js-tools.md, Dependencies).
    #[serde(default)]
    #[schema(value_type = Option<Vec<crate::rest::types::NpmDependency>>)]
    pub dependencies: Option<Vec<Value>>,
    /// JSON Schema (`"type": "object"`) of the structured content the tool returns: listed as
    /// MCP's `outputSchema`, and every successful result is checked against it (a mismatch is
    /// an error naming the violation); kept in `metadata.outputSchema` (docs/mcp.md).
    #[serde(default, alias = "output_schema")]
    #[schema(value_type = Option<Object>)]
    pub output_schema: Option<Value>,
}

/// What a definition without `code` and without spec 001's `command` is told (REST, the CLI).
pub const MISSING_CODE: &str =
    "missing field `code` (or, for a command tool written in spec 001's form, `command`)";

impl CreateToolBody {
    /// Neither `code` nor spec 001's `command` is given.
    pub fn lacks_code(&self) -> bool {
        self.code.is_none() && self.command.is_none()
    }

    /// Any of spec 001's command fields is given (`enabled` is not one).
    pub fn has_command_fields(&self) -> bool {
        self.command.is_some()
            || self.timeout_seconds.is_some()
            || self.working_dir.is_some()
            || self.env.is_some()
            || self.network.is_some()
            || self.scope.is_some()
    }

    /// The service's input and `enabled`; `createdBy` has been checked by the caller. A
    /// command tool written in spec 001's form becomes kind `command` with its fields in `code`.
    pub fn into_input(self) -> Result<(CreateTool, Option<bool>), ServiceError> {
        let mut kind: ToolKind = self.kind.into();
        let code = CommandFields {
            command: self.command,
            timeout_seconds: self.timeout_seconds,
            working_dir: self.working_dir,
            env: self.env,
            network: self.network,
            scope: self.scope,
        }
        .fold(&mut kind, self.code)?;
        let input = CreateTool {
            name: self.name,
            kind,
            description: self.description,
            parameters: self.parameters,
            code,
            category: self.category,
            tags: self.tags,
            permissions: self.permissions.into_iter().map(Into::into).collect(),
            requires_approval: self.requires_approval,
            metadata: with_metadata_field(
                with_dependencies(
                    with_required_api_keys(self.metadata, self.required_api_keys),
                    self.dependencies,
                ),
                "outputSchema",
                self.output_schema,
            ),
        };
        Ok((input, self.enabled))
    }
}

/// Puts `dependencies` into the metadata, where the service reads it.
fn with_dependencies(metadata: Option<Value>, dependencies: Option<Vec<Value>>) -> Option<Value> {
    with_metadata_field(metadata, "dependencies", dependencies.map(Value::Array))
}

/// `metadata` with `value` under `key` (a field a definition gives at its top level and the
/// service reads from the metadata); unchanged without a value.
fn with_metadata_field(metadata: Option<Value>, key: &str, value: Option<Value>) -> Option<Value> {
    let Some(value) = value else {
        return metadata;
    };
    let mut metadata = match metadata {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    metadata.insert(key.to_owned(), value);
    Some(Value::Object(metadata))
}

/// Puts `requiredApiKeys` into the metadata, where the service reads it.
fn with_required_api_keys(
    metadata: Option<Map<String, Value>>,
    keys: Option<Vec<Value>>,
) -> Option<Value> {
    match keys {
        None => metadata.map(Value::Object),
        Some(keys) => {
            let mut metadata = metadata.unwrap_or_default();
            metadata.insert("requiredApiKeys".to_owned(), Value::Array(keys));
            Some(Value::Object(metadata))
        }
    }
}

/// A dry run: a tool definition and the arguments to run it on. Nothing is stored.
///
/// The JSON is one object: a create's fields but `enabled`, and [`TestArgs`]' fields.
#[derive(Debug)]
pub struct TestToolBody {
    pub definition: CreateToolBody,
    pub args: TestArgs,
}

/// What a dry run adds to a definition: the arguments, under either of two names.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestArgs {
    /// The arguments to run the tool on (default `{}`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub test_args: Option<Map<String, Value>>,
    /// The spec's name for `testArgs`; give one or the other (or both, equal).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub test_arguments: Option<Map<String, Value>>,
}

/// The keys of [`TestArgs`] in a dry run's object.
const TEST_ARGS_KEYS: [&str; 2] = ["testArgs", "testArguments"];

/// A create's field that means nothing in a dry run, which stores nothing.
const NOT_IN_A_DRY_RUN: &str = "enabled";

impl<'de> Deserialize<'de> for TestToolBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TestToolBody, D::Error> {
        let mut definition = Map::<String, Value>::deserialize(deserializer)?;
        if definition.contains_key(NOT_IN_A_DRY_RUN) {
            return Err(D::Error::custom(format!(
                "unknown field `{NOT_IN_A_DRY_RUN}`: a dry run stores nothing, so there is nothing to enable; remove it"
            )));
        }
        let mut args = Map::new();
        for key in TEST_ARGS_KEYS {
            if let Some(value) = definition.remove(key) {
                args.insert(key.to_owned(), value);
            }
        }
        Ok(TestToolBody {
            args: TestArgs::deserialize(Value::Object(args)).map_err(D::Error::custom)?,
            definition: CreateToolBody::deserialize(Value::Object(definition))
                .map_err(D::Error::custom)?,
        })
    }
}

impl TestToolBody {
    /// The definition, and the arguments given as `testArgs` and as `testArguments`. A command
    /// tool written in spec 001's form becomes kind `command` with its fields in `code`.
    #[allow(clippy::type_complexity)]
    pub fn into_parts(self) -> Result<(CreateTool, [Option<Map<String, Value>>; 2]), ServiceError> {
        let (input, _never_enabled) = self.definition.into_input()?;
        Ok((input, [self.args.test_args, self.args.test_arguments]))
    }

    pub fn created_by(&self) -> Option<Creator> {
        self.definition.created_by
    }
}

/// A create's schema without `enabled`, with [`TestArgs`]' properties: one flat object that
/// refuses other fields, as the body is read.
impl PartialSchema for TestToolBody {
    fn schema() -> RefOr<Schema> {
        let mut schema = CreateToolBody::schema();
        if let RefOr::T(Schema::Object(object)) = &mut schema {
            object.properties.retain(|name, _| name != NOT_IN_A_DRY_RUN);
            if let RefOr::T(Schema::Object(args)) = TestArgs::schema() {
                object.properties.extend(args.properties);
            }
            object.description = Some(
                "A dry run: a tool definition and the arguments to run it on. Nothing is stored."
                    .to_owned(),
            );
            let example = serde_json::json!({
                "name": "word_count",
                "description": "Counts the words of a text",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                },
                "code": "return { words: args.text.split(/\\s+/).filter(Boolean).length };",
                "testArgs": {"text": "one two three"}
            });
            if object.example.is_some() {
                object.example = Some(example.clone());
            }
            if !object.examples.is_empty() {
                object.examples = vec![example];
            }
        }
        schema
    }
}

impl ToSchema for TestToolBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TestToolBody")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        CreateToolBody::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Spec 001 §13 "JSON Config Example", verbatim.
    fn goclaw() -> Value {
        json!({
          "name": "dns_lookup",
          "description": "Look up DNS records for a domain",
          "parameters": {
            "type": "object",
            "properties": {
              "domain": { "type": "string", "description": "Domain name" },
              "record_type": { "type": "string", "enum": ["A", "AAAA", "MX", "CNAME", "TXT"] }
            },
            "required": ["domain"]
          },
          "command": "dig +short {{.record_type}} {{.domain}}",
          "timeout_seconds": 10,
          "enabled": true
        })
    }

    fn read(definition: Value) -> Result<(CreateTool, Option<bool>), String> {
        let body: CreateToolBody = serde_json::from_value(definition).map_err(|e| e.to_string())?;
        body.into_input().map_err(|e| e.to_string())
    }

    #[test]
    fn the_spec_example_becomes_a_command_tool() {
        let (tool, enabled) = read(goclaw()).expect("the example reads");
        assert_eq!(enabled, Some(true));
        assert_eq!(tool.kind, ToolKind::Command);
        let code: Value = serde_json::from_str(&tool.code).unwrap_or_default();
        assert_eq!(
            code,
            json!({"command": "dig +short {{.record_type}} {{.domain}}", "timeoutSeconds": 10})
        );
    }

    #[test]
    fn both_forms_or_stray_fields_are_refused() {
        let mut both = goclaw();
        both["code"] = json!("{\"command\": \"true\"}");
        assert!(read(both).is_err());
        let mut http = goclaw();
        http["kind"] = json!("http");
        assert!(read(http).is_err());
        let mut stray = goclaw();
        if let Some(fields) = stray.as_object_mut() {
            fields.remove("command");
        }
        assert!(read(stray).is_err());
        let plain = json!({
            "name": "a", "description": "d", "parameters": {"type": "object"}, "code": "return 1"
        });
        let (tool, enabled) = read(plain).expect("a plain definition reads");
        assert_eq!((tool.kind, enabled), (ToolKind::Js, None));
    }

    #[test]
    fn a_dry_run_is_a_definition_and_its_arguments() {
        let mut body = goclaw();
        if let Some(fields) = body.as_object_mut() {
            fields.remove("enabled");
            fields.insert("testArgs".to_owned(), json!({"domain": "example.org"}));
        }
        let test: TestToolBody = serde_json::from_value(body.clone()).expect("reads");
        let (tool, [args, arguments]) = test.into_parts().expect("folds");
        assert_eq!(tool.kind, ToolKind::Command);
        assert_eq!(
            args,
            Some(Map::from_iter([(
                "domain".to_owned(),
                json!("example.org")
            )]))
        );
        assert_eq!(arguments, None);

        let mut typo = body.clone();
        typo["colour"] = json!("red");
        let err = serde_json::from_value::<TestToolBody>(typo)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("unknown field `colour`"), "{err}");
        let mut enabled = body.clone();
        enabled["enabled"] = json!(true);
        let err = serde_json::from_value::<TestToolBody>(enabled)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("unknown field `enabled`"), "{err}");
        let mut bad_args = body;
        bad_args["testArguments"] = json!([1]);
        let err = serde_json::from_value::<TestToolBody>(bad_args)
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected a map"), "{err}");
    }
}
