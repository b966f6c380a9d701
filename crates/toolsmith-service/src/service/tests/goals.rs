//! Goals (003 §22) end to end through the service's pipeline, on both backends: the
//! hierarchy, the status lifecycle, steps and progress, next actions, details and statistics,
//! bad arguments naming the fix, the max limits, and isolation between users and agents.

use serde_json::{Value, json};

use super::memory::call;
use super::personal::{Kind, field, ok, on_both_backends, open, refused};
use super::racing::{Racing, Write};
use super::*;
use toolsmith_builtins::goals::{FAMILY, STEPS};
use toolsmith_builtins::personal::ops;
use toolsmith_core::data::RecordScope;

on_both_backends!(
    goals_hierarchy_lifecycle_steps_and_next_actions,
    goals_bad_arguments_limits_and_isolation,
    a_goal_follows_two_steps_completed_at_the_same_instant,
);

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_default().to_owned()
}

async fn goals_hierarchy_lifecycle_steps_and_next_actions(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let spanish = ok(s, "create_goal", json!({"title": "Learn Spanish basics", "description": "Hold a simple conversation", "priority": 8, "dueDate": "2026-09-01"})).await["goal"].clone();
    assert_eq!(spanish["status"], "active");
    assert_eq!(spanish["progress"], 0);
    assert_eq!(spanish["stepCount"], 0);
    assert!(spanish["id"].as_str().unwrap().starts_with("goal_"));
    let spanish = id(&spanish);
    let garden = id(&ok(
        s,
        "create_goal",
        json!({"title": "Plant a vegetable garden"}),
    )
    .await["goal"]);
    let run = id(&ok(
        s,
        "create_goal",
        json!({"title": "Run a half marathon", "priority": 8, "dueDate": "2026-07-01"}),
    )
    .await["goal"]);
    let vocab = ok(
        s,
        "create_goal",
        json!({"title": "Know 500 words", "parentId": spanish}),
    )
    .await["goal"]
        .clone();
    assert_eq!(vocab["priority"], 5, "the default priority");
    assert_eq!(vocab["parentId"], json!(spanish));
    let vocab = id(&vocab);

    // Most important first by default; sub-goals by parent.
    let all = ok(s, "list_goals", json!({})).await;
    assert_eq!(all["total"], 4);
    assert_eq!(
        field(&all, "goals", "title")[2..],
        ["Know 500 words", "Plant a vegetable garden"][..]
    );
    let subs = ok(s, "list_goals", json!({"parentId": spanish})).await;
    assert_eq!(field(&subs, "goals", "id"), [vocab.as_str()]);

    // Steps, in order; progress follows them.
    let made = ok(
        s,
        "decompose_goal",
        json!({"goalId": spanish, "steps": [
            {"title": "Pick a course", "description": "Compare two apps"},
            {"title": "Do lesson one"},
            {"title": "Book a tutor"}
        ]}),
    )
    .await;
    assert_eq!(
        field(&made, "steps", "title"),
        ["Pick a course", "Do lesson one", "Book a tutor"]
    );
    assert_eq!(made["steps"][2]["position"], 3);
    assert_eq!(made["goal"]["stepCount"], 3);
    let steps: Vec<String> = made["steps"].as_array().unwrap().iter().map(id).collect();
    ok(
        s,
        "decompose_goal",
        json!({"goalId": run, "steps": [{"title": "Buy shoes"}, {"title": "Run 5 km"}]}),
    )
    .await;

    // Next actions: the first pending step of each active goal; priority 8 twice, the one due
    // sooner first; goals without steps give none.
    let next = ok(s, "get_next_actions", json!({})).await;
    assert_eq!(
        field(&next, "actions", "step"),
        ["Buy shoes", "Pick a course"]
    );
    assert_eq!(next["actions"][1]["goalId"], json!(spanish));
    assert_eq!(next["actions"][1]["stepsLeft"], 3);
    let one = ok(s, "get_next_actions", json!({"limit": 1})).await;
    assert_eq!(one["count"], 1);

    let done = ok(
        s,
        "complete_step",
        json!({"stepId": steps[0], "result": "Chose the blue app"}),
    )
    .await;
    assert_eq!(done["step"]["status"], "completed");
    assert!(done["step"]["completedAt"].is_string());
    assert_eq!(done["goal"]["progress"], 33);
    assert_eq!(done["goal"]["completedSteps"], 1);
    let again = ok(s, "complete_step", json!({"stepId": steps[0]})).await;
    assert_eq!(again["alreadyCompleted"], true);
    assert_eq!(again["goal"]["progress"], 33);
    let next = ok(s, "get_next_actions", json!({})).await;
    assert_eq!(
        field(&next, "actions", "step"),
        ["Buy shoes", "Do lesson one"]
    );

    // Progress of a goal with steps is theirs; of one without, what it is given.
    let res = call(
        s,
        "alice",
        None,
        "update_goal",
        json!({"goalId": spanish, "progress": 50}),
    )
    .await;
    refused(&res, "follows its steps (1 of 3 done: 33%)");
    let garden_now = ok(s, "update_goal", json!({"goalId": garden, "progress": 40})).await;
    assert_eq!(garden_now["goal"]["progress"], 40);

    // The lifecycle.
    let paused = ok(
        s,
        "update_goal",
        json!({"goalId": spanish, "status": "paused"}),
    )
    .await;
    assert_eq!(paused["goal"]["status"], "paused");
    assert_eq!(
        field(
            &ok(s, "get_next_actions", json!({})).await,
            "actions",
            "step"
        ),
        ["Buy shoes"],
        "a paused goal has no next action"
    );
    let res = call(
        s,
        "alice",
        None,
        "update_goal",
        json!({"goalId": spanish, "status": "completed"}),
    )
    .await;
    refused(
        &res,
        "a paused goal cannot become completed: a paused goal can become active or abandoned",
    );
    ok(
        s,
        "update_goal",
        json!({"goalId": spanish, "status": "active"}),
    )
    .await;
    let completed = ok(
        s,
        "update_goal",
        json!({"goalId": spanish, "status": "completed"}),
    )
    .await;
    assert_eq!(completed["goal"]["progress"], 100);
    assert!(completed["goal"]["completedAt"].is_string());
    for (tool, args) in [
        (
            "decompose_goal",
            json!({"goalId": spanish, "steps": [{"title": "More"}]}),
        ),
        ("complete_step", json!({"stepId": steps[1]})),
    ] {
        let res = call(s, "alice", None, tool, args).await;
        refused(&res, "reopened (update_goal with status active)");
    }
    let res = call(
        s,
        "alice",
        None,
        "update_goal",
        json!({"goalId": spanish, "status": "paused"}),
    )
    .await;
    refused(&res, "a completed goal can become active");
    let reopened = ok(
        s,
        "update_goal",
        json!({"goalId": spanish, "status": "active"}),
    )
    .await;
    assert_eq!(
        reopened["goal"]["progress"], 33,
        "back to what its steps say"
    );
    assert!(reopened["goal"].get("completedAt").is_none());

    // The hierarchy has no cycles.
    let res = call(
        s,
        "alice",
        None,
        "update_goal",
        json!({"goalId": spanish, "parentId": spanish}),
    )
    .await;
    refused(&res, "cannot be its own parent");
    let res = call(
        s,
        "alice",
        None,
        "update_goal",
        json!({"goalId": spanish, "parentId": vocab}),
    )
    .await;
    refused(&res, "a goal cannot sit under one of its own sub-goals");
    let moved = ok(s, "update_goal", json!({"goalId": vocab, "parentId": null})).await;
    assert!(moved["goal"].get("parentId").is_none());
    ok(
        s,
        "update_goal",
        json!({"goalId": vocab, "parentId": spanish}),
    )
    .await;

    // Details: steps in order, sub-goals, parent.
    let details = ok(s, "get_goal_details", json!({"goalId": spanish})).await;
    assert_eq!(
        field(&details, "steps", "title"),
        ["Pick a course", "Do lesson one", "Book a tutor"]
    );
    assert_eq!(details["steps"][0]["result"], "Chose the blue app");
    assert_eq!(field(&details, "subGoals", "id"), [vocab.as_str()]);
    assert_eq!(details["parent"], Value::Null);
    let child = ok(s, "get_goal_details", json!({"goalId": vocab})).await;
    assert_eq!(child["parent"]["id"], json!(spanish));

    // Statistics.
    ok(
        s,
        "update_goal",
        json!({"goalId": garden, "status": "abandoned"}),
    )
    .await;
    let stats = ok(s, "goal_stats", json!({})).await;
    assert_eq!(stats["total"], 4);
    assert_eq!(
        stats["byStatus"],
        json!({"active": 3, "paused": 0, "completed": 0, "abandoned": 1})
    );
    assert_eq!(
        stats["steps"],
        json!({"total": 5, "completed": 1, "pending": 4})
    );
    assert_eq!(stats["completionRate"], 0.0);
    // (33 + 0 + 0) / 3 active goals.
    assert_eq!(stats["averageProgress"], 11.0);
}

async fn goals_bad_arguments_limits_and_isolation(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let goal = id(&ok(
        s,
        "create_goal",
        json!({"title": "Secret zebra plan", "priority": 9}),
    )
    .await["goal"]);
    let step = id(&ok(
        s,
        "decompose_goal",
        json!({"goalId": goal, "steps": [{"title": "zebra step"}]}),
    )
    .await["steps"][0]);
    for (tool, args, words) in [
        (
            "create_goal",
            json!({"title": "x", "priority": 11}),
            "priority",
        ),
        (
            "create_goal",
            json!({"title": "x", "priority": 0}),
            "priority",
        ),
        (
            "create_goal",
            json!({"title": "x", "status": "completed"}),
            "status",
        ),
        (
            "create_goal",
            json!({"title": "x", "dueDate": "someday"}),
            "dueDate",
        ),
        ("create_goal", json!({"title": "  "}), "must not be empty"),
        (
            "create_goal",
            json!({"title": "x", "parentId": "goal_0"}),
            "'parentId': no goal with id 'goal_0' among yours",
        ),
        ("update_goal", json!({"goalId": goal}), "nothing to change"),
        (
            "update_goal",
            json!({"goalId": goal, "status": "done"}),
            "status",
        ),
        (
            "update_goal",
            json!({"goalId": goal, "progress": 101}),
            "progress",
        ),
        (
            "update_goal",
            json!({"goalId": "goal_0", "title": "x"}),
            "find ids with list_goals",
        ),
        ("list_goals", json!({"status": "open"}), "status"),
        (
            "decompose_goal",
            json!({"goalId": goal, "steps": []}),
            "steps",
        ),
        (
            "decompose_goal",
            json!({"goalId": goal, "steps": [{"title": "ok"}, {"name": "x"}]}),
            "steps",
        ),
        (
            "decompose_goal",
            json!({"goalId": "goal_0", "steps": [{"title": "x"}]}),
            "no goal with id",
        ),
        (
            "complete_step",
            json!({"stepId": "step_0"}),
            "no step with id 'step_0' among yours",
        ),
        (
            "get_goal_details",
            json!({"goalId": "goal_0"}),
            "find ids with list_goals",
        ),
        ("get_next_actions", json!({"limit": 0}), "limit"),
        ("goal_stats", json!({"extra": 1}), "extra"),
    ] {
        let res = call(s, "alice", None, tool, args.clone()).await;
        refused(&res, words);
    }
    assert_eq!(
        ok(s, "get_goal_details", json!({"goalId": goal})).await["steps"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "nothing half-added"
    );
    // A goal holds at most 100 steps.
    let many: Vec<Value> = (0..50).map(|i| json!({"title": format!("s{i}")})).collect();
    ok(s, "decompose_goal", json!({"goalId": goal, "steps": many})).await;
    let many: Vec<Value> = (0..50).map(|i| json!({"title": format!("t{i}")})).collect();
    let res = call(
        s,
        "alice",
        None,
        "decompose_goal",
        json!({"goalId": goal, "steps": many}),
    )
    .await;
    refused(&res, "add at most 49 more");
    // The tool max limits: list_goals 10 by default and 30 at most; get_next_actions 5 and 20.
    for i in 0..34 {
        let made = ok(s, "create_goal", json!({"title": format!("goal {i}")})).await;
        ok(
            s,
            "decompose_goal",
            json!({"goalId": made["goal"]["id"], "steps": [{"title": format!("first {i}")}]}),
        )
        .await;
    }
    assert_eq!(ok(s, "list_goals", json!({})).await["count"], 10);
    assert_eq!(
        ok(s, "list_goals", json!({"limit": 1000})).await["count"],
        30
    );
    assert_eq!(ok(s, "get_next_actions", json!({})).await["count"], 5);
    assert_eq!(
        ok(s, "get_next_actions", json!({"limit": 1000})).await["count"],
        20
    );

    // Nobody else sees or touches Alice's goals and steps.
    for (user, agent) in [
        ("bob", None),
        ("bob", Some("agent-1")),
        ("alice", Some("agent-2")),
    ] {
        for (tool, args) in [
            ("list_goals", json!({})),
            ("list_goals", json!({"search": "zebra"})),
            ("get_next_actions", json!({})),
        ] {
            let res = call(s, user, agent, tool, args).await;
            assert_eq!(res.content["count"], 0, "{user}/{agent:?} {tool}: {res:?}");
        }
        let stats = call(s, user, agent, "goal_stats", json!({})).await;
        assert_eq!(stats.content["total"], 0, "{stats:?}");
        assert_eq!(stats.content["steps"]["total"], 0, "{stats:?}");
        for (tool, args, words) in [
            ("get_goal_details", json!({"goalId": goal}), "among yours"),
            (
                "update_goal",
                json!({"goalId": goal, "title": "taken"}),
                "among yours",
            ),
            (
                "decompose_goal",
                json!({"goalId": goal, "steps": [{"title": "x"}]}),
                "among yours",
            ),
            ("complete_step", json!({"stepId": step}), "among yours"),
            (
                "create_goal",
                json!({"title": "under", "parentId": goal}),
                "among yours",
            ),
        ] {
            let res = call(s, user, agent, tool, args).await;
            refused(&res, words);
        }
    }
    let details = ok(s, "get_goal_details", json!({"goalId": goal})).await;
    assert_eq!(details["goal"]["title"], "Secret zebra plan");
    assert_eq!(details["steps"][0]["status"], "pending");
}

/// Step B is completed just before the goal's write that follows step A's completion (which
/// counted B still pending): the goal must still end with both counted.
async fn a_goal_follows_two_steps_completed_at_the_same_instant(kind: Kind) {
    let Some(env) = open(kind, ToolServiceSettings::default()).await else {
        return;
    };
    let s = &env.service;
    let goal = id(&ok(s, "create_goal", json!({"title": "Ship it"})).await["goal"]);
    let made = ok(
        s,
        "decompose_goal",
        json!({"goalId": goal, "steps": [{"title": "A"}, {"title": "B"}]}),
    )
    .await;
    let (a, b) = (id(&made["steps"][0]), id(&made["steps"][1]));
    let complete = |doc: &mut serde_json::Map<String, Value>| {
        doc.insert("status".to_owned(), json!("completed"));
        Ok(())
    };
    let racing = Racing::once(s, Write::Update, move |inner, record| {
        let b = b.clone();
        Box::pin(async move {
            if record.collection != FAMILY.collection {
                return false;
            }
            ops::modify(&STEPS, &inner, &record.scope(), &b, complete)
                .await
                .unwrap();
            true
        })
    });
    let scope = RecordScope::new("alice", None);
    ops::modify(&STEPS, &racing, &scope, &a, complete)
        .await
        .unwrap();
    let details = ok(s, "get_goal_details", json!({"goalId": goal})).await;
    assert_eq!(
        (
            &details["goal"]["completedSteps"],
            &details["goal"]["progress"]
        ),
        (&json!(2), &json!(100)),
        "{details}"
    );
}
