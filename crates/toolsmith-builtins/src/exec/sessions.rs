//! Sandbox sessions (002 "Sandbox Sessions"): a session is a folder of its own
//! (`<user>/sessions/<id>` under the workspaces root) kept between calls, so files persist
//! across `sandbox_exec` and `sandbox_run_js` runs; each run is a fresh command sandbox with
//! only that folder mounted at `/tmp/work`.
//!
//! - A session id is usable by its owner only — the call's user *and agent*: one agent of a user
//!   cannot run code in, or stop, another agent's session (a person, calling with no agent,
//!   has sessions of their own too); anyone else's id, an unknown and an ended one all answer
//!   alike.
//! - A session idle for [`SessionSettings::idle_timeout`] is stopped by the scavenger
//!   ([`Sessions::spawn_scavenger`]) and its folder removed; a session with a run in progress is
//!   never scavenged. [`Sessions::stop_all`] ends every session at shutdown, and
//!   [`Sessions::new`] removes the folders a crashed or killed process left.
//! - A user has at most [`SessionSettings::max_per_user`] sessions at once.
//! - `sandbox_run_js` runs the code with the host's `node` inside the sandbox (Node.js, so
//!   the code can use the session's files); `execute_javascript` is the QuickJS path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::object;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{
    Deps, ExecError, check_command, code_arg, program_missing, run_in, timeout_arg, timeout_schema,
};
use crate::workspace::{Workspace, Workspaces};

/// The default idle timeout of a session (15 minutes).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// The default cap of one user's sessions.
pub const DEFAULT_MAX_PER_USER: usize = 5;

/// The settings of sandbox sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionSettings {
    /// A session unused this long is stopped and its files removed.
    pub idle_timeout: Duration,
    /// Most sessions one user has at once.
    pub max_per_user: usize,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_per_user: DEFAULT_MAX_PER_USER,
        }
    }
}

struct Session {
    owner: String,
    /// The agent that started it (`None`: the person); only calls of the same agent reach it.
    agent: Option<String>,
    created: SystemTime,
    last_used: Instant,
    /// Runs in progress; a busy session is never scavenged.
    running: usize,
}

/// Every live session of the server.
pub struct Sessions {
    workspaces: Arc<Workspaces>,
    settings: SessionSettings,
    live: Mutex<HashMap<String, Session>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Whether calls of `owner` acting as `agent` reach this session.
    fn held_by(&self, owner: &str, agent: Option<&str>) -> bool {
        self.owner == owner && self.agent.as_deref() == agent
    }
}

/// A run in progress in a session: keeps it from being scavenged until dropped.
pub(crate) struct Running<'a> {
    sessions: &'a Sessions,
    id: String,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut live = self.sessions.lock();
        if let Some(session) = live.get_mut(&self.id) {
            session.running = session.running.saturating_sub(1);
            session.last_used = Instant::now();
        }
    }
}

impl Sessions {
    /// The sessions of a server starting now: none, so every session folder found (left by
    /// a process that crashed or was killed) is removed first.
    #[must_use]
    pub fn new(workspaces: Arc<Workspaces>, settings: SessionSettings) -> Arc<Sessions> {
        let leftovers = workspaces.remove_all_sessions();
        if leftovers > 0 {
            tracing::info!(
                removed = leftovers,
                "sandbox session folders left by an earlier run removed"
            );
        }
        Arc::new(Sessions {
            workspaces,
            settings,
            live: Mutex::new(HashMap::new()),
        })
    }

    #[must_use]
    pub fn settings(&self) -> SessionSettings {
        self.settings
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a session for `owner` acting as `agent`: its id and folder. The cap counts every
    /// session of `owner`, whichever agent started it.
    pub(crate) fn create(
        &self,
        owner: &str,
        agent: Option<&str>,
    ) -> Result<(String, std::path::PathBuf), ExecError> {
        let id = format!("sbx_{}", uuid::Uuid::new_v4().simple());
        {
            let mut live = self.lock();
            let count = live.values().filter(|s| s.owner == owner).count();
            if count >= self.settings.max_per_user {
                return Err(ExecError::Limit(format!(
                    "you have {count} sandbox sessions, the most allowed; end one with \
                     sandbox_stop (or wait {} s of idleness) before starting another",
                    self.settings.idle_timeout.as_secs()
                )));
            }
            live.insert(
                id.clone(),
                Session {
                    owner: owner.to_owned(),
                    agent: agent.map(str::to_owned),
                    created: SystemTime::now(),
                    last_used: Instant::now(),
                    running: 0,
                },
            );
        }
        match self.workspaces.for_session(owner, &id) {
            Ok(ws) => Ok((id, ws.root_path().to_path_buf())),
            Err(e) => {
                self.lock().remove(&id);
                Err(e.into())
            }
        }
    }

    /// The folder of `owner`'s session `id` started by `agent`, marked running until the guard
    /// drops.
    pub(crate) fn enter(
        &self,
        owner: &str,
        agent: Option<&str>,
        id: &str,
    ) -> Result<(Running<'_>, Workspace), ExecError> {
        {
            let mut live = self.lock();
            let session = live
                .get_mut(id)
                .filter(|s| s.held_by(owner, agent))
                .ok_or_else(|| unknown(id))?;
            session.running += 1;
            session.last_used = Instant::now();
        }
        let running = Running {
            sessions: self,
            id: id.to_owned(),
        };
        let ws = self.workspaces.for_session(owner, id)?;
        Ok((running, ws))
    }

    /// Ends `owner`'s session `id` started by `agent` and removes its files.
    pub(crate) fn stop(&self, owner: &str, agent: Option<&str>, id: &str) -> Result<(), ExecError> {
        {
            let mut live = self.lock();
            if live.get(id).is_none_or(|s| !s.held_by(owner, agent)) {
                return Err(unknown(id));
            }
            live.remove(id);
        }
        self.workspaces.remove_session(owner, id)?;
        Ok(())
    }

    /// Ends every session idle longer than the timeout (and not running); how many ended.
    pub fn scavenge(&self) -> usize {
        let idle = self.settings.idle_timeout;
        let expired: Vec<(String, String)> = {
            let mut live = self.lock();
            let ids: Vec<String> = live
                .iter()
                .filter(|(_, s)| s.running == 0 && s.last_used.elapsed() >= idle)
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| live.remove(&id).map(|s| (id, s.owner)))
                .collect()
        };
        self.remove_folders(&expired);
        expired.len()
    }

    /// Ends every session (at shutdown); how many ended.
    pub fn stop_all(&self) -> usize {
        let all: Vec<(String, String)> = self.lock().drain().map(|(id, s)| (id, s.owner)).collect();
        self.remove_folders(&all);
        all.len()
    }

    /// How many sessions are live.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn remove_folders(&self, ended: &[(String, String)]) {
        for (id, owner) in ended {
            if let Err(e) = self.workspaces.remove_session(owner, id) {
                tracing::warn!(session = %id, error = %e, "a sandbox session's folder could not be removed");
            }
        }
    }

    /// Scavenges every `every` until the sessions are dropped.
    pub fn spawn_scavenger(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak: Weak<Sessions> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(sessions) = weak.upgrade() else {
                    return;
                };
                let ended = tokio::task::spawn_blocking(move || sessions.scavenge())
                    .await
                    .unwrap_or(0);
                if ended > 0 {
                    tracing::info!(ended, "idle sandbox sessions stopped");
                }
            }
        })
    }

    fn created(&self, id: &str) -> Option<SystemTime> {
        self.lock().get(id).map(|s| s.created)
    }
}

fn unknown(id: &str) -> ExecError {
    let shown: String = id.chars().take(80).collect();
    ExecError::NotFound(format!(
        "no sandbox session '{shown}' of yours is running (it was stopped, timed out when idle, \
         or never existed); start one with sandbox_initialize"
    ))
}

fn session_id(args: &Value) -> Result<&str, ExecError> {
    args.get("sessionId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            ExecError::Args(
                "'sessionId' must be the id sandbox_initialize returned (e.g. \"sbx_…\")".into(),
            )
        })
}

fn session_id_schema() -> Value {
    json!({"type": "string", "description": "The id sandbox_initialize returned."})
}

pub fn initialize_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_initialize",
        "Start a sandbox session: a private folder kept between calls, so files written by one \
         sandbox_exec or sandbox_run_js are there for the next. Returns sessionId (pass it to \
         the other sandbox_ tools), workdir and idleTimeoutSeconds: an idle session is stopped \
         and its files deleted. End it with sandbox_stop.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .with_tags(&[
        "sandbox",
        "session",
        "start",
        "create",
        "initialize",
        "persistent",
        "environment",
        "container",
        "workspace",
        "begin",
        "open",
    ])
}

pub fn exec_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_exec",
        "Execute a shell command in a sandbox session's folder (files persist between calls). \
         No network, at most 30 seconds. Returns success, exitCode, stdout, stderr, timedOut, \
         truncated, durationMs.",
        json!({
            "type": "object",
            "properties": {
                "sessionId": session_id_schema(),
                "command": {"type": "string", "description": "Run as /bin/sh -c COMMAND in the session's folder."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["sessionId", "command"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["sandbox", "session", "shell", "command", "exec", "run", "execute", "persistent", "bash"])
}

pub fn run_js_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_run_js",
        "Run JavaScript with Node.js (the host's node) in a sandbox session's folder: the code \
         can read and write the session's files (require('fs')). No network, at most 30 \
         seconds. Print results with console.log. Returns success, exitCode, stdout, stderr.",
        json!({
            "type": "object",
            "properties": {
                "sessionId": session_id_schema(),
                "code": {"type": "string", "description": "A Node.js script."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["sessionId", "code"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "sandbox",
        "session",
        "javascript",
        "js",
        "node",
        "run",
        "persistent",
        "script",
    ])
}

pub fn stop_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_stop",
        "Stop a sandbox session and delete its files.",
        json!({
            "type": "object",
            "properties": {"sessionId": session_id_schema()},
            "required": ["sessionId"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "sandbox",
        "session",
        "stop",
        "end",
        "close",
        "delete",
        "cleanup",
        "terminate",
        "finish",
    ])
}

pub(crate) async fn initialize(deps: &Deps, ctx: &ToolContext) -> Result<Value, ExecError> {
    // No session without a sandbox to run in.
    deps.sandbox().await?;
    let sessions = deps.sessions()?.clone();
    let owner = ctx.user_id.clone();
    let agent = ctx.agent_id.clone();
    let (id, _) = tokio::task::spawn_blocking(move || sessions.create(&owner, agent.as_deref()))
        .await
        .map_err(|e| ExecError::Run(format!("the session could not be started: {e}")))??;
    let sessions = deps.sessions()?;
    let created = sessions
        .created(&id)
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339());
    Ok(json!({
        "sessionId": id,
        "workdir": "/tmp/work",
        "idleTimeoutSeconds": sessions.settings().idle_timeout.as_secs(),
        "createdAt": created,
    }))
}

pub(crate) async fn exec(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let id = session_id(args)?;
    let command = code_arg(args, "command", "the shell command to run in the session")?;
    check_command(command)?;
    let timeout = timeout_arg(args, ctx)?;
    let sessions = deps.sessions()?;
    let (_running, folder) = sessions.enter(&ctx.user_id, ctx.agent_id.as_deref(), id)?;
    let mut request = RunRequest::shell(command);
    request.timeout = timeout;
    let mut out = run_in(deps, &folder, request).await?;
    object::set(&mut out, "sessionId", json!(id));
    Ok(out)
}

pub(crate) async fn run_js(
    deps: &Deps,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ExecError> {
    let id = session_id(args)?;
    let code = code_arg(args, "code", "the Node.js script to run in the session")?;
    let timeout = timeout_arg(args, ctx)?;
    let sessions = deps.sessions()?;
    let (_running, folder) = sessions.enter(&ctx.user_id, ctx.agent_id.as_deref(), id)?;
    let argv = ["node", "-e", code];
    let mut request = RunRequest::argv(&argv);
    request.timeout = timeout;
    let mut out = run_in(deps, &folder, request).await?;
    if program_missing(&out) {
        return Err(ExecError::Unavailable(
            "node is not installed on this host (sandbox_run_js uses the host's Node.js); \
             install nodejs, or use execute_javascript (QuickJS, no files)"
                .into(),
        ));
    }
    object::set(&mut out, "sessionId", json!(id));
    Ok(out)
}

pub(crate) async fn stop(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let id = session_id(args)?.to_owned();
    let sessions = deps.sessions()?.clone();
    let owner = ctx.user_id.clone();
    let agent = ctx.agent_id.clone();
    let id2 = id.clone();
    tokio::task::spawn_blocking(move || sessions.stop(&owner, agent.as_deref(), &id2))
        .await
        .map_err(|e| ExecError::Run(format!("the session could not be stopped: {e}")))??;
    Ok(json!({"sessionId": id, "stopped": true}))
}
