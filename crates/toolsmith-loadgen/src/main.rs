//! The `toolsmith-loadgen` command line: parse the plan, create the load tool, run, print a
//! table row (or JSON) per run.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use toolsmith_loadgen::{Kind, Plan, Summary, Target, run, setup};

/// Load a running `toolsmith serve` (loopback only) with concurrent clients calling one
/// trivial JS tool, and report calls/s and latency percentiles.
#[derive(Debug, Parser)]
#[command(name = "toolsmith-loadgen", version)]
struct Cli {
    /// The server, e.g. http://127.0.0.1:8787 (loopback addresses only).
    #[arg(long, default_value = "http://127.0.0.1:8787")]
    url: String,
    /// Concurrent clients, each on its own connection (and MCP session); repeat or
    /// comma-separate to run several sizes one after the other.
    #[arg(long, short = 'c', value_delimiter = ',', default_value = "16")]
    clients: Vec<usize>,
    /// What a call is: MCP tools/call, the REST execute of the same tool, or GET /livez.
    #[arg(long, value_enum, default_value = "mcp")]
    kind: Kind,
    /// Measured seconds per run (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Warm-up seconds per run, not measured.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// End the measured window after this many successful calls.
    #[arg(long)]
    calls: Option<u64>,
    /// The load tool's name (created through MCP create_tool if missing).
    #[arg(long, default_value = "loadgen_echo")]
    tool: String,
    /// Call `--tool` as it is (a built-in, say) with these JSON arguments on every call,
    /// instead of creating the load tool; e.g. `--tool calculate --arguments '{"expression":"1+1"}'`.
    #[arg(long)]
    arguments: Option<String>,
    /// Bearer token, when the server requires one.
    #[arg(long, env = "TOOLSMITH_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Runtime worker threads of the generator (it shares the machine with the server).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print one JSON object per run instead of a table.
    #[arg(long)]
    json: bool,
    /// Skip the header line of the table.
    #[arg(long)]
    no_header: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cli.threads.max(1))
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolsmith-loadgen: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(main_async(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolsmith-loadgen: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn main_async(cli: Cli) -> anyhow::Result<()> {
    let seconds = |s: f64, what: &str| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| anyhow::anyhow!("--{what} must be a number of seconds ≥ 0"))
    };
    if cli.clients.iter().any(|&n| n == 0 || n > 10_000) {
        anyhow::bail!("--clients must be between 1 and 10000");
    }
    let mut plan = Plan {
        target: Target::parse(&cli.url)?,
        token: cli.token,
        kind: cli.kind,
        clients: 1,
        warmup: seconds(cli.warmup, "warmup")?,
        duration: seconds(cli.seconds, "seconds")?,
        max_calls: cli.calls,
        tool: cli.tool,
        arguments: match &cli.arguments {
            Some(text) => Some(
                serde_json::from_str(text)
                    .map_err(|e| anyhow::anyhow!("--arguments must be a JSON object: {e}"))?,
            ),
            None => None,
        },
    };
    if plan.kind != Kind::Noop {
        setup(&plan).await?;
    }
    if !cli.json && !cli.no_header {
        println!("{}", Summary::header());
    }
    for clients in cli.clients {
        plan.clients = clients;
        let summary = run(&plan).await?;
        if cli.json {
            println!("{}", serde_json::to_string(&summary)?);
        } else {
            println!("{}", summary.row());
        }
    }
    Ok(())
}
