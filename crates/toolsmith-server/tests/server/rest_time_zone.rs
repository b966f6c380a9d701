//! A person's time zone (`GET`/`PUT /api/v1/settings/timezone`) through the real router: UTC
//! unless set, an IANA name or a refusal naming the form, a person's setting (an agent caller
//! cannot set it), and the data families' dates in words read in it — "tomorrow 9am" by a
//! built-in call and by `/api/v1/data` is 9am there, stored with its offset.

use axum::http::{Method, StatusCode};
use chrono::{Days, FixedOffset, Utc};
use serde_json::json;

use crate::rest_data::{caller, tool};
use crate::rest_support::TestApp;

const PATH: &str = "/api/v1/settings/timezone";

/// "tomorrow 9am" in Asia/Kolkata (+05:30 all year), as stored: either day's, in case the
/// test runs across midnight there.
fn tomorrow_nine_in_kolkata() -> Vec<String> {
    let kolkata = FixedOffset::east_opt(5 * 3600 + 1800).expect("offset");
    let today = Utc::now().with_timezone(&kolkata).date_naive();
    [1, 2]
        .iter()
        .filter_map(|n| today.checked_add_days(Days::new(*n)))
        .map(|d| format!("{d}T09:00:00+05:30"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dates_in_words_are_read_in_the_users_time_zone() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let got = alice.get(PATH).await.assert_ok(StatusCode::OK);
    assert_eq!(got, json!({"timeZone": "UTC"}));

    // Not a zone: the refusal names the form; an agent cannot set the person's zone.
    let refused = alice
        .send(Method::PUT, PATH, Some(&json!({"timeZone": "Kolkata"})))
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(refused.contains("Europe/Paris"), "{refused}");
    let agent = caller(&app, "alice", Some("helper")).await;
    agent
        .send(
            Method::PUT,
            PATH,
            Some(&json!({"timeZone": "Asia/Kolkata"})),
        )
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");

    let set = alice
        .send(
            Method::PUT,
            PATH,
            Some(&json!({"timeZone": "Asia/Kolkata"})),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(set, json!({"timeZone": "Asia/Kolkata"}));
    // Every agent of the user reads it.
    let seen = agent.get(PATH).await.assert_ok(StatusCode::OK);
    assert_eq!(seen, json!({"timeZone": "Asia/Kolkata"}));

    // A built-in call: 9am in Kolkata, with its offset, and the reply says the zone.
    let expected = tomorrow_nine_in_kolkata();
    let added = tool(
        &app,
        "alice",
        "add_calendar_event",
        json!({"title": "Stand-up", "startTime": "tomorrow 9am"}),
    )
    .await;
    let start = added["event"]["startTime"].as_str().unwrap_or_default();
    assert!(expected.iter().any(|e| e == start), "{added}");
    let resolved = added["resolved"].to_string();
    assert!(resolved.contains("(Asia/Kolkata)"), "{resolved}");

    // And the same through REST's data routes.
    let made = alice
        .send(
            Method::POST,
            "/api/v1/data/tasks",
            Some(&json!({"title": "Call the bank", "dueDate": "tomorrow 9am"})),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let due = made["task"]["dueDate"].as_str().unwrap_or_default();
    assert!(expected.iter().any(|e| e == due), "{made}");

    // Another user's zone is still UTC.
    let bob = caller(&app, "bob", None).await;
    let theirs = bob.get(PATH).await.assert_ok(StatusCode::OK);
    assert_eq!(theirs, json!({"timeZone": "UTC"}));
}
