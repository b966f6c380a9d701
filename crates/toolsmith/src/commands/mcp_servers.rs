//! `toolsmith mcp-servers …`: the MCP bridge's upstream servers — their status, and
//! registering, changing, retrying and removing the ones kept in the store (the CLI is the
//! local operator, as for tokens). A running `toolsmith serve` on the same store starts, restarts
//! or stops them at its next change-feed poll.
//!
//! The status is this process's own: `list`, `show` and `retry` connect to every enabled server
//! (or the one named) and wait (`--wait`, default 10 s) until none is still connecting, so what
//! they print is what a fresh connection meets now. The other commands start nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use clap::{Args, Subcommand};
use toolsmith_service::bridge::{McpServerRegistration, ServerState, ServerStatus, Transport};

use super::Ctx;
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, Block, Table};

#[derive(Debug, Subcommand)]
pub enum McpServersCommand {
    /// Every server: where it comes from, its state, tools, last check, calls and errors.
    List(WaitArgs),
    /// One server: its configuration (env names only) and status.
    Show {
        name: String,
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Register a stdio server (--command: its program must be among `mcp_allowed_commands`)
    /// or an HTTP one (--url: the egress guard must allow it; --transport sse for a legacy
    /// HTTP+SSE server).
    Add(ServerArgs),
    /// Replace a registered server's configuration (the whole of it).
    Update {
        #[command(flatten)]
        server: ServerArgs,
        /// Refuse the change unless the stored revision is this one.
        #[arg(long)]
        expected_revision: Option<i64>,
    },
    /// Remove a registered server.
    Remove { name: String },
    /// Connect to a server now and show its status.
    Retry {
        name: String,
        #[command(flatten)]
        wait: WaitArgs,
    },
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Seconds to wait for servers still connecting.
    #[arg(long, default_value_t = 10)]
    wait: u64,
}

/// A server's configuration on the command line.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// 1–32 lower-case letters, digits, `_` or `-`.
    name: String,
    /// stdio: the program, an absolute path or a name found in PATH. Never run through a shell.
    #[arg(long, conflicts_with = "url", required_unless_present = "url")]
    command: Option<String>,
    /// An HTTP server's URL: its MCP endpoint (e.g. https://mcp.example.com/mcp), or with
    /// --transport sse the URL of its SSE stream (e.g. https://mcp.example.com/sse).
    #[arg(long)]
    url: Option<String>,
    /// With --url: streamable_http (default), or sse for the legacy HTTP+SSE transport of MCP
    /// 2024-11-05.
    #[arg(long, value_enum)]
    transport: Option<HttpTransport>,
    /// With --url: NAME=VALUE sent with every request (repeat); VALUE may hold
    /// `{{config.<service>.<field>}}` references.
    #[arg(long = "header", value_parser = parse_env, requires = "url")]
    headers: Vec<(String, String)>,
    /// With --url: the bearer token as a Config Center reference only, e.g.
    /// '{{config.github.token}}' (a token in clear is refused).
    #[arg(long, requires = "url")]
    bearer_token: Option<String>,
    /// One argument (repeat for each, in order).
    #[arg(long = "arg", allow_hyphen_values = true)]
    args: Vec<String>,
    /// NAME=VALUE for its environment (repeat): a credential-like NAME (…_TOKEN, …_API_KEY,
    /// …_SECRET, …_PASSWORD) with VALUE a `{{config.<service>.<field>}}` reference, or a NAME
    /// the operator lists in `mcp_allowed_env`.
    #[arg(long = "env", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Prefix of its tools' names (default `mcp_<name>_`).
    #[arg(long)]
    prefix: Option<String>,
    /// Register it switched off.
    #[arg(long)]
    disabled: bool,
    /// Only this upstream tool (repeat); none: all.
    #[arg(long = "allow")]
    tool_allow: Vec<String>,
    /// Never this upstream tool (repeat; wins over --allow).
    #[arg(long = "deny")]
    tool_deny: Vec<String>,
    /// Seconds one call may take (default 60, at most 300).
    #[arg(long)]
    call_timeout: Option<u64>,
    /// Leave its tools out of MCP tools/list (true) or keep them (false); unset: by the
    /// `mcp_deferred_threshold`.
    #[arg(long)]
    deferred: Option<bool>,
}

impl ServerArgs {
    fn into_config(self) -> McpServerRegistration {
        McpServerRegistration {
            name: self.name,
            // A --transport without --url is kept, so the check names the missing URL.
            transport: match self.transport {
                Some(HttpTransport::Sse) => Transport::Sse,
                Some(HttpTransport::StreamableHttp) => Transport::StreamableHttp,
                None if self.url.is_some() => Transport::StreamableHttp,
                None => Transport::Stdio,
            },
            command: self.command.unwrap_or_default(),
            args: self.args,
            env: self.env.into_iter().collect::<BTreeMap<_, _>>(),
            url: self.url,
            headers: self.headers.into_iter().collect::<BTreeMap<_, _>>(),
            bearer_token: self.bearer_token,
            prefix: self.prefix,
            enabled: !self.disabled,
            tool_allow: self.tool_allow,
            tool_deny: self.tool_deny,
            call_timeout_seconds: self.call_timeout,
            deferred: self.deferred,
        }
    }
}

/// The transports a server with a URL may use.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
enum HttpTransport {
    StreamableHttp,
    Sse,
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("'{text}' is not NAME=VALUE"))
}

/// Runs an `mcp-servers` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: McpServersCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    match command {
        McpServersCommand::List(wait) => {
            service.connect_mcp_servers(None);
            settle(ctx, None, wait.wait).await;
            let servers = service.mcp_servers();
            if ctx.json {
                output::json(&servers)?;
            } else if servers.is_empty() {
                output::stdout(
                    "no MCP servers (configure [[mcp_servers]] or `toolsmith mcp-servers add`)\n",
                )?;
            } else {
                output::stdout(&table(&servers))?;
            }
        }
        McpServersCommand::Show { name, wait } => {
            service.connect_mcp_servers(Some(std::slice::from_ref(&name)));
            settle(ctx, Some(&name), wait.wait).await;
            show(ctx, &service.mcp_server(&name)?)?;
        }
        McpServersCommand::Add(server) => {
            let status = service
                .register_mcp_server(&ctx.actor, server.into_config())
                .await?;
            done(ctx, &status, "registered")?;
        }
        McpServersCommand::Update {
            server,
            expected_revision,
        } => {
            let status = service
                .update_mcp_server(&ctx.actor, server.into_config(), expected_revision)
                .await?;
            done(ctx, &status, "updated")?;
        }
        McpServersCommand::Remove { name } => {
            service.remove_mcp_server(&ctx.actor, &name).await?;
            if ctx.json {
                output::json(&serde_json::json!({"removed": name}))?;
            } else {
                output::stdout(&format!("removed MCP server {name}\n"))?;
            }
        }
        McpServersCommand::Retry { name, wait } => {
            // Started now, or asked to reconnect now if it was started already.
            if service
                .connect_mcp_servers(Some(std::slice::from_ref(&name)))
                .is_empty()
                && !service.retry_mcp_server(&name)
            {
                return Err(CliError::NotFound(format!("no MCP server named '{name}'")).into());
            }
            settle(ctx, Some(&name), wait.wait).await;
            show(ctx, &service.mcp_server(&name)?)?;
        }
    }
    Ok(SUCCESS)
}

/// Waits until no server (or `name`) is connecting, for at most `seconds`.
async fn settle(ctx: &Ctx, name: Option<&str>, seconds: u64) {
    let names = name.map(|n| vec![n.to_owned()]);
    settle_servers(ctx, names.as_deref(), seconds).await;
}

/// Waits until none of `names` (every server for `None`) is connecting, for at most `seconds`.
pub(crate) async fn settle_servers(ctx: &Ctx, names: Option<&[String]>, seconds: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    while tokio::time::Instant::now() < deadline {
        let connecting = ctx.service.mcp_servers().iter().any(|s| {
            names.is_none_or(|n| n.contains(&s.name))
                && (s.state == ServerState::Connecting
                    || (s.state == ServerState::Down
                        && s.connections == 0
                        && s.last_error.is_none()))
        });
        if !connecting {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn done(ctx: &Ctx, status: &ServerStatus, what: &str) -> anyhow::Result<()> {
    if ctx.json {
        output::json(status)
    } else {
        output::stdout(&format!(
            "{what} MCP server {} (revision {}); a running server on this store picks it up at its next poll\n",
            status.name,
            status.revision.unwrap_or_default()
        ))
    }
}

fn state(status: &ServerStatus) -> String {
    serde_json::to_value(status.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn table(servers: &[ServerStatus]) -> String {
    let mut table = Table::new(&[
        "NAME",
        "SOURCE",
        "STATE",
        "TOOLS",
        "LAST CHECK",
        "CALLS",
        "ERRORS",
        "LAST ERROR",
    ]);
    for s in servers {
        table.row(vec![
            s.name.clone(),
            format!("{:?}", s.source).to_lowercase(),
            state(s),
            format!(
                "{}{}",
                s.tool_count,
                if s.deferred { " (deferred)" } else { "" }
            ),
            s.last_check
                .as_ref()
                .map_or_else(|| "-".to_owned(), output::time),
            s.calls.to_string(),
            s.errors.to_string(),
            s.last_error.clone().unwrap_or_else(|| "-".to_owned()),
        ]);
    }
    table.render()
}

fn show(ctx: &Ctx, status: &ServerStatus) -> anyhow::Result<()> {
    if ctx.json {
        return output::json(status);
    }
    let mut block = Block::default();
    block
        .field("name", status.name.clone())
        .field("source", format!("{:?}", status.source).to_lowercase())
        .field("state", state(status))
        .field("transport", status.config.transport.as_str().to_owned());
    match &status.config.url {
        Some(url) => block
            .field("url", url.clone())
            .field("headers", status.config.header_names.join(", "))
            .field("bearer token", status.config.bearer_token.to_string()),
        None => block
            .field("command", status.config.command.clone())
            .field("args", status.config.args.join(" "))
            .field("env", status.config.env_names.join(", ")),
    };
    block
        .field("prefix", status.config.prefix.clone())
        .field("tools", status.tools.join(", "))
        .field("skipped", status.skipped.join("; "))
        .field("deferred", status.deferred.to_string())
        .field("calls", status.calls.to_string())
        .field("errors", status.errors.to_string())
        .field(
            "last error",
            status.last_error.clone().unwrap_or_else(|| "-".to_owned()),
        );
    output::stdout(&block.render())
}
