//! Agents that Toolsmith itself runs (issue 37): an agent's stored definition
//! ([`AgentRecord`], versioned like a tool: [`AgentVersionRecord`]), one run of it
//! ([`AgentRunRecord`]) and each step a run took ([`AgentRunStep`]). Plain data; the rules
//! (what a definition must hold, who may read a run, how many may run) live in the service.
//!
//! Not to be confused with the *agent* of a token (`ToolContext::agent_id`): an identity a
//! token is bound to. A run of a stored agent calls tools as that identity, with the agent's
//! id as `agent_id`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The iteration limit of a definition that names none (spec 001 §6: 20).
pub const DEFAULT_MAX_ITERATIONS: u32 = 20;

/// What an agent is: everything a person writes, and nothing a run changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefinition {
    /// The name people read (the `name` is the agent's handle).
    #[serde(default)]
    pub display_name: String,
    /// The system prompt: what the agent is for and how it works.
    #[serde(default)]
    pub instructions: String,
    /// The model it runs on.
    pub model: AgentModel,
    /// The tools it may call, in the policy engine's shape (a scope policy: profile, allow,
    /// deny, alsoAllow; entries are tool names, `group:<id>` or `*`). It only narrows what the
    /// operator's policy lets the agent's owner and the agent call.
    #[serde(default)]
    pub tool_policy: AgentToolPolicy,
    /// Named texts given to the model after the instructions (spec 001 §3's context files).
    #[serde(default)]
    pub context_files: Vec<ContextFile>,
    /// Whose its routed context files are (spec 001 §3): `predefined` (the default) or `open`.
    #[serde(default, skip_serializing_if = "AgentType::is_predefined")]
    pub agent_type: AgentType,
    #[serde(default)]
    pub limits: AgentLimits,
    /// Set when a model wrote this revision (MCP's `manage_agents`), `None` when a person did
    /// (REST, the CLI, the UI). A model-written definition reaches no more than its author:
    /// every call of its runs is held to what the author may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by_model: Option<ModelAuthor>,
    /// Checks of what this agent's delegations answer before it reads the answer (spec 001
    /// §11's `quality_gates`); the rules are the service's (`agents/quality_gates.rs`).
    #[serde(
        default,
        alias = "quality_gates",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub quality_gates: Vec<QualityGate>,
}

/// One quality gate (spec 001 §11), as written: on `event` (`delegation.completed`), an
/// evaluator of `type` `agent` (a delegation to the reviewer `agent`, which answers APPROVED
/// or REJECTED: feedback) or `command` (a shell `command` run in the command sandbox: exit 0
/// passes, its stderr is the feedback). §11's snake_case keys are read too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QualityGate {
    pub event: String,
    /// `agent` or `command`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The reviewer agent (name or id) of an `agent` gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The shell command of a `command` gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Whether a failed gate holds the result back (retrying while `max_retries` allow);
    /// otherwise the failure is only recorded.
    #[serde(default = "blocks", alias = "block_on_failure")]
    pub block_on_failure: bool,
    /// How many times the delegated agent is asked again with the gate's feedback.
    #[serde(default, alias = "max_retries")]
    pub max_retries: u32,
    /// A `command` gate's wall-clock limit.
    #[serde(
        default,
        alias = "timeout_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_seconds: Option<u64>,
}

fn blocks() -> bool {
    true
}

/// The model that wrote a definition's revision: the agent it called as (`None`: its user's
/// own client, bound to no agent) and whether its caller named that agent itself (a header
/// rather than its token), as the policy reads an agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelAuthor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent_chosen_by_caller: bool,
}

/// The model of an agent: a Config Center service of the owner (its protocol, base URL and
/// key) and a model name that service serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentModel {
    /// The Config Center service's name.
    pub service: String,
    /// The model's name, as the provider knows it.
    pub model: String,
    /// What the model costs, if its owner says so: a run's cost is its tokens at this price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<ModelPrice>,
}

/// A model's price in US dollars per million tokens, as its provider lists it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelPrice {
    /// Dollars per million input (prompt) tokens.
    pub input_per_million: f64,
    /// Dollars per million output (completion) tokens.
    pub output_per_million: f64,
}

impl ModelPrice {
    /// What `input` and `output` tokens cost at this price, in dollars.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        // Token counts are far below 2^53: the conversion is exact.
        let (input, output) = (input as f64, output as f64);
        (input * self.input_per_million + output * self.output_per_million) / 1_000_000.0
    }
}

/// An agent's tool policy: the policy engine's scope policy (`ScopePolicy`), field for field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentToolPolicy {
    /// Replaces the operator's profile for this agent's runs (narrowed by it still).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_allow: Vec<String>,
}

/// Spec 001 §3's agent types: where an agent's `read_file` / `write_file` of the seven routed
/// context files (`SOUL.md`, `IDENTITY.md`, `AGENTS.md`, `TOOLS.md`, `HEARTBEAT.md`, `USER.md`,
/// `BOOTSTRAP.md`) go, and which of them its runs read from its user's own copies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentType {
    /// Only `USER.md` is the user's; the other six are the definition's (versioned, written
    /// as the definition is).
    #[default]
    Predefined,
    /// All seven are the user's; the definition's are the templates read while the user has
    /// none of their own.
    Open,
}

impl AgentType {
    #[must_use]
    pub fn is_predefined(&self) -> bool {
        *self == AgentType::Predefined
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            AgentType::Predefined => "predefined",
            AgentType::Open => "open",
        }
    }
}

/// One named text of an agent's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextFile {
    pub name: String,
    pub text: String,
}

/// What one run of an agent may spend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentLimits {
    /// Model turns per run.
    #[serde(default = "default_iterations")]
    pub max_iterations: u32,
    /// Tokens (input and output, as the provider counts them) per run; `None`: no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Wall-clock seconds per run.
    #[serde(default = "default_wall_time")]
    pub wall_time_secs: u64,
    /// Runs of this agent at once.
    #[serde(default = "default_concurrent")]
    pub max_concurrent_runs: u32,
    /// Delegations to this agent running at once, from every agent linked to it (spec 001
    /// §7's `max_delegation_load`).
    #[serde(default = "default_delegation_load")]
    pub max_delegation_load: u32,
}

fn default_delegation_load() -> u32 {
    5
}

fn default_iterations() -> u32 {
    DEFAULT_MAX_ITERATIONS
}

fn default_wall_time() -> u64 {
    600
}

fn default_concurrent() -> u32 {
    4
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_tokens: None,
            wall_time_secs: default_wall_time(),
            max_concurrent_runs: default_concurrent(),
            max_delegation_load: default_delegation_load(),
        }
    }
}

/// A stored agent: its definition, owned by one user, at a revision (each change is one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecord {
    pub id: String,
    pub owner: String,
    /// Unique per owner; the naming rule of tools.
    pub name: String,
    pub revision: i64,
    pub definition: AgentDefinition,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One revision of an agent's definition, as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentVersionRecord {
    pub agent_id: String,
    pub revision: i64,
    pub definition: AgentDefinition,
    pub created_at: DateTime<Utc>,
}

/// What the store's `update_agent` found: the store's answer to a
/// revision-checked change of an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentUpdate {
    Updated,
    /// No agent of that id belongs to the owner.
    NotFound,
    /// The stored revision is not the one before the new one.
    Conflict {
        actual: i64,
    },
    /// Another agent of the owner has the new name.
    NameTaken,
}

/// What the store's `insert_agent_within` did with a new agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentInsert {
    Inserted,
    /// The owner already has an agent of that name.
    NameTaken,
    /// The owner already has the most agents the cap allows.
    AtCap,
}

/// What the store's `insert_agent_run_within` did with a new run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunAdmission {
    Started,
    /// Its agent already has the most runs going its definition allows.
    AgentAtCap,
    /// Its owner already has the most runs going, across all their agents, the cap allows.
    OwnerAtCap,
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentRunStatus {
    /// The model or a tool works.
    Running,
    /// A tool call waits for a person's approval.
    WaitingApproval,
    /// The model gave its final answer.
    Completed,
    /// The run stopped on an error or a limit; `error` says which.
    Failed,
    /// Someone cancelled it.
    Cancelled,
}

impl AgentRunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentRunStatus::Running => "running",
            AgentRunStatus::WaitingApproval => "waiting_approval",
            AgentRunStatus::Completed => "completed",
            AgentRunStatus::Failed => "failed",
            AgentRunStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<AgentRunStatus> {
        match text {
            "running" => Some(AgentRunStatus::Running),
            "waiting_approval" => Some(AgentRunStatus::WaitingApproval),
            "completed" => Some(AgentRunStatus::Completed),
            "failed" => Some(AgentRunStatus::Failed),
            "cancelled" => Some(AgentRunStatus::Cancelled),
            _ => None,
        }
    }

    /// Whether the run has ended (its status never changes again).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            AgentRunStatus::Completed | AgentRunStatus::Failed | AgentRunStatus::Cancelled
        )
    }
}

/// What a run spent, as the provider reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Model requests answered (retries not counted).
    pub model_calls: u32,
    pub tool_calls: u32,
    /// Dollars the model turns cost at the definition's `model.price`; `None` when the
    /// revision the run uses names no price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl RunUsage {
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds the cost of one model turn of `input` and `output` tokens at `price` (nothing
    /// without a price).
    pub fn charge(&mut self, price: Option<&ModelPrice>, input: u64, output: u64) {
        if let Some(price) = price {
            self.cost = Some(self.cost.unwrap_or(0.0) + price.cost(input, output));
        }
    }
}

/// One run of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRunRecord {
    pub id: String,
    /// The user whose agent runs, and who started it.
    pub owner: String,
    /// The agent identity of the token that started it (`None`: a person), which alone, with
    /// the owner, may read or cancel it.
    pub caller_agent: Option<String>,
    pub agent_id: String,
    /// The definition's revision the run uses.
    pub agent_revision: i64,
    pub status: AgentRunStatus,
    /// The task the run was given.
    pub input: String,
    /// The model's final answer.
    pub output: Option<String>,
    /// Why the run failed or was cancelled.
    pub error: Option<String>,
    pub usage: RunUsage,
    /// Model turns taken.
    pub iterations: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The process that runs it.
    pub instance: String,
    /// Until when `instance` holds the run: renewed while it runs; a run not ended whose lease
    /// ran out is failed by any instance (its own stopped). `None`: no lease (never swept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<DateTime<Utc>>,
}

/// One step of a run: a model turn, a tool call and its result, an approval asked, an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRunStep {
    pub run_id: String,
    /// 0, 1, 2 … in the order taken.
    pub seq: i64,
    /// `model`, `tool_call`, `tool_result`, `approval`, `error`.
    pub kind: String,
    /// What the step holds (the model's text and tool calls, a call's name and arguments, a
    /// result as the pipeline returned it, after scrubbing).
    pub detail: Value,
    pub at: DateTime<Utc>,
}

/// Which runs a usage total counts: one owner's, since a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentUsageQuery {
    pub owner: String,
    /// `None`: every run of the owner, whoever started it (a person's view of what their
    /// user spent); `Some(agent)`: only the runs the agent identity `agent` started.
    pub caller_agent: Option<String>,
    /// Only runs created at or after this time.
    pub since: Option<DateTime<Utc>>,
}

/// What the counted runs of one agent spent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentUsageRow {
    pub agent_id: String,
    pub runs: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model_calls: u64,
    pub tool_calls: u64,
    /// The dollars of the runs that had a price; `None` when none had one.
    pub cost: Option<f64>,
    /// How many of the runs had a price (the others' cost is unknown).
    pub priced_runs: u64,
}
