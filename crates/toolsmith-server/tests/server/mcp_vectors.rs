//! Vector search (issue 39, 003 §17) end to end through MCP, against an OpenAI-compatible
//! embeddings server this test starts on 127.0.0.1 (`POST /v1/embeddings`, the real request
//! and answer shapes) whose embeddings are deterministic bag-of-words vectors: each word (lower
//! case, a few stop words left out) adds 1 to one of 512 dimensions picked by its FNV-1a hash.
//! The collections live in the server's SQLite store with sqlite-vec's index (the PostgreSQL
//! backend is held to the same contract in the store's own suite).
//!
//! Recall, stated: on the labelled corpus below (24 short documents on four topics, six per
//! topic) each of the eight queries is labelled with the documents relevant to it (three or
//! four, all of its topic); `semantic_search`'s top 5 must hold every one of them (recall@5 =
//! 1.0 for each query, so 1.0 on average) and its top 1 must be one of them.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::routing::post;
use serde_json::{Value, json};

use crate::mcp_outside::{app_with_group, call, configure, mcp};
use crate::rest_support::serve_loopback;

const DIMENSIONS: usize = 512;
const STOP: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "and", "is", "for", "with", "how", "what", "my",
    "do", "i", "it", "at", "by",
];

/// The bag-of-words embedding of `text`.
fn bag_of_words(text: &str) -> Vec<f32> {
    let mut v = vec![0.0_f32; DIMENSIONS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
    {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        v[(hash % DIMENSIONS as u64) as usize] += 1.0;
    }
    v
}

/// The embeddings server; what it was asked (each request's JSON body); its `host:port`.
async fn embeddings_server(seen: Arc<Mutex<Vec<Value>>>) -> String {
    let app = Router::new().route(
        "/v1/embeddings",
        post(move |axum::Json(body): axum::Json<Value>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(body.clone());
                let inputs: Vec<String> = match &body["input"] {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(a) => a.iter().map(|s| s.as_str().unwrap().to_owned()).collect(),
                    _ => Vec::new(),
                };
                let data: Vec<Value> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": bag_of_words(t)}))
                    .collect();
                axum::Json(json!({"object": "list", "data": data, "model": body["model"],
                    "usage": {"prompt_tokens": 1, "total_tokens": 1}}))
            }
        }),
    );
    serve_loopback(app).await
}

/// The labelled corpus: (id, topic, text).
const CORPUS: &[(&str, &str, &str)] = &[
    (
        "c1",
        "cooking",
        "Knead the bread dough and let the yeast rise overnight",
    ),
    (
        "c2",
        "cooking",
        "Simmer tomato sauce with garlic basil and olive oil",
    ),
    (
        "c3",
        "cooking",
        "Roast the chicken in the oven with rosemary and garlic",
    ),
    (
        "c4",
        "cooking",
        "Whisk eggs sugar and flour for a sponge cake batter",
    ),
    (
        "c5",
        "cooking",
        "Bake the bread in a hot oven until the crust is golden",
    ),
    (
        "c6",
        "cooking",
        "Season the soup with salt pepper and fresh basil",
    ),
    (
        "a1",
        "astronomy",
        "The telescope shows Jupiter moons and Saturn rings",
    ),
    (
        "a2",
        "astronomy",
        "A galaxy holds billions of stars bound by gravity",
    ),
    ("a3", "astronomy", "The comet tail points away from the sun"),
    (
        "a4",
        "astronomy",
        "Mars rovers photograph craters on the red planet",
    ),
    (
        "a5",
        "astronomy",
        "Stars form inside cold nebula clouds of gas",
    ),
    (
        "a6",
        "astronomy",
        "An eclipse happens when the moon hides the sun",
    ),
    (
        "f1",
        "finance",
        "Index funds spread investment risk across many stocks",
    ),
    (
        "f2",
        "finance",
        "The central bank raised interest rates against inflation",
    ),
    ("f3", "finance", "Bonds pay interest until the loan matures"),
    (
        "f4",
        "finance",
        "Diversify a portfolio of stocks bonds and cash",
    ),
    ("f5", "finance", "Inflation erodes savings held as cash"),
    (
        "f6",
        "finance",
        "A mortgage loan charges interest on the house price",
    ),
    (
        "g1",
        "gardening",
        "Prune roses in early spring before new shoots",
    ),
    (
        "g2",
        "gardening",
        "Water tomato seedlings and mulch the soil",
    ),
    (
        "g3",
        "gardening",
        "Compost kitchen scraps to feed the garden soil",
    ),
    (
        "g4",
        "gardening",
        "Plant tulip bulbs in autumn for spring flowers",
    ),
    (
        "g5",
        "gardening",
        "Weed the vegetable beds and mulch around seedlings",
    ),
    ("g6", "gardening", "Roses need light compost and deep water"),
];

/// The queries, each with the documents labelled relevant to it.
const QUERIES: &[(&str, &[&str])] = &[
    ("bread oven crust yeast", &["c1", "c3", "c5"]),
    ("garlic basil sauce soup", &["c2", "c3", "c6"]),
    ("stars galaxy nebula telescope", &["a1", "a2", "a5"]),
    ("sun moon eclipse comet planet", &["a3", "a4", "a6"]),
    ("interest loan bonds mortgage", &["f2", "f3", "f6"]),
    ("inflation cash stocks portfolio", &["f1", "f2", "f4", "f5"]),
    ("roses compost soil", &["g1", "g2", "g3", "g6"]),
    ("seedlings mulch weed water", &["g2", "g5", "g6"]),
];

async fn setup() -> (crate::rest_support::TestApp, Arc<Mutex<Vec<Value>>>, String) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let host = embeddings_server(seen.clone()).await;
    let app = app_with_group(Some(&host), "vectorSearch").await;
    (app, seen, host)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collections_are_filled_searched_by_meaning_filtered_and_emptied_through_mcp() {
    let (app, seen, host) = setup().await;
    let client = mcp(&app).await;

    // Before the service is configured, the answer names what to configure.
    let (is_error, _, text) = call(&client, "create_embedding", json!({"text": "hello"})).await;
    assert!(is_error);
    assert!(
        text.contains("'embeddings'") && text.contains("base_url"),
        "{text}"
    );
    configure(
        &app,
        "embeddings",
        &[
            ("base_url", "url"),
            ("api_key", "secret"),
            ("model", "text"),
        ],
        json!({"base_url": format!("http://{host}/v1"), "api_key": "sk-test", "model": "bow-512"}),
    )
    .await;

    let (is_error, out, text) = call(
        &client,
        "create_embedding",
        json!({"text": "Bread in the oven"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["dimensions"], DIMENSIONS);
    assert_eq!(out["model"], "bow-512");
    assert_eq!(out["embedding"], json!(bag_of_words("Bread in the oven")));
    let asked = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        asked,
        json!({"model": "bow-512", "input": ["Bread in the oven"]})
    );

    // Without dimensions, the collection takes the service's.
    let (is_error, out, text) = call(
        &client,
        "create_vector_collection",
        json!({"name": "notes", "description": "labelled corpus"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["collection"]["dimensions"], DIMENSIONS);
    let (is_error, _, text) = call(
        &client,
        "create_vector_collection",
        json!({"name": "notes"}),
    )
    .await;
    assert!(is_error && text.contains("already have"), "{text}");

    let vectors: Vec<Value> = CORPUS
        .iter()
        .map(|(id, topic, text)| json!({"id": id, "text": text, "metadata": {"topic": topic}}))
        .collect();
    let (is_error, out, text) = call(
        &client,
        "upsert_vectors",
        json!({"collection": "notes", "vectors": vectors}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        (out["upserted"].clone(), out["count"].clone()),
        (json!(24), json!(24))
    );

    // Recall on the labelled corpus.
    for (query, relevant) in QUERIES {
        let (is_error, out, text) = call(
            &client,
            "semantic_search",
            json!({"query": query, "collection": "notes", "topK": 5}),
        )
        .await;
        assert!(!is_error, "{text}");
        let results = out["results"].as_array().unwrap();
        assert_eq!(results.len(), 5);
        let top: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
        for id in *relevant {
            assert!(top.contains(id), "'{query}': recall@5 misses {id}: {out}");
        }
        assert!(
            relevant.contains(&top[0]),
            "'{query}': top 1 {}: {out}",
            top[0]
        );
        let scores: Vec<f64> = results
            .iter()
            .map(|r| r["score"].as_f64().unwrap())
            .collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "best first: {scores:?}"
        );
    }

    // A filter keeps only the matching items; the default topK is 10.
    let (_, out, _) = call(
        &client,
        "semantic_search",
        json!({"query": "garlic basil sauce", "collection": "notes", "filter": {"topic": "gardening"}}),
    )
    .await;
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    assert!(
        results
            .iter()
            .all(|r| r["metadata"]["topic"] == "gardening"),
        "{out}"
    );

    // Numbers instead of a text; a wrong length is refused with what to do.
    let (is_error, _, text) = call(
        &client,
        "upsert_vectors",
        json!({"collection": "notes", "vectors": [{"id": "x", "embedding": [1.0, 2.0]}]}),
    )
    .await;
    assert!(is_error && text.contains("takes 512"), "{text}");

    let (is_error, out, text) = call(
        &client,
        "delete_vectors",
        json!({"collection": "notes", "ids": ["c1", "c5", "zz"]}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["deleted"], 2);
    let (_, out, _) = call(
        &client,
        "semantic_search",
        json!({"query": "bread oven crust yeast", "collection": "notes", "topK": 3}),
    )
    .await;
    assert!(
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != "c1" && r["id"] != "c5"),
        "{out}"
    );

    let (_, out, _) = call(&client, "list_vector_collections", json!({})).await;
    assert_eq!(out["count"], 1);
    assert_eq!(out["collections"][0]["name"], "notes");
    assert_eq!(out["collections"][0]["count"], 22);

    let (is_error, _, text) = call(
        &client,
        "semantic_search",
        json!({"query": "x", "collection": "nope"}),
    )
    .await;
    assert!(
        is_error && text.contains("list_vector_collections"),
        "{text}"
    );

    let (_, same, _) = call(
        &client,
        "similarity_score",
        json!({"text1": "bread oven", "text2": "oven bread"}),
    )
    .await;
    assert_eq!(same["similarity"], 1.0);
    let (_, apart, _) = call(
        &client,
        "similarity_score",
        json!({"text1": "bread oven", "text2": "galaxy telescope"}),
    )
    .await;
    assert!(apart["similarity"].as_f64().unwrap() < 0.5, "{apart}");

    // The api key went as a bearer token, and only to the configured host.
    assert!(seen.lock().unwrap().len() >= 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_the_vector_tools_from_what_a_person_types() {
    let (app, _seen, _host) = setup().await;
    let client = mcp(&app).await;
    for (request, tool) in [
        ("search my documents by meaning", "semantic_search"),
        (
            "find similar documents in my knowledge base",
            "semantic_search",
        ),
        ("add these documents to my knowledge base", "upsert_vectors"),
        ("turn this text into an embedding", "create_embedding"),
        ("how similar are these two sentences", "similarity_score"),
        ("create a new vector collection", "create_vector_collection"),
    ] {
        let (is_error, out, text) = call(&client, "search_tools", json!({"query": request})).await;
        assert!(!is_error, "{text}");
        let found = serde_json::to_string(&out).unwrap() + &text;
        assert!(
            found.contains(tool),
            "'{request}' should find {tool}: {found}"
        );
    }
}
