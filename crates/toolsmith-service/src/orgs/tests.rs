//! The organisation rules, against a real SQLite store: who makes one, who manages whom, the
//! last owner, a stranger finding nothing, and the audit entries.

use std::sync::Arc;

use toolsmith_core::organization::{MemberWrite, OrgRole};
use toolsmith_store::{AuditQuery, SqliteStore, Store};

use crate::error::ServiceError;
use crate::input::Actor;
use crate::service::{ToolService, ToolServiceSettings};

pub(super) async fn service() -> (tempfile::TempDir, Arc<ToolService>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(&dir.path().join("toolsmith.db"))
            .await
            .unwrap(),
    );
    let service = ToolService::open(ToolServiceSettings::default(), store)
        .await
        .unwrap();
    (dir, service)
}

#[tokio::test]
async fn members_are_managed_by_role_and_a_stranger_finds_nothing() {
    let (_dir, s) = service().await;
    let (ann, bob, cat) = (Actor::user("ann"), Actor::user("bob"), Actor::user("cat"));

    // Only a person makes one; a name is checked and unique.
    let by_model = s
        .create_organization(&Actor::llm("ann"), "acme", None)
        .await;
    assert!(
        matches!(by_model, Err(ServiceError::Forbidden(_))),
        "{by_model:?}"
    );
    let bad = s.create_organization(&ann, "Acme!", None).await;
    assert!(matches!(bad, Err(ServiceError::Validation(_))), "{bad:?}");
    let acme = s
        .create_organization(&ann, "acme", Some("Acme Support"))
        .await
        .unwrap();
    assert!(toolsmith_core::organization::is_org_id(&acme.id));
    assert_eq!(acme.display_name, "Acme Support");
    let taken = s.create_organization(&bob, "acme", None).await;
    assert!(
        matches!(taken, Err(ServiceError::NameTaken(_))),
        "{taken:?}"
    );

    // A stranger: the same answer whether it exists or not, naming how to be added.
    let Err(ServiceError::NotFound(why)) = s.organization_members(&bob, "acme").await else {
        panic!("a stranger read the members");
    };
    assert!(
        why.contains("PUT /api/v1/organizations/acme/members/bob"),
        "{why}"
    );
    let Err(ServiceError::NotFound(none)) = s.organization_members(&bob, "nothing").await else {
        panic!("an unknown organisation was found");
    };
    assert_eq!(none.replace("nothing", "acme"), why);

    // The owner adds an editor; an editor manages no one; an admin manages but no owners.
    let (_, added) = s
        .put_organization_member(&ann, "acme", "bob", OrgRole::Editor)
        .await
        .unwrap();
    assert_eq!(added, MemberWrite::Added);
    let by_editor = s
        .put_organization_member(&bob, "acme", "cat", OrgRole::Viewer)
        .await;
    assert!(
        matches!(by_editor, Err(ServiceError::Forbidden(_))),
        "{by_editor:?}"
    );
    s.put_organization_member(&ann, &acme.id, "bob", OrgRole::Admin)
        .await
        .unwrap();
    s.put_organization_member(&bob, "acme", "cat", OrgRole::Viewer)
        .await
        .unwrap();
    let owner_by_admin = s
        .put_organization_member(&bob, "acme", "cat", OrgRole::Owner)
        .await;
    assert!(
        matches!(owner_by_admin, Err(ServiceError::Forbidden(_))),
        "{owner_by_admin:?}"
    );
    let ann_by_admin = s.remove_organization_member(&bob, "acme", "ann").await;
    assert!(
        matches!(ann_by_admin, Err(ServiceError::Forbidden(_))),
        "{ann_by_admin:?}"
    );
    let an_org_as_member = s
        .put_organization_member(&ann, "acme", &acme.id, OrgRole::Viewer)
        .await;
    assert!(matches!(an_org_as_member, Err(ServiceError::Validation(_))));

    // The last owner stays; a viewer may leave.
    let Err(ServiceError::InvalidState(last)) =
        s.remove_organization_member(&ann, "acme", "ann").await
    else {
        panic!("the last owner left");
    };
    assert!(last.contains("\"role\": \"owner\""), "{last}");
    let demoted = s
        .put_organization_member(&ann, "acme", "ann", OrgRole::Viewer)
        .await;
    assert!(
        matches!(demoted, Err(ServiceError::InvalidState(_))),
        "{demoted:?}"
    );
    s.remove_organization_member(&cat, "acme", "cat")
        .await
        .unwrap();
    assert!(s.my_organizations(&cat).await.unwrap().is_empty());
    let mine = s.my_organizations(&bob).await.unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].1, OrgRole::Admin);

    // Renamed by an admin; deleted only by an owner.
    let renamed = s
        .rename_organization(&bob, "acme", "Acme Inc.")
        .await
        .unwrap();
    assert_eq!(renamed.display_name, "Acme Inc.");
    let by_admin = s.delete_organization(&bob, "acme").await;
    assert!(
        matches!(by_admin, Err(ServiceError::Forbidden(_))),
        "{by_admin:?}"
    );
    s.delete_organization(&ann, "acme").await.unwrap();
    assert!(s.my_organizations(&bob).await.unwrap().is_empty());

    // Every change audited with the person who made it.
    let query = AuditQuery {
        action: Some("org.".to_owned()),
        limit: 100,
        ..AuditQuery::default()
    };
    let entries = s.audit().list(&query).await.unwrap();
    let seen: Vec<(String, String)> = entries
        .iter()
        .filter(|e| e["targetType"] == "organization")
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["actor"].as_str().unwrap().to_owned(),
            )
        })
        .rev()
        .collect();
    let want: Vec<(String, String)> = [
        ("org.create", "ann"),
        ("org.member.add", "ann"),
        ("org.member.role", "ann"),
        ("org.member.add", "bob"),
        ("org.member.remove", "cat"),
        ("org.update", "bob"),
        ("org.delete", "ann"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(seen, want);
}
