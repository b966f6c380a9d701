//! The `toolsmith` binary: parses the command line, sets up logging (stderr only), runs the
//! command on a tokio runtime, and turns the outcome into an exit code.
//!
//! - `cli` — the clap types.
//! - `commands` — one module per command group.
//! - `config` — the configuration of `serve` and `mcp`: flags, environment, TOML file, defaults.
//! - `database` — where the database is, and opening the service on it.
//! - `feed` — the change feed: writes by other processes reach a running server's registry.
//! - `input` — tool files, arguments and code read from files or stdin.
//! - `output` — tables, `key: value` blocks and JSON.
//! - `exit` — exit codes and how errors map to them.
//! - `logging` — the log on stderr, without request payloads at any level.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod cli;
mod commands;
mod database;
mod exit;
mod feed;
mod housekeeping;
mod input;
mod logging;
mod nofile;
mod output;
mod redacted;
mod secret_key;
mod settings;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;

/// How long blocking tasks may run on after the command finished.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::SUCCESS
            });
        }
    };
    logging::init();
    logging::install_panic_hook();
    let json = cli.global.json;
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| {
            let outcome = runtime.block_on(commands::dispatch(cli));
            // Blocking work still running (a store write) gets time to finish; a blocking read
            // of stdin (MCP over stdio) must not keep the process alive.
            runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
            outcome
        });
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => ExitCode::from(report_error(&err, json)),
    }
}

/// `error: …` on stderr (the whole chain on one line), and with `--json` the error document on
/// stdout. Returns the exit code.
fn report_error(err: &anyhow::Error, json: bool) -> u8 {
    let class = exit::classify(err);
    let message = format!("{err:#}").replace('\n', " ");
    output::stderr(&format!("error: {message}\n"));
    if json {
        let doc = serde_json::json!({"error": {"code": class.code, "message": message}});
        if let Err(e) = output::json(&doc) {
            output::stderr(&format!("error: cannot write to stdout: {e}\n"));
        }
    }
    class.exit
}
