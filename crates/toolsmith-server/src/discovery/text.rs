//! Text as search sees it: words, stop words, stems, and the small synonym table.
//!
//! - [`words`] — lowercase alphanumeric words; `_`, `-`, `.`, spaces and camelCase split
//!   (`currency_convert` → `currency`, `convert`; `getWeather` → `get`, `weather`).
//! - [`stem`] — the Snowball English stemmer (`rust-stemmers`), so `conversions`, `converting`
//!   and `converted` meet, and `located` meets `location`.
//! - [`index_terms`] — the terms a tool's text is indexed under (stop words out, stemmed), and
//!   [`compound_terms`], its words run together in pairs (`to-do` → `todo`).
//! - [`query_terms`] — the terms of a query: a person's sentence ("How many euros would I get
//!   for 250 US dollars?") loses its question and filler words, keeps what carries meaning, and
//!   gains a few phrase meanings ("how many" → count); capped in length and in terms.
//! - [`synonyms`] — the alternatives of a stemmed term from a small table of the common verbs
//!   and nouns of tools (`find` ↔ `search`, `remove` ↔ `delete`, `unique id` → `uuid`).
//!
//! Nothing here knows tools; [`super::index`] does the ranking.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Queries are read up to this many bytes (on a character boundary); the rest is ignored.
pub const MAX_QUERY_BYTES: usize = 1024;
/// At most this many distinct terms of a query are searched for.
pub const MAX_QUERY_TERMS: usize = 32;

/// Words that carry no meaning for matching, in queries and in tool texts: articles,
/// pronouns, auxiliaries, question words, and the filler of requests ("could you please …").
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "each",
    "either",
    "else",
    "etc",
    "every",
    "for",
    "from",
    "going",
    "gonna",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "kind",
    "let",
    "lets",
    "like",
    "ll",
    "m",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "of",
    "off",
    "on",
    "one",
    "onto",
    "or",
    "our",
    "ours",
    "out",
    "please",
    "re",
    "s",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "somebody",
    "someone",
    "something",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "through",
    "to",
    "too",
    "tool",
    "tools",
    "us",
    "ve",
    "very",
    "via",
    "was",
    "way",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "you",
    "your",
    "yours",
];

/// Verbs of requests that say little about which tool is meant ("can you *get* me …", "I
/// *need* to …"); dropped from queries that have other words, kept in tool texts.
const WEAK_QUERY_WORDS: &[&str] = &[
    "get", "give", "got", "help", "know", "make", "need", "show", "tell", "want", "wanna", "use",
    "using", "able", "possible", "quick", "quickly", "many", "long", "far", "say",
];

/// Two-word phrases of requests that stand for a word a tool's description would use.
const PHRASES: &[(&str, &str, &str)] = &[
    ("how", "many", "count"),
    ("how", "much", "amount"),
    ("how", "long", "length"),
    ("how", "far", "distance"),
    ("what", "time", "time"),
    ("unique", "id", "uuid"),
    ("unique", "identifier", "uuid"),
    ("e", "mail", "email"),
    ("look", "up", "lookup"),
    ("sign", "up", "register"),
    ("log", "in", "login"),
    ("to", "do", "todo"),
    ("show", "me", "list"),
    ("you", "remember", "recall"),
    ("you", "know", "recall"),
];

/// Groups of words a person uses for one another when asking for a tool. Each word finds the
/// others of its groups (at a lower weight than itself). Kept small and about tools: verbs of
/// what tools do, and the nouns people use for the things they act on.
const SYNONYMS: &[&[&str]] = &[
    // verbs
    &["search", "find", "lookup", "look", "query", "seek"],
    &[
        "create", "add", "put", "make", "generate", "build", "produce",
    ],
    &["schedule", "book", "add"],
    &[
        "delete", "remove", "erase", "drop", "destroy", "clear", "discard",
    ],
    &["update", "edit", "modify", "change", "alter", "set"],
    &["list", "show", "enumerate", "browse"],
    &[
        "get", "fetch", "retrieve", "read", "obtain", "load", "download",
    ],
    &[
        "send", "deliver", "dispatch", "post", "mail", "email", "message",
    ],
    &[
        "notify",
        "alert",
        "notification",
        "ping",
        "remind",
        "reminder",
    ],
    &[
        "convert",
        "conversion",
        "transform",
        "change",
        "exchange",
        "turn",
    ],
    &[
        "calculate",
        "compute",
        "calculator",
        "evaluate",
        "math",
        "arithmetic",
        "solve",
        "percent",
        "percentage",
    ],
    &["count", "number", "tally", "total"],
    &[
        "summarize",
        "summary",
        "summarise",
        "condense",
        "tldr",
        "gist",
    ],
    &["translate", "translation", "translator", "language"],
    &["check", "validate", "verify", "valid", "validation", "test"],
    &["compare", "diff", "difference", "contrast"],
    &["format", "pretty", "prettify", "beautify", "indent"],
    &["parse", "extract", "read", "decode"],
    &["encode", "encoding", "escape", "base64"],
    &[
        "schedule",
        "book",
        "plan",
        "calendar",
        "meeting",
        "appointment",
        "event",
    ],
    &["save", "store", "keep", "record", "remember", "write"],
    &["resize", "scale", "shrink", "crop", "thumbnail"],
    &["random", "pick", "choose", "shuffle", "roll", "dice"],
    &[
        "hash",
        "checksum",
        "digest",
        "sha",
        "sha256",
        "md5",
        "fingerprint",
    ],
    &["next", "upcoming", "coming", "future", "soon"],
    &["current", "now", "today", "present", "latest"],
    &[
        "up",
        "down",
        "online",
        "offline",
        "outage",
        "uptime",
        "status",
        "available",
    ],
    // nouns
    &["email", "mail", "inbox", "mailbox"],
    &[
        "language",
        "translate",
        "english",
        "french",
        "spanish",
        "german",
        "italian",
        "portuguese",
        "dutch",
        "chinese",
        "japanese",
        "korean",
        "russian",
        "arabic",
        "hindi",
    ],
    // spellings
    &["kilometer", "kilometre", "km"],
    &["meter", "metre"],
    &["liter", "litre"],
    &["color", "colour"],
    &["summarize", "summarise"],
    &["uuid", "guid", "unique", "identifier"],
    &[
        "currency", "money", "dollar", "euro", "pound", "yen", "usd", "eur", "gbp", "forex",
    ],
    &["weather", "forecast", "temperature", "rain", "climate"],
    &["time", "clock", "hour", "datetime", "timezone"],
    &["date", "day", "today", "datetime", "calendar"],
    &["image", "picture", "photo", "img", "jpeg", "png"],
    &["file", "document", "doc"],
    &[
        "url", "link", "website", "site", "web", "page", "webpage", "address",
    ],
    &["task", "todo", "chore", "checklist"],
    &["note", "notes", "memo", "jot"],
    &["password", "passphrase", "passcode"],
    &["text", "string", "words", "sentence", "paragraph"],
    &["word", "words", "term"],
    &[
        "location",
        "place",
        "position",
        "coordinates",
        "where",
        "locate",
    ],
    &["distance", "far", "length"],
    &["stock", "share", "ticker", "quote", "price"],
    &["phone", "telephone", "call", "sms"],
    &["contact", "person", "people", "address"],
];

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

static STOP: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.iter().copied().collect());

static WEAK: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| WEAK_QUERY_WORDS.iter().copied().collect());

/// Stemmed term → the stemmed alternatives of every group it belongs to (itself excluded).
static SYNONYM_TABLE: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let mut table: HashMap<String, Vec<String>> = HashMap::new();
    for group in SYNONYMS {
        let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
        for term in &stems {
            let alternatives = table.entry(term.clone()).or_default();
            for other in &stems {
                if other != term && !alternatives.contains(other) {
                    alternatives.push(other.clone());
                }
            }
        }
    }
    table
});

/// Lowercase alphanumeric words of `text`: non-alphanumeric characters split, and so do
/// camelCase humps (`getWeather` → `get`, `weather`).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        if chunk.is_empty() {
            continue;
        }
        let mut current = String::new();
        let mut previous_lower = false;
        for c in chunk.chars() {
            if c.is_uppercase() && previous_lower && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    out
}

/// The Snowball English stem of a lowercase word.
pub fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

fn is_stop_word(word: &str) -> bool {
    STOP.contains(word)
}

/// The stemmed terms `text` is indexed under, stop words left out (a text of nothing but stop
/// words keeps them, so that a tool named `do_it` can still be found by its name).
pub fn index_terms(text: &str) -> Vec<String> {
    let all = words(text);
    let meaningful: Vec<&String> = all.iter().filter(|w| !is_stop_word(w)).collect();
    if meaningful.is_empty() {
        return all.iter().map(|w| stem(w)).collect();
    }
    meaningful.into_iter().map(|w| stem(w)).collect()
}

/// The distinct stemmed terms of a query, in order, from its first [`MAX_QUERY_BYTES`] bytes,
/// at most [`MAX_QUERY_TERMS`] of them. Stop words and weak request verbs are dropped unless
/// nothing else is left; phrases add the word they stand for.
pub fn query_terms(query: &str) -> Vec<String> {
    let query = truncate(query, MAX_QUERY_BYTES);
    let all = words(query);
    let mut kept: Vec<&str> = Vec::new();
    let mut added: Vec<&'static str> = Vec::new();
    for (i, word) in all.iter().enumerate() {
        if let Some(next) = all.get(i + 1)
            && let Some((_, _, meaning)) = PHRASES.iter().find(|(a, b, _)| a == word && b == next)
        {
            added.push(meaning);
        }
        if !is_stop_word(word) && !WEAK.contains(word.as_str()) {
            kept.push(word);
        }
    }
    if looks_like_arithmetic(query) {
        added.push("calculate");
    }
    if names_a_file(query) {
        added.push("file");
    }
    let chosen: Vec<&str> = if kept.is_empty() && added.is_empty() {
        // Only stop words ("how to", "get"): search for them rather than for nothing.
        all.iter().map(String::as_str).collect()
    } else {
        added.into_iter().chain(kept).collect()
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut terms = Vec::new();
    for word in chosen {
        let term = stem(word);
        if seen.insert(term.clone()) {
            terms.push(term);
            if terms.len() == MAX_QUERY_TERMS {
                break;
            }
        }
    }
    terms
}

/// Whether a query names a file by its name and extension (`config.yaml`, `report-final.txt`):
/// a request about it is about a file even when it does not say "file".
fn names_a_file(query: &str) -> bool {
    query.split_whitespace().any(|word| {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        word.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        })
    })
}

/// Whether a query holds a sum to work out: a number followed by `%`, or two numbers around an
/// operator (`17% of 2,340`, `3 * (4 + 5)`).
fn looks_like_arithmetic(query: &str) -> bool {
    let chars: Vec<char> = query.chars().filter(|c| !c.is_whitespace()).collect();
    chars
        .windows(2)
        .any(|w| matches!(w, [digit, '%'] if digit.is_ascii_digit()))
        || chars.windows(3).any(|w| {
            matches!(w, [left, op, right]
                if (left.is_ascii_digit() || *left == ')')
                    && "+-*/^×÷".contains(*op)
                    && (right.is_ascii_digit() || *right == '('))
        })
}

/// The terms of a text's words run together in pairs, stemmed (`upper case` → `uppercas`,
/// `to-do` → `todo`, `time zone` → `timezon`), so a query that writes them as one word meets
/// them. Stop words count here: they are often half of such a word.
pub fn compound_terms(text: &str) -> Vec<String> {
    let all = words(text);
    all.windows(2)
        .filter_map(|w| match w {
            [first, second]
                if w.iter().all(|x| x.chars().all(char::is_alphabetic))
                    && first.len() + second.len() >= 4 =>
            {
                Some(stem(&format!("{first}{second}")))
            }
            _ => None,
        })
        .collect()
}

/// The stemmed alternatives of a stemmed term, from [`SYNONYMS`].
pub fn synonyms(term: &str) -> &'static [String] {
    SYNONYM_TABLE.get(term).map_or(&[], Vec::as_slice)
}

/// `text` cut to at most `max` bytes, on a character boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}
