//! The sessions tools (spec 001 §2 "Sessions", §6 "Subagent System"): conversations with the
//! caller's agents that Toolsmith runs, and subagents — anonymous child runs of the calling
//! agent given a task and a label.
//!
//! - `sessions_list`, `sessions_history`, `session_status` — read the caller's sessions.
//! - `sessions_send` — send a message to a session (a new one with an agent, or one the caller
//!   has); the agent answers through a run whose history is the session's messages.
//! - `sessions_spawn`, `subagents` — a subagent spawned (async), run (sync), listed, cancelled
//!   or steered, within spec 001 §6's limits.
//!
//! Everything here is the service's (`SessionHost`): the runs, the store, the limits. The tools
//! only declare themselves and hand their arguments on.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{
    ErrorKind, PermissionSet, RegisteredTool, ResultSource, ToolContext, ToolDefinition,
    ToolExecutor, ToolResult,
};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Sessions";
/// The tool group of this family.
pub const GROUP: &str = "sessions";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    GROUP,
    "Sessions",
    "Conversations with your agents that Toolsmith runs, and subagents: child runs given a task and a label, spawned, run, listed, cancelled or steered.",
    "runs agents (model requests that cost tokens) and keeps their conversations",
    ResultSource::External,
    &[
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "sessions_spawn",
        "subagents",
        "session_status",
    ],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &["sessions_list", "sessions_history", "session_status"],
    ),
    (
        Effect::Runs,
        &["sessions_send", "sessions_spawn", "subagents"],
    ),
];

/// How the sessions tools reach the server: the service runs them as the caller.
#[async_trait]
pub trait SessionHost: Send + Sync + std::fmt::Debug {
    /// Runs the sessions tool `tool` with `args` as the caller of `ctx`; the reply, or what
    /// went wrong in words the model can act on (with its error kind).
    async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<Value, (ErrorKind, String)>;
}

/// A tool of the agents' families (`sessions`, `delegation`): its calls go to the service's
/// [`SessionHost`].
pub(crate) struct SessionExecutor {
    pub(crate) host: Option<Arc<dyn SessionHost>>,
    pub(crate) tool: &'static str,
}

#[async_trait]
impl ToolExecutor for SessionExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let Some(host) = &self.host else {
            return ToolResult::error(
                ErrorKind::ExecutionError,
                "this server runs no agents: it was started without a way to run them (an \
                 embedder must set BuiltinEnv::agent_sessions; `toolsmith serve` always does)",
            );
        };
        match host.call(self.tool, args, ctx).await {
            Ok(content) => ToolResult::ok(content),
            Err((kind, message)) => ToolResult::error(kind, message),
        }
    }
}

fn key_property() -> Value {
    json!({"type": "string", "description": "The session's key (its id, ses_… or sub_…), as sessions_list or sessions_send gave it."})
}

fn definitions() -> [(&'static str, ToolDefinition); 6] {
    let label = json!({"type": "string", "description": "A short name people and models read, e.g. \"pricing research\"."});
    let agent = json!({"type": "string", "description": "The agent (one of your agent definitions, by name or id) that answers; leave it out inside an agent's run to use that agent."});
    [
        (
            "sessions_list",
            ToolDefinition::new(
                "sessions_list",
                "List your sessions with agents (conversations and subagents), newest change first, with their status.",
                json!({
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": ["session", "subagent"], "description": "session: only conversations (sessions_send); subagent: only subagents (sessions_spawn, subagents)."},
                        "includeArchived": {"type": "boolean", "description": "Also list subagents archived after their time (default false)."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many (default 50)."}
                    },
                    "additionalProperties": false
                }),
            )
            .with_tags(&["sessions", "conversations", "agents", "list", "subagents"]),
        ),
        (
            "sessions_history",
            ToolDefinition::new(
                "sessions_history",
                "Read a session's message history (what was sent and what the agent answered), oldest first.",
                json!({
                    "type": "object",
                    "properties": {
                        "sessionKey": key_property(),
                        "limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "The last this many messages (default 50)."}
                    },
                    "required": ["sessionKey"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["sessions", "history", "messages", "conversation", "transcript"]),
        ),
        (
            "sessions_send",
            ToolDefinition::new(
                "sessions_send",
                "Continue a conversation (session) with one of your agents: the agent answers through a run that reads the session's history. Without sessionKey a new session with `agent` begins.",
                json!({
                    "type": "object",
                    "properties": {
                        "sessionKey": key_property(),
                        "agent": agent,
                        "message": {"type": "string", "description": "What to say to the agent (the next turn of the conversation)."},
                        "label": label,
                        "wait": {"type": "boolean", "description": "Wait for the answer (default true); false answers at once with the session running."}
                    },
                    "required": ["message"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["sessions", "conversation", "agent", "chat", "ask", "continue"]),
        ),
        (
            "sessions_spawn",
            ToolDefinition::new(
                "sessions_spawn",
                "Spawn a subagent: an anonymous child run of the agent given a task and a label. Answers at once; the result is announced to you when it is done (in your next turn inside a run, else read it with subagents list).",
                json!({
                    "type": "object",
                    "properties": {
                        "task": {"type": "string", "description": "What the subagent must do, in full: it sees nothing else of your conversation."},
                        "label": label,
                        "agent": agent
                    },
                    "required": ["task"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["subagent", "spawn", "delegate", "parallel", "background", "child"]),
        ),
        (
            "subagents",
            ToolDefinition::new(
                "subagents",
                "Manage your subagents: spawn (async), run (wait for the result), list, cancel (an id, \"all\" or \"last\") or steer (a message for a running one's next turn).",
                json!({
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["spawn", "run", "list", "cancel", "steer"], "description": "spawn: start a subagent and answer at once; run: start one and wait for its result; list: your subagents with their status; cancel: stop one (id), \"all\" or \"last\"; steer: leave a message a running one reads at its next turn."},
                        "task": {"type": "string", "description": "spawn, run: what the subagent must do."},
                        "label": label,
                        "agent": agent,
                        "id": {"type": "string", "description": "cancel: a subagent's key, \"all\" or \"last\"; steer: a subagent's key."},
                        "message": {"type": "string", "description": "steer: what the subagent reads at its next turn (with restart: its new task)."},
                        "restart": {"type": "boolean", "description": "steer: cancel the subagent and spawn it again with message as its task, keeping its label (spec 001 §6's steer; works from any instance). Default false: the running subagent reads message at its next turn and keeps what it has done."}
                    },
                    "required": ["action"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["subagents", "spawn", "cancel", "steer", "list", "delegate", "children"]),
        ),
        (
            "session_status",
            ToolDefinition::new(
                "session_status",
                "The status of a session (running, idle, completed …, its messages and last run); without sessionKey, the current one (the run's session) or a summary of yours.",
                json!({
                    "type": "object",
                    "properties": {"sessionKey": key_property()},
                    "additionalProperties": false
                }),
            )
            .with_tags(&["session", "status", "state", "progress"]),
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
                Arc::new(SessionExecutor {
                    host: env.agent_sessions.clone(),
                    tool,
                }),
            )
        })
        .collect()
}
