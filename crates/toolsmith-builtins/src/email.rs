//! The email tools (003 §12, group `email`, off by default): `send_email` and `reply_email`
//! over SMTP, `list_emails`, `read_email`, `search_emails` and `delete_email` over IMAP, on the
//! caller's own mail account — the Config Center service [`SERVICE`] ([`account`]: servers,
//! security, login, sender; the password sealed). Both protocols leave through the egress
//! guard: a server's name and every address it resolves to are checked as a request's would
//! be, and the connection goes to those addresses ([`WebClient::connect_addresses`]).
//!
//! Attachments come from the caller's workspace (`attachments`: workspace paths, under its
//! path rules, deny-list and size limits) and go to it (`read_email`'s `saveAttachmentsTo`: a
//! workspace folder; a received file's name is cut to its last part, so it never leaves that
//! folder, and a file already there is never replaced). Addresses and subjects are checked
//! before anything is built: a line break in a header is refused, never sent.
//!
//! [`WebClient::connect_addresses`]: crate::web::WebClient::connect_addresses

mod account;
mod imap;
mod smtp;

use std::time::Duration;

use async_imap::types::NameAttribute;
use lettre::message::Mailbox;
use mail_parser::{MessageParser, MimeHeaders};
use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::web::{Call, ToolError, str_arg, web_tool_in};
use crate::workspace::{WorkspaceError, WriteOptions};

/// The category of the family's tools.
pub const CATEGORY: &str = "Email";
/// The Config Center service holding the caller's mail account.
pub const SERVICE: &str = "email";
/// Longest an SMTP or IMAP exchange may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(60);
/// Longest body sent, in characters.
pub const MAX_BODY_CHARS: usize = 200_000;
/// Most recipients of one mail (to, cc and bcc together).
pub const MAX_RECIPIENTS: usize = 50;
/// Most attachments of one mail.
pub const MAX_ATTACHMENTS: usize = 10;
/// Largest attachments of one mail, together.
pub const MAX_ATTACHMENT_BYTES: u64 = 20 * 1024 * 1024;
/// Largest message `read_email` fetches.
pub const MAX_MESSAGE_BYTES: u32 = 30 * 1024 * 1024;
/// Longest body text `read_email` returns, in characters (the rest is cut, and says so).
pub const MAX_READ_CHARS: usize = 100_000;
const MAX_SUBJECT_CHARS: usize = 998;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    "email",
    "Email",
    "Send, read, search, reply to and delete mail in your own mailbox (SMTP and IMAP), \
     configured in the Config Center (service 'email').",
    "sends and reads mail in the user's name through their mail server",
    ResultSource::External,
    &[
        "send_email",
        "list_emails",
        "read_email",
        "delete_email",
        "search_emails",
        "reply_email",
    ],
)];

/// What each tool of this family does to the world (`crate::Effects`). `read_email` saves
/// attachments as new files when asked (never replacing one), so it adds.
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["list_emails", "search_emails"]),
    (Effect::Adds, &["send_email", "reply_email", "read_email"]),
    (Effect::Deletes, &["delete_email"]),
];

fn addresses_schema(what: &str) -> Value {
    json!({
        "description": format!("{what}: one address ('anna@example.com' or 'Anna <anna@example.com>') or a list of them."),
        "anyOf": [
            {"type": "string", "minLength": 3, "maxLength": 320},
            {"type": "array", "items": {"type": "string", "minLength": 3, "maxLength": 320}, "minItems": 1, "maxItems": MAX_RECIPIENTS}
        ]
    })
}

fn folder_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 200, "default": "INBOX", "description": "The mailbox folder (default INBOX)."})
}

fn email_id_schema() -> Value {
    json!({"type": "string", "pattern": "^[0-9]{1,10}$", "description": "The email's id, as list_emails or search_emails gave it (its IMAP UID in the folder)."})
}

fn attachments_schema() -> Value {
    json!({"type": "array", "maxItems": MAX_ATTACHMENTS, "items": {"type": "string", "minLength": 1, "maxLength": 1024},
        "description": "Workspace files to attach (paths relative to the workspace root; at most 10, 20 MB together)."})
}

fn definitions() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "send_email",
            "Send an email (a note, a report, files of your workspace as attachments) from \
             your own mail account (SMTP, Config Center service 'email').",
            json!({
                "type": "object",
                "properties": {
                    "to": addresses_schema("Who to send it to"),
                    "cc": addresses_schema("Copy to"),
                    "bcc": addresses_schema("Blind copy to"),
                    "subject": {"type": "string", "maxLength": MAX_SUBJECT_CHARS, "description": "The subject line (one line)."},
                    "body": {"type": "string", "maxLength": MAX_BODY_CHARS, "description": "The message."},
                    "html": {"type": "boolean", "default": false, "description": "Send the body as HTML rather than plain text."},
                    "attachments": attachments_schema()
                },
                "required": ["to", "subject", "body"],
                "additionalProperties": false
            }),
        )
        .with_tags(&[
            "email", "send an email", "mail", "e-mail", "smtp", "write to", "attach a file",
            "compose",
        ]),
        ToolDefinition::new(
            "list_emails",
            "List the newest emails in your mailbox (IMAP, Config Center service 'email'): \
             id, sender, subject, date and whether read.",
            json!({
                "type": "object",
                "properties": {
                    "folder": folder_schema(),
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20, "description": "How many, newest first (at most 50)."},
                    "unreadOnly": {"type": "boolean", "default": false, "description": "Only emails not read yet."}
                },
                "additionalProperties": false
            }),
        )
        .with_tags(&[
            "email", "inbox", "check my inbox", "mailbox", "new mail", "unread", "imap",
            "messages", "received",
        ]),
        ToolDefinition::new(
            "read_email",
            "Read one email of your mailbox in full (IMAP): headers, text and its attachments, \
             which it can save into a workspace folder.",
            json!({
                "type": "object",
                "properties": {
                    "emailId": email_id_schema(),
                    "folder": folder_schema(),
                    "saveAttachmentsTo": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "A workspace folder to save the attachments in (created if missing; a file there is never replaced)."}
                },
                "required": ["emailId"],
                "additionalProperties": false
            }),
        )
        .with_tags(&[
            "email", "read an email", "open mail", "attachment", "save attachment", "imap",
        ]),
        ToolDefinition::new(
            "delete_email",
            "Delete an email from your mailbox (IMAP): moved to the Trash folder, or deleted for \
             good with permanent.",
            json!({
                "type": "object",
                "properties": {
                    "emailId": email_id_schema(),
                    "folder": folder_schema(),
                    "permanent": {"type": "boolean", "default": false, "description": "Delete it for good (marked deleted and expunged) instead of moving it to the Trash folder."}
                },
                "required": ["emailId"],
                "additionalProperties": false
            }),
        )
        .with_tags(&["email", "delete an email", "remove mail", "trash", "imap"]),
        ToolDefinition::new(
            "search_emails",
            "Search your mailbox (IMAP) for emails by text, sender, recipient, subject, date or \
             unread; newest first.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Text to find anywhere in the email (headers and body)."},
                    "from": {"type": "string", "maxLength": 320, "description": "Only emails whose sender contains this."},
                    "to": {"type": "string", "maxLength": 320, "description": "Only emails whose recipients contain this."},
                    "subject": {"type": "string", "maxLength": 500, "description": "Only emails whose subject contains this."},
                    "since": {"type": "string", "format": "date", "description": "Only emails from this day on (YYYY-MM-DD)."},
                    "before": {"type": "string", "format": "date", "description": "Only emails before this day (YYYY-MM-DD)."},
                    "unreadOnly": {"type": "boolean", "default": false, "description": "Only emails not read yet."},
                    "folder": folder_schema(),
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50, "description": "How many, newest first (at most 100)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        )
        .with_tags(&[
            "email", "search email", "find mail", "messages from", "inbox", "mail from",
            "look for an email", "imap",
        ]),
        ToolDefinition::new(
            "reply_email",
            "Reply to an email of your mailbox (SMTP): to its sender (or everyone with \
             replyAll), with 'Re:' and the thread's references, the original quoted.",
            json!({
                "type": "object",
                "properties": {
                    "emailId": email_id_schema(),
                    "body": {"type": "string", "minLength": 1, "maxLength": MAX_BODY_CHARS, "description": "Your reply."},
                    "replyAll": {"type": "boolean", "default": false, "description": "Reply to the sender and every other recipient."},
                    "folder": folder_schema(),
                    "attachments": attachments_schema()
                },
                "required": ["emailId", "body"],
                "additionalProperties": false
            }),
        )
        .with_tags(&["email", "reply", "answer an email", "respond", "re:", "mail", "smtp"]),
    ]
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    definitions()
        .into_iter()
        .map(|definition| {
            let run: crate::web::WebFn = match definition.name.as_str() {
                "send_email" => |c| Box::pin(send_email(c)),
                "list_emails" => |c| Box::pin(list_emails(c)),
                "read_email" => |c| Box::pin(read_email(c)),
                "delete_email" => |c| Box::pin(delete_email(c)),
                "search_emails" => |c| Box::pin(search_emails(c)),
                _ => |c| Box::pin(reply_email(c)),
            };
            web_tool_in(env, CATEGORY, definition, run)
        })
        .collect()
}

/// Refuses a header value that would break out of its header (CR, LF or another control
/// character).
fn one_line(what: &str, value: &str) -> Result<(), ToolError> {
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(ToolError::Args(format!(
            "'{what}' holds a line break or another control character, which would let it write \
             other headers: give it on one line"
        )));
    }
    Ok(())
}

/// The addresses of argument `key` (one string or a list), parsed.
fn mailboxes(args: &Value, key: &str) -> Result<Vec<Mailbox>, ToolError> {
    let raw: Vec<&str> = match args.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(_) => {
            return Err(ToolError::Args(format!(
                "'{key}' must be an address or a list of addresses"
            )));
        }
    };
    raw.into_iter()
        .map(|address| {
            one_line(key, address)?;
            address.trim().parse::<Mailbox>().map_err(|e| {
                ToolError::Args(format!(
                    "'{key}' has '{address}', which is not an email address ({e}): write \
                     'anna@example.com' or 'Anna <anna@example.com>'"
                ))
            })
        })
        .collect()
}

/// The sender: the account's `from` (and `from_name`), or what to configure.
fn sender(account: &account::Account) -> Result<Mailbox, ToolError> {
    let address = account.from.as_deref().ok_or_else(|| {
        ToolError::NotConfigured(format!(
            "the mail account has no sender address: set 'from' in the Config Center service \
             '{SERVICE}' (or make 'username' the address)"
        ))
    })?;
    let email = address.parse().map_err(|e| {
        ToolError::NotConfigured(format!(
            "the Config Center service '{SERVICE}' has from '{address}', which is not an email \
             address ({e})"
        ))
    })?;
    Ok(Mailbox::new(account.from_name.clone(), email))
}

fn folder_arg(args: &Value) -> Result<String, ToolError> {
    let folder = args
        .get("folder")
        .and_then(Value::as_str)
        .unwrap_or("INBOX");
    if folder.trim().is_empty() || folder.chars().any(char::is_control) {
        return Err(ToolError::Args(
            "'folder' must be a folder name on one line, e.g. INBOX".to_owned(),
        ));
    }
    Ok(folder.to_owned())
}

fn uid_arg(args: &Value) -> Result<u32, ToolError> {
    let raw = str_arg(args, "emailId")?;
    raw.parse::<u32>().ok().filter(|u| *u > 0).ok_or_else(|| {
        ToolError::Args(format!(
            "'emailId' is '{raw}': give an id that list_emails or search_emails returned"
        ))
    })
}

fn not_found(uid: u32, folder: &str) -> ToolError {
    ToolError::Args(format!(
        "there is no email with id {uid} in '{folder}': list_emails or search_emails give the \
         ids (an id belongs to its folder)"
    ))
}

/// The type an attachment is sent as, from its name's extension.
fn content_type_of(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" => "text/plain; charset=utf-8",
        "md" => "text/markdown; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        "html" | "htm" => "text/html; charset=utf-8",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => "application/octet-stream",
    }
}

/// The workspace files of argument `attachments`, read under the workspace's rules.
async fn attachments(call: &Call<'_>) -> Result<Vec<smtp::OutgoingFile>, ToolError> {
    let paths: Vec<String> = match call.args.get("attachments") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|p| {
                p.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ToolError::Args("'attachments' must be workspace paths".into()))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ToolError::Args(
                "'attachments' must be a list of workspace paths".to_owned(),
            ));
        }
    };
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    if paths.len() > MAX_ATTACHMENTS {
        return Err(ToolError::Args(format!(
            "at most {MAX_ATTACHMENTS} attachments a mail: send the rest in another one"
        )));
    }
    let workspaces = call
        .env
        .workspaces
        .clone()
        .ok_or(WorkspaceError::NotConfigured)?;
    let workspace = workspaces.for_call(call.ctx)?;
    tokio::task::spawn_blocking(move || {
        let mut files = Vec::new();
        let mut left = MAX_ATTACHMENT_BYTES;
        for raw in paths {
            let path = workspace.path(&raw)?;
            let bytes = workspace.read(&path, left).map_err(|e| match e {
                WorkspaceError::TooLarge { .. } => ToolError::Args(format!(
                    "the attachments are larger than {} MB together ('{raw}' goes over): \
                     send fewer or smaller files",
                    MAX_ATTACHMENT_BYTES / (1024 * 1024)
                )),
                other => ToolError::Workspace(other),
            })?;
            left = left.saturating_sub(bytes.len() as u64);
            let name = path.file_name().unwrap_or("attachment").to_owned();
            files.push(smtp::OutgoingFile {
                content_type: content_type_of(&name).to_owned(),
                name,
                bytes,
            });
        }
        Ok(files)
    })
    .await
    .map_err(|e| ToolError::Args(format!("the attachments could not be read: {e}")))?
}

fn body_arg(args: &Value) -> Result<String, ToolError> {
    let body = str_arg(args, "body")?;
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(ToolError::Args(format!(
            "the body is longer than {MAX_BODY_CHARS} characters: attach it as a file instead"
        )));
    }
    Ok(body.to_owned())
}

async fn send_email(call: Call<'_>) -> Result<Value, ToolError> {
    let to = mailboxes(&call.args, "to")?;
    let cc = mailboxes(&call.args, "cc")?;
    let bcc = mailboxes(&call.args, "bcc")?;
    if to.is_empty() {
        return Err(ToolError::Args(
            "'to' names nobody: give at least one address".to_owned(),
        ));
    }
    if to.len() + cc.len() + bcc.len() > MAX_RECIPIENTS {
        return Err(ToolError::Args(format!(
            "at most {MAX_RECIPIENTS} recipients a mail (to, cc and bcc together)"
        )));
    }
    let subject = str_arg(&call.args, "subject")?.to_owned();
    one_line("subject", &subject)?;
    let body = body_arg(&call.args)?;
    let html = call.args.get("html").and_then(Value::as_bool) == Some(true);
    let files = attachments(&call).await?;
    let account = account::account(&call).await?;
    let from = sender(&account)?;
    let addrs = account::addresses(&call, account.smtp()?).await?;
    let shown: Vec<String> = to.iter().map(|m| m.email.to_string()).collect();
    let names: Vec<String> = files.iter().map(|f| f.name.clone()).collect();
    let mail = smtp::Outgoing {
        to,
        cc,
        bcc,
        subject: subject.clone(),
        body,
        html,
        in_reply_to: None,
        references: None,
        attachments: files,
    };
    let sent = smtp::send(&account, addrs, from, mail).await?;
    let mut answer = json!({
        "sent": true,
        "messageId": sent.message_id,
        "to": shown,
        "recipients": sent.recipients,
        "subject": subject,
        "attachments": names,
    });
    save_sent(&call, &account, &sent.bytes, &mut answer).await;
    Ok(answer)
}

/// One line of a listing: what the header says.
fn summary(fetched: &imap::Fetched) -> Value {
    let parsed = MessageParser::default().parse_headers(&fetched.bytes);
    let header = parsed.as_ref();
    let from = header.and_then(|m| m.from()).map(addresses_json);
    let to = header.and_then(|m| m.to()).map(addresses_json);
    json!({
        "id": fetched.uid.to_string(),
        "from": from.and_then(|f| f.as_array().and_then(|a| a.first().cloned())),
        "to": to.unwrap_or_else(|| json!([])),
        "subject": header.and_then(|m| m.subject()).unwrap_or_default(),
        "date": header.and_then(|m| m.date()).map(|d| d.to_rfc3339()),
        "seen": fetched.seen,
        "size": fetched.size,
    })
}

fn addresses_json(address: &mail_parser::Address<'_>) -> Value {
    Value::Array(
        address
            .iter()
            .map(|a| json!({"name": a.name(), "address": a.address()}))
            .collect(),
    )
}

async fn listing(call: &Call<'_>, criteria: String, limit: usize) -> Result<Value, ToolError> {
    let folder = folder_arg(&call.args)?;
    let account = account::account(call).await?;
    let server = account.imap()?.clone();
    let addrs = account::addresses(call, &server).await?;
    let session = imap::open(&account, addrs).await?;
    let shown = folder.clone();
    let (total, emails) = imap::run(&server, session, async |s| {
        imap::select(&server, s, &folder, false).await?;
        let uids = imap::search(&server, s, &criteria).await?;
        let total = uids.len();
        let newest: Vec<u32> = uids.into_iter().take(limit).collect();
        let mut fetched = imap::fetch(&server, s, &newest, false).await?;
        fetched.sort_unstable_by_key(|f| std::cmp::Reverse(f.uid));
        Ok((total, fetched.iter().map(summary).collect::<Vec<_>>()))
    })
    .await?;
    Ok(json!({"folder": shown, "total": total, "count": emails.len(), "emails": emails}))
}

fn limit_arg(args: &Value, default: u64, max: u64) -> usize {
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(default)
        .clamp(1, max);
    usize::try_from(limit).unwrap_or(1)
}

async fn list_emails(call: Call<'_>) -> Result<Value, ToolError> {
    let unread = call.args.get("unreadOnly").and_then(Value::as_bool) == Some(true);
    let criteria = if unread { "UNSEEN" } else { "ALL" }.to_owned();
    let limit = limit_arg(&call.args, 20, 50);
    listing(&call, criteria, limit).await
}

/// `YYYY-MM-DD` as an IMAP date (`1-Jan-2026`).
fn imap_date(args: &Value, key: &str) -> Result<Option<String>, ToolError> {
    let Some(raw) = args.get(key).and_then(Value::as_str) else {
        return Ok(None);
    };
    let date = chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .map_err(|_| ToolError::Args(format!("'{key}' is '{raw}': write a day as YYYY-MM-DD")))?;
    Ok(Some(date.format("%-d-%b-%Y").to_string()))
}

async fn search_emails(call: Call<'_>) -> Result<Value, ToolError> {
    let criteria = search_criteria(&call.args)?;
    let query = str_arg(&call.args, "query")?;
    let limit = limit_arg(&call.args, 50, 100);
    let mut answer = listing(&call, criteria, limit).await?;
    toolsmith_core::object::set(&mut answer, "query", json!(query));
    Ok(answer)
}

/// `search_emails`' arguments as an IMAP `UID SEARCH` line: every text quoted (CR, LF and NUL
/// refused), dates as IMAP dates.
fn search_criteria(args: &Value) -> Result<String, ToolError> {
    let mut criteria = vec!["CHARSET UTF-8".to_owned()];
    let query = str_arg(args, "query")?;
    if query.trim().is_empty() {
        return Err(ToolError::Args(
            "'query' is empty: give the text to look for".to_owned(),
        ));
    }
    criteria.push(format!("TEXT {}", imap::quoted("query", query.trim())?));
    for (key, imap_key) in [("from", "FROM"), ("to", "TO"), ("subject", "SUBJECT")] {
        if let Some(value) = args.get(key).and_then(Value::as_str)
            && !value.trim().is_empty()
        {
            criteria.push(format!("{imap_key} {}", imap::quoted(key, value.trim())?));
        }
    }
    if let Some(day) = imap_date(args, "since")? {
        criteria.push(format!("SINCE {day}"));
    }
    if let Some(day) = imap_date(args, "before")? {
        criteria.push(format!("BEFORE {day}"));
    }
    if args.get("unreadOnly").and_then(Value::as_bool) == Some(true) {
        criteria.push("UNSEEN".to_owned());
    }
    Ok(criteria.join(" "))
}

/// The message `uid` of `folder`, fetched whole (refused past [`MAX_MESSAGE_BYTES`]).
async fn fetch_whole(
    call: &Call<'_>,
    account: &account::Account,
    folder: &str,
    uid: u32,
) -> Result<Vec<u8>, ToolError> {
    let server = account.imap()?.clone();
    let addrs = account::addresses(call, &server).await?;
    let session = imap::open(account, addrs).await?;
    imap::run(&server, session, async |s| {
        imap::select(&server, s, folder, false).await?;
        let size = imap::size_of(&server, s, uid)
            .await?
            .ok_or_else(|| not_found(uid, folder))?;
        if size > MAX_MESSAGE_BYTES {
            return Err(ToolError::Args(format!(
                "email {uid} is {size} bytes, more than the {MAX_MESSAGE_BYTES} read_email reads"
            )));
        }
        let fetched = imap::fetch(&server, s, &[uid], true).await?;
        fetched
            .into_iter()
            .find(|f| f.uid == uid)
            .map(|f| f.bytes)
            .ok_or_else(|| not_found(uid, folder))
    })
    .await
}

/// A received attachment's name as a file name of one part: its last path part, without
/// control characters; `attachment-<n>` when nothing is left.
fn safe_file_name(name: Option<&str>, n: usize) -> String {
    let last = name
        .unwrap_or_default()
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default();
    let cleaned: String = last.chars().filter(|c| !c.is_control()).take(120).collect();
    // No hidden name: every leading dot goes, with the spaces between them (". .bashrc").
    let cleaned = cleaned
        .trim_start_matches(|c: char| c == '.' || c.is_whitespace())
        .trim_end()
        .to_owned();
    if cleaned.is_empty() {
        format!("attachment-{n}")
    } else {
        cleaned
    }
}

/// `name` with `-<i>` before its extension.
fn numbered(name: &str, i: usize) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}-{i}.{ext}"),
        _ => format!("{name}-{i}"),
    }
}

/// Saves `files` (name, bytes) into the workspace folder `folder`, each under a name not
/// taken yet; their workspace paths.
async fn save_attachments(
    call: &Call<'_>,
    folder: &str,
    files: Vec<(String, Vec<u8>)>,
) -> Result<Vec<String>, ToolError> {
    let workspaces = call
        .env
        .workspaces
        .clone()
        .ok_or(WorkspaceError::NotConfigured)?;
    let workspace = workspaces.for_call(call.ctx)?;
    let folder = workspace.path(folder)?;
    tokio::task::spawn_blocking(move || {
        let mut saved = Vec::new();
        for (name, bytes) in files {
            let mut i = 0;
            let path = loop {
                let candidate = if i == 0 {
                    name.clone()
                } else {
                    numbered(&name, i)
                };
                let path = workspace.path(&folder.join(&candidate).to_string())?;
                if workspace.stat(&path).is_err() {
                    break path;
                }
                i += 1;
                if i > 100 {
                    return Err(ToolError::Args(format!(
                        "'{name}' and 100 numbered names are taken in '{folder}': save into \
                         another folder"
                    )));
                }
            };
            workspace.write(
                &path,
                &bytes,
                WriteOptions {
                    overwrite: false,
                    create_parents: true,
                },
            )?;
            saved.push(path.to_string());
        }
        Ok(saved)
    })
    .await
    .map_err(|e| ToolError::Args(format!("the attachments could not be saved: {e}")))?
}

/// The first `max` characters of `text`, and whether it was cut.
fn capped(text: &str, max: usize) -> (String, bool) {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(max).collect();
    (head, chars.next().is_some())
}

async fn read_email(call: Call<'_>) -> Result<Value, ToolError> {
    let uid = uid_arg(&call.args)?;
    let folder = folder_arg(&call.args)?;
    let save_to = call
        .args
        .get("saveAttachmentsTo")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(to) = &save_to {
        // The folder is checked before the server is asked.
        let workspaces = call
            .env
            .workspaces
            .clone()
            .ok_or(WorkspaceError::NotConfigured)?;
        workspaces.for_call(call.ctx)?.path(to)?;
    }
    let account = account::account(&call).await?;
    let raw = fetch_whole(&call, &account, &folder, uid).await?;
    let message = MessageParser::default().parse(&raw).ok_or_else(|| {
        ToolError::Provider(format!("email {uid} could not be read as a mail message"))
    })?;
    let text = message.body_text(0).unwrap_or_default();
    let (text, truncated) = capped(&text, MAX_READ_CHARS);
    let mut listed = Vec::new();
    let mut files = Vec::new();
    for (n, part) in message.attachments().enumerate() {
        let name = safe_file_name(part.attachment_name(), n + 1);
        let content_type = part.content_type().map(|t| match t.subtype() {
            Some(sub) => format!("{}/{sub}", t.ctype()),
            None => t.ctype().to_owned(),
        });
        listed.push(json!({
            "name": name,
            "originalName": part.attachment_name(),
            "contentType": content_type,
            "size": part.contents().len(),
        }));
        files.push((name, part.contents().to_vec()));
    }
    if let Some(folder) = &save_to {
        let saved = save_attachments(&call, folder, files).await?;
        for (entry, path) in listed.iter_mut().zip(saved) {
            toolsmith_core::object::set(entry, "savedTo", json!(path));
        }
    }
    Ok(json!({
        "id": uid.to_string(),
        "folder": folder,
        "messageId": message.message_id().map(|id| format!("<{id}>")),
        "from": message.from().map(addresses_json),
        "to": message.to().map(addresses_json).unwrap_or_else(|| json!([])),
        "cc": message.cc().map(addresses_json).unwrap_or_else(|| json!([])),
        "replyTo": message.reply_to().map(addresses_json),
        "subject": message.subject().unwrap_or_default(),
        "date": message.date().map(|d| d.to_rfc3339()),
        "text": text,
        "truncated": truncated,
        "hasHtml": message.html_body_count() > 0,
        "attachments": listed,
    }))
}

async fn delete_email(call: Call<'_>) -> Result<Value, ToolError> {
    let uid = uid_arg(&call.args)?;
    let folder = folder_arg(&call.args)?;
    let permanent = call.args.get("permanent").and_then(Value::as_bool) == Some(true);
    let account = account::account(&call).await?;
    let server = account.imap()?.clone();
    let addrs = account::addresses(&call, &server).await?;
    let session = imap::open(&account, addrs).await?;
    let moved_to = imap::run(&server, session, async |s| {
        imap::select(&server, s, &folder, true).await?;
        if imap::size_of(&server, s, uid).await?.is_none() {
            return Err(not_found(uid, &folder));
        }
        if !permanent {
            match imap::special_folder(&server, s, NameAttribute::Trash).await? {
                Some(trash) if trash != folder => {
                    imap::move_to(&server, s, uid, &trash).await?;
                    return Ok(Some(trash));
                }
                // Deleting from the Trash itself deletes for good.
                Some(_) => {}
                None => {
                    return Err(ToolError::Args(format!(
                        "this mailbox has no Trash folder (none is marked \\Trash), so email \
                         {uid} was left in '{folder}': call delete_email again with permanent: \
                         true to delete it for good"
                    )));
                }
            }
        }
        imap::delete(&server, s, uid).await?;
        Ok(None)
    })
    .await?;
    Ok(json!({
        "deleted": true,
        "id": uid.to_string(),
        "folder": folder,
        "movedTo": moved_to,
        "permanent": moved_to.is_none(),
    }))
}

/// Saves a sent mail (`bytes`, as sent) into the mailbox's Sent folder — the folder the IMAP
/// server marks `\Sent` (SPECIAL-USE) — marked read. What happened goes into `answer`:
/// `sentFolder` (the folder, or null) and, when no copy was saved, `sentCopy` saying why. A
/// failure here fails nothing: the mail is sent.
async fn save_sent(call: &Call<'_>, account: &account::Account, bytes: &[u8], answer: &mut Value) {
    let saved = if !account.save_sent {
        Err(format!(
            "no copy saved: save_sent is false in the Config Center service '{SERVICE}'"
        ))
    } else if let Some(server) = account.imap.clone() {
        let copy = async {
            let addrs = account::addresses(call, &server).await?;
            let session = imap::open(account, addrs).await?;
            imap::run(&server, session, async |s| {
                let Some(folder) = imap::special_folder(&server, s, NameAttribute::Sent).await?
                else {
                    return Ok(None);
                };
                imap::append_seen(&server, s, &folder, bytes).await?;
                Ok(Some(folder))
            })
            .await
        };
        match copy.await {
            Ok(Some(folder)) => Ok(folder),
            Ok(None) => Err("no copy saved: the mailbox has no folder marked \\Sent".to_owned()),
            Err(e) => Err(format!(
                "the mail was sent, but saving its copy failed: {e}"
            )),
        }
    } else {
        Err("no copy saved: the mail account has no IMAP server (imap_host)".to_owned())
    };
    match saved {
        Ok(folder) => toolsmith_core::object::set(answer, "sentFolder", json!(folder)),
        Err(why) => {
            toolsmith_core::object::set(answer, "sentFolder", Value::Null);
            toolsmith_core::object::set(answer, "sentCopy", json!(why));
        }
    }
}

/// The tools' checks of what a caller gives, for the fuzz target `email_args` (`fuzz/`): no
/// network, no account. Hidden: not an API.
#[doc(hidden)]
pub mod fuzzing {
    use serde_json::Value;

    use super::{body_arg, mailboxes, one_line, smtp, str_arg};

    /// The mail `send_email` would send for `args` from the sender `from` (no attachments), as
    /// its bytes, or why it was refused.
    pub fn mail(args: &Value, from: &str) -> Result<Vec<u8>, String> {
        let from = from.parse().map_err(|e| format!("{e}"))?;
        let to = mailboxes(args, "to").map_err(|e| e.to_string())?;
        if to.is_empty() {
            return Err("no recipient".to_owned());
        }
        let subject = str_arg(args, "subject").map_err(|e| e.to_string())?;
        one_line("subject", subject).map_err(|e| e.to_string())?;
        let mail = smtp::Outgoing {
            to,
            cc: mailboxes(args, "cc").map_err(|e| e.to_string())?,
            bcc: mailboxes(args, "bcc").map_err(|e| e.to_string())?,
            subject: subject.to_owned(),
            body: body_arg(args).map_err(|e| e.to_string())?,
            html: args.get("html").and_then(Value::as_bool) == Some(true),
            in_reply_to: None,
            references: None,
            attachments: Vec::new(),
        };
        let (_, _, message) = smtp::build(from, mail).map_err(|e| e.to_string())?;
        Ok(message.formatted())
    }

    /// The `UID SEARCH` line `search_emails` would send for `args`, or why it was refused.
    pub fn search(args: &Value) -> Result<String, String> {
        super::search_criteria(args).map_err(|e| e.to_string())
    }

    /// The name a received attachment called `name` is saved under.
    pub fn file_name(name: &str) -> String {
        super::safe_file_name(Some(name), 1)
    }

    /// The folder `args` names, or why it was refused.
    pub fn folder(args: &Value) -> Result<String, String> {
        super::folder_arg(args).map_err(|e| e.to_string())
    }
}

/// `subject` with one `Re: ` in front.
fn re(subject: &str) -> String {
    let trimmed = subject.trim();
    let lower = trimmed.to_ascii_lowercase();
    if lower.starts_with("re:") {
        trimmed.to_owned()
    } else {
        format!("Re: {trimmed}")
    }
}

async fn reply_email(call: Call<'_>) -> Result<Value, ToolError> {
    let uid = uid_arg(&call.args)?;
    let folder = folder_arg(&call.args)?;
    let body = body_arg(&call.args)?;
    let reply_all = call.args.get("replyAll").and_then(Value::as_bool) == Some(true);
    let files = attachments(&call).await?;
    let account = account::account(&call).await?;
    let from = sender(&account)?;
    account.smtp()?;
    let raw = fetch_whole(&call, &account, &folder, uid).await?;
    let original = MessageParser::default().parse(&raw).ok_or_else(|| {
        ToolError::Provider(format!("email {uid} could not be read as a mail message"))
    })?;
    let own = from.email.to_string().to_ascii_lowercase();
    let parse = |a: &mail_parser::Addr<'_>| -> Option<Mailbox> {
        let address = a.address()?;
        if address.chars().any(char::is_control) {
            return None;
        }
        Some(Mailbox::new(
            a.name()
                .filter(|n| !n.chars().any(char::is_control))
                .map(str::to_owned),
            address.parse().ok()?,
        ))
    };
    let mut to: Vec<Mailbox> = original
        .reply_to()
        .or_else(|| original.from())
        .map(|a| a.iter().filter_map(parse).collect())
        .unwrap_or_default();
    let mut cc = Vec::new();
    if reply_all {
        let mut seen: Vec<String> = to
            .iter()
            .map(|m| m.email.to_string().to_ascii_lowercase())
            .collect();
        seen.push(own.clone());
        for address in original.to().into_iter().chain(original.cc()) {
            for mailbox in address.iter().filter_map(parse) {
                let key = mailbox.email.to_string().to_ascii_lowercase();
                if !seen.contains(&key) {
                    seen.push(key);
                    cc.push(mailbox);
                }
            }
        }
    }
    to.truncate(MAX_RECIPIENTS);
    cc.truncate(MAX_RECIPIENTS.saturating_sub(to.len()));
    if to.is_empty() {
        return Err(ToolError::Args(format!(
            "email {uid} names no sender to reply to: use send_email with an address"
        )));
    }
    let subject: String = re(original.subject().unwrap_or_default())
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_SUBJECT_CHARS)
        .collect();
    let message_id = original.message_id().map(|id| format!("<{id}>"));
    let references = {
        let mut refs: Vec<String> = original
            .references()
            .as_text_list()
            .map(|list| list.iter().map(|r| format!("<{r}>")).collect())
            .or_else(|| {
                original
                    .references()
                    .as_text()
                    .map(|r| vec![format!("<{r}>")])
            })
            .unwrap_or_default();
        refs.extend(message_id.clone());
        Some(refs.join(" ")).filter(|r| !r.is_empty())
    };
    let quoted = {
        let said = original.body_text(0).unwrap_or_default();
        let (said, _) = capped(&said, 20_000);
        let who = original
            .from()
            .and_then(|a| a.first())
            .and_then(|a| a.name().or(a.address()))
            .unwrap_or("the sender");
        let when = original
            .date()
            .map(|d| format!("On {}, ", d.to_rfc3339()))
            .unwrap_or_default();
        let lines: Vec<String> = said.lines().map(|l| format!("> {l}")).collect();
        format!("{body}\n\n{when}{who} wrote:\n{}\n", lines.join("\n"))
    };
    let shown: Vec<String> = to.iter().map(|m| m.email.to_string()).collect();
    let shown_cc: Vec<String> = cc.iter().map(|m| m.email.to_string()).collect();
    let addrs = account::addresses(&call, account.smtp()?).await?;
    let mail = smtp::Outgoing {
        to,
        cc,
        bcc: Vec::new(),
        subject: subject.clone(),
        body: quoted,
        html: false,
        in_reply_to: message_id.clone(),
        references,
        attachments: files,
    };
    let sent = smtp::send(&account, addrs, from, mail).await?;
    let mut answer = json!({
        "sent": true,
        "messageId": sent.message_id,
        "inReplyTo": message_id,
        "to": shown,
        "cc": shown_cc,
        "subject": subject,
    });
    save_sent(&call, &account, &sent.bytes, &mut answer).await;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_received_name_never_leaves_its_folder() {
        assert_eq!(safe_file_name(Some("../../etc/passwd"), 1), "passwd");
        assert_eq!(safe_file_name(Some("..\\..\\boot.ini"), 1), "boot.ini");
        assert_eq!(safe_file_name(Some(".."), 2), "attachment-2");
        assert_eq!(safe_file_name(Some(".bashrc"), 3), "bashrc");
        // Found by the fuzz target email_args: a dot after a dot and a space stayed first.
        assert_eq!(safe_file_name(Some(". .0"), 1), "0");
        assert_eq!(safe_file_name(Some(" . . .bashrc"), 1), "bashrc");
        assert_eq!(safe_file_name(Some(". . ."), 5), "attachment-5");
        assert_eq!(safe_file_name(Some("a\r\nb.txt"), 1), "ab.txt");
        assert_eq!(safe_file_name(None, 4), "attachment-4");
        assert_eq!(numbered("report.pdf", 2), "report-2.pdf");
    }

    #[test]
    fn headers_are_one_line_and_addresses_real() {
        assert!(one_line("subject", "Hi\r\nBcc: x@evil.example").is_err());
        let e = mailboxes(
            &json!({"to": "anna@example.com\r\nBcc: x@evil.example"}),
            "to",
        )
        .unwrap_err();
        assert!(e.to_string().contains("line break"), "{e}");
        let e = mailboxes(&json!({"to": ["not an address"]}), "to").unwrap_err();
        assert!(e.to_string().contains("not an email address"), "{e}");
        let ok = mailboxes(
            &json!({"to": ["Anna <anna@example.com>", "bob@example.com"]}),
            "to",
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(re("Re: hello"), "Re: hello");
        assert_eq!(re("hello"), "Re: hello");
    }

    #[test]
    fn searches_quote_what_they_carry() {
        assert_eq!(
            imap::quoted("q", r#"a "b" \c"#).unwrap(),
            r#""a \"b\" \\c""#
        );
        assert!(imap::quoted("q", "a\r\nb").is_err());
        assert_eq!(
            imap_date(&json!({"since": "2026-01-05"}), "since").unwrap(),
            Some("5-Jan-2026".to_owned())
        );
        assert!(imap_date(&json!({"since": "5/1/2026"}), "since").is_err());
    }
}
