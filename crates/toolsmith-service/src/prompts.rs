//! Prompts made at runtime (issue 40): reusable instructions with arguments, stored beside tools
//! with the same life — created, changed (every definition kept as a version), rolled back,
//! switched on and off, deleted — owned by one user and optionally seen by one agent of theirs
//! alone, written by a person or a model (`createdBy`), every change audited (`prompt.*`).
//!
//! A prompt runs nothing. Getting one renders its messages' templates (Jinja, minijinja, the
//! engine of the HTTP tools' response templates: no loader, a fuel limit, capped output) from
//! the caller's own string arguments and hands the messages to the caller's client, which
//! decides what to send to its model. So no prompt waits for approval. What a model may do is
//! still narrower than what a person may: a model (an MCP control-plane call, a token bound to
//! an agent) may not change, switch or delete a prompt a person wrote — a person's prompt is
//! what their slash commands send, and a model rewriting it would put its words in the
//! person's mouth — and an agent may scope a prompt only to itself.
//!
//! Every MCP session learns of a change to its user's prompts through the [`PromptCatalog`]
//! (`notifications/prompts/list_changed`); another instance's change arrives through the
//! store's change feed ([`PromptCatalog::note_changed`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use chrono::Utc;
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use toolsmith_core::prompt::{
    PromptContent, PromptDefinition, PromptMessageSpec, PromptRecord, PromptResource, PromptUpdate,
    PromptVersionRecord,
};
use toolsmith_core::{CreatedBy, ToolContext};

use crate::governance::audit::AuditTarget;
use crate::{Actor, ServiceError, ToolService};

/// The most prompts one user may have.
pub const MAX_PROMPTS_PER_OWNER: usize = 1_000;
/// The most values `completion/complete` answers with (MCP's limit).
pub const MAX_COMPLETIONS: usize = 100;

const MAX_TITLE_CHARS: usize = 200;
const MAX_DESCRIPTION_CHARS: usize = 4_000;
const MAX_ARGUMENTS: usize = 32;
const MAX_ARGUMENT_VALUES: usize = 1_000;
const MAX_VALUE_CHARS: usize = 500;
const MAX_MESSAGES: usize = 100;
/// Largest template (one text, uri or resource text), in bytes.
const MAX_TEMPLATE_BYTES: usize = 64 * 1024;
/// Largest definition as JSON (images and blobs included), in bytes.
const MAX_DEFINITION_BYTES: usize = 2 * 1024 * 1024;
/// Largest argument value given to a render, in bytes.
const MAX_ARGUMENT_BYTES: usize = 64 * 1024;
/// Instructions one template's render may execute.
const TEMPLATE_FUEL: u64 = 200_000;
/// Largest rendered template, in bytes.
const MAX_RENDERED_BYTES: usize = 256 * 1024;
/// Names a template may use besides its arguments (minijinja's global functions).
const TEMPLATE_GLOBALS: &[&str] = &["range", "dict", "namespace", "loop", "debug"];

/// A new prompt, or a changed one: its handle, its scope and its definition.
#[derive(Debug, Clone)]
pub struct PromptInput {
    pub name: String,
    /// The one agent of the user that sees it (`None`: the user and all their agents).
    pub agent: Option<String>,
    /// Switched on (default) or off.
    pub enabled: bool,
    pub definition: PromptDefinition,
}

/// A prompt rendered from its arguments: what `prompts/get` and the render route answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPrompt {
    pub description: String,
    pub messages: Vec<PromptMessageSpec>,
}

/// What `completion/complete` answers for one argument.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// At most [`MAX_COMPLETIONS`], in the order declared.
    pub values: Vec<String>,
    /// How many values match in all.
    pub total: usize,
    pub has_more: bool,
}

/// The low half of a [`PromptCatalog::version`]: the owner's own changes.
const OWN_CHANGES: u64 = 0xFFFF_FFFF;

/// The prompt lists' versions, per owner: each change of an owner's prompts moves theirs, and
/// wakes every subscriber, so each MCP session can tell whether its own user's list moved.
#[derive(Debug)]
pub struct PromptCatalog {
    /// Per-owner counts, plus an epoch every owner shares (moved on a resync).
    versions: Mutex<(u64, HashMap<String, u64>)>,
    wake: watch::Sender<u64>,
    /// The store's per-owner fingerprints as last polled (`None` before the first poll); an
    /// owner this process wrote for since is `None`: its next fingerprint is recorded, not told.
    prints: Mutex<Option<HashMap<String, Option<String>>>>,
}

impl Default for PromptCatalog {
    fn default() -> Self {
        PromptCatalog {
            versions: Mutex::new((0, HashMap::new())),
            wake: watch::Sender::new(0),
            prints: Mutex::new(None),
        }
    }
}

impl PromptCatalog {
    /// The version of `owner`'s prompt list: the resyncs every owner shares in the high 32
    /// bits, the owner's own changes in the low 32 ([`PromptCatalog::own_changes_of`]), so a
    /// version moves when either does and a watcher can tell a change of the owner's own from a
    /// resync.
    pub fn version(&self, owner: &str) -> u64 {
        let versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        let own = versions.1.get(owner).copied().unwrap_or(0);
        (versions.0 << 32) | (own & OWN_CHANGES)
    }

    /// The owner's own changes counted in `version` (a change here, another instance's notice,
    /// or a poll of the store's fingerprints; never a resync), modulo 2^32.
    #[must_use]
    pub fn own_changes_of(version: u64) -> u64 {
        version & OWN_CHANGES
    }

    /// `owner`'s prompts changed (here, or on another instance).
    pub fn note_changed(&self, owner: &str) {
        {
            let mut versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
            let count = versions.1.entry(owner.to_owned()).or_insert(0);
            *count = count.wrapping_add(1);
        }
        self.wake.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Anyone's prompts may have changed (the change feed reconnected).
    pub fn note_all_changed(&self) {
        {
            let mut versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
            versions.0 = versions.0.wrapping_add(1);
        }
        self.wake.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// This process wrote `owner`'s prompts: its sessions are told now, and the poll that
    /// sees the write in the store records it without telling them again.
    fn note_written(&self, owner: &str) {
        if let Some(prints) = self
            .prints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            prints.insert(owner.to_owned(), None);
        }
        self.note_changed(owner);
    }

    /// Compares the store's fingerprints with those last polled and tells the owners whose
    /// prompts another process changed; how many. The first poll only records.
    pub fn note_fingerprints(&self, now: Vec<(String, String)>) -> usize {
        let now: HashMap<String, String> = now.into_iter().collect();
        let moved: Vec<String> = {
            let mut guard = self.prints.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(prints) = guard.as_mut() else {
                *guard = Some(now.into_iter().map(|(k, v)| (k, Some(v))).collect());
                return 0;
            };
            let owners: BTreeSet<String> = prints.keys().chain(now.keys()).cloned().collect();
            let mut moved = Vec::new();
            for owner in owners {
                let print = now.get(&owner).cloned();
                match prints.get(&owner) {
                    Some(None) => {}
                    Some(Some(seen)) if Some(seen) == print.as_ref() => {}
                    None if print.is_none() => {}
                    _ => moved.push(owner.clone()),
                }
                match print {
                    Some(print) => prints.insert(owner, Some(print)),
                    None => prints.remove(&owner),
                };
            }
            moved
        };
        for owner in &moved {
            self.note_changed(owner);
        }
        moved.len()
    }

    /// Wakes on every change of anyone's prompts.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.wake.subscribe()
    }
}

fn not_found(name: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no prompt '{name}' of yours (by id or name); list yours with GET /api/v1/prompts, \
         `toolsmith prompt list` or MCP prompts/list"
    ))
}

fn invalid(message: String) -> ServiceError {
    ServiceError::Validation(message)
}

/// The template environment: no loader, bounded fuel, recursion and output.
fn environment() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_recursion_limit(32);
    env
}

/// A template error as minijinja words it (its kind, detail and where).
fn describe(err: &minijinja::Error) -> String {
    err.to_string()
}

/// Each template of a message, with where it is (for messages that name it).
fn templates(index: usize, message: &PromptMessageSpec) -> Vec<(String, &str)> {
    let at = |field: &str| format!("messages[{index}].content.{field}");
    match &message.content {
        PromptContent::Text { text } => vec![(at("text"), text.as_str())],
        PromptContent::Image { .. } | PromptContent::Audio { .. } => Vec::new(),
        PromptContent::Resource { resource } => {
            let mut out = vec![(at("resource.uri"), resource.uri.as_str())];
            if let Some(text) = &resource.text {
                out.push((at("resource.text"), text.as_str()));
            }
            out
        }
    }
}

fn check_base64(what: &str, data: &str, mime_type: &str, kind: &str) -> Result<(), ServiceError> {
    if !mime_type.starts_with(&format!("{kind}/")) {
        return Err(invalid(format!(
            "{what}: mimeType '{mime_type}' is not an {kind} type (like {kind}/png)"
        )));
    }
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map(|_| ())
        .map_err(|e| invalid(format!("{what}: data is not standard base64 ({e})")))
}

fn check_text(what: &str, text: &str, max_chars: usize) -> Result<(), ServiceError> {
    if text.chars().count() > max_chars {
        return Err(invalid(format!("{what}: at most {max_chars} characters")));
    }
    Ok(())
}

/// Checks a definition: bounded texts, arguments with names of their own, one to
/// [`MAX_MESSAGES`] messages, templates that compile and use only declared arguments, images
/// and blobs in base64.
pub fn check_definition(definition: &PromptDefinition) -> Result<(), ServiceError> {
    let size = serde_json::to_vec(definition).map_or(0, |v| v.len());
    if size > MAX_DEFINITION_BYTES {
        return Err(ServiceError::TooLarge(format!(
            "the prompt is {size} bytes as JSON, over {MAX_DEFINITION_BYTES}: link large \
             content as a resource instead of embedding it"
        )));
    }
    if let Some(title) = &definition.title {
        check_text("title", title, MAX_TITLE_CHARS)?;
    }
    check_text(
        "description",
        &definition.description,
        MAX_DESCRIPTION_CHARS,
    )?;
    if definition.arguments.len() > MAX_ARGUMENTS {
        return Err(invalid(format!("arguments: at most {MAX_ARGUMENTS}")));
    }
    let mut names = BTreeSet::new();
    for (i, arg) in definition.arguments.iter().enumerate() {
        let valid = arg
            .name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && arg.name.len() <= 64
            && arg
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || TEMPLATE_GLOBALS.contains(&arg.name.as_str()) {
            return Err(invalid(format!(
                "arguments[{i}].name '{}': letters, digits and _, starting with a letter or _, \
                 at most 64 (and not one of {})",
                arg.name,
                TEMPLATE_GLOBALS.join(", ")
            )));
        }
        if !names.insert(arg.name.as_str()) {
            return Err(invalid(format!(
                "arguments[{i}].name '{}' is given twice",
                arg.name
            )));
        }
        if let Some(title) = &arg.title {
            check_text(&format!("arguments[{i}].title"), title, MAX_TITLE_CHARS)?;
        }
        check_text(
            &format!("arguments[{i}].description"),
            &arg.description,
            MAX_DESCRIPTION_CHARS,
        )?;
        if arg.values.len() > MAX_ARGUMENT_VALUES
            || arg
                .values
                .iter()
                .any(|v| v.chars().count() > MAX_VALUE_CHARS)
        {
            return Err(invalid(format!(
                "arguments[{i}].values: at most {MAX_ARGUMENT_VALUES} values of at most \
                 {MAX_VALUE_CHARS} characters"
            )));
        }
    }
    if definition.messages.is_empty() || definition.messages.len() > MAX_MESSAGES {
        return Err(invalid(format!(
            "messages: one to {MAX_MESSAGES} messages, each {{role: user|assistant, content}}"
        )));
    }
    let env = environment();
    for (i, message) in definition.messages.iter().enumerate() {
        let what = format!("messages[{i}].content");
        match &message.content {
            PromptContent::Image { data, mime_type } => {
                check_base64(&what, data, mime_type, "image")?;
            }
            PromptContent::Audio { data, mime_type } => {
                check_base64(&what, data, mime_type, "audio")?;
            }
            PromptContent::Resource { resource } => check_resource(&what, resource)?,
            PromptContent::Text { .. } => {}
        }
        for (at, source) in templates(i, message) {
            if source.len() > MAX_TEMPLATE_BYTES {
                return Err(ServiceError::TooLarge(format!(
                    "{at}: at most {MAX_TEMPLATE_BYTES} bytes"
                )));
            }
            let template = env
                .template_from_str(source)
                .map_err(|e| invalid(format!("{at} does not compile: {}", describe(&e))))?;
            let unknown: BTreeSet<String> = template
                .undeclared_variables(false)
                .into_iter()
                .filter(|v| !names.contains(v.as_str()) && !TEMPLATE_GLOBALS.contains(&v.as_str()))
                .collect();
            if !unknown.is_empty() {
                return Err(invalid(format!(
                    "{at} uses {} that no argument declares; declare {} in arguments",
                    unknown.iter().cloned().collect::<Vec<_>>().join(", "),
                    if unknown.len() == 1 { "it" } else { "them" }
                )));
            }
        }
    }
    Ok(())
}

fn check_resource(what: &str, resource: &PromptResource) -> Result<(), ServiceError> {
    if resource.uri.trim().is_empty() {
        return Err(invalid(format!(
            "{what}.resource.uri: give the resource's URI"
        )));
    }
    match (&resource.text, &resource.blob) {
        (Some(_), None) => Ok(()),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map(|_| ())
            .map_err(|e| invalid(format!("{what}.resource.blob is not standard base64 ({e})"))),
        _ => Err(invalid(format!(
            "{what}.resource: give exactly one of text and blob (base64)"
        ))),
    }
}

/// Renders one template over the arguments.
fn render_one(
    env: &minijinja::Environment<'static>,
    at: &str,
    source: &str,
    args: &Map<String, Value>,
) -> Result<String, ServiceError> {
    let out = env
        .render_str(source, minijinja::value::Serde(args))
        .map_err(|e| match e.kind() {
            minijinja::ErrorKind::OutOfFuel => invalid(format!(
                "{at} ran out of fuel ({TEMPLATE_FUEL} instructions): simplify its loops"
            )),
            _ => invalid(format!("{at} failed to render: {}", describe(&e))),
        })?;
    if out.len() > MAX_RENDERED_BYTES {
        return Err(ServiceError::TooLarge(format!(
            "{at} renders to {} bytes, over {MAX_RENDERED_BYTES}",
            out.len()
        )));
    }
    Ok(out)
}

/// Renders `prompt` from `args` (name → string): every required argument must be given and
/// every given one declared. Each missing or unknown one is named.
pub fn render(
    prompt: &PromptRecord,
    args: &HashMap<String, String>,
) -> Result<RenderedPrompt, ServiceError> {
    let d = &prompt.definition;
    let declared: Vec<&str> = d.arguments.iter().map(|a| a.name.as_str()).collect();
    let mut unknown: Vec<&str> = args
        .keys()
        .map(String::as_str)
        .filter(|k| !declared.contains(k))
        .collect();
    unknown.sort_unstable();
    if !unknown.is_empty() {
        return Err(invalid(format!(
            "prompt '{}' takes no argument {}; its arguments: {}",
            prompt.name,
            unknown.join(", "),
            if declared.is_empty() {
                "none".to_owned()
            } else {
                declared.join(", ")
            }
        )));
    }
    let missing: Vec<&str> = d
        .arguments
        .iter()
        .filter(|a| a.required && !args.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(invalid(format!(
            "prompt '{}' needs the argument{} {}: give {} in arguments",
            prompt.name,
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        )));
    }
    if let Some((name, _)) = args.iter().find(|(_, v)| v.len() > MAX_ARGUMENT_BYTES) {
        return Err(ServiceError::TooLarge(format!(
            "argument {name}: at most {MAX_ARGUMENT_BYTES} bytes"
        )));
    }
    // Optional arguments left out render as empty strings.
    let mut vars = Map::new();
    for arg in &d.arguments {
        let value = args.get(&arg.name).cloned().unwrap_or_default();
        vars.insert(arg.name.clone(), Value::String(value));
    }
    let env = environment();
    let mut messages = Vec::with_capacity(d.messages.len());
    for (i, message) in d.messages.iter().enumerate() {
        let at = |field: &str| format!("prompt '{}' messages[{i}].content.{field}", prompt.name);
        let content = match &message.content {
            PromptContent::Text { text } => PromptContent::Text {
                text: render_one(&env, &at("text"), text, &vars)?,
            },
            PromptContent::Resource { resource } => PromptContent::Resource {
                resource: PromptResource {
                    uri: render_one(&env, &at("resource.uri"), &resource.uri, &vars)?,
                    mime_type: resource.mime_type.clone(),
                    text: match &resource.text {
                        Some(text) => Some(render_one(&env, &at("resource.text"), text, &vars)?),
                        None => None,
                    },
                    blob: resource.blob.clone(),
                },
            },
            other => other.clone(),
        };
        messages.push(PromptMessageSpec {
            role: message.role,
            content,
        });
    }
    Ok(RenderedPrompt {
        description: d.description.clone(),
        messages,
    })
}

/// The values of `prompt`'s argument `argument` that start with `prefix` (case-insensitive),
/// in the order declared, at most [`MAX_COMPLETIONS`]. An unknown argument completes to nothing.
pub fn complete(prompt: &PromptRecord, argument: &str, prefix: &str) -> Completion {
    let Some(arg) = prompt
        .definition
        .arguments
        .iter()
        .find(|a| a.name == argument)
    else {
        return Completion::default();
    };
    let prefix = prefix.to_lowercase();
    let matching: Vec<&String> = arg
        .values
        .iter()
        .filter(|v| v.to_lowercase().starts_with(&prefix))
        .collect();
    Completion {
        total: matching.len(),
        has_more: matching.len() > MAX_COMPLETIONS,
        values: matching
            .into_iter()
            .take(MAX_COMPLETIONS)
            .cloned()
            .collect(),
    }
}

/// The names of the fields that differ between two definitions (a version's diff).
pub fn changed_fields(before: &PromptDefinition, after: &PromptDefinition) -> Vec<&'static str> {
    [
        ("title", before.title != after.title),
        ("description", before.description != after.description),
        ("arguments", before.arguments != after.arguments),
        ("messages", before.messages != after.messages),
    ]
    .into_iter()
    .filter_map(|(name, changed)| changed.then_some(name))
    .collect()
}

/// A model may not touch what a person wrote.
fn check_author(actor: &Actor, stored: &PromptRecord, what: &str) -> Result<(), ServiceError> {
    if actor.is_llm() && stored.created_by == CreatedBy::User {
        return Err(ServiceError::Forbidden(format!(
            "prompt '{}' was written by a person: a model may not {what} it; ask the person to \
             (the web UI, REST without an agent, or `toolsmith prompt`), or make a prompt of \
             your own under another name",
            stored.name
        )));
    }
    Ok(())
}

/// An agent scopes a prompt only to itself.
fn check_scope(actor: &Actor, agent: Option<&str>) -> Result<(), ServiceError> {
    match (actor.agent.as_deref(), agent) {
        (Some(me), Some(scope)) if me != scope => Err(ServiceError::Forbidden(format!(
            "you act as agent '{me}': you may scope a prompt to yourself ('{me}') or to no \
             agent, not to '{scope}'"
        ))),
        _ => Ok(()),
    }
}

impl ToolService {
    /// The versions of every user's prompt list (MCP `list_changed`).
    pub fn prompt_catalog(&self) -> &PromptCatalog {
        &self.prompt_catalog
    }

    /// The caller's prompt `id_or_name`, if the caller manages it: a person all of theirs, an
    /// agent those scoped to no agent or to itself.
    async fn visible_prompt(
        &self,
        user: &str,
        agent: Option<&str>,
        id_or_name: &str,
    ) -> Result<PromptRecord, ServiceError> {
        self.store
            .get_prompt(user, id_or_name)
            .await?
            .filter(|p| agent.is_none() || p.is_visible_to(agent))
            .ok_or_else(|| not_found(id_or_name))
    }

    async fn audit_prompt(
        &self,
        actor: &Actor,
        action: &str,
        before: Option<i64>,
        prompt: &PromptRecord,
        details: Value,
    ) {
        let after = (action != "prompt.delete").then_some(prompt.revision);
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("prompt", prompt.id.clone(), Some(prompt.name.clone())),
                (before, after),
                details,
            )
            .await;
    }

    /// Creates a prompt of the actor's user, written by the actor (a person or a model).
    pub async fn create_prompt(
        &self,
        actor: &Actor,
        input: PromptInput,
    ) -> Result<PromptRecord, ServiceError> {
        toolsmith_core::name::validate_custom_name(&input.name).map_err(|e| {
            invalid(format!(
                "prompt name '{}': {e} (lowercase letters, digits and _, starting with a letter)",
                input.name
            ))
        })?;
        check_scope(actor, input.agent.as_deref())?;
        check_definition(&input.definition)?;
        if self.store.list_prompts(&actor.user_id).await?.len() >= MAX_PROMPTS_PER_OWNER {
            return Err(ServiceError::LimitReached(format!(
                "you have {MAX_PROMPTS_PER_OWNER} prompts, the most one user may have: delete \
                 some first"
            )));
        }
        let now = Utc::now();
        let record = PromptRecord {
            id: format!("prm_{}", uuid::Uuid::new_v4().simple()),
            owner: actor.user_id.clone(),
            agent: input.agent,
            name: input.name,
            revision: 1,
            enabled: input.enabled,
            created_by: actor.kind,
            definition: input.definition,
            created_at: now,
            updated_at: now,
        };
        if !self.store.insert_prompt(&record).await? {
            return Err(ServiceError::NameTaken(format!(
                "you already have a prompt named '{}': pick another name, or change that one \
                 (PUT /api/v1/prompts/{{name}}, `toolsmith prompt update`)",
                record.name
            )));
        }
        self.prompt_catalog.note_written(&record.owner);
        self.audit_prompt(
            actor,
            "prompt.create",
            None,
            &record,
            json!({"createdBy": record.created_by, "agent": record.agent}),
        )
        .await;
        Ok(record)
    }

    /// Writes `next` (the stored prompt `stored` changed) at the next revision.
    async fn write_prompt(
        &self,
        actor: &Actor,
        action: &str,
        stored: &PromptRecord,
        mut next: PromptRecord,
        new_version: bool,
        details: Value,
    ) -> Result<PromptRecord, ServiceError> {
        next.revision = stored.revision + 1;
        next.updated_at = Utc::now();
        match self.store.update_prompt(&next, new_version).await? {
            PromptUpdate::Updated => {}
            PromptUpdate::NotFound => return Err(not_found(&stored.name)),
            PromptUpdate::Conflict { actual } => {
                return Err(ServiceError::RevisionConflict {
                    expected: stored.revision,
                    actual,
                });
            }
            PromptUpdate::NameTaken => {
                return Err(ServiceError::NameTaken(format!(
                    "you already have a prompt named '{}': pick another name",
                    next.name
                )));
            }
        }
        self.prompt_catalog.note_written(&next.owner);
        self.audit_prompt(actor, action, Some(stored.revision), &next, details)
            .await;
        Ok(next)
    }

    /// Replaces the caller's prompt `id_or_name` by `input` (a new revision and version).
    /// `expected_revision`, when given, must be the stored one.
    pub async fn update_prompt(
        &self,
        actor: &Actor,
        id_or_name: &str,
        input: PromptInput,
        expected_revision: Option<i64>,
    ) -> Result<PromptRecord, ServiceError> {
        let stored = self
            .visible_prompt(&actor.user_id, actor.agent.as_deref(), id_or_name)
            .await?;
        if let Some(expected) = expected_revision
            && expected != stored.revision
        {
            return Err(ServiceError::RevisionConflict {
                expected,
                actual: stored.revision,
            });
        }
        check_author(actor, &stored, "change")?;
        toolsmith_core::name::validate_custom_name(&input.name)
            .map_err(|e| invalid(format!("prompt name '{}': {e}", input.name)))?;
        check_scope(actor, input.agent.as_deref())?;
        check_definition(&input.definition)?;
        let changed = changed_fields(&stored.definition, &input.definition);
        let next = PromptRecord {
            agent: input.agent,
            name: input.name,
            enabled: input.enabled,
            created_by: actor.kind,
            definition: input.definition,
            ..stored.clone()
        };
        self.write_prompt(
            actor,
            "prompt.update",
            &stored,
            next,
            true,
            json!({"changed": changed}),
        )
        .await
    }

    /// Switches the caller's prompt on or off (a new revision, no new version).
    pub async fn set_prompt_enabled(
        &self,
        actor: &Actor,
        id_or_name: &str,
        enabled: bool,
    ) -> Result<PromptRecord, ServiceError> {
        let stored = self
            .visible_prompt(&actor.user_id, actor.agent.as_deref(), id_or_name)
            .await?;
        check_author(actor, &stored, if enabled { "enable" } else { "disable" })?;
        if stored.enabled == enabled {
            return Ok(stored);
        }
        let next = PromptRecord {
            enabled,
            ..stored.clone()
        };
        let action = if enabled {
            "prompt.enable"
        } else {
            "prompt.disable"
        };
        self.write_prompt(actor, action, &stored, next, false, json!({}))
            .await
    }

    /// Brings back the definition of `revision` of the caller's prompt, as a new revision.
    pub async fn rollback_prompt(
        &self,
        actor: &Actor,
        id_or_name: &str,
        revision: i64,
    ) -> Result<PromptRecord, ServiceError> {
        let stored = self
            .visible_prompt(&actor.user_id, actor.agent.as_deref(), id_or_name)
            .await?;
        check_author(actor, &stored, "roll back")?;
        let versions = self
            .store
            .prompt_versions(&actor.user_id, &stored.id)
            .await?;
        let Some(version) = versions.into_iter().find(|v| v.revision == revision) else {
            return Err(ServiceError::NotFound(format!(
                "prompt '{}' has no version {revision}; list them with GET \
                 /api/v1/prompts/{}/versions",
                stored.name, stored.name
            )));
        };
        let changed = changed_fields(&stored.definition, &version.definition);
        let next = PromptRecord {
            created_by: actor.kind,
            definition: version.definition,
            ..stored.clone()
        };
        self.write_prompt(
            actor,
            "prompt.rollback",
            &stored,
            next,
            true,
            json!({"toRevision": revision, "changed": changed}),
        )
        .await
    }

    /// Deletes the caller's prompt and its versions; the prompt as it was.
    pub async fn delete_prompt(
        &self,
        actor: &Actor,
        id_or_name: &str,
    ) -> Result<PromptRecord, ServiceError> {
        let stored = self
            .visible_prompt(&actor.user_id, actor.agent.as_deref(), id_or_name)
            .await?;
        check_author(actor, &stored, "delete")?;
        if !self.store.delete_prompt(&actor.user_id, &stored.id).await? {
            return Err(not_found(id_or_name));
        }
        self.prompt_catalog.note_written(&stored.owner);
        self.audit_prompt(
            actor,
            "prompt.delete",
            Some(stored.revision),
            &stored,
            json!({}),
        )
        .await;
        Ok(stored)
    }

    /// Polls the store for prompts other processes changed (the change feed's safety net, and
    /// the only way on SQLite): their owners' sessions hear `list_changed`. How many owners.
    pub async fn refresh_prompts_from_store(&self) -> Result<usize, ServiceError> {
        let prints = self.store.prompt_fingerprints().await?;
        Ok(self.prompt_catalog.note_fingerprints(prints))
    }

    /// The caller's prompt `id_or_name` (enabled or not), if the caller sees it.
    pub async fn get_prompt(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
    ) -> Result<PromptRecord, ServiceError> {
        self.visible_prompt(&ctx.user_id, ctx.agent_id.as_deref(), id_or_name)
            .await
    }

    /// The caller's prompts it manages (enabled or not), by name: a person all of theirs, an
    /// agent those scoped to no agent or to itself.
    pub async fn list_prompts(&self, ctx: &ToolContext) -> Result<Vec<PromptRecord>, ServiceError> {
        let agent = ctx.agent_id.as_deref();
        let mut prompts = self.store.list_prompts(&ctx.user_id).await?;
        prompts.retain(|p| agent.is_none() || p.is_visible_to(agent));
        Ok(prompts)
    }

    /// What MCP offers the caller: its enabled prompts scoped to no agent or to the caller's
    /// own, by name.
    pub async fn served_prompts(
        &self,
        ctx: &ToolContext,
    ) -> Result<Vec<PromptRecord>, ServiceError> {
        let mut prompts = self.list_prompts(ctx).await?;
        prompts.retain(|p| p.enabled && p.is_visible_to(ctx.agent_id.as_deref()));
        Ok(prompts)
    }

    /// The caller's enabled prompt `name` (MCP `prompts/get`, `completion/complete`).
    pub async fn served_prompt(
        &self,
        ctx: &ToolContext,
        name: &str,
    ) -> Result<PromptRecord, ServiceError> {
        let prompt = self.get_prompt(ctx, name).await?;
        if !prompt.is_visible_to(ctx.agent_id.as_deref()) {
            return Err(not_found(name));
        }
        if !prompt.enabled {
            return Err(ServiceError::NotFound(format!(
                "prompt '{name}' is switched off; switch it on (POST \
                 /api/v1/prompts/{name}/enable, `toolsmith prompt enable {name}`)"
            )));
        }
        Ok(prompt)
    }

    /// Every kept version of the caller's prompt, oldest first.
    pub async fn prompt_versions(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
    ) -> Result<Vec<PromptVersionRecord>, ServiceError> {
        let prompt = self.get_prompt(ctx, id_or_name).await?;
        Ok(self.store.prompt_versions(&ctx.user_id, &prompt.id).await?)
    }

    /// Renders the caller's prompt `id_or_name` (enabled or not: a preview) from `args`.
    pub async fn render_prompt(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
        args: &HashMap<String, String>,
    ) -> Result<RenderedPrompt, ServiceError> {
        let prompt = self.get_prompt(ctx, id_or_name).await?;
        render(&prompt, args)
    }
}

#[cfg(test)]
mod tests;
