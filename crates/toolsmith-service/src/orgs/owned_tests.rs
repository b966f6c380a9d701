//! What an organisation owns when it is deleted (issue 41): refused while it owns anything
//! someone set up, each holding named with how to empty it; the person's own things never
//! count; deleted once empty.

use serde_json::json;
use toolsmith_core::ToolContext;
use toolsmith_store::AuditQuery;

use super::tests::service;
use crate::agents::AgentInput;
use crate::config_center::ServiceInput;
use crate::error::ServiceError;
use crate::input::Actor;
use crate::prompts::PromptInput;

fn prompt(name: &str) -> PromptInput {
    PromptInput {
        name: name.to_owned(),
        agent: None,
        enabled: true,
        definition: serde_json::from_value(
            json!({"description": "triage", "messages": [{"role": "user", "content": {"type": "text", "text": "Triage it."}}]}),
        )
        .unwrap(),
    }
}

fn config_service(name: &str) -> ServiceInput {
    ServiceInput {
        name: name.to_owned(),
        display_name: Some("Support desk".to_owned()),
        description: None,
        category: None,
        docs_url: None,
        multi_entry: false,
        fields: None,
    }
}

fn agent(name: &str) -> AgentInput {
    AgentInput {
        name: name.to_owned(),
        definition: serde_json::from_value(
            json!({"instructions": "Help.", "model": {"service": "openai", "model": "gpt-4o-mini"}}),
        )
        .unwrap(),
    }
}

#[tokio::test]
async fn an_organisation_is_deleted_only_once_it_owns_nothing_and_each_holding_is_named() {
    let (_dir, s) = service().await;
    let ann = Actor::user("ann");
    let acme = s.create_organization(&ann, "acme", None).await.unwrap();
    let in_acme = Actor::user(acme.id.clone()).with_member(Some("ann".to_owned()));

    // Ann's own things are hers, never the organisation's.
    s.create_prompt(&ann, prompt("mine")).await.unwrap();
    s.create_config_service(&ann, config_service("desk"))
        .await
        .unwrap();
    assert!(s.organization_holdings(&acme.id).await.unwrap().is_empty());

    s.create_prompt(&in_acme, prompt("triage")).await.unwrap();
    s.create_config_service(&in_acme, config_service("desk"))
        .await
        .unwrap();
    s.create_agent_as(&in_acme, agent("helper")).await.unwrap();
    let remembered = s
        .execute(
            "remember",
            json!({"content": "Acme's support hours are 9 to 5.", "type": "fact"}),
            ToolContext::new(acme.id.clone()),
        )
        .await;
    assert!(!remembered.is_error, "{remembered:?}");

    let Err(ServiceError::InvalidState(why)) = s.delete_organization(&ann, "acme").await else {
        panic!("an organisation owning things was deleted");
    };
    for named in [
        "1 prompt(s) (DELETE /api/v1/prompts/{id})",
        "1 Config Center service(s) (DELETE /api/v1/config/services/{service})",
        "1 agent definition(s) (DELETE /api/v1/agents/{id})",
        "data records (memories, scheduled tasks, tables or resources) (DELETE \
         /api/v1/data?confirm=true",
        "X-Toolsmith-Organization: acme",
    ] {
        assert!(why.contains(named), "{named} not in: {why}");
    }
    assert!(!why.contains("custom tool"), "{why}");

    // Emptied in its scope, it goes; ann's own things stay.
    s.delete_prompt(&in_acme, "triage").await.unwrap();
    s.delete_config_service(&in_acme, "desk", None)
        .await
        .unwrap();
    s.delete_agent_as(&in_acme, "helper").await.unwrap();
    s.data_erase(&in_acme, &acme.id).await.unwrap();
    s.delete_organization(&ann, "acme").await.unwrap();
    assert!(s.store.get_organization(&acme.id).await.unwrap().is_none());
    assert_eq!(s.store.list_prompts("ann").await.unwrap().len(), 1);
    assert_eq!(s.store.list_config_services("ann").await.unwrap().len(), 1);

    // What the organisation did stays in the audit log, naming the person who did it.
    let query = AuditQuery {
        limit: 100,
        ..AuditQuery::default()
    };
    let audit = s.store.list_audit(&query).await.unwrap();
    let deleted = audit
        .iter()
        .find(|e| e.action == "org.delete")
        .expect("org.delete audited");
    assert_eq!(deleted.actor, "ann");
    let made = audit
        .iter()
        .find(|e| e.action == "agent.create")
        .expect("agent.create audited");
    assert_eq!(made.actor, "ann");
}
