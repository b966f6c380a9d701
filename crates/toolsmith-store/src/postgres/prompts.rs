//! Prompts made at runtime, in PostgreSQL (`prompts`, `prompt_versions`). A write takes a
//! per-owner advisory lock (the name check reads before it writes) and sends a
//! [`ChangeKind::Prompt`] notice inside its transaction, so the other instances' MCP sessions
//! hear `notifications/prompts/list_changed` exactly when it commits.

use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::CreatedBy;
use toolsmith_core::prompt::{PromptDefinition, PromptRecord, PromptUpdate, PromptVersionRecord};

use super::errors::pg;
use super::notify::notify;
use super::rows::{col, micros};
use crate::agent_rows::corrupt;
use crate::{ChangeKind, StoreError};

store_on_pool! {
    impl PromptStore |client, this_instance| {
        fn insert_prompt(prompt: &PromptRecord) -> bool
            = insert(&mut client, this_instance, prompt);
        fn update_prompt(prompt: &PromptRecord, new_version: bool) -> PromptUpdate
            = update(&mut client, this_instance, prompt, new_version);
        fn get_prompt(owner: &str, id_or_name: &str) -> Option<PromptRecord>
            = get(&**client, owner, id_or_name);
        fn list_prompts(owner: &str) -> Vec<PromptRecord> = list(&**client, owner);
        fn delete_prompt(owner: &str, id: &str) -> bool
            = delete(&mut client, this_instance, owner, id);
        fn prompt_versions(owner: &str, id: &str) -> Vec<PromptVersionRecord>
            = versions(&**client, owner, id);
        fn prompt_fingerprints() -> Vec<(String, String)> = fingerprints(&**client);
    }
}

const COLUMNS: &str =
    "id, owner, agent, name, revision, enabled, created_by, definition, created_at, updated_at";

fn author(text: &str, id: &str) -> Result<CreatedBy, StoreError> {
    match text {
        "user" => Ok(CreatedBy::User),
        "llm" => Ok(CreatedBy::Llm),
        other => Err(corrupt("prompts", id, "created_by", other)),
    }
}

fn definition_of(row: &Row, id: &str) -> Result<PromptDefinition, StoreError> {
    let text: String = col(row, "definition")?;
    serde_json::from_str(&text).map_err(|e| corrupt("prompts", id, "definition", e))
}

fn prompt_from_row(row: &Row) -> Result<PromptRecord, StoreError> {
    let id: String = col(row, "id")?;
    let agent: String = col(row, "agent")?;
    let by: String = col(row, "created_by")?;
    Ok(PromptRecord {
        owner: col(row, "owner")?,
        agent: (!agent.is_empty()).then_some(agent),
        name: col(row, "name")?,
        revision: col(row, "revision")?,
        enabled: col(row, "enabled")?,
        created_by: author(&by, &id)?,
        definition: definition_of(row, &id)?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}

/// The definition as JSON text (serializing plain records cannot fail).
fn text_of(definition: &PromptDefinition) -> String {
    serde_json::to_string(definition).unwrap_or_else(|_| "null".to_owned())
}

async fn keep_version(tx: &impl GenericClient, prompt: &PromptRecord) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO prompt_versions (prompt_id, revision, created_by, definition, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &prompt.id,
            &prompt.revision,
            &prompt.created_by.as_str(),
            &text_of(&prompt.definition),
            &micros(prompt.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    Ok(())
}

/// Locks `owner`'s prompts for this transaction and says whether another of them has `name`.
async fn lock_and_clash(
    tx: &impl GenericClient,
    prompt: &PromptRecord,
) -> Result<bool, StoreError> {
    super::lock(tx, &format!("toolsmith-prompts:{}", prompt.owner)).await?;
    Ok(tx
        .query_opt(
            "SELECT 1 FROM prompts WHERE owner = $1 AND name = $2 AND id <> $3",
            &[&prompt.owner, &prompt.name, &prompt.id],
        )
        .await
        .map_err(pg)?
        .is_some())
}

async fn insert(
    client: &mut Client,
    instance: &str,
    prompt: &PromptRecord,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    if lock_and_clash(&*tx, prompt).await? {
        return Ok(false);
    }
    tx.execute(
        &format!(
            "INSERT INTO prompts ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ),
        &[
            &prompt.id,
            &prompt.owner,
            &prompt.agent.as_deref().unwrap_or(""),
            &prompt.name,
            &prompt.revision,
            &prompt.enabled,
            &prompt.created_by.as_str(),
            &text_of(&prompt.definition),
            &micros(prompt.created_at),
            &micros(prompt.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    keep_version(&*tx, prompt).await?;
    let revision = Some(prompt.revision);
    notify(
        &*tx,
        instance,
        ChangeKind::Prompt,
        &prompt.id,
        &prompt.owner,
        revision,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

async fn update(
    client: &mut Client,
    instance: &str,
    prompt: &PromptRecord,
    new_version: bool,
) -> Result<PromptUpdate, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let clash = lock_and_clash(&*tx, prompt).await?;
    let stored = tx
        .query_opt(
            "SELECT revision FROM prompts WHERE id = $1 AND owner = $2 FOR UPDATE",
            &[&prompt.id, &prompt.owner],
        )
        .await
        .map_err(pg)?;
    let actual: i64 = match stored {
        None => return Ok(PromptUpdate::NotFound),
        Some(row) => col(&row, "revision")?,
    };
    if actual + 1 != prompt.revision {
        return Ok(PromptUpdate::Conflict { actual });
    }
    if clash {
        return Ok(PromptUpdate::NameTaken);
    }
    tx.execute(
        "UPDATE prompts SET agent = $3, name = $4, revision = $5, enabled = $6, \
         created_by = $7, definition = $8, updated_at = $9 WHERE id = $1 AND owner = $2",
        &[
            &prompt.id,
            &prompt.owner,
            &prompt.agent.as_deref().unwrap_or(""),
            &prompt.name,
            &prompt.revision,
            &prompt.enabled,
            &prompt.created_by.as_str(),
            &text_of(&prompt.definition),
            &micros(prompt.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    if new_version {
        keep_version(&*tx, prompt).await?;
    }
    let revision = Some(prompt.revision);
    notify(
        &*tx,
        instance,
        ChangeKind::Prompt,
        &prompt.id,
        &prompt.owner,
        revision,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(PromptUpdate::Updated)
}

async fn get(
    client: &impl GenericClient,
    owner: &str,
    id_or_name: &str,
) -> Result<Option<PromptRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM prompts WHERE owner = $1 AND (id = $2 OR name = $2) \
                 ORDER BY id = $2 DESC LIMIT 1"
            ),
            &[&owner, &id_or_name],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(prompt_from_row)
        .transpose()
}

async fn list(client: &impl GenericClient, owner: &str) -> Result<Vec<PromptRecord>, StoreError> {
    client
        .query(
            &format!("SELECT {COLUMNS} FROM prompts WHERE owner = $1 ORDER BY name"),
            &[&owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(prompt_from_row)
        .collect()
}

async fn delete(
    client: &mut Client,
    instance: &str,
    owner: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let gone = tx
        .execute(
            "DELETE FROM prompts WHERE id = $1 AND owner = $2",
            &[&id, &owner],
        )
        .await
        .map_err(pg)?
        > 0;
    if gone {
        tx.execute("DELETE FROM prompt_versions WHERE prompt_id = $1", &[&id])
            .await
            .map_err(pg)?;
        notify(&*tx, instance, ChangeKind::Prompt, id, owner, None).await?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(gone)
}

async fn versions(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
) -> Result<Vec<PromptVersionRecord>, StoreError> {
    client
        .query(
            "SELECT v.prompt_id, v.revision, v.created_by, v.definition, v.created_at \
             FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id \
             WHERE v.prompt_id = $1 AND p.owner = $2 ORDER BY v.revision",
            &[&id, &owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|row| {
            let by: String = col(row, "created_by")?;
            Ok(PromptVersionRecord {
                prompt_id: col(row, "prompt_id")?,
                revision: col(row, "revision")?,
                created_by: author(&by, id)?,
                definition: definition_of(row, id)?,
                created_at: col(row, "created_at")?,
            })
        })
        .collect()
}

async fn fingerprints(client: &impl GenericClient) -> Result<Vec<(String, String)>, StoreError> {
    client
        .query(
            "SELECT owner, count(*)::text || ':' || sum(revision)::text || ':' || \
             max(updated_at)::text AS print FROM prompts GROUP BY owner ORDER BY owner",
            &[],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|row| Ok((col(row, "owner")?, col(row, "print")?)))
        .collect()
}
