//! Embeddings as an optional hybrid ranking of `search_tools` and memory `recall` (issue 39),
//! through MCP, against an OpenAI-compatible embeddings server this test starts on 127.0.0.1
//! (`POST /v1/embeddings`, the real request and answer shapes). Its embeddings are by topic,
//! so a request sharing no word with what answers it is still close in meaning: dimension 0
//! counts astronomy words, 1 food words, and the rest is a small hashed bag of words (texts of
//! no topic are as close as the words they share). `/broken/embeddings` answers HTTP 500, for the fallback.
//!
//! Without the service nothing changes (the answers say nothing of it); with it a request is
//! found by meaning and the answer says `"search": "hybrid"`; when the service fails, the search
//! is the full-text one and says why.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;

use crate::mcp_outside::{call, configure, mcp};
use crate::rest_support::{TestApp, serve_loopback, settings_reaching};

const TOPICS: [&[&str]; 2] = [
    &[
        "comet",
        "orbit",
        "asteroid",
        "earth",
        "planet",
        "meteor",
        "telescope",
        "sun",
        "astronom",
    ],
    &[
        "sushi",
        "ramen",
        "pizza",
        "pasta",
        "cuisine",
        "food",
        "dinner",
        "meal",
        "restaurant",
    ],
];

/// Words of no weight.
const STOP: &[&str] = &[
    "a", "an", "the", "of", "to", "and", "is", "on", "do", "me", "my",
];
/// Dimensions of the words' own part.
const HASHED: usize = 256;

/// Each topic word adds 1 to its topic's dimension, and every word 0.3 to one of [`HASHED`]
/// more picked by its FNV-1a hash: texts of one topic are close, texts of none are as close
/// as the words they share.
fn by_topic(text: &str) -> Vec<f32> {
    let mut v = vec![0.0_f32; 2 + HASHED];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
    {
        if let Some(topic) = TOPICS
            .iter()
            .position(|t| t.iter().any(|stem| word.starts_with(stem)))
        {
            v[topic] += 1.0;
        }
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        v[2 + (hash % HASHED as u64) as usize] += 0.3;
    }
    v
}

async fn embeddings_server() -> String {
    let app = Router::new()
        .route(
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
        )
        .route(
            "/broken/embeddings",
            post(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    axum::Json(json!({"error": {"message": "overloaded"}})),
                )
            }),
        );
    serve_loopback(app).await
}

/// An app that may reach the embeddings server, with a custom tool about comets and two
/// memories of its user.
async fn setup(host: &str) -> TestApp {
    let app = TestApp::with_configs(settings_reaching(host), ServerSettings::default()).await;
    app.create_tool(&json!({
        "name": "comet_tracker",
        "description": "Tracks comets and their orbits around the sun.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": false},
        "code": "return { comets: [] };",
        "category": "Science",
        "tags": ["astronomy", "comets"]
    }))
    .await;
    app
}

const SKY: &str = "will an asteroid hit the earth";
const TASTE: &str = "which cuisine do they enjoy";

fn names(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn contents(result: &Value) -> Vec<String> {
    result["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

async fn remember_two(client: &crate::mcp_support::McpClient<()>) {
    for (content, kind) in [
        ("Loves sushi and ramen", "preference"),
        ("Daughter's birthday is on 3 May", "fact"),
    ] {
        let (is_error, _, text) = call(
            client,
            "remember",
            json!({"content": content, "type": kind}),
        )
        .await;
        assert!(!is_error, "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_embeddings_service_search_tools_and_recall_find_by_meaning() {
    let host = embeddings_server().await;
    let app = setup(&host).await;
    let client = mcp(&app).await;
    remember_two(&client).await;

    // Without the service: the full-text answers, unchanged — no word of either request is in
    // the comet tool or the sushi memory.
    let (is_error, result, text) = call(&client, "search_tools", json!({"query": SKY})).await;
    assert!(!is_error, "{text}");
    assert!(
        !names(&result).contains(&"comet_tracker".to_owned()),
        "{result}"
    );
    assert!(result.get("search").is_none(), "{result}");
    let (is_error, result, text) = call(&client, "recall", json!({"query": TASTE})).await;
    assert!(!is_error, "{text}");
    assert_eq!(result["count"], 0, "{result}");
    assert!(result.get("search").is_none(), "{result}");

    configure(
        &app,
        "embeddings",
        &[("base_url", "url"), ("api_key", "secret")],
        json!({"base_url": format!("http://{host}/v1"), "api_key": "sk-test"}),
    )
    .await;

    // With it: found by meaning, first, and the answer says the search was hybrid.
    let (is_error, result, text) = call(&client, "search_tools", json!({"query": SKY})).await;
    assert!(!is_error, "{text}");
    assert_eq!(result["search"], "hybrid", "{result}");
    assert_eq!(
        names(&result).first().map(String::as_str),
        Some("comet_tracker"),
        "{result}"
    );
    let (is_error, result, text) = call(&client, "recall", json!({"query": TASTE})).await;
    assert!(!is_error, "{text}");
    assert_eq!(result["search"], "hybrid", "{result}");
    assert_eq!(contents(&result), ["Loves sushi and ramen"], "{result}");
    assert!(
        result["memories"][0]["similarity"].as_f64().unwrap() > 0.5,
        "{result}"
    );
    // A word match still finds what it found, and first.
    let (_, result, _) = call(&client, "recall", json!({"query": "birthday"})).await;
    assert_eq!(
        contents(&result).first().map(String::as_str),
        Some("Daughter's birthday is on 3 May"),
        "{result}"
    );
    let (_, result, _) = call(
        &client,
        "search_tools",
        json!({"query": "remember a fact about me"}),
    )
    .await;
    assert_eq!(result["search"], "hybrid", "{result}");
    assert_eq!(
        names(&result).first().map(String::as_str),
        Some("remember"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_embeddings_service_leaves_the_full_text_search_and_says_why() {
    let host = embeddings_server().await;
    let app = setup(&host).await;
    let client = mcp(&app).await;
    remember_two(&client).await;
    configure(
        &app,
        "embeddings",
        &[("base_url", "url"), ("api_key", "secret")],
        json!({"base_url": format!("http://{host}/broken"), "api_key": "sk-test"}),
    )
    .await;

    let (is_error, result, text) = call(&client, "search_tools", json!({"query": SKY})).await;
    assert!(!is_error, "{text}");
    assert_eq!(result["search"], "full text", "{result}");
    let why = result["embeddings"].as_str().unwrap();
    assert!(
        why.contains("HTTP 500") && why.contains("'embeddings'"),
        "{result}"
    );
    assert!(
        !names(&result).contains(&"comet_tracker".to_owned()),
        "{result}"
    );
    let (_, result, _) = call(
        &client,
        "search_tools",
        json!({"query": "remember a fact about me"}),
    )
    .await;
    assert_eq!(
        names(&result).first().map(String::as_str),
        Some("remember"),
        "{result}"
    );

    let (is_error, result, text) = call(&client, "recall", json!({"query": TASTE})).await;
    assert!(!is_error, "{text}");
    assert_eq!(result["search"], "full text", "{result}");
    assert_eq!(result["count"], 0, "{result}");
    let (is_error, result, text) = call(&client, "recall", json!({"query": "sushi"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(result["search"], "full text", "{result}");
    assert_eq!(contents(&result), ["Loves sushi and ramen"], "{result}");
}
