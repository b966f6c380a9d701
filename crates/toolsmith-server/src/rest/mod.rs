//! The REST API under `/api/v1`: the spec's custom-tool routes, the tool catalogue, the
//! function-calling exports and the OpenAPI document.
//!
//! - [`agents`] — `/api/v1/agents…`, agents Toolsmith runs: definitions and their runs.
//! - [`agent_links`] — `/api/v1/agent-links…` and `/api/v1/delegations`: the links that let
//!   one agent delegate to another, and the delegations made.
//! - [`teams`] — `/api/v1/teams…`, teams of those agents and their boards.
//! - [`config`] — `/api/v1/config/services…`, the Config Center (values masked on read).
//! - [`custom_tools`] — `/api/v1/custom-tools…`, the lifecycle of the caller's custom tools.
//! - [`tools`] — `/api/v1/tools…`, every tool the caller can run, and the exports.
//! - [`import`] — `POST /api/v1/custom-tools/import` (HTTP tools as YAML/JSON) and
//!   `GET /api/v1/tools/suggest` (tools whose triggers match a message).
//! - [`metrics`] — `/api/v1/metrics/…` and `/api/v1/custom-tools/{id}/metrics|anomalies`:
//!   execution analytics.
//! - [`session`] — `/api/v1/session` (who is calling) and `/api/v1/changes` (a change digest
//!   with an `ETag`, which the web UI polls).
//! - [`sign_in`] — `/api/v1/sign-in…`, the web UI signing a person in through the identity
//!   provider (no token needed).
//! - [`executions`] — `/api/v1/executions`, the caller's recent executions.
//! - [`data`] — `/api/v1/data…`, the agent's own records (tasks, notes …) per family, and a
//!   person's export and erasure.
//! - [`scheduled_tasks`] — `/api/v1/scheduled-tasks…`, the caller's scheduled tasks and their
//!   runs.
//! - [`orgs`] — `/api/v1/organizations…`, organisations and their members (as the person),
//!   and `POST /api/v1/custom-tools/{id}/move`, a tool moving between owners.
//! - [`tokens`] — `/api/v1/tokens…`, API tokens (`admin`).
//! - [`mcp_servers`] — `/api/v1/mcp-servers…`, the MCP bridge's upstream servers (`admin`).
//! - [`mcp_grants`] — `/api/v1/mcp-grants…` (`admin`) and `/api/v1/mcp-access-requests…`.
//! - [`envelope`] — `{success, data | error, meta{requestId, timestamp}}` and the request id.
//! - [`error`] — [`ApiError`](error::ApiError), the status rules, and the extractors whose
//!   rejections become the envelope.
//! - [`types`] — the wire types (bodies and `data`), twins of the domain types.
//! - [`openapi`] — the OpenAPI 3.1 document, generated from the handlers' annotations and the
//!   wire types, served at `/api/v1/openapi.json`.
//!
//! Routes are registered together with their documentation ([`api_router`]), so a route cannot
//! exist without its entry in the document, nor the other way round. REST callers are people,
//! unless they act as an agent (a token bound to one, or the `X-Toolsmith-Agent` header): then
//! they are the model, as over MCP ([`actor`], `Actor::for_caller`) — tools they create are
//! `createdBy: llm` and wait for a person by the same rules.

pub mod agent_links;
pub mod agents;
pub mod approvals;
pub mod audit;
pub mod config;
pub mod custom_data;
pub mod custom_tools;
pub mod data;
pub mod envelope;
pub mod error;
pub mod executions;
pub mod extract;
pub mod import;
pub mod mcp_grants;
pub mod mcp_servers;
pub mod metrics;
pub mod openapi;
pub mod orgs;
pub mod policies;
pub mod prompts;
pub mod resources;
pub mod scheduled_tasks;
pub mod session;
pub mod sessions;
pub mod settings;
pub mod sign_in;
pub mod tasks;
pub mod teams;
pub mod tokens;
pub mod tool_groups;
pub mod tools;
pub mod types;

use axum::http::StatusCode;
use serde_json::Value;
use toolsmith_core::{ErrorKind, ToolResult};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use self::envelope::ApiOk;
use self::error::ApiError;
use self::types::Execution;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// Every REST route with its documentation (without the health routes, which live at the root).
pub fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(custom_tools::list, custom_tools::create))
        .routes(routes!(custom_tools::stats))
        .routes(routes!(custom_tools::pending))
        .routes(routes!(custom_tools::active_definitions))
        .routes(routes!(custom_tools::test))
        .routes(routes!(import::import))
        .routes(routes!(
            custom_tools::get_one,
            custom_tools::update,
            custom_tools::delete
        ))
        .routes(routes!(custom_tools::enable))
        .routes(routes!(custom_tools::disable))
        .routes(routes!(custom_tools::approve))
        .routes(routes!(custom_tools::reject))
        .routes(routes!(custom_tools::execute))
        .routes(routes!(custom_tools::versions))
        .routes(routes!(custom_tools::rollback))
        .routes(routes!(orgs::move_tool))
        .routes(routes!(orgs::list, orgs::create))
        .routes(routes!(orgs::get_one, orgs::update, orgs::delete))
        .routes(routes!(orgs::members))
        .routes(routes!(orgs::put_member, orgs::remove_member))
        .routes(routes!(config::list, config::create))
        .routes(routes!(config::get_one, config::update, config::delete))
        .routes(routes!(config::create_entry))
        .routes(routes!(config::update_entry, config::delete_entry))
        .routes(routes!(metrics::tools))
        .routes(routes!(metrics::server))
        .routes(routes!(metrics::anomalies))
        .routes(routes!(metrics::tool))
        .routes(routes!(metrics::tool_anomalies))
        .routes(routes!(import::suggest))
        .routes(routes!(audit::list))
        .routes(routes!(
            policies::get_policy,
            policies::put_policy,
            policies::delete_policy
        ))
        .routes(routes!(tool_groups::list))
        .routes(routes!(tool_groups::enabled_tools))
        .routes(routes!(tool_groups::get_one, tool_groups::switch))
        .routes(routes!(session::session))
        .routes(routes!(session::changes))
        .routes(routes!(sign_in::options))
        .routes(routes!(sign_in::token))
        .routes(routes!(executions::list))
        .routes(routes!(agents::list, agents::create))
        .routes(routes!(agents::get_one, agents::replace, agents::delete))
        .routes(routes!(agents::list_runs, agents::start_run))
        .routes(routes!(agents::get_run))
        .routes(routes!(agents::cancel_run))
        .routes(routes!(agents::usage))
        .routes(routes!(agents::list_started_runs))
        .routes(routes!(sessions::list))
        .routes(routes!(sessions::get_one))
        .routes(routes!(agent_links::list, agent_links::create))
        .routes(routes!(agent_links::delete))
        .routes(routes!(agent_links::delegations))
        .routes(routes!(teams::list, teams::create))
        .routes(routes!(teams::get_one, teams::delete))
        .routes(routes!(teams::board))
        .routes(routes!(prompts::list, prompts::create))
        .routes(routes!(prompts::get_one, prompts::replace, prompts::delete))
        .routes(routes!(prompts::enable))
        .routes(routes!(prompts::disable))
        .routes(routes!(prompts::versions))
        .routes(routes!(prompts::rollback))
        .routes(routes!(prompts::render))
        .routes(routes!(resources::list, resources::create))
        .routes(routes!(
            resources::get_one,
            resources::replace,
            resources::delete
        ))
        .routes(routes!(resources::read))
        .routes(routes!(tasks::list, tasks::start))
        .routes(routes!(tasks::get_one))
        .routes(routes!(tasks::cancel))
        .routes(routes!(data::export))
        .routes(routes!(settings::get_time_zone, settings::set_time_zone))
        .routes(routes!(data::erase))
        .routes(routes!(data::list, data::create))
        .routes(routes!(data::get_one, data::update, data::delete))
        .routes(routes!(custom_data::list_tables, custom_data::create_table))
        .routes(routes!(
            custom_data::describe_table,
            custom_data::delete_table
        ))
        .routes(routes!(custom_data::list_rows, custom_data::add_row))
        .routes(routes!(
            custom_data::get_row,
            custom_data::update_row,
            custom_data::delete_row
        ))
        .routes(routes!(scheduled_tasks::list, scheduled_tasks::create))
        .routes(routes!(
            scheduled_tasks::get_one,
            scheduled_tasks::update,
            scheduled_tasks::delete
        ))
        .routes(routes!(scheduled_tasks::runs))
        .routes(routes!(scheduled_tasks::trigger))
        .routes(routes!(tokens::list, tokens::create))
        .routes(routes!(tokens::revoke))
        .routes(routes!(mcp_servers::list, mcp_servers::register))
        .routes(routes!(
            mcp_servers::get_one,
            mcp_servers::update,
            mcp_servers::remove
        ))
        .routes(routes!(mcp_servers::retry))
        .routes(routes!(mcp_grants::list, mcp_grants::put))
        .routes(routes!(mcp_grants::delete))
        .routes(routes!(mcp_grants::list_requests, mcp_grants::request))
        .routes(routes!(mcp_grants::decide))
        .routes(routes!(approvals::list))
        .routes(routes!(approvals::get_one))
        .routes(routes!(approvals::decide))
        .routes(routes!(tools::list))
        .routes(routes!(tools::definitions))
        .routes(routes!(tools::execute))
        .routes(routes!(openapi::openapi_json))
}

/// The service's actor for a REST caller, within this request (for the audit log): a person,
/// or the model when the caller acts as an agent — one rule for every door
/// (`Actor::for_caller`); an admin only as a person. In an organisation, the organisation's id
/// with the person as the member ([`Identity::member`]), whom the audit log names.
pub fn actor(identity: &Identity) -> toolsmith_service::Actor {
    toolsmith_service::Actor::for_caller(identity.user_id.clone(), identity.agent_id.clone())
        .with_admin(identity.is_admin_person())
        .with_member(identity.member.clone())
        .with_request_id(envelope::current_request_id())
}

/// 403 in read-only mode: for a route that changes the store although its scope is a read
/// one (an access request needs only `tools:read`).
pub fn require_writable(identity: &Identity) -> Result<(), ApiError> {
    match identity.denial(Scope::ToolsWrite) {
        Some(why) if identity.read_only => {
            Err(ApiError::new(StatusCode::FORBIDDEN, "forbidden", why))
        }
        _ => Ok(()),
    }
}

/// 403 when the caller acts as an agent: what only a person may do (`what`: "teams are made by
/// a person"), one wording for every route that needs it.
pub fn require_person(identity: &Identity, what: &str) -> Result<(), ApiError> {
    match &identity.agent_id {
        None => Ok(()),
        Some(agent) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "you call as agent '{agent}': {what}; use a token of the user bound to no agent"
            ),
        )),
    }
}

/// 403 unless the caller holds `scope` (or `admin`).
pub fn require(identity: &Identity, scope: Scope) -> Result<(), ApiError> {
    match identity.denial(scope) {
        None => Ok(()),
        Some(why) => {
            let error = ApiError::new(StatusCode::FORBIDDEN, "forbidden", why);
            Err(if identity.lacks_scope(scope) {
                error.with_missing_scope(scope)
            } else {
                error
            })
        }
    }
}

/// A call's result as an answer. A tool that failed is still a 200 (`isError: true`), except
/// for what is not the tool's doing: an unknown tool (404), arguments that break its schema
/// (422, violations and schema in `details`), a saturated sandbox (503), a rate limit (429) and
/// an internal failure (500).
/// The header an agent runner declares its caller's subagent depth in (0 = a top-level agent,
/// 1 = its subagent …); the policy's subagent deny lists apply to it.
pub const SUBAGENT_DEPTH_HEADER: &str = "x-toolsmith-subagent-depth";
/// The deepest subagent depth accepted.
const MAX_SUBAGENT_DEPTH: u32 = 64;

/// The caller's subagent depth from [`SUBAGENT_DEPTH_HEADER`] (0 without it).
pub fn subagent_depth(headers: &axum::http::HeaderMap) -> Result<u32, ApiError> {
    let Some(value) = headers.get(SUBAGENT_DEPTH_HEADER) else {
        return Ok(0);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|d| *d <= MAX_SUBAGENT_DEPTH)
        .ok_or_else(|| {
            ApiError::bad_request(
                "invalid_header",
                format!(
                    "X-Toolsmith-Subagent-Depth must be a whole number from 0 to {MAX_SUBAGENT_DEPTH} (0 = a top-level agent, 1 = its subagent …)"
                ),
            )
        })
}

/// What ran: a tool of the catalogue (built-in or custom), a custom tool through its own route,
/// or a dry run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    Catalog,
    Custom,
    Test,
}

pub fn execution_response(
    tool: &str,
    res: ToolResult,
    ran: Ran,
) -> Result<ApiOk<Execution>, ApiError> {
    let message = || res.error_message().unwrap_or("the call failed").to_owned();
    match res.error_kind() {
        Some(ErrorKind::NotFound) => {
            return Err(ApiError::new(StatusCode::NOT_FOUND, "not_found", message()));
        }
        Some(ErrorKind::InvalidArguments) => {
            let mut details = res.content.as_object().cloned().unwrap_or_default();
            details.remove("error");
            details.remove("kind");
            let mut e = ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_arguments",
                message(),
            );
            if !details.is_empty() {
                e = e.with_details(Value::Object(details));
            }
            return Err(e);
        }
        Some(ErrorKind::Busy) => {
            return Err(ApiError::unavailable("busy", message(), 1));
        }
        Some(ErrorKind::RateLimited) => {
            return Err(
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message())
                    .with_retry_after(
                        res.content
                            .get("retryAfterSeconds")
                            .and_then(Value::as_u64)
                            .and_then(|secs| u32::try_from(secs).ok())
                            .unwrap_or(1),
                    ),
            );
        }
        Some(ErrorKind::Internal) => {
            return Err(ApiError::internal(format!(
                "tool '{tool}' failed internally: {}",
                message()
            )));
        }
        _ => {}
    }
    let mut execution = Execution::new(tool, res);
    match ran {
        Ran::Catalog => {}
        Ran::Custom => execution = execution.of_custom_tool(),
        Ran::Test => {
            execution = execution.of_custom_tool();
            execution.test_mode = Some(true);
        }
    }
    Ok(ApiOk::ok(execution))
}
