//! The OpenAPI 3.1 document of the REST API, generated from the code.
//!
//! [`ApiDoc`] gives the document its frame (info, status rules, tags); every route adds its own
//! operation through its `#[utoipa::path]` annotation when it is registered
//! ([`super::api_router`]), and every schema comes from the wire types. [`finish`] then adds the
//! error answers every operation can give (400, 401, 403, 413/415 with a body, 429, 500, 503),
//! all in the error envelope. The document is built once and served as is.

use std::sync::LazyLock;

use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{Schema, SchemaType, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{OpenApi, RefOr, ResponseBuilder};

use super::agent_links::{AgentLink, AgentLinkList, Delegation, DelegationList};
use super::agents::{Agent, AgentList, AgentRun, AgentRunList, AgentUsage};
use super::envelope::Envelope;
use super::error::{ErrorBody, ErrorEnvelope};
use super::executions::{ClientRequests, RecordedExecution, RecordedExecutionList};
use super::orgs::{
    Member, MemberList, MemberRemoved, Organization, OrganizationDeleted, OrganizationList, Role,
};
use super::prompts::{Prompt, PromptList, PromptVersion, PromptVersionList, RenderedPromptBody};
use super::resources::{ResourceRead, StoredResource, StoredResourceList};
use super::session::{Changes, Session};
use super::sessions::{AgentSession, AgentSessionHistory, AgentSessionList, AgentSessionMessage};
use super::sign_in::{SignInOptions, SignInTokenBody, SignedIn};
use super::tasks::{Task, TaskList};
use super::teams::{TeamBoard, TeamList, TeamMember, TeamView};
use super::types::{
    DefinitionList, Deleted, Execution, Export, Stats, ToolList, ToolRecord, ToolSummaryList,
    VersionList,
};

pub type ToolEnvelope = Envelope<ToolRecord>;
pub type ToolListEnvelope = Envelope<ToolList>;
pub type StatsEnvelope = Envelope<Stats>;
pub type DefinitionListEnvelope = Envelope<DefinitionList>;
pub type DeletedEnvelope = Envelope<Deleted>;
pub type ExecutionEnvelope = Envelope<Execution>;
pub type VersionListEnvelope = Envelope<VersionList>;
pub type ToolSummaryListEnvelope = Envelope<ToolSummaryList>;
pub type ExportEnvelope = Envelope<Export>;
pub type SessionEnvelope = Envelope<Session>;
pub type ChangesEnvelope = Envelope<Changes>;

const DESCRIPTION: &str = r#"Toolsmith's REST API: create, test, run and manage custom tools (JavaScript, run in a sandbox), list and run every tool, and export tool definitions for function calling.

Every answer but the health probes and this document is a JSON envelope: `{"success": true, "data": …, "meta": {"requestId", "timestamp"}}` or `{"success": false, "error": {"code", "message", "details"?}, "meta": …}`. The request id is also in the `X-Request-Id` response header (a sane incoming `X-Request-Id` is reused).

Statuses mean what they say:
- **400** the request is malformed: not JSON, wrong JSON types, unknown or missing fields, bad query parameters or headers (everything this document describes).
- **401 / 403** authentication and scopes (`tools:read` for reads, `tools:write` for writes, `tools:execute` to run tools, `admin` to approve or reject).
- **404** no such tool (or version) for this caller, or no such route. Another user's tools are 404 too.
- **405** the route exists but not with this method (`Allow` lists the methods).
- **409** the request conflicts with the current state: the name is taken, `expectedRevision` / `If-Match` is stale (both revisions are named), the tool's status does not allow the operation, an owner limit is reached.
- **413** the body is larger than the limit (1 MB by default), or `code` / `description` is larger than allowed.
- **415** a body that is not `application/json`.
- **422** a well-formed request whose content is invalid: a tool definition that breaks the rules (name, JSON Schema, code), or tool arguments that break the tool's schema (violations and schema in `error.details`).
- **429** rate limits (reserved).
- **500** an internal failure, never the caller's fault; the message is generic, the server log has the details under the request id.
- **503** the sandbox is saturated, the request timed out, or the store is unreachable (`Retry-After`).

A tool that fails when it runs (throws, times out, exceeds a limit) is not an HTTP error: execute answers 200 with `isError: true` and the tool's own message in `content`.

`{id}` is a tool id (`tool_<16 hex>`) or a tool name. Names that are also route words (`stats`, `pending`, `test`) are reached by id."#;

/// The frame of the document.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Toolsmith REST API",
        description = DESCRIPTION,
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    tags(
        (name = "custom-tools", description = "The lifecycle of your custom tools"),
        (name = "tools", description = "Every tool you can run, and function-calling exports"),
        (name = "metrics", description = "Execution analytics of your custom tools"),
        (name = "policies", description = "The policy in force: who may see and call which tool (admin)"),
        (name = "tool-groups", description = "Built-in tool groups: which are on, their tools, switching one (admin)"),
        (name = "audit", description = "The audit log of privileged actions (admin)"),
        (name = "approvals", description = "Human approval of executions: what waits for a person, and their decisions"),
        (name = "config", description = "The Config Center: services your tools need and their values"),
        (name = "sign-in", description = "Signing in to the web UI through the identity provider (authorization code with PKCE); no token needed"),
        (name = "session", description = "Who is calling, and a change digest to poll (the web UI)"),
        (name = "executions", description = "Your recent executions"),
        (name = "agents", description = "Agents Toolsmith runs: their definitions, and runs of them (steps, usage, cancel)"),
        (name = "teams", description = "Agent teams: a lead and teammates among your agents, and the board and mailbox they share"),
        (name = "prompts", description = "Prompts made at runtime: your prompts, their versions, rollback and a render (what MCP prompts/get answers)"),
        (name = "resources", description = "Resources you define: a stored text or blob under a URI, and URI templates whose content a JS function computes (what MCP resources/read answers)"),
        (name = "tasks", description = "Tool calls run as tasks (the asynchronous execute): start one, read its status and result, cancel it"),
        (name = "data", description = "What the agent keeps for you (tasks, bookmarks, notes, events, contacts), your export and erasure"),
        (name = "scheduled-tasks", description = "Your scheduled tasks (the scheduler tools' automation): list, create, change, delete, their runs, run now"),
        (name = "organizations", description = "Organisations: shared owners of tools with members and roles; always managed as the person (never an agent)"),
        (name = "tokens", description = "API tokens (admin)"),
        (name = "mcp-servers", description = "The MCP bridge's upstream servers: status, registration (admin)"),
        (name = "health", description = "Liveness and readiness probes (not enveloped)"),
        (name = "meta", description = "This document")
    ),
    components(schemas(
        AgentLink, AgentLinkList, Delegation, DelegationList,
        ErrorEnvelope, ErrorBody, ToolRecord, ToolList, Stats, DefinitionList, Deleted, Execution,
        VersionList, ToolSummaryList, Export, Session, Changes, Task, TaskList, Agent, AgentList,
        AgentRun, AgentRunList, AgentUsage, RecordedExecution, RecordedExecutionList,
        ClientRequests, Prompt, PromptList, PromptVersion, PromptVersionList, RenderedPromptBody,
        StoredResource, StoredResourceList, ResourceRead, AgentSession, AgentSessionList, AgentSessionHistory,
        AgentSessionMessage, TeamView, TeamMember, TeamList, TeamBoard, SignInOptions,
        SignInTokenBody, SignedIn, Organization, OrganizationList, Member, MemberList,
        MemberRemoved, OrganizationDeleted, Role
    ))
)]
pub struct ApiDoc;

/// The name of the bearer-token security scheme.
const BEARER: &str = "bearerAuth";

/// The whole document: every REST route, the health routes, and the common error answers.
pub fn document() -> &'static Value {
    static DOC: LazyLock<Value> = LazyLock::new(|| {
        let mut doc = super::api_router()
            .merge(crate::app::health_routes())
            .into_openapi();
        finish(&mut doc);
        let mut doc = serde_json::to_value(&doc).unwrap_or(Value::Null);
        code_or_command(&mut doc);
        closed_variants(&mut doc, "PromptContentBody");
        doc
    });
    &DOC
}

/// This document
///
/// The OpenAPI 3.1 document of this API (not enveloped).
#[utoipa::path(
    get, path = "/api/v1/openapi.json", tag = "meta", operation_id = "getOpenApiDocument",
    responses((status = 200, description = "The OpenAPI document", body = Object, content_type = "application/json"))
)]
pub async fn openapi_json() -> Response {
    static JSON: LazyLock<Vec<u8>> =
        LazyLock::new(|| serde_json::to_vec(document()).unwrap_or_default());
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        JSON.as_slice(),
    )
        .into_response()
}

/// The variants of an internally tagged enum whose serde form denies unknown fields: utoipa
/// closes the enum's structs but not its variants' objects, so a body with a stray key looked
/// valid to the document and was a 400 (found by schemathesis on prompts' message content).
fn closed_variants(doc: &mut Value, schema: &str) {
    let Some(Value::Array(variants)) =
        doc.pointer_mut(&format!("/components/schemas/{schema}/oneOf"))
    else {
        return;
    };
    for variant in variants.iter_mut() {
        if let Value::Object(object) = variant {
            object.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
    }
}

/// A create takes `code` or, for a command tool in spec 001's form, `command` (with its fields),
/// never both: said in the schema, so that a generated body without either is known invalid.
fn code_or_command(doc: &mut Value) {
    let Some(create) = doc.pointer_mut("/components/schemas/CreateToolBody") else {
        return;
    };
    let command_only = [
        "command",
        "timeoutSeconds",
        "workingDir",
        "env",
        "network",
        "scope",
    ];
    let mut with_code = serde_json::Map::new();
    with_code.insert("code".to_owned(), serde_json::json!({"type": "string"}));
    for field in command_only {
        with_code.insert(field.to_owned(), serde_json::json!({"type": "null"}));
    }
    create["oneOf"] = serde_json::json!([
        {"required": ["code"], "properties": with_code},
        {
            "required": ["command"],
            "properties": {
                "command": {"type": "string"},
                "code": {"type": "null"},
                "kind": {"enum": ["js", "command"]}
            }
        }
    ]);
}

/// Completes the generated document: the error answers every operation can give (where the
/// operation does not describe them itself), header parameters that are plain strings (never
/// `null`), and links from a created tool to every operation on it.
fn finish(doc: &mut OpenApi) {
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    // Bearer tokens, optional: without auth configured (loopback) no token is needed.
    doc.components
        .get_or_insert_with(Default::default)
        .add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API token (`toolsmith token create`). Needed once tokens exist or an admin token is set; scopes `tools:read`, `tools:write`, `tools:execute`, `admin`",
                    ))
                    .build(),
            ),
        );
    doc.security = Some(vec![
        SecurityRequirement::default(),
        SecurityRequirement::new(BEARER, Vec::<String>::new()),
    ]);
    let mut tool_operations: Vec<String> = Vec::new();
    for (path, item) in &doc.paths.paths {
        if !path.starts_with("/api/v1/custom-tools/{id}") {
            continue;
        }
        let operations = [&item.get, &item.put, &item.post, &item.delete, &item.patch];
        for operation in operations.into_iter().flatten() {
            if let Some(id) = &operation.operation_id {
                tool_operations.push(id.clone());
            }
        }
    }
    for (path, item) in doc.paths.paths.iter_mut() {
        if path == "/api/v1/custom-tools"
            && let Some(create) = &mut item.post
            && let Some(RefOr::T(created)) = create.responses.responses.get_mut("201")
        {
            for operation_id in &tool_operations {
                let link = LinkBuilder::new()
                    .operation_id(operation_id.clone())
                    .parameter("id", "$response.body#/data/id")
                    .build();
                created.links.insert(operation_id.clone(), RefOr::T(link));
            }
        }
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let is_health = operation
                .tags
                .as_ref()
                .is_some_and(|tags| tags.iter().any(|t| t == "health" || t == "meta"));
            plain_string_headers(operation);
            if operation
                .tags
                .as_ref()
                .is_some_and(|tags| tags.iter().any(|t| t == "sign-in"))
            {
                // How a person gets a token needs none.
                operation.security = Some(vec![SecurityRequirement::default()]);
            }
            if is_health {
                if operation.operation_id.as_deref() != Some("getOpenApiDocument") {
                    // The probes never need a token.
                    operation.security = Some(vec![SecurityRequirement::default()]);
                }
                continue;
            }
            add_common_errors(operation);
        }
    }
}

/// Optional header parameters come out of the generator as `string | null`; a header is never
/// `null`.
fn plain_string_headers(operation: &mut Operation) {
    for parameter in operation.parameters.iter_mut().flatten() {
        if let RefOr::T(parameter) = parameter
            && parameter.parameter_in == ParameterIn::Header
            && let Some(RefOr::T(Schema::Object(schema))) = &mut parameter.schema
        {
            schema.schema_type = SchemaType::Type(Type::String);
        }
    }
}

fn add_common_errors(operation: &mut Operation) {
    let has_body = operation.request_body.is_some();
    let mut common: Vec<(&str, &str)> = vec![
        (
            "400",
            "Malformed request: invalid JSON, wrong types, unknown or missing fields, bad query parameters or headers",
        ),
        ("401", "Authentication required"),
        ("403", "The token lacks the scope this operation needs"),
    ];
    if has_body {
        common.push(("413", "The request body is larger than the limit"));
        common.push(("415", "The request body is not application/json"));
    }
    common.extend([
        ("429", "Rate limited (reserved)"),
        (
            "500",
            "Internal failure (generic message; details in the server log)",
        ),
        (
            "503",
            "The sandbox is saturated, the request timed out, or the store is unreachable",
        ),
    ]);
    for (status, description) in common {
        if operation.responses.responses.contains_key(status) {
            continue;
        }
        operation
            .responses
            .responses
            .insert(status.to_owned(), RefOr::T(error_response(description)));
    }
}

fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            utoipa::openapi::ContentBuilder::new()
                .schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                    "ErrorEnvelope",
                ))))
                .build(),
        )
        .build()
}
