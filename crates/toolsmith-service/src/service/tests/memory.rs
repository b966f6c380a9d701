//! The memory tools end to end through the service (pipeline, real SQLite store): ranking on a
//! fixed corpus, isolation between users and agents, deduplication, limits and bad arguments.

use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, ToolContext};

use super::*;

pub(super) async fn call(
    service: &ToolService,
    user: &str,
    agent: Option<&str>,
    tool: &str,
    args: Value,
) -> ToolResult {
    let mut ctx = ToolContext::new(user);
    ctx.agent_id = agent.map(str::to_owned);
    service.execute(tool, args, ctx).await
}

async fn ok(service: &ToolService, user: &str, tool: &str, args: Value) -> Value {
    let res = call(service, user, None, tool, args).await;
    assert!(!res.is_error, "{tool}: {res:?}");
    res.content
}

pub(super) fn refused(res: &ToolResult, kind: ErrorKind, words: &str) {
    assert!(res.is_error, "{res:?}");
    assert_eq!(res.metadata.error_kind, Some(kind), "{res:?}");
    let text = res.content.to_string();
    assert!(text.contains(words), "{words:?} not in {text}");
}

/// 40 memories; the first 30 are the right answer of the query of the same index.
const CORPUS: &[(&str, &str, f64)] = &[
    (
        "The user's favourite colour is dark green",
        "preference",
        0.5,
    ),
    ("The user is allergic to peanuts and shellfish", "fact", 0.9),
    (
        "The user's daughter Mia was born on 3 May 2019",
        "fact",
        0.8,
    ),
    (
        "The user works as a backend engineer at Acme Corp",
        "fact",
        0.5,
    ),
    (
        "The user prefers answers in short bullet points",
        "preference",
        0.7,
    ),
    (
        "The user drinks oolong tea every afternoon, never coffee after noon",
        "preference",
        0.5,
    ),
    (
        "The user's wife is called Sara and she is a cardiologist",
        "fact",
        0.6,
    ),
    (
        "The user is training for the Berlin marathon in September",
        "event",
        0.5,
    ),
    (
        "The user speaks German and Portuguese fluently",
        "skill",
        0.5,
    ),
    ("The user's car is a blue 2018 Volvo V60", "fact", 0.4),
    (
        "The user has a dentist appointment on Friday at 9 am",
        "event",
        0.5,
    ),
    ("The user is learning to play the cello", "skill", 0.5),
    (
        "The user's home wifi network is named orchard-5g",
        "fact",
        0.3,
    ),
    (
        "The user dislikes cilantro and very spicy food",
        "preference",
        0.5,
    ),
    ("The user's dog is a beagle named Biscuit", "fact", 0.5),
    ("The user's manager is Tom Okafor", "fact", 0.5),
    (
        "The user wants meeting notes summarized in three sentences",
        "preference",
        0.6,
    ),
    (
        "The user flew to Lisbon for a conference in March",
        "event",
        0.4,
    ),
    (
        "The user writes Rust and TypeScript professionally",
        "skill",
        0.6,
    ),
    ("The user's birthday is on 14 February", "fact", 0.8),
    ("The user is vegetarian since 2015", "fact", 0.7),
    (
        "The user's favourite author is Ursula K. Le Guin",
        "preference",
        0.4,
    ),
    (
        "The user keeps the family budget in a spreadsheet reviewed monthly",
        "fact",
        0.5,
    ),
    (
        "The user's son plays football on Saturday mornings",
        "fact",
        0.5,
    ),
    (
        "The user has a fear of flying and prefers trains in Europe",
        "preference",
        0.6,
    ),
    ("The user moved from Porto to Munich in 2021", "event", 0.5),
    ("The user is certified as a scuba diver", "skill", 0.4),
    ("The user's password manager is Bitwarden", "fact", 0.5),
    (
        "The user likes jazz, especially Bill Evans records",
        "preference",
        0.5,
    ),
    (
        "The user's project Falcon deadline is 30 June",
        "event",
        0.9,
    ),
    (
        "The user's mother lives in Coimbra and calls on Sundays",
        "fact",
        0.5,
    ),
    (
        "The user takes vitamin D supplements in winter",
        "fact",
        0.3,
    ),
    (
        "The user prefers metric units and 24-hour time",
        "preference",
        0.5,
    ),
    (
        "The user's laptop is a ThinkPad X1 running Fedora",
        "fact",
        0.4,
    ),
    (
        "The user volunteers at the local food bank twice a month",
        "event",
        0.5,
    ),
    ("The user can cook a good risotto", "skill", 0.5),
    (
        "The user's gym sessions are on Monday and Thursday evenings",
        "fact",
        0.5,
    ),
    (
        "The user's favourite holiday destination is the Azores",
        "preference",
        0.5,
    ),
    ("The user's team uses Jira for tracking work", "fact", 0.5),
    ("The user is saving money for a house deposit", "fact", 0.5),
];

const QUERIES: &[&str] = &[
    "what colour does the user like",
    "is the user allergic to anything",
    "when was Mia born",
    "which company does the user work for as an engineer",
    "how should answers be formatted",
    "what does the user drink in the afternoon",
    "who is the user's wife",
    "marathon training",
    "what does the user speak",
    "what car does the user have",
    "dentist appointment",
    "which musical instrument, the cello?",
    "wifi network name",
    "food the user dislikes",
    "the user's dog",
    "who is the user's manager",
    "how to summarize meeting notes",
    "trip to Lisbon",
    "programming in Rust",
    "when is the user's birthday",
    "is the user vegetarian",
    "favourite author",
    "family budget spreadsheet",
    "son's football",
    "is the user afraid of flying",
    "where did the user live before Munich",
    "scuba diving",
    "password manager",
    "music taste: jazz",
    "Falcon project deadline",
];

#[tokio::test]
async fn recall_puts_the_right_memory_first_for_at_least_90_percent_of_30_queries() {
    let f = fixture().await;
    let memories: Vec<Value> = CORPUS
        .iter()
        .map(|(content, kind, importance)| {
            json!({"content": content, "type": kind, "importance": importance})
        })
        .collect();
    let stored = ok(
        &f.service,
        "alice",
        "batch_remember",
        json!({"memories": memories}),
    )
    .await;
    assert_eq!(stored["stored"], json!(CORPUS.len()));
    let ids: Vec<String> = stored["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["memory"]["id"].as_str().unwrap().to_owned())
        .collect();
    let mut right = 0;
    let mut misses = Vec::new();
    for (i, query) in QUERIES.iter().enumerate() {
        let found = ok(
            &f.service,
            "alice",
            "recall",
            json!({"query": query, "limit": 3}),
        )
        .await;
        let first = found["memories"][0]["id"].as_str().unwrap_or_default();
        if first == ids[i] {
            right += 1;
        } else {
            misses.push(format!("{query:?} → {}", found["memories"][0]["content"]));
        }
    }
    assert_eq!(QUERIES.len(), 30);
    eprintln!("recall: the right memory first for {right} of 30 queries; misses: {misses:?}");
    assert!(right >= 27, "{right}/30 right; misses: {misses:#?}");
    // memory_search ranks the same way.
    let found = ok(
        &f.service,
        "alice",
        "memory_search",
        json!({"query": QUERIES[2]}),
    )
    .await;
    assert_eq!(found["memories"][0]["id"], json!(ids[2]));
}

#[tokio::test]
async fn importance_orders_equal_matches_and_boost_raises_it() {
    let f = fixture().await;
    let low = ok(&f.service, "alice", "remember", json!({"content": "Coffee with oat milk in the morning", "type": "preference", "importance": 0.2})).await;
    let high = ok(&f.service, "alice", "remember", json!({"content": "Coffee with no sugar in the evening", "type": "preference", "importance": 0.9})).await;
    let found = ok(&f.service, "alice", "recall", json!({"query": "coffee"})).await;
    assert_eq!(found["memories"][0]["id"], high["memory"]["id"]);
    let low_id = low["memory"]["id"].as_str().unwrap();
    let boosted = ok(
        &f.service,
        "alice",
        "boost_memory",
        json!({"memoryId": low_id, "amount": 0.8}),
    )
    .await;
    assert_eq!(boosted["previousImportance"], json!(0.2));
    assert_eq!(boosted["memory"]["importance"], json!(1.0));
    let found = ok(&f.service, "alice", "recall", json!({"query": "coffee"})).await;
    assert_eq!(found["memories"][0]["id"], json!(low_id));
    // Boosting past 1 stops at 1.
    let again = ok(
        &f.service,
        "alice",
        "boost_memory",
        json!({"memoryId": low_id}),
    )
    .await;
    assert_eq!(again["memory"]["importance"], json!(1.0));
}

#[tokio::test]
async fn the_same_memory_stored_twice_is_one_memory() {
    let f = fixture().await;
    let first = ok(&f.service, "alice", "remember", json!({"content": "The user's cat is called Miso.", "type": "fact", "importance": 0.4, "tags": ["pets"]})).await;
    assert_eq!(first["duplicate"], json!(false));
    let second = ok(&f.service, "alice", "remember", json!({"content": "the user's cat is called  miso", "type": "fact", "importance": 0.7, "tags": ["Family", "pets"]})).await;
    assert_eq!(second["duplicate"], json!(true));
    assert_eq!(second["memory"]["id"], first["memory"]["id"]);
    assert_eq!(second["memory"]["importance"], json!(0.7));
    assert_eq!(second["memory"]["tags"], json!(["pets", "family"]));
    // A lower importance does not lower it; another type is another memory.
    let third = ok(
        &f.service,
        "alice",
        "remember",
        json!({"content": "The user's cat is called Miso", "type": "fact", "importance": 0.1}),
    )
    .await;
    assert_eq!(third["memory"]["importance"], json!(0.7));
    let other = ok(
        &f.service,
        "alice",
        "remember",
        json!({"content": "The user's cat is called Miso", "type": "event"}),
    )
    .await;
    assert_eq!(other["duplicate"], json!(false));
    let stats = ok(&f.service, "alice", "memory_stats", json!({})).await;
    assert_eq!(stats["total"], json!(2));
    assert_eq!(
        stats["byType"],
        json!({"fact": 1, "preference": 0, "event": 1, "skill": 0})
    );
    // The new tag is searchable.
    let found = ok(
        &f.service,
        "alice",
        "recall",
        json!({"query": "family", "tags": ["family"]}),
    )
    .await;
    assert_eq!(found["count"], json!(1));
}

#[tokio::test]
async fn one_users_or_agents_memories_are_never_visible_to_another() {
    let f = fixture().await;
    let s = &f.service;
    let mine = ok(
        s,
        "alice",
        "remember",
        json!({"content": "Alice's bank PIN hint is the cat's name", "type": "fact"}),
    )
    .await;
    let id = mine["memory"]["id"].as_str().unwrap().to_owned();
    let by_agent = call(
        s,
        "alice",
        Some("agent-1"),
        "remember",
        json!({"content": "Agent one's private note about the bank", "type": "fact"}),
    )
    .await;
    assert!(!by_agent.is_error, "{by_agent:?}");
    // Every tool, as another user and as another agent of the same user.
    for (user, agent) in [
        ("bob", None),
        ("bob", Some("agent-1")),
        ("alice", Some("agent-2")),
    ] {
        for (tool, args) in [
            ("recall", json!({"query": "bank PIN hint cat"})),
            ("memory_search", json!({"query": "bank"})),
            ("list_memories", json!({})),
        ] {
            let res = call(s, user, agent, tool, args).await;
            assert!(!res.is_error, "{res:?}");
            assert_eq!(
                res.content["count"],
                json!(0),
                "{user}/{agent:?} {tool}: {res:?}"
            );
        }
        let stats = call(s, user, agent, "memory_stats", json!({})).await;
        assert_eq!(stats.content["total"], json!(0));
        for tool in ["memory_get", "forget", "boost_memory"] {
            let res = call(s, user, agent, tool, json!({"memoryId": id})).await;
            refused(&res, ErrorKind::InvalidArguments, "recall or list_memories");
        }
        // Storing the same content elsewhere makes a memory there, not a merge into Alice's.
        let res = call(
            s,
            user,
            agent,
            "remember",
            json!({"content": "Alice's bank PIN hint is the cat's name", "type": "fact"}),
        )
        .await;
        assert_eq!(res.content["duplicate"], json!(false), "{res:?}");
        let _ = call(
            s,
            user,
            agent,
            "forget",
            json!({"memoryId": res.content["memory"]["id"]}),
        )
        .await;
    }
    // Alice without an agent sees only her own; agent-1 only its own.
    let listed = ok(s, "alice", "list_memories", json!({})).await;
    assert_eq!(listed["memories"][0]["id"], json!(id));
    assert_eq!(listed["total"], json!(1));
    let agent = call(
        s,
        "alice",
        Some("agent-1"),
        "recall",
        json!({"query": "bank"}),
    )
    .await;
    assert_eq!(agent.content["count"], json!(1));
    assert_ne!(agent.content["memories"][0]["id"], json!(id));
    // Still there after all the attempts, then forgotten by its owner.
    assert_eq!(
        ok(s, "alice", "memory_get", json!({"memoryId": id})).await["memory"]["id"],
        json!(id)
    );
    ok(s, "alice", "forget", json!({"memoryId": id})).await;
    let res = call(s, "alice", None, "forget", json!({"memoryId": id})).await;
    refused(&res, ErrorKind::InvalidArguments, "already forgotten");
}

#[tokio::test]
async fn bad_arguments_and_limits_name_the_fix() {
    let mut config = ToolServiceSettings::default();
    config.records.max_records_per_collection = 3;
    config.records.max_record_bytes = 600;
    let f = fixture_with(config).await;
    let s = &f.service;
    for (tool, args, words) in [
        (
            "remember",
            json!({"content": "x", "type": "opinion"}),
            "type",
        ),
        (
            "remember",
            json!({"content": "x", "type": "fact", "importance": 2}),
            "importance",
        ),
        (
            "remember",
            json!({"content": "   ", "type": "fact"}),
            "must not be empty",
        ),
        (
            "remember",
            json!({"content": "a\u{0}b", "type": "fact"}),
            "NUL",
        ),
        (
            "remember",
            json!({"content": "x".repeat(5000), "type": "fact"}),
            "content",
        ),
        (
            "remember",
            json!({"content": "x", "type": "fact", "tags": [""]}),
            "tags",
        ),
        (
            "recall",
            json!({"query": "what is the"}),
            "no word to search for",
        ),
        ("recall", json!({}), "query"),
        (
            "boost_memory",
            json!({"memoryId": "mem_0", "amount": 0}),
            "amount",
        ),
        ("batch_remember", json!({"memories": []}), "memories"),
        (
            "batch_remember",
            json!({"memories": [{"content": "ok", "type": "fact"}, {"content": "x"}]}),
            "type",
        ),
    ] {
        let res = call(s, "alice", None, tool, args).await;
        refused(&res, ErrorKind::InvalidArguments, words);
    }
    // A record over max_record_bytes.
    let res = call(
        s,
        "alice",
        None,
        "remember",
        json!({"content": "y ".repeat(400), "type": "fact"}),
    )
    .await;
    refused(&res, ErrorKind::InvalidArguments, "max_record_bytes");
    // The fourth memory is over max_records_per_collection; a duplicate is not.
    for i in 0..3 {
        ok(
            s,
            "alice",
            "remember",
            json!({"content": format!("memory number {i}"), "type": "fact"}),
        )
        .await;
    }
    let res = call(
        s,
        "alice",
        None,
        "remember",
        json!({"content": "one more", "type": "fact"}),
    )
    .await;
    refused(
        &res,
        ErrorKind::InvalidArguments,
        "max_records_per_collection",
    );
    let dup = ok(
        s,
        "alice",
        "remember",
        json!({"content": "Memory number 0", "type": "fact"}),
    )
    .await;
    assert_eq!(dup["duplicate"], json!(true));
    // The tool max limits: recall and list_memories are capped at 50 whatever is asked.
    let res = ok(s, "alice", "list_memories", json!({"limit": 5000})).await;
    assert_eq!(res["count"], json!(3));
    let res = ok(
        s,
        "alice",
        "recall",
        json!({"query": "memory", "limit": 5000}),
    )
    .await;
    assert_eq!(res["count"], json!(3));
    let stats = ok(s, "alice", "memory_stats", json!({})).await;
    assert_eq!(stats["maxMemories"], json!(3));
    // Listing by importance and by type.
    ok(
        s,
        "bob",
        "remember",
        json!({"content": "low", "type": "skill", "importance": 0.1}),
    )
    .await;
    ok(
        s,
        "bob",
        "remember",
        json!({"content": "high", "type": "skill", "importance": 0.9}),
    )
    .await;
    ok(
        s,
        "bob",
        "remember",
        json!({"content": "an event", "type": "event", "importance": 1.0}),
    )
    .await;
    let res = ok(
        s,
        "bob",
        "list_memories",
        json!({"orderBy": "importance", "type": "skill"}),
    )
    .await;
    let contents: Vec<&str> = res["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["high", "low"]);
}
