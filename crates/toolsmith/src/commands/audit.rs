//! `toolsmith audit list`: the audit log of privileged actions, newest first, from the store
//! the server writes it to.

use clap::Args;
use toolsmith_core::AuditQuery;

use super::Ctx;
use crate::exit::SUCCESS;
use crate::output::{self, Table};

/// Filters of `toolsmith audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Only this user's actions.
    #[arg(long)]
    actor: Option<String>,
    /// An action (`tool.update`) or a prefix ending in `.` (`tool.`).
    #[arg(long)]
    action: Option<String>,
    /// Only actions on this target (a tool id, an approval id …).
    #[arg(long)]
    target: Option<String>,
    /// At most this many entries.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    limit: u32,
}

/// Prints the audit log; returns the exit code.
pub async fn run(ctx: &Ctx, args: AuditArgs) -> anyhow::Result<u8> {
    let query = AuditQuery {
        actor: args.actor,
        action: args.action,
        target_id: args.target,
        since: None,
        limit: args.limit,
        offset: 0,
    };
    let entries = ctx.service.audit().list(&query).await?;
    if ctx.json {
        output::json(&entries)?;
        return Ok(SUCCESS);
    }
    if entries.is_empty() {
        output::stdout("the audit log is empty\n")?;
        return Ok(SUCCESS);
    }
    let mut table = Table::new(&["AT", "ACTOR", "ACTION", "TARGET", "REVISION", "REQUEST"]);
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("-").to_owned();
    for e in &entries {
        let target = match e["targetName"].as_str() {
            Some(name) => format!(
                "{} {name} ({})",
                text(&e["targetType"]),
                text(&e["targetId"])
            ),
            None => format!("{} {}", text(&e["targetType"]), text(&e["targetId"])),
        };
        let revision = match (e["beforeRevision"].as_i64(), e["afterRevision"].as_i64()) {
            (Some(a), Some(b)) => format!("{a}→{b}"),
            (None, Some(b)) => format!("→{b}"),
            (Some(a), None) => format!("{a}→"),
            (None, None) => "-".to_owned(),
        };
        table.row(vec![
            text(&e["at"]),
            format!("{} ({})", text(&e["actor"]), text(&e["actorKind"])),
            text(&e["action"]),
            target,
            revision,
            text(&e["requestId"]),
        ]);
    }
    output::stdout(&table.render())?;
    Ok(SUCCESS)
}
