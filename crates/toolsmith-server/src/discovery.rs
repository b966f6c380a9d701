//! Tool discovery, as the discovery meta-tools (`search_tools`, `get_tool_help`, `use_tool`,
//! `batch_use_tool`) need it: pure functions over tool definitions, no I/O.
//!
//! - [`search`] — word-by-word AND over a tool's name, description, category and tags, ranked
//!   by BM25 (Okapi, `k1 = 1.2`, `b = 0.75`) over the tools the caller can see. Fields are
//!   weighted by repeating their terms (name ×3, category and tags ×2, description ×1), so a
//!   word in the name counts for more than the same word in the description. `"all"` or `"*"`
//!   lists everything.
//! - [`parameter_docs`] — a tool's parameters as lines a model can read.
//! - [`TOOL_LIMITS`] and [`apply_tool_limits`] — the tool max limits table of the spec: the
//!   default of a count parameter is injected when it is missing and a larger value is capped,
//!   on a copy of the arguments (the caller's value is never changed).

use std::collections::HashMap;

use serde_json::{Map, Value};
use toolsmith_core::ToolDefinition;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
const NAME_WEIGHT: f64 = 3.0;
const CATEGORY_WEIGHT: f64 = 2.0;
const TAG_WEIGHT: f64 = 2.0;
const DESCRIPTION_WEIGHT: f64 = 1.0;

/// Query words that carry no meaning for matching; dropped unless the query is made only of them.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "the", "to", "of", "for", "in", "on", "with", "by", "or", "is", "it", "my",
    "me", "i", "from", "into", "that", "this", "tool", "tools",
];

/// One search result: a tool and its BM25 score (0 when the query lists everything).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked<'a> {
    pub tool: &'a ToolDefinition,
    pub score: f64,
}

/// Whether a query asks for every tool rather than a search.
pub fn lists_everything(query: &str) -> bool {
    let q = query.trim();
    q.is_empty() || q == "*" || q.eq_ignore_ascii_case("all")
}

/// The tools matching every word of `query` (and `category`, case-insensitively, if given),
/// best first; ties by name. `"all"`, `"*"` or an empty query return every tool of the category
/// by name.
pub fn search<'a>(
    tools: &[&'a ToolDefinition],
    query: &str,
    category: Option<&str>,
) -> Vec<Ranked<'a>> {
    let category = category.map(str::trim).filter(|c| !c.is_empty());
    let candidates: Vec<&'a ToolDefinition> = tools
        .iter()
        .copied()
        .filter(|t| {
            category.is_none_or(|c| {
                t.category
                    .as_deref()
                    .is_some_and(|tc| tc.eq_ignore_ascii_case(c))
            })
        })
        .collect();

    if lists_everything(query) {
        let mut all: Vec<Ranked<'a>> = candidates
            .into_iter()
            .map(|tool| Ranked { tool, score: 0.0 })
            .collect();
        all.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        return all;
    }

    let terms = query_terms(query);
    if terms.is_empty() {
        return Vec::new();
    }
    let docs: Vec<Doc> = candidates.iter().map(|t| Doc::of(t)).collect();
    let n_docs = docs.len() as f64;
    let avg_len = if docs.is_empty() {
        1.0
    } else {
        (docs.iter().map(|d| d.len).sum::<f64>() / n_docs).max(1.0)
    };

    // tf of every term in every document; a document lacking any term is out (AND).
    let tfs: Vec<Option<Vec<f64>>> = docs
        .iter()
        .map(|doc| {
            let tf: Vec<f64> = terms.iter().map(|q| doc.term_frequency(q)).collect();
            tf.iter().all(|&f| f > 0.0).then_some(tf)
        })
        .collect();
    let doc_freq: Vec<f64> = (0..terms.len())
        .map(|i| {
            docs.iter()
                .filter(|doc| doc.term_frequency(&terms[i]) > 0.0)
                .count() as f64
        })
        .collect();

    let mut ranked: Vec<Ranked<'a>> = candidates
        .iter()
        .zip(&docs)
        .zip(&tfs)
        .filter_map(|((tool, doc), tf)| {
            let tf = tf.as_ref()?;
            let norm = K1 * (1.0 - B + B * doc.len / avg_len);
            let score = tf
                .iter()
                .zip(&doc_freq)
                .map(|(&f, &df)| {
                    let idf = (1.0 + (n_docs - df + 0.5) / (df + 0.5)).ln();
                    idf * f * (K1 + 1.0) / (f + norm)
                })
                .sum();
            Some(Ranked { tool, score })
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.tool.name.cmp(&b.tool.name))
    });
    ranked
}

/// A tool as a bag of weighted terms.
struct Doc {
    /// term → summed field weight of its occurrences.
    terms: HashMap<String, f64>,
    /// Weighted length (sum of all weights).
    len: f64,
}

impl Doc {
    fn of(tool: &ToolDefinition) -> Doc {
        let mut doc = Doc {
            terms: HashMap::new(),
            len: 0.0,
        };
        doc.add(&tool.name, NAME_WEIGHT);
        if let Some(category) = &tool.category {
            doc.add(category, CATEGORY_WEIGHT);
        }
        for tag in &tool.tags {
            doc.add(tag, TAG_WEIGHT);
        }
        doc.add(&tool.description, DESCRIPTION_WEIGHT);
        doc
    }

    fn add(&mut self, text: &str, weight: f64) {
        for term in tokens(text) {
            *self.terms.entry(term).or_default() += weight;
            self.len += weight;
        }
    }

    /// How often (weighted) the query term occurs: exact terms, and terms it is a prefix of
    /// (3 characters or more: `calc` finds `calculate`).
    fn term_frequency(&self, query_term: &str) -> f64 {
        self.terms
            .iter()
            .filter(|(term, _)| {
                term.as_str() == query_term
                    || (query_term.len() >= 3 && term.starts_with(query_term))
            })
            .map(|(_, weight)| weight)
            .sum()
    }
}

/// The words of a query, normalised and deduplicated, without stop words (unless nothing else
/// is left).
fn query_terms(query: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for term in tokens(query) {
        if !all.contains(&term) {
            all.push(term);
        }
    }
    let meaningful: Vec<String> = all
        .iter()
        .filter(|t| !STOP_WORDS.contains(&t.as_str()))
        .cloned()
        .collect();
    if meaningful.is_empty() {
        all
    } else {
        meaningful
    }
}

/// Lowercase alphanumeric words (`_`, `-`, `.` and spaces split), lightly stemmed so plurals
/// find singulars (`emails` → `email`, `entries` → `entry`).
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| stem(&t.to_lowercase()))
}

fn stem(word: &str) -> String {
    if word.len() > 4
        && let Some(base) = word.strip_suffix("ies")
    {
        return format!("{base}y");
    }
    if word.len() > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

/// A tool's parameters as lines a model can read:
/// `- text (string, required): The text to analyse. Default: "x".`
pub fn parameter_docs(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "This tool takes no parameters.".to_owned();
    };
    if props.is_empty() {
        return "This tool takes no parameters.".to_owned();
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut lines = Vec::with_capacity(props.len());
    // Required parameters first, then the rest, each group in schema order.
    let ordered = props
        .iter()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .chain(
            props
                .iter()
                .filter(|(name, _)| !required.contains(&name.as_str())),
        );
    for (name, prop) in ordered {
        let need = if required.contains(&name.as_str()) {
            "required"
        } else {
            "optional"
        };
        let mut line = format!("- {name} ({}, {need})", type_label(prop));
        if let Some(description) = prop.get("description").and_then(Value::as_str) {
            line.push_str(": ");
            line.push_str(description.trim());
        }
        if let Some(options) = prop.get("enum").and_then(Value::as_array) {
            let shown: Vec<String> = options.iter().map(Value::to_string).collect();
            line.push_str(&format!(" One of: {}.", shown.join(", ")));
        }
        if let Some(default) = prop.get("default") {
            line.push_str(&format!(" Default: {default}."));
        }
        let bounds: Vec<String> = [
            ("minimum", "min"),
            ("maximum", "max"),
            ("minLength", "min length"),
            ("maxLength", "max length"),
            ("minItems", "min items"),
            ("maxItems", "max items"),
        ]
        .iter()
        .filter_map(|(key, label)| prop.get(*key).map(|v| format!("{label} {v}")))
        .collect();
        if !bounds.is_empty() {
            line.push_str(&format!(" ({}).", bounds.join(", ")));
        }
        lines.push(line);
    }
    lines.join("\n")
}

fn type_label(prop: &Value) -> String {
    match prop.get("type") {
        Some(Value::String(t)) if t == "array" => match prop.get("items") {
            Some(items) if items.get("type").is_some() => format!("array of {}", type_label(items)),
            _ => "array".to_owned(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if prop.get("enum").is_some() => "enum".to_owned(),
        _ => "any".to_owned(),
    }
}

/// A cap on a count parameter of a list-returning tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimit {
    pub tool: &'static str,
    /// The argument that controls how many items come back.
    pub param: &'static str,
    /// Absolute ceiling.
    pub max: u64,
    /// Injected when the argument is missing.
    pub default: u64,
}

const fn limit(tool: &'static str, param: &'static str, max: u64, default: u64) -> ToolLimit {
    ToolLimit {
        tool,
        param,
        max,
        default,
    }
}

/// The tool max limits table of the spec, keyed by tool name. Most of these tools do not exist
/// yet; the table is data, so a tool gets its limit the day a tool of that name appears.
pub const TOOL_LIMITS: &[ToolLimit] = &[
    limit("list_emails", "limit", 50, 20),
    limit("search_emails", "limit", 100, 50),
    limit("list_tasks", "limit", 50, 20),
    limit("list_notes", "limit", 50, 20),
    limit("list_calendar_events", "limit", 50, 20),
    limit("list_contacts", "limit", 50, 20),
    limit("list_bookmarks", "limit", 50, 20),
    limit("query_expenses", "limit", 100, 50),
    limit("recall", "limit", 50, 10),
    limit("list_memories", "limit", 50, 20),
    limit("list_goals", "limit", 30, 10),
    limit("get_next_actions", "limit", 20, 5),
    limit("list_custom_records", "limit", 50, 20),
    limit("search_custom_records", "limit", 50, 20),
    limit("git_log", "limit", 50, 10),
    limit("get_task_history", "limit", 50, 10),
    limit("search_files", "maxResults", 100, 50),
    limit("search_web", "maxResults", 20, 10),
    limit("semantic_search", "topK", 50, 10),
];

/// The limit of a tool, if the table has one.
pub fn tool_limit(tool: &str) -> Option<&'static ToolLimit> {
    TOOL_LIMITS.iter().find(|l| l.tool == tool)
}

/// `applyToolLimits`: the arguments with the tool's limit applied — the default injected when
/// the parameter is missing (or `null`), a number above the maximum capped to it. Returns a new
/// value; `args` is never changed. Tools without a limit, non-object arguments and non-numeric
/// values (left for schema validation to refuse) come back as they were.
pub fn apply_tool_limits(tool: &str, args: &Value) -> Value {
    let (Some(limit), Some(obj)) = (tool_limit(tool), args.as_object()) else {
        return args.clone();
    };
    let mut out: Map<String, Value> = obj.clone();
    match out.get(limit.param) {
        None | Some(Value::Null) => {
            out.insert(limit.param.to_owned(), Value::from(limit.default));
        }
        Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v > limit.max as f64) => {
            out.insert(limit.param.to_owned(), Value::from(limit.max));
        }
        Some(_) => {}
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(
        name: &str,
        description: &str,
        category: Option<&str>,
        tags: &[&str],
    ) -> ToolDefinition {
        let mut def = ToolDefinition::new(name, description, json!({"type": "object"}));
        def.category = category.map(str::to_owned);
        def.tags = tags.iter().map(|t| (*t).to_owned()).collect();
        def
    }

    fn corpus() -> Vec<ToolDefinition> {
        vec![
            tool(
                "send_email",
                "Send an email message to one or more recipients.",
                Some("Email"),
                &["smtp", "mail", "notify"],
            ),
            tool(
                "list_emails",
                "List the emails in a mailbox folder, newest first.",
                Some("Email"),
                &["inbox", "mail"],
            ),
            tool(
                "reply_email",
                "Reply to an email thread; the reply is sent to the original sender.",
                Some("Email"),
                &["respond", "mail"],
            ),
            tool(
                "calculate",
                "Evaluate a mathematical expression and return the number.",
                Some("Utilities"),
                &["math", "arithmetic", "compute"],
            ),
            tool(
                "word_frequency",
                "Count how often each word occurs in a text.",
                Some("Text"),
                &["count", "words", "statistics"],
            ),
            tool(
                "add_task",
                "Add a task to the todo list.",
                Some("Tasks"),
                &["todo", "reminder", "checklist"],
            ),
        ]
    }

    fn names(hits: &[Ranked<'_>]) -> Vec<String> {
        hits.iter().map(|h| h.tool.name.clone()).collect()
    }

    fn run(query: &str, category: Option<&str>) -> Vec<String> {
        let corpus = corpus();
        let refs: Vec<&ToolDefinition> = corpus.iter().collect();
        names(&search(&refs, query, category))
    }

    #[test]
    fn bm25_ranks_name_matches_above_description_matches() {
        // "email" is in the name of three tools and in the description of all three;
        // `send_email` also has "send"; the order follows BM25 with the name weighted ×3.
        assert_eq!(
            run("email", None),
            ["list_emails", "send_email", "reply_email"],
            "shorter documents with the term in the name rank first"
        );
        assert_eq!(run("send email", None), ["send_email", "reply_email"]);
        // A term in the name of one tool and the description of another: the name wins.
        assert_eq!(run("list", None), ["list_emails", "add_task"]);
        assert_eq!(run("reply", None), ["reply_email"]);
        assert_eq!(run("count words", None), ["word_frequency"]);
    }

    #[test]
    fn scores_are_bm25() {
        let corpus = corpus();
        let refs: Vec<&ToolDefinition> = corpus.iter().collect();
        let hits = search(&refs, "todo", None);
        assert_eq!(names(&hits), ["add_task"]);
        // One matching document out of 6: idf = ln(1 + (6 - 1 + 0.5) / (1 + 0.5)).
        let idf = (1.0f64 + 5.5 / 1.5).ln();
        let doc = Doc::of(&corpus[5]);
        let avg: f64 = corpus.iter().map(|t| Doc::of(t).len).sum::<f64>() / 6.0;
        let tf = 2.0 + 1.0; // tag ×2 and the description's "todo" ×1
        let expected = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * doc.len / avg));
        assert!(
            (hits[0].score - expected).abs() < 1e-9,
            "{hits:?} vs {expected}"
        );
    }

    #[test]
    fn and_semantics_every_word_must_match() {
        assert_eq!(run("email math", None), Vec::<String>::new());
        assert_eq!(run("mail inbox", None), ["list_emails"]);
        // Words are matched in tags and category too.
        assert_eq!(run("smtp", None), ["send_email"]);
        assert_eq!(run("utilities arithmetic", None), ["calculate"]);
        // Prefixes of 3+ characters and plurals match; stop words are ignored.
        assert_eq!(run("calc", None), ["calculate"]);
        assert_eq!(run("the tasks", None), ["add_task"]);
        assert_eq!(run("nothing-like-this", None), Vec::<String>::new());
    }

    #[test]
    fn all_lists_everything_and_category_filters() {
        let everything = run("all", None);
        assert_eq!(
            everything,
            [
                "add_task",
                "calculate",
                "list_emails",
                "reply_email",
                "send_email",
                "word_frequency"
            ]
        );
        assert_eq!(run("*", None), everything);
        assert_eq!(run("  ", None), everything);
        assert_eq!(
            run("all", Some("email")),
            ["list_emails", "reply_email", "send_email"]
        );
        assert_eq!(run("mail", Some("Tasks")), Vec::<String>::new());
        assert_eq!(run("reply", Some("EMAIL")), ["reply_email"]);
    }

    #[test]
    fn limits_inject_the_default() {
        let args = json!({"folder": "inbox"});
        let out = apply_tool_limits("list_emails", &args);
        assert_eq!(out, json!({"folder": "inbox", "limit": 20}));
        assert_eq!(args, json!({"folder": "inbox"}), "the input is not mutated");
        assert_eq!(
            apply_tool_limits("search_web", &json!({"query": "x", "maxResults": null})),
            json!({"query": "x", "maxResults": 10})
        );
    }

    #[test]
    fn limits_cap_at_the_max_and_keep_smaller_values() {
        let args = json!({"limit": 500});
        assert_eq!(apply_tool_limits("list_tasks", &args), json!({"limit": 50}));
        assert_eq!(args, json!({"limit": 500}), "the input is not mutated");
        assert_eq!(
            apply_tool_limits("list_tasks", &json!({"limit": 7})),
            json!({"limit": 7})
        );
        assert_eq!(
            apply_tool_limits("semantic_search", &json!({"topK": 50.5})),
            json!({"topK": 50})
        );
        // Non-numbers are left for schema validation.
        assert_eq!(
            apply_tool_limits("list_tasks", &json!({"limit": "many"})),
            json!({"limit": "many"})
        );
    }

    #[test]
    fn limits_leave_other_tools_alone() {
        let args = json!({"limit": 100000});
        assert_eq!(apply_tool_limits("calculate", &args), args);
        assert_eq!(apply_tool_limits("list_tasks", &json!([1])), json!([1]));
        assert_eq!(TOOL_LIMITS.len(), 19);
        assert_eq!(
            tool_limit("search_files"),
            Some(&ToolLimit {
                tool: "search_files",
                param: "maxResults",
                max: 100,
                default: 50
            })
        );
    }

    #[test]
    fn parameter_docs_read_well() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "description": "How many.", "minimum": 1, "default": 10},
                "text": {"type": "string", "description": "The text."},
                "mode": {"enum": ["fast", "slow"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["text"]
        });
        assert_eq!(
            parameter_docs(&schema),
            "- text (string, required): The text.\n\
             - limit (integer, optional): How many. Default: 10. (min 1).\n\
             - mode (enum, optional) One of: \"fast\", \"slow\".\n\
             - tags (array of string, optional)"
        );
        assert_eq!(
            parameter_docs(&json!({"type": "object"})),
            "This tool takes no parameters."
        );
    }
}
