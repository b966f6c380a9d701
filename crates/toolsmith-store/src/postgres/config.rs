//! The Config Center in PostgreSQL: services (`config_services`) and entries
//! (`config_entries`), scoped to one owner.
//!
//! Every write runs in one transaction holding the owner's Config Center advisory lock, so the
//! checks (free names, single-entry services, revisions, the one default per service) and the
//! change are one step across instances, as under SQLite's single writer. The unique
//! constraints and the partial unique index on the default stay as the last line.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::{ConfigEntryRecord, ConfigServiceRecord};

use super::errors::{pg, unique_violation};
use super::lock;
use super::notify::notify;
use super::rows::{col, json, json_col, micros};
use super::tools::misuse;
use crate::{
    ChangeKind, ConfigDependencyChanges, ConfigServiceEntries, SealedSample, SealedValue,
    StoreError,
};

store_on_pool! {
    impl ConfigStore |client, instance| {
        fn create_config_service(service: ConfigServiceRecord) -> ConfigServiceRecord
            = create_service(&mut client, instance, service);
        fn get_config_service(owner: &str, id: &str) -> Option<ConfigServiceRecord>
            = get_service(&**client, owner, "id", id);
        fn get_config_service_by_name(owner: &str, name: &str) -> Option<ConfigServiceRecord>
            = get_service(&**client, owner, "name", name);
        fn list_config_services(owner: &str) -> Vec<ConfigServiceRecord>
            = list_services(&**client, owner);
        fn update_config_service(
            service: &ConfigServiceRecord, expected_revision: i64
        ) -> ConfigServiceRecord
            = update_service(&mut client, instance, service, expected_revision);
        fn delete_config_service(owner: &str, id: &str, expected_revision: Option<i64>) -> ()
            = delete_service(&mut client, instance, owner, id, expected_revision);
        fn create_config_entry(owner: &str, entry: ConfigEntryRecord) -> ConfigEntryRecord
            = create_entry(&mut client, instance, owner, entry);
        fn get_config_entry(owner: &str, id: &str) -> Option<ConfigEntryRecord>
            = get_entry(&**client, owner, id);
        fn list_config_entries(owner: &str, service_id: &str) -> Vec<ConfigEntryRecord>
            = list_entries(&**client, owner, service_id);
        fn update_config_entry(
            owner: &str, entry: &ConfigEntryRecord, expected_revision: i64
        ) -> ConfigEntryRecord
            = update_entry(&mut client, instance, owner, entry, expected_revision);
        fn delete_config_entry(owner: &str, id: &str, expected_revision: Option<i64>) -> ()
            = delete_entry(&mut client, instance, owner, id, expected_revision);
        fn set_default_config_entry(owner: &str, id: &str) -> ConfigEntryRecord
            = set_default_entry(&mut client, instance, owner, id);
        fn sealed_values(limit: u32) -> SealedSample = sealed_values(&mut client, limit);
        fn config_snapshot(owner: &str) -> Vec<ConfigServiceEntries>
            = snapshot(&mut client, owner);
        fn sync_config_dependencies(
            owner: &str, tool_name: &str, declared: Vec<ConfigServiceRecord>
        ) -> ConfigDependencyChanges
            = sync_dependencies(&mut client, instance, owner, tool_name, declared);
    }
}

const SERVICE_COLUMNS: &str = "id, owner, name, display_name, description, category, docs_url, \
     multi_entry, fields, registered_by, auto_registered, revision, created_at, updated_at";

const ENTRY_COLUMNS: &str = "e.id, e.service_id, e.label, e.is_default, e.field_values, \
     e.revision, e.created_at, e.updated_at";

const ENTRY_ORDER: &str = "e.is_default DESC, e.created_at, e.id COLLATE \"C\"";

fn owner_key(owner: &str) -> String {
    format!("toolsmith:config:{owner}")
}

fn now() -> DateTime<Utc> {
    micros(Utc::now())
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

// ----- services -----

pub(crate) async fn create_service(
    client: &mut Client,
    instance: &str,
    mut service: ConfigServiceRecord,
) -> Result<ConfigServiceRecord, StoreError> {
    service.created_at = micros(service.created_at);
    service.updated_at = micros(service.updated_at);
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(&service.owner)).await?;
    insert_service(&*tx, &service).await?;
    let revision = Some(service.revision);
    notify(
        &*tx,
        instance,
        ChangeKind::Config,
        &service.id,
        &service.owner,
        revision,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(service)
}

async fn insert_service(
    client: &impl GenericClient,
    service: &ConfigServiceRecord,
) -> Result<(), StoreError> {
    client
        .execute(
            &format!(
                "INSERT INTO config_services ({SERVICE_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
            ),
            &[
                &service.id,
                &service.owner,
                &service.name,
                &service.display_name,
                &service.description,
                &service.category,
                &service.docs_url,
                &service.multi_entry,
                &json(&service.fields),
                &json(&service.registered_by),
                &service.auto_registered,
                &service.revision,
                &service.created_at,
                &service.updated_at,
            ],
        )
        .await
        .map_err(|e| match unique_violation(&e) {
            Some("config_services_owner_name") => StoreError::ConfigServiceNameTaken {
                name: service.name.clone(),
            },
            Some(_) => misuse(format!(
                "a config service with id {} already exists",
                service.id
            )),
            None => pg(e),
        })?;
    Ok(())
}

/// One service of `owner` by `key_column` (`id` or `name`).
pub(crate) async fn get_service(
    client: &impl GenericClient,
    owner: &str,
    key_column: &str,
    key: &str,
) -> Result<Option<ConfigServiceRecord>, StoreError> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {SERVICE_COLUMNS} FROM config_services WHERE owner = $1 AND {key_column} = $2"
            ),
            &[&owner, &key],
        )
        .await
        .map_err(pg)?;
    row.as_ref().map(service_from_row).transpose()
}

pub(crate) async fn list_services(
    client: &impl GenericClient,
    owner: &str,
) -> Result<Vec<ConfigServiceRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {SERVICE_COLUMNS} FROM config_services WHERE owner = $1 \
                 ORDER BY name COLLATE \"C\""
            ),
            &[&owner],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(service_from_row).collect()
}

pub(crate) async fn update_service(
    client: &mut Client,
    instance: &str,
    service: &ConfigServiceRecord,
    expected_revision: i64,
) -> Result<ConfigServiceRecord, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(&service.owner)).await?;
    let stored = get_service(&*tx, &service.owner, "id", &service.id)
        .await?
        .ok_or_else(|| StoreError::ConfigServiceNotFound {
            id: service.id.clone(),
        })?;
    check_revision(&stored.id, expected_revision, stored.revision)?;
    let mut next = service.clone();
    next.created_at = stored.created_at;
    next.updated_at = micros(next.updated_at);
    next.revision = expected_revision + 1;
    write_service(&*tx, &next).await?;
    let revision = Some(next.revision);
    notify(
        &*tx,
        instance,
        ChangeKind::Config,
        &next.id,
        &next.owner,
        revision,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(next)
}

/// Overwrites the stored row of `service` (matched by owner and id).
async fn write_service(
    client: &impl GenericClient,
    service: &ConfigServiceRecord,
) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE config_services SET name = $3, display_name = $4, description = $5, \
             category = $6, docs_url = $7, multi_entry = $8, fields = $9, registered_by = $10, \
             auto_registered = $11, revision = $12, updated_at = $13 \
             WHERE owner = $1 AND id = $2",
            &[
                &service.owner,
                &service.id,
                &service.name,
                &service.display_name,
                &service.description,
                &service.category,
                &service.docs_url,
                &service.multi_entry,
                &json(&service.fields),
                &json(&service.registered_by),
                &service.auto_registered,
                &service.revision,
                &micros(service.updated_at),
            ],
        )
        .await
        .map_err(|e| match unique_violation(&e) {
            Some(_) => StoreError::ConfigServiceNameTaken {
                name: service.name.clone(),
            },
            None => pg(e),
        })?;
    Ok(())
}

pub(crate) async fn delete_service(
    client: &mut Client,
    instance: &str,
    owner: &str,
    id: &str,
    expected_revision: Option<i64>,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(owner)).await?;
    let stored = get_service(&*tx, owner, "id", id)
        .await?
        .ok_or_else(|| StoreError::ConfigServiceNotFound { id: id.to_owned() })?;
    if let Some(expected) = expected_revision {
        check_revision(id, expected, stored.revision)?;
    }
    tx.execute(
        "DELETE FROM config_services WHERE owner = $1 AND id = $2",
        &[&owner, &id],
    )
    .await
    .map_err(pg)?;
    notify(&*tx, instance, ChangeKind::Config, id, owner, None).await?;
    tx.commit().await.map_err(pg)
}

// ----- entries -----

pub(crate) async fn create_entry(
    client: &mut Client,
    instance: &str,
    owner: &str,
    mut entry: ConfigEntryRecord,
) -> Result<ConfigEntryRecord, StoreError> {
    entry.created_at = micros(entry.created_at);
    entry.updated_at = micros(entry.updated_at);
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(owner)).await?;
    let service = get_service(&*tx, owner, "id", &entry.service_id)
        .await?
        .ok_or_else(|| StoreError::ConfigServiceNotFound {
            id: entry.service_id.clone(),
        })?;
    let existing = entries_of(&*tx, owner, &service.id).await?;
    if !service.multi_entry && !existing.is_empty() {
        return Err(StoreError::ConfigSingleEntry { name: service.name });
    }
    if existing.iter().any(|e| e.label == entry.label) {
        return Err(StoreError::ConfigEntryLabelTaken { label: entry.label });
    }
    if existing.is_empty() {
        entry.is_default = true;
    } else if entry.is_default {
        clear_default(&*tx, &service.id, &entry.updated_at).await?;
    }
    tx.execute(
        "INSERT INTO config_entries \
         (id, service_id, label, is_default, field_values, revision, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &entry.id,
            &entry.service_id,
            &entry.label,
            &entry.is_default,
            &json(&entry.values),
            &entry.revision,
            &entry.created_at,
            &entry.updated_at,
        ],
    )
    .await
    .map_err(|e| match unique_violation(&e) {
        Some("config_entries_service_label") => StoreError::ConfigEntryLabelTaken {
            label: entry.label.clone(),
        },
        Some(_) => misuse(format!(
            "a config entry with id {} already exists",
            entry.id
        )),
        None => pg(e),
    })?;
    let revision = Some(entry.revision);
    notify(
        &*tx,
        instance,
        ChangeKind::Config,
        &entry.id,
        owner,
        revision,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(entry)
}

pub(crate) async fn get_entry(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
) -> Result<Option<ConfigEntryRecord>, StoreError> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {ENTRY_COLUMNS} FROM config_entries e \
                 JOIN config_services s ON s.id = e.service_id WHERE s.owner = $1 AND e.id = $2"
            ),
            &[&owner, &id],
        )
        .await
        .map_err(pg)?;
    row.as_ref().map(entry_from_row).transpose()
}

pub(crate) async fn list_entries(
    client: &impl GenericClient,
    owner: &str,
    service_id: &str,
) -> Result<Vec<ConfigEntryRecord>, StoreError> {
    if get_service(client, owner, "id", service_id)
        .await?
        .is_none()
    {
        return Err(StoreError::ConfigServiceNotFound {
            id: service_id.to_owned(),
        });
    }
    entries_of(client, owner, service_id).await
}

async fn entries_of(
    client: &impl GenericClient,
    owner: &str,
    service_id: &str,
) -> Result<Vec<ConfigEntryRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {ENTRY_COLUMNS} FROM config_entries e \
                 JOIN config_services s ON s.id = e.service_id \
                 WHERE s.owner = $1 AND e.service_id = $2 ORDER BY {ENTRY_ORDER}"
            ),
            &[&owner, &service_id],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(entry_from_row).collect()
}

pub(crate) async fn update_entry(
    client: &mut Client,
    instance: &str,
    owner: &str,
    entry: &ConfigEntryRecord,
    expected_revision: i64,
) -> Result<ConfigEntryRecord, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(owner)).await?;
    let stored = get_entry(&*tx, owner, &entry.id)
        .await?
        .filter(|stored| stored.service_id == entry.service_id)
        .ok_or_else(|| StoreError::ConfigEntryNotFound {
            id: entry.id.clone(),
        })?;
    check_revision(&stored.id, expected_revision, stored.revision)?;
    let next = ConfigEntryRecord {
        label: entry.label.clone(),
        values: entry.values.clone(),
        updated_at: micros(entry.updated_at),
        revision: expected_revision + 1,
        ..stored
    };
    tx.execute(
        "UPDATE config_entries SET label = $2, field_values = $3, revision = $4, \
         updated_at = $5 WHERE id = $1",
        &[
            &next.id,
            &next.label,
            &json(&next.values),
            &next.revision,
            &next.updated_at,
        ],
    )
    .await
    .map_err(|e| match unique_violation(&e) {
        Some(_) => StoreError::ConfigEntryLabelTaken {
            label: next.label.clone(),
        },
        None => pg(e),
    })?;
    let revision = Some(next.revision);
    notify(
        &*tx,
        instance,
        ChangeKind::Config,
        &next.id,
        owner,
        revision,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(next)
}

pub(crate) async fn delete_entry(
    client: &mut Client,
    instance: &str,
    owner: &str,
    id: &str,
    expected_revision: Option<i64>,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(owner)).await?;
    let stored = get_entry(&*tx, owner, id)
        .await?
        .ok_or_else(|| StoreError::ConfigEntryNotFound { id: id.to_owned() })?;
    if let Some(expected) = expected_revision {
        check_revision(id, expected, stored.revision)?;
    }
    tx.execute("DELETE FROM config_entries WHERE id = $1", &[&id])
        .await
        .map_err(pg)?;
    if stored.is_default {
        // The oldest remaining entry (if any) becomes the default.
        tx.execute(
            "UPDATE config_entries SET is_default = TRUE, revision = revision + 1, \
             updated_at = $2 WHERE id = (SELECT id FROM config_entries WHERE service_id = $1 \
             ORDER BY created_at, id COLLATE \"C\" LIMIT 1)",
            &[&stored.service_id, &now()],
        )
        .await
        .map_err(pg)?;
    }
    notify(&*tx, instance, ChangeKind::Config, id, owner, None).await?;
    tx.commit().await.map_err(pg)
}

pub(crate) async fn set_default_entry(
    client: &mut Client,
    instance: &str,
    owner: &str,
    id: &str,
) -> Result<ConfigEntryRecord, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(owner)).await?;
    let stored = get_entry(&*tx, owner, id)
        .await?
        .ok_or_else(|| StoreError::ConfigEntryNotFound { id: id.to_owned() })?;
    if stored.is_default {
        return Ok(stored);
    }
    let at = now();
    clear_default(&*tx, &stored.service_id, &at).await?;
    tx.execute(
        "UPDATE config_entries SET is_default = TRUE, revision = revision + 1, updated_at = $2 \
         WHERE id = $1",
        &[&id, &at],
    )
    .await
    .map_err(pg)?;
    let updated = get_entry(&*tx, owner, id)
        .await?
        .ok_or_else(|| StoreError::ConfigEntryNotFound { id: id.to_owned() })?;
    let revision = Some(updated.revision);
    notify(&*tx, instance, ChangeKind::Config, id, owner, revision).await?;
    tx.commit().await.map_err(pg)?;
    Ok(updated)
}

async fn clear_default(
    client: &impl GenericClient,
    service_id: &str,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE config_entries SET is_default = FALSE, revision = revision + 1, \
             updated_at = $2 WHERE service_id = $1 AND is_default",
            &[&service_id, at],
        )
        .await
        .map_err(pg)?;
    Ok(())
}

// ----- snapshot and dependencies -----

/// The sealed values of every owner (`{"secret": "v1:…"}` in `field_values`): their count, and
/// up to `limit` of them with their places, oldest entries first (as SQLite orders them).
pub(crate) async fn sealed_values(
    client: &mut Client,
    limit: u32,
) -> Result<SealedSample, StoreError> {
    const FROM: &str = "FROM config_entries e \
         JOIN config_services s ON s.id = e.service_id \
         CROSS JOIN LATERAL jsonb_each(e.field_values) AS f(key, value) \
         WHERE jsonb_typeof(f.value -> 'secret') = 'string'";
    let tx = super::snapshot(client).await?;
    let total: i64 = col(
        &tx.query_one(&format!("SELECT count(*) AS n {FROM}"), &[])
            .await
            .map_err(pg)?,
        "n",
    )?;
    let rows = tx
        .query(
            &format!(
                "SELECT s.owner, e.service_id, e.id AS entry_id, f.key AS field, \
                 f.value ->> 'secret' AS sealed {FROM} \
                 ORDER BY e.created_at, e.id COLLATE \"C\", f.key COLLATE \"C\" LIMIT $1"
            ),
            &[&i64::from(limit)],
        )
        .await
        .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    let values = rows
        .iter()
        .map(|row| {
            Ok(SealedValue {
                owner: col(row, "owner")?,
                service_id: col(row, "service_id")?,
                entry_id: col(row, "entry_id")?,
                field: col(row, "field")?,
                sealed: col(row, "sealed")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(SealedSample {
        total: u64::try_from(total).unwrap_or(0),
        values,
    })
}

pub(crate) async fn snapshot(
    client: &mut Client,
    owner: &str,
) -> Result<Vec<ConfigServiceEntries>, StoreError> {
    let tx = super::snapshot(client).await?;
    let services = list_services(&*tx, owner).await?;
    let mut out = Vec::with_capacity(services.len());
    for service in services {
        let entries = entries_of(&*tx, owner, &service.id).await?;
        out.push(ConfigServiceEntries { service, entries });
    }
    tx.commit().await.map_err(pg)?;
    Ok(out)
}

pub(crate) async fn sync_dependencies(
    client: &mut Client,
    instance: &str,
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
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(owner)).await?;
    let mut changes = ConfigDependencyChanges::default();
    let mut wanted = BTreeSet::new();
    for template in declared {
        if !wanted.insert(template.name.clone()) {
            continue;
        }
        match get_service(&*tx, owner, "name", &template.name).await? {
            Some(mut existing) => {
                if !existing.registered_by.iter().any(|t| t == tool_name) {
                    existing.registered_by.push(tool_name.to_owned());
                    existing.registered_by.sort();
                    existing.revision += 1;
                    existing.updated_at = at;
                    write_service(&*tx, &existing).await?;
                    changes.attached.push(existing.name);
                }
            }
            None => {
                let mut created = template;
                created.registered_by = vec![tool_name.to_owned()];
                created.auto_registered = true;
                created.created_at = micros(created.created_at);
                created.updated_at = micros(created.updated_at);
                insert_service(&*tx, &created).await?;
                changes.created.push(created.name);
            }
        }
    }
    for mut service in list_services(&*tx, owner).await? {
        if wanted.contains(&service.name) || !service.registered_by.iter().any(|t| t == tool_name) {
            continue;
        }
        service.registered_by.retain(|t| t != tool_name);
        let unused = service.registered_by.is_empty()
            && service.auto_registered
            && entries_of(&*tx, owner, &service.id).await?.is_empty();
        if unused {
            tx.execute("DELETE FROM config_services WHERE id = $1", &[&service.id])
                .await
                .map_err(pg)?;
            changes.removed.push(service.name);
        } else {
            service.revision += 1;
            service.updated_at = at;
            write_service(&*tx, &service).await?;
            changes.detached.push(service.name);
        }
    }
    let changed = !(changes.created.is_empty()
        && changes.attached.is_empty()
        && changes.detached.is_empty()
        && changes.removed.is_empty());
    if changed {
        notify(&*tx, instance, ChangeKind::Config, "", owner, None).await?;
    }
    tx.commit().await.map_err(pg)?;
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

// ----- rows -----

fn service_from_row(row: &Row) -> Result<ConfigServiceRecord, StoreError> {
    let id: String = col(row, "id")?;
    let t = "config_services";
    Ok(ConfigServiceRecord {
        owner: col(row, "owner")?,
        name: col(row, "name")?,
        display_name: col(row, "display_name")?,
        description: col(row, "description")?,
        category: col(row, "category")?,
        docs_url: col(row, "docs_url")?,
        multi_entry: col(row, "multi_entry")?,
        fields: json_col(row, "fields", t, &id)?,
        registered_by: json_col(row, "registered_by", t, &id)?,
        auto_registered: col(row, "auto_registered")?,
        revision: col(row, "revision")?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}

fn entry_from_row(row: &Row) -> Result<ConfigEntryRecord, StoreError> {
    let id: String = col(row, "id")?;
    Ok(ConfigEntryRecord {
        service_id: col(row, "service_id")?,
        label: col(row, "label")?,
        is_default: col(row, "is_default")?,
        values: json_col(row, "field_values", "config_entries", &id)?,
        revision: col(row, "revision")?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}
