//! The policy through the service: refused calls, filtered listings, fail-closed start-up.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::{ErrorKind, ToolContext};
use toolsmith_policy::PolicyDocument;
use toolsmith_store::{SqliteStore, Store};

use crate::{Actor, CreateTool, ServiceError, ToolService, ToolServiceSettings};

async fn open(
    policy: Option<PolicyDocument>,
) -> (tempfile::TempDir, Result<Arc<ToolService>, ServiceError>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let config = ToolServiceSettings {
        policy,
        ..ToolServiceSettings::default()
    };
    let service = ToolService::open(config, store).await;
    (dir, service)
}

fn policy(toml_text: &str) -> PolicyDocument {
    toml::from_str(toml_text).unwrap()
}

fn js(name: &str) -> CreateTool {
    CreateTool {
        name: name.to_owned(),
        kind: Default::default(),
        description: "returns one".to_owned(),
        parameters: json!({"type": "object"}),
        code: "return 1;".to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

fn names(service: &ToolService, user: &str, agent: Option<&str>) -> Vec<String> {
    let mut ctx = ToolContext::new(user);
    ctx.agent_id = agent.map(str::to_owned);
    service
        .visible_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[tokio::test]
async fn denied_tools_are_neither_listed_nor_callable_and_deny_beats_also_allow() {
    let (_dir, service) = open(Some(policy(
        r#"
        deny = ["calculate"]
        also_allow = ["calculate"]
        [agents.reader]
        deny = ["group:custom"]
        "#,
    )))
    .await;
    let service = service.unwrap();
    service
        .create(&Actor::user("default"), js("mine"))
        .await
        .unwrap();

    let all = names(&service, "default", None);
    assert!(!all.contains(&"calculate".to_owned()), "{all:?}");
    assert!(all.contains(&"mine".to_owned()));
    assert!(all.contains(&"generate_uuid".to_owned()));
    let reader = names(&service, "default", Some("reader"));
    assert!(!reader.contains(&"mine".to_owned()), "{reader:?}");

    let res = service
        .execute(
            "calculate",
            json!({"expression": "1+1"}),
            ToolContext::new("default"),
        )
        .await;
    assert_eq!(res.error_kind(), Some(ErrorKind::Denied), "{res:?}");
    assert!(res.error_message().unwrap().contains("calculate"));

    let mut ctx = ToolContext::new("default");
    ctx.agent_id = Some("reader".to_owned());
    let res = service.execute("mine", json!({}), ctx).await;
    assert_eq!(res.error_kind(), Some(ErrorKind::Denied));
    let res = service
        .execute("mine", json!({}), ToolContext::new("default"))
        .await;
    assert!(!res.is_error, "{res:?}");
}

#[tokio::test]
async fn an_unknown_profile_or_group_stops_start_up() {
    for bad in [r#"profile = "nonsense""#, r#"allow = ["group:nope"]"#] {
        let (_dir, service) = open(Some(policy(bad))).await;
        let err = service.unwrap_err();
        assert!(err.to_string().starts_with("policy:"), "{err}");
    }
}

#[tokio::test]
async fn without_a_policy_everything_is_visible() {
    let (_dir, service) = open(None).await;
    let service = service.unwrap();
    assert_eq!(
        names(&service, "default", Some("anyone")),
        service.registry().names("default")
    );
}

/// Issue 41: an organisation's rules are its `users.<org id>` scope of the one server-wide
/// policy; a person acting in it is held to those and to their own, and no one changes the
/// policy from an organisation's scope.
#[tokio::test]
async fn in_an_organisation_its_scope_and_the_persons_own_rules_both_hold() {
    let org = "org_00000000000000aa";
    let (_dir, service) = open(Some(policy(&format!(
        r#"
        [users.bob]
        deny = ["calculate"]
        [users."{org}"]
        deny = ["generate_uuid"]
        "#
    ))))
    .await;
    let service = service.unwrap();
    let visible = |member: &str| {
        let mut ctx = ToolContext::new(org);
        ctx.member = Some(member.to_owned());
        service
            .visible_tools(&ctx)
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };

    // The organisation's deny holds for every member; bob's own deny for bob only.
    let ann = visible("ann");
    assert!(ann.contains(&"calculate".to_owned()), "{ann:?}");
    assert!(!ann.contains(&"generate_uuid".to_owned()), "{ann:?}");
    let bob = visible("bob");
    assert!(!bob.contains(&"calculate".to_owned()), "{bob:?}");
    assert!(!bob.contains(&"generate_uuid".to_owned()), "{bob:?}");

    let mut as_bob = ToolContext::new(org);
    as_bob.member = Some("bob".to_owned());
    let res = service
        .execute("calculate", json!({"expression": "1+1"}), as_bob)
        .await;
    assert_eq!(res.error_kind(), Some(ErrorKind::Denied), "{res:?}");
    let why = res.error_message().unwrap();
    assert!(
        why.contains("user 'bob' acting in organisation 'org_00000000000000aa'"),
        "{why}"
    );
    let mut as_ann = ToolContext::new(org);
    as_ann.member = Some("ann".to_owned());
    let res = service
        .execute("calculate", json!({"expression": "1+1"}), as_ann)
        .await;
    assert!(!res.is_error, "{res:?}");

    // No one writes the server's policy from an organisation's scope, admin or not.
    let in_org = Actor::user(org)
        .with_admin(true)
        .with_member(Some("ann".to_owned()));
    for refused in [
        service.set_policy(&in_org, json!({}), None).await.err(),
        service.clear_policy(&in_org, None).await.err(),
    ] {
        let Some(ServiceError::Forbidden(why)) = refused else {
            panic!("a policy write in an organisation's scope: {refused:?}");
        };
        assert!(why.contains("the policy is the server's"), "{why}");
    }
    assert_eq!(service.policy_view().await.unwrap().source, "file");
}
