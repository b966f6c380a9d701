//! The search index: tools as weighted bags of stemmed terms, an inverted index over them, and
//! BM25 (Okapi, `k1 = 1.2`, `b = 0.75`) over *any* matching query term.
//!
//! - [`Document`] — one tool's terms with their field weights: name parts ×3, category and
//!   tags ×2, description ×1, parameter names ×0.5 (BM25F: only the description and parameters,
//!   the body, are normalised by their length); pairs of words run together count half. Made once per tool and reusable across
//!   rebuilds of the index.
//! - [`SearchIndex`] — postings per term, a sorted vocabulary for prefix matches, the
//!   documents' lengths. [`SearchIndex::search`] touches only the postings of the query's terms
//!   and their alternatives, so a query over 10,000 tools costs what the matching tools cost.
//!
//! Each query term scores a tool with the best of its alternatives: the term itself (×1), a
//! synonym from [`super::text::synonyms`] (×0.7), a longer term it begins (×0.6, `calc` →
//! `calculate`), or — only when none of these is in the index — a term one or two edits away
//! (×0.5, for typos). A tool's score is the sum over the query's terms, so tools matching more
//! of the request rank higher, and a tool matching one word still ranks. The sum grows by up to
//! 30 % with the share of the tool's name the query covers.

use std::collections::HashMap;

use serde_json::Value;
use toolsmith_core::ToolDefinition;

use super::text::{compound_terms, index_terms, query_terms, synonyms};

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
const NAME_WEIGHT: f64 = 3.0;
const CATEGORY_WEIGHT: f64 = 2.0;
const TAG_WEIGHT: f64 = 2.0;
const DESCRIPTION_WEIGHT: f64 = 1.0;
const PARAMETER_WEIGHT: f64 = 0.5;

const SYNONYM_FACTOR: f64 = 0.7;
const PREFIX_FACTOR: f64 = 0.6;
/// A tool whose name the query covers entirely scores this much more (`calculator` prefers
/// `calculate` to `tip_calculator`); partly covered names get their share.
const NAME_COVERAGE_BONUS: f64 = 0.3;
/// Words run together (`to-do` → `todo`) count for this share of their field's weight.
const COMPOUND_FACTOR: f64 = 0.5;
const TYPO_FACTOR: f64 = 0.5;
/// A query term of this many characters or more also matches the longer terms it begins.
const MIN_PREFIX_CHARS: usize = 4;
/// At most this many longer terms are tried for one prefix.
const MAX_PREFIX_EXPANSIONS: usize = 64;
/// A query term of this many characters or more may match a term one edit away (two edits
/// from twice that).
const MIN_TYPO_CHARS: usize = 5;
/// At most this many terms of one query are looked up as typos (each scans the vocabulary).
const MAX_TYPO_LOOKUPS: usize = 4;

/// One tool as the index sees it: its name and its terms with their summed field weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    name: String,
    terms: Vec<Term>,
    /// The summed weight of the body's terms (description, parameters): the length BM25
    /// normalises by.
    len: f64,
    /// How many distinct terms the name has.
    name_terms: usize,
}

impl Document {
    /// The document of a tool: name, category, tags, description and parameter names.
    pub fn of(tool: &ToolDefinition) -> Document {
        // term → (weight in the short fields, weight in the body)
        let mut weights: HashMap<String, (f64, f64)> = HashMap::new();
        let mut add = |text: &str, weight: f64, body: bool| {
            let terms = index_terms(text).into_iter().map(|t| (t, weight));
            let compounds = compound_terms(text)
                .into_iter()
                .map(|t| (t, weight * COMPOUND_FACTOR));
            for (term, w) in terms.chain(compounds) {
                let slot = weights.entry(term).or_default();
                if body {
                    slot.1 += w;
                } else {
                    slot.0 += w;
                }
            }
        };
        add(&tool.name, NAME_WEIGHT, false);
        if let Some(category) = &tool.category {
            add(category, CATEGORY_WEIGHT, false);
        }
        for tag in &tool.tags {
            add(tag, TAG_WEIGHT, false);
        }
        add(&tool.description, DESCRIPTION_WEIGHT, true);
        if let Some(props) = tool.parameters.get("properties").and_then(Value::as_object) {
            for name in props.keys() {
                add(name, PARAMETER_WEIGHT, true);
            }
        }
        let in_name = index_terms(&tool.name);
        let mut terms: Vec<Term> = weights
            .into_iter()
            .map(|(term, (short, body))| Term {
                named: in_name.contains(&term),
                term,
                short,
                body,
            })
            .collect();
        terms.sort_by(|a, b| a.term.cmp(&b.term));
        let len = terms.iter().map(|t| t.body).sum();
        let name_terms = terms.iter().filter(|t| t.named).count();
        Document {
            name: tool.name.clone(),
            terms,
            len,
            name_terms,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The summed weight of its body's terms (BM25's document length).
    pub fn terms_len(&self) -> f64 {
        self.len
    }
}

/// One term of a [`Document`].
#[derive(Debug, Clone, PartialEq)]
struct Term {
    term: String,
    /// Summed weight in the short fields (name, category, tags), never length-normalised.
    short: f64,
    /// Summed weight in the body (description, parameter names).
    body: f64,
    /// Whether the name holds it.
    named: bool,
}

/// One entry of a term's postings.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    short: f64,
    body: f64,
    named: bool,
}

/// An inverted index over [`Document`]s, which it refers to by their position.
#[derive(Debug, Default)]
pub struct SearchIndex {
    names: Vec<String>,
    doc_len: Vec<f64>,
    /// How many distinct terms each document's name has.
    name_terms: Vec<u16>,
    avg_len: f64,
    /// term → its id (the index into `postings`).
    vocab: HashMap<String, usize>,
    /// Every term, sorted, for prefix scans.
    sorted: Vec<(String, usize)>,
    /// Per term: the documents holding it.
    postings: Vec<Vec<Posting>>,
}

impl SearchIndex {
    /// The index of `docs`; results name documents by their position in this sequence.
    pub fn build<'a>(docs: impl IntoIterator<Item = &'a Document>) -> SearchIndex {
        let mut index = SearchIndex::default();
        for (i, doc) in docs.into_iter().enumerate() {
            let Ok(id) = u32::try_from(i) else {
                break;
            };
            index.names.push(doc.name.clone());
            index.doc_len.push(doc.len);
            index
                .name_terms
                .push(u16::try_from(doc.name_terms).unwrap_or(u16::MAX));
            for term in &doc.terms {
                let next = index.postings.len();
                let term_id = *index.vocab.entry(term.term.clone()).or_insert(next);
                if term_id == next {
                    index.postings.push(Vec::new());
                }
                if let Some(postings) = index.postings.get_mut(term_id) {
                    postings.push(Posting {
                        doc: id,
                        short: term.short,
                        body: term.body,
                        named: term.named,
                    });
                }
            }
        }
        let n = index.names.len();
        index.avg_len = if n == 0 {
            1.0
        } else {
            (index.doc_len.iter().sum::<f64>() / n as f64).max(1.0)
        };
        index.sorted = index.vocab.iter().map(|(t, id)| (t.clone(), *id)).collect();
        index.sorted.sort_unstable();
        index
    }

    /// How many documents the index holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The documents matching any term of `query` that `accept` lets through, with their
    /// scores, best first (ties by name). A query with no searchable word matches nothing.
    pub fn search(&self, query: &str, accept: impl Fn(usize) -> bool) -> Vec<(usize, f64)> {
        self.search_with_evidence(query, accept)
            .into_iter()
            .map(|hit| (hit.doc, hit.score))
            .collect()
    }

    /// As [`SearchIndex::search`], each hit with its [`Evidence`] (for a relevance floor).
    #[allow(
        clippy::indexing_slicing,
        reason = "the per-document vectors all have one entry per document (`n`), every posting's \
                  `doc` is a document's position, and every term id is an index into `postings`: \
                  the index builds them together and never changes"
    )]
    pub fn search_with_evidence(&self, query: &str, accept: impl Fn(usize) -> bool) -> Vec<Hit> {
        let terms = query_terms(query);
        let n = self.names.len();
        if terms.is_empty() || n == 0 {
            return Vec::new();
        }
        let mut total = vec![0.0f64; n];
        let mut best = vec![0.0f64; n];
        // The index term behind each document's best score for the current query term, and
        // one it meets solidly (as written, or a synonym in the short fields), if any.
        let mut best_term = vec![usize::MAX; n];
        let mut solid_term = vec![usize::MAX; n];
        // Whether the current query term met the document's name; how many terms did.
        let mut in_name = vec![false; n];
        let mut name_hits = vec![0u16; n];
        // Per document: the index terms the query met, and those it met solidly, as bits of
        // this query's own numbering of the terms it met (`bit`; past 64 terms bits are shared,
        // which can only undercount), and the floor's flags.
        let mut met = vec![0u64; n];
        let mut solid = vec![0u64; n];
        let mut bits: HashMap<usize, u32> = HashMap::new();
        let mut bit = |term_id: usize| -> u64 {
            let next = u32::try_from(bits.len()).unwrap_or(u32::MAX);
            1u64 << (*bits.entry(term_id).or_insert(next) % 64)
        };
        let mut evidence = vec![Evidence::default(); n];
        let mut matched: Vec<u32> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        let mut typo_lookups = 0;
        for term in &terms {
            let alternatives = self.alternatives(term, typo_lookups < MAX_TYPO_LOOKUPS);
            if alternatives.typo_lookup {
                typo_lookups += 1;
            }
            // An alternative is worth no more than the word asked for: a rare synonym must not
            // outrank the common word itself.
            let own_idf = self.vocab.get(term).map(|&id| self.idf(id));
            for (term_id, factor, via) in alternatives.terms {
                let postings = &self.postings[term_id];
                let idf = match own_idf {
                    Some(own) => self.idf(term_id).min(own),
                    None => self.idf(term_id),
                };
                let specific =
                    postings.len() <= SPECIFIC_DF && !GENERIC_VERBS.contains(&term.as_str());
                for &Posting {
                    doc,
                    short,
                    body,
                    named,
                } in postings
                {
                    let d = doc as usize;
                    // BM25F: only the body is normalised by its length (every name is short).
                    let norm = 1.0 - B + B * self.doc_len[d] / self.avg_len;
                    let tf = short + body / norm;
                    let score = factor * idf * tf * (K1 + 1.0) / (tf + K1);
                    let slot = &mut best[d];
                    if *slot == 0.0 {
                        touched.push(doc);
                    }
                    if score > *slot {
                        *slot = score;
                        best_term[d] = term_id;
                    }
                    in_name[d] |= named;
                    // The word as written comes first among the alternatives, and wins.
                    if solid_term[d] == usize::MAX
                        && (via == Via::Exact || (via == Via::Synonym && short > 0.0))
                    {
                        solid_term[d] = term_id;
                    }
                    if via == Via::Exact && short > 0.0 {
                        evidence[d].strong = true;
                        evidence[d].specific |= specific && named;
                    }
                }
            }
            for doc in touched.drain(..) {
                let d = doc as usize;
                if total[d] == 0.0 {
                    matched.push(doc);
                }
                total[d] += best[d];
                best[d] = 0.0;
                met[d] |= bit(best_term[d]);
                let solid_id = std::mem::replace(&mut solid_term[d], usize::MAX);
                if solid_id != usize::MAX {
                    solid[d] |= bit(solid_id);
                }
                if std::mem::take(&mut in_name[d]) {
                    name_hits[d] = name_hits[d].saturating_add(1);
                }
            }
        }
        let query_terms = u8::try_from(terms.len()).unwrap_or(u8::MAX);
        let mut ranked: Vec<Hit> = matched
            .into_iter()
            .map(|d| d as usize)
            .filter(|&d| accept(d))
            .map(|d| {
                let coverage = if self.name_terms[d] == 0 {
                    0.0
                } else {
                    (f64::from(name_hits[d]) / f64::from(self.name_terms[d])).min(1.0)
                };
                Hit {
                    doc: d,
                    score: total[d] * (1.0 + NAME_COVERAGE_BONUS * coverage),
                    evidence: Evidence {
                        query_terms,
                        met: u8::try_from(met[d].count_ones()).unwrap_or(u8::MAX),
                        solid: u8::try_from(solid[d].count_ones()).unwrap_or(u8::MAX),
                        ..evidence[d]
                    },
                }
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.names[a.doc].cmp(&self.names[b.doc]))
        });
        ranked
    }

    /// Okapi's inverse document frequency of a term.
    fn idf(&self, term_id: usize) -> f64 {
        let n = self.names.len() as f64;
        let df = self.postings.get(term_id).map_or(0, Vec::len) as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The index terms a query term stands for, with the factor of each; typos are looked up
    /// only if `typos` allows it and nothing else matched.
    fn alternatives(&self, term: &str, typos: bool) -> Alternatives {
        let mut out: Vec<(usize, f64, Via)> = Vec::new();
        if let Some(&id) = self.vocab.get(term) {
            push(&mut out, id, 1.0, Via::Exact);
        }
        for synonym in synonyms(term) {
            if let Some(&id) = self.vocab.get(synonym) {
                push(&mut out, id, SYNONYM_FACTOR, Via::Synonym);
            }
        }
        if term.chars().count() >= MIN_PREFIX_CHARS {
            let start = self.sorted.partition_point(|(t, _)| t.as_str() < term);
            for (candidate, id) in self
                .sorted
                .get(start..)
                .unwrap_or_default()
                .iter()
                .take_while(|(t, _)| t.starts_with(term))
                .filter(|(t, _)| t != term)
                .take(MAX_PREFIX_EXPANSIONS)
            {
                // A short prefix says less about the longer word.
                let factor = PREFIX_FACTOR * term.len() as f64 / candidate.len() as f64;
                push(&mut out, *id, factor.max(PREFIX_FACTOR / 2.0), Via::Prefix);
            }
        }
        let mut typo_lookup = false;
        if out.is_empty() && typos {
            let chars = term.chars().count();
            if chars >= MIN_TYPO_CHARS {
                typo_lookup = true;
                let max_edits = if chars >= 2 * MIN_TYPO_CHARS { 2 } else { 1 };
                for (candidate, id) in &self.sorted {
                    if candidate.len().abs_diff(term.len()) <= max_edits
                        && strsim::levenshtein(candidate, term) <= max_edits
                    {
                        push(&mut out, *id, TYPO_FACTOR, Via::Typo);
                    }
                }
            }
        }
        Alternatives {
            terms: out,
            typo_lookup,
        }
    }
}

/// Adds a term to `out`, or raises its factor (and how it stands for the query term) if it is
/// there already.
fn push(out: &mut Vec<(usize, f64, Via)>, id: usize, factor: f64, via: Via) {
    match out.iter_mut().find(|(t, _, _)| *t == id) {
        Some(existing) => {
            existing.1 = existing.1.max(factor);
            existing.2 = existing.2.max(via);
        }
        None => out.push((id, factor, via)),
    }
}

struct Alternatives {
    /// Index term, factor, and how it stands for the query term.
    terms: Vec<(usize, f64, Via)>,
    /// Whether the vocabulary was scanned for typos.
    typo_lookup: bool,
}

/// How an index term stands for a query term, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Via {
    Typo,
    Prefix,
    Synonym,
    Exact,
}

/// What a hit has for it besides its score: how much of the request it meets, and how
/// directly. The relevance floor ([`Evidence::is_relevant`]) reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Evidence {
    /// How many terms the query has.
    pub query_terms: u8,
    /// How many distinct words of the tool the query met, in any way (two query words meeting
    /// one word of the tool, "call" and "phone" meeting `phone`, count once).
    pub met: u8,
    /// How many of those it met solidly: as written (anywhere), or through a synonym in the
    /// name, tags or category. A synonym or a prefix met only in the description is a hint,
    /// not an answer.
    pub solid: u8,
    /// Whether a word of the query is, as written, in the tool's name, tags or category.
    pub strong: bool,
    /// Whether a word of the query is, as written, in the tool's name and in at most
    /// [`SPECIFIC_DF`] tools in all: it says which tool is meant (`forget`).
    pub specific: bool,
}

/// A word held by at most this many tools names what they do, not a whole family.
pub const SPECIFIC_DF: usize = 3;

/// Verbs that say what a request does, not what it is about: rare in names or not, they never
/// name a tool alone ("send an email" is not `sessions_send`, "show my goals" is not `show_x`).
/// Stems, as the index holds its words.
const GENERIC_VERBS: &[&str] = &[
    "send", "get", "set", "run", "make", "add", "show", "find", "use", "do", "list",
];

impl Evidence {
    /// Whether the hit answers the request rather than sharing a word with it: a rare word of
    /// the request names the tool; or a word of the request is in its name, tags or category
    /// and, when the request says more than one thing, a second word of it is met solidly too.
    /// Below this floor, "send an email to my boss" meeting `add_contact` through `email`
    /// alone, or "book a flight" meeting a calendar tool through `book`, is no answer.
    pub fn is_relevant(&self) -> bool {
        self.specific || (self.strong && (self.query_terms <= 1 || self.solid >= 2))
    }
}

/// One hit of [`SearchIndex::search_with_evidence`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The document's position.
    pub doc: usize,
    pub score: f64,
    pub evidence: Evidence,
}

/// One search result: a tool and its score (0 when the query lists everything).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked<'a> {
    pub tool: &'a ToolDefinition,
    pub score: f64,
}

/// The tools matching `query` (and `category`, case-insensitively, if given), best first;
/// ties by name. `"all"`, `"*"` or an empty query return every tool of the category by name.
/// Builds an index for this one query: for many queries over one catalogue, keep a
/// [`SearchIndex`].
pub fn search<'a>(
    tools: &[&'a ToolDefinition],
    query: &str,
    category: Option<&str>,
) -> Vec<Ranked<'a>> {
    let in_category =
        |tool: &ToolDefinition| super::in_category(tool.category.as_deref(), category);
    if super::lists_everything(query) {
        let mut all: Vec<Ranked<'a>> = tools
            .iter()
            .copied()
            .filter(|t| in_category(t))
            .map(|tool| Ranked { tool, score: 0.0 })
            .collect();
        all.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        return all;
    }
    let docs: Vec<Document> = tools.iter().map(|t| Document::of(t)).collect();
    let index = SearchIndex::build(&docs);
    index
        .search(query, |i| tools.get(i).is_some_and(|t| in_category(t)))
        .into_iter()
        .filter_map(|(i, score)| {
            Some(Ranked {
                tool: tools.get(i).copied()?,
                score,
            })
        })
        .collect()
}
