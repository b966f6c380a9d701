//! Prompts made at runtime, on SQLite (`prompts`, `prompt_versions`): one writer connection,
//! so the name check and the revision check inside a write's transaction are exact.

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use toolsmith_core::CreatedBy;
use toolsmith_core::prompt::{PromptRecord, PromptUpdate, PromptVersionRecord};

use super::rows::{backend, json_text, parse_time, timestamp};
use crate::StoreError;
use crate::agent_rows::corrupt;

store_on_connections! {
    impl PromptStore {
        write fn insert_prompt(prompt: &PromptRecord) -> bool = insert(&prompt);
        write fn update_prompt(prompt: &PromptRecord, new_version: bool) -> PromptUpdate
            = update(&prompt, new_version);
        read fn get_prompt(owner: &str, id_or_name: &str) -> Option<PromptRecord>
            = get(&owner, &id_or_name);
        read fn list_prompts(owner: &str) -> Vec<PromptRecord> = list(&owner);
        write fn delete_prompt(owner: &str, id: &str) -> bool = delete(&owner, &id);
        read fn prompt_versions(owner: &str, id: &str) -> Vec<PromptVersionRecord>
            = versions(&owner, &id);
        read fn prompt_fingerprints() -> Vec<(String, String)> = fingerprints();
    }
}

const COLUMNS: &str =
    "id, owner, agent, name, revision, enabled, created_by, definition, created_at, updated_at";

/// A column read as `T`, or the corrupt-row error naming `what`.
fn parsed<T>(
    row: &Row<'_>,
    i: usize,
    id: &str,
    what: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, StoreError> {
    let text: String = row.get(i).map_err(backend)?;
    parse(&text).map_err(|e| corrupt("prompts", id, what, e))
}

fn created_by(text: &str) -> Result<CreatedBy, String> {
    match text {
        "user" => Ok(CreatedBy::User),
        "llm" => Ok(CreatedBy::Llm),
        other => Err(format!("'{other}'")),
    }
}

fn prompt_from_row(row: &Row<'_>) -> Result<PromptRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let agent: String = row.get(2).map_err(backend)?;
    let enabled: i64 = row.get(5).map_err(backend)?;
    Ok(PromptRecord {
        owner: row.get(1).map_err(backend)?,
        agent: (!agent.is_empty()).then_some(agent),
        name: row.get(3).map_err(backend)?,
        revision: row.get(4).map_err(backend)?,
        enabled: enabled != 0,
        created_by: parsed(row, 6, &id, "created_by", created_by)?,
        definition: parsed(row, 7, &id, "definition", |t| {
            serde_json::from_str(t).map_err(|e| e.to_string())
        })?,
        created_at: parsed(row, 8, &id, "created_at", parse_time)?,
        updated_at: parsed(row, 9, &id, "updated_at", parse_time)?,
        id,
    })
}

fn keep_version(tx: &Connection, prompt: &PromptRecord) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO prompt_versions (prompt_id, revision, created_by, definition, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            prompt.id,
            prompt.revision,
            prompt.created_by.as_str(),
            json_text(&prompt.definition),
            timestamp(&prompt.updated_at)
        ],
    )
    .map_err(backend)?;
    Ok(())
}

/// Whether another prompt of `prompt`'s owner has its name.
fn clashes(tx: &Connection, prompt: &PromptRecord) -> Result<bool, StoreError> {
    tx.prepare("SELECT 1 FROM prompts WHERE owner = ?1 AND name = ?2 AND id <> ?3")
        .and_then(|mut stmt| stmt.exists(params![prompt.owner, prompt.name, prompt.id]))
        .map_err(backend)
}

fn insert(conn: &mut Connection, prompt: &PromptRecord) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    if clashes(&tx, prompt)? {
        return Ok(false);
    }
    tx.execute(
        &format!(
            "INSERT INTO prompts ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
        ),
        params![
            prompt.id,
            prompt.owner,
            prompt.agent.as_deref().unwrap_or(""),
            prompt.name,
            prompt.revision,
            prompt.enabled,
            prompt.created_by.as_str(),
            json_text(&prompt.definition),
            timestamp(&prompt.created_at),
            timestamp(&prompt.updated_at),
        ],
    )
    .map_err(backend)?;
    keep_version(&tx, prompt)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn update(
    conn: &mut Connection,
    prompt: &PromptRecord,
    new_version: bool,
) -> Result<PromptUpdate, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let revision: Option<i64> = tx
        .query_row(
            "SELECT revision FROM prompts WHERE id = ?1 AND owner = ?2",
            params![prompt.id, prompt.owner],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    match revision {
        None => return Ok(PromptUpdate::NotFound),
        Some(actual) if actual + 1 != prompt.revision => {
            return Ok(PromptUpdate::Conflict { actual });
        }
        Some(_) => {}
    }
    if clashes(&tx, prompt)? {
        return Ok(PromptUpdate::NameTaken);
    }
    tx.execute(
        "UPDATE prompts SET agent = ?3, name = ?4, revision = ?5, enabled = ?6, \
         created_by = ?7, definition = ?8, updated_at = ?9 WHERE id = ?1 AND owner = ?2",
        params![
            prompt.id,
            prompt.owner,
            prompt.agent.as_deref().unwrap_or(""),
            prompt.name,
            prompt.revision,
            prompt.enabled,
            prompt.created_by.as_str(),
            json_text(&prompt.definition),
            timestamp(&prompt.updated_at),
        ],
    )
    .map_err(backend)?;
    if new_version {
        keep_version(&tx, prompt)?;
    }
    tx.commit().map_err(backend)?;
    Ok(PromptUpdate::Updated)
}

fn get(
    conn: &Connection,
    owner: &str,
    id_or_name: &str,
) -> Result<Option<PromptRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM prompts WHERE owner = ?1 AND (id = ?2 OR name = ?2) \
             ORDER BY id = ?2 DESC LIMIT 1"
        ),
        params![owner, id_or_name],
        |row| Ok(prompt_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn list(conn: &Connection, owner: &str) -> Result<Vec<PromptRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {COLUMNS} FROM prompts WHERE owner = ?1 ORDER BY name"
        ))
        .map_err(backend)?;
    let rows = stmt
        .query_map([owner], |row| Ok(prompt_from_row(row)))
        .map_err(backend)?;
    rows.map(|row| row.map_err(backend)?).collect()
}

fn delete(conn: &mut Connection, owner: &str, id: &str) -> Result<bool, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let gone = tx
        .execute(
            "DELETE FROM prompts WHERE id = ?1 AND owner = ?2",
            params![id, owner],
        )
        .map_err(backend)?
        > 0;
    if gone {
        tx.execute("DELETE FROM prompt_versions WHERE prompt_id = ?1", [id])
            .map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(gone)
}

fn versions(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Vec<PromptVersionRecord>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT v.prompt_id, v.revision, v.created_by, v.definition, v.created_at \
             FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id \
             WHERE v.prompt_id = ?1 AND p.owner = ?2 ORDER BY v.revision",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![id, owner], |row| {
            Ok((|| {
                Ok(PromptVersionRecord {
                    prompt_id: row.get(0).map_err(backend)?,
                    revision: row.get(1).map_err(backend)?,
                    created_by: parsed(row, 2, id, "version's created_by", created_by)?,
                    definition: parsed(row, 3, id, "version's definition", |t| {
                        serde_json::from_str(t).map_err(|e| e.to_string())
                    })?,
                    created_at: parsed(row, 4, id, "version's created_at", parse_time)?,
                })
            })())
        })
        .map_err(backend)?;
    rows.map(|row| row.map_err(backend)?).collect()
}

/// Per owner: how many prompts, the sum of their revisions and the newest change.
const FINGERPRINTS: &str = "SELECT owner, count(*) || ':' || sum(revision) || ':' || \
     max(updated_at) FROM prompts GROUP BY owner ORDER BY owner";

fn fingerprints(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare(FINGERPRINTS).map_err(backend)?;
    let rows = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(backend)?;
    rows.map(|row| row.map_err(backend)).collect()
}
