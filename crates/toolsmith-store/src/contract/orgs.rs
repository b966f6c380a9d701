//! Organisations' contract: a name is unique, an organisation is found by id or name, its
//! creator is its first owner, members are added, changed and removed, and no change leaves
//! it without an owner (also when two processes race to demote its two owners); deleting it
//! deletes its memberships.

use chrono::{DateTime, TimeZone, Utc};

use super::{Backend, on_both_backends};
use crate::{MemberWrite, OrgMemberRecord, OrgRole, OrganizationRecord};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn org(id: &str, name: &str, by: &str) -> OrganizationRecord {
    OrganizationRecord {
        id: id.to_owned(),
        name: name.to_owned(),
        display_name: format!("{name} Inc."),
        created_at: at(0),
        created_by: by.to_owned(),
    }
}

fn member(org_id: &str, user: &str, role: OrgRole) -> OrgMemberRecord {
    OrgMemberRecord {
        org_id: org_id.to_owned(),
        user_id: user.to_owned(),
        role,
        added_at: at(1),
    }
}

const ACME: &str = "org_00000000000000a1";
const BETA: &str = "org_00000000000000b2";

async fn members_have_roles_and_an_organisation_keeps_an_owner(backend: &Backend) {
    let store = backend.store();
    let acme = org(ACME, "acme", "alice");
    assert!(
        store
            .insert_organization(&acme, &member(ACME, "alice", OrgRole::Owner))
            .await
            .unwrap()
    );
    // A taken name (or id) is refused, and nothing is written.
    assert!(
        !store
            .insert_organization(
                &org(BETA, "acme", "bob"),
                &member(BETA, "bob", OrgRole::Owner)
            )
            .await
            .unwrap()
    );
    assert_eq!(store.org_role(BETA, "bob").await.unwrap(), None);
    assert_eq!(store.get_organization(BETA).await.unwrap(), None);
    // Found by id and by name.
    assert_eq!(
        store.get_organization(ACME).await.unwrap(),
        Some(acme.clone())
    );
    assert_eq!(
        store.get_organization("acme").await.unwrap(),
        Some(acme.clone())
    );
    assert_eq!(store.get_organization("nope").await.unwrap(), None);

    assert_eq!(
        store.org_role(ACME, "alice").await.unwrap(),
        Some(OrgRole::Owner)
    );
    assert_eq!(
        store
            .put_org_member(&member(ACME, "bob", OrgRole::Viewer))
            .await
            .unwrap(),
        MemberWrite::Added
    );
    assert_eq!(
        store
            .put_org_member(&member(ACME, "bob", OrgRole::Editor))
            .await
            .unwrap(),
        MemberWrite::Changed
    );
    let members = store.org_members(ACME).await.unwrap();
    let roles: Vec<(&str, OrgRole)> = members
        .iter()
        .map(|m| (m.user_id.as_str(), m.role))
        .collect();
    assert_eq!(
        roles,
        vec![("alice", OrgRole::Owner), ("bob", OrgRole::Editor)]
    );
    let of_bob = store.user_organizations("bob").await.unwrap();
    assert_eq!(of_bob, vec![(acme.clone(), OrgRole::Editor)]);
    assert!(store.user_organizations("carol").await.unwrap().is_empty());

    // The last owner can be neither demoted nor removed.
    assert_eq!(
        store
            .put_org_member(&member(ACME, "alice", OrgRole::Admin))
            .await
            .unwrap(),
        MemberWrite::LastOwner
    );
    assert_eq!(
        store.remove_org_member(ACME, "alice").await.unwrap(),
        MemberWrite::LastOwner
    );
    // With a second owner, one of them can go.
    store
        .put_org_member(&member(ACME, "bob", OrgRole::Owner))
        .await
        .unwrap();
    assert_eq!(
        store.remove_org_member(ACME, "alice").await.unwrap(),
        MemberWrite::Removed
    );
    assert_eq!(
        store.remove_org_member(ACME, "alice").await.unwrap(),
        MemberWrite::NotMember
    );
    assert_eq!(store.org_role(ACME, "alice").await.unwrap(), None);

    // Two processes demoting the two owners at once: one wins, one owner is left.
    store
        .put_org_member(&member(ACME, "alice", OrgRole::Owner))
        .await
        .unwrap();
    let other = backend.another_process().await;
    let (alice, bob) = (
        member(ACME, "alice", OrgRole::Viewer),
        member(ACME, "bob", OrgRole::Viewer),
    );
    let (a, b) = tokio::join!(store.put_org_member(&alice), other.put_org_member(&bob));
    let outcomes = [a.unwrap(), b.unwrap()];
    assert!(
        outcomes.contains(&MemberWrite::Changed) && outcomes.contains(&MemberWrite::LastOwner),
        "{outcomes:?}"
    );
    let owners = store
        .org_members(ACME)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == OrgRole::Owner)
        .count();
    assert_eq!(owners, 1);

    // Renamed for people; deleted with its memberships, and a member write then finds nothing.
    let renamed = store
        .rename_organization(ACME, "Acme Support")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(renamed.display_name, "Acme Support");
    assert_eq!(renamed.name, "acme");
    assert_eq!(store.rename_organization(BETA, "x").await.unwrap(), None);
    assert!(store.delete_organization(ACME).await.unwrap());
    assert!(!store.delete_organization(ACME).await.unwrap());
    assert_eq!(backend.count_rows("organization_members").await, 0);
    assert_eq!(
        store
            .put_org_member(&member(ACME, "carol", OrgRole::Viewer))
            .await
            .unwrap(),
        MemberWrite::NotMember
    );
    assert!(store.user_organizations("bob").await.unwrap().is_empty());
}

on_both_backends!(members_have_roles_and_an_organisation_keeps_an_owner);
