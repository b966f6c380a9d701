//! The agent's own data (003's definition-only families: memory, tasks, notes …) as one
//! generic shape: a [`DataRecord`] is one JSON document of one family (its `collection`),
//! owned by one user and, when the caller has one, one agent, with a few typed fields the
//! store indexes (`kind`, `category`, `weight`, `at`, `tags`) and a text it searches
//! (`search_text`). Every family maps its records onto these fields; the store knows no
//! family. [`RecordQuery`] filters, orders and (with `text`) ranks them by full-text relevance.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whose records: one user's, and within them one agent's (`""` for calls made without an
/// agent). Records of one scope are never visible from another.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordScope {
    pub owner: String,
    pub agent: String,
}

impl RecordScope {
    /// The scope of a call by `owner`, through `agent` if any.
    pub fn new(owner: impl Into<String>, agent: Option<&str>) -> RecordScope {
        RecordScope {
            owner: owner.into(),
            agent: agent.unwrap_or_default().to_owned(),
        }
    }
}

/// One stored record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataRecord {
    /// The family: `memory`, `task`, `note` ….
    pub collection: String,
    pub id: String,
    pub owner: String,
    /// The agent whose record it is; `""` when made without one.
    pub agent: String,
    /// The family's own fields, as the tools return them.
    pub document: Value,
    /// What full-text search matches and ranks (the family decides: content, title, tags …).
    pub search_text: String,
    /// When set, unique within the scope and collection: a second insert with the same key
    /// finds the first record instead (deduplication).
    pub dedup_key: Option<String>,
    /// An indexed label: a memory's type, a task's status.
    pub kind: Option<String>,
    /// An indexed grouping: a task's or a note's category.
    pub category: Option<String>,
    /// An indexed number: a memory's importance, a task's priority rank.
    pub weight: f64,
    /// An indexed time: a task's due date.
    pub at: Option<DateTime<Utc>>,
    /// Indexed labels, filtered with "any of".
    pub tags: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl DataRecord {
    /// A record of `scope` in `collection` made now, with none of the indexed fields set and
    /// no dedup key.
    #[must_use]
    pub fn new(
        scope: &RecordScope,
        collection: impl Into<String>,
        id: impl Into<String>,
        document: Value,
        search_text: String,
    ) -> DataRecord {
        let now = Utc::now();
        DataRecord {
            collection: collection.into(),
            id: id.into(),
            owner: scope.owner.clone(),
            agent: scope.agent.clone(),
            document,
            search_text,
            dedup_key: None,
            kind: None,
            category: None,
            weight: 0.0,
            at: None,
            tags: Vec::new(),
            created_at: now,
            updated_at: now,
        }
    }

    /// The scope the record belongs to.
    #[must_use]
    pub fn scope(&self) -> RecordScope {
        RecordScope {
            owner: self.owner.clone(),
            agent: self.agent.clone(),
        }
    }
}

/// The order of a query's results (ties broken by id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordOrder {
    /// Newest first.
    #[default]
    Newest,
    /// Most recently updated first.
    Updated,
    /// Highest weight first, then newest.
    Weight,
    /// Earliest `at` first (records without one last), then newest.
    At,
    /// Most relevant to `text` first (only with `text`; otherwise newest).
    Relevance,
}

/// Which records of one scope and collection a query returns.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RecordQuery {
    pub owner: String,
    pub agent: String,
    pub collection: String,
    pub kind: Option<String>,
    pub category: Option<String>,
    /// Records carrying any of these tags (none: no tag filter).
    pub tags: Vec<String>,
    /// Full-text search: records matching any of its words (stemmed; common English words
    /// ignored). A text with no searchable word matches nothing.
    pub text: Option<String>,
    /// Records whose `at` is at or after this time (records without one are left out).
    pub at_from: Option<DateTime<Utc>>,
    /// Records whose `at` is before this time (records without one are left out).
    pub at_before: Option<DateTime<Utc>>,
    /// Records whose `weight` is at least this.
    pub min_weight: Option<f64>,
    /// Records whose `weight` is at most this.
    pub max_weight: Option<f64>,
    /// Records whose document has each of these fields equal to its value (custom tables'
    /// column filters).
    pub fields: Vec<FieldMatch>,
    /// Order by a field of the document instead of `order` (records without it last), then
    /// newest first.
    pub field_order: Option<FieldOrder>,
    pub order: RecordOrder,
    pub limit: u32,
    pub offset: u32,
}

/// A document field that must equal a value. The field is a name of the document's top level
/// ([`is_field_name`]); the store passes both as parameters, never as query text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldMatch {
    pub field: String,
    pub value: FieldValue,
}

/// A value a document field is compared with: equal only to a field of the same JSON type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FieldValue {
    Text(String),
    Number(f64),
    Bool(bool),
}

/// An order on a document field: how its values compare (text in byte order, numbers by
/// value, `false` before `true`), and which way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldOrder {
    pub field: String,
    pub sort: FieldSort,
    pub descending: bool,
}

/// How a field's values compare in a [`FieldOrder`]; a value of another JSON type counts as
/// missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldSort {
    Text,
    Number,
    Bool,
}

/// Whether `name` can name a document field in a query: 1 to 64 ASCII letters, digits and
/// underscores. The stores refuse any other.
#[must_use]
pub fn is_field_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// One result of a query: the record and, for a text query, how well it matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordHit {
    pub record: DataRecord,
    /// The database's full-text score relative to the best hit of the same query, in
    /// `(0, 1]`; `1` for every hit of a query without text.
    pub relevance: f64,
}

/// What an insert did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PutOutcome {
    /// The record was stored as given.
    Inserted(DataRecord),
    /// A record with the same `dedup_key` was there already; it is returned unchanged.
    Duplicate(DataRecord),
}

/// A scope's figures for one collection.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordStats {
    pub total: u64,
    /// How many records carry each `kind` (records without one are left out).
    pub by_kind: BTreeMap<String, u64>,
    /// The mean `weight` (0 when there are none).
    pub mean_weight: f64,
    pub oldest: Option<DateTime<Utc>>,
    pub newest: Option<DateTime<Utc>>,
}

/// How many records one scope holds in a collection, and when the first and the last were
/// made: what a listing shows beside a page, read without reading the records (the count is
/// kept by the store as records come and go).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordTally {
    pub total: u64,
    pub oldest: Option<DateTime<Utc>>,
    pub newest: Option<DateTime<Utc>>,
}

/// The searchable words of a full-text query, as both backends search them: split on
/// anything that is not a letter or digit, lower-cased, common English words and one-letter
/// words dropped, duplicates removed, at most [`MAX_QUERY_TERMS`] of at most 64 bytes each.
#[must_use]
pub fn query_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.chars().count() < 2 || word.len() > 64 || STOPWORDS.contains(&word.as_str()) {
            continue;
        }
        if !terms.contains(&word) {
            terms.push(word);
        }
        if terms.len() == MAX_QUERY_TERMS {
            break;
        }
    }
    terms
}

/// Most words of a full-text query that are searched.
pub const MAX_QUERY_TERMS: usize = 32;

/// Words too common to tell records apart (a question's "what do you know about my …").
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has",
    "have", "he", "her", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "know",
    "me", "my", "of", "on", "or", "our", "she", "so", "some", "tell", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "to", "us", "was", "we", "were",
    "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_drop_common_words_and_punctuation() {
        assert_eq!(
            query_terms("What do you know about MY favourite colour? colour!"),
            vec!["favourite", "colour"]
        );
        assert!(query_terms("\"); DROP TABLE x; -- OR NEAR(").contains(&"drop".to_owned()));
        assert!(query_terms("the a of").is_empty());
        assert_eq!(query_terms(&"word ".repeat(1000)).len(), 1);
    }
}
