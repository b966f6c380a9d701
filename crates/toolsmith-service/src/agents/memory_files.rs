//! Spec 001 §3's MemoryInterceptor: an agent's `read_file` / `write_file` of `MEMORY.md`,
//! `memory.md` or a path under `memory/` reads and writes its memory — the `memory` built-ins'
//! store (the record store's `memory` collection, scoped to the caller's user and agent as
//! `remember` and `recall` are) — never the workspace. Each file is one memory of type
//! `document`, tagged `file`, whose text is indexed for full-text search on write, so `recall`
//! and `memory_search` find what was written; `memory_get` and `forget` take its id.
//!
//! The memory tools' rules hold: reading needs the caller to be allowed `memory_get`, writing
//! `remember` (so a subagent, whose deny list holds `memory_get`, reads no memory this way
//! either). Writing a file empty forgets it.

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_builtins::data::{DataError, Records, new_id};
use toolsmith_core::data::{
    DataRecord, FieldMatch, FieldValue, PutOutcome, RecordQuery, RecordScope,
};
use toolsmith_core::{ToolContext, ToolResult};

use super::context_files::{clean, data_error, error_result, no_edit, read_answer, written_text};
use crate::{ServiceError, ToolService};

/// The memory kind of a memory file.
pub const KIND: &str = "document";
/// The tag every memory file carries (`recall` with `tags: ["file"]` finds only them).
pub const TAG: &str = "file";

/// The memory file `path` names, cleaned; `None` for any other path; an error for a path
/// under `memory/` that is not a plain file path.
pub fn memory_path(path: &str) -> Option<Result<String, ServiceError>> {
    let path = clean(path);
    if path == "MEMORY.md" || path == "memory.md" {
        return Some(Ok(path.to_owned()));
    }
    let rest = path.strip_prefix("memory/")?;
    let plain = !rest.is_empty()
        && rest
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    Some(if plain {
        Ok(path.to_owned())
    } else {
        Err(ServiceError::Validation(format!(
            "'{path}' is under memory/, which is your memory: name a file such as \
             memory/projects.md (no empty, '.' or '..' parts)"
        )))
    })
}

fn text_of(record: &DataRecord) -> String {
    record
        .document
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl ToolService {
    /// Refuses the memory file call unless the caller may call `tool` (`memory_get` to read,
    /// `remember` to write), as its policy and scope say.
    fn may_reach_memory(
        &self,
        ctx: &ToolContext,
        tool: &str,
        path: &str,
    ) -> Result<(), ServiceError> {
        let refusal = |why: String| {
            ServiceError::Forbidden(format!(
                "'{path}' is your memory (kept by the server, not in your workspace), and {} it \
                 needs '{tool}', which you may not call: {why}. Ask the person to allow \
                 group:memory for this agent",
                if tool == "remember" {
                    "writing"
                } else {
                    "reading"
                }
            ))
        };
        let Some(found) = self.registry.get(&ctx.user_id, tool) else {
            return Err(refusal("it is not registered".to_owned()));
        };
        if !found.is_visible_to(ctx.agent_id.as_deref()) {
            return Err(refusal("it is not visible to you".to_owned()));
        }
        self.policy.check(ctx, &found).map_err(refusal)
    }

    /// The memory file `path` of `scope`, if written.
    async fn memory_file(
        &self,
        scope: &RecordScope,
        path: &str,
    ) -> Result<Option<DataRecord>, ServiceError> {
        let hits = self
            .records()
            .query(&RecordQuery {
                owner: scope.owner.clone(),
                agent: scope.agent.clone(),
                collection: toolsmith_builtins::memory::COLLECTION.to_owned(),
                kind: Some(KIND.to_owned()),
                fields: vec![FieldMatch {
                    field: "path".to_owned(),
                    value: FieldValue::Text(path.to_owned()),
                }],
                limit: 1,
                ..RecordQuery::default()
            })
            .await
            .map_err(data_error)?;
        Ok(hits.into_iter().next().map(|hit| hit.record))
    }

    async fn write_memory_file(
        &self,
        scope: &RecordScope,
        path: &str,
        args: &Value,
    ) -> Result<Value, ServiceError> {
        let (text, overwrite) = written_text(args, path)?;
        let records = self.records();
        let existing = self.memory_file(scope, path).await?;
        if existing.is_some() && !overwrite {
            return Err(ServiceError::InvalidState(format!(
                "'{path}' exists and overwrite is false: read it first, or write with \
                 overwrite true"
            )));
        }
        if text.is_empty() {
            let forgotten = match &existing {
                Some(found) => records
                    .delete(scope, toolsmith_builtins::memory::COLLECTION, &found.id)
                    .await
                    .map_err(data_error)?,
                None => false,
            };
            return Ok(json!({"path": path, "bytes": 0, "forgotten": forgotten,
                "routedTo": "memory"}));
        }
        let now = Utc::now();
        let document = json!({"content": text, "path": path});
        let search_text = format!("{path}\n{text}");
        let record = DataRecord {
            collection: toolsmith_builtins::memory::COLLECTION.to_owned(),
            id: new_id("mem"),
            owner: scope.owner.clone(),
            agent: scope.agent.clone(),
            document: document.clone(),
            search_text: search_text.clone(),
            dedup_key: Some(format!("file:{path}")),
            kind: Some(KIND.to_owned()),
            category: None,
            weight: toolsmith_builtins::memory::DEFAULT_IMPORTANCE,
            at: None,
            tags: vec![TAG.to_owned()],
            created_at: now,
            updated_at: now,
        };
        let too_large = |e: DataError| match e {
            DataError::TooLarge { bytes, max, .. } => ServiceError::Validation(format!(
                "'{path}' would be a memory of {bytes} bytes; one memory file holds at most \
                 {max} (max_record_bytes): split it into several files under memory/"
            )),
            other => data_error(other),
        };
        let (stored, created) = match records.put(record).await.map_err(too_large)? {
            PutOutcome::Inserted(stored) => (stored, true),
            PutOutcome::Duplicate(mut found) => {
                found.document = document;
                found.search_text = search_text;
                found.updated_at = now;
                let stored = records
                    .update(found)
                    .await
                    .map_err(too_large)?
                    .ok_or_else(|| {
                        ServiceError::InvalidState(format!(
                            "'{path}' was being forgotten at the same time; write it again"
                        ))
                    })?;
                (stored, false)
            }
        };
        Ok(json!({
            "path": path,
            "bytes": text.len(),
            "created": created,
            "routedTo": "memory",
            "memory": stored.id,
        }))
    }

    /// The answer to a routed call of `tool` on `args` by the caller of `ctx`, when its path
    /// is a memory file; `None` otherwise.
    pub(crate) async fn route_memory_file(
        &self,
        tool: &str,
        args: &Value,
        ctx: &ToolContext,
    ) -> Option<ToolResult> {
        let raw = args.get("path").and_then(Value::as_str)?;
        let path = match memory_path(raw)? {
            Ok(path) => path,
            Err(e) => return Some(error_result(&e)),
        };
        let scope = RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref());
        let answer = match tool {
            "read_file" => match self.may_reach_memory(ctx, "memory_get", &path) {
                Err(e) => Err(e),
                Ok(()) => match self.memory_file(&scope, &path).await {
                    Ok(Some(found)) => read_answer(&path, &text_of(&found), args, "memory"),
                    Ok(None) => Err(ServiceError::NotFound(format!(
                        "'{path}' is in your memory (kept by the server, not in your \
                         workspace), and nothing is written there yet: write it with \
                         write_file; recall searches all your memory"
                    ))),
                    Err(e) => Err(e),
                },
            },
            "write_file" => match self.may_reach_memory(ctx, "remember", &path) {
                Err(e) => Err(e),
                Ok(()) => self.write_memory_file(&scope, &path, args).await,
            },
            _ => return Some(no_edit(&path, "in your memory")),
        };
        Some(match answer {
            Ok(content) => ToolResult::ok(content),
            Err(e) => error_result(&e),
        })
    }
}
