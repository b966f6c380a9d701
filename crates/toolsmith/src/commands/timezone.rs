//! `toolsmith timezone [NAME]`: the time zone of `--user` that the data tools read dates in
//! words in ("tomorrow 9am" is 9am there; UTC unless set) — shown, or set to an IANA name.

use clap::Args;

use super::Ctx;
use crate::exit::SUCCESS;
use crate::output;

/// The arguments of `toolsmith timezone`.
#[derive(Debug, Args)]
pub struct TimezoneArgs {
    /// An IANA time zone name to set (`Europe/Paris`, `America/New_York`, `UTC`); without it,
    /// the zone in force is shown.
    pub name: Option<String>,
}

impl TimezoneArgs {
    /// Whether the command only shows the zone.
    #[must_use]
    pub fn reads(&self) -> bool {
        self.name.is_none()
    }
}

/// Shows or sets the user's time zone; returns the exit code.
pub async fn run(ctx: &Ctx, args: TimezoneArgs) -> anyhow::Result<u8> {
    let user = &ctx.actor.user_id;
    let zone = match args.name {
        Some(name) => ctx.service.set_time_zone(user, &name).await?,
        None => ctx.service.time_zone(user).await?,
    };
    if ctx.json {
        output::json(&serde_json::json!({ "timeZone": zone }))?;
    } else {
        output::stdout(&format!("{zone}\n"))?;
    }
    Ok(SUCCESS)
}
