//! Registry rules: one namespace per owner, built-ins global, and catalogue versions that move
//! exactly when an owner's view changes.

use super::*;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::model::{Permission, ToolContext, ToolResult};

struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::ok(args)
    }
}

fn definition(name: &str) -> ToolDefinition {
    ToolDefinition::new(name, format!("the {name} tool"), json!({"type": "object"}))
}

fn builtin(name: &str, provider: &str) -> RegisteredTool {
    RegisteredTool::new(
        definition(name),
        ToolOrigin::BuiltIn {
            provider: provider.to_owned(),
        },
        PermissionSet::new(),
        Arc::new(Echo),
    )
    .unwrap()
}

fn custom(name: &str, id: &str, owner: &str) -> RegisteredTool {
    RegisteredTool::new(
        definition(name),
        ToolOrigin::Custom {
            id: id.to_owned(),
            owner: owner.to_owned(),
        },
        PermissionSet::from([Permission::Network]),
        Arc::new(Echo),
    )
    .unwrap()
}

#[test]
fn new_refuses_a_schema_that_is_not_an_object() {
    let err = RegisteredTool::new(
        ToolDefinition::new("x", "x", json!({"type": "string"})),
        ToolOrigin::BuiltIn {
            provider: "p".into(),
        },
        PermissionSet::new(),
        Arc::new(Echo),
    )
    .unwrap_err();
    assert_eq!(err, SchemaError::NotObjectType);
}

#[test]
fn registered_tool_accessors() {
    let b = builtin("clock", "core");
    assert!(b.is_builtin());
    assert_eq!(b.custom_id(), None);
    assert_eq!(b.version, None);
    let c = custom("mine", "t1", "alice").with_version(3);
    assert!(!c.is_builtin());
    assert_eq!(c.custom_id(), Some("t1"));
    assert_eq!(c.version, Some(3));
    assert_eq!(c.name(), "mine");
    let debug = format!("{c:?}");
    assert!(debug.contains("mine") && debug.contains("alice"), "{debug}");
}

#[test]
fn duplicate_builtin_name_is_refused() {
    let registry = ToolRegistry::default();
    registry.register_builtin(builtin("clock", "core")).unwrap();
    assert_eq!(
        registry.register_builtin(builtin("clock", "other")),
        Err(RegistryError::BuiltInName {
            name: "clock".into()
        })
    );
    assert_eq!(registry.stats().builtin, 1);
    // The original stays.
    let tool = registry.get("anyone", "clock").unwrap();
    assert_eq!(
        tool.origin,
        ToolOrigin::BuiltIn {
            provider: "core".into()
        }
    );
}

#[test]
fn builtin_cannot_take_a_custom_tools_name() {
    let registry = ToolRegistry::default();
    registry
        .upsert_custom(custom("taken", "t1", "alice"))
        .unwrap();
    assert_eq!(
        registry.register_builtin(builtin("taken", "core")),
        Err(RegistryError::Duplicate {
            name: "taken".into()
        })
    );
    assert!(!registry.is_builtin_name("taken"));
}

#[test]
fn custom_cannot_take_a_builtin_name() {
    let registry = ToolRegistry::default();
    registry.register_builtin(builtin("clock", "core")).unwrap();
    assert_eq!(
        registry.upsert_custom(custom("clock", "t1", "alice")),
        Err(RegistryError::BuiltInName {
            name: "clock".into()
        })
    );
    assert_eq!(registry.stats().custom, 0);
    assert_eq!(registry.stats().owners, 0);
}

#[test]
fn upsert_needs_a_custom_origin() {
    let registry = ToolRegistry::default();
    assert_eq!(
        registry.upsert_custom(builtin("clock", "core")),
        Err(RegistryError::NotCustom {
            name: "clock".into()
        })
    );
    assert_eq!(registry.stats(), RegistryStats::default());
}

#[test]
fn one_name_for_two_owners_but_not_for_two_tools_of_one_owner() {
    let registry = ToolRegistry::default();
    registry
        .upsert_custom(custom("weather", "a1", "alice"))
        .unwrap();
    registry
        .upsert_custom(custom("weather", "b1", "bob"))
        .unwrap();
    assert_eq!(
        registry.get("alice", "weather").unwrap().custom_id(),
        Some("a1")
    );
    assert_eq!(
        registry.get("bob", "weather").unwrap().custom_id(),
        Some("b1")
    );
    assert_eq!(
        registry.upsert_custom(custom("weather", "a2", "alice")),
        Err(RegistryError::Duplicate {
            name: "weather".into()
        })
    );
    assert_eq!(
        registry.get("alice", "weather").unwrap().custom_id(),
        Some("a1")
    );
    assert_eq!(registry.stats().custom, 2);
}

#[test]
fn upsert_with_the_same_id_replaces_and_a_rename_drops_the_old_name() {
    let registry = ToolRegistry::default();
    registry
        .upsert_custom(custom("weather", "a1", "alice").with_version(1))
        .unwrap();
    registry
        .upsert_custom(custom("weather", "a1", "alice").with_version(2))
        .unwrap();
    assert_eq!(registry.get("alice", "weather").unwrap().version, Some(2));
    assert_eq!(registry.names("alice"), ["weather"]);

    registry
        .upsert_custom(custom("forecast", "a1", "alice").with_version(3))
        .unwrap();
    assert!(registry.get("alice", "weather").is_none());
    assert_eq!(registry.get("alice", "forecast").unwrap().version, Some(3));
    assert_eq!(registry.names("alice"), ["forecast"]);
    assert_eq!(registry.stats().custom, 1);
}

#[test]
fn a_rename_onto_another_tools_name_is_refused_and_changes_nothing() {
    let registry = ToolRegistry::default();
    registry
        .upsert_custom(custom("one", "a1", "alice"))
        .unwrap();
    registry
        .upsert_custom(custom("two", "a2", "alice"))
        .unwrap();
    assert_eq!(
        registry.upsert_custom(custom("two", "a1", "alice")),
        Err(RegistryError::Duplicate { name: "two".into() })
    );
    assert_eq!(registry.names("alice"), ["one", "two"]);
    assert_eq!(
        registry.get("alice", "two").unwrap().custom_id(),
        Some("a2")
    );
}

#[test]
fn remove_custom() {
    let registry = ToolRegistry::default();
    registry
        .upsert_custom(custom("weather", "a1", "alice"))
        .unwrap();
    registry
        .upsert_custom(custom("news", "a2", "alice"))
        .unwrap();
    assert!(!registry.remove_custom("bob", "a1"), "another owner's id");
    assert!(!registry.remove_custom("alice", "nope"));
    assert!(registry.remove_custom("alice", "a1"));
    assert!(!registry.remove_custom("alice", "a1"), "already gone");
    assert!(registry.get("alice", "weather").is_none());
    assert_eq!(registry.names("alice"), ["news"]);
    assert!(registry.remove_custom("alice", "a2"));
    assert_eq!(
        registry.stats().owners,
        0,
        "an owner with no tools is forgotten"
    );
    // The name is free again.
    assert_eq!(registry.check_name_free("alice", "weather"), Ok(()));
}

#[test]
fn unregister_builtin_and_provider() {
    let registry = ToolRegistry::default();
    for name in ["a", "b", "c"] {
        registry.register_builtin(builtin(name, "core")).unwrap();
    }
    registry.register_builtin(builtin("d", "web")).unwrap();
    registry
        .upsert_custom(custom("mine", "x", "alice"))
        .unwrap();
    assert_eq!(registry.stats().providers, 2);

    assert_eq!(registry.unregister_provider("nobody"), 0);
    assert_eq!(registry.unregister_provider("core"), 3);
    assert_eq!(registry.unregister_provider("core"), 0);
    assert_eq!(registry.names("alice"), ["d", "mine"]);
    assert_eq!(registry.stats().providers, 1);

    assert!(
        !registry.unregister_builtin("mine"),
        "custom tools are not built-ins"
    );
    assert!(registry.unregister_builtin("d"));
    assert!(!registry.unregister_builtin("d"));
    assert_eq!(registry.names("alice"), ["mine"]);
}

#[test]
fn owners_see_builtins_and_only_their_own_custom_tools() {
    let registry = ToolRegistry::default();
    registry.register_builtin(builtin("zeta", "core")).unwrap();
    registry.register_builtin(builtin("alpha", "core")).unwrap();
    registry
        .upsert_custom(custom("secret", "a1", "alice"))
        .unwrap();
    registry
        .upsert_custom(custom("beta", "a2", "alice"))
        .unwrap();
    registry.upsert_custom(custom("bobs", "b1", "bob")).unwrap();

    // Built-ins first, then custom tools, each sorted by name.
    assert_eq!(registry.names("alice"), ["alpha", "zeta", "beta", "secret"]);
    assert_eq!(registry.names("bob"), ["alpha", "zeta", "bobs"]);
    assert_eq!(registry.names("carol"), ["alpha", "zeta"]);

    assert!(registry.get("bob", "secret").is_none());
    assert!(registry.get("carol", "secret").is_none());
    assert!(registry.get("alice", "bobs").is_none());
    assert!(registry.get("alice", "secret").is_some());
    assert!(registry.get("bob", "alpha").is_some());
    assert!(registry.get("alice", "nope").is_none());

    let defs = registry.definitions("bob");
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["alpha", "zeta", "bobs"]);
    assert_eq!(defs[2].description, "the bobs tool");
    assert_eq!(registry.tools("alice").len(), 4);
}

#[test]
fn stats() {
    let registry = ToolRegistry::default();
    assert_eq!(registry.stats(), RegistryStats::default());
    registry.register_builtin(builtin("a", "core")).unwrap();
    registry.register_builtin(builtin("b", "core")).unwrap();
    registry.register_builtin(builtin("c", "web")).unwrap();
    registry
        .register_builtin(
            RegisteredTool::new(
                definition("mcp_up_echo"),
                ToolOrigin::Mcp {
                    server: "up".to_owned(),
                    tool: "echo".to_owned(),
                },
                PermissionSet::new(),
                Arc::new(Echo),
            )
            .unwrap(),
        )
        .unwrap();
    registry.upsert_custom(custom("x", "1", "alice")).unwrap();
    registry.upsert_custom(custom("y", "2", "alice")).unwrap();
    registry.upsert_custom(custom("x", "3", "bob")).unwrap();
    assert_eq!(
        registry.stats(),
        RegistryStats {
            total: 7,
            builtin: 3,
            mcp: 1,
            custom: 3,
            owners: 2,
            providers: 2,
        }
    );
    let debug = format!("{registry:?}");
    assert!(debug.contains("total: 7"), "{debug}");
}

#[test]
fn check_name_free() {
    let registry = ToolRegistry::default();
    registry.register_builtin(builtin("clock", "core")).unwrap();
    registry
        .upsert_custom(custom("weather", "a1", "alice"))
        .unwrap();
    assert_eq!(
        registry.check_name_free("alice", "clock"),
        Err(RegistryError::BuiltInName {
            name: "clock".into()
        })
    );
    assert_eq!(
        registry.check_name_free("alice", "weather"),
        Err(RegistryError::Duplicate {
            name: "weather".into()
        })
    );
    assert_eq!(registry.check_name_free("bob", "weather"), Ok(()));
    assert_eq!(registry.check_name_free("alice", "news"), Ok(()));
    assert!(registry.is_builtin_name("clock"));
    assert!(!registry.is_builtin_name("weather"));
}

#[test]
fn error_messages() {
    assert_eq!(
        RegistryError::BuiltInName { name: "x".into() }.to_string(),
        "a built-in tool is already named 'x'"
    );
    assert_eq!(
        RegistryError::Duplicate { name: "x".into() }.to_string(),
        "another tool of this owner is already named 'x'"
    );
    assert_eq!(
        RegistryError::NotCustom { name: "x".into() }.to_string(),
        "'x' is not a custom tool"
    );
}

#[test]
fn catalog_versions_move_per_owner() {
    let registry = ToolRegistry::default();
    let versions = |r: &ToolRegistry| {
        (
            r.catalog_version("alice"),
            r.catalog_version("bob"),
            r.version(),
        )
    };
    let (a0, b0, v0) = versions(&registry);

    // Alice's change moves Alice's view only (and the global version).
    registry
        .upsert_custom(custom("weather", "a1", "alice"))
        .unwrap();
    let (a1, b1, v1) = versions(&registry);
    assert!(a1 > a0);
    assert_eq!(b1, b0);
    assert!(v1 > v0);

    // A built-in change moves everyone's view.
    registry.register_builtin(builtin("clock", "core")).unwrap();
    let (a2, b2, v2) = versions(&registry);
    assert!(a2 > a1 && b2 > b1 && v2 > v1);

    // Failed changes move nothing.
    assert!(
        registry
            .upsert_custom(custom("clock", "a9", "alice"))
            .is_err()
    );
    assert!(
        registry
            .upsert_custom(custom("weather", "a2", "alice"))
            .is_err()
    );
    assert!(registry.register_builtin(builtin("clock", "core")).is_err());
    assert!(registry.upsert_custom(builtin("x", "core")).is_err());
    assert!(!registry.remove_custom("alice", "nope"));
    assert!(!registry.unregister_builtin("nope"));
    assert_eq!(registry.unregister_provider("nobody"), 0);
    assert_eq!(versions(&registry), (a2, b2, v2));

    // Bob's update and removal move only Bob's view.
    registry.upsert_custom(custom("news", "b1", "bob")).unwrap();
    registry.upsert_custom(custom("news", "b1", "bob")).unwrap();
    let (a3, b3, _) = versions(&registry);
    assert_eq!(a3, a2);
    assert!(b3 >= b2 + 2);
    assert!(registry.remove_custom("bob", "b1"));
    let (a4, b4, _) = versions(&registry);
    assert_eq!(a4, a2);
    assert!(
        b4 > b3,
        "removing the last tool must still move the version"
    );

    // Re-adding after a removal never brings a version back to an old value.
    registry.upsert_custom(custom("news", "b2", "bob")).unwrap();
    assert!(registry.catalog_version("bob") > b4);

    // Unregistering built-ins moves everyone's view.
    let (a5, b5, _) = versions(&registry);
    assert!(registry.unregister_builtin("clock"));
    let (a6, b6, _) = versions(&registry);
    assert!(a6 > a5 && b6 > b5);
    registry.register_builtin(builtin("clock", "core")).unwrap();
    let (a7, b7, _) = versions(&registry);
    assert_eq!(registry.unregister_provider("core"), 1);
    let (a8, b8, _) = versions(&registry);
    assert!(a8 > a7 && b8 > b7);

    // A brand-new owner sees at least the built-in history.
    assert!(registry.catalog_version("carol") > 0);
}

#[tokio::test]
async fn subscribers_see_every_change() {
    let registry = ToolRegistry::default();
    let mut rx = registry.subscribe();
    assert!(!rx.has_changed().unwrap());

    registry.register_builtin(builtin("clock", "core")).unwrap();
    assert!(rx.has_changed().unwrap());
    assert_eq!(*rx.borrow_and_update(), registry.version());

    registry
        .upsert_custom(custom("weather", "a1", "alice"))
        .unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(1), rx.changed())
        .await
        .expect("a change wakes the subscriber")
        .unwrap();
    assert_eq!(*rx.borrow_and_update(), registry.version());

    // Failed changes do not wake anyone.
    assert!(
        registry
            .upsert_custom(custom("clock", "a2", "alice"))
            .is_err()
    );
    assert!(!registry.remove_custom("alice", "nope"));
    assert!(!rx.has_changed().unwrap());

    assert!(registry.remove_custom("alice", "a1"));
    assert!(rx.has_changed().unwrap());
}

#[test]
fn readers_and_writers_from_many_threads() {
    let registry = Arc::new(ToolRegistry::default());
    registry.register_builtin(builtin("clock", "core")).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let registry = registry.clone();
            std::thread::spawn(move || {
                let owner = format!("owner{t}");
                for i in 0..50 {
                    let id = format!("id{i}");
                    registry
                        .upsert_custom(custom(&format!("tool{i}"), &id, &owner))
                        .unwrap();
                    assert!(registry.get(&owner, "clock").is_some());
                    assert!(registry.get(&owner, &format!("tool{i}")).is_some());
                }
                for i in (0..50).step_by(2) {
                    assert!(registry.remove_custom(&owner, &format!("id{i}")));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let stats = registry.stats();
    assert_eq!((stats.custom, stats.owners), (100, 4));
    // 4 owners × (50 upserts + 25 removals) + 1 built-in.
    assert_eq!(registry.version(), 4 * 75 + 1);
    for t in 0..4 {
        assert_eq!(registry.names(&format!("owner{t}")).len(), 26);
    }
}

#[test]
fn hidden_builtins_are_unreachable_but_keep_their_names() {
    let registry = ToolRegistry::default();
    registry
        .register_builtin(builtin("git_status", "git"))
        .unwrap();
    registry
        .register_builtin(builtin("calculate", "core"))
        .unwrap();
    let before = registry.catalog_version("alice");

    assert!(registry.set_hidden_builtins(HashSet::from(["git_status".to_owned()])));
    assert!(registry.get("alice", "git_status").is_none());
    assert_eq!(registry.names("alice"), ["calculate"]);
    assert_eq!(registry.stats().builtin, 1);
    assert!(
        registry.catalog_version("alice") > before,
        "watchers must re-list"
    );
    // The name stays reserved: no custom tool may take it while the group is off.
    assert!(matches!(
        registry.check_name_free("alice", "git_status"),
        Err(RegistryError::BuiltInName { .. })
    ));

    let hidden_version = registry.catalog_version("alice");
    assert!(!registry.set_hidden_builtins(HashSet::from(["git_status".to_owned()])));
    assert_eq!(
        registry.catalog_version("alice"),
        hidden_version,
        "no change, no move"
    );

    assert!(registry.set_hidden_builtins(HashSet::new()));
    assert!(registry.get("alice", "git_status").is_some());
}
