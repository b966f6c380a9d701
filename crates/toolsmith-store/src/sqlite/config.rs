//! The Config Center's SQL: services (`config_services`) and their entries (`config_entries`).
//!
//! Every function is scoped to one owner; entries are reached through their service's owner,
//! so another owner's ids are simply "not found". Writes that check before they change (free
//! names, single-entry services, revisions, the one default per service) run in one
//! `BEGIN IMMEDIATE` transaction. The SQL is portable (a partial unique index keeps one default
//! per service in PostgreSQL too); JSON columns hold the field list, `registered_by` and the
//! values map (secrets in it are sealed text, never plaintext).

use std::collections::BTreeSet;

use chrono::{DateTime, SubsecRound, Utc};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};
use toolsmith_core::{ConfigEntryRecord, ConfigServiceRecord};

use super::rows::{backend, json_text, parse_time, timestamp};
use super::tools::misuse;
use crate::{ConfigDependencyChanges, ConfigServiceEntries, SealedSample, SealedValue, StoreError};

store_on_connections! {
    impl ConfigStore {
        write fn create_config_service(service: ConfigServiceRecord) -> ConfigServiceRecord
            = create_service(service);
        read fn get_config_service(owner: &str, id: &str) -> Option<ConfigServiceRecord>
            = get_service(&owner, &id);
        read fn get_config_service_by_name(owner: &str, name: &str) -> Option<ConfigServiceRecord>
            = get_service_by_name(&owner, &name);
        read fn list_config_services(owner: &str) -> Vec<ConfigServiceRecord>
            = list_services(&owner);
        write fn update_config_service(
            service: &ConfigServiceRecord, expected_revision: i64
        ) -> ConfigServiceRecord
            = update_service(&service, expected_revision);
        write fn delete_config_service(owner: &str, id: &str, expected_revision: Option<i64>) -> ()
            = delete_service(&owner, &id, expected_revision);
        write fn create_config_entry(owner: &str, entry: ConfigEntryRecord) -> ConfigEntryRecord
            = create_entry(&owner, entry);
        read fn get_config_entry(owner: &str, id: &str) -> Option<ConfigEntryRecord>
            = get_entry(&owner, &id);
        read fn list_config_entries(owner: &str, service_id: &str) -> Vec<ConfigEntryRecord>
            = list_entries(&owner, &service_id);
        write fn update_config_entry(
            owner: &str, entry: &ConfigEntryRecord, expected_revision: i64
        ) -> ConfigEntryRecord
            = update_entry(&owner, &entry, expected_revision);
        write fn delete_config_entry(owner: &str, id: &str, expected_revision: Option<i64>) -> ()
            = delete_entry(&owner, &id, expected_revision);
        write fn set_default_config_entry(owner: &str, id: &str) -> ConfigEntryRecord
            = set_default_entry(&owner, &id);
        read fn sealed_values(limit: u32) -> SealedSample = sealed_values(limit);
        read fn config_snapshot(owner: &str) -> Vec<ConfigServiceEntries> = snapshot(&owner);
        write fn sync_config_dependencies(
            owner: &str, tool_name: &str, declared: Vec<ConfigServiceRecord>
        ) -> ConfigDependencyChanges
            = sync_dependencies(&owner, &tool_name, declared);
    }
}

const SERVICE_COLUMNS: &str = "id, owner, name, display_name, description, category, docs_url, \
     multi_entry, fields, registered_by, auto_registered, revision, created_at, updated_at";

/// Entry columns, qualified (`e.`) because entries are always read joined to their service.
const ENTRY_COLUMNS: &str = "e.id, e.service_id, e.label, e.is_default, e.field_values, \
     e.revision, e.created_at, e.updated_at";

/// Entries of one service in their listed order: the default first, then oldest first.
const ENTRY_ORDER: &str = "e.is_default DESC, e.created_at, e.id";

fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

fn immediate(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ConstraintViolation)
    )
}

// ----- services -----

pub(crate) fn create_service(
    conn: &mut Connection,
    mut service: ConfigServiceRecord,
) -> Result<ConfigServiceRecord, StoreError> {
    truncate_service_times(&mut service);
    let tx = immediate(conn)?;
    insert_service(&tx, &service)?;
    tx.commit().map_err(backend)?;
    Ok(service)
}

fn insert_service(conn: &Connection, service: &ConfigServiceRecord) -> Result<(), StoreError> {
    if service_id_by_name(conn, &service.owner, &service.name)?.is_some() {
        return Err(StoreError::ConfigServiceNameTaken {
            name: service.name.clone(),
        });
    }
    execute_service(
        conn,
        &format!(
            "INSERT INTO config_services ({SERVICE_COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
        ),
        service,
    )
}

pub(crate) fn get_service(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Option<ConfigServiceRecord>, StoreError> {
    one_service(conn, "id", owner, id)
}

pub(crate) fn get_service_by_name(
    conn: &Connection,
    owner: &str,
    name: &str,
) -> Result<Option<ConfigServiceRecord>, StoreError> {
    one_service(conn, "name", owner, name)
}

fn one_service(
    conn: &Connection,
    key_column: &str,
    owner: &str,
    key: &str,
) -> Result<Option<ConfigServiceRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SERVICE_COLUMNS} FROM config_services WHERE owner = ?1 AND {key_column} = ?2"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner, key]).map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => service_from_row(row).map(Some),
        None => Ok(None),
    }
}

pub(crate) fn list_services(
    conn: &Connection,
    owner: &str,
) -> Result<Vec<ConfigServiceRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SERVICE_COLUMNS} FROM config_services WHERE owner = ?1 ORDER BY name"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(service_from_row(row)?);
    }
    Ok(out)
}

pub(crate) fn update_service(
    conn: &mut Connection,
    service: &ConfigServiceRecord,
    expected_revision: i64,
) -> Result<ConfigServiceRecord, StoreError> {
    let tx = immediate(conn)?;
    let stored = get_service(&tx, &service.owner, &service.id)?.ok_or_else(|| {
        StoreError::ConfigServiceNotFound {
            id: service.id.clone(),
        }
    })?;
    check_revision(&stored.id, expected_revision, stored.revision)?;
    if let Some(other) = service_id_by_name(&tx, &service.owner, &service.name)?
        && other != service.id
    {
        return Err(StoreError::ConfigServiceNameTaken {
            name: service.name.clone(),
        });
    }
    let mut next = service.clone();
    next.created_at = stored.created_at;
    next.revision = expected_revision + 1;
    truncate_service_times(&mut next);
    write_service(&tx, &next)?;
    tx.commit().map_err(backend)?;
    Ok(next)
}

/// Overwrites the stored row of `service` (matched by owner and id; `created_at` stays).
fn write_service(conn: &Connection, service: &ConfigServiceRecord) -> Result<(), StoreError> {
    execute_service(
        conn,
        "UPDATE config_services SET name = ?3, display_name = ?4, description = ?5, \
         category = ?6, docs_url = ?7, multi_entry = ?8, fields = ?9, registered_by = ?10, \
         auto_registered = ?11, revision = ?12, updated_at = ?14 \
         WHERE id = ?1 AND owner = ?2",
        service,
    )
}

/// Runs `sql`, an INSERT or UPDATE of `config_services` whose `?1` to `?14` are the columns of
/// [`SERVICE_COLUMNS`] in their order, for `service`; a name taken by another service of the
/// owner is [`StoreError::ConfigServiceNameTaken`].
fn execute_service(
    conn: &Connection,
    sql: &str,
    service: &ConfigServiceRecord,
) -> Result<(), StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| {
            stmt.execute(params![
                service.id,
                service.owner,
                service.name,
                service.display_name,
                service.description,
                service.category,
                service.docs_url,
                service.multi_entry,
                json_text(&service.fields),
                json_text(&service.registered_by),
                service.auto_registered,
                service.revision,
                timestamp(&service.created_at),
                timestamp(&service.updated_at),
            ])
        })
        .map_err(|e| {
            if is_unique_violation(&e) {
                StoreError::ConfigServiceNameTaken {
                    name: service.name.clone(),
                }
            } else {
                backend(e)
            }
        })?;
    Ok(())
}

pub(crate) fn delete_service(
    conn: &mut Connection,
    owner: &str,
    id: &str,
    expected_revision: Option<i64>,
) -> Result<(), StoreError> {
    let tx = immediate(conn)?;
    let stored = get_service(&tx, owner, id)?
        .ok_or_else(|| StoreError::ConfigServiceNotFound { id: id.to_owned() })?;
    if let Some(expected) = expected_revision {
        check_revision(id, expected, stored.revision)?;
    }
    // Entries go with it (ON DELETE CASCADE).
    tx.execute(
        "DELETE FROM config_services WHERE owner = ?1 AND id = ?2",
        params![owner, id],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(())
}

fn service_id_by_name(
    conn: &Connection,
    owner: &str,
    name: &str,
) -> Result<Option<String>, StoreError> {
    conn.prepare_cached("SELECT id FROM config_services WHERE owner = ?1 AND name = ?2")
        .and_then(|mut stmt| {
            stmt.query_row(params![owner, name], |row| row.get(0))
                .optional()
        })
        .map_err(backend)
}

fn check_revision(id: &str, expected: i64, actual: i64) -> Result<(), StoreError> {
    if expected == actual {
        Ok(())
    } else {
        Err(StoreError::ConfigRevisionConflict {
            id: id.to_owned(),
            expected,
            actual,
        })
    }
}

// ----- entries -----

pub(crate) fn create_entry(
    conn: &mut Connection,
    owner: &str,
    mut entry: ConfigEntryRecord,
) -> Result<ConfigEntryRecord, StoreError> {
    truncate_entry_times(&mut entry);
    let tx = immediate(conn)?;
    let service = get_service(&tx, owner, &entry.service_id)?.ok_or_else(|| {
        StoreError::ConfigServiceNotFound {
            id: entry.service_id.clone(),
        }
    })?;
    let existing = entries_of(&tx, owner, &service.id)?;
    if !service.multi_entry && !existing.is_empty() {
        return Err(StoreError::ConfigSingleEntry { name: service.name });
    }
    if existing.iter().any(|e| e.label == entry.label) {
        return Err(StoreError::ConfigEntryLabelTaken { label: entry.label });
    }
    if existing.is_empty() {
        entry.is_default = true;
    } else if entry.is_default {
        clear_default(&tx, &service.id, &entry.updated_at)?;
    }
    tx.prepare_cached(
        "INSERT INTO config_entries \
         (id, service_id, label, is_default, field_values, revision, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            entry.id,
            entry.service_id,
            entry.label,
            entry.is_default,
            json_text(&entry.values),
            entry.revision,
            timestamp(&entry.created_at),
            timestamp(&entry.updated_at),
        ])
    })
    .map_err(|e| {
        if is_unique_violation(&e) {
            misuse(format!(
                "a config entry with id {} already exists",
                entry.id
            ))
        } else {
            backend(e)
        }
    })?;
    tx.commit().map_err(backend)?;
    Ok(entry)
}

pub(crate) fn get_entry(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Option<ConfigEntryRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM config_entries e \
             JOIN config_services s ON s.id = e.service_id \
             WHERE s.owner = ?1 AND e.id = ?2"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner, id]).map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => entry_from_row(row).map(Some),
        None => Ok(None),
    }
}

pub(crate) fn list_entries(
    conn: &Connection,
    owner: &str,
    service_id: &str,
) -> Result<Vec<ConfigEntryRecord>, StoreError> {
    if get_service(conn, owner, service_id)?.is_none() {
        return Err(StoreError::ConfigServiceNotFound {
            id: service_id.to_owned(),
        });
    }
    entries_of(conn, owner, service_id)
}

fn entries_of(
    conn: &Connection,
    owner: &str,
    service_id: &str,
) -> Result<Vec<ConfigEntryRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM config_entries e \
             JOIN config_services s ON s.id = e.service_id \
             WHERE s.owner = ?1 AND e.service_id = ?2 ORDER BY {ENTRY_ORDER}"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner, service_id]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(entry_from_row(row)?);
    }
    Ok(out)
}

pub(crate) fn update_entry(
    conn: &mut Connection,
    owner: &str,
    entry: &ConfigEntryRecord,
    expected_revision: i64,
) -> Result<ConfigEntryRecord, StoreError> {
    let tx = immediate(conn)?;
    let stored = get_entry(&tx, owner, &entry.id)?
        .filter(|stored| stored.service_id == entry.service_id)
        .ok_or_else(|| StoreError::ConfigEntryNotFound {
            id: entry.id.clone(),
        })?;
    check_revision(&stored.id, expected_revision, stored.revision)?;
    let mut next = ConfigEntryRecord {
        label: entry.label.clone(),
        values: entry.values.clone(),
        updated_at: entry.updated_at,
        revision: expected_revision + 1,
        ..stored
    };
    truncate_entry_times(&mut next);
    tx.prepare_cached(
        "UPDATE config_entries SET label = ?2, field_values = ?3, revision = ?4, \
         updated_at = ?5 WHERE id = ?1",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            next.id,
            next.label,
            json_text(&next.values),
            next.revision,
            timestamp(&next.updated_at),
        ])
    })
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::ConfigEntryLabelTaken {
                label: next.label.clone(),
            }
        } else {
            backend(e)
        }
    })?;
    tx.commit().map_err(backend)?;
    Ok(next)
}

pub(crate) fn delete_entry(
    conn: &mut Connection,
    owner: &str,
    id: &str,
    expected_revision: Option<i64>,
) -> Result<(), StoreError> {
    let tx = immediate(conn)?;
    let stored = get_entry(&tx, owner, id)?
        .ok_or_else(|| StoreError::ConfigEntryNotFound { id: id.to_owned() })?;
    if let Some(expected) = expected_revision {
        check_revision(id, expected, stored.revision)?;
    }
    tx.execute("DELETE FROM config_entries WHERE id = ?1", params![id])
        .map_err(backend)?;
    if stored.is_default {
        // The oldest remaining entry (if any) becomes the default.
        let at = now();
        tx.execute(
            "UPDATE config_entries SET is_default = 1, revision = revision + 1, updated_at = ?2 \
             WHERE id = (SELECT id FROM config_entries WHERE service_id = ?1 \
                         ORDER BY created_at, id LIMIT 1)",
            params![stored.service_id, timestamp(&at)],
        )
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(())
}

pub(crate) fn set_default_entry(
    conn: &mut Connection,
    owner: &str,
    id: &str,
) -> Result<ConfigEntryRecord, StoreError> {
    let tx = immediate(conn)?;
    let stored = get_entry(&tx, owner, id)?
        .ok_or_else(|| StoreError::ConfigEntryNotFound { id: id.to_owned() })?;
    if stored.is_default {
        return Ok(stored);
    }
    let at = now();
    clear_default(&tx, &stored.service_id, &at)?;
    tx.execute(
        "UPDATE config_entries SET is_default = 1, revision = revision + 1, updated_at = ?2 \
         WHERE id = ?1",
        params![id, timestamp(&at)],
    )
    .map_err(backend)?;
    let updated = get_entry(&tx, owner, id)?
        .ok_or_else(|| StoreError::ConfigEntryNotFound { id: id.to_owned() })?;
    tx.commit().map_err(backend)?;
    Ok(updated)
}

/// Takes the default flag from whichever entry of the service has it.
fn clear_default(
    conn: &Connection,
    service_id: &str,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE config_entries SET is_default = 0, revision = revision + 1, updated_at = ?2 \
         WHERE service_id = ?1 AND is_default = 1",
        params![service_id, timestamp(at)],
    )
    .map_err(backend)?;
    Ok(())
}

// ----- snapshot and dependencies -----

/// The sealed values of every owner (`{"secret": "v1:…"}` in `field_values`): their count, and
/// up to `limit` of them with their places, oldest entries first.
pub(crate) fn sealed_values(conn: &mut Connection, limit: u32) -> Result<SealedSample, StoreError> {
    const FROM: &str = "FROM config_entries e \
         JOIN config_services s ON s.id = e.service_id, json_each(e.field_values) f \
         WHERE json_type(f.value, '$.secret') = 'text'";
    let total: i64 = conn
        .query_row(&format!("SELECT count(*) {FROM}"), [], |row| row.get(0))
        .map_err(backend)?;
    let mut stmt = conn
        .prepare(&format!(
            "SELECT s.owner, e.service_id, e.id, f.key, json_extract(f.value, '$.secret') {FROM} \
             ORDER BY e.created_at, e.id, f.key LIMIT ?1"
        ))
        .map_err(backend)?;
    let values = stmt
        .query_map(params![limit], |row| {
            Ok(SealedValue {
                owner: row.get(0)?,
                service_id: row.get(1)?,
                entry_id: row.get(2)?,
                field: row.get(3)?,
                sealed: row.get(4)?,
            })
        })
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    Ok(SealedSample {
        total: u64::try_from(total).unwrap_or(0),
        values,
    })
}

pub(crate) fn snapshot(
    conn: &mut Connection,
    owner: &str,
) -> Result<Vec<ConfigServiceEntries>, StoreError> {
    // One read transaction: services and entries from the same moment.
    let tx = conn.transaction().map_err(backend)?;
    let services = list_services(&tx, owner)?;
    let mut out = Vec::with_capacity(services.len());
    for service in services {
        let entries = entries_of(&tx, owner, &service.id)?;
        out.push(ConfigServiceEntries { service, entries });
    }
    tx.finish().map_err(backend)?;
    Ok(out)
}

pub(crate) fn sync_dependencies(
    conn: &mut Connection,
    owner: &str,
    tool_name: &str,
    declared: Vec<ConfigServiceRecord>,
) -> Result<ConfigDependencyChanges, StoreError> {
    if let Some(other) = declared.iter().find(|s| s.owner != owner) {
        return Err(misuse(format!(
            "service template '{}' belongs to owner '{}', not '{owner}'",
            other.name, other.owner
        )));
    }
    let at = now();
    let tx = immediate(conn)?;
    let mut changes = ConfigDependencyChanges::default();
    let mut wanted = BTreeSet::new();
    for template in declared {
        if !wanted.insert(template.name.clone()) {
            continue;
        }
        match get_service_by_name(&tx, owner, &template.name)? {
            Some(mut existing) => {
                if !existing.registered_by.iter().any(|t| t == tool_name) {
                    existing.registered_by.push(tool_name.to_owned());
                    existing.registered_by.sort();
                    bump(&mut existing, at);
                    write_service(&tx, &existing)?;
                    changes.attached.push(existing.name);
                }
            }
            None => {
                let mut created = template;
                created.registered_by = vec![tool_name.to_owned()];
                created.auto_registered = true;
                truncate_service_times(&mut created);
                insert_service(&tx, &created)?;
                changes.created.push(created.name);
            }
        }
    }
    for mut service in list_services(&tx, owner)? {
        if wanted.contains(&service.name) || !service.registered_by.iter().any(|t| t == tool_name) {
            continue;
        }
        service.registered_by.retain(|t| t != tool_name);
        let unused = service.registered_by.is_empty()
            && service.auto_registered
            && entries_of(&tx, owner, &service.id)?.is_empty();
        if unused {
            tx.execute(
                "DELETE FROM config_services WHERE id = ?1",
                params![service.id],
            )
            .map_err(backend)?;
            changes.removed.push(service.name);
        } else {
            bump(&mut service, at);
            write_service(&tx, &service)?;
            changes.detached.push(service.name);
        }
    }
    tx.commit().map_err(backend)?;
    for list in [
        &mut changes.created,
        &mut changes.attached,
        &mut changes.detached,
        &mut changes.removed,
    ] {
        list.sort();
    }
    Ok(changes)
}

fn bump(service: &mut ConfigServiceRecord, at: DateTime<Utc>) {
    service.revision += 1;
    service.updated_at = at;
}

// ----- rows -----

fn truncate_service_times(service: &mut ConfigServiceRecord) {
    service.created_at = service.created_at.trunc_subsecs(6);
    service.updated_at = service.updated_at.trunc_subsecs(6);
}

fn truncate_entry_times(entry: &mut ConfigEntryRecord) {
    entry.created_at = entry.created_at.trunc_subsecs(6);
    entry.updated_at = entry.updated_at.trunc_subsecs(6);
}

fn service_from_row(row: &Row<'_>) -> Result<ConfigServiceRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: String::new(),
        reason: format!("config_services: service {id} has an unreadable {what}: {detail}"),
    };
    let text = |idx: usize| -> Result<String, StoreError> { row.get(idx).map_err(backend) };
    Ok(ConfigServiceRecord {
        owner: text(1)?,
        name: text(2)?,
        display_name: text(3)?,
        description: row.get(4).map_err(backend)?,
        category: row.get(5).map_err(backend)?,
        docs_url: row.get(6).map_err(backend)?,
        multi_entry: row.get(7).map_err(backend)?,
        fields: serde_json::from_str(&text(8)?).map_err(|e| bad("fields", e.to_string()))?,
        registered_by: serde_json::from_str(&text(9)?)
            .map_err(|e| bad("registered_by", e.to_string()))?,
        auto_registered: row.get(10).map_err(backend)?,
        revision: row.get(11).map_err(backend)?,
        created_at: parse_time(&text(12)?).map_err(|e| bad("created_at", e))?,
        updated_at: parse_time(&text(13)?).map_err(|e| bad("updated_at", e))?,
        id,
    })
}

fn entry_from_row(row: &Row<'_>) -> Result<ConfigEntryRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: String::new(),
        reason: format!("config_entries: entry {id} has an unreadable {what}: {detail}"),
    };
    let text = |idx: usize| -> Result<String, StoreError> { row.get(idx).map_err(backend) };
    Ok(ConfigEntryRecord {
        service_id: text(1)?,
        label: text(2)?,
        is_default: row.get(3).map_err(backend)?,
        values: serde_json::from_str(&text(4)?).map_err(|e| bad("values", e.to_string()))?,
        revision: row.get(5).map_err(backend)?,
        created_at: parse_time(&text(6)?).map_err(|e| bad("created_at", e))?,
        updated_at: parse_time(&text(7)?).map_err(|e| bad("updated_at", e))?,
        id,
    })
}
