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
    /// The name its starter gave it (`sandbox_initialize`'s `label`), shown by `sandbox_list`.
    label: Option<String>,
    created: SystemTime,
    /// When a run last started or ended in it (the clock the scavenger reads).
    last_used: Instant,
    /// The same moment as a date, for `sandbox_list`.
    last_used_at: SystemTime,
    /// Runs in progress; a busy session is never scavenged.
    running: usize,
}

/// One session as `sandbox_list` shows it to its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub label: Option<String>,
    pub created: SystemTime,
    pub last_used: SystemTime,
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

    fn touch(&mut self) {
        self.last_used = Instant::now();
        self.last_used_at = SystemTime::now();
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
            session.touch();
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

    /// Starts a session for `owner` acting as `agent`, named `label`: its id and folder. The
    /// cap counts every session of `owner`, whichever agent started it.
    pub(crate) fn create(
        &self,
        owner: &str,
        agent: Option<&str>,
        label: Option<String>,
    ) -> Result<(String, std::path::PathBuf), ExecError> {
        let id = format!("sbx_{}", uuid::Uuid::new_v4().simple());
        {
            let mut live = self.lock();
            let count = live.values().filter(|s| s.owner == owner).count();
            if count >= self.settings.max_per_user {
                return Err(ExecError::SessionLimit {
                    max: self.settings.max_per_user,
                    message: format!(
                        "you have {count} sandbox sessions, the most allowed; end one with \
                         sandbox_stop (or wait {} s of idleness) before starting another",
                        self.settings.idle_timeout.as_secs()
                    ),
                });
            }
            let now = SystemTime::now();
            live.insert(
                id.clone(),
                Session {
                    owner: owner.to_owned(),
                    agent: agent.map(str::to_owned),
                    label,
                    created: now,
                    last_used: Instant::now(),
                    last_used_at: now,
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
            session.touch();
        }
        let running = Running {
            sessions: self,
            id: id.to_owned(),
        };
        let ws = self.workspaces.for_session(owner, id)?;
        Ok((running, ws))
    }

    /// The sessions of `owner` started by `agent` (the ones its calls reach), oldest first.
    #[must_use]
    pub fn list(&self, owner: &str, agent: Option<&str>) -> Vec<SessionInfo> {
        let mut sessions: Vec<SessionInfo> = self
            .lock()
            .iter()
            .filter(|(_, s)| s.held_by(owner, agent))
            .map(|(id, s)| SessionInfo {
                id: id.clone(),
                label: s.label.clone(),
                created: s.created,
                last_used: s.last_used_at,
            })
            .collect();
        sessions.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
        sessions
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

/// The longest `label` of a session, in characters.
pub const MAX_LABEL_CHARS: usize = 200;
/// The most `commands` one `sandbox_exec` call runs.
pub const MAX_COMMANDS: usize = 20;
/// The largest code `sandbox_run_js` saves as a file (`saveAs`): not an argument of a process,
/// so larger than [`super::MAX_CODE_BYTES`].
pub const MAX_SAVED_CODE_BYTES: usize = 1024 * 1024;
/// What `saveAs` may be: a plain file name of a JavaScript file.
const SAVE_AS_PATTERN: &str = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.(js|mjs|cjs)$";

fn session_id_schema() -> Value {
    json!({"type": "string", "description": "The id sandbox_initialize returned."})
}

pub fn initialize_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_initialize",
        "Start a sandbox session: a private folder kept between calls, so files written by one \
         sandbox_exec or sandbox_run_js are there for the next. Returns sessionId (pass it to \
         the other sandbox_ tools), workdir and idleTimeoutSeconds: an idle session is stopped \
         and its files deleted. End it with sandbox_stop; sandbox_list shows your sessions.",
        json!({
            "type": "object",
            "properties": {
                "label": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS, "description": "A name for the session, shown by sandbox_list (e.g. what it is for)."}
            },
            "additionalProperties": false
        }),
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

pub fn list_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_list",
        "List your running sandbox sessions (the ones sandbox_initialize started for you), \
         oldest first: sessionId, label, createdAt and lastUsedAt of each, and \
         idleTimeoutSeconds (a session unused that long is stopped).",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .with_tags(&[
        "sandbox", "session", "list", "sessions", "running", "show", "active",
    ])
}

pub fn exec_definition() -> ToolDefinition {
    ToolDefinition::new(
        "sandbox_exec",
        "Execute a shell command in a sandbox session's folder (files persist between calls). \
         No network, at most 30 seconds a command. Returns success, exitCode, stdout, stderr, \
         timedOut, truncated, durationMs. Give commands (a list) instead of command to run \
         several in order, each its own run: they stop at the first that fails, and results \
         holds one entry per command run.",
        json!({
            "type": "object",
            "properties": {
                "sessionId": session_id_schema(),
                "command": {"type": "string", "description": "Run as /bin/sh -c COMMAND in the session's folder."},
                "commands": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_COMMANDS, "description": "Instead of command: up to 20 commands, run one after another (each as /bin/sh -c), stopping at the first that fails."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["sessionId"],
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
         seconds. Print results with console.log. Returns success, exitCode, stdout, stderr. \
         With saveAs (e.g. \"index.mjs\": an ES module, with import and top-level await) the \
         code is saved as that file of the session and run as `node <file>`.",
        json!({
            "type": "object",
            "properties": {
                "sessionId": session_id_schema(),
                "code": {"type": "string", "description": "A Node.js script."},
                "saveAs": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": SAVE_AS_PATTERN, "description": "A file name in the session's folder (no folders), ending .js, .mjs or .cjs: the code is written there (replacing that file) and run as `node <file>`; .mjs runs as an ES module."},
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

pub(crate) async fn initialize(
    deps: &Deps,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ExecError> {
    let label = match args.get("label") {
        None | Some(Value::Null) => None,
        Some(Value::String(label))
            if !label.is_empty() && label.chars().count() <= MAX_LABEL_CHARS =>
        {
            Some(label.clone())
        }
        Some(_) => {
            return Err(ExecError::Args(format!(
                "'label' must be a string of 1 to {MAX_LABEL_CHARS} characters"
            )));
        }
    };
    // No session without a sandbox to run in.
    deps.sandbox().await?;
    let sessions = deps.sessions()?.clone();
    let owner = ctx.user_id.clone();
    let agent = ctx.agent_id.clone();
    let given = label.clone();
    let (id, _) =
        tokio::task::spawn_blocking(move || sessions.create(&owner, agent.as_deref(), given))
            .await
            .map_err(|e| ExecError::Run(format!("the session could not be started: {e}")))??;
    let sessions = deps.sessions()?;
    let created = sessions.created(&id).map(iso);
    let mut out = json!({
        "sessionId": id,
        "workdir": "/tmp/work",
        "idleTimeoutSeconds": sessions.settings().idle_timeout.as_secs(),
        "createdAt": created,
    });
    if let Some(label) = label {
        object::set(&mut out, "label", json!(label));
    }
    Ok(out)
}

/// A time as JavaScript's `toISOString` writes it (UTC, milliseconds, `Z`).
fn iso(at: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(at)
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

pub(crate) fn list(deps: &Deps, ctx: &ToolContext) -> Result<Value, ExecError> {
    let sessions = deps.sessions()?;
    let listed: Vec<Value> = sessions
        .list(&ctx.user_id, ctx.agent_id.as_deref())
        .into_iter()
        .map(|s| {
            let mut row = json!({
                "sessionId": s.id,
                "createdAt": iso(s.created),
                "lastUsedAt": iso(s.last_used),
            });
            if let Some(label) = s.label {
                object::set(&mut row, "label", json!(label));
            }
            row
        })
        .collect();
    Ok(json!({
        "sessions": listed,
        "idleTimeoutSeconds": sessions.settings().idle_timeout.as_secs(),
    }))
}

/// `sandbox_exec`'s commands: `command`, or `commands` (1 to [`MAX_COMMANDS`]), not both.
fn commands_arg(args: &Value) -> Result<Option<Vec<&str>>, ExecError> {
    match (args.get("command"), args.get("commands")) {
        (Some(_), Some(_)) => Err(ExecError::Args(
            "give 'command' (one) or 'commands' (a list), not both".into(),
        )),
        (None, None) => Err(ExecError::Args(
            "'command' must be a non-empty string: the shell command to run in the session \
             (or give 'commands', a list of them)"
                .into(),
        )),
        (Some(_), None) => Ok(None),
        (None, Some(list)) => {
            let words = list
                .as_array()
                .filter(|l| (1..=MAX_COMMANDS).contains(&l.len()));
            let Some(words) = words else {
                return Err(ExecError::Args(format!(
                    "'commands' must be a list of 1 to {MAX_COMMANDS} shell commands"
                )));
            };
            let mut out = Vec::with_capacity(words.len());
            for (i, word) in words.iter().enumerate() {
                let command = word
                    .as_str()
                    .filter(|c| !c.trim().is_empty())
                    .ok_or_else(|| {
                        ExecError::Args(format!("'commands[{i}]' must be a non-empty string"))
                    })?;
                out.push(command);
            }
            Ok(Some(out))
        }
    }
}

pub(crate) async fn exec(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let id = session_id(args)?;
    let several = commands_arg(args)?;
    let commands = match &several {
        Some(list) => list.clone(),
        None => vec![code_arg(
            args,
            "command",
            "the shell command to run in the session",
        )?],
    };
    for command in &commands {
        if command.len() > super::MAX_CODE_BYTES || command.contains('\0') {
            return Err(ExecError::Args(format!(
                "a command must be at most {} bytes, without NUL bytes",
                super::MAX_CODE_BYTES
            )));
        }
        check_command(command)?;
    }
    let timeout = timeout_arg(args, ctx)?;
    let sessions = deps.sessions()?;
    let (_running, folder) = sessions.enter(&ctx.user_id, ctx.agent_id.as_deref(), id)?;
    let mut results = Vec::with_capacity(commands.len());
    for command in commands {
        let mut request = RunRequest::shell(command);
        request.timeout = timeout;
        let mut out = run_in(deps, &folder, request).await?;
        let failed = out.get("success") != Some(&json!(true));
        if several.is_none() {
            object::set(&mut out, "sessionId", json!(id));
            return Ok(out);
        }
        object::set(&mut out, "command", json!(command));
        results.push(out);
        if failed {
            break;
        }
    }
    let success = results
        .iter()
        .all(|r| r.get("success") == Some(&json!(true)));
    Ok(json!({"success": success, "sessionId": id, "results": results}))
}

pub(crate) async fn run_js(
    deps: &Deps,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ExecError> {
    let id = session_id(args)?;
    let save_as = match args.get("saveAs") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) if save_as_ok(name) => Some(name.as_str()),
        Some(_) => {
            return Err(ExecError::Args(
                "'saveAs' must be a plain file name ending .js, .mjs or .cjs (letters, digits, \
                 '_', '-', '.'; no folders), e.g. \"index.mjs\""
                    .into(),
            ));
        }
    };
    let code = match save_as {
        None => code_arg(args, "code", "the Node.js script to run in the session")?,
        Some(_) => saved_code_arg(args)?,
    };
    let timeout = timeout_arg(args, ctx)?;
    let sessions = deps.sessions()?;
    let (_running, folder) = sessions.enter(&ctx.user_id, ctx.agent_id.as_deref(), id)?;
    let argv: Vec<&str> = match save_as {
        None => vec!["node", "-e", code],
        Some(name) => {
            let path = folder.path(name)?;
            let options = crate::workspace::WriteOptions {
                overwrite: true,
                create_parents: false,
            };
            // One file of at most 1 MiB: written in place, as the file tools' small writes.
            folder.write(&path, code.as_bytes(), options)?;
            vec!["node", name]
        }
    };
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

/// Whether `name` is a plain JavaScript file name `saveAs` may write.
fn save_as_ok(name: &str) -> bool {
    let plain = name.len() <= 255
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    plain
        && [".js", ".mjs", ".cjs"]
            .iter()
            .any(|ext| name.ends_with(ext) && name.len() > ext.len())
}

/// The `code` `saveAs` writes: non-empty, at most [`MAX_SAVED_CODE_BYTES`].
fn saved_code_arg(args: &Value) -> Result<&str, ExecError> {
    let code = args
        .get("code")
        .and_then(Value::as_str)
        .filter(|code| !code.trim().is_empty())
        .ok_or_else(|| {
            ExecError::Args("'code' must be a non-empty string: the Node.js script to run".into())
        })?;
    if code.len() > MAX_SAVED_CODE_BYTES {
        return Err(ExecError::Args(format!(
            "'code' is {} bytes; the limit with saveAs is {MAX_SAVED_CODE_BYTES}: write the \
             rest as files of the session (sandbox_exec) and import them",
            code.len()
        )));
    }
    Ok(code)
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
