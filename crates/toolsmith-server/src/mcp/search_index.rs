//! What `search_tools` searches: per owner, a [`SearchIndex`] over the owner's catalogue (the
//! built-ins and every custom tool of the owner, whichever agent it belongs to) plus the
//! control plane (category `Meta`, so "create a tool" finds `create_tool`), the built-ins of
//! switched-off groups (found and named as such, so a request they would serve says which
//! group to switch on rather than "nothing here") and, with `--compat dynamic-mcp`, the
//! compatibility names.
//!
//! The index is rebuilt when the owner's catalogue version moves; the terms of a tool that is
//! still the same `Arc` are reused, so a change costs the vocabulary, not the stemming of every
//! description. What a caller may see (its agent, the policy) and the category filter are
//! applied to the hits of each query ([`OwnerIndex::search`]), so one index serves every agent
//! of an owner.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use toolsmith_builtins::vectors::hybrid::Similarity;
use toolsmith_core::{RegisteredTool, ToolDefinition, ToolRegistry};

use super::catalog::{SERVER_TOOLS, ServerOp, ServerTool};
use crate::discovery::{Document, Evidence, Hit, SearchIndex, in_category, lists_everything};

/// The category the control plane is filed under in search results.
pub(crate) const META_CATEGORY: &str = "Meta";

/// One searchable tool.
pub(crate) enum Source {
    Registry(Arc<RegisteredTool>),
    /// A built-in whose group is switched off: found, named with its group, never called.
    Off(Arc<RegisteredTool>),
    /// A control-plane or compatibility tool of the server.
    Server(&'static ToolDefinition),
}

struct Entry {
    source: Source,
    doc: Arc<Document>,
}

/// A server tool's definition as search sees it, and its document.
type ServerDoc = (ToolDefinition, Arc<Document>);

/// One owner's slot: its index once built.
type Slot = Arc<Mutex<Option<Arc<OwnerIndex>>>>;

/// The server tools as search sees them (core control plane, compat names), with their
/// documents, made once.
static SERVER_DOCS: LazyLock<(Vec<ServerDoc>, Vec<ServerDoc>)> = LazyLock::new(|| {
    let of = |t: &ServerTool| {
        let def = ToolDefinition::new(
            t.name,
            t.tool.description.as_deref().unwrap_or_default(),
            t.schema.schema().clone(),
        )
        .with_category(META_CATEGORY);
        let doc = Arc::new(Document::of(&def));
        (def, doc)
    };
    let core = SERVER_TOOLS
        .core
        .iter()
        .filter(|t| matches!(t.op, ServerOp::Control(_)))
        .map(of)
        .collect();
    let compat = SERVER_TOOLS.compat.iter().map(of).collect();
    (core, compat)
});

/// The control plane (and, with `compat`, the compatibility names) as search sees them.
pub(crate) fn server_definitions(compat: bool) -> impl Iterator<Item = &'static ToolDefinition> {
    let (core, more) = &*SERVER_DOCS;
    core.iter()
        .chain(more.iter().filter(move |_| compat))
        .map(|(def, _)| def)
}

/// One owner's searchable catalogue at one catalogue version.
pub(crate) struct OwnerIndex {
    version: u64,
    entries: Vec<Entry>,
    index: SearchIndex,
}

impl OwnerIndex {
    #[allow(
        clippy::indexing_slicing,
        reason = "`i` is a position in `entries`: the index is built from them and returns positions"
    )]
    pub fn source(&self, i: usize) -> &Source {
        &self.entries[i].source
    }

    #[allow(
        clippy::indexing_slicing,
        reason = "`i` is a position in `entries`: the index is built from them and returns positions"
    )]
    pub fn definition(&self, i: usize) -> &ToolDefinition {
        match &self.entries[i].source {
            Source::Registry(tool) | Source::Off(tool) => &tool.definition,
            Source::Server(def) => def,
        }
    }

    /// The entries matching `query` within `category` that `visible` lets through, best first
    /// (by name when the query lists everything: each then counts as relevant), with their
    /// scores and evidence.
    pub fn search(
        &self,
        query: &str,
        category: Option<&str>,
        visible: impl Fn(&Source) -> bool,
    ) -> Vec<Hit> {
        let accept = |i: usize| {
            in_category(self.definition(i).category.as_deref(), category) && visible(self.source(i))
        };
        if lists_everything(query) {
            let mut all: Vec<Hit> = (0..self.entries.len())
                .filter(|&i| accept(i))
                .map(|doc| Hit {
                    doc,
                    score: 0.0,
                    evidence: Evidence {
                        specific: true,
                        ..Evidence::default()
                    },
                })
                .collect();
            all.sort_by(|a, b| {
                self.definition(a.doc)
                    .name
                    .cmp(&self.definition(b.doc).name)
            });
            return all;
        }
        self.index.search_with_evidence(query, accept)
    }
}

impl OwnerIndex {
    /// `hits` with every alias ([`toolsmith_builtins::aliases`], not listed) replaced by the
    /// tool it stands for, where that tool is not already ranked above it, and dropped
    /// otherwise: a model is shown the listed name, once, at the best rank either earned.
    pub fn listed_names_only(&self, hits: Vec<Hit>) -> Vec<Hit> {
        let mut out: Vec<Hit> = Vec::with_capacity(hits.len());
        for mut hit in hits {
            let alias_of = match self.source(hit.doc) {
                Source::Registry(tool) | Source::Off(tool) if tool.deferred => {
                    toolsmith_builtins::aliases::canonical(tool.name())
                }
                _ => None,
            };
            if let Some(canonical) = alias_of {
                // The tool it stands for, if this caller's index holds it (a hit's visibility
                // was checked for the alias; an alias and its tool share their group).
                match (0..self.entries.len()).find(|&i| self.definition(i).name == canonical) {
                    Some(doc) => hit.doc = doc,
                    None => continue,
                }
            }
            if !out.iter().any(|seen| seen.doc == hit.doc) {
                out.push(hit);
            }
        }
        out
    }
}

/// The [`OwnerIndex`] of every owner that searched, kept in step with the registry.
pub(crate) struct SearchCache {
    compat: bool,
    /// What the compat mode serves (its profile): only those of its names are searched.
    surface: super::compat::profile::Surface,
    by_owner: Mutex<HashMap<String, Slot>>,
}

impl SearchCache {
    pub fn new(compat: bool) -> SearchCache {
        SearchCache {
            compat,
            surface: Default::default(),
            by_owner: Mutex::new(HashMap::new()),
        }
    }

    /// This cache for a compat mode serving `surface`.
    pub fn with_surface(mut self, surface: super::compat::profile::Surface) -> SearchCache {
        self.surface = surface;
        self
    }

    /// `owner`'s index at the registry's current catalogue version.
    pub fn index(&self, registry: &ToolRegistry, owner: &str) -> Arc<OwnerIndex> {
        let slot = self
            .by_owner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(owner.to_owned())
            .or_default()
            .clone();
        let mut cached = slot.lock().unwrap_or_else(|e| e.into_inner());
        // The version is read before the tools: a change in between is caught next time.
        let version = registry.catalog_version(owner);
        if let Some(index) = cached.as_ref()
            && index.version == version
        {
            return index.clone();
        }
        let built = Arc::new(self.build(registry, owner, version, cached.as_deref()));
        *cached = Some(built.clone());
        built
    }

    fn build(
        &self,
        registry: &ToolRegistry,
        owner: &str,
        version: u64,
        old: Option<&OwnerIndex>,
    ) -> OwnerIndex {
        let reusable: HashMap<&str, (&Arc<RegisteredTool>, &Arc<Document>)> = old
            .map(|old| {
                old.entries
                    .iter()
                    .filter_map(|e| match &e.source {
                        Source::Registry(tool) | Source::Off(tool) => {
                            Some((tool.name(), (tool, &e.doc)))
                        }
                        Source::Server(_) => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let doc_of = |tool: &Arc<RegisteredTool>| match reusable.get(tool.name()) {
            Some((same, doc)) if Arc::ptr_eq(same, tool) => (*doc).clone(),
            _ => Arc::new(Document::of(&tool.definition)),
        };
        let mut entries: Vec<Entry> = registry
            .tools(owner)
            .into_iter()
            // A custom tool under a server tool's name cannot be reached (the server tool wins).
            .filter(|tool| !SERVER_TOOLS.is_server_tool(tool.name()))
            .map(|tool| Entry {
                doc: doc_of(&tool),
                source: Source::Registry(tool),
            })
            .collect();
        entries.extend(registry.hidden_builtins().into_iter().map(|tool| Entry {
            doc: doc_of(&tool),
            source: Source::Off(tool),
        }));
        let (core, compat) = &*SERVER_DOCS;
        // The compat documents are made from `SERVER_TOOLS.compat`, in its order.
        let served = compat
            .iter()
            .zip(&SERVER_TOOLS.compat)
            .filter(|(_, tool)| self.compat && tool.served_in(self.surface))
            .map(|(doc, _)| doc);
        let server = core.iter().chain(served);
        entries.extend(server.map(|(def, doc)| Entry {
            source: Source::Server(def),
            doc: doc.clone(),
        }));
        let index = SearchIndex::build(entries.iter().map(|e| e.doc.as_ref()));
        OwnerIndex {
            version,
            entries,
            index,
        }
    }
}

/// Characters of a tool's description embedded for the hybrid ranking.
const EMBEDDED_DESCRIPTION_CHARS: usize = 400;

/// What is embedded of a tool: its name as words, its description's start and its tags.
fn embedded_text(def: &ToolDefinition) -> String {
    let description: String = def
        .description
        .chars()
        .take(EMBEDDED_DESCRIPTION_CHARS)
        .collect();
    format!(
        "{}\n{description}\n{}",
        def.name.replace('_', " "),
        def.tags.join(", ")
    )
}

impl OwnerIndex {
    /// The hits of a search (`found`: [`OwnerIndex::search`]'s, best first) that answer it:
    /// those above the relevance floor and, when the caller has an embeddings service (the
    /// hybrid ranking `delegate_search` and `recall` share,
    /// [`toolsmith_builtins::vectors::hybrid`]), every visible tool whose meaning is close
    /// enough, ranked by words plus similarity. `None` beside them: no embeddings service, the
    /// full-text answer unchanged.
    pub async fn answering(
        &self,
        caller: &super::handler::Caller<'_>,
        query: &str,
        category: Option<&str>,
        found: Vec<Hit>,
    ) -> (Vec<Hit>, Similarity) {
        let visible = |source: &Source| match source {
            Source::Registry(tool) | Source::Off(tool) => caller.can_see(tool),
            Source::Server(_) => true,
        };
        let candidates = self.search("*", category, visible);
        let texts: Vec<String> = candidates
            .iter()
            .map(|hit| embedded_text(self.definition(hit.doc)))
            .collect();
        let similarity = caller
            .service()
            .text_similarity(&caller.who(), query, &texts, "search_tools")
            .await;
        if !matches!(similarity, Similarity::Scores(_)) {
            let relevant = found
                .into_iter()
                .filter(|hit| hit.evidence.is_relevant())
                .collect();
            return (relevant, similarity);
        }
        let words: HashMap<usize, &Hit> = found
            .iter()
            .filter(|hit| hit.evidence.is_relevant())
            .map(|hit| (hit.doc, hit))
            .collect();
        let mut ranked: Vec<Hit> = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, candidate)| {
                let by_words = words.get(&candidate.doc);
                let rank = similarity.rank(i, by_words.map_or(0.0, |hit| hit.score))?;
                Some(Hit {
                    doc: candidate.doc,
                    score: rank,
                    evidence: by_words.map_or_else(Evidence::default, |hit| hit.evidence),
                })
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then_with(|| {
                self.definition(a.doc)
                    .name
                    .cmp(&self.definition(b.doc).name)
            })
        });
        (ranked, similarity)
    }
}
