//! User-defined resources (issue 40): what a person or a model stores to be read as context —
//! a text or a blob under a URI of their choosing (`test://static-text`, `docs://style-guide`)
//! — and resource templates (RFC 6570, `weather://{city}/today`) whose content a JS function
//! computes from the URI's variables.
//!
//! Each belongs to one user (every agent of the user reads it) and is kept in the per-user
//! record store of every backend: the definition in the collection [`COLLECTION`] (its name
//! is the record's dedup key, so a name is unique per user, atomically), the content or code in
//! [`BODY_COLLECTION`] (its id and `_body`), so a listing never reads the bodies. A change moves
//! the resource's `revision` (no older version is kept) and is audited (`resource.*`).
//!
//! **A template runs code.** Its function runs as a permission-less JS tool does — the same
//! sandbox, limits, policy, rate limits, scrubbing and audit (`code.run`) — as a call of the
//! one-off tool [`TEMPLATE_TOOL`] by the reader, with the URI's variables as `args`. A template
//! a model wrote (`createdBy: llm`) is held to the rule of a tool a model wrote: each run is
//! marked `requiresApproval`, so under `execution_approval = "llm_tools"` (the default) a
//! person allows it (the client's form, or an approval; the one-off tool's id is a hash of the
//! code, so `allow_always` covers exactly that code). As for prompts, a model may not change or
//! delete what a person wrote.

use std::collections::BTreeSet;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use toolsmith_core::data::{DataRecord, PutOutcome, RecordQuery, RecordScope};
use toolsmith_core::{CreatedBy, ToolContext};

use super::{ResourceBody, ResourceContent};
use crate::governance::audit::AuditTarget;
use crate::{Actor, ServiceError, ToolService};

/// The record-store collection of the definitions.
pub const COLLECTION: &str = "resource";
/// The record-store collection of the contents and codes (`<id>_body`).
pub const BODY_COLLECTION: &str = "resource_body";
/// The most resources and templates one user may have.
pub const MAX_RESOURCES_PER_OWNER: u64 = 500;
/// Largest content of a resource (a text's UTF-8 bytes, a blob's decoded bytes).
pub const MAX_CONTENT_BYTES: usize = 512 * 1024;
/// The one-off tool a template's code runs as (the policy, approvals and records see it).
pub const TEMPLATE_TOOL: &str = "resource_template";
/// Longest URI or URI template, in bytes.
const MAX_URI_BYTES: usize = 2_048;
const MAX_TITLE_CHARS: usize = 200;
const MAX_DESCRIPTION_CHARS: usize = 4_000;
const MAX_VARIABLES: usize = 16;

/// A new resource or template, or a changed one (the REST body, the CLI's file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceInput {
    pub name: String,
    /// A resource's URI (exactly one of `uri` and `uri_template`).
    pub uri: Option<String>,
    /// A template's RFC 6570 URI template: `{var}` (one path segment) and `{+var}` (anything).
    pub uri_template: Option<String>,
    pub title: Option<String>,
    pub description: String,
    /// Default: `text/plain` for a text, `application/octet-stream` for a blob,
    /// `application/json` or `text/plain` for a template (by what its function returns).
    pub mime_type: Option<String>,
    /// A resource's text content…
    pub text: Option<String>,
    /// …or its binary content, base64.
    pub blob: Option<String>,
    /// A template's JS function body (`args` holds the URI's variables).
    pub code: Option<String>,
}

/// What a user-defined resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserResourceBody {
    Text(String),
    /// Base64, as written.
    Blob(String),
    /// A template's code.
    Code(String),
}

/// A stored resource or template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserResource {
    /// `res_<16 hex>`.
    pub id: String,
    pub owner: String,
    pub name: String,
    pub uri: Option<String>,
    pub uri_template: Option<String>,
    pub title: Option<String>,
    pub description: String,
    pub mime_type: Option<String>,
    pub kind: ResourceKind,
    /// The content's bytes (a template: its code's).
    pub size: u64,
    pub created_by: CreatedBy,
    /// 1, then one more at each change.
    pub revision: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The content or code; `None` in listings.
    pub body: Option<UserResourceBody>,
}

/// What a user-defined resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    Text,
    Blob,
    Template,
}

impl ResourceKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Text => "text",
            ResourceKind::Blob => "blob",
            ResourceKind::Template => "template",
        }
    }

    fn of(body: &UserResourceBody) -> ResourceKind {
        match body {
            UserResourceBody::Text(_) => ResourceKind::Text,
            UserResourceBody::Blob(_) => ResourceKind::Blob,
            UserResourceBody::Code(_) => ResourceKind::Template,
        }
    }

    fn parse(text: Option<&str>) -> ResourceKind {
        match text {
            Some("blob") => ResourceKind::Blob,
            Some("template") => ResourceKind::Template,
            _ => ResourceKind::Text,
        }
    }
}

fn invalid(message: String) -> ServiceError {
    ServiceError::Validation(message)
}

fn not_found(name: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no resource '{name}' of yours; list yours with GET /api/v1/resources or `toolsmith \
         resource list`"
    ))
}

/// One piece of a URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `true` for `{+var}` (reserved expansion: may hold `/`).
    Var(String, bool),
}

/// A URI's scheme (`test`, `docs`) if it starts with one (`letters, digits, + . -` and `:`).
fn scheme_of(uri: &str) -> Option<&str> {
    let (scheme, _) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')))
    .then_some(scheme)
}

/// Checks a URI or URI template's frame: a scheme, not Toolsmith's own, bounded, no spaces or
/// control characters.
fn check_uri_frame(field: &str, uri: &str) -> Result<(), ServiceError> {
    if uri.len() > MAX_URI_BYTES {
        return Err(invalid(format!("{field}: at most {MAX_URI_BYTES} bytes")));
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid(format!(
            "{field} '{uri}' holds a space or a control character; percent-encode it"
        )));
    }
    let Some(scheme) = scheme_of(uri) else {
        return Err(invalid(format!(
            "{field} '{uri}' has no scheme; write it as scheme:rest, like test://static-text or \
             docs://style-guide"
        )));
    };
    if scheme.eq_ignore_ascii_case("toolsmith") {
        return Err(invalid(format!(
            "{field} '{uri}': the scheme toolsmith: is the server's own (workspace files, tool \
             sources); pick another scheme"
        )));
    }
    Ok(())
}

/// Parses a URI template: literals and `{var}` / `{+var}` expressions, at least one, no two
/// expressions side by side (a literal between tells where one ends).
fn parse_template(template: &str) -> Result<Vec<Part>, ServiceError> {
    let field = "uriTemplate";
    let mut parts = Vec::new();
    let mut names = BTreeSet::new();
    let mut rest = template;
    while !rest.is_empty() {
        let Some(open) = rest.find('{') else {
            if rest.contains('}') {
                return Err(invalid(format!(
                    "{field} '{template}': a '}}' without '{{'"
                )));
            }
            parts.push(Part::Literal(rest.to_owned()));
            break;
        };
        let (literal, after) = rest.split_at(open);
        if literal.contains('}') {
            return Err(invalid(format!(
                "{field} '{template}': a '}}' without '{{'"
            )));
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal.to_owned()));
        }
        let Some(close) = after.find('}') else {
            return Err(invalid(format!(
                "{field} '{template}': a '{{' without '}}'"
            )));
        };
        let expression = after.get(1..close).unwrap_or_default();
        rest = after.get(close + 1..).unwrap_or_default();
        let (name, reserved) = match expression.strip_prefix('+') {
            Some(name) => (name, true),
            None => (expression, false),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(invalid(format!(
                "{field} '{template}': '{{{expression}}}' is not a variable this server \
                 expands; write {{name}} (one path segment) or {{+name}} (may hold /), the \
                 name in letters, digits and _"
            )));
        }
        if !names.insert(name.to_owned()) {
            return Err(invalid(format!(
                "{field} '{template}': the variable '{name}' is used twice"
            )));
        }
        if matches!(parts.last(), Some(Part::Var(..))) {
            return Err(invalid(format!(
                "{field} '{template}': two variables side by side; put a literal (like / or -) \
                 between them so a URI tells where each ends"
            )));
        }
        parts.push(Part::Var(name.to_owned(), reserved));
    }
    if names.is_empty() {
        return Err(invalid(format!(
            "{field} '{template}' has no variable; a fixed URI is a resource: give it as uri"
        )));
    }
    if names.len() > MAX_VARIABLES {
        return Err(invalid(format!(
            "{field}: at most {MAX_VARIABLES} variables"
        )));
    }
    Ok(parts)
}

/// A compiled template: the regex a URI must match, and its variables in order.
fn template_regex(parts: &[Part]) -> Option<(regex::Regex, Vec<String>)> {
    let mut pattern = String::from("^");
    let mut names = Vec::new();
    for part in parts {
        match part {
            Part::Literal(text) => pattern.push_str(&regex::escape(text)),
            Part::Var(name, true) => {
                pattern.push_str("(.+?)");
                names.push(name.clone());
            }
            Part::Var(name, false) => {
                pattern.push_str("([^/?#]+)");
                names.push(name.clone());
            }
        }
    }
    pattern.push('$');
    regex::Regex::new(&pattern).ok().map(|re| (re, names))
}

/// The variables of `uri` if it matches `template` (values percent-decoded).
#[must_use]
pub fn match_template(template: &str, uri: &str) -> Option<Map<String, Value>> {
    let parts = parse_template(template).ok()?;
    let (re, names) = template_regex(&parts)?;
    let captures = re.captures(uri)?;
    let mut vars = Map::new();
    for (i, name) in names.into_iter().enumerate() {
        let value = captures.get(i + 1)?.as_str();
        vars.insert(name, Value::String(super::percent_decode(value)));
    }
    Some(vars)
}

fn check_text(field: &str, text: &str, max_chars: usize) -> Result<(), ServiceError> {
    if text.chars().count() > max_chars {
        return Err(invalid(format!("{field}: at most {max_chars} characters")));
    }
    Ok(())
}

fn check_mime(mime: &str) -> Result<(), ServiceError> {
    let valid = mime.len() <= 255
        && mime.split_once('/').is_some_and(|(kind, sub)| {
            let token = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
            };
            token(kind) && token(sub.split(';').next().unwrap_or_default().trim())
        });
    if valid {
        Ok(())
    } else {
        Err(invalid(format!(
            "mimeType '{mime}' is not a MIME type; write type/subtype, like text/plain or \
             image/png"
        )))
    }
}

/// Checks `input` and gives the body to store and its size.
fn check_input(
    service: &ToolService,
    input: &ResourceInput,
) -> Result<(UserResourceBody, u64), ServiceError> {
    toolsmith_core::name::validate_custom_name(&input.name).map_err(|e| {
        invalid(format!(
            "resource name '{}': {e} (lowercase letters, digits and _, starting with a letter)",
            input.name
        ))
    })?;
    if let Some(title) = &input.title {
        check_text("title", title, MAX_TITLE_CHARS)?;
    }
    check_text("description", &input.description, MAX_DESCRIPTION_CHARS)?;
    if let Some(mime) = &input.mime_type {
        check_mime(mime)?;
    }
    match (&input.uri, &input.uri_template) {
        (Some(uri), None) => {
            check_uri_frame("uri", uri)?;
            if uri.contains('{') || uri.contains('}') {
                return Err(invalid(format!(
                    "uri '{uri}' holds {{ or }}: a URI with variables is a template; give it as \
                     uriTemplate, with code"
                )));
            }
            if input.code.is_some() {
                return Err(invalid(
                    "code: only a template (uriTemplate) has code; a resource has text or blob"
                        .to_owned(),
                ));
            }
            match (&input.text, &input.blob) {
                (Some(text), None) => {
                    let size = text.len();
                    if size > MAX_CONTENT_BYTES {
                        return Err(ServiceError::TooLarge(format!(
                            "text is {size} bytes, over {MAX_CONTENT_BYTES}: keep large \
                             content as a workspace file (toolsmith://workspace/…)"
                        )));
                    }
                    Ok((UserResourceBody::Text(text.clone()), size as u64))
                }
                (None, Some(blob)) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(blob)
                        .map_err(|e| invalid(format!("blob is not standard base64 ({e})")))?;
                    if bytes.len() > MAX_CONTENT_BYTES {
                        return Err(ServiceError::TooLarge(format!(
                            "blob is {} bytes, over {MAX_CONTENT_BYTES}: keep large content \
                             as a workspace file (toolsmith://workspace/…)",
                            bytes.len()
                        )));
                    }
                    Ok((UserResourceBody::Blob(blob.clone()), bytes.len() as u64))
                }
                _ => Err(invalid(
                    "a resource has exactly one of text (its text) and blob (its bytes, base64)"
                        .to_owned(),
                )),
            }
        }
        (None, Some(template)) => {
            check_uri_frame("uriTemplate", template)?;
            parse_template(template)?;
            if input.text.is_some() || input.blob.is_some() {
                return Err(invalid(
                    "a template's content is what its code returns; give code, not text or blob"
                        .to_owned(),
                ));
            }
            let Some(code) = input.code.as_ref().filter(|c| !c.trim().is_empty()) else {
                return Err(invalid(
                    "a template needs code: the body of a JS function whose args are the URI's \
                     variables, returning the content (a string, or any JSON value)"
                        .to_owned(),
                ));
            };
            service.check_js_code(code)?;
            Ok((UserResourceBody::Code(code.clone()), code.len() as u64))
        }
        _ => Err(invalid(
            "give exactly one of uri (a resource: text or blob) and uriTemplate (a template: \
             code)"
                .to_owned(),
        )),
    }
}

fn created_by_of(text: Option<&str>) -> CreatedBy {
    if text == Some("llm") {
        CreatedBy::Llm
    } else {
        CreatedBy::User
    }
}

fn time_of(value: Option<&Value>, fallback: DateTime<Utc>) -> DateTime<Utc> {
    value
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map_or(fallback, |t| t.with_timezone(&Utc))
}

/// A definition record as a resource (without its body).
fn from_record(record: &DataRecord) -> UserResource {
    let d = &record.document;
    let text = |key: &str| d.get(key).and_then(Value::as_str).map(str::to_owned);
    UserResource {
        id: record.id.clone(),
        owner: record.owner.clone(),
        name: text("name").unwrap_or_default(),
        uri: text("uri"),
        uri_template: text("uriTemplate"),
        title: text("title"),
        description: text("description").unwrap_or_default(),
        mime_type: text("mimeType"),
        kind: ResourceKind::parse(d.get("kind").and_then(Value::as_str)),
        size: d.get("size").and_then(Value::as_u64).unwrap_or(0),
        created_by: created_by_of(d.get("createdBy").and_then(Value::as_str)),
        revision: d.get("revision").and_then(Value::as_i64).unwrap_or(1),
        created_at: record.created_at,
        updated_at: time_of(d.get("updatedAt"), record.updated_at),
        body: None,
    }
}

fn body_of(record: &DataRecord) -> Option<UserResourceBody> {
    let d = &record.document;
    let text = |key: &str| d.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(t) = text("text") {
        return Some(UserResourceBody::Text(t));
    }
    if let Some(b) = text("blob") {
        return Some(UserResourceBody::Blob(b));
    }
    text("code").map(UserResourceBody::Code)
}

fn definition_document(r: &UserResource) -> Value {
    json!({
        "name": r.name,
        "uri": r.uri,
        "uriTemplate": r.uri_template,
        "title": r.title,
        "description": r.description,
        "mimeType": r.mime_type,
        "kind": r.kind.as_str(),
        "size": r.size,
        "createdBy": r.created_by.as_str(),
        "revision": r.revision,
        "updatedAt": r.updated_at.to_rfc3339(),
    })
}

fn body_document(body: &UserResourceBody) -> Value {
    match body {
        UserResourceBody::Text(t) => json!({"text": t}),
        UserResourceBody::Blob(b) => json!({"blob": b}),
        UserResourceBody::Code(c) => json!({"code": c}),
    }
}

/// A model may not touch what a person wrote.
fn check_author(actor: &Actor, stored: &UserResource, what: &str) -> Result<(), ServiceError> {
    if actor.is_llm() && stored.created_by == CreatedBy::User {
        return Err(ServiceError::Forbidden(format!(
            "resource '{}' was written by a person: a model may not {what} it; ask the person \
             to (REST without an agent, or `toolsmith resource`), or make one of your own \
             under another name",
            stored.name
        )));
    }
    Ok(())
}

/// The URI a resource or template answers for (what must be unique among a user's).
fn address(r: &UserResource) -> &str {
    r.uri
        .as_deref()
        .or(r.uri_template.as_deref())
        .unwrap_or_default()
}

impl ToolService {
    /// The versions of every user's list of resources (MCP `resources/updated` and
    /// `list_changed` for user-defined resources).
    pub fn resource_catalog(&self) -> &crate::prompts::PromptCatalog {
        &self.resource_catalog
    }

    /// `owner`'s resources changed here: this instance's sessions are told now, the other
    /// instances on the store through its change notice (PostgreSQL).
    async fn resource_changed(&self, owner: &str, id: &str) {
        self.resource_catalog.note_changed(owner);
        if let Err(e) = self
            .store
            .announce_change(toolsmith_store::ChangeKind::Resource, id, owner)
            .await
        {
            tracing::warn!(error = %e, owner, "cannot tell other instances of a resource change; they see it at their next resync");
        }
    }

    fn check_writable_resources(&self) -> Result<(), ServiceError> {
        if self.config.read_only {
            return Err(ServiceError::Forbidden(
                "the server is in read-only mode (--read-only): resources can be listed and \
                 read, not created, changed or deleted"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// Every resource and template of `user`, by name, without their bodies.
    pub async fn list_user_resources(&self, user: &str) -> Result<Vec<UserResource>, ServiceError> {
        let query = RecordQuery {
            owner: user.to_owned(),
            agent: String::new(),
            collection: COLLECTION.to_owned(),
            limit: u32::try_from(MAX_RESOURCES_PER_OWNER).unwrap_or(u32::MAX),
            ..RecordQuery::default()
        };
        let mut all: Vec<UserResource> = self
            .store
            .query_records(&query)
            .await?
            .iter()
            .map(|hit| from_record(&hit.record))
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    async fn stored_resource(&self, user: &str, name: &str) -> Result<UserResource, ServiceError> {
        self.list_user_resources(user)
            .await?
            .into_iter()
            .find(|r| r.name == name || r.id == name)
            .ok_or_else(|| not_found(name))
    }

    async fn with_body(&self, mut resource: UserResource) -> Result<UserResource, ServiceError> {
        let scope = RecordScope::new(resource.owner.clone(), None);
        resource.body = self
            .store
            .get_record(&scope, BODY_COLLECTION, &body_id(&resource.id))
            .await?
            .as_ref()
            .and_then(body_of);
        Ok(resource)
    }

    /// The caller's resource or template `name` (or id), with its content or code.
    pub async fn get_user_resource(
        &self,
        ctx: &ToolContext,
        name: &str,
    ) -> Result<UserResource, ServiceError> {
        let stored = self.stored_resource(&ctx.user_id, name).await?;
        self.with_body(stored).await
    }

    async fn audit_resource(
        &self,
        actor: &Actor,
        action: &str,
        revisions: (Option<i64>, Option<i64>),
        r: &UserResource,
    ) {
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("resource", r.id.clone(), Some(r.name.clone())),
                revisions,
                json!({"createdBy": r.created_by, "uri": address(r), "kind": r.kind.as_str()}),
            )
            .await;
    }

    fn check_address_free(
        all: &[UserResource],
        candidate: &UserResource,
    ) -> Result<(), ServiceError> {
        if let Some(other) = all
            .iter()
            .find(|r| r.id != candidate.id && address(r) == address(candidate))
        {
            return Err(ServiceError::NameTaken(format!(
                "your resource '{}' has the URI {} already: change that one, or pick another URI",
                other.name,
                address(candidate)
            )));
        }
        Ok(())
    }

    /// Creates a resource or template of the actor's user, written by the actor.
    pub async fn create_resource(
        &self,
        actor: &Actor,
        input: ResourceInput,
    ) -> Result<UserResource, ServiceError> {
        self.check_writable_resources()?;
        let (body, size) = check_input(self, &input)?;
        let now = Utc::now();
        let resource = UserResource {
            id: toolsmith_builtins::data::new_id("res"),
            owner: actor.user_id.clone(),
            name: input.name,
            uri: input.uri,
            uri_template: input.uri_template,
            title: input.title,
            description: input.description,
            mime_type: input.mime_type,
            kind: ResourceKind::of(&body),
            size,
            created_by: actor.kind,
            revision: 1,
            created_at: now,
            updated_at: now,
            body: Some(body),
        };
        let all = self.list_user_resources(&actor.user_id).await?;
        Self::check_address_free(&all, &resource)?;
        let scope = RecordScope::new(actor.user_id.clone(), None);
        let mut record = DataRecord::new(
            &scope,
            COLLECTION,
            resource.id.clone(),
            definition_document(&resource),
            format!("{} {}", resource.name, resource.description),
        );
        record.dedup_key = Some(resource.name.clone());
        record.category = Some(resource.name.clone());
        record.kind = Some(resource.kind.as_str().to_owned());
        let outcome = self
            .store
            .put_record(record, MAX_RESOURCES_PER_OWNER)
            .await
            .map_err(|e| match e {
                toolsmith_store::StoreError::RecordLimit { limit, .. } => {
                    ServiceError::LimitReached(format!(
                        "you have {limit} resources and templates, the most one user may have: \
                         delete some first"
                    ))
                }
                other => other.into(),
            })?;
        if let PutOutcome::Duplicate(_) = outcome {
            return Err(ServiceError::NameTaken(format!(
                "you already have a resource named '{}': pick another name, or change that one \
                 (PUT /api/v1/resources/{{name}}, `toolsmith resource update`)",
                resource.name
            )));
        }
        let body_record = DataRecord::new(
            &scope,
            BODY_COLLECTION,
            body_id(&resource.id),
            body_document(&body_of_resource(&resource)),
            String::new(),
        );
        if let Err(e) = self
            .store
            .put_record(body_record, MAX_RESOURCES_PER_OWNER)
            .await
        {
            // Keep no definition without its body.
            let _ = self
                .store
                .delete_record(&scope, COLLECTION, &resource.id)
                .await;
            return Err(e.into());
        }
        self.resource_changed(&resource.owner, &resource.id).await;
        self.audit_resource(actor, "resource.create", (None, Some(1)), &resource)
            .await;
        Ok(resource)
    }

    /// Replaces the caller's resource `name` by `input` (its name may change; a resource may
    /// not become a template or the other way round). `expected_revision`, when given, must
    /// be the stored one.
    pub async fn update_resource(
        &self,
        actor: &Actor,
        name: &str,
        input: ResourceInput,
        expected_revision: Option<i64>,
    ) -> Result<UserResource, ServiceError> {
        self.check_writable_resources()?;
        let all = self.list_user_resources(&actor.user_id).await?;
        let stored = all
            .iter()
            .find(|r| r.name == name || r.id == name)
            .cloned()
            .ok_or_else(|| not_found(name))?;
        if let Some(expected) = expected_revision
            && expected != stored.revision
        {
            return Err(ServiceError::RevisionConflict {
                expected,
                actual: stored.revision,
            });
        }
        check_author(actor, &stored, "change")?;
        let (body, size) = check_input(self, &input)?;
        if stored.uri_template.is_some() != input.uri_template.is_some() {
            return Err(invalid(format!(
                "'{}' is a {}: delete it and create the {} anew",
                stored.name,
                if stored.uri_template.is_some() {
                    "template"
                } else {
                    "resource"
                },
                if input.uri_template.is_some() {
                    "template"
                } else {
                    "resource"
                },
            )));
        }
        if input.name != stored.name && all.iter().any(|r| r.name == input.name) {
            return Err(ServiceError::NameTaken(format!(
                "you already have a resource named '{}': pick another name",
                input.name
            )));
        }
        let next = UserResource {
            name: input.name,
            uri: input.uri,
            uri_template: input.uri_template,
            title: input.title,
            description: input.description,
            mime_type: input.mime_type,
            kind: ResourceKind::of(&body),
            size,
            created_by: actor.kind,
            revision: stored.revision + 1,
            updated_at: Utc::now(),
            body: Some(body),
            ..stored.clone()
        };
        Self::check_address_free(&all, &next)?;
        let scope = RecordScope::new(actor.user_id.clone(), None);
        let Some(mut record) = self
            .store
            .get_record(&scope, COLLECTION, &stored.id)
            .await?
        else {
            return Err(not_found(name));
        };
        let Some(mut body_record) = self
            .store
            .get_record(&scope, BODY_COLLECTION, &body_id(&stored.id))
            .await?
        else {
            return Err(not_found(name));
        };
        body_record.document = body_document(&body_of_resource(&next));
        body_record.updated_at = next.updated_at;
        self.store.update_record(body_record).await?;
        record.document = definition_document(&next);
        record.search_text = format!("{} {}", next.name, next.description);
        record.category = Some(next.name.clone());
        record.updated_at = next.updated_at;
        self.store.update_record(record).await?;
        self.resource_changed(&next.owner, &next.id).await;
        self.audit_resource(
            actor,
            "resource.update",
            (Some(stored.revision), Some(next.revision)),
            &next,
        )
        .await;
        Ok(next)
    }

    /// Deletes the caller's resource `name`; the resource as it was (without its body).
    pub async fn delete_resource(
        &self,
        actor: &Actor,
        name: &str,
    ) -> Result<UserResource, ServiceError> {
        self.check_writable_resources()?;
        let stored = self.stored_resource(&actor.user_id, name).await?;
        check_author(actor, &stored, "delete")?;
        let scope = RecordScope::new(actor.user_id.clone(), None);
        if !self
            .store
            .delete_record(&scope, COLLECTION, &stored.id)
            .await?
        {
            return Err(not_found(name));
        }
        let _ = self
            .store
            .delete_record(&scope, BODY_COLLECTION, &body_id(&stored.id))
            .await;
        self.resource_changed(&stored.owner, &stored.id).await;
        self.audit_resource(
            actor,
            "resource.delete",
            (Some(stored.revision), None),
            &stored,
        )
        .await;
        Ok(stored)
    }

    /// The user's resource whose URI is `uri`, or the template `uri` matches with its
    /// variables.
    pub(crate) async fn find_user_resource(
        &self,
        user: &str,
        uri: &str,
    ) -> Result<Option<(UserResource, Option<Map<String, Value>>)>, ServiceError> {
        let all = self.list_user_resources(user).await?;
        if let Some(exact) = all.iter().find(|r| r.uri.as_deref() == Some(uri)) {
            return Ok(Some((exact.clone(), None)));
        }
        Ok(all.into_iter().find_map(|r| {
            let vars = match_template(r.uri_template.as_deref()?, uri)?;
            Some((r, Some(vars)))
        }))
    }

    /// The revision of what `uri` names among the user's resources (the resource, or the
    /// template it matches): what a subscription compares.
    pub async fn user_resource_revision(&self, user: &str, uri: &str) -> Option<i64> {
        self.find_user_resource(user, uri)
            .await
            .ok()
            .flatten()
            .map(|(r, _)| r.revision)
    }

    /// Reads a user-defined resource (`None`: no resource or template of the user answers
    /// for `uri`). A template's code runs as the reader's call of [`TEMPLATE_TOOL`].
    pub(crate) async fn read_user_resource(
        &self,
        ctx: ToolContext,
        uri: &str,
    ) -> Result<Option<ResourceContent>, ServiceError> {
        let Some((resource, vars)) = self.find_user_resource(&ctx.user_id, uri).await? else {
            return Ok(None);
        };
        let resource = self.with_body(resource).await?;
        let content = match (resource.body.clone(), vars) {
            (Some(UserResourceBody::Text(text)), _) => ResourceContent {
                uri: uri.to_owned(),
                mime_type: resource
                    .mime_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".to_owned()),
                body: ResourceBody::Text(text),
            },
            (Some(UserResourceBody::Blob(blob)), _) => ResourceContent {
                uri: uri.to_owned(),
                mime_type: resource
                    .mime_type
                    .clone()
                    .unwrap_or_else(|| "application/octet-stream".to_owned()),
                body: ResourceBody::Blob(
                    base64::engine::general_purpose::STANDARD
                        .decode(blob)
                        .map_err(|e| invalid(format!("{uri}: the stored blob: {e}")))?,
                ),
            },
            (Some(UserResourceBody::Code(code)), Some(mut vars)) => {
                vars.insert("uri".to_owned(), Value::String(uri.to_owned()));
                self.run_template(ctx, &resource, &code, Value::Object(vars), uri)
                    .await?
            }
            _ => {
                return Err(ServiceError::NotFound(format!(
                    "no resource {uri}: '{}' has no content stored; write it again \
                     (PUT /api/v1/resources/{})",
                    resource.name, resource.name
                )));
            }
        };
        Ok(Some(content))
    }

    async fn run_template(
        &self,
        ctx: ToolContext,
        template: &UserResource,
        code: &str,
        args: Value,
        uri: &str,
    ) -> Result<ResourceContent, ServiceError> {
        let reader = Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
            .with_member(ctx.member.clone());
        let result = self
            .run_template_code(
                &reader,
                &template.name,
                code,
                args,
                ctx,
                template.created_by == CreatedBy::Llm,
            )
            .await;
        if result.is_error {
            let message = result
                .error_message()
                .unwrap_or("the template's code failed");
            let text = format!("{uri}: template '{}': {message}", template.name);
            return Err(match result.error_kind() {
                Some(
                    toolsmith_core::ErrorKind::Denied | toolsmith_core::ErrorKind::ApprovalRequired,
                ) => ServiceError::Forbidden(text),
                Some(toolsmith_core::ErrorKind::RateLimited) => ServiceError::LimitReached(text),
                _ => ServiceError::Validation(text),
            });
        }
        let (text, default_mime) = match result.content {
            Value::String(text) => (text, "text/plain"),
            other => (other.to_string(), "application/json"),
        };
        if text.len() > MAX_CONTENT_BYTES {
            return Err(ServiceError::TooLarge(format!(
                "{uri}: template '{}' returned {} bytes, over {MAX_CONTENT_BYTES}",
                template.name,
                text.len()
            )));
        }
        Ok(ResourceContent {
            uri: uri.to_owned(),
            mime_type: template
                .mime_type
                .clone()
                .unwrap_or_else(|| default_mime.to_owned()),
            body: ResourceBody::Text(text),
        })
    }
}

/// The id of a resource's body record (record ids are unique across collections).
fn body_id(id: &str) -> String {
    format!("{id}_body")
}

fn body_of_resource(r: &UserResource) -> UserResourceBody {
    r.body
        .clone()
        .unwrap_or_else(|| UserResourceBody::Text(String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_matches_its_uris_and_gives_their_variables() {
        let vars = match_template("test://template/{id}/data", "test://template/123/data")
            .expect("a match");
        assert_eq!(vars.get("id"), Some(&json!("123")));
        assert!(match_template("test://template/{id}/data", "test://template/1/2/data").is_none());
        let vars = match_template("docs://{+path}", "docs://a/b%20c.md").expect("a match");
        assert_eq!(vars.get("path"), Some(&json!("a/b c.md")));
        assert!(match_template("docs://{+path}", "other://a").is_none());
    }

    #[test]
    fn a_template_that_cannot_be_read_back_is_refused_naming_why() {
        for (template, says) in [
            ("test://fixed", "no variable"),
            ("test://{a}{b}", "side by side"),
            ("test://{a-b}", "is not a variable"),
            ("test://{a}/{a}", "used twice"),
            ("test://{a", "without"),
        ] {
            let e = parse_template(template).expect_err(template);
            assert!(e.to_string().contains(says), "{template}: {e}");
        }
        for (uri, says) in [
            ("no-scheme", "no scheme"),
            ("toolsmith://workspace/x", "server's own"),
            ("test://a b", "space"),
        ] {
            let e = check_uri_frame("uri", uri).expect_err(uri);
            assert!(e.to_string().contains(says), "{uri}: {e}");
        }
    }
}

#[cfg(test)]
mod store_tests {
    use super::*;

    #[tokio::test]
    async fn a_resource_is_stored_read_and_deleted() {
        let (_dir, _store, service) = crate::config_center::tests::service().await;
        let actor = Actor::user("alice");
        let input = ResourceInput {
            name: "note".into(),
            uri: Some("test://note".into()),
            text: Some("hello".into()),
            ..ResourceInput::default()
        };
        let made = service.create_resource(&actor, input).await;
        let made = made.unwrap_or_else(|e| panic!("{e:?}"));
        let ctx = ToolContext::new("alice");
        let read = service
            .read_resource(ctx, "test://note")
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(read.body, ResourceBody::Text("hello".into()));
        service
            .delete_resource(&actor, &made.name)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
    }
}
