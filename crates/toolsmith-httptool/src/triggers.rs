//! Trigger phrases: does a user message suggest a tool, and which tools fit best.
//!
//! The match is the spec's agent rule (`trigger.lower() in query.lower()`), with Unicode
//! lowercasing and runs of whitespace collapsed on both sides; blank triggers never match.

use crate::definition::HttpToolDefinition;

/// One tool that matched a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerMatch<'a> {
    pub name: &'a str,
    /// The triggers found in the message, as written in the definition.
    pub matched: Vec<&'a str>,
}

/// Whether any trigger of `def` occurs in `message` (case-insensitive phrase match).
pub fn matches_triggers(def: &HttpToolDefinition, message: &str) -> bool {
    let message = normalize(message);
    def.triggers.iter().any(|t| phrase_in(t, &message))
}

/// The tools whose triggers occur in `message`, best first: more matched triggers, then the
/// longest matched trigger, then name.
pub fn rank_by_triggers<'a, I>(tools: I, message: &str) -> Vec<TriggerMatch<'a>>
where
    I: IntoIterator<Item = (&'a str, &'a [String])>,
{
    let message = normalize(message);
    let mut res: Vec<TriggerMatch<'a>> = tools
        .into_iter()
        .filter_map(|(name, triggers)| {
            let matched: Vec<&str> = triggers
                .iter()
                .filter(|t| phrase_in(t, &message))
                .map(String::as_str)
                .collect();
            (!matched.is_empty()).then_some(TriggerMatch { name, matched })
        })
        .collect();
    res.sort_by(|a, b| {
        b.matched
            .len()
            .cmp(&a.matched.len())
            .then_with(|| longest(b).cmp(&longest(a)))
            .then_with(|| a.name.cmp(b.name))
    });
    res
}

fn longest(m: &TriggerMatch<'_>) -> usize {
    m.matched
        .iter()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0)
}

fn phrase_in(trigger: &str, normalized_message: &str) -> bool {
    let trigger = normalize(trigger);
    !trigger.is_empty() && normalized_message.contains(&trigger)
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
