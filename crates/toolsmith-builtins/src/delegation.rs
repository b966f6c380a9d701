//! The delegation tools (spec 001 §7, §9, §10): agents working together across agent
//! boundaries, over the agent links a person made.
//!
//! - `delegate` — hand a task to another agent (actions delegate, cancel, list, history;
//!   `sync` waits for the answer, `async` announces it later).
//! - `delegate_search` — find the agents the caller may delegate to that fit a task.
//! - `evaluate_loop` — a generator and an evaluator agent, draft and judge, at most 5 rounds.
//! - `handoff` — give the caller's session to another agent (action `clear` gives it back).
//!
//! This is the callback pattern of §7: these tools know nothing of agents or runs; they hand
//! their arguments to the host the service provides at wiring time (`SessionHost`, the same as
//! the sessions tools'), which runs them as the caller.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::model::Effect;
use toolsmith_core::{PermissionSet, RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Delegation";
/// The tool group of this family.
pub const GROUP: &str = "delegation";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    GROUP,
    "Delegation",
    "Agents working together: delegate a task to another of your agents over a link you made, find the right one, run a generator and an evaluator agent in turns, or hand a conversation to another agent.",
    "runs agents (model requests that cost tokens) on tasks models hand to each other",
    ResultSource::External,
    &["delegate", "delegate_search", "evaluate_loop", "handoff"],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["delegate_search"]),
    (Effect::Runs, &["delegate", "evaluate_loop"]),
    (Effect::Changes, &["handoff"]),
];

fn definitions() -> [(&'static str, ToolDefinition); 4] {
    let agent = |what: &str| json!({"type": "string", "description": what});
    [
        (
            "delegate",
            ToolDefinition::new(
                "delegate",
                "Delegate a task to another of your agents (it works with its own tools and model; a person must have linked you to it). Actions: delegate (mode sync waits for its answer, async goes on and the result comes later as delegate:<id>), cancel a running one, list running ones, history of past ones.",
                json!({
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["delegate", "cancel", "list", "history"], "description": "delegate (the default): hand over a task; cancel: stop a running delegation (id); list: your running delegations; history: your past delegations, newest first."},
                        "agent": agent("delegate: the agent to hand the task to (its key, as DELEGATION.md or delegate_search names it)."),
                        "task": {"type": "string", "description": "delegate: the task, in full — the agent sees nothing else of your conversation."},
                        "context": {"type": "string", "description": "delegate: facts the agent needs besides the task (optional)."},
                        "mode": {"type": "string", "enum": ["sync", "async"], "description": "delegate: sync (default) waits for the answer; async answers at once and the result is announced to you later."},
                        "id": {"type": "string", "description": "cancel: the delegation's id (dlg_…)."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "list, history: at most this many (default 50)."}
                    },
                    "additionalProperties": false
                }),
            )
            .with_tags(&["delegate", "delegation", "agent", "hand over", "assign", "task", "team"]),
        ),
        (
            "delegate_search",
            ToolDefinition::new(
                "delegate_search",
                "Find the agents you may delegate to that fit a task: a full-text search over their names, descriptions and links.",
                json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What the task needs, in a few words (e.g. \"invoices refunds\")."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "At most this many agents (default 5)."}
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["delegate", "search", "find agent", "discover", "delegation targets"]),
        ),
        (
            "evaluate_loop",
            ToolDefinition::new(
                "evaluate_loop",
                "Generate-evaluate-revise with two agents: the generator drafts, the evaluator answers APPROVED or REJECTED: feedback against your criteria, and the generator revises, until approved or maxRounds (default 3, at most 5).",
                json!({
                    "type": "object",
                    "properties": {
                        "generator": agent("The agent that writes and revises the draft."),
                        "evaluator": agent("The agent that judges each draft against the criteria."),
                        "task": {"type": "string", "description": "What the generator must produce."},
                        "criteria": {"type": "string", "description": "What a draft must meet to be approved."},
                        "maxRounds": {"type": "integer", "minimum": 1, "maximum": 5, "description": "Rounds at most (default 3)."}
                    },
                    "required": ["generator", "evaluator", "task", "criteria"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["evaluate", "review", "revise", "optimize", "critic", "loop", "draft"]),
        ),
        (
            "handoff",
            ToolDefinition::new(
                "handoff",
                "Transfer the conversation (your session) to another agent: its next messages go to that agent, with the conversation so far, until cleared (action clear gives it back).",
                json!({
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["transfer", "clear"], "description": "transfer (the default): give the session to `agent`; clear: give it back to the agent it was handed from."},
                        "agent": agent("transfer: the agent that answers from now on."),
                        "reason": {"type": "string", "description": "transfer: why, for the agent taking over (e.g. \"billing question\")."},
                        "sessionKey": {"type": "string", "description": "The session to hand off or give back (ses_…); leave it out inside a run to use the run's session."}
                    },
                    "additionalProperties": false
                }),
            )
            .with_tags(&["handoff", "transfer", "route", "conversation", "agent", "escalate"]),
        ),
    ]
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    definitions()
        .into_iter()
        .map(|(tool, definition)| {
            crate::builtin_tool(
                definition,
                CATEGORY,
                PermissionSet::new(),
                Arc::new(crate::sessions::SessionExecutor {
                    host: env.agent_sessions.clone(),
                    tool,
                }),
            )
        })
        .collect()
}
