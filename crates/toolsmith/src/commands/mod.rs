//! The commands: one module per command group, all running on one opened [`ToolService`].
//!
//! - [`config`] — `toolsmith config …`: the Config Center.
//! - [`approvals`] — `toolsmith approvals …`: human approval of executions.
//! - [`audit`] — `toolsmith audit`: the audit log.
//! - [`policy`] — `toolsmith policy …`: the stored policy.
//! - [`groups`] — `toolsmith groups …`: the built-in tool groups, switched on and off.
//! - [`tool`] — `toolsmith tool …`: the lifecycle of custom tools.
//! - [`prompt`] — `toolsmith prompt …`: prompts made at runtime.
//! - [`resource`] — `toolsmith resource …`: resources and resource templates you define.
//! - [`run`] — `toolsmith run` and `toolsmith run-code`: executing tools and code.
//! - [`mcp_servers`] — `toolsmith mcp-servers …`: the MCP bridge's upstream servers.
//! - [`mcp_grants`] — `toolsmith mcp-grants …`: grants of bridged servers, access requests.
//! - [`timezone`] — `toolsmith timezone [NAME]`: the user's time zone for dates in words.
//! - [`team`] — `toolsmith team …`: agent teams and their boards.
//! - [`org`] — `toolsmith org …`: organisations and their members.
//! - [`serve`] — `toolsmith serve`: the HTTP server (REST, MCP, health).
//! - [`mcp`] — `toolsmith mcp`: MCP over stdio.
//! - [`db`] — `toolsmith db copy`: a whole store copied between SQLite and PostgreSQL (it
//!   opens two stores of its own, no service).
//!
//! A command prints its own output and returns the exit code of a run that got an answer;
//! errors travel up as `anyhow` errors and are reported by `main`.

use std::sync::Arc;

use toolsmith_service::{Actor, ToolService};

use crate::cli::{Cli, Command, RuntimeArgs, ToolCommand};
use crate::database::{self, Database};
use crate::exit::CliError;
use crate::settings::Settings;

pub mod agent;
pub mod approvals;
pub mod audit;
pub mod config;
pub mod db;
pub mod groups;
pub mod mcp;
pub mod mcp_grants;
pub mod mcp_servers;
pub mod org;
pub mod policy;
pub mod prompt;
pub mod resource;
pub mod run;
pub mod serve;
pub mod team;
pub mod timezone;
pub mod token;
pub mod tool;

/// What every command works with.
pub struct Ctx {
    pub service: Arc<ToolService>,
    /// The CLI is always a person.
    pub actor: Actor,
    pub json: bool,
    /// The global option that names this store (`--data-dir DIR` …), for the commands that
    /// hints tell the person to run.
    pub store_option: String,
}

/// Opens the service and runs the command; returns the exit code.
pub async fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    let global = cli.global;
    let command = match cli.command {
        Command::Serve(args) => {
            return serve::run(Settings::resolve(&global, Some(&*args), &args.runtime)?).await;
        }
        Command::Mcp(args) => {
            return mcp::run(
                Settings::resolve(&global, None, &args.runtime)?,
                &global.user,
                args.organization.as_deref(),
            )
            .await;
        }
        Command::Db(command) => return db::run(&global, command).await,
        other => other,
    };
    // The other commands read the server's configuration (file named by TOOLSMITH_CONFIG and
    // the TOOLSMITH_* variables) so that they honour the same limits, sandbox settings and
    // JSONL audit file as the server they sit beside.
    let mut settings = Settings::resolve(&global, None, &RuntimeArgs::from_env()?)?;
    // No upstream MCP server is started for a command that does not need one: `mcp-servers`
    // and `run` of a bridged tool connect what they need themselves.
    settings.service.mcp_bridge.autostart = false;
    if settings.service.read_only && writes(&command) {
        return Err(toolsmith_service::ServiceError::Forbidden(
            "read-only mode (--read-only, TOOLSMITH_READ_ONLY or read_only in the configuration \
             file): this command changes the store, and writes are refused; nothing was changed"
                .to_owned(),
        )
        .into());
    }
    if let Database::Sqlite(path) = &settings.database
        && !creates_store(&command)
        && !path.exists()
    {
        return Err(CliError::NotFound(format!(
            "no Toolsmith store at {} (nothing was created there): pass the server's data \
             directory with --data-dir DIR (or TOOLSMITH_DATA_DIR), or its --database-url",
            path.display()
        ))
        .into());
    }
    tracing::debug!(database = %settings.database, "opening the store");
    let service = database::open_service(
        &settings.database,
        settings.service,
        settings.database_startup_timeout,
    )
    .await?;
    let ctx = Ctx {
        store_option: settings.database.cli_option(),
        service,
        actor: Actor::user(global.user),
        json: global.json,
    };
    let outcome = match command {
        Command::Tool(command) => tool::run(&ctx, command).await,
        Command::Agent(command) => agent::run(&ctx, command).await,
        Command::Prompt(command) => prompt::run(&ctx, command).await,
        Command::Resource(command) => resource::run(&ctx, command).await,
        Command::Run(args) => run::run_tool(&ctx, args).await,
        Command::RunCode(args) => run::run_code(&ctx, args).await,
        Command::Token(command) => token::run(&ctx, command).await,
        Command::Config(command) => config::run(&ctx, command).await,
        Command::Approvals(command) => approvals::run(&ctx, command).await,
        Command::Audit(args) => audit::run(&ctx, args).await,
        Command::Policy(command) => policy::run(&ctx, command).await,
        Command::Groups(command) => groups::run(&ctx, command).await,
        Command::McpServers(command) => mcp_servers::run(&ctx, command).await,
        Command::McpGrants(command) => mcp_grants::run(&ctx, command).await,
        Command::Timezone(args) => timezone::run(&ctx, args).await,
        Command::Team(command) => team::run(&ctx, command).await,
        Command::Org(command) => org::run(&ctx, command).await,
        Command::Serve(_) | Command::Mcp(_) | Command::Db(_) => {
            unreachable!("dispatched above")
        }
    };
    // Usage is written in the background; nothing of it may be lost when the process exits.
    ctx.service.flush_usage().await;
    outcome
}

/// Whether `command` changes the store (refused in read-only mode). Only the commands listed
/// here as reads are not; a new command counts as a write until it is listed. Runs of tools
/// and code are not writes of the CLI's own: the service refuses what a built-in would
/// change in read-only mode.
fn writes(command: &Command) -> bool {
    use approvals::ApprovalsCommand as A;
    use config::ConfigCommand as C;
    use groups::GroupsCommand as G;
    use mcp_grants::McpGrantsCommand as MG;
    use mcp_servers::McpServersCommand as MS;
    use policy::PolicyCommand as P;
    use token::TokenCommand as T;
    let reads = match command {
        Command::Tool(tool) => matches!(
            tool,
            ToolCommand::List(_)
                | ToolCommand::Get { .. }
                | ToolCommand::History { .. }
                | ToolCommand::Stats
                | ToolCommand::Executions { .. }
        ),
        Command::Run(_) | Command::RunCode(_) | Command::Audit(_) => true,
        Command::Prompt(p) => p.reads(),
        Command::Resource(r) => r.reads(),
        Command::Agent(a) => matches!(
            a,
            agent::AgentCommand::List
                | agent::AgentCommand::Get { .. }
                | agent::AgentCommand::Links
        ),
        Command::Config(c) => matches!(c, C::List | C::Get { .. }),
        Command::Token(t) => matches!(t, T::List),
        Command::Approvals(a) => matches!(a, A::List { .. } | A::Show { .. }),
        Command::Policy(p) => matches!(p, P::Show),
        Command::Groups(g) => {
            matches!(g, G::List | G::Show { .. } | G::Of { .. } | G::EnabledTools)
        }
        Command::McpServers(m) => matches!(m, MS::List(_) | MS::Show { .. }),
        Command::McpGrants(m) => matches!(m, MG::List | MG::Requests { .. }),
        Command::Timezone(t) => t.reads(),
        Command::Team(t) => t.reads(),
        Command::Org(o) => o.reads(),
        Command::Serve(_) | Command::Mcp(_) | Command::Db(_) => true,
    };
    !reads
}

/// Whether `command` may start a new store where none is: those that write something a store
/// is for, and runs (a built-in or code run once needs no stored tool). A command that reads,
/// decides or deletes on a store that is not there says so instead of creating an empty one.
fn creates_store(command: &Command) -> bool {
    use config::ConfigCommand;
    use policy::PolicyCommand;
    use token::TokenCommand;
    match command {
        Command::Tool(tool) => matches!(
            tool,
            ToolCommand::Create { .. } | ToolCommand::Import { .. }
        ),
        Command::Config(config) => {
            matches!(
                config,
                ConfigCommand::AddService { .. } | ConfigCommand::Set { .. }
            )
        }
        Command::Policy(policy) => matches!(policy, PolicyCommand::Set { .. }),
        Command::Agent(agent) => matches!(agent, agent::AgentCommand::Create { .. }),
        Command::Prompt(prompt) => matches!(prompt, prompt::PromptCommand::Create { .. }),
        Command::Resource(resource) => resource.creates(),
        Command::Groups(groups) => matches!(
            groups,
            groups::GroupsCommand::Enable { .. } | groups::GroupsCommand::Disable { .. }
        ),
        Command::Token(token) => matches!(token, TokenCommand::Create { .. }),
        Command::McpServers(command) => {
            matches!(command, mcp_servers::McpServersCommand::Add(_))
        }
        Command::McpGrants(command) => matches!(
            command,
            mcp_grants::McpGrantsCommand::Set { .. } | mcp_grants::McpGrantsCommand::Request { .. }
        ),
        Command::Run(_)
        | Command::RunCode(_)
        | Command::Serve(_)
        | Command::Mcp(_)
        | Command::Db(_) => true,
        Command::Timezone(t) => !t.reads(),
        Command::Team(t) => matches!(t, team::TeamCommand::Create { .. }),
        Command::Org(o) => matches!(o, org::OrgCommand::Create { .. }),
        Command::Audit(_) | Command::Approvals(_) => false,
    }
}
