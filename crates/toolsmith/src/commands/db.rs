//! `toolsmith db copy --from URL --to URL`: moves a whole store between SQLite and PostgreSQL
//! (either way), through `toolsmith_store::copy`: both schemas brought up to date first, every
//! table copied in one destination transaction with sealed secrets left sealed, then verified
//! by counting each table's rows on both sides.

use std::time::Duration;

use clap::{Args, Subcommand};
use toolsmith_store::copy::{CopyError, RawTables, TableCount, copy_database};
use toolsmith_store::{PgOptions, PgStore, SqliteStore};

use crate::cli::GlobalArgs;
use crate::database::{DEFAULT_STARTUP_TIMEOUT, DatabaseUrl};
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, Table};
use crate::redacted::Redacted;
use crate::settings::ConfigError;

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy every table of one store into another (SQLite ↔ PostgreSQL, either way).
    ///
    /// Copies tools and their history, executions, the Config Center (secret values stay
    /// sealed: run the destination with the same key), tokens, approvals and grants, the audit
    /// log and the stored policy, with their ids, revisions and times. The destination's
    /// schema is created or migrated first, and it must be empty unless --replace is given;
    /// everything is written in one transaction, so a failed copy leaves it as it was. The
    /// source is read in one snapshot; writes made to it after the copy starts are not copied
    /// (stop the servers first). Prints the rows of each table on both sides.
    Copy(CopyArgs),
}

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The store to copy from: `sqlite:///abs/path.db`, a file path, or
    /// `postgres://user:password@host/db`. A SQLite file must exist.
    #[arg(
        long,
        value_name = "URL",
        env = "TOOLSMITH_COPY_FROM",
        hide_env_values = true
    )]
    from: Redacted,
    /// The store to copy into (created if it is a SQLite file that does not exist yet).
    #[arg(
        long,
        value_name = "URL",
        env = "TOOLSMITH_COPY_TO",
        hide_env_values = true
    )]
    to: Redacted,
    /// Delete everything the destination holds, in the copy's transaction, and copy over it.
    #[arg(long)]
    replace: bool,
}

pub async fn run(global: &GlobalArgs, command: DbCommand) -> anyhow::Result<u8> {
    let DbCommand::Copy(args) = command;
    let from = parse("--from", &args.from)?;
    let to = parse("--to", &args.to)?;
    let timeout = global
        .database_startup_timeout
        .unwrap_or(DEFAULT_STARTUP_TIMEOUT);
    let source = open(&from, true, timeout).await?;
    let destination = open(&to, false, timeout).await?;
    let (from_shown, to_shown) = (source.shown(), destination.shown());
    let counts = copy_database(source.as_ref(), destination.as_ref(), args.replace)
        .await
        .map_err(explain)?;
    if global.json {
        output::json(&serde_json::json!({
            "from": from_shown,
            "to": to_shown,
            "tables": counts,
        }))?;
    } else {
        output::stdout(&report(&from_shown, &to_shown, &counts))?;
    }
    Ok(SUCCESS)
}

fn parse(flag: &str, text: &str) -> Result<DatabaseUrl, ConfigError> {
    DatabaseUrl::parse(text).map_err(|e| ConfigError(format!("invalid {flag}: {e}")))
}

async fn open(
    url: &DatabaseUrl,
    source: bool,
    timeout: Duration,
) -> anyhow::Result<Box<dyn RawTables>> {
    let side = if source { "source" } else { "destination" };
    match url {
        DatabaseUrl::Sqlite(path) => {
            if source && !path.is_file() {
                return Err(CliError::NotFound(format!(
                    "the source {} does not exist (nothing was created there): give the path of \
                     the Toolsmith database file to copy, e.g. ./toolsmith-data/toolsmith.db",
                    path.display()
                ))
                .into());
            }
            let store = SqliteStore::open(path).await.map_err(|e| {
                CliError::Store(format!("cannot open the {side} {}: {e}", path.display()))
            })?;
            Ok(Box::new(store))
        }
        DatabaseUrl::Postgres(text) => {
            let options = PgOptions {
                startup_timeout: timeout,
                max_connections: 4,
                ..PgOptions::default()
            };
            let store = PgStore::connect(text, &options)
                .await
                .map_err(|e| CliError::Store(format!("cannot open the {side}: {e}")))?;
            Ok(Box::new(store))
        }
    }
}

/// A copy error in words, naming the flag that changes the outcome where there is one.
fn explain(e: CopyError) -> anyhow::Error {
    match e {
        CopyError::NotEmpty { .. } => CliError::Conflict(format!(
            "{e}. Pass --replace to delete everything in the destination and copy over it \
             (in one transaction: if the copy fails, the destination keeps what it had)"
        ))
        .into(),
        CopyError::SameDatabase { .. } => ConfigError(format!(
            "{e}: give two different databases to --from and --to"
        ))
        .into(),
        other => CliError::Store(other.to_string()).into(),
    }
}

fn report(from: &str, to: &str, counts: &[TableCount]) -> String {
    let mut table = Table::new(&["TABLE", "SOURCE ROWS", "DESTINATION ROWS"]);
    for c in counts {
        table.row(vec![
            c.table.to_owned(),
            c.source_rows.to_string(),
            c.destination_rows.to_string(),
        ]);
    }
    format!(
        "copied {from} → {to}\n{}verified: every table has as many rows in the destination as in \
         the source.\nSecret values were copied sealed: run toolsmith on the destination with \
         the same key (TOOLSMITH_SECRET_KEY, or the secret.key file of the source's data \
         directory).\n",
        table.render()
    )
}
