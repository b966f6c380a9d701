//! The command line, as clap types: global options, the `tool` command group, `run` and
//! `run-code`. Parsing only; what each command does lives in `commands/`.

use std::path::PathBuf;

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, Parser, Subcommand};
use toolsmith_core::{CreatedBy, Permission, ToolStatus};

use crate::database::DatabaseUrl;

/// Shown after `toolsmith --help`: the exit codes scripts can rely on (see docs/cli.md).
const EXIT_CODES: &str = "\
Exit codes:
  0   success
  1   the tool ran but returned an error (it threw, timed out, hit a limit …)
  2   usage error (unknown command or option, bad option value)
  3   validation error (malformed JSON/YAML, invalid tool file or arguments, too large, name taken …)
  4   not found (no such tool or version)
  5   conflict (stale --expected-revision, operation not allowed in the tool's status)
  6   forbidden, confirmation required, or limit reached
  10  store or internal error (unreadable or corrupt database …)

With --json, stdout holds exactly one JSON document: the result, or {\"error\": {\"code\", \"message\"}}.
Errors are also written to stderr as one line `error: …`. Documentation: docs/cli.md";

/// Toolsmith: a self-hosted runtime tool platform for AI agents.
///
/// Manage custom JavaScript tools stored in an embedded SQLite database, and run them in the
/// QuickJS sandbox.
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
    /// Directory of the embedded database (`DIR/toolsmith.db`); created if missing.
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_DATA_DIR",
        value_name = "DIR",
        default_value = "./toolsmith-data"
    )]
    pub data_dir: PathBuf,

    /// Database to use instead of the data directory: `sqlite:///abs/path.db`,
    /// `sqlite://relative.db` or a plain file path.
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_DATABASE_URL",
        value_name = "URL",
        value_parser = DatabaseUrl::parse
    )]
    pub database_url: Option<DatabaseUrl>,

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

    /// Most custom tools one user may have.
    #[arg(
        long,
        global = true,
        env = "TOOLSMITH_MAX_TOOLS_PER_OWNER",
        value_name = "N",
        default_value_t = 1000
    )]
    pub max_tools_per_owner: u64,
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
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Create a tool from a JSON or YAML tool file.
    Create {
        /// The tool file (`.json`, `.yaml`, `.yml`; `-` reads stdin).
        #[arg(short, long, value_name = "FILE")]
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
    /// email, scheduling.
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
