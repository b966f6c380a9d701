//! Organisations and their members in PostgreSQL (`organizations`, `organization_members`). A
//! change of membership locks the organisation's row (`FOR UPDATE`), so two instances cannot
//! both demote or remove one of its last two owners.

use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::organization::{MemberWrite, OrgMemberRecord, OrgRole, OrganizationRecord};

use super::errors::pg;
use super::rows::{col, micros};
use crate::StoreError;
use crate::agent_rows::corrupt;

store_on_pool! {
    impl OrgStore |client, this_instance| {
        fn insert_organization(org: &OrganizationRecord, creator: &OrgMemberRecord) -> bool
            = insert(&mut client, org, creator);
        fn get_organization(id_or_name: &str) -> Option<OrganizationRecord>
            = get(&**client, id_or_name);
        fn rename_organization(id: &str, display_name: &str) -> Option<OrganizationRecord>
            = rename(&**client, id, display_name);
        fn delete_organization(id: &str) -> bool = delete(&**client, id);
        fn user_organizations(user_id: &str) -> Vec<(OrganizationRecord, OrgRole)>
            = of_user(&**client, user_id);
        fn org_members(org_id: &str) -> Vec<OrgMemberRecord> = members(&**client, org_id);
        fn org_role(org_id: &str, user_id: &str) -> Option<OrgRole>
            = role(&**client, org_id, user_id);
        fn put_org_member(member: &OrgMemberRecord) -> MemberWrite
            = put_member(&mut client, member);
        fn remove_org_member(org_id: &str, user_id: &str) -> MemberWrite
            = remove_member(&mut client, org_id, user_id);
    }
}

fn org_of(row: &Row) -> Result<OrganizationRecord, StoreError> {
    Ok(OrganizationRecord {
        id: col(row, "id")?,
        name: col(row, "name")?,
        display_name: col(row, "display_name")?,
        created_at: col(row, "created_at")?,
        created_by: col(row, "created_by")?,
    })
}

fn role_of(row: &Row, org_id: &str) -> Result<OrgRole, StoreError> {
    let text: String = col(row, "role")?;
    OrgRole::parse(&text).map_err(|e| corrupt("organization_members", org_id, "role", e))
}

async fn insert(
    client: &mut Client,
    org: &OrganizationRecord,
    creator: &OrgMemberRecord,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let added = tx
        .execute(
            "INSERT INTO organizations (id, name, display_name, created_at, created_by) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[
                &org.id,
                &org.name,
                &org.display_name,
                &micros(org.created_at),
                &org.created_by,
            ],
        )
        .await
        .map_err(pg)?;
    if added == 0 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO organization_members (org_id, user_id, role, added_at) \
         VALUES ($1, $2, $3, $4)",
        &[
            &org.id,
            &creator.user_id,
            &creator.role.as_str(),
            &micros(creator.added_at),
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

async fn get(
    client: &impl GenericClient,
    id_or_name: &str,
) -> Result<Option<OrganizationRecord>, StoreError> {
    client
        .query_opt(
            "SELECT id, name, display_name, created_at, created_by FROM organizations \
             WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1",
            &[&id_or_name],
        )
        .await
        .map_err(pg)?
        .map(|row| org_of(&row))
        .transpose()
}

async fn rename(
    client: &impl GenericClient,
    id: &str,
    display_name: &str,
) -> Result<Option<OrganizationRecord>, StoreError> {
    client
        .query_opt(
            "UPDATE organizations SET display_name = $2 WHERE id = $1 \
             RETURNING id, name, display_name, created_at, created_by",
            &[&id, &display_name],
        )
        .await
        .map_err(pg)?
        .map(|row| org_of(&row))
        .transpose()
}

async fn delete(client: &impl GenericClient, id: &str) -> Result<bool, StoreError> {
    // The members go with it (ON DELETE CASCADE).
    let n = client
        .execute("DELETE FROM organizations WHERE id = $1", &[&id])
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

async fn of_user(
    client: &impl GenericClient,
    user_id: &str,
) -> Result<Vec<(OrganizationRecord, OrgRole)>, StoreError> {
    let rows = client
        .query(
            "SELECT o.id, o.name, o.display_name, o.created_at, o.created_by, m.role \
             FROM organization_members m JOIN organizations o ON o.id = m.org_id \
             WHERE m.user_id = $1 ORDER BY o.name",
            &[&user_id],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            let org = org_of(row)?;
            let role = role_of(row, &org.id)?;
            Ok((org, role))
        })
        .collect()
}

async fn members(
    client: &impl GenericClient,
    org_id: &str,
) -> Result<Vec<OrgMemberRecord>, StoreError> {
    let rows = client
        .query(
            "SELECT user_id, role, added_at FROM organization_members WHERE org_id = $1 \
             ORDER BY user_id",
            &[&org_id],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            Ok(OrgMemberRecord {
                org_id: org_id.to_owned(),
                user_id: col(row, "user_id")?,
                role: role_of(row, org_id)?,
                added_at: col(row, "added_at")?,
            })
        })
        .collect()
}

async fn role(
    client: &impl GenericClient,
    org_id: &str,
    user_id: &str,
) -> Result<Option<OrgRole>, StoreError> {
    client
        .query_opt(
            "SELECT role FROM organization_members WHERE org_id = $1 AND user_id = $2",
            &[&org_id, &user_id],
        )
        .await
        .map_err(pg)?
        .map(|row| role_of(&row, org_id))
        .transpose()
}

/// Locks organisation `org_id` for this transaction; its number of owners and the role of
/// `user_id` in it, or `None` when the organisation is gone.
async fn lock_org(
    tx: &impl GenericClient,
    org_id: &str,
    user_id: &str,
) -> Result<Option<(i64, Option<OrgRole>)>, StoreError> {
    let found = tx
        .query_opt(
            "SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE",
            &[&org_id],
        )
        .await
        .map_err(pg)?;
    if found.is_none() {
        return Ok(None);
    }
    let owners: i64 = col(
        &tx.query_one(
            "SELECT count(*) AS n FROM organization_members WHERE org_id = $1 AND role = 'owner'",
            &[&org_id],
        )
        .await
        .map_err(pg)?,
        "n",
    )?;
    Ok(Some((owners, role(tx, org_id, user_id).await?)))
}

async fn put_member(
    client: &mut Client,
    member: &OrgMemberRecord,
) -> Result<MemberWrite, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let Some((owners, current)) = lock_org(&*tx, &member.org_id, &member.user_id).await? else {
        return Ok(MemberWrite::NotMember);
    };
    if current == Some(OrgRole::Owner) && member.role != OrgRole::Owner && owners <= 1 {
        return Ok(MemberWrite::LastOwner);
    }
    tx.execute(
        "INSERT INTO organization_members (org_id, user_id, role, added_at) \
         VALUES ($1, $2, $3, $4) \
         ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role",
        &[
            &member.org_id,
            &member.user_id,
            &member.role.as_str(),
            &micros(member.added_at),
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(if current.is_some() {
        MemberWrite::Changed
    } else {
        MemberWrite::Added
    })
}

async fn remove_member(
    client: &mut Client,
    org_id: &str,
    user_id: &str,
) -> Result<MemberWrite, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let Some((owners, current)) = lock_org(&*tx, org_id, user_id).await? else {
        return Ok(MemberWrite::NotMember);
    };
    match current {
        None => return Ok(MemberWrite::NotMember),
        Some(OrgRole::Owner) if owners <= 1 => return Ok(MemberWrite::LastOwner),
        Some(_) => {}
    }
    tx.execute(
        "DELETE FROM organization_members WHERE org_id = $1 AND user_id = $2",
        &[&org_id, &user_id],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(MemberWrite::Removed)
}
