//! The rules of a prompt's definition, its rendering and its completions, without a store.

use std::collections::HashMap;

use chrono::Utc;
use toolsmith_core::CreatedBy;
use toolsmith_core::prompt::{
    PromptArgumentSpec, PromptContent, PromptDefinition, PromptMessageSpec, PromptRecord,
    PromptResource, PromptRole,
};

use super::{PromptCatalog, check_definition, complete, render};
use crate::ServiceError;

fn argument(name: &str, required: bool, values: &[&str]) -> PromptArgumentSpec {
    PromptArgumentSpec {
        name: name.to_owned(),
        title: None,
        description: String::new(),
        required,
        values: values.iter().map(|v| (*v).to_owned()).collect(),
    }
}

fn text(role: PromptRole, text: &str) -> PromptMessageSpec {
    PromptMessageSpec {
        role,
        content: PromptContent::Text {
            text: text.to_owned(),
        },
    }
}

fn record(definition: PromptDefinition) -> PromptRecord {
    PromptRecord {
        id: "prm_1".to_owned(),
        owner: "alice".to_owned(),
        agent: None,
        name: "review".to_owned(),
        revision: 1,
        enabled: true,
        created_by: CreatedBy::User,
        definition,
        created_at: Utc::now(),
        updated_at: Utc::now(),
    }
}

fn definition() -> PromptDefinition {
    PromptDefinition {
        title: None,
        description: "Review code".to_owned(),
        arguments: vec![
            argument("language", true, &["rust", "ruby", "python"]),
            argument("focus", false, &[]),
        ],
        messages: vec![
            text(
                PromptRole::User,
                "Review this {{ language }} code{% if focus %} for {{ focus }}{% endif %}.",
            ),
            PromptMessageSpec {
                role: PromptRole::User,
                content: PromptContent::Resource {
                    resource: PromptResource {
                        uri: "file:///{{ language }}.txt".to_owned(),
                        mime_type: Some("text/plain".to_owned()),
                        text: Some("{{ language | upper }}".to_owned()),
                        blob: None,
                    },
                },
            },
        ],
    }
}

fn args(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn message(err: ServiceError) -> String {
    err.to_string()
}

#[test]
fn messages_render_from_the_arguments_and_optional_ones_default_to_empty() {
    let prompt = record(definition());
    check_definition(&prompt.definition).unwrap();
    let out = render(&prompt, &args(&[("language", "rust")])).unwrap();
    assert_eq!(
        out.messages[0].content,
        PromptContent::Text {
            text: "Review this rust code.".to_owned()
        }
    );
    let PromptContent::Resource { resource } = &out.messages[1].content else {
        panic!("a resource");
    };
    assert_eq!(
        (resource.uri.as_str(), resource.text.as_deref()),
        ("file:///rust.txt", Some("RUST"))
    );
    let out = render(&prompt, &args(&[("language", "go"), ("focus", "bugs")])).unwrap();
    assert_eq!(
        out.messages[0].content,
        PromptContent::Text {
            text: "Review this go code for bugs.".to_owned()
        }
    );
    // A value is data, never template source.
    let out = render(&prompt, &args(&[("language", "{{ 7 * 7 }}")])).unwrap();
    assert_eq!(
        out.messages[0].content,
        PromptContent::Text {
            text: "Review this {{ 7 * 7 }} code.".to_owned()
        }
    );
}

#[test]
fn a_missing_required_or_unknown_argument_is_named() {
    let prompt = record(definition());
    let err = message(render(&prompt, &args(&[("focus", "x")])).unwrap_err());
    assert!(err.contains("needs the argument language"), "{err}");
    let err = message(render(&prompt, &args(&[("language", "x"), ("lang", "y")])).unwrap_err());
    assert!(err.contains("no argument lang"), "{err}");
    assert!(err.contains("language, focus"), "{err}");
}

#[test]
fn definitions_that_would_fail_later_are_refused_when_written() {
    let mut d = definition();
    d.messages
        .push(text(PromptRole::Assistant, "{{ undeclared }}"));
    let err = message(check_definition(&d).unwrap_err());
    assert!(
        err.contains("messages[2].content.text uses undeclared"),
        "{err}"
    );

    let mut d = definition();
    d.messages[0] = text(PromptRole::User, "{% if %}");
    let err = message(check_definition(&d).unwrap_err());
    assert!(err.contains("does not compile"), "{err}");

    let mut d = definition();
    d.arguments.push(argument("language", false, &[]));
    let err = message(check_definition(&d).unwrap_err());
    assert!(err.contains("given twice"), "{err}");

    let mut d = definition();
    d.messages = vec![PromptMessageSpec {
        role: PromptRole::User,
        content: PromptContent::Image {
            data: "not base64!".to_owned(),
            mime_type: "image/png".to_owned(),
        },
    }];
    let err = message(check_definition(&d).unwrap_err());
    assert!(err.contains("not standard base64"), "{err}");

    let mut d = definition();
    d.messages.clear();
    assert!(message(check_definition(&d).unwrap_err()).contains("one to 100 messages"));
}

#[test]
fn a_loop_bomb_runs_out_of_fuel() {
    let mut d = definition();
    d.messages = vec![text(
        PromptRole::User,
        "{% for a in range(10000) %}{% for b in range(10000) %}x{% endfor %}{% endfor %}",
    )];
    d.arguments.clear();
    check_definition(&d).unwrap();
    let err = message(render(&record(d), &HashMap::new()).unwrap_err());
    assert!(err.contains("ran out of fuel"), "{err}");
}

#[test]
fn completions_filter_by_prefix_and_stop_at_one_hundred() {
    let prompt = record(definition());
    let c = complete(&prompt, "language", "R");
    assert_eq!(c.values, vec!["rust", "ruby"]);
    assert_eq!((c.total, c.has_more), (2, false));
    assert_eq!(complete(&prompt, "nope", "").values, Vec::<String>::new());

    let many: Vec<String> = (0..250).map(|i| format!("v{i}")).collect();
    let mut d = definition();
    d.arguments[0].values = many;
    let c = complete(&record(d), "language", "v");
    assert_eq!((c.values.len(), c.total, c.has_more), (100, 250, true));
}

#[test]
fn the_catalog_moves_one_owners_version_and_wakes_everyone() {
    let catalog = PromptCatalog::default();
    let mut wake = catalog.subscribe();
    let (alice, bob) = (catalog.version("alice"), catalog.version("bob"));
    catalog.note_changed("alice");
    assert!(wake.has_changed().unwrap());
    wake.borrow_and_update();
    assert_ne!(catalog.version("alice"), alice);
    assert_eq!(catalog.version("bob"), bob);
    catalog.note_all_changed();
    assert!(wake.has_changed().unwrap());
    assert_ne!(catalog.version("bob"), bob);
}
