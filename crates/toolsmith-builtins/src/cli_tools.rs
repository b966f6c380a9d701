//! CLI tools (003 §25): `list_cli_tools`, `run_cli_tool`, `install_cli_tool` — the host's
//! command-line programs of a known catalogue ([`CATALOGUE`]), discovered where the command
//! sandbox sees them (`/usr/bin`, `/bin`), each with a risk level and a policy.
//!
//! A program runs only in the command sandbox (bubblewrap, the code tools' limits, no network,
//! the caller's workspace at `/tmp/work`), as an argv (no shell), through the code tools'
//! `exec::run_in` (quota, deny-list, read-only mode). Its policy comes from the caller's Config
//! Center service [`POLICY_SERVICE`] (a field per program: `allowed`, `prompt` or `blocked`),
//! else from its risk: low is allowed, medium is `prompt`, high is blocked. A `prompt` program
//! runs on a person's own call (REST, the CLI, the UI); a model's call of it waits for a
//! person's approval (the approval gate asks [`ToolExecutor::asks_person`], as for a coding
//! agent), and runs once a person allows it. `install_cli_tool` installs nothing (see
//! [`install`]).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::model::Effect;
use toolsmith_core::{
    ErrorKind, Permission, PermissionSet, RegisteredTool, ResultSource, ToolContext,
    ToolDefinition, ToolExecutor, ToolResult,
};

use crate::BuiltinEnv;
use crate::exec::{Deps, ExecError};
use crate::groups::{ToolGroup, off};

/// The category of the family's tools.
pub const CATEGORY: &str = "CLI Tools";
/// The Config Center service whose fields set each program's policy.
pub const POLICY_SERVICE: &str = "cli_tools";
/// Most arguments of one run.
const MAX_ARGS: usize = 100;
/// Longest argument.
const MAX_ARG_CHARS: usize = 10_000;
/// Where the sandbox sees programs.
const DIRS: &[&str] = &["/usr/bin", "/bin"];

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    ..off(
        "cliTools",
        "CLI Tools",
        "Run the server's command-line programs (jq, sqlite3, pandoc …) on your workspace, in \
         the command sandbox, each under its policy.",
        "runs programs of the host (in the command sandbox)",
        ResultSource::External,
        &["run_cli_tool", "list_cli_tools", "install_cli_tool"],
    )
}];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[
    (Effect::Runs, &["run_cli_tool"]),
    (Effect::Reads, &["list_cli_tools"]),
    // It installs nothing today (see `install`), but it is stated as what its name asks
    // (an install: not read-only, and asking twice changes nothing more).
    (Effect::Sets, &["install_cli_tool"]),
];

/// How much harm a program can do with the caller's arguments, in the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    /// Reads and transforms what it is given.
    Low,
    /// Writes or removes many files of the workspace at once, or runs embedded scripts.
    Medium,
    /// Runs any code it is given: the code tools do that under their own rules.
    High,
}

impl Risk {
    fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }

    fn default_policy(self) -> &'static str {
        match self {
            Risk::Low => "allowed",
            Risk::Medium => "prompt",
            Risk::High => "blocked",
        }
    }
}

/// One program of the catalogue: its name (and binary), category, risk, Debian package and
/// what it does.
pub struct Program {
    pub name: &'static str,
    pub category: &'static str,
    pub risk: Risk,
    pub package: &'static str,
    pub about: &'static str,
}

const fn program(
    name: &'static str,
    category: &'static str,
    risk: Risk,
    package: &'static str,
    about: &'static str,
) -> Program {
    Program {
        name,
        category,
        risk,
        package,
        about,
    }
}

/// The programs `run_cli_tool` knows.
pub const CATALOGUE: &[Program] = &[
    program("jq", "data", Risk::Low, "jq", "query and reshape JSON"),
    program(
        "grep",
        "text",
        Risk::Low,
        "grep",
        "search text for a pattern",
    ),
    program("rg", "text", Risk::Low, "ripgrep", "search files fast"),
    program(
        "wc",
        "text",
        Risk::Low,
        "coreutils",
        "count lines, words, bytes",
    ),
    program("sort", "text", Risk::Low, "coreutils", "sort lines"),
    program(
        "uniq",
        "text",
        Risk::Low,
        "coreutils",
        "drop repeated lines",
    ),
    program("head", "text", Risk::Low, "coreutils", "the first lines"),
    program("tail", "text", Risk::Low, "coreutils", "the last lines"),
    program("cut", "text", Risk::Low, "coreutils", "columns of lines"),
    program("diff", "text", Risk::Low, "diffutils", "compare files"),
    program(
        "file",
        "files",
        Risk::Low,
        "file",
        "what kind of file this is",
    ),
    program(
        "sha256sum",
        "files",
        Risk::Low,
        "coreutils",
        "file checksums",
    ),
    program(
        "bc",
        "math",
        Risk::Low,
        "bc",
        "arbitrary-precision calculator",
    ),
    program(
        "pandoc",
        "documents",
        Risk::Low,
        "pandoc",
        "convert documents (Markdown, HTML, DOCX …)",
    ),
    program(
        "sed",
        "text",
        Risk::Medium,
        "sed",
        "edit text (can rewrite files in place and run commands)",
    ),
    program(
        "tar",
        "files",
        Risk::Medium,
        "tar",
        "pack and unpack archives",
    ),
    program(
        "unzip",
        "files",
        Risk::Medium,
        "unzip",
        "unpack zip archives",
    ),
    program(
        "sqlite3",
        "data",
        Risk::Medium,
        "sqlite3",
        "query SQLite databases",
    ),
    program(
        "ffmpeg",
        "media",
        Risk::Medium,
        "ffmpeg",
        "convert audio and video",
    ),
    program(
        "awk",
        "text",
        Risk::High,
        "gawk",
        "text programs (runs any code it is given)",
    ),
    program(
        "python3",
        "code",
        Risk::High,
        "python3",
        "Python (use execute_python)",
    ),
    program(
        "node",
        "code",
        Risk::High,
        "nodejs",
        "Node.js (use execute_javascript)",
    ),
    program(
        "curl",
        "network",
        Risk::High,
        "curl",
        "HTTP requests (the sandbox has no network: use http_request)",
    ),
];

fn find(name: &str) -> Option<&'static Program> {
    CATALOGUE.iter().find(|p| p.name == name)
}

/// Where the program is installed, if it is.
fn installed(name: &str) -> Option<String> {
    DIRS.iter()
        .map(|dir| format!("{dir}/{name}"))
        .find(|path| std::path::Path::new(path).is_file())
}

fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "run_cli_tool",
            "Run a command-line program of the server (jq, grep, sqlite3, pandoc, sort …; see \
             list_cli_tools) on your workspace files, in a sandbox without network: the program \
             and its arguments as a list (no shell). Each program has a policy (allowed, prompt, \
             blocked) and a risk level. Returns success, exitCode, stdout, stderr.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 64, "description": "The program, e.g. \"jq\"."},
                    "args": {"type": "array", "items": {"type": "string", "maxLength": MAX_ARG_CHARS}, "maxItems": MAX_ARGS, "default": [], "description": "Its arguments, e.g. [\".name\", \"data.json\"]; paths are relative to your workspace."},
                    "cwd": {"type": "string", "default": ".", "description": "An existing folder of your workspace to run in."},
                    "timeout": {"type": "integer", "minimum": 1000, "maximum": 30000, "default": 30000, "description": "Milliseconds, at most 30000 (the sandbox's limit)."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        )
        .with_tags(&["cli", "command line", "program", "jq", "run jq", "grep", "sqlite3", "pandoc", "sort", "terminal", "unix tool", "run a program", "convert document"]),
        ToolDefinition::new(
            "list_cli_tools",
            "List the command-line programs run_cli_tool knows: installed or not, where, \
             category, risk level and your policy for each.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .with_tags(&["cli", "programs", "installed tools", "command line tools", "which programs"]),
        ToolDefinition::new(
            "install_cli_tool",
            "Ask for a command-line program to be installed. Toolsmith installs no program on \
             its server by itself: the answer says which package the operator installs, or what \
             to use instead.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 64, "description": "The program, e.g. \"pandoc\"."}},
                "required": ["name"],
                "additionalProperties": false
            }),
        )
        .with_tags(&["install program", "cli", "npx", "apt"]),
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
            let permissions = if definition.name == "run_cli_tool" {
                PermissionSet::from([Permission::Shell, Permission::Filesystem])
            } else {
                PermissionSet::from([Permission::Shell])
            };
            let name = definition.name.clone();
            crate::builtin_tool(
                definition,
                CATEGORY,
                permissions,
                Arc::new(CliTool {
                    name,
                    deps: deps.clone(),
                    env: env.clone(),
                }),
            )
        })
        .collect()
}

struct CliTool {
    name: String,
    deps: Deps,
    env: BuiltinEnv,
}

#[async_trait]
impl ToolExecutor for CliTool {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let outcome = match self.name.as_str() {
            "list_cli_tools" => Ok(list(&self.env, ctx).await),
            "install_cli_tool" => install(&args),
            _ => run(&self.deps, &self.env, &args, ctx).await,
        };
        match outcome {
            Ok(value) => ToolResult::ok(value),
            Err(e) => {
                let kind = match &e {
                    ExecError::Args(_) | ExecError::NotFound(_) => ErrorKind::InvalidArguments,
                    ExecError::Denied(_) | ExecError::Limit(_) | ExecError::SessionLimit { .. } => {
                        ErrorKind::Denied
                    }
                    ExecError::Workspace(w) => w.kind(),
                    ExecError::Unavailable(_) | ExecError::Run(_) => ErrorKind::ExecutionError,
                };
                ToolResult::error(kind, e.to_string())
            }
        }
    }

    /// A model's `run_cli_tool` of a program whose policy is `prompt` waits for a person.
    async fn asks_person(&self, args: &Value, ctx: &ToolContext) -> bool {
        if self.name != "run_cli_tool" || !ctx.by_model() {
            return false;
        }
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        match find(name) {
            Some(program) => policy(&self.env, ctx, program).await.0 == "prompt",
            None => false,
        }
    }
}

/// The caller's policy for `program`, and whether it is the default.
async fn policy(env: &BuiltinEnv, ctx: &ToolContext, program: &Program) -> (String, bool) {
    let set = match &env.config {
        Some(config) => config.values(&ctx.user_id, POLICY_SERVICE).await,
        None => None,
    };
    let chosen = set
        .as_ref()
        .and_then(|values| values.get(program.name))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|p| matches!(*p, "allowed" | "prompt" | "blocked"));
    match chosen {
        Some(p) => (p.to_owned(), false),
        None => (program.risk.default_policy().to_owned(), true),
    }
}

async fn list(env: &BuiltinEnv, ctx: &ToolContext) -> Value {
    let mut tools = Vec::new();
    for program in CATALOGUE {
        let (policy, default) = policy(env, ctx, program).await;
        let path = installed(program.name);
        tools.push(json!({
            "name": program.name,
            "installed": path.is_some(),
            "path": path,
            "category": program.category,
            "risk": program.risk.as_str(),
            "policy": policy,
            "policyFrom": if default { "risk" } else { POLICY_SERVICE },
            "description": program.about,
        }));
    }
    json!({
        "tools": tools,
        "policyService": POLICY_SERVICE,
        "note": "a person sets a program's policy in the Config Center service 'cli_tools' (a field per program: allowed, prompt or blocked)",
    })
}

/// Installing is the operator's: a model that could install a package could run its install
/// scripts on the host (npx, apt and pip all run code of the package as they install it).
fn install(args: &Value) -> Result<Value, ExecError> {
    let name = args.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(program) = find(name) else {
        return Err(ExecError::Denied(format!(
            "'{name}' is not a program run_cli_tool knows (see list_cli_tools); Toolsmith \
             installs no program itself. For code's own packages use package_manager in the \
             code sandbox"
        )));
    };
    if let Some(path) = installed(program.name) {
        return Ok(json!({"name": program.name, "installed": true, "path": path}));
    }
    Err(ExecError::Denied(format!(
        "'{}' is not installed, and Toolsmith installs no program on its server: installing \
         runs the package's own scripts on the host. Ask the operator to install Debian's \
         '{}' package (apt-get install {})",
        program.name, program.package, program.package
    )))
}

async fn run(
    deps: &Deps,
    env: &BuiltinEnv,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ExecError> {
    let name = args.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(program) = find(name) else {
        return Err(ExecError::Args(format!(
            "'{name}' is not a program run_cli_tool knows: list_cli_tools shows them"
        )));
    };
    let Some(path) = installed(program.name) else {
        return Err(ExecError::Unavailable(format!(
            "'{}' is not installed on this server (install_cli_tool says how to get it)",
            program.name
        )));
    };
    let (policy, default) = policy(env, ctx, program).await;
    let why = if default {
        format!("its {} risk", program.risk.as_str())
    } else {
        format!("the Config Center service '{POLICY_SERVICE}'")
    };
    // `prompt`: a model's call gets here only once a person allowed it (`asks_person`).
    if policy == "blocked" {
        return Err(ExecError::Denied(format!(
            "'{}' is blocked (by {why}): {}; a person may allow it in the Config Center \
             service '{POLICY_SERVICE}' (field '{}': allowed or prompt)",
            program.name, program.about, program.name
        )));
    }
    let list: Vec<String> = match args.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ExecError::Args("'args' must be a list of strings".to_owned()))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ExecError::Args(
                "'args' must be a list of strings".to_owned(),
            ));
        }
    };
    if list.iter().any(|a| a.contains('\0')) {
        return Err(ExecError::Args(
            "an argument holds a NUL character".to_owned(),
        ));
    }
    let millis = args
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(30_000);
    let timeout =
        std::time::Duration::from_millis(millis.clamp(1000, 30_000)).min(crate::exec::MAX_TIMEOUT);
    let ws = deps.workspace(ctx)?;
    let cwd = crate::exec::shell::working_dir(&ws, args)?;
    let mut argv: Vec<&str> = vec![path.as_str()];
    argv.extend(list.iter().map(String::as_str));
    let mut request = RunRequest::argv(&argv);
    request.working_dir = cwd.as_deref();
    request.timeout = timeout;
    let mut answer = crate::exec::run_in(deps, &ws, request).await?;
    toolsmith_core::object::set(&mut answer, "tool", json!(program.name));
    toolsmith_core::object::set(&mut answer, "policy", json!(policy));
    Ok(answer)
}
