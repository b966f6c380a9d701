//! A model's delete racing a person's change, made deterministic at the seam between the
//! delete's read and its write, against a real SQLite store: the person's revision is kept.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::ToolContext;
use toolsmith_store::{SqliteStore, Store};

use crate::agents::AgentInput;
use crate::input::Actor;
use crate::{ServiceError, ToolService, ToolServiceSettings};

fn input(instructions: &str) -> AgentInput {
    AgentInput {
        name: "scratch".to_owned(),
        definition: serde_json::from_value(json!({
            "instructions": instructions,
            "model": {"service": "local", "model": "test-model"},
        }))
        .unwrap(),
    }
}

#[tokio::test]
async fn a_persons_change_between_a_models_read_and_its_delete_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let service = ToolService::open(ToolServiceSettings::default(), store)
        .await
        .unwrap();
    let mut model = ToolContext::new("default");
    model.model_caller = true;
    let by_model = Actor::llm("default");
    let person = Actor::user("default");
    let written = service
        .create_agent_by_model(&by_model, &model, input("A model's draft."))
        .await
        .unwrap();
    assert!(written.definition.written_by_model.is_some());

    // The model's delete has read the definition (written by a model, revision 1) …
    let read = service
        .agent_a_model_may_delete(&model, "scratch")
        .await
        .unwrap();
    // … a person takes it over before the delete is written …
    let taken = service
        .update_agent_as(&person, "scratch", input("Mine now."), None)
        .await
        .unwrap();
    assert_eq!(taken.revision, 2);
    assert!(taken.definition.written_by_model.is_none());
    // … and the delete, at the revision it read, deletes nothing and says why.
    let refused = service
        .delete_read_agent_as(&by_model, read, Some(1))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ServiceError::InvalidState(m)
            if m.contains("changed since it was read") && m.contains("now 2")),
        "{refused:?}"
    );
    let kept = service
        .get_agent(&ToolContext::new("default"), "scratch")
        .await
        .unwrap();
    assert_eq!(
        (kept.revision, kept.definition.instructions.as_str()),
        (2, "Mine now.")
    );

    // The whole call now refuses, the person having written the current revision.
    let refused = service
        .delete_agent_by_model(&by_model, &model, "scratch")
        .await
        .unwrap_err();
    assert!(matches!(refused, ServiceError::Forbidden(_)), "{refused:?}");
}
