//! The messaging tool (001 §2 "Messaging", group `messaging`): `message` sends a text to a
//! channel through its incoming webhook — Slack's, Discord's or Microsoft Teams' (a Workflows
//! webhook taking an Adaptive Card), each in its own payload, or any other service as a
//! generic JSON POST.
//!
//! A channel is a Config Center service of the caller: [`SERVICE`] (the default channel) or
//! `messaging_<name>` (the channel `<name>`), with `webhook_url` (keep it secret: for Slack
//! and Discord the URL is the credential), optionally `kind` (`slack`, `discord`, `teams` or
//! `generic`; guessed from the URL's host when left out) and, for a generic webhook, `token`
//! (secret, sent as a bearer token). The request leaves through the egress guard. Discord's
//! mentions are switched off (`allowed_mentions`), so a message cannot ping `@everyone`.

use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::outside;
use crate::web::{Call, ToolError, str_arg, web_tool_in};

/// The category of the family's tool.
pub const CATEGORY: &str = "Messaging";
/// The Config Center service of the default channel; `messaging_<name>` is the channel `<name>`.
pub const SERVICE: &str = "messaging";
/// Longest message, in characters (Discord takes at most 2,000).
pub const MAX_TEXT_CHARS: usize = 4_000;
const MAX_TITLE_CHARS: usize = 200;
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    "messaging",
    "Messaging",
    "Send a message to a chat channel (Slack, Discord, Microsoft Teams or any webhook) \
     configured in the Config Center.",
    "sends messages to outside channels in the user's name",
    ResultSource::External,
    &["message"],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[(Effect::Adds, &["message"])];

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let definition = ToolDefinition::new(
        "message",
        "Send a message to a chat channel — Slack, Discord, Microsoft Teams or any webhook — \
         set up in the Config Center (service 'messaging', or 'messaging_<channel>').",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "description": "The message (at most 4,000 characters; 2,000 for Discord)."},
                "title": {"type": "string", "maxLength": MAX_TITLE_CHARS, "description": "A heading shown above the message."},
                "channel": {"type": "string", "pattern": "^[a-z0-9_]{1,40}$", "description": "The channel: the Config Center service 'messaging_<channel>'. Left out, the service 'messaging'."}
            },
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "message",
        "send a message",
        "post to slack",
        "slack",
        "discord",
        "teams",
        "chat channel",
        "notify the team",
        "webhook",
        "announce",
    ]);
    vec![web_tool_in(env, CATEGORY, definition, |c| Box::pin(run(c)))]
}

/// The payload shape a webhook takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Slack,
    Discord,
    Teams,
    Generic,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Slack => "slack",
            Kind::Discord => "discord",
            Kind::Teams => "teams",
            Kind::Generic => "generic",
        }
    }

    /// The kind a webhook URL's host shows.
    fn guess(url: &url::Url) -> Kind {
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        if host == "hooks.slack.com" {
            Kind::Slack
        } else if matches!(
            host.as_str(),
            "discord.com" | "discordapp.com" | "ptb.discord.com" | "canary.discord.com"
        ) && url.path().starts_with("/api/webhooks/")
        {
            Kind::Discord
        } else if host.ends_with(".webhook.office.com") || host.ends_with(".logic.azure.com") {
            Kind::Teams
        } else {
            Kind::Generic
        }
    }
}

/// The body the webhook of `kind` takes.
fn payload(kind: Kind, channel: &str, title: Option<&str>, text: &str) -> Value {
    match kind {
        Kind::Slack => {
            json!({"text": title.map_or_else(|| text.to_owned(), |t| format!("*{t}*\n{text}"))})
        }
        Kind::Discord => json!({
            "content": title.map_or_else(|| text.to_owned(), |t| format!("**{t}**\n{text}")),
            "allowed_mentions": {"parse": []},
        }),
        Kind::Teams => {
            let mut body = Vec::new();
            if let Some(title) = title {
                body.push(json!({"type": "TextBlock", "text": title, "weight": "Bolder", "size": "Medium", "wrap": true}));
            }
            body.push(json!({"type": "TextBlock", "text": text, "wrap": true}));
            json!({
                "type": "message",
                "attachments": [{
                    "contentType": "application/vnd.microsoft.card.adaptive",
                    "contentUrl": null,
                    "content": {
                        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                        "type": "AdaptiveCard",
                        "version": "1.4",
                        "body": body,
                    },
                }],
            })
        }
        Kind::Generic => json!({
            "channel": channel,
            "title": title,
            "text": text,
            "sentAt": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }),
    }
}

async fn run(call: Call<'_>) -> Result<Value, ToolError> {
    let text = str_arg(&call.args, "text")?.trim().to_owned();
    if text.is_empty() {
        return Err(ToolError::Args(
            "'text' is empty: write the message".to_owned(),
        ));
    }
    let title = call
        .args
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let channel = call.args.get("channel").and_then(Value::as_str);
    let service = match channel {
        Some(name) => {
            if name.is_empty()
                || name.len() > 40
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            {
                return Err(ToolError::Args(
                    "'channel' must be 1 to 40 lower-case letters, digits or '_' (the Config \
                     Center service 'messaging_<channel>')"
                        .to_owned(),
                ));
            }
            format!("{SERVICE}_{name}")
        }
        None => SERVICE.to_owned(),
    };
    let values = outside::values(&call, &service).await;
    let values = values.as_ref();
    let webhook = outside::field(values, &["webhook_url", "webhookUrl", "url"]).ok_or_else(|| {
        ToolError::NotConfigured(format!(
            "no channel is configured here: create the Config Center service '{service}' with a \
             secret field 'webhook_url' (the channel's incoming webhook: Slack, Discord, a \
             Microsoft Teams workflow, or any URL taking a JSON POST) and optionally 'kind' \
             (slack, discord, teams or generic), e.g. `printf %s \"$URL\" | toolsmith config \
             set {service} webhook_url=@-`"
        ))
    })?;
    let url = url::Url::parse(webhook)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| {
            ToolError::NotConfigured(format!(
                "the Config Center service '{service}' has a webhook_url that is not an http(s) \
                 URL: set it to the channel's incoming webhook"
            ))
        })?;
    let kind = match outside::field(values, &["kind"])
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None => Kind::guess(&url),
        Some("slack") => Kind::Slack,
        Some("discord") => Kind::Discord,
        Some("teams") => Kind::Teams,
        Some("generic" | "webhook") => Kind::Generic,
        Some(other) => {
            return Err(ToolError::NotConfigured(format!(
                "the Config Center service '{service}' has kind '{other}': use slack, discord, \
                 teams or generic"
            )));
        }
    };
    if kind == Kind::Discord
        && text.chars().count() + title.map_or(0, |t| t.chars().count() + 5) > 2000
    {
        return Err(ToolError::Args(
            "Discord takes at most 2,000 characters a message: shorten it or send it in parts"
                .to_owned(),
        ));
    }
    let name = channel.unwrap_or("default");
    let mut headers = Vec::new();
    if kind == Kind::Generic
        && let Some(token) = outside::field(values, &["token"])
    {
        headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
    }
    let body = payload(kind, name, title, &text);
    let answer = outside::send(&call, "POST", url, headers, Some(&body), MAX_ANSWER_BYTES).await?;
    if !(200..300).contains(&answer.status) {
        return Err(ToolError::Provider(format!(
            "the {} webhook answered HTTP {}{}: the message was not sent; check the Config \
             Center service '{service}' (webhook_url, kind)",
            kind.as_str(),
            answer.status,
            answer.reason()
        )));
    }
    Ok(json!({"sent": true, "channel": name, "kind": kind.as_str(), "status": answer.status}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_guessed_from_the_webhooks_host() {
        let kind = |u: &str| Kind::guess(&url::Url::parse(u).unwrap());
        assert_eq!(
            kind("https://hooks.slack.com/services/T0/B0/x"),
            Kind::Slack
        );
        assert_eq!(
            kind("https://discord.com/api/webhooks/1/abc"),
            Kind::Discord
        );
        assert_eq!(kind("https://discord.com/elsewhere"), Kind::Generic);
        assert_eq!(
            kind("https://prod-01.westeurope.logic.azure.com:443/workflows/x"),
            Kind::Teams
        );
        assert_eq!(
            kind("https://hooks.slack.com.evil.example/x"),
            Kind::Generic
        );
    }

    #[test]
    fn each_kind_gets_its_own_payload() {
        assert_eq!(
            payload(Kind::Slack, "c", Some("Hi"), "x")["text"],
            "*Hi*\nx"
        );
        let discord = payload(Kind::Discord, "c", None, "@everyone x");
        assert_eq!(discord["allowed_mentions"], json!({"parse": []}));
        let teams = payload(Kind::Teams, "c", None, "x");
        assert_eq!(teams["attachments"][0]["content"]["body"][0]["text"], "x");
        assert_eq!(payload(Kind::Generic, "ops", None, "x")["channel"], "ops");
    }
}
