//! The command line, as clap types: global options, the `tool` command group, `run`,
//! `run-code`, `serve` and `mcp`. Parsing only; what each command does lives in `commands/`,
//! and `config` turns the options of `serve` and `mcp` (with the environment and the
//! configuration file) into one validated configuration.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, Parser, Subcommand};
use toolsmith_core::{CreatedBy, Permission, ToolStatus};

use toolsmith_service::Rate;

use crate::settings::{Compat, McpListing, parse_duration, parse_rate, parse_size};

/// Shown after `toolsmith --help`: the exit codes scripts can rely on (see docs/cli.md).
const EXIT_CODES: &str = "\
Exit codes:
  0   success
  1   the tool ran but returned an error (it threw, timed out, hit a limit …)
  2   usage or configuration error (unknown command or option, bad option or configuration value)
  3   validation error (malformed JSON/YAML, invalid tool file or arguments, too large, name taken …)
  4   not found (no such tool or version)
  5   conflict (stale --expected-revision, operation not allowed in the tool's status)
  6   forbidden, confirmation required, or limit reached
  7   the tool ran but its result was withheld (it could not be scrubbed): do not rerun blindly
  10  store or internal error (unreadable or corrupt database …)

With --json, stdout holds exactly one JSON document: the result, or {\"error\": {\"code\", \"message\"}}.
Errors are also written to stderr as one line `error: …`. Documentation: docs/cli.md";

/// Toolsmith: a self-hosted runtime tool platform for AI agents.
///
/// Manage custom JavaScript tools stored in an embedded SQLite database, run them in the
/// QuickJS sandbox, and serve them over REST and MCP (`toolsmith serve`, `toolsmith mcp`).
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes, before or after the subcommand.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Refuse every write, on every command and door: create, update, delete, status changes,
    /// approvals, tokens; tool calls still run, but no built-in changes stored data (records,
    /// workspace files) and the scheduler does not start. [default: off]
    #[arg(long, global = true, env = "TOOLSMITH_READ_ONLY")]
    pub read_only: bool,

    /// Directory of the embedded database (`DIR/toolsmith.db`); created if missing.
    /// [default: ./toolsmith-data]
    #[arg(long, global = true, env = "TOOLSMITH_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Database to use instead of the data directory: `sqlite:///abs/path.db`,
    /// `sqlite://relative.db`, a plain file path, or `postgres://user:password@host/db`
    /// (several instances on one PostgreSQL; see docs/scaling.md).
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    // Parsed when the settings are resolved, not by clap: clap's "invalid value" message would
    // echo the URL with its password.
    pub database_url: Option<crate::redacted::Redacted>,

    /// How long start-up waits for a PostgreSQL server that is not reachable yet (refused,
    /// timed out, starting up) before it gives up; a wrong password or a missing database
    /// fails at once. [default: 30s]
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_DATABASE_STARTUP_TIMEOUT",
        value_name = "DURATION",
        value_parser = parse_duration
    )]
    pub database_startup_timeout: Option<Duration>,

    /// The user whose tools are managed and run.
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_USER",
        value_name = "ID",
        default_value = "default",
        value_parser = NonEmptyStringValueParser::new()
    )]
    pub user: String,

    /// Machine output: exactly one JSON document on stdout.
    #[arg(long, global = true)]
    pub json: bool,

    /// Most custom tools one user may have. [default: 1000]
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_MAX_TOOLS_PER_OWNER",
        value_name = "N"
    )]
    pub max_tools_per_owner: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, inspect, change and delete custom tools.
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Run a tool (custom or built-in) with JSON arguments.
    Run(RunArgs),
    /// Run JavaScript once in the sandbox, without storing anything.
    RunCode(RunCodeArgs),
    /// The Config Center: services tools need (API keys, URLs) and their values.
    #[command(subcommand)]
    Config(crate::commands::config::ConfigCommand),
    /// The policy in force: show it, replace the stored one from a file, clear it.
    #[command(subcommand)]
    Policy(crate::commands::policy::PolicyCommand),
    /// Agents Toolsmith runs: list them, show one, create one from a file, delete one.
    #[command(subcommand)]
    Agent(crate::commands::agent::AgentCommand),
    /// Agent teams: a lead and teammates among your agents; list, show, create, delete, and
    /// read a team's board (its tasks and messages).
    #[command(subcommand)]
    Team(crate::commands::team::TeamCommand),
    /// Prompts made at runtime: list, show, create or update one from a file, switch, history,
    /// rollback, render, delete.
    #[command(subcommand)]
    Prompt(crate::commands::prompt::PromptCommand),
    /// Resources and resource templates you define: list, show, create or update one from a
    /// file, read a URI as an MCP client would, delete.
    #[command(subcommand)]
    Resource(crate::commands::resource::ResourceCommand),
    /// The built-in tool groups: list them, show one, find a tool's, switch one on or off.
    #[command(subcommand)]
    Groups(crate::commands::groups::GroupsCommand),
    /// The audit log of privileged actions, newest first.
    Audit(crate::commands::audit::AuditArgs),
    /// Human approval of executions: list what waits, allow or deny it.
    #[command(subcommand)]
    Approvals(crate::commands::approvals::ApprovalsCommand),
    /// Organisations: make one, list yours, show, rename, delete; members and their roles
    /// (`--user` acts). Move a tool into one with `toolsmith tool move`.
    #[command(subcommand)]
    Org(crate::commands::org::OrgCommand),
    /// Create, list and revoke API tokens for the server (`--user` owns the token).
    #[command(subcommand)]
    Token(crate::commands::token::TokenCommand),
    /// The MCP bridge's upstream servers: status, register, update, retry, remove.
    #[command(subcommand)]
    McpServers(crate::commands::mcp_servers::McpServersCommand),
    /// Grants of bridged MCP servers to users and agents, and access requests.
    #[command(subcommand)]
    McpGrants(crate::commands::mcp_grants::McpGrantsCommand),
    /// Your time zone for dates in words ("tomorrow 9am" is 9am there; UTC unless set): show
    /// it, or set it to an IANA name (`toolsmith timezone Europe/Paris`).
    Timezone(crate::commands::timezone::TimezoneArgs),
    /// The database as a whole: copy a store between SQLite and PostgreSQL.
    #[command(subcommand)]
    Db(crate::commands::db::DbCommand),
    /// Serve the REST API (/api/v1), MCP over streamable HTTP (/mcp) and health checks.
    ///
    /// Prints one line to stdout once it listens, `toolsmith listening on http://ADDR`; logs go
    /// to stderr. Every option can also come from the environment (TOOLSMITH_*) or from a TOML
    /// file (--config), in that order of precedence: flag, environment, file, default. Binding
    /// an address other than loopback needs authentication configured (API tokens or an admin
    /// token). Stops on SIGINT or SIGTERM, letting in-flight requests finish.
    #[command(after_help = "Configuration file keys and examples: docs/configuration.md")]
    Serve(Box<ServeArgs>),
    /// Serve MCP over stdin/stdout, for one client that starts toolsmith as a subprocess.
    ///
    /// Stdout carries only the protocol; logs go to stderr. Shares the store with a running
    /// `toolsmith serve` (same --data-dir or --database-url): changes made by either are seen
    /// by the other.
    #[command(after_help = "Configuration file keys and examples: docs/configuration.md")]
    Mcp(Box<McpArgs>),
}

/// The options of `toolsmith serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: an IP address or `localhost`. A non-loopback address needs
    /// authentication configured. [default: 127.0.0.1]
    #[arg(long, env = "TOOLSMITH_BIND", value_name = "ADDR")]
    pub bind: Option<String>,

    /// Port to listen on; 0 picks a free one (the listening line says which).
    /// [default: 8787]
    #[arg(long, env = "TOOLSMITH_PORT", value_name = "PORT")]
    pub port: Option<u16>,

    /// Largest request body, e.g. `1MB`, `512KB`, `65536` (bytes; K/M/G are powers of 1024).
    /// [default: 1MB]
    #[arg(long, env = "TOOLSMITH_BODY_LIMIT", value_name = "SIZE", value_parser = parse_size)]
    pub body_limit: Option<u64>,

    /// Longest a request may take before a 503, e.g. `60s`, `2m`, `500ms` (a bare number is
    /// seconds). Tool calls also have their own limits. [default: 60s]
    #[arg(long, env = "TOOLSMITH_REQUEST_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub request_timeout: Option<Duration>,

    /// On SIGINT/SIGTERM, how long in-flight requests may take to finish before they are
    /// cancelled. [default: 10s]
    #[arg(long, env = "TOOLSMITH_SHUTDOWN_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub shutdown_timeout: Option<Duration>,

    /// A host name accepted in the `Host` header of every request but /livez and /readyz
    /// (REST, the web UI, /mcp; DNS-rebinding protection); repeat it for several (the
    /// environment takes a comma-separated list). Add the names clients use to reach a public
    /// server. [default: localhost, 127.0.0.1, ::1 and the --bind address]
    #[arg(
        long = "allowed-host",
        env = "TOOLSMITH_ALLOWED_HOSTS",
        value_name = "HOST",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    /// Most HTTP connections open at once. Past it, the connection idle the longest is
    /// closed to make room; when every one is busy the new one gets a 503. Lowered at start to
    /// fit the open-file limit. [default: 10000]
    #[arg(long, env = "TOOLSMITH_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,

    /// Longest a client may take to send a request's headers (also how long a kept-alive
    /// HTTP/1.1 connection waits for its next request), e.g. `30s`. [default: 30s]
    #[arg(long, env = "TOOLSMITH_HEADER_READ_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub header_read_timeout: Option<Duration>,

    /// A connection with no request in flight for this long is closed (open MCP streams are
    /// in flight), e.g. `2m`. [default: 120s]
    #[arg(long, env = "TOOLSMITH_IDLE_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,

    /// Most MCP sessions (`Mcp-Session-Id`) open at once, all users together; past it a new
    /// session gets a 503. [default: 10000]
    #[arg(long, env = "TOOLSMITH_MCP_MAX_SESSIONS", value_name = "N")]
    pub mcp_max_sessions: Option<usize>,

    /// Most MCP sessions open at once for one user; a new one past it closes that user's least
    /// recently used session. [default: 100]
    #[arg(long, env = "TOOLSMITH_MCP_MAX_SESSIONS_PER_USER", value_name = "N")]
    pub mcp_max_sessions_per_user: Option<usize>,

    /// Most MCP `subscriptions/listen` streams (2026-07-28) open at once, all users together
    /// (never more than half of --max-connections); past it a listen gets a 503.
    /// [default: 1000]
    #[arg(long, env = "TOOLSMITH_MCP_MAX_LISTENS", value_name = "N")]
    pub mcp_max_listens: Option<usize>,

    /// Most MCP `subscriptions/listen` streams open at once for one user; past it a listen
    /// gets a 429. [default: 100]
    #[arg(long, env = "TOOLSMITH_MCP_MAX_LISTENS_PER_USER", value_name = "N")]
    pub mcp_max_listens_per_user: Option<usize>,

    /// An MCP session with no request and no open stream for this long is closed, e.g.
    /// `10m`. [default: 10m]
    #[arg(long, env = "TOOLSMITH_MCP_SESSION_IDLE_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub mcp_session_idle_timeout: Option<Duration>,

    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// The options of `toolsmith mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Act in this organisation (its name or id), of which --user must be a member: its tools,
    /// with the member's role (a viewer reads and calls, an editor also writes).
    #[arg(
        long,
        env = "TOOLSMITH_ORGANIZATION",
        value_name = "ORG",
        value_parser = NonEmptyStringValueParser::new()
    )]
    pub organization: Option<String>,

    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// [`RuntimeArgs`] alone, to read them from the environment.
#[derive(Debug, Parser)]
#[command(name = "toolsmith")]
struct RuntimeFromEnv {
    #[command(flatten)]
    runtime: RuntimeArgs,
}

impl RuntimeArgs {
    /// The runtime options the `TOOLSMITH_*` variables set (`TOOLSMITH_CONFIG` names the
    /// file), for the commands that take no runtime flags.
    pub fn from_env() -> Result<RuntimeArgs, clap::Error> {
        RuntimeFromEnv::try_parse_from(["toolsmith"]).map(|parsed| parsed.runtime)
    }
}

/// Options `serve` and `mcp` share: the configuration file, the MCP compatibility mode, the
/// sandbox limits and the change feed. The other commands read them from the environment
/// only ([`RuntimeArgs::from_env`]).
#[derive(Debug, Args)]
pub struct RuntimeArgs {
    /// A TOML configuration file (docs/configuration.md). Flags and TOOLSMITH_* variables
    /// override its keys; an unknown key is an error.
    #[arg(long, env = "TOOLSMITH_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Also expose the control plane under the `dynamic.tool.*` names of dynamic-mcp (`none`
    /// turns it off). [default: none]
    #[arg(long, env = "TOOLSMITH_COMPAT", value_name = "MODE", value_enum)]
    pub compat: Option<Compat>,

    /// With `--compat dynamic-mcp`: dynamic-mcp's feature profile, `mvp` or `enterprise`
    /// (dynamic-mcp's `MCP_PROFILE` is read too). [default: mvp]
    #[arg(
        long,
        env = "TOOLSMITH_COMPAT_PROFILE",
        value_name = "PROFILE",
        value_enum
    )]
    pub compat_profile: Option<crate::settings::CompatProfileArg>,

    /// What MCP `tools/list` carries: `compact` (the control plane, the meta-tools and the
    /// caller's 8 most used own tools), `full` (every tool) or `discovery` (only the control
    /// plane and the meta-tools); tools not listed are found with search_tools and called by
    /// name. [default: compact; full with --compat dynamic-mcp]
    #[arg(long, env = "TOOLSMITH_MCP_LISTING", value_name = "MODE", value_enum)]
    pub mcp_listing: Option<McpListing>,
    /// The admin token: when set, callers may authenticate with it (every scope), every
    /// control-plane write needs it or a token with the `admin` scope, and with
    /// `--compat dynamic-mcp` every `dynamic.tool.*` call must carry it as `adminToken` (stdio
    /// too; there `MCP_ADMIN_TOKEN` is read as well). Prefer the environment or the file to the
    /// command line, where other local users can see it.
    #[arg(
        long,
        env = "TOOLSMITH_ADMIN_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub admin_token: Option<crate::redacted::Redacted>,

    /// Refuse to start without an admin token (with `--compat dynamic-mcp`,
    /// `MCP_REQUIRE_ADMIN_TOKEN=true` does the same). [default: off]
    #[arg(long, env = "TOOLSMITH_REQUIRE_ADMIN_TOKEN")]
    pub require_admin_token: bool,

    /// Heap limit of one JavaScript execution, e.g. `50MB`. [default: 50MB]
    #[arg(long, env = "TOOLSMITH_JS_MEMORY", value_name = "SIZE", value_parser = parse_size)]
    pub js_memory: Option<u64>,

    /// CPU time one JavaScript execution may use, e.g. `5s`. [default: 5s]
    #[arg(long, env = "TOOLSMITH_JS_CPU_TIME", value_name = "DURATION", value_parser = parse_duration)]
    pub js_cpu_time: Option<Duration>,

    /// Wall-clock time of one JavaScript execution, awaited promises and nested calls
    /// included, e.g. `30s`. [default: 30s]
    #[arg(long, env = "TOOLSMITH_JS_WALL_TIME", value_name = "DURATION", value_parser = parse_duration)]
    pub js_wall_time: Option<Duration>,

    /// Largest serialized result of one JavaScript execution, e.g. `1MB`. [default: 1MB]
    #[arg(long, env = "TOOLSMITH_JS_MAX_OUTPUT", value_name = "SIZE", value_parser = parse_size)]
    pub js_max_output: Option<u64>,

    /// Most JavaScript executions in flight at once — running, waiting for a CPU slot, or
    /// awaiting `fetch` / `callTool`; past it calls get `busy` at once. [default: 1024]
    #[arg(long, env = "TOOLSMITH_JS_MAX_IN_FLIGHT", value_name = "N")]
    pub js_max_in_flight: Option<usize>,

    /// File operations one JavaScript execution may make through `fs` or `utils.callTool`
    /// (tools holding `filesystem`). [default: 100]
    #[arg(long, env = "TOOLSMITH_JS_MAX_FS_OPERATIONS", value_name = "N")]
    pub js_max_fs_operations: Option<u32>,

    /// Built-in tool groups to switch on, e.g. `codeExecution,webFetch` (the environment takes a
    /// comma-separated list), over the configuration file's `[policy.tool_groups]`
    /// (docs/builtins.md). [default: the groups on by default]
    #[arg(
        long = "enable-group",
        env = "TOOLSMITH_ENABLE_GROUPS",
        value_name = "GROUP",
        value_delimiter = ','
    )]
    pub enable_groups: Vec<String>,

    /// Built-in tool groups to switch off, e.g. `filesystem`. [default: none]
    #[arg(
        long = "disable-group",
        env = "TOOLSMITH_DISABLE_GROUPS",
        value_name = "GROUP",
        value_delimiter = ','
    )]
    pub disable_groups: Vec<String>,

    /// How often the store is checked for changes made by other processes (the CLI, another
    /// server), which then reach this process's catalogue and MCP clients. [default: 500ms]
    #[arg(long, env = "TOOLSMITH_POLL_INTERVAL", value_name = "DURATION", value_parser = parse_duration)]
    pub poll_interval: Option<Duration>,

    /// Rate limit of tool executions per user: `PER_MINUTE[:BURST]`, e.g. `600:50`
    /// (burst defaults to the per-minute rate). [default: none]
    #[arg(long, env = "TOOLSMITH_RATE_PER_USER", value_name = "RATE", value_parser = parse_rate)]
    pub rate_per_user: Option<Rate>,

    /// Rate limit of executions per tool (per owner and tool name): `PER_MINUTE[:BURST]`.
    /// [default: none]
    #[arg(long, env = "TOOLSMITH_RATE_PER_TOOL", value_name = "RATE", value_parser = parse_rate)]
    pub rate_per_tool: Option<Rate>,

    /// Rate limit of executions per session (MCP session or REST `conversationId`):
    /// `PER_MINUTE[:BURST]`. [default: none]
    #[arg(long, env = "TOOLSMITH_RATE_PER_SESSION", value_name = "RATE", value_parser = parse_rate)]
    pub rate_per_session: Option<Rate>,

    /// Most tool executions running at once on this process (0 = no cap); calls past it are
    /// refused with `rate_limited` (HTTP 429). [default: 0]
    #[arg(long, env = "TOOLSMITH_MAX_CONCURRENT", value_name = "N")]
    pub max_concurrent: Option<usize>,

    /// Most tool executions running at once for one user (0 = no cap). [default: 0]
    #[arg(long, env = "TOOLSMITH_MAX_CONCURRENT_PER_USER", value_name = "N")]
    pub max_concurrent_per_user: Option<usize>,

    /// Days of execution history kept for analytics; older rows are deleted hourly
    /// (0 = keep everything). [default: 30]
    #[arg(long, env = "TOOLSMITH_EXECUTION_RETENTION_DAYS", value_name = "DAYS")]
    pub execution_retention_days: Option<u32>,

    /// Which executions wait for a person's approval: `llm_tools` (every tool marked
    /// requiresApproval, which all LLM-created tools are), `dangerous` (tools holding network,
    /// shell, filesystem or email) or `off`. [default: llm_tools]
    #[arg(long, env = "TOOLSMITH_EXECUTION_APPROVAL", value_name = "WHICH", value_parser = str::parse::<toolsmith_service::ExecutionApproval>)]
    pub execution_approval: Option<toolsmith_service::ExecutionApproval>,

    /// How long an approval waits for a decision before it counts as denied, e.g. `2m`.
    /// [default: 2m]
    #[arg(long, env = "TOOLSMITH_APPROVAL_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub approval_timeout: Option<Duration>,

    /// Also append the audit log (every privileged action) to this file, one JSON object per
    /// line; it always goes to the store.
    #[arg(long, env = "TOOLSMITH_AUDIT_LOG", value_name = "FILE")]
    pub audit_log: Option<PathBuf>,

    /// The folder of the per-user workspaces the file tools work in.
    /// [default: <data dir>/workspaces]
    #[arg(long, env = "TOOLSMITH_WORKSPACE_DIR", value_name = "DIR")]
    pub workspace_dir: Option<PathBuf>,

    /// Bytes of files one user's workspaces may hold together, e.g. `100MB`. [default: 100MB]
    #[arg(long, env = "TOOLSMITH_WORKSPACE_QUOTA", value_name = "SIZE", value_parser = parse_size)]
    pub workspace_quota: Option<u64>,

    /// Give each agent of a user a workspace of its own (calls without an agent keep the
    /// user's). [default: false]
    #[arg(long, env = "TOOLSMITH_WORKSPACE_PER_AGENT", value_name = "BOOL")]
    pub workspace_per_agent: Option<bool>,

    /// The author of the git tools' commits when a call names none, as `Name <email>`.
    /// [default: Toolsmith Agent <agent@toolsmith.local>]
    #[arg(long, env = "TOOLSMITH_GIT_AUTHOR", value_name = "AUTHOR")]
    pub git_author: Option<String>,

    /// A sandbox session unused this long is stopped and its files deleted, e.g. `15m`.
    /// [default: 15m]
    #[arg(long, env = "TOOLSMITH_SANDBOX_SESSION_TIMEOUT", value_name = "DURATION", value_parser = parse_duration)]
    pub sandbox_session_timeout: Option<Duration>,

    /// Most sandbox sessions one user has at once. [default: 5]
    #[arg(long, env = "TOOLSMITH_SANDBOX_SESSIONS_PER_USER", value_name = "N")]
    pub sandbox_sessions_per_user: Option<usize>,

    /// The npm registry JS tools' dependencies are resolved from.
    /// [default: https://registry.npmjs.org]
    #[arg(long, env = "TOOLSMITH_NPM_REGISTRY", value_name = "URL")]
    pub npm_registry: Option<String>,

    /// The content-addressed cache of installed npm packages, shared by every process that
    /// names it. [default: <data-dir>/npm-cache]
    #[arg(long, env = "TOOLSMITH_NPM_CACHE_DIR", value_name = "DIR")]
    pub npm_cache_dir: Option<PathBuf>,

    /// Extra trusted roots for the npm registry's TLS, a PEM bundle (npm's `cafile`: a mirror
    /// or a TLS-inspecting proxy).
    #[arg(long, env = "TOOLSMITH_NPM_CA_FILE", value_name = "FILE")]
    pub npm_ca_file: Option<PathBuf>,

    /// When given, only these npm packages (`name` or `@scope/*`) may be installed.
    #[arg(
        long = "npm-allow",
        env = "TOOLSMITH_NPM_ALLOW",
        value_name = "PACKAGE",
        value_delimiter = ','
    )]
    pub npm_allow: Vec<String>,

    /// npm packages (`name` or `@scope/*`) never installed, anywhere in a tool's tree.
    #[arg(
        long = "npm-block",
        env = "TOOLSMITH_NPM_BLOCK",
        value_name = "PACKAGE",
        value_delimiter = ','
    )]
    pub npm_block: Vec<String>,

    /// Server environment variables whose values a JS tool reads in `process.env`.
    #[arg(
        long = "npm-process-env",
        env = "TOOLSMITH_NPM_PROCESS_ENV",
        value_name = "NAME",
        value_delimiter = ','
    )]
    pub npm_process_env: Vec<String>,

    /// Most npm dependencies one tool declares. [default: 32]
    #[arg(long, env = "TOOLSMITH_NPM_MAX_DEPENDENCIES", value_name = "N")]
    pub npm_max_dependencies: Option<usize>,

    /// Most packages in one tool's whole dependency tree. [default: 200]
    #[arg(long, env = "TOOLSMITH_NPM_MAX_PACKAGES", value_name = "N")]
    pub npm_max_packages: Option<usize>,

    /// Largest npm tarball, compressed, e.g. `16MB`. [default: 16MiB]
    #[arg(long, env = "TOOLSMITH_NPM_MAX_TARBALL_BYTES", value_name = "SIZE", value_parser = parse_size)]
    pub npm_max_tarball_bytes: Option<u64>,

    /// Most bytes one tool's packages unpack to, together, e.g. `64MB`. [default: 64MiB]
    #[arg(long, env = "TOOLSMITH_NPM_MAX_UNPACKED_BYTES", value_name = "SIZE", value_parser = parse_size)]
    pub npm_max_unpacked_bytes: Option<u64>,

    /// Most files one tool's packages hold, together. [default: 10000]
    #[arg(long, env = "TOOLSMITH_NPM_MAX_FILES", value_name = "N")]
    pub npm_max_files: Option<usize>,
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Create a tool from a JSON or YAML tool file.
    Create {
        /// The tool file (`.json`, `.yaml`, `.yml`; `-` reads stdin).
        #[arg(short, long, value_name = "FILE")]
        file: PathBuf,
    },
    /// Import an HTTP tool from its spec-004 definition (YAML or JSON); it is created with kind
    /// `http`, named and described by the definition.
    Import {
        /// The definition file (`.yaml`, `.yml`, `.json`; `-` reads stdin).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// List tools, filtered and paged.
    List(ListArgs),
    /// Show one tool, code included.
    Get {
        /// Tool id (`tool_…`) or name.
        tool: String,
    },
    /// Apply a partial update from a JSON or YAML patch file.
    Update {
        /// Tool id (`tool_…`) or name.
        tool: String,
        /// The patch file (`.json`, `.yaml`, `.yml`; `-` reads stdin).
        #[arg(short, long, value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        revision: ExpectedRevision,
    },
    /// Make a disabled tool active again.
    Enable {
        /// Tool id (`tool_…`) or name.
        tool: String,
        #[command(flatten)]
        revision: ExpectedRevision,
    },
    /// Take an active tool out of the catalog without deleting it.
    Disable {
        /// Tool id (`tool_…`) or name.
        tool: String,
        #[command(flatten)]
        revision: ExpectedRevision,
    },
    /// Approve a tool pending approval (it becomes active).
    Approve {
        /// Tool id (`tool_…`) or name.
        tool: String,
    },
    /// Reject a tool pending approval.
    Reject {
        /// Tool id (`tool_…`) or name.
        tool: String,
    },
    /// Delete a tool and its history.
    Delete {
        /// Tool id (`tool_…`) or name.
        tool: String,
        #[command(flatten)]
        revision: ExpectedRevision,
    },
    /// Move a tool to another owner: to an organisation of which you are editor or above, or
    /// back to yourself (`me`). Its versions go with it; its executions stay as history.
    Move {
        /// Tool id (`tool_…`) or name.
        tool: String,
        /// `me` or an organisation's name or id.
        #[arg(long, value_name = "ORG")]
        to: String,
        /// The organisation the tool is in now (you must be its editor or above); your own
        /// tools when absent.
        #[arg(long, value_name = "ORG")]
        from: Option<String>,
        #[command(flatten)]
        revision: ExpectedRevision,
    },
    /// List the stored versions of a tool, newest first.
    History {
        /// Tool id (`tool_…`) or name.
        tool: String,
    },
    /// Make an earlier version current again (as a new version).
    Rollback {
        /// Tool id (`tool_…`) or name.
        tool: String,
        /// The version to restore.
        #[arg(long, value_name = "N")]
        version: i64,
        #[command(flatten)]
        revision: ExpectedRevision,
    },
    /// Counts over your tools.
    Stats,
    /// Your recent executions, newest first: each call's status and duration, and what the run
    /// asked of its caller's client (log and progress messages, samples, elicitations, refused).
    Executions {
        /// Tool id (`tool_…`) or name; every tool when absent.
        tool: Option<String>,
        /// How many to show, 1 to 1000.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
}

/// Optimistic concurrency: refuse the write if the tool changed since it was read.
#[derive(Debug, Args)]
pub struct ExpectedRevision {
    /// Only write if the tool is still at this revision (else exit 5).
    #[arg(long, value_name = "N")]
    pub expected_revision: Option<i64>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only tools in this status: active, disabled, pending_approval, rejected.
    #[arg(long, value_name = "S", value_parser = parse_status)]
    pub status: Option<ToolStatus>,
    /// Only tools in this category.
    #[arg(long, value_name = "C")]
    pub category: Option<String>,
    /// Only tools created by `user` or `llm`.
    #[arg(long, value_name = "WHO", value_parser = parse_created_by)]
    pub created_by: Option<CreatedBy>,
    /// Case-insensitive text in name, description or category.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// Page size (1 to 1000).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: u32,
    /// Tools to skip.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u32,
}

/// Where the arguments of a call come from. Large arguments never need the command line.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// Arguments as a JSON object; `-` reads them from stdin.
    #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
    pub args: Option<String>,
    /// Read the JSON arguments from a file (`-` is stdin).
    #[arg(long, value_name = "FILE")]
    pub args_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Name of the tool to run.
    pub name: String,
    #[command(flatten)]
    pub call: CallArgs,
}

#[derive(Debug, Args)]
pub struct RunCodeArgs {
    /// The JavaScript file: the body of an async function (`-` reads stdin).
    #[arg(short, long, value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub call: CallArgs,
    /// A permission to grant the code (repeatable): network, filesystem, database, shell,
    /// email, scheduling, sampling, elicitation.
    #[arg(long = "permission", value_name = "P", value_parser = parse_permission)]
    pub permissions: Vec<Permission>,
}

fn parse_status(text: &str) -> Result<ToolStatus, String> {
    text.parse()
}

fn parse_created_by(text: &str) -> Result<CreatedBy, String> {
    text.parse()
}

fn parse_permission(text: &str) -> Result<Permission, String> {
    text.parse()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
