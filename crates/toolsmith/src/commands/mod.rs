//! The commands: one module per command group, all running on one opened [`ToolService`].
//!
//! - [`tool`] — `toolsmith tool …`: the lifecycle of custom tools.
//! - [`run`] — `toolsmith run` and `toolsmith run-code`: executing tools and code.
//!
//! A command prints its own output and returns the exit code of a run that got an answer;
//! errors travel up as `anyhow` errors and are reported by `main`.

use std::sync::Arc;

use toolsmith_service::{Actor, ServiceConfig, ToolService};

use crate::cli::{Cli, Command};
use crate::database;

pub mod run;
pub mod tool;

/// What every command works with.
pub struct Ctx {
    pub service: Arc<ToolService>,
    /// The CLI is always a person.
    pub actor: Actor,
    pub json: bool,
}

/// Opens the service and runs the command; returns the exit code.
pub async fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    let global = cli.global;
    let path = database::database_path(&global.data_dir, global.database_url.as_ref());
    tracing::debug!(database = %path.display(), "opening the store");
    let config = ServiceConfig {
        max_tools_per_owner: global.max_tools_per_owner,
        ..ServiceConfig::default()
    };
    let service = database::open_service(&path, config).await?;
    let ctx = Ctx {
        service,
        actor: Actor::user(global.user),
        json: global.json,
    };
    match cli.command {
        Command::Tool(command) => tool::run(&ctx, command).await,
        Command::Run(args) => run::run_tool(&ctx, args).await,
        Command::RunCode(args) => run::run_code(&ctx, args).await,
    }
}
