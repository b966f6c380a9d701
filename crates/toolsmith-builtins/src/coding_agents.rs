//! Coding agents (003 §26): `run_coding_task`, `list_coding_agents`, `get_task_result`,
//! `list_task_results` — a coding task handed to a coding-agent CLI installed on the server
//! (Claude Code's `claude`, OpenAI's `codex`, Google's `gemini`, or a custom program), run in
//! the command sandbox on the caller's workspace, its result kept.
//!
//! - **Where it runs:** the command sandbox (bubblewrap, the code tools' limits), the
//!   caller's workspace at `/tmp/work` under its quota and deny-list (`exec::run_in`), no
//!   shell (an argv), at most [`MAX_TIMEOUT_SECONDS`] (default [`DEFAULT_TIMEOUT_SECONDS`]),
//!   output capped. Its only way out is the registry proxy of `package_manager`
//!   ([`crate::exec::PackageRegistries`], labelled for agents) letting HTTPS through to the
//!   provider's one API host, resolved and checked by the egress guard with the owner's
//!   allowed domains; nothing else is reachable, loopback included.
//! - **Its key:** field `api_key` (a secret) of the caller's Config Center service of the
//!   provider (`claude_code`, `codex`, `gemini_cli`, `coding_agent_<name>`); it reaches the
//!   program only as its variable (`ANTHROPIC_API_KEY` …), never on its command line, and is
//!   cut out of the output before the output is returned or kept.
//! - **Its policy:** field `<service>` of the caller's Config Center service
//!   [`POLICY_SERVICE`]: `allowed`, `prompt` or `blocked`. Every coding agent is high risk (it
//!   writes and runs code, and talks to its provider), so the default is `prompt`: a model's
//!   call waits for a person's approval (the approval gate asks
//!   [`ToolExecutor::asks_person`]), a person's own call (REST, the CLI, the UI) runs.
//! - **Found where:** the operator's `coding_agent_dirs` ([`DEFAULT_DIRS`] by default); a
//!   program outside `/usr` is bound read-only into the sandbox by itself
//!   ([`toolsmith_command::RunRequest::program`]).
//! - **Kept:** each run is a record of the caller's own store (collection [`COLLECTION`],
//!   per user and agent): `get_task_result` and `list_task_results` read them.

mod providers;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_command::{PROGRAM_DIR, RunRequest};
use toolsmith_core::data::{DataRecord, RecordQuery, RecordScope};
use toolsmith_core::model::Effect;
use toolsmith_core::{
    Permission, PermissionSet, RegisteredTool, ResultSource, ToolContext, ToolDefinition,
    ToolExecutor, ToolResult,
};
use toolsmith_egress::{DomainPattern, EgressGuard};

pub use providers::{Agent, PROVIDERS, Provider};

use crate::BuiltinEnv;
use crate::exec::{Deps, ExecError, PackageRegistries, ProxyLabel};
use crate::groups::{ToolGroup, off};

/// The category of the family's tools.
pub const CATEGORY: &str = "Coding Agents";
/// The Config Center service whose fields set each agent's policy.
pub const POLICY_SERVICE: &str = "coding_agents";
/// The collection of the caller's records that keeps the results.
pub const COLLECTION: &str = "coding_task";
/// Where the agents' programs are looked for unless the operator says otherwise.
pub const DEFAULT_DIRS: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];
/// A task's time limit unless it asks for less or more (003: 300 s).
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 300;
/// The longest a task may run: the command sandbox's limit (003 says 1,800 s).
pub const MAX_TIMEOUT_SECONDS: u64 = toolsmith_command::MAX_TIMEOUT_SECONDS;
/// Longest prompt, in bytes.
const MAX_PROMPT_BYTES: usize = 50_000;
/// Characters of a run's stdout and stderr kept with its result (the whole of what the
/// sandbox returned goes back to the caller).
const KEPT_STDOUT_CHARS: usize = 20_000;
const KEPT_STDERR_CHARS: usize = 4_000;
/// The relay's interpreter (see `exec::registry_proxy`).
const RELAY: &str = "/usr/bin/python3";
/// Most results one `list_task_results` returns.
const MAX_LIST: u64 = 100;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    ..off(
        "codingAgents",
        "Coding Agents",
        "Hand a coding task to a coding-agent CLI of the server (Claude Code, Codex, Gemini \
         CLI …) working on your workspace in the command sandbox, and read its kept results.",
        "runs coding-agent programs of the host with your API keys (in the command sandbox)",
        ResultSource::External,
        &[
            "run_coding_task",
            "list_coding_agents",
            "get_task_result",
            "list_task_results",
        ],
    )
}];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[
    (Effect::Runs, &["run_coding_task"]),
    (
        Effect::Reads,
        &["list_coding_agents", "get_task_result", "list_task_results"],
    ),
];

/// The operator's settings: where the agents' programs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodingAgentSettings {
    /// Folders searched in order for each agent's program (`coding_agent_dirs`).
    pub dirs: Vec<PathBuf>,
}

impl Default for CodingAgentSettings {
    fn default() -> Self {
        CodingAgentSettings {
            dirs: DEFAULT_DIRS.iter().map(PathBuf::from).collect(),
        }
    }
}

/// What the family needs from the server: its settings and the egress guard (with each
/// owner's allowed domains) that decides what a run's proxy lets through.
#[derive(Debug, Clone)]
pub struct CodingAgents {
    pub settings: CodingAgentSettings,
    pub guard: EgressGuard,
    pub owner_domains: std::collections::HashMap<String, Vec<DomainPattern>>,
}

impl CodingAgents {
    fn guard_for(&self, owner: &str) -> EgressGuard {
        match self.owner_domains.get(owner) {
            Some(domains) => self.guard.for_owner(domains.clone()),
            None => self.guard.clone(),
        }
    }
}

fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "run_coding_task",
            "Delegate a coding task to an AI coding agent installed on the server (Claude Code, \
             Codex, Gemini CLI, or custom:<program>): it works on your workspace in a sandbox \
             whose only network is its provider's API, with your API key from the Config \
             Center. Be specific about files and the expected outcome. Returns resultId, \
             success, exitCode, output, stderr, timedOut, durationMs; the result is kept \
             (get_task_result, list_task_results).",
            json!({
                "type": "object",
                "properties": {
                    "provider": {"type": "string", "maxLength": 40, "description": "claude-code, codex, gemini-cli, or custom:<program> (list_coding_agents shows which are installed)."},
                    "prompt": {"type": "string", "minLength": 1, "maxLength": MAX_PROMPT_BYTES, "description": "The task: which files, what to change, what done looks like."},
                    "cwd": {"type": "string", "default": ".", "description": "An existing folder of your workspace to work in (relative, e.g. \"app\")."},
                    "model": {"type": "string", "maxLength": 100, "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/-]*$", "description": "A model of the provider's, e.g. \"sonnet\" (passed as --model)."},
                    "max_budget_usd": {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "description": "Most US dollars the task may spend (Claude Code only: --max-budget-usd)."},
                    "max_turns": {"type": "integer", "minimum": 1, "maximum": 200, "description": "Most agent turns (Claude Code only: --max-turns)."},
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECONDS, "default": DEFAULT_TIMEOUT_SECONDS, "description": "Wall-clock limit in seconds; at the end the agent and everything it started are killed."}
                },
                "required": ["provider", "prompt"],
                "additionalProperties": false
            }),
        )
        .with_tags(&["coding agent", "claude code", "claude", "codex", "gemini cli", "delegate coding", "write code", "fix the bug", "refactor", "implement feature", "ai programmer", "code task"]),
        ToolDefinition::new(
            "list_coding_agents",
            "List the coding agents run_coding_task can use: installed or not (and how to \
             install), version, whether your API key is configured (and where), the one API \
             host each reaches, and your policy for each (allowed, prompt, blocked).",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .with_tags(&["coding agents", "available agents", "claude code installed", "codex", "gemini cli", "agent status"]),
        ToolDefinition::new(
            "get_task_result",
            "Get the kept result of a coding agent task by its resultId: the prompt, provider, \
             success, output, duration.",
            json!({
                "type": "object",
                "properties": {"result_id": {"type": "string", "maxLength": 64, "description": "The resultId run_coding_task answered, e.g. \"ct_…\"."}},
                "required": ["result_id"],
                "additionalProperties": false
            }),
        )
        .with_tags(&["coding task result", "agent output", "task output", "coding agent result"]),
        ToolDefinition::new(
            "list_task_results",
            "List your recent coding agent task results, newest first: provider, prompt, \
             success, duration.",
            json!({
                "type": "object",
                "properties": {
                    "provider": {"type": "string", "maxLength": 40, "description": "Only this provider's tasks, e.g. \"codex\"."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIST, "default": 20, "description": "How many."}
                },
                "additionalProperties": false
            }),
        )
        .with_tags(&["coding task history", "past coding tasks", "agent runs", "coding agent results"]),
    ]
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let deps = Deps {
        workspaces: env.workspaces.clone(),
        host: env.code.clone(),
        sessions: env.sessions.clone(),
        registries: None,
    };
    definitions()
        .into_iter()
        .map(|definition| {
            let permissions = match definition.name.as_str() {
                "run_coding_task" => PermissionSet::from([
                    Permission::Shell,
                    Permission::Filesystem,
                    Permission::Network,
                ]),
                "list_coding_agents" => PermissionSet::from([Permission::Shell]),
                _ => PermissionSet::default(),
            };
            let name = definition.name.clone();
            crate::builtin_tool(
                definition,
                CATEGORY,
                permissions,
                Arc::new(AgentTool {
                    name,
                    deps: deps.clone(),
                    env: env.clone(),
                }),
            )
        })
        .collect()
}

struct AgentTool {
    name: String,
    deps: Deps,
    env: BuiltinEnv,
}

#[async_trait]
impl ToolExecutor for AgentTool {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let outcome = match self.name.as_str() {
            "list_coding_agents" => Ok(list(&self.deps, &self.env, ctx).await),
            "get_task_result" => get(&self.env, &args, ctx).await,
            "list_task_results" => results(&self.env, &args, ctx).await,
            _ => run(&self.deps, &self.env, &args, ctx).await,
        };
        match outcome {
            Ok(value) => ToolResult::ok(value),
            Err(e) => ToolResult::error(e.kind(), e.to_string()),
        }
    }

    /// A model's `run_coding_task` of an agent whose policy is `prompt` waits for a person.
    async fn asks_person(&self, args: &Value, ctx: &ToolContext) -> bool {
        if self.name != "run_coding_task" || !ctx.by_model() {
            return false;
        }
        let provider = args.get("provider").and_then(Value::as_str).unwrap_or("");
        match Agent::parse(provider) {
            Ok(agent) => policy(&self.env, ctx, &agent).await.0 == "prompt",
            Err(_) => false,
        }
    }
}

/// The caller's policy for `agent`, and whether it is the default (`prompt`).
async fn policy(env: &BuiltinEnv, ctx: &ToolContext, agent: &Agent) -> (String, bool) {
    let set = match &env.config {
        Some(config) => config.values(&ctx.user_id, POLICY_SERVICE).await,
        None => None,
    };
    let chosen = set
        .as_ref()
        .and_then(|values| values.get(&agent.policy_field))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|p| matches!(*p, "allowed" | "prompt" | "blocked"));
    match chosen {
        Some(p) => (p.to_owned(), false),
        None => ("prompt".to_owned(), true),
    }
}

/// The caller's service of `agent`, and its key (field `api_key`) if set.
async fn service(
    env: &BuiltinEnv,
    ctx: &ToolContext,
    agent: &Agent,
) -> (
    Option<std::collections::BTreeMap<String, Value>>,
    Option<String>,
) {
    let values = match &env.config {
        Some(config) => config.values(&ctx.user_id, &agent.service).await,
        None => None,
    };
    let key = values
        .as_ref()
        .and_then(|v| v.get("api_key"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned);
    (values, key)
}

fn dirs(env: &BuiltinEnv) -> Vec<PathBuf> {
    env.coding_agents.as_ref().map_or_else(
        || CodingAgentSettings::default().dirs,
        |agents| agents.settings.dirs.clone(),
    )
}

/// How the sandbox runs the program at `path`: by its own path under `/usr`, else bound.
fn sandbox_path(path: &std::path::Path) -> Option<(String, Option<&std::path::Path>)> {
    if providers::in_usr(path) {
        return Some((path.to_str()?.to_owned(), None));
    }
    let name = path.file_name()?.to_str()?;
    Some((format!("{PROGRAM_DIR}/{name}"), Some(path)))
}

/// The first line of `program --version`, run in the sandbox (no workspace, no network).
async fn version(deps: &Deps, path: &std::path::Path) -> Option<String> {
    let (program, bound) = sandbox_path(path)?;
    let argv = [program.as_str(), "--version"];
    let mut request = RunRequest::argv(&argv);
    request.program = bound;
    request.timeout = Duration::from_secs(10);
    request.stdout_cap = 4096;
    request.stderr_cap = 4096;
    let sandbox = deps.sandbox().await.ok()?;
    let output = sandbox.run(&request).await.ok()?;
    if output.exit_code != Some(0) {
        return None;
    }
    output
        .stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(200).collect())
}

async fn list(deps: &Deps, env: &BuiltinEnv, ctx: &ToolContext) -> Value {
    let dirs = dirs(env);
    let mut agents = Vec::new();
    for agent in Agent::named() {
        let path = providers::find(&dirs, &agent.program);
        let version = match &path {
            Some(path) => version(deps, path).await,
            None => None,
        };
        let (policy, default) = policy(env, ctx, &agent).await;
        let (_, key) = service(env, ctx, &agent).await;
        agents.push(json!({
            "provider": agent.id,
            "name": agent.name,
            "program": agent.program,
            "installed": path.is_some(),
            "path": path,
            "version": version,
            "install": if path.is_none() { Some(&agent.install) } else { None },
            "configured": key.is_some(),
            "service": agent.service,
            "keyEnv": agent.key_env,
            "apiHost": agent.api_host,
            "risk": "high",
            "policy": policy,
            "policyFrom": if default { "default" } else { POLICY_SERVICE },
        }));
    }
    json!({
        "agents": agents,
        "searched": dirs,
        "custom": "custom:<program> runs a program of those folders; its Config Center service coding_agent_<program> may give api_key, api_key_env and api_host",
        "policyService": POLICY_SERVICE,
        "note": "a person sets an agent's policy in the Config Center service 'coding_agents' (a field per agent, e.g. claude_code: allowed, prompt or blocked); prompt, the default, makes a model's call wait for a person's approval",
    })
}

/// The task's arguments, checked.
fn task_of(args: &Value) -> Result<(providers::Task, u64), ExecError> {
    let prompt = args
        .get("prompt")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            ExecError::Args(
                "'prompt' must say what to do, e.g. \"fix the failing test in app/\"".to_owned(),
            )
        })?;
    if prompt.len() > MAX_PROMPT_BYTES || prompt.contains('\0') {
        return Err(ExecError::Args(format!(
            "'prompt' must be at most {MAX_PROMPT_BYTES} bytes without NUL characters; put long \
             instructions in a workspace file and name it in the prompt"
        )));
    }
    let model = args.get("model").and_then(Value::as_str).map(str::to_owned);
    if let Some(model) = &model {
        let ok = !model.is_empty()
            && model.len() <= 100
            && !model.starts_with('-')
            && model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '/' | '-'));
        if !ok {
            return Err(ExecError::Args(format!(
                "'model' '{model}' is not a model name (letters, digits, '.', '_', ':', '/', '-')"
            )));
        }
    }
    let timeout = match args.get("timeout_seconds") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT_SECONDS,
        Some(v) => match v.as_u64() {
            Some(secs @ 1..) if secs <= MAX_TIMEOUT_SECONDS => secs,
            _ => {
                return Err(ExecError::Args(format!(
                    "'timeout_seconds' must be a whole number from 1 to {MAX_TIMEOUT_SECONDS} \
                     (the command sandbox's limit)"
                )));
            }
        },
    };
    let task = providers::Task {
        prompt: prompt.to_owned(),
        model,
        max_turns: args.get("max_turns").and_then(Value::as_u64),
        max_budget_usd: args.get("max_budget_usd").and_then(Value::as_f64),
    };
    Ok((task, timeout))
}

/// `text` with every occurrence of `secret` replaced.
fn scrub(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if secret.len() >= 4 => text.replace(secret, "[api_key withheld]"),
        _ => text.to_owned(),
    }
}

/// Field `key` of `value` (`null` when it has none).
fn at(value: &Value, key: &str) -> Value {
    value.get(key).cloned().unwrap_or(Value::Null)
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n… (cut at {max} characters)")
}

async fn run(
    deps: &Deps,
    env: &BuiltinEnv,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ExecError> {
    let provider = args.get("provider").and_then(Value::as_str).unwrap_or("");
    let agent = Agent::parse(provider).map_err(ExecError::Args)?;
    let (task, timeout_secs) = task_of(args)?;
    let (policy, default) = policy(env, ctx, &agent).await;
    if policy == "blocked" {
        return Err(ExecError::Denied(format!(
            "the coding agent '{}' is blocked by your Config Center service '{POLICY_SERVICE}' \
             (field '{}'); a person may set it to allowed or prompt",
            agent.id, agent.policy_field
        )));
    }
    let dirs = dirs(env);
    let Some(path) = providers::find(&dirs, &agent.program) else {
        let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(ExecError::Unavailable(format!(
            "{}'s program '{}' is not installed on this server (looked in {}): the operator \
             installs it ({}), or names the folder that holds it in the coding_agent_dirs \
             setting",
            agent.name,
            agent.program,
            searched.join(", "),
            agent.install
        )));
    };
    let (values, key) = service(env, ctx, &agent).await;
    let agent = agent
        .with_custom_fields(values.as_ref())
        .map_err(ExecError::Args)?;
    let key_env = agent.key_env.clone();
    if agent.named && key.is_none() {
        return Err(ExecError::Unavailable(format!(
            "{} needs your API key: create the Config Center service '{}' with a secret field \
             'api_key' holding it (it reaches '{}' only as {})",
            agent.name,
            agent.service,
            agent.program,
            key_env.as_deref().unwrap_or("its variable")
        )));
    }
    if !agent.named && key.is_some() && key_env.is_none() {
        return Err(ExecError::Args(format!(
            "the Config Center service '{}' has an api_key but no api_key_env: name the \
             variable the program reads its key from (e.g. OPENAI_API_KEY)",
            agent.service
        )));
    }
    let Some(agents) = env.coding_agents.as_ref() else {
        return Err(ExecError::Unavailable(
            "this server runs no coding agents (it has no egress guard for them)".to_owned(),
        ));
    };
    let Some((program, bound)) = sandbox_path(&path) else {
        return Err(ExecError::Unavailable(format!(
            "'{}' has a path the sandbox cannot name",
            path.display()
        )));
    };
    // The run's one way out: HTTPS to the provider's API host, through the owner's guard.
    let guard = agents.guard_for(&ctx.user_id);
    let proxy = match &agent.api_host {
        Some(_) if !std::path::Path::new(RELAY).is_file() => {
            return Err(ExecError::Unavailable(format!(
                "{}'s run reaches its API through a relay written in Python, and {RELAY} is \
                 missing: the operator installs Debian's python3",
                agent.name
            )));
        }
        Some(host) => {
            guard.check_url(&format!("https://{host}/")).map_err(|e| {
                ExecError::Denied(format!(
                    "{} reaches {host}, which the egress policy refuses for you: {e}",
                    agent.name
                ))
            })?;
            let label = ProxyLabel {
                what: "coding agent's API host",
                who: "coding agents",
                from: "the provider's API host",
            };
            let registries = PackageRegistries::new([host.clone()], guard)
                .map_err(ExecError::Run)?
                .labelled(label);
            Some(registries.open().map_err(|e| {
                ExecError::Run(format!("could not open the run's network proxy: {e}"))
            })?)
        }
        None => None,
    };
    let argv = providers::command_line(&agent, &program, &task);
    let argv = match proxy {
        Some(_) => crate::exec::registry_proxy::relayed_by_python(argv),
        None => argv,
    };
    let mut vars = std::collections::BTreeMap::new();
    if let (Some(name), Some(key)) = (&key_env, &key) {
        vars.insert(name.clone(), key.clone());
    }
    if proxy.is_some() {
        vars.extend(crate::exec::registry_proxy::proxy_env());
    }
    // The agents' own settings and caches go to the run's private /tmp, not the workspace.
    for (name, value) in [
        ("CLAUDE_CONFIG_DIR", "/tmp/agent/claude"),
        ("CODEX_HOME", "/tmp/agent/codex"),
        ("XDG_CONFIG_HOME", "/tmp/agent/config"),
        ("XDG_CACHE_HOME", "/tmp/agent/cache"),
        ("XDG_DATA_HOME", "/tmp/agent/data"),
        ("NO_COLOR", "1"),
        ("CI", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ] {
        vars.insert(name.to_owned(), value.to_owned());
    }
    let timeout = Duration::from_secs(timeout_secs);
    let timeout = match ctx.deadline {
        Some(deadline) => timeout.min(
            deadline
                .saturating_duration_since(std::time::Instant::now())
                .max(Duration::from_millis(1)),
        ),
        None => timeout,
    };
    let ws = deps.workspace(ctx)?;
    let cwd = crate::exec::shell::working_dir(&ws, args)?;
    let line: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut request = RunRequest::argv(&line);
    request.working_dir = cwd.as_deref();
    request.timeout = timeout;
    request.env = &vars;
    request.program = bound;
    request.proxy_socket = proxy.as_ref().map(|p| p.socket());
    let out = crate::exec::run_in(deps, &ws, request).await?;
    drop(proxy);
    let secret = key.as_deref();
    let stdout = scrub(at(&out, "stdout").as_str().unwrap_or(""), secret);
    let stderr = scrub(at(&out, "stderr").as_str().unwrap_or(""), secret);
    let timed_out = at(&out, "timedOut") == json!(true);
    let id = format!("ct_{}", uuid::Uuid::new_v4().simple());
    let mut answer = json!({
        "resultId": id,
        "provider": agent.id,
        "prompt": task.prompt,
        "cwd": cwd.as_deref().unwrap_or("."),
        "model": task.model,
        "success": at(&out, "success"),
        "exitCode": at(&out, "exitCode"),
        "output": stdout,
        "stderr": stderr,
        "timedOut": timed_out,
        "truncated": at(&out, "truncated"),
        "durationMs": at(&out, "durationMs"),
        "policy": if default { "prompt (default)".to_owned() } else { policy },
        "costUsd": Value::Null,
        "createdAt": chrono::Utc::now().to_rfc3339(),
    });
    if timed_out {
        toolsmith_core::object::set(
            &mut answer,
            "error",
            json!(format!(
                "the agent was killed at its time limit ({} s): give it a narrower task or more \
                 time (timeout_seconds, at most {MAX_TIMEOUT_SECONDS})",
                timeout.as_secs()
            )),
        );
    }
    if let Some(quota) = out.get("quota") {
        toolsmith_core::object::set(&mut answer, "quota", quota.clone());
    }
    let kept = keep(env, ctx, &id, &agent, &answer).await;
    toolsmith_core::object::set(&mut answer, "kept", json!(kept));
    Ok(answer)
}

/// Keeps `answer` as a record of the caller's: whether it was kept (or why not).
async fn keep(
    env: &BuiltinEnv,
    ctx: &ToolContext,
    id: &str,
    agent: &Agent,
    answer: &Value,
) -> Value {
    let Some(data) = &env.data else {
        return json!("no: this server keeps no records");
    };
    let mut document = answer.clone();
    for (field, max) in [("output", KEPT_STDOUT_CHARS), ("stderr", KEPT_STDERR_CHARS)] {
        let text = at(&document, field).as_str().unwrap_or("").to_owned();
        toolsmith_core::object::set(&mut document, field, json!(cut(&text, max)));
    }
    let scope = RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref());
    let prompt = at(answer, "prompt")
        .as_str()
        .unwrap_or("")
        .chars()
        .take(2000)
        .collect();
    let mut record = DataRecord::new(&scope, COLLECTION, id, document, prompt);
    record.kind = Some(agent.id.clone());
    record.category = Some(
        if at(answer, "success") == json!(true) {
            "succeeded"
        } else {
            "failed"
        }
        .to_owned(),
    );
    match data.put(record).await {
        Ok(_) => json!(true),
        Err(e) => json!(format!("no: {e}")),
    }
}

fn records_unavailable() -> ExecError {
    ExecError::Unavailable("this server keeps no records, so no task results".to_owned())
}

async fn get(env: &BuiltinEnv, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let id = args
        .get("result_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("");
    let data = env.data.as_ref().ok_or_else(records_unavailable)?;
    let scope = RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref());
    match data.get(&scope, COLLECTION, id).await {
        Ok(Some(record)) => Ok(record.document),
        Ok(None) => Err(ExecError::NotFound(format!(
            "no coding task result '{id}' of yours: list_task_results lists them"
        ))),
        Err(e) => Err(ExecError::Run(e.to_string())),
    }
}

async fn results(env: &BuiltinEnv, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let data = env.data.as_ref().ok_or_else(records_unavailable)?;
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(20)
        .clamp(1, MAX_LIST);
    let provider = args
        .get("provider")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let scope = RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref());
    let query = RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: COLLECTION.to_owned(),
        kind: provider.map(str::to_owned),
        limit: u32::try_from(limit).unwrap_or(20),
        ..RecordQuery::default()
    };
    let hits = data
        .query(&query)
        .await
        .map_err(|e| ExecError::Run(e.to_string()))?;
    let results: Vec<Value> = hits
        .into_iter()
        .map(|hit| {
            let d = &hit.record.document;
            json!({
                "resultId": hit.record.id,
                "provider": at(d, "provider"),
                "prompt": cut(at(d, "prompt").as_str().unwrap_or(""), 200),
                "success": at(d, "success"),
                "timedOut": at(d, "timedOut"),
                "durationMs": at(d, "durationMs"),
                "costUsd": at(d, "costUsd"),
                "createdAt": hit.record.created_at.to_rfc3339(),
            })
        })
        .collect();
    Ok(json!({"count": results.len(), "results": results}))
}

#[cfg(test)]
mod tests;
