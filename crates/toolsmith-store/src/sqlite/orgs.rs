//! Organisations and their members on SQLite (`organizations`, `organization_members`). One
//! writer connection, so the last-owner check inside a write's transaction is exact.

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use toolsmith_core::organization::{MemberWrite, OrgMemberRecord, OrgRole, OrganizationRecord};

use super::rows::{backend, parse_time, timestamp};
use crate::StoreError;
use crate::agent_rows::corrupt;

store_on_connections! {
    impl OrgStore {
        write fn insert_organization(org: &OrganizationRecord, creator: &OrgMemberRecord) -> bool
            = insert(&org, &creator);
        read fn get_organization(id_or_name: &str) -> Option<OrganizationRecord>
            = get(&id_or_name);
        write fn rename_organization(id: &str, display_name: &str) -> Option<OrganizationRecord>
            = rename(&id, &display_name);
        write fn delete_organization(id: &str) -> bool = delete(&id);
        read fn user_organizations(user_id: &str) -> Vec<(OrganizationRecord, OrgRole)>
            = of_user(&user_id);
        read fn org_members(org_id: &str) -> Vec<OrgMemberRecord> = members(&org_id);
        read fn org_role(org_id: &str, user_id: &str) -> Option<OrgRole> = role(&org_id, &user_id);
        write fn put_org_member(member: &OrgMemberRecord) -> MemberWrite = put_member(&member);
        write fn remove_org_member(org_id: &str, user_id: &str) -> MemberWrite
            = remove_member(&org_id, &user_id);
    }
}

const ORG_COLUMNS: &str = "o.id, o.name, o.display_name, o.created_at, o.created_by";

fn org_from_row(row: &Row<'_>) -> Result<OrganizationRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let created: String = row.get(3).map_err(backend)?;
    Ok(OrganizationRecord {
        name: row.get(1).map_err(backend)?,
        display_name: row.get(2).map_err(backend)?,
        created_at: parse_time(&created)
            .map_err(|e| corrupt("organizations", &id, "created_at", e))?,
        created_by: row.get(4).map_err(backend)?,
        id,
    })
}

fn role_at(row: &Row<'_>, i: usize, id: &str) -> Result<OrgRole, StoreError> {
    let text: String = row.get(i).map_err(backend)?;
    OrgRole::parse(&text).map_err(|e| corrupt("organization_members", id, "role", e))
}

fn insert(
    conn: &mut Connection,
    org: &OrganizationRecord,
    creator: &OrgMemberRecord,
) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let added = tx
        .execute(
            "INSERT INTO organizations (id, name, display_name, created_at, created_by) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            params![
                org.id,
                org.name,
                org.display_name,
                timestamp(&org.created_at),
                org.created_by
            ],
        )
        .map_err(backend)?;
    if added == 0 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO organization_members (org_id, user_id, role, added_at) \
         VALUES (?1, ?2, ?3, ?4)",
        params![
            org.id,
            creator.user_id,
            creator.role.as_str(),
            timestamp(&creator.added_at)
        ],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn get(conn: &Connection, id_or_name: &str) -> Result<Option<OrganizationRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {ORG_COLUMNS} FROM organizations o WHERE o.id = ?1 OR o.name = ?1 \
             ORDER BY o.id = ?1 DESC LIMIT 1"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([id_or_name]).map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => Ok(Some(org_from_row(row)?)),
        None => Ok(None),
    }
}

fn rename(
    conn: &mut Connection,
    id: &str,
    display_name: &str,
) -> Result<Option<OrganizationRecord>, StoreError> {
    conn.execute(
        "UPDATE organizations SET display_name = ?2 WHERE id = ?1",
        params![id, display_name],
    )
    .map_err(backend)?;
    get(conn, id).map(|found| found.filter(|o| o.id == id))
}

fn delete(conn: &mut Connection, id: &str) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute("DELETE FROM organization_members WHERE org_id = ?1", [id])
        .map_err(backend)?;
    let n = tx
        .execute("DELETE FROM organizations WHERE id = ?1", [id])
        .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(n > 0)
}

fn of_user(
    conn: &Connection,
    user_id: &str,
) -> Result<Vec<(OrganizationRecord, OrgRole)>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {ORG_COLUMNS}, m.role FROM organizations o \
             JOIN organization_members m ON m.org_id = o.id \
             WHERE m.user_id = ?1 ORDER BY o.name"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([user_id]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        let org = org_from_row(row)?;
        let role = role_at(row, 5, &org.id)?;
        out.push((org, role));
    }
    Ok(out)
}

fn members(conn: &Connection, org_id: &str) -> Result<Vec<OrgMemberRecord>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT user_id, role, added_at FROM organization_members WHERE org_id = ?1 \
             ORDER BY user_id",
        )
        .map_err(backend)?;
    let mut rows = stmt.query([org_id]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        let added: String = row.get(2).map_err(backend)?;
        out.push(OrgMemberRecord {
            org_id: org_id.to_owned(),
            user_id: row.get(0).map_err(backend)?,
            role: role_at(row, 1, org_id)?,
            added_at: parse_time(&added)
                .map_err(|e| corrupt("organization_members", org_id, "added_at", e))?,
        });
    }
    Ok(out)
}

fn role(conn: &Connection, org_id: &str, user_id: &str) -> Result<Option<OrgRole>, StoreError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT role FROM organization_members WHERE org_id = ?1 AND user_id = ?2",
            params![org_id, user_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    text.map(|t| OrgRole::parse(&t).map_err(|e| corrupt("organization_members", org_id, "role", e)))
        .transpose()
}

/// How many owners `org_id` has, and the role of `user_id` in it.
fn owners_and_role(
    tx: &Connection,
    org_id: &str,
    user_id: &str,
) -> Result<(i64, Option<OrgRole>), StoreError> {
    let owners: i64 = tx
        .query_row(
            "SELECT count(*) FROM organization_members WHERE org_id = ?1 AND role = 'owner'",
            [org_id],
            |row| row.get(0),
        )
        .map_err(backend)?;
    Ok((owners, role(tx, org_id, user_id)?))
}

fn put_member(conn: &mut Connection, member: &OrgMemberRecord) -> Result<MemberWrite, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let exists = tx
        .prepare("SELECT 1 FROM organizations WHERE id = ?1")
        .and_then(|mut stmt| stmt.exists([&member.org_id]))
        .map_err(backend)?;
    if !exists {
        return Ok(MemberWrite::NotMember);
    }
    let (owners, current) = owners_and_role(&tx, &member.org_id, &member.user_id)?;
    if current == Some(OrgRole::Owner) && member.role != OrgRole::Owner && owners <= 1 {
        return Ok(MemberWrite::LastOwner);
    }
    tx.execute(
        "INSERT INTO organization_members (org_id, user_id, role, added_at) \
         VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
        params![
            member.org_id,
            member.user_id,
            member.role.as_str(),
            timestamp(&member.added_at)
        ],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(if current.is_some() {
        MemberWrite::Changed
    } else {
        MemberWrite::Added
    })
}

fn remove_member(
    conn: &mut Connection,
    org_id: &str,
    user_id: &str,
) -> Result<MemberWrite, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (owners, current) = owners_and_role(&tx, org_id, user_id)?;
    match current {
        None => return Ok(MemberWrite::NotMember),
        Some(OrgRole::Owner) if owners <= 1 => return Ok(MemberWrite::LastOwner),
        Some(_) => {}
    }
    tx.execute(
        "DELETE FROM organization_members WHERE org_id = ?1 AND user_id = ?2",
        params![org_id, user_id],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(MemberWrite::Removed)
}
