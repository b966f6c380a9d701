//! Agents Toolsmith runs, over REST (issue 37): `/api/v1/agents` — the caller's agent
//! definitions (list, create, read, replace, delete; each change a new revision) — and
//! `/api/v1/agents/{id}/runs` — runs of one (start, synchronous or not; list; read with their
//! steps and usage; cancel) — and `/api/v1/agent-runs`, the runs the caller started of every
//! agent. Definitions are written by a person (a token bound to an agent may read and run
//! them, not write them); runs are their starter's alone (user and agent).

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith_core::agent::QualityGate;
use toolsmith_core::agent::{
    AgentDefinition, AgentLimits, AgentModel, AgentRecord, AgentRunRecord, AgentRunStep,
    AgentToolPolicy, AgentType, ContextFile, ModelPrice,
};
use toolsmith_service::agents::{AgentInput, AgentRunView, AgentUsageView};
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The model an agent runs on.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentModelBody {
    /// The name of your Config Center service for the provider: its entry holds `protocol`
    /// (`openai` or `anthropic`), `base_url` and `api_key`, and optionally `stream`.
    #[schema(min_length = 1, max_length = 128)]
    pub service: String,
    /// The model's name at that provider.
    #[schema(min_length = 1, max_length = 256)]
    pub model: String,
    /// What the model costs (US dollars per million tokens); with it, each run has a `cost`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_object"
    )]
    pub price: Option<ModelPriceBody>,
}

/// A model's price, as its provider lists it.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelPriceBody {
    /// US dollars per million input (prompt) tokens.
    #[schema(minimum = 0, maximum = 100000)]
    pub input_per_million: f64,
    /// US dollars per million output (completion) tokens.
    #[schema(minimum = 0, maximum = 100000)]
    pub output_per_million: f64,
}

/// The tools an agent may call: the policy engine's scope shape. Entries are tool names,
/// `group:<id>` or `*`. It only narrows what the operator's policy lets you call.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolPolicyBody {
    /// A built-in profile (`minimal`, `coding`, `messaging`, `full` …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub also_allow: Vec<String>,
}

/// A quality gate (spec 001 §11): a check of what a delegation of this agent answers, before
/// the agent reads it. §11's snake_case keys (`block_on_failure`, `max_retries`) are read too.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QualityGateBody {
    /// When the gate runs: `delegation.completed` (a delegation this agent made has its
    /// answer).
    #[schema(pattern = "^delegation\\.completed$")]
    pub event: String,
    /// `agent` (a delegation to the reviewer `agent`: APPROVED or REJECTED: feedback) or
    /// `command` (a shell `command` in the command sandbox: exit 0 passes, stderr is the
    /// feedback).
    #[serde(rename = "type")]
    #[schema(pattern = "^(agent|command)$")]
    pub kind: String,
    /// The reviewer agent of an `agent` gate (name or id; this agent needs a link to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64)]
    pub agent: Option<String>,
    /// The shell command of a `command` gate (a person's to write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 4096)]
    pub command: Option<String>,
    /// Whether a failure holds the answer back (default true).
    #[serde(default = "blocks", alias = "block_on_failure")]
    pub block_on_failure: bool,
    /// How many times the delegated agent is asked again with the feedback (0 to 5).
    #[serde(
        default,
        alias = "max_retries",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 0, maximum = 5)]
    pub max_retries: Option<u64>,
    /// A `command` gate's wall-clock limit in seconds (default 60, at most 600).
    #[serde(
        default,
        alias = "timeout_seconds",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 1, maximum = 600)]
    pub timeout_seconds: Option<u64>,
}

fn blocks() -> bool {
    true
}

impl QualityGateBody {
    fn into_gate(self) -> QualityGate {
        QualityGate {
            event: self.event,
            kind: self.kind,
            agent: self.agent,
            command: self.command,
            block_on_failure: self.block_on_failure,
            max_retries: self
                .max_retries
                .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            timeout_seconds: self.timeout_seconds,
        }
    }

    fn of(gate: QualityGate) -> QualityGateBody {
        QualityGateBody {
            event: gate.event,
            kind: gate.kind,
            agent: gate.agent,
            command: gate.command,
            block_on_failure: gate.block_on_failure,
            max_retries: Some(u64::from(gate.max_retries)),
            timeout_seconds: gate.timeout_seconds,
        }
    }
}

/// A named text given to the model after the instructions.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextFileBody {
    #[schema(min_length = 1)]
    pub name: String,
    pub text: String,
}

/// Whose the routed context files (SOUL.md, IDENTITY.md, AGENTS.md, TOOLS.md, HEARTBEAT.md,
/// USER.md, BOOTSTRAP.md) are (spec 001 §3): `predefined` (the default: only USER.md is the
/// user's, the others are the definition's) or `open` (all seven are the user's, the
/// definition's are templates).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentTypeBody {
    #[default]
    Predefined,
    Open,
}

impl AgentTypeBody {
    fn of(t: AgentType) -> AgentTypeBody {
        match t {
            AgentType::Predefined => AgentTypeBody::Predefined,
            AgentType::Open => AgentTypeBody::Open,
        }
    }
}

/// What one run may spend; each left out takes its default.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitsBody {
    /// Model turns per run (default 20, at most 200).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 1, maximum = 200)]
    pub max_iterations: Option<u64>,
    /// Tokens per run, input and output (default: no bound).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 1)]
    pub max_tokens: Option<u64>,
    /// Wall-clock seconds per run (default 600, at most 86,400).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 1, maximum = 86400)]
    pub wall_time_secs: Option<u64>,
    /// Runs of this agent at once (default 4, at most 64).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 1, maximum = 64)]
    pub max_concurrent_runs: Option<u64>,
    /// Delegations to this agent running at once, from every agent linked to it (default 5,
    /// at most 64).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::types::optional_unsigned"
    )]
    #[schema(minimum = 1, maximum = 64)]
    pub max_delegation_load: Option<u64>,
}

/// An agent's definition, as written (create, replace, and the CLI's agent files).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentBody {
    /// Unique among your agents; lowercase letters, digits and `_`.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z][a-z0-9_]*$")]
    pub name: String,
    #[serde(default)]
    pub display_name: String,
    /// The system prompt.
    #[serde(default)]
    pub instructions: String,
    #[serde(deserialize_with = "object")]
    pub model: AgentModelBody,
    #[serde(default, deserialize_with = "object")]
    pub tool_policy: ToolPolicyBody,
    #[serde(default, deserialize_with = "objects")]
    pub context_files: Vec<ContextFileBody>,
    /// `predefined` (the default) or `open`: see docs/agents.md "Virtual files".
    #[serde(default)]
    #[schema(inline)]
    pub agent_type: AgentTypeBody,
    #[serde(default, deserialize_with = "object")]
    pub limits: LimitsBody,
    /// Checks of what this agent's delegations answer (spec 001 §11; `quality_gates` is read
    /// too): see docs/agents.md "Quality gates".
    #[serde(default, alias = "quality_gates", deserialize_with = "objects")]
    pub quality_gates: Vec<QualityGateBody>,
    /// On a replace: the revision you read (409 naming both when it moved on).
    #[serde(default, deserialize_with = "super::types::optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

/// The largest `expectedRevision` the document allows (JSON's safe integers).
const MAX_REVISION: i64 = 9_007_199_254_740_991;

/// Refuses an `expectedRevision` outside what the document allows.
fn check_revision(body: &AgentBody) -> Result<(), ApiError> {
    if body
        .expected_revision
        .is_some_and(|n| !(1..=MAX_REVISION).contains(&n))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            "expectedRevision: a revision is from 1 to 2^53-1 (and only a replace reads it)",
        ));
    }
    Ok(())
}

/// A JSON object read as `T` (serde would also read a struct from an array of its fields).
fn object<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    deserializer: D,
) -> Result<T, D::Error> {
    let value = Value::deserialize(deserializer)?;
    if !value.is_object() {
        return Err(serde::de::Error::custom(format!(
            "expected an object, not {value}"
        )));
    }
    serde_json::from_value(value).map_err(serde::de::Error::custom)
}

/// A JSON object read as `T`, or `null`.
fn optional_object<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    if value.is_null() {
        return Ok(None);
    }
    if !value.is_object() {
        return Err(serde::de::Error::custom(format!(
            "expected an object, not {value}"
        )));
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// An array of JSON objects, each read as `T`.
fn objects<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    let items = value
        .as_array()
        .ok_or_else(|| serde::de::Error::custom("expected an array of objects"))?;
    if !items.iter().all(Value::is_object) {
        return Err(serde::de::Error::custom("expected an array of objects"));
    }
    serde_json::from_value(value).map_err(serde::de::Error::custom)
}

impl AgentBody {
    /// The service's input.
    pub fn into_input(self) -> AgentInput {
        let defaults = AgentLimits::default();
        AgentInput {
            name: self.name,
            definition: AgentDefinition {
                display_name: self.display_name,
                instructions: self.instructions,
                model: AgentModel {
                    service: self.model.service,
                    model: self.model.model,
                    price: self.model.price.map(|p| ModelPrice {
                        input_per_million: p.input_per_million,
                        output_per_million: p.output_per_million,
                    }),
                },
                tool_policy: AgentToolPolicy {
                    profile: self.tool_policy.profile,
                    allow: self.tool_policy.allow,
                    deny: self.tool_policy.deny,
                    also_allow: self.tool_policy.also_allow,
                },
                context_files: self
                    .context_files
                    .into_iter()
                    .map(|f| ContextFile {
                        name: f.name,
                        text: f.text,
                    })
                    .collect(),
                agent_type: match self.agent_type {
                    AgentTypeBody::Predefined => AgentType::Predefined,
                    AgentTypeBody::Open => AgentType::Open,
                },
                limits: AgentLimits {
                    max_iterations: self
                        .limits
                        .max_iterations
                        .map_or(defaults.max_iterations, |n| {
                            u32::try_from(n).unwrap_or(u32::MAX)
                        }),
                    max_tokens: self.limits.max_tokens,
                    wall_time_secs: self
                        .limits
                        .wall_time_secs
                        .unwrap_or(defaults.wall_time_secs),
                    max_concurrent_runs: self
                        .limits
                        .max_concurrent_runs
                        .map_or(defaults.max_concurrent_runs, |n| {
                            u32::try_from(n).unwrap_or(u32::MAX)
                        }),
                    max_delegation_load: self
                        .limits
                        .max_delegation_load
                        .map_or(defaults.max_delegation_load, |n| {
                            u32::try_from(n).unwrap_or(u32::MAX)
                        }),
                },
                // A person writes what REST, the CLI and the UI send.
                written_by_model: None,
                quality_gates: self
                    .quality_gates
                    .into_iter()
                    .map(QualityGateBody::into_gate)
                    .collect(),
            },
        }
    }
}

/// A stored agent.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// `agt_<32 hex>`.
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub instructions: String,
    pub model: AgentModelBody,
    pub tool_policy: ToolPolicyBody,
    pub context_files: Vec<ContextFileBody>,
    #[schema(inline)]
    pub agent_type: AgentTypeBody,
    pub limits: LimitsBody,
    /// 1, then one more at each change.
    pub revision: i64,
    /// Whether a model wrote this revision (MCP's `manage_agents`): its runs are then held to
    /// what that model may call, and a model may change or delete it. A person's change (REST,
    /// the CLI, the UI) makes it `false`.
    pub written_by_model: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Its quality gates (spec 001 §11), if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quality_gates: Vec<QualityGateBody>,
}

impl Agent {
    pub fn new(agent: AgentRecord) -> Agent {
        let d = agent.definition;
        Agent {
            id: agent.id,
            name: agent.name,
            display_name: d.display_name,
            instructions: d.instructions,
            model: AgentModelBody {
                service: d.model.service,
                model: d.model.model,
                price: d.model.price.map(|p| ModelPriceBody {
                    input_per_million: p.input_per_million,
                    output_per_million: p.output_per_million,
                }),
            },
            tool_policy: ToolPolicyBody {
                profile: d.tool_policy.profile,
                allow: d.tool_policy.allow,
                deny: d.tool_policy.deny,
                also_allow: d.tool_policy.also_allow,
            },
            context_files: d
                .context_files
                .into_iter()
                .map(|f| ContextFileBody {
                    name: f.name,
                    text: f.text,
                })
                .collect(),
            agent_type: AgentTypeBody::of(d.agent_type),
            limits: LimitsBody {
                max_iterations: Some(u64::from(d.limits.max_iterations)),
                max_tokens: d.limits.max_tokens,
                wall_time_secs: Some(d.limits.wall_time_secs),
                max_concurrent_runs: Some(u64::from(d.limits.max_concurrent_runs)),
                max_delegation_load: Some(u64::from(d.limits.max_delegation_load)),
            },
            revision: agent.revision,
            written_by_model: d.written_by_model.is_some(),
            created_at: agent.created_at,
            updated_at: agent.updated_at,
            quality_gates: d
                .quality_gates
                .into_iter()
                .map(QualityGateBody::of)
                .collect(),
        }
    }
}

/// Your agents, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentList {
    pub agents: Vec<Agent>,
    pub count: usize,
}

/// Starts a run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartRunBody {
    /// The task for the agent (its first user message).
    #[schema(min_length = 1, max_length = 100000)]
    pub input: String,
    /// Answer when the run has ended (200), rather than at once with the run going (202).
    #[serde(default)]
    pub wait: bool,
}

/// What a run spent, as the provider reported it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunUsageBody {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    pub model_calls: u32,
    pub tool_calls: u32,
    /// US dollars, at the `model.price` of the revision the run uses; `null` without one.
    pub cost: Option<f64>,
}

/// One step of a run.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunStep {
    pub seq: i64,
    /// `model`, `tool_call`, `tool_result`, `approval`, `retry` or `error`.
    pub kind: String,
    #[schema(value_type = Object)]
    pub detail: Value,
    pub at: DateTime<Utc>,
}

impl RunStep {
    fn new(step: AgentRunStep) -> RunStep {
        RunStep {
            seq: step.seq,
            kind: step.kind,
            detail: step.detail,
            at: step.at,
        }
    }
}

/// One run of an agent.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentRun {
    /// `run_<32 hex>`.
    pub id: String,
    pub agent_id: String,
    /// The definition's revision it runs.
    pub agent_revision: i64,
    /// `running`, `waiting_approval` (a tool call waits for a person: decide it with
    /// `/api/v1/approvals`), `completed`, `failed` (see `error`) or `cancelled`.
    #[schema(pattern = "^(running|waiting_approval|completed|failed|cancelled)$")]
    pub status: String,
    pub input: String,
    /// The model's final answer, once `completed`.
    pub output: Option<String>,
    /// Why it failed or was cancelled.
    pub error: Option<String>,
    pub usage: RunUsageBody,
    /// Model turns taken.
    pub iterations: u32,
    /// The agent of the token that started it (`null`: a person).
    pub started_by_agent: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Every step, in order (on a single run's read; left out of listings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<RunStep>>,
}

impl AgentRun {
    pub fn new(run: AgentRunRecord, steps: Option<Vec<AgentRunStep>>) -> AgentRun {
        AgentRun {
            id: run.id,
            agent_id: run.agent_id,
            agent_revision: run.agent_revision,
            status: run.status.as_str().to_owned(),
            input: run.input,
            output: run.output,
            error: run.error,
            usage: RunUsageBody {
                input_tokens: run.usage.input_tokens,
                output_tokens: run.usage.output_tokens,
                total_tokens: run.usage.total_tokens(),
                model_calls: run.usage.model_calls,
                tool_calls: run.usage.tool_calls,
                cost: run.usage.cost,
            },
            iterations: run.iterations,
            started_by_agent: run.caller_agent,
            created_at: run.created_at,
            updated_at: run.updated_at,
            steps: steps.map(|s| s.into_iter().map(RunStep::new).collect()),
        }
    }

    pub fn of_view(view: AgentRunView) -> AgentRun {
        AgentRun::new(view.run, Some(view.steps))
    }
}

/// Runs, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentRunList {
    pub runs: Vec<AgentRun>,
    pub count: usize,
}

impl AgentRunList {
    fn new(runs: Vec<AgentRunRecord>) -> AgentRunList {
        let runs: Vec<AgentRun> = runs.into_iter().map(|r| AgentRun::new(r, None)).collect();
        AgentRunList {
            count: runs.len(),
            runs,
        }
    }
}

pub type AgentEnvelope = Envelope<Agent>;
pub type AgentListEnvelope = Envelope<AgentList>;
pub type AgentRunEnvelope = Envelope<AgentRun>;
pub type AgentRunListEnvelope = Envelope<AgentRunList>;
pub type AgentUsageEnvelope = Envelope<AgentUsage>;

/// What runs spent: of one agent, or of all.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageFigures {
    /// The agent's id (`null` in the total).
    pub agent_id: Option<String>,
    /// The agent's name (`null` in the total, and for an agent deleted since).
    pub name: Option<String>,
    pub runs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    pub model_calls: u64,
    pub tool_calls: u64,
    /// US dollars of the runs whose revision named a `model.price`; `null` when none did.
    pub cost: Option<f64>,
    /// How many runs had a price (the others' cost is not known).
    pub priced_runs: u64,
}

impl UsageFigures {
    fn new(row: toolsmith_core::agent::AgentUsageRow, name: Option<String>, id: bool) -> Self {
        UsageFigures {
            agent_id: id.then_some(row.agent_id),
            name,
            runs: row.runs,
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            total_tokens: row.input_tokens.saturating_add(row.output_tokens),
            model_calls: row.model_calls,
            tool_calls: row.tool_calls,
            cost: row.cost,
            priced_runs: row.priced_runs,
        }
    }
}

/// What your agent runs spent, per agent and in all.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentUsage {
    /// The period asked for (`null`: all time).
    pub period: Option<String>,
    pub total: UsageFigures,
    /// One row per agent that ran, by id.
    pub agents: Vec<UsageFigures>,
}

impl AgentUsage {
    fn new(view: AgentUsageView, period: Option<String>) -> AgentUsage {
        AgentUsage {
            period,
            total: UsageFigures::new(view.total, None, false),
            agents: view
                .agents
                .into_iter()
                .map(|(row, name)| UsageFigures::new(row, name, true))
                .collect(),
        }
    }
}

/// Your agents
#[utoipa::path(
    get, path = "/api/v1/agents", tag = "agents", operation_id = "listAgents",
    responses((status = 200, description = "`{agents, count}`", body = inline(AgentListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<AgentList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let agents: Vec<Agent> = state
        .service
        .list_agents(&identity.tool_context())
        .await?
        .into_iter()
        .map(Agent::new)
        .collect();
    Ok(ApiOk::ok(AgentList {
        count: agents.len(),
        agents,
    }))
}

/// Create an agent
///
/// Stores an agent definition (revision 1). Its tool policy is compiled as a policy would be
/// (an unknown profile or group is 422); its model service is read when a run starts.
#[utoipa::path(
    post, path = "/api/v1/agents", tag = "agents", operation_id = "createAgent",
    request_body = AgentBody,
    responses(
        (status = 201, description = "The agent", body = inline(AgentEnvelope)),
        (status = 409, description = "You have an agent of that name", body = super::error::ErrorEnvelope),
        (status = 422, description = "The definition breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<AgentBody>,
) -> Result<ApiOk<Agent>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(&identity, "agent definitions are written by a person")?;
    query.check(&[])?;
    check_revision(&body)?;
    let agent = state
        .service
        .create_agent_as(&actor(&identity), body.into_input())
        .await?;
    Ok(ApiOk::created(Agent::new(agent)))
}

/// One agent
#[utoipa::path(
    get, path = "/api/v1/agents/{id}", tag = "agents", operation_id = "getAgent",
    params(("id" = String, Path, description = "The agent's id or name")),
    responses(
        (status = 200, description = "The agent", body = inline(AgentEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<Agent>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let agent = state
        .service
        .get_agent(&identity.tool_context(), &id)
        .await?;
    Ok(ApiOk::ok(Agent::new(agent)))
}

/// Replace an agent's definition
///
/// The whole definition, as at its creation: the next revision (every revision is kept).
#[utoipa::path(
    put, path = "/api/v1/agents/{id}", tag = "agents", operation_id = "replaceAgent",
    params(("id" = String, Path, description = "The agent's id or name")),
    request_body = AgentBody,
    responses(
        (status = 200, description = "The agent at its new revision", body = inline(AgentEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "The name is taken, or `expectedRevision` is stale", body = super::error::ErrorEnvelope),
        (status = 422, description = "The definition breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn replace(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<AgentBody>,
) -> Result<ApiOk<Agent>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(&identity, "agent definitions are written by a person")?;
    check_revision(&body)?;
    let expected = body.expected_revision;
    let agent = state
        .service
        .update_agent_as(&actor(&identity), &id, body.into_input(), expected)
        .await?;
    Ok(ApiOk::ok(Agent::new(agent)))
}

/// Delete an agent
///
/// Its definition and revisions go; its runs stay readable by who started them.
#[utoipa::path(
    delete, path = "/api/v1/agents/{id}", tag = "agents", operation_id = "deleteAgent",
    params(("id" = String, Path, description = "The agent's id or name")),
    responses(
        (status = 200, description = "The agent as it was", body = inline(AgentEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<Agent>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(&identity, "agent definitions are written by a person")?;
    let agent = state
        .service
        .delete_agent_as(&actor(&identity), &id)
        .await?;
    Ok(ApiOk::ok(Agent::new(agent)))
}

/// Run an agent
///
/// Starts a run on `input`: the model is asked, its tool calls run through the same pipeline
/// as any call, as the agent (policy, approvals, limits, scrubbing, records), until it answers
/// or a limit ends the run. With `wait`, answers 200 once the run has ended; otherwise 202 at
/// once. 409 when the agent already has `maxConcurrentRuns` runs going; 422 when its model
/// service is missing or refused (named).
#[utoipa::path(
    post, path = "/api/v1/agents/{id}/runs", tag = "agents", operation_id = "startAgentRun",
    params(("id" = String, Path, description = "The agent's id or name")),
    request_body = StartRunBody,
    responses(
        (status = 200, description = "The run, ended (`wait`)", body = inline(AgentRunEnvelope)),
        (status = 202, description = "The run, `running`", body = inline(AgentRunEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "Too many runs of this agent going (`limit_reached`)", body = super::error::ErrorEnvelope),
        (status = 422, description = "The model service is missing or refused (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn start_run(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<StartRunBody>,
) -> Result<ApiOk<AgentRun>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&[])?;
    let ctx = identity.tool_context();
    let run = state
        .service
        .start_agent_run_as(&actor(&identity), &ctx, &id, body.input, body.wait)
        .await?;
    if body.wait {
        let view = state.service.get_agent_run(&ctx, &run.id).await?;
        Ok(ApiOk::ok(AgentRun::of_view(view)))
    } else {
        Ok(ApiOk::with_status(
            StatusCode::ACCEPTED,
            AgentRun::new(run, None),
        ))
    }
}

/// Runs of an agent
///
/// Your runs of this agent (those the agent you call as started), newest first.
#[utoipa::path(
    get, path = "/api/v1/agents/{id}/runs", tag = "agents", operation_id = "listAgentRuns",
    params(
        ("id" = String, Path, description = "The agent's id or name"),
        ("limit" = Option<u32>, Query, description = "1 to 200 (default 50)", minimum = 1, maximum = 200)
    ),
    responses(
        (status = 200, description = "`{runs, count}`", body = inline(AgentRunListEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list_runs(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<AgentRunList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let limit = runs_limit(&query)?;
    let runs = state
        .service
        .list_agent_runs(&identity.tool_context(), &id, limit)
        .await?;
    Ok(ApiOk::ok(AgentRunList::new(runs)))
}

/// The `limit` of a listing of runs: 1 to 200, 50 when not given.
fn runs_limit(query: &QueryPairs) -> Result<u32, ApiError> {
    query.check(&["limit"])?;
    let limit = query.integer("limit", 1, 200)?.unwrap_or(50);
    Ok(u32::try_from(limit).unwrap_or(200))
}

/// Runs started
///
/// Your runs of every agent, newest first. A person's are the runs they started; an agent's
/// (a token bound to it, or `X-Toolsmith-Agent` naming one of yours) the runs it started:
/// its delegations, the teammates its messages woke, its sessions' runs. Each is read and
/// cancelled at `/api/v1/agents/{agentId}/runs/{id}` as the same caller.
#[utoipa::path(
    get, path = "/api/v1/agent-runs", tag = "agents", operation_id = "listStartedRuns",
    params(
        ("limit" = Option<u32>, Query, description = "1 to 200 (default 50)", minimum = 1, maximum = 200)
    ),
    responses(
        (status = 200, description = "`{runs, count}`", body = inline(AgentRunListEnvelope))
    )
)]
pub async fn list_started_runs(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<AgentRunList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let limit = runs_limit(&query)?;
    let runs = state
        .service
        .list_started_runs(&identity.tool_context(), limit)
        .await?;
    Ok(ApiOk::ok(AgentRunList::new(runs)))
}

/// The run `run` of the caller, checked to be a run of the agent `agent` (by id, or by the
/// name or id of a stored agent).
async fn run_of(
    state: &AppState,
    identity: &Identity,
    agent: &str,
    run: &str,
) -> Result<AgentRunView, ApiError> {
    let ctx = identity.tool_context();
    let view = state.service.get_agent_run(&ctx, run).await?;
    if view.run.agent_id != agent {
        let named = state.service.get_agent(&ctx, agent).await?;
        if named.id != view.run.agent_id {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("run '{run}' is not a run of agent '{agent}'"),
            ));
        }
    }
    Ok(view)
}

/// One run
///
/// The run's status, usage and every step. Another user's or agent's run is 404.
#[utoipa::path(
    get, path = "/api/v1/agents/{id}/runs/{run}", tag = "agents", operation_id = "getAgentRun",
    params(
        ("id" = String, Path, description = "The agent's id or name"),
        ("run" = String, Path, description = "The run's id")
    ),
    responses(
        (status = 200, description = "The run with its steps", body = inline(AgentRunEnvelope)),
        (status = 404, description = "No such run of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_run(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((id, run)): ApiPath<(String, String)>,
) -> Result<ApiOk<AgentRun>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let view = run_of(&state, &identity, &id, &run).await?;
    Ok(ApiOk::ok(AgentRun::of_view(view)))
}

/// Cancel a run
///
/// Stops a run that has not ended (its model request or tool call is cancelled; on another
/// instance, at its next step); the run stays `cancelled`. A run that had ended is answered as
/// it ended.
#[utoipa::path(
    post, path = "/api/v1/agents/{id}/runs/{run}/cancel", tag = "agents", operation_id = "cancelAgentRun",
    params(
        ("id" = String, Path, description = "The agent's id or name"),
        ("run" = String, Path, description = "The run's id")
    ),
    responses(
        (status = 200, description = "The run", body = inline(AgentRunEnvelope)),
        (status = 404, description = "No such run of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn cancel_run(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((id, run)): ApiPath<(String, String)>,
) -> Result<ApiOk<AgentRun>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    run_of(&state, &identity, &id, &run).await?;
    let ended = state
        .service
        .cancel_agent_run_as(&actor(&identity), &identity.tool_context(), &run)
        .await?;
    Ok(ApiOk::ok(AgentRun::new(ended, None)))
}

/// What your agent runs spent
///
/// Tokens (input, output), model and tool calls, runs and cost, per agent and in all, over
/// the period (all time without one). A person sees every run of their user, whoever started
/// it; a token bound to an agent sees the runs it started.
#[utoipa::path(
    get, path = "/api/v1/metrics/agents", tag = "agents", operation_id = "agentUsage",
    params(("period" = Option<String>, Query, description = "How far back: `<n>m`, `<n>h` or `<n>d`, up to 366d (default: all time)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$")),
    responses(
        (status = 200, description = "`{period, total, agents}`", body = inline(AgentUsageEnvelope)),
        (status = 400, description = "Bad period", body = super::error::ErrorEnvelope)
    )
)]
pub async fn usage(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<AgentUsage>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["period"])?;
    let period = match query.get("period") {
        None => None,
        Some(raw) => Some(raw.parse::<toolsmith_service::Period>().map_err(|why| {
            ApiError::bad_request("invalid_query", format!("query parameter `period`: {why}"))
        })?),
    };
    let since = period.map(|p| Utc::now() - p.duration());
    let view = state
        .service
        .agent_usage(&identity.tool_context(), since)
        .await?;
    Ok(ApiOk::ok(AgentUsage::new(
        view,
        period.map(|p| p.to_string()),
    )))
}
