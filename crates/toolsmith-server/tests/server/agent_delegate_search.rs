//! `delegate_search` (issue 38, spec 001 §7): hybrid discovery of delegation targets — the
//! full-text match over the linked agents plus, when the caller's user has the Config Center
//! service `embeddings`, the cosine similarity of the query's embedding and each target's,
//! from an OpenAI-compatible embeddings server the test starts on 127.0.0.1 (`POST
//! /v1/embeddings`). Its embeddings are by topic, so a query sharing no word with an agent
//! still finds it by meaning: dimension 0 is money (refund, invoice, payment, cash, money,
//! billing), 1 is writing (write, announcement, draft, copy, prose), 2 anything else.

use axum::Router;
use axum::http::{Method, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};

use crate::agent_support::{create_agent, enable_groups};
use crate::mcp_outside::configure;
use crate::rest_support::{TestApp, request, serve_loopback, settings_reaching};

const TOPICS: [&[&str]; 2] = [
    &["refund", "invoice", "payment", "cash", "money", "billing"],
    &["write", "announcement", "draft", "copy", "prose"],
];

fn by_topic(text: &str) -> Vec<f32> {
    let mut v = vec![0.0_f32; 3];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let topic = TOPICS
            .iter()
            .position(|t| t.iter().any(|stem| word.starts_with(stem)))
            .unwrap_or(2);
        v[topic] += 1.0;
    }
    v
}

async fn embeddings_server() -> String {
    let app = Router::new().route(
        "/v1/embeddings",
        post(|axum::Json(body): axum::Json<Value>| async move {
            let data: Vec<Value> = body["input"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"index": i, "embedding": by_topic(t.as_str().unwrap())}))
                .collect();
            axum::Json(json!({"object": "list", "data": data, "model": body["model"]}))
        }),
    );
    serve_loopback(app).await
}

/// `delegate_search` over REST as the agent `lead`: its result.
async fn search(app: &TestApp, query: &str) -> Value {
    let req = request(Method::POST, "/api/v1/tools/delegate_search/execute")
        .header("content-type", "application/json")
        .header("x-toolsmith-agent", "lead")
        .body(axum::body::Body::from(
            json!({"arguments": {"query": query}}).to_string(),
        ))
        .unwrap();
    let res = app.send(req).await.assert_ok(StatusCode::OK);
    assert_eq!(res["isError"], false, "{res}");
    res["result"].clone()
}

fn found(result: &Value) -> Vec<String> {
    result["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_search_is_hybrid_full_text_and_embeddings_when_an_embeddings_service_is_set() {
    let host = embeddings_server().await;
    let app = TestApp::with_configs(settings_reaching(&host), Default::default()).await;
    enable_groups(&app, &["delegation"]).await;
    for (name, instructions) in [
        ("lead", "You lead."),
        ("billing", "Refunds, invoices and payments."),
        ("writer", "Writes product announcements."),
        ("loner", "Refunds too, but nobody links to it."),
    ] {
        create_agent(
            &app,
            &json!({"name": name, "instructions": instructions,
                "model": {"service": "local", "model": "m"}}),
        )
        .await;
    }
    for to in ["billing", "writer"] {
        app.post("/api/v1/agent-links", &json!({"from": "lead", "to": to}))
            .await
            .assert_ok(StatusCode::CREATED);
    }

    // Without an embeddings service: full text only, and the answer says how to add meaning.
    let result = search(&app, "return my cash money").await;
    assert_eq!(found(&result), Vec::<String>::new(), "{result}");
    assert_eq!(result["search"], "full text", "{result}");
    assert!(
        result["embeddings"]
            .as_str()
            .unwrap()
            .contains("'embeddings'"),
        "{result}"
    );

    configure(
        &app,
        "embeddings",
        &[("base_url", "url"), ("api_key", "secret")],
        json!({"base_url": format!("http://{host}/v1"), "api_key": "sk-test"}),
    )
    .await;

    // With it: found by meaning though no word matches; the unlinked agent never.
    let result = search(&app, "return my cash money").await;
    assert_eq!(result["search"], "hybrid", "{result}");
    assert_eq!(found(&result), ["billing"], "{result}");
    assert!(result["agents"][0]["similarity"].as_f64().unwrap() > 0.5);
    // A word match and the meaning together still rank first.
    let result = search(&app, "draft the announcement").await;
    assert_eq!(found(&result)[0], "writer", "{result}");
}
