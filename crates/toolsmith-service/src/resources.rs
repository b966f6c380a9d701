//! What a caller may read as context (issue 40): MCP resources with stable URIs, under the
//! same rules as the tools that reach the same data.
//!
//! - `toolsmith://workspace/<path>` — a file of the caller's workspace (the user's, or the
//!   agent's with `workspace_per_agent`). Listed and read only while the caller may call the
//!   `read_file` built-in (its group on, the policy allowing it), and read *through* that
//!   built-in (`ToolService::execute`), so the workspace's path checks and deny-list, the
//!   policy, the limits, the scrubbing of the caller's own secrets and the execution record are
//!   exactly a `read_file` call's. Text (UTF-8) is a text resource with a MIME type from the
//!   file's extension; anything else is a blob.
//! - `toolsmith://tools/<name>/source` — the stored code of a custom tool the caller can see
//!   and call (as `tools/list` decides): JS as `text/javascript`, a command tool's spec as
//!   JSON, an HTTP tool's definition as YAML or JSON.
//!
//! The listing is workspace files (path order) then tool sources (name order), in pages of
//! [`LIST_PAGE`]; the cursor is the offset of the next page. The workspace walk is bounded
//! ([`MAX_LISTED_FILES`], [`MAX_DEPTH`]); a file beyond it is still readable by its URI.

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{Value, json};
use toolsmith_builtins::workspace::{EntryKind, WalkOptions, WorkspaceChange, WsPath};
use toolsmith_core::{ErrorKind, ToolContext, ToolKind, ToolOrigin};

use crate::ServiceError;
use crate::service::ToolService;

/// The prefix of a workspace file's URI.
pub const WORKSPACE_PREFIX: &str = "toolsmith://workspace/";
/// The prefix of a tool source's URI (`toolsmith://tools/<name>/source`).
pub const TOOLS_PREFIX: &str = "toolsmith://tools/";
const SOURCE_SUFFIX: &str = "/source";
/// The URI template of workspace files (RFC 6570 reserved expansion: the path keeps its `/`).
pub const WORKSPACE_TEMPLATE: &str = "toolsmith://workspace/{+path}";
/// The URI template of tool sources.
pub const TOOL_SOURCE_TEMPLATE: &str = "toolsmith://tools/{name}/source";
/// Resources per `resources/list` page.
pub const LIST_PAGE: usize = 100;
/// Most workspace entries visited for one listing.
pub const MAX_LISTED_FILES: usize = 5_000;
/// Deepest folder level a listing descends to.
pub const MAX_DEPTH: usize = 16;
/// Most values one completion answers with.
pub const MAX_COMPLETIONS: usize = 100;
/// The built-in whose rules a workspace resource follows.
const READ_FILE: &str = "read_file";

/// One listed resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: String,
    pub size: Option<u64>,
}

/// One page of the listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourcePage {
    pub resources: Vec<ResourceEntry>,
    /// The cursor of the next page; `None` on the last.
    pub next_cursor: Option<String>,
}

/// A resource template (RFC 6570).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateEntry {
    pub uri_template: String,
    pub name: String,
    pub title: String,
    pub description: String,
    /// What every resource of the template is (a user's template may say).
    pub mime_type: Option<String>,
}

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    Text(String),
    Blob(Vec<u8>),
}

/// A read resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContent {
    pub uri: String,
    pub mime_type: String,
    pub body: ResourceBody,
}

impl ResourceBody {
    /// The blob as base64 (MCP's `blob`), or `None` for text.
    #[must_use]
    pub fn base64(&self) -> Option<String> {
        match self {
            ResourceBody::Blob(bytes) => {
                Some(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            ResourceBody::Text(_) => None,
        }
    }
}

/// What a URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceRef {
    /// A file of the caller's workspace, by its path relative to the workspace root.
    WorkspaceFile(String),
    /// The source of the caller's custom tool `name`.
    ToolSource(String),
}

impl ResourceRef {
    /// The resource `uri` names, if it is one of Toolsmith's (`None` for any other scheme).
    #[must_use]
    pub fn parse(uri: &str) -> Option<ResourceRef> {
        if let Some(path) = uri.strip_prefix(WORKSPACE_PREFIX) {
            return Some(ResourceRef::WorkspaceFile(percent_decode(path)));
        }
        let name = uri
            .strip_prefix(TOOLS_PREFIX)?
            .strip_suffix(SOURCE_SUFFIX)?;
        Some(ResourceRef::ToolSource(percent_decode(name)))
    }

    /// The URI of this resource.
    #[must_use]
    pub fn uri(&self) -> String {
        match self {
            ResourceRef::WorkspaceFile(path) => format!("{WORKSPACE_PREFIX}{path}"),
            ResourceRef::ToolSource(name) => format!("{TOOLS_PREFIX}{name}{SOURCE_SUFFIX}"),
        }
    }
}

/// `%XX` escapes decoded (a client may escape a path's characters); anything malformed is
/// kept as written, and the workspace's path checks judge the result.
fn percent_decode(raw: &str) -> String {
    if !raw.contains('%') {
        return raw.to_owned();
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(value)) => {
                out.push(value);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| raw.to_owned())
}

/// The MIME type of a workspace file, from its extension; `None` for an unknown one.
#[must_use]
pub fn mime_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" | "text" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "py" => "text/x-python",
        "rs" => "text/x-rust",
        "sh" => "text/x-shellscript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        _ => return None,
    })
}

/// Whether a file of this MIME type is never text (read as a blob at once).
fn binary_mime(mime: Option<&str>) -> bool {
    mime.is_some_and(|m| {
        m.starts_with("image/") && m != "image/svg+xml"
            || m.starts_with("audio/")
            || matches!(
                m,
                "application/pdf" | "application/zip" | "application/gzip"
            )
    })
}

/// The MIME type a custom tool's source is shown with.
fn source_mime(kind: ToolKind, code: &str) -> &'static str {
    match kind {
        ToolKind::Js => "text/javascript",
        ToolKind::Command => "application/json",
        ToolKind::Http if code.trim_start().starts_with('{') => "application/json",
        ToolKind::Http => "application/yaml",
    }
}

fn not_found(uri: &str, why: &str) -> ServiceError {
    ServiceError::NotFound(format!("no resource {uri}: {why}"))
}

impl ToolService {
    /// Whether the caller of `ctx` may read its workspace as resources: it may call the
    /// `read_file` built-in (group on, the policy allowing it) and a workspace is configured.
    pub fn may_read_workspace(&self, ctx: &ToolContext) -> bool {
        self.workspaces().is_some()
            && self
                .registry()
                .get(&ctx.user_id, READ_FILE)
                .is_some_and(|tool| self.may_call(ctx, &tool))
    }

    /// The workspace folder (on the host) of the caller of `ctx`, when it may read it: what a
    /// [`WorkspaceChange`] is compared with.
    pub fn workspace_root(&self, ctx: &ToolContext) -> Option<PathBuf> {
        if !self.may_read_workspace(ctx) {
            return None;
        }
        let workspace = self.workspaces()?.for_call(ctx).ok()?;
        Some(workspace.root_path().to_owned())
    }

    /// Every later change of a workspace file made through the workspace operations, for
    /// `notifications/resources/updated` (`None` without workspaces).
    pub fn workspace_changes(&self) -> Option<tokio::sync::broadcast::Receiver<WorkspaceChange>> {
        self.workspaces().map(|w| w.subscribe_changes())
    }

    /// One page of the resources the caller of `ctx` may read (module docs). `cursor` is the
    /// `next_cursor` of the previous page; `files` is whether the caller's face lets it read
    /// workspace files at all (MCP: the `tools:execute` scope, as a `read_file` call needs).
    pub async fn list_resources(
        &self,
        ctx: &ToolContext,
        cursor: Option<&str>,
        files: bool,
    ) -> Result<ResourcePage, ServiceError> {
        let start = match cursor {
            None => 0,
            Some(text) => text.parse::<usize>().map_err(|_| {
                ServiceError::Validation(format!(
                    "cursor '{text}' is not one this server gave; pass the nextCursor of the previous page, or none for the first"
                ))
            })?,
        };
        let mut all = if files {
            self.workspace_entries(ctx)
        } else {
            Vec::new()
        };
        all.extend(self.tool_source_entries(ctx));
        let own = self.user_resource_entries(&ctx.user_id).await?;
        // The bridged servers' resources after the caller's own (a URI the caller defined
        // answers for the caller's own).
        let bridged: Vec<ResourceEntry> = self
            .bridged_resources(ctx)
            .into_iter()
            .filter(|b| !own.iter().any(|r| r.uri == b.uri))
            .collect();
        all.extend(own);
        all.extend(bridged);
        let end = start.saturating_add(LIST_PAGE).min(all.len());
        let resources = all.get(start..end).map(<[_]>::to_vec).unwrap_or_default();
        let next_cursor = (end < all.len()).then(|| end.to_string());
        Ok(ResourcePage {
            resources,
            next_cursor,
        })
    }

    /// The files of the caller's workspace (bounded walk, hidden entries left out).
    fn workspace_files(&self, ctx: &ToolContext) -> Vec<(String, u64)> {
        if !self.may_read_workspace(ctx) {
            return Vec::new();
        }
        let Some(Ok(workspace)) = self.workspaces().map(|w| w.for_call(ctx)) else {
            return Vec::new();
        };
        let options = WalkOptions {
            max_depth: MAX_DEPTH,
            max_visits: MAX_LISTED_FILES,
        };
        let mut files = Vec::new();
        let _ = workspace.walk(&WsPath::root(), options, |entry| {
            if entry.meta.kind == EntryKind::File {
                files.push((entry.path.to_string(), entry.meta.size));
            }
            true
        });
        files.sort();
        files
    }

    fn workspace_entries(&self, ctx: &ToolContext) -> Vec<ResourceEntry> {
        self.workspace_files(ctx)
            .into_iter()
            .map(|(path, size)| {
                let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
                ResourceEntry {
                    uri: ResourceRef::WorkspaceFile(path.clone()).uri(),
                    name,
                    title: Some(path.clone()),
                    description: Some(format!("{path} in your workspace")),
                    mime_type: mime_of(&path)
                        .unwrap_or("application/octet-stream")
                        .to_owned(),
                    size: Some(size),
                }
            })
            .collect()
    }

    /// The custom tools the caller may see and call, by name.
    fn readable_tools(&self, ctx: &ToolContext) -> Vec<(String, String)> {
        let mut tools: Vec<(String, String)> = self
            .visible_tools(ctx)
            .into_iter()
            .filter(|tool| matches!(tool.origin, ToolOrigin::Custom { .. }))
            .map(|tool| {
                (
                    tool.definition.name.clone(),
                    tool.definition.description.clone(),
                )
            })
            .collect();
        tools.sort();
        tools
    }

    fn tool_source_entries(&self, ctx: &ToolContext) -> Vec<ResourceEntry> {
        self.readable_tools(ctx)
            .into_iter()
            .map(|(name, description)| ResourceEntry {
                uri: ResourceRef::ToolSource(name.clone()).uri(),
                title: Some(format!("Source of the tool {name}")),
                name: format!("{name} (source)"),
                description: Some(description),
                // The kind is in the store; the listing keeps to the registry.
                mime_type: "text/plain".to_owned(),
                size: None,
            })
            .collect()
    }

    /// The user's own resources (not templates), by URI.
    async fn user_resource_entries(&self, user: &str) -> Result<Vec<ResourceEntry>, ServiceError> {
        let mut entries: Vec<ResourceEntry> = self
            .list_user_resources(user)
            .await?
            .into_iter()
            .filter_map(|r| {
                let uri = r.uri?;
                let default_mime = match r.kind {
                    user::ResourceKind::Blob => "application/octet-stream",
                    _ => "text/plain",
                };
                Some(ResourceEntry {
                    uri,
                    name: r.name,
                    title: r.title,
                    description: Some(r.description),
                    mime_type: r.mime_type.unwrap_or_else(|| default_mime.to_owned()),
                    size: Some(r.size),
                })
            })
            .collect();
        entries.sort_by(|a, b| a.uri.cmp(&b.uri));
        Ok(entries)
    }

    /// The resource templates this server reads: Toolsmith's own, then the user's.
    pub async fn resource_templates(
        &self,
        ctx: &ToolContext,
    ) -> Result<Vec<TemplateEntry>, ServiceError> {
        let mut templates = Vec::new();
        if self.may_read_workspace(ctx) {
            templates.push(TemplateEntry {
                uri_template: WORKSPACE_TEMPLATE.to_owned(),
                name: "workspace-file".to_owned(),
                title: "A file of your workspace".to_owned(),
                description: "Any file of your workspace by its path (as read_file reads it)"
                    .to_owned(),
                mime_type: None,
            });
        }
        templates.push(TemplateEntry {
            uri_template: TOOL_SOURCE_TEMPLATE.to_owned(),
            name: "tool-source".to_owned(),
            title: "The source of one of your tools".to_owned(),
            description: "The stored code of a custom tool you can call".to_owned(),
            mime_type: None,
        });
        for r in self.list_user_resources(&ctx.user_id).await? {
            if let Some(uri_template) = r.uri_template {
                templates.push(TemplateEntry {
                    uri_template,
                    title: r.title.unwrap_or_else(|| r.name.clone()),
                    name: r.name,
                    description: r.description,
                    mime_type: r.mime_type,
                });
            }
        }
        let bridged: Vec<TemplateEntry> = self
            .bridged_templates(ctx)
            .into_iter()
            .filter(|b| !templates.iter().any(|t| t.uri_template == b.uri_template))
            .collect();
        templates.extend(bridged);
        Ok(templates)
    }

    /// Values for the variable `argument` of the template `uri_template` starting with
    /// `prefix` (`completion/complete`), at most [`MAX_COMPLETIONS`], and whether there were
    /// more. Unknown templates and variables complete to nothing. `files` is what it is for
    /// [`ToolService::list_resources`]: workspace paths complete only for a caller who may
    /// read the workspace (a completion of file names is a listing of them).
    #[must_use]
    pub fn complete_resource(
        &self,
        ctx: &ToolContext,
        uri_template: &str,
        argument: &str,
        prefix: &str,
        files: bool,
    ) -> (Vec<String>, bool) {
        let candidates: Vec<String> = match (uri_template, argument) {
            (WORKSPACE_TEMPLATE, "path") if files => self
                .workspace_files(ctx)
                .into_iter()
                .map(|(path, _)| path)
                .collect(),
            (TOOL_SOURCE_TEMPLATE, "name") => self
                .readable_tools(ctx)
                .into_iter()
                .map(|(name, _)| name)
                .collect(),
            _ => Vec::new(),
        };
        let mut matching: Vec<String> = candidates
            .into_iter()
            .filter(|value| value.starts_with(prefix))
            .collect();
        let more = matching.len() > MAX_COMPLETIONS;
        matching.truncate(MAX_COMPLETIONS);
        (matching, more)
    }

    /// Reads the resource `uri` for the caller of `ctx` (module docs). An unknown URI, or one
    /// the caller may not read, is `NotFound` naming why.
    pub async fn read_resource(
        &self,
        ctx: ToolContext,
        uri: &str,
    ) -> Result<ResourceContent, ServiceError> {
        match ResourceRef::parse(uri) {
            Some(ResourceRef::WorkspaceFile(path)) => {
                self.read_workspace_file(ctx, uri, &path).await
            }
            Some(ResourceRef::ToolSource(name)) => self.read_tool_source(&ctx, uri, &name).await,
            None => match self.read_user_resource(ctx, uri).await? {
                Some(content) => Ok(content),
                None => Err(not_found(
                    uri,
                    "Toolsmith's resources are toolsmith://workspace/<path>, toolsmith://tools/<name>/source and the resources and templates you defined (GET /api/v1/resources); list them with resources/list",
                )),
            },
        }
    }

    async fn read_workspace_file(
        &self,
        ctx: ToolContext,
        uri: &str,
        path: &str,
    ) -> Result<ResourceContent, ServiceError> {
        if !self.may_read_workspace(&ctx) {
            return Err(not_found(
                uri,
                "your workspace is not readable here (no workspace is configured, or the read_file tool is switched off or denied to you by the policy)",
            ));
        }
        let mime = mime_of(path);
        if !binary_mime(mime) {
            let result = self
                .execute(READ_FILE, json!({"path": path}), ctx.clone())
                .await;
            if !result.is_error {
                let text = result
                    .content
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                return Ok(ResourceContent {
                    uri: uri.to_owned(),
                    mime_type: mime.unwrap_or("text/plain").to_owned(),
                    body: ResourceBody::Text(text),
                });
            }
            let message = result.error_message().unwrap_or_default();
            if !message.contains("encoding: base64") {
                return Err(read_failure(uri, &result));
            }
        }
        let result = self
            .execute(READ_FILE, json!({"path": path, "encoding": "base64"}), ctx)
            .await;
        if result.is_error {
            return Err(read_failure(uri, &result));
        }
        let encoded = result
            .content
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| ServiceError::Validation(format!("{uri}: read_file's answer: {e}")))?;
        Ok(ResourceContent {
            uri: uri.to_owned(),
            mime_type: mime.unwrap_or("application/octet-stream").to_owned(),
            body: ResourceBody::Blob(bytes),
        })
    }

    async fn read_tool_source(
        &self,
        ctx: &ToolContext,
        uri: &str,
        name: &str,
    ) -> Result<ResourceContent, ServiceError> {
        let callable = self
            .registry()
            .get(&ctx.user_id, name)
            .filter(|tool| matches!(tool.origin, ToolOrigin::Custom { .. }))
            .is_some_and(|tool| self.may_call(ctx, &tool));
        if !callable {
            return Err(not_found(
                uri,
                "no active custom tool of that name that you may call (list your tools with tools/list)",
            ));
        }
        let record = self
            .store
            .get_tool_by_name(&ctx.user_id, name)
            .await?
            .ok_or_else(|| not_found(uri, "the tool was deleted"))?;
        Ok(ResourceContent {
            uri: uri.to_owned(),
            mime_type: source_mime(record.kind, &record.code).to_owned(),
            body: ResourceBody::Text(record.code),
        })
    }

    /// The revision of the caller's custom tool `name` while the caller may read its source
    /// (what a subscription to its source compares).
    pub async fn tool_source_revision(&self, ctx: &ToolContext, name: &str) -> Option<i64> {
        let callable = self
            .registry()
            .get(&ctx.user_id, name)
            .filter(|tool| matches!(tool.origin, ToolOrigin::Custom { .. }))
            .is_some_and(|tool| self.may_call(ctx, &tool));
        if !callable {
            return None;
        }
        let record = self
            .store
            .get_tool_by_name(&ctx.user_id, name)
            .await
            .ok()??;
        Some(record.revision)
    }
}

/// A failed `read_file` call as the service's error: its message, which names the fix.
fn read_failure(uri: &str, result: &toolsmith_core::ToolResult) -> ServiceError {
    let message = result.error_message().unwrap_or("read_file failed");
    let text = format!("{uri}: {message}");
    match result.error_kind() {
        Some(ErrorKind::NotFound) => ServiceError::NotFound(text),
        _ if message.contains("not found") || message.contains("does not exist") => {
            ServiceError::NotFound(text)
        }
        Some(ErrorKind::Denied | ErrorKind::ApprovalRequired) => ServiceError::Forbidden(text),
        Some(ErrorKind::RateLimited) => ServiceError::LimitReached(text),
        _ => ServiceError::Validation(text),
    }
}

pub mod user;

#[cfg(test)]
mod tests;
