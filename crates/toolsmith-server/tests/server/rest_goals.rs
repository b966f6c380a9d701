//! Goals and their steps over REST (`/api/v1/data/goals`, `/api/v1/data/goal-steps`): the
//! same rules as the tools (the status lifecycle, parents, progress following the steps),
//! deletion taking a goal's steps along, export, and no route, search or export showing one
//! user's (or agent's) goals to another.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::rest_data::{caller, tool};
use crate::rest_support::TestApp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goals_and_steps_through_rest_follow_the_tools_rules() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let goal = alice
        .add("goals", &json!({"title": "Write a novel", "priority": 7}))
        .await;
    // A step added through REST is the tools' step: in order, moving the goal's progress.
    let first = alice
        .add(
            "goal-steps",
            &json!({"goalId": goal, "title": "Outline the plot"}),
        )
        .await;
    alice
        .add(
            "goal-steps",
            &json!({"goalId": goal, "title": "Write chapter one"}),
        )
        .await;
    let next = tool(&app, "alice", "get_next_actions", json!({})).await;
    assert_eq!(next["actions"][0]["stepId"], json!(first), "{next}");
    let done = alice
        .send(
            Method::PATCH,
            &format!("/api/v1/data/goal-steps/{first}"),
            Some(&json!({"status": "completed"})),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(done["step"]["status"], "completed");
    let got = alice
        .get(&format!("/api/v1/data/goals/{goal}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(got["goal"]["progress"], 50, "{got}");
    let steps = alice
        .get(&format!(
            "/api/v1/data/goal-steps?goalId={goal}&status=pending"
        ))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(steps["count"], 1, "{steps}");
    // The tools' rules hold on REST: each refusal names the fix.
    for (method, path, body, words) in [
        (
            Method::PATCH,
            format!("/api/v1/data/goals/{goal}"),
            json!({"progress": 80}),
            "follows its steps (1 of 2 done: 50%)",
        ),
        (
            Method::PATCH,
            format!("/api/v1/data/goals/{goal}"),
            json!({"parentId": goal}),
            "cannot be its own parent",
        ),
        (
            Method::PATCH,
            format!("/api/v1/data/goals/{goal}"),
            json!({"stepCount": 0}),
            "unknown field 'stepCount'",
        ),
        (
            Method::POST,
            "/api/v1/data/goals".to_owned(),
            json!({"title": "x", "priority": 42}),
            "priority",
        ),
        (
            Method::POST,
            "/api/v1/data/goal-steps".to_owned(),
            json!({"goalId": "goal_0", "title": "x"}),
            "'goalId': no goal with id 'goal_0' among yours",
        ),
    ] {
        let res = alice.send(method, &path, Some(&body)).await;
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    alice
        .send(
            Method::PATCH,
            &format!("/api/v1/data/goals/{goal}"),
            Some(&json!({"status": "paused"})),
        )
        .await
        .assert_ok(StatusCode::OK);
    let res = alice
        .send(
            Method::PATCH,
            &format!("/api/v1/data/goals/{goal}"),
            Some(&json!({"status": "completed"})),
        )
        .await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(
        message.contains("can become active or abandoned"),
        "{message}"
    );
    let limit = alice.get("/api/v1/data/goals?limit=31").await;
    let message = limit.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("from 1 to 30"), "{message}");
    // A sub-goal outlives its deleted parent as a top-level goal; the steps go with it.
    let sub = alice
        .add(
            "goals",
            &json!({"title": "Find an agent", "parentId": goal}),
        )
        .await;
    alice
        .send(Method::DELETE, &format!("/api/v1/data/goals/{goal}"), None)
        .await
        .assert_ok(StatusCode::OK);
    let steps = alice
        .get(&format!("/api/v1/data/goal-steps?goalId={goal}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(steps["count"], 0, "{steps}");
    let sub = alice
        .get(&format!("/api/v1/data/goals/{sub}"))
        .await
        .assert_ok(StatusCode::OK);
    assert!(sub["goal"].get("parentId").is_none(), "{sub}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_route_search_or_export_shows_one_users_goals_to_another() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let secret = "zebracorn";
    let goal = alice
        .add("goals", &json!({"title": format!("The {secret} plan")}))
        .await;
    let step = alice
        .add("goal-steps", &json!({"goalId": goal, "title": secret}))
        .await;
    let bob = caller(&app, "bob", None).await;
    let alices_agent = caller(&app, "alice", Some("agent-1")).await;
    for other in [&bob, &alices_agent] {
        for (family, id) in [("goals", &goal), ("goal-steps", &step)] {
            for query in ["", "?search=zebracorn"] {
                let list = other
                    .get(&format!("/api/v1/data/{family}{query}"))
                    .await
                    .assert_ok(StatusCode::OK);
                assert_eq!(list["count"], 0, "{family}{query}: {list}");
            }
            other.cannot_reach(family, id).await;
        }
        // Nor through a step added to her goal, or a goal under it.
        let res = other
            .send(
                Method::POST,
                "/api/v1/data/goal-steps",
                Some(&json!({"goalId": goal, "title": "mine now"})),
            )
            .await;
        res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        let res = other
            .send(
                Method::POST,
                "/api/v1/data/goals",
                Some(&json!({"title": "under", "parentId": goal})),
            )
            .await;
        res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    }
    let export = bob
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(export["records"], json!([]), "{export}");
    let export = alice
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    let collections: Vec<&str> = export["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["collection"].as_str().unwrap())
        .collect();
    assert_eq!(collections.len(), 2, "{export}");
    assert!(collections.contains(&"goal") && collections.contains(&"goal_step"));
    let erased = alice
        .send(Method::DELETE, "/api/v1/data?confirm=true", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(erased["deleted"], 2);
}
