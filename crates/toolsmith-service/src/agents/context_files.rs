//! Spec 001 §3's ContextFileInterceptor: an agent's `read_file` / `write_file` of one of the
//! seven routed context files (`SOUL.md`, `IDENTITY.md`, `AGENTS.md`, `TOOLS.md`,
//! `HEARTBEAT.md`, `USER.md`, `BOOTSTRAP.md`, at the workspace root) reads and writes its
//! context files, never the workspace; and §7's context-file merging, which gives a run those
//! files as its agent's type says.
//!
//! Where a file lives depends on the agent's type ([`AgentType`]):
//!
//! - **the user's copy** — `USER.md` of every agent, and all seven of an `open` agent: a record
//!   of the record store (collection [`COLLECTION`], the user's scope with the agent's id), which
//!   the agent's runs change without making a revision. While the user has no copy, the
//!   definition's file of that name is read (the template).
//! - **the definition's** — the other six of a `predefined` agent: a write is a new revision of
//!   the definition, held to the rules of a model's writes (`by_model.rs`): a definition a
//!   person wrote is not changed by a model (refused, naming who can), a model-written one gets
//!   the revision (audited `agent.update` with `contextFiles` changed), its author unchanged.
//!
//! `BOOTSTRAP.md` written empty is gone (spec 001: "write empty = delete row"): the user's empty
//! copy hides the definition's, for either type, so a person's first-run instructions are done
//! with for that user without the definition changing.
//!
//! [`ServiceFiles`] is the server's [`RoutedFiles`]: this interceptor first, then the memory
//! files' (`memory_files.rs`), then the workspace.

use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use base64::Engine;
use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_builtins::data::{DataError, Records, new_id};
use toolsmith_builtins::files::RoutedFiles;
use toolsmith_core::agent::{AgentRecord, AgentType, ContextFile};
use toolsmith_core::data::{
    DataRecord, FieldMatch, FieldValue, PutOutcome, RecordQuery, RecordScope,
};
use toolsmith_core::{ErrorKind, ToolContext, ToolResult};

use super::AgentInput;
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// The seven routed context files (spec 001 §3).
pub const ROUTED: [&str; 7] = [
    "SOUL.md",
    "IDENTITY.md",
    "AGENTS.md",
    "TOOLS.md",
    "HEARTBEAT.md",
    "USER.md",
    "BOOTSTRAP.md",
];

/// The record store's collection of the users' own context files.
pub const COLLECTION: &str = "context_file";

const BOOTSTRAP: &str = "BOOTSTRAP.md";

/// A workspace path as the interceptors compare it: without leading `./` and `/`.
pub(crate) fn clean(path: &str) -> &str {
    let mut path = path.trim();
    loop {
        if let Some(rest) = path.strip_prefix("./") {
            path = rest;
        } else if let Some(rest) = path.strip_prefix('/') {
            path = rest;
        } else {
            return path;
        }
    }
}

/// The routed context file `path` names, if it names one.
pub fn routed_name(path: &str) -> Option<&'static str> {
    let path = clean(path);
    ROUTED.into_iter().find(|name| *name == path)
}

/// Whether `name` of an agent of type `kind` is its user's (else the definition's).
fn users(kind: AgentType, name: &str) -> bool {
    kind == AgentType::Open || name == "USER.md"
}

fn scope(agent: &AgentRecord) -> RecordScope {
    RecordScope {
        owner: agent.owner.clone(),
        agent: agent.id.clone(),
    }
}

fn text_of(record: &DataRecord) -> String {
    record
        .document
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// How an answer of a routed call reads a [`ServiceError`].
pub(crate) fn error_result(error: &ServiceError) -> ToolResult {
    let kind = match error {
        ServiceError::Validation(_) | ServiceError::TooLarge(_) => ErrorKind::InvalidArguments,
        ServiceError::NotFound(_) => ErrorKind::NotFound,
        ServiceError::Forbidden(_) => ErrorKind::Denied,
        _ => ErrorKind::ExecutionError,
    };
    ToolResult::error(kind, error.to_string())
}

pub(crate) fn data_error(e: DataError) -> ServiceError {
    match e {
        DataError::TooLarge { .. } | DataError::Limit { .. } => {
            ServiceError::Validation(e.to_string())
        }
        other => ServiceError::InvalidState(other.to_string()),
    }
}

/// The text a `write_file` call gives (utf8, or base64 of UTF-8 text), and whether it may
/// replace an existing file.
pub(crate) fn written_text(args: &Value, what: &str) -> Result<(String, bool), ServiceError> {
    let content = args
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| ServiceError::Validation("'content' must be a string".to_owned()))?;
    let text = if args.get("encoding").and_then(Value::as_str) == Some("base64") {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(content)
            .map_err(|e| {
                ServiceError::Validation(format!(
                    "content is not valid base64 ({e}); give the text with encoding utf8"
                ))
            })?;
        String::from_utf8(bytes).map_err(|_| {
            ServiceError::Validation(format!(
                "{what} holds text: give UTF-8 text (encoding utf8)"
            ))
        })?
    } else {
        content.to_owned()
    };
    let overwrite = args
        .get("overwrite")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    Ok((text, overwrite))
}

/// `read_file`'s answer for `text` at `path`: whole, or the lines `startLine`..`endLine`.
pub(crate) fn read_answer(
    path: &str,
    text: &str,
    args: &Value,
    routed_to: &str,
) -> Result<Value, ServiceError> {
    if args.get("encoding").and_then(Value::as_str) == Some("base64") {
        return Err(ServiceError::Validation(format!(
            "'{path}' is text kept {routed_to}: read it without encoding base64"
        )));
    }
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let start = args.get("startLine").and_then(Value::as_u64);
    let end = args.get("endLine").and_then(Value::as_u64);
    let numbered = args
        .get("lineNumbers")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let first = usize::try_from(start.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
    let last = end.map_or(total, |e| usize::try_from(e).unwrap_or(usize::MAX));
    if last < first && end.is_some() {
        return Err(ServiceError::Validation(format!(
            "endLine ({last}) is before startLine ({first}); give endLine >= startLine"
        )));
    }
    let shown: Vec<String> = lines
        .iter()
        .enumerate()
        .skip(first - 1)
        .take(last.saturating_sub(first - 1))
        .map(|(i, line)| {
            if numbered {
                format!("{}\t{line}", i + 1)
            } else {
                (*line).to_owned()
            }
        })
        .collect();
    let content = if start.is_none() && end.is_none() && !numbered {
        text.to_owned()
    } else {
        shown.join("\n")
    };
    Ok(json!({
        "path": path,
        "content": content,
        "totalLines": total,
        "routedTo": routed_to,
    }))
}

/// The answer to `edit_file` on a routed path: it is not a workspace file.
pub(crate) fn no_edit(path: &str, kept: &str) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "'{path}' is {kept}, not a file of your workspace, and edit_file does not reach it: \
             read it with read_file and write the whole new text with write_file"
        ),
    )
}

impl ToolService {
    /// The agent definition the caller of `ctx` is (a run's agent, or a token or
    /// `X-Toolsmith-Agent` naming one of the user's agents by id or name).
    async fn calling_definition(&self, ctx: &ToolContext) -> Option<AgentRecord> {
        let agent = ctx.agent_id.as_deref()?;
        match self.store.get_agent(&ctx.user_id, agent).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(agent, "reading the calling agent failed: {e}");
                None
            }
        }
    }

    /// The user's own copy of `name` of `agent`, if there is one.
    async fn user_context_file(
        &self,
        agent: &AgentRecord,
        name: &str,
    ) -> Result<Option<DataRecord>, ServiceError> {
        let hits = self
            .records()
            .query(&RecordQuery {
                owner: agent.owner.clone(),
                agent: agent.id.clone(),
                collection: COLLECTION.to_owned(),
                fields: vec![FieldMatch {
                    field: "name".to_owned(),
                    value: FieldValue::Text(name.to_owned()),
                }],
                limit: 1,
                ..RecordQuery::default()
            })
            .await
            .map_err(data_error)?;
        Ok(hits.into_iter().next().map(|hit| hit.record))
    }

    /// Every copy of its user's of `agent`'s routed files.
    async fn user_context_files(
        &self,
        agent: &AgentRecord,
    ) -> Result<Vec<DataRecord>, ServiceError> {
        let hits = self
            .records()
            .query(&RecordQuery {
                owner: agent.owner.clone(),
                agent: agent.id.clone(),
                collection: COLLECTION.to_owned(),
                limit: 64,
                ..RecordQuery::default()
            })
            .await
            .map_err(data_error)?;
        Ok(hits.into_iter().map(|hit| hit.record).collect())
    }

    /// Stores the user's copy of `name` of `agent` as `text`: whether it is new.
    async fn put_user_context_file(
        &self,
        agent: &AgentRecord,
        name: &str,
        text: &str,
    ) -> Result<bool, ServiceError> {
        let document = json!({"name": name, "text": text});
        let mut record = DataRecord::new(
            &scope(agent),
            COLLECTION,
            new_id("ctx"),
            document.clone(),
            String::new(),
        );
        record.dedup_key = Some(name.to_owned());
        let records = self.records();
        match records.put(record).await.map_err(data_error)? {
            PutOutcome::Inserted(_) => Ok(true),
            PutOutcome::Duplicate(mut found) => {
                found.document = document;
                found.updated_at = Utc::now();
                records
                    .update(found)
                    .await
                    .map_err(data_error)?
                    .map(|_| false)
                    .ok_or_else(|| {
                        ServiceError::InvalidState(format!(
                            "'{name}' was being replaced at the same time; write it again"
                        ))
                    })
            }
        }
    }

    /// The text `agent`'s run reads as its `name`, and where it comes from; `None` when the
    /// agent has no such file (or its BOOTSTRAP.md was written empty).
    async fn context_file_text(
        &self,
        agent: &AgentRecord,
        name: &str,
    ) -> Result<Option<(String, String)>, ServiceError> {
        let own = self.user_context_file(agent, name).await?;
        let definition = agent
            .definition
            .context_files
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.text.clone());
        let from_definition = || format!("in agent '{}''s definition", agent.name);
        let found = match own {
            Some(own) if users(agent.definition.agent_type, name) => {
                Some((text_of(&own), "as your user's own context file".to_owned()))
            }
            // A predefined agent's own BOOTSTRAP.md is only ever the empty "done" mark.
            Some(own) if name == BOOTSTRAP && text_of(&own).is_empty() => None,
            _ => definition.map(|text| (text, from_definition())),
        };
        Ok(found.filter(|(text, _)| !(name == BOOTSTRAP && text.is_empty())))
    }

    /// `read_file` of the routed file `name` by `agent`.
    async fn read_context_file(
        &self,
        agent: &AgentRecord,
        path: &str,
        name: &str,
        args: &Value,
    ) -> Result<Value, ServiceError> {
        match self.context_file_text(agent, name).await? {
            Some((text, from)) => read_answer(path, &text, args, &format!("context file {from}")),
            None => Err(ServiceError::NotFound(format!(
                "'{name}' is one of your context files (kept by the server, not in your \
                 workspace), and you have none yet: write it with write_file"
            ))),
        }
    }

    /// `write_file` of the routed file `name` by `agent` (the caller of `ctx`).
    async fn write_context_file(
        &self,
        ctx: &ToolContext,
        agent: &AgentRecord,
        path: &str,
        name: &str,
        args: &Value,
    ) -> Result<Value, ServiceError> {
        let (text, overwrite) = written_text(args, name)?;
        let exists = self.context_file_text(agent, name).await?.is_some();
        if exists && !overwrite {
            return Err(ServiceError::InvalidState(format!(
                "'{name}' exists and overwrite is false: read it first, or write with \
                 overwrite true"
            )));
        }
        let bytes = text.len();
        let users_copy =
            users(agent.definition.agent_type, name) || (name == BOOTSTRAP && text.is_empty());
        if users_copy {
            let created = self.put_user_context_file(agent, name, &text).await?;
            return Ok(json!({
                "path": path,
                "bytes": bytes,
                "created": created,
                "routedTo": "context file: your user's own copy",
            }));
        }
        // The definition's file: a new revision, under the rules of a model's writes.
        if agent.definition.written_by_model.is_none() {
            return Err(ServiceError::Forbidden(format!(
                "'{name}' belongs to agent '{}''s definition, which a person wrote: a model may \
                 not change it. Ask the person to change it (PUT /api/v1/agents/{} with \
                 contextFiles, or `toolsmith agent update`), or to make the agent open \
                 (agentType \"open\"), whose context files are its user's own",
                agent.name, agent.name
            )));
        }
        let mut definition = agent.definition.clone();
        match definition.context_files.iter_mut().find(|f| f.name == name) {
            Some(file) => file.text = text,
            None => definition.context_files.push(ContextFile {
                name: name.to_owned(),
                text,
            }),
        }
        let actor = Actor::llm(ctx.user_id.clone())
            .with_agent(ctx.agent_id.clone())
            .with_member(ctx.member.clone());
        let input = AgentInput {
            name: agent.name.clone(),
            definition,
        };
        let updated = self
            .update_agent_as(&actor, &agent.id, input, Some(agent.revision))
            .await?;
        Ok(json!({
            "path": path,
            "bytes": bytes,
            "created": !exists,
            "routedTo": format!("context file of agent '{}''s definition", agent.name),
            "revision": updated.revision,
        }))
    }

    /// The context files of a run of `agent` (spec 001 §7's merging): the definition's, each
    /// replaced by its user's copy where the agent's type makes the file the user's (and the
    /// user has one); the user's files the definition lacks after them; an emptied
    /// BOOTSTRAP.md left out. Base files added later (DELEGATION.md, TEAM.md) are kept.
    pub(crate) async fn with_user_context_files(&self, mut agent: AgentRecord) -> AgentRecord {
        let own = match self.user_context_files(&agent).await {
            Ok(own) => own,
            Err(e) => {
                tracing::warn!(agent = %agent.id, "reading the user's context files failed: {e}");
                return agent;
            }
        };
        let kind = agent.definition.agent_type;
        let mut files = std::mem::take(&mut agent.definition.context_files);
        for record in &own {
            let name = record
                .document
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(name) = ROUTED.into_iter().find(|n| *n == name) else {
                continue;
            };
            let text = text_of(record);
            if name == BOOTSTRAP && text.is_empty() {
                files.retain(|f| f.name != BOOTSTRAP);
                continue;
            }
            if !users(kind, name) {
                continue;
            }
            match files.iter_mut().find(|f| f.name == name) {
                Some(file) => file.text = text,
                None => files.push(ContextFile {
                    name: name.to_owned(),
                    text,
                }),
            }
        }
        agent.definition.context_files = files;
        agent
    }

    /// The answer to a routed call of `tool` on `args` by the caller of `ctx`, when its path
    /// is one of the caller's context files; `None` otherwise.
    async fn route_context_file(
        &self,
        tool: &str,
        args: &Value,
        ctx: &ToolContext,
    ) -> Option<ToolResult> {
        let path = args.get("path").and_then(Value::as_str)?;
        let name = routed_name(path)?;
        let agent = self.calling_definition(ctx).await?;
        let answer = match tool {
            "read_file" => self.read_context_file(&agent, path, name, args).await,
            "write_file" => self.write_context_file(ctx, &agent, path, name, args).await,
            _ => return Some(no_edit(path, "one of your context files")),
        };
        Some(match answer {
            Ok(content) => ToolResult::ok(content),
            Err(e) => error_result(&e),
        })
    }
}

/// The server's routing of the file tools (spec 001 §3): an agent's context files, then its
/// memory files, then the workspace.
#[derive(Default)]
pub(crate) struct ServiceFiles {
    service: OnceLock<Weak<ToolService>>,
}

impl std::fmt::Debug for ServiceFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceFiles")
    }
}

impl ServiceFiles {
    pub(crate) fn bind(&self, service: &Arc<ToolService>) {
        let _ = self.service.set(Arc::downgrade(service));
    }
}

#[async_trait]
impl RoutedFiles for ServiceFiles {
    async fn route(&self, tool: &str, args: &Value, ctx: &ToolContext) -> Option<ToolResult> {
        // Only an agent's calls are routed; a person's reach the workspace.
        ctx.agent_id.as_ref()?;
        let service = self.service.get().and_then(Weak::upgrade)?;
        if let Some(answer) = service.route_context_file(tool, args, ctx).await {
            return Some(answer);
        }
        service.route_memory_file(tool, args, ctx).await
    }
}
