//! Embeddings as an optional second ranking beside a full-text one (spec 001 §7's hybrid
//! discovery; issue 39): `delegate_search`, `search_tools` and memory `recall` rank their
//! candidates by their words' score plus the similarity of the query's embedding and each
//! candidate's, from the caller's Config Center service `embeddings` ([`super::embed`], through
//! the egress guard). A candidate is found by either: a word match, or a similarity of at least
//! [`MIN_SIMILARITY`] (so a request sharing no word with what answers it is still found by
//! meaning). Without the service, or when it fails, the search is full text alone and the
//! answer says why ([`Similarity::note`]).
//!
//! Embeddings of candidates are kept in a bounded in-process cache, per user, service address,
//! model and text, so a catalogue or a memory is embedded once, not at every search; only the
//! query (and what changed) is sent each time.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::Value;
use toolsmith_core::{ToolContext, object};

use super::embed;
use crate::BuiltinEnv;
use crate::web::{Call, ToolError};

/// The similarity at which a candidate no word matches is still found.
pub const MIN_SIMILARITY: f64 = 0.5;
/// How much similarity counts against the full-text score (a name match weighs 3 a word in
/// `delegate_search`; `search_tools`' BM25 gives a few points a matching word).
pub const SIMILARITY_WEIGHT: f64 = 10.0;
/// Candidates embedded for one search (the others are found by full text only).
pub const MAX_EMBEDDED: usize = 1024;
/// Texts sent in one request to the embeddings service.
const BATCH: usize = 256;
/// Embeddings kept in the cache (it is emptied when full): at 1,536 dimensions about 25 MB.
const MAX_CACHED: usize = 4096;

/// Cached embeddings by user, service fingerprint and text.
type Cache = HashMap<(String, String, String), Arc<Vec<f32>>>;
static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// What the embeddings gave a search: each candidate's similarity to the query (in the order
/// of the candidates; `None` past [`MAX_EMBEDDED`]), or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Similarity {
    Scores(Vec<Option<f64>>),
    /// The caller has no embeddings service (or the server reaches no outside service).
    NotConfigured(String),
    /// The service failed for this search.
    Failed(String),
}

impl Similarity {
    /// The similarity of candidate `index` to the query, if it was embedded.
    #[must_use]
    pub fn of(&self, index: usize) -> Option<f64> {
        match self {
            Similarity::Scores(scores) => scores.get(index).copied().flatten(),
            Similarity::NotConfigured(_) | Similarity::Failed(_) => None,
        }
    }

    /// The rank of candidate `index`, whose full-text score is `words` (0 when no word of the
    /// query matched it): its words plus its similarity × [`SIMILARITY_WEIGHT`]; `None` when
    /// neither finds it (no word, and a similarity under [`MIN_SIMILARITY`]).
    #[must_use]
    pub fn rank(&self, index: usize, words: f64) -> Option<f64> {
        let close = self.of(index);
        let near = close.is_some_and(|c| c >= MIN_SIMILARITY);
        (words > 0.0 || near).then(|| words + close.unwrap_or(0.0).max(0.0) * SIMILARITY_WEIGHT)
    }

    /// Says in `answer` which search ran: `"search": "hybrid"`, or `"full text"` with why in
    /// `"embeddings"`. With `quiet_unless_configured`, a caller without an embeddings service
    /// gets the answer of a full-text search unchanged (nothing is said).
    pub fn note(&self, answer: &mut Value, quiet_unless_configured: bool) {
        match self {
            Similarity::Scores(_) => object::set(answer, "search", "hybrid".into()),
            Similarity::NotConfigured(_) if quiet_unless_configured => {}
            Similarity::NotConfigured(why) | Similarity::Failed(why) => {
                object::set(answer, "search", "full text".into());
                object::set(answer, "embeddings", why.clone().into());
            }
        }
    }
}

/// Whether the caller has an embeddings service (and this server reaches outside services):
/// whether [`similarity`] would ask it.
pub async fn configured(env: &BuiltinEnv, ctx: &ToolContext) -> bool {
    let Some(client) = env.web.as_deref() else {
        return false;
    };
    let call = Call {
        client,
        env,
        ctx,
        args: Value::Null,
    };
    embed::service(&call).await.is_ok()
}

/// The similarity of `query` to each of `texts` (the first [`MAX_EMBEDDED`]), by the caller's
/// embeddings service; `used_by` names the search in the log when the service fails.
pub async fn similarity(
    env: &BuiltinEnv,
    ctx: &ToolContext,
    query: &str,
    texts: &[String],
    used_by: &str,
) -> Similarity {
    let Some(client) = env.web.as_deref() else {
        return Similarity::NotConfigured("this server reaches no outside service".to_owned());
    };
    let call = Call {
        client,
        env,
        ctx,
        args: Value::Null,
    };
    let service = match embed::service(&call).await {
        Ok(service) => service,
        Err(ToolError::NotConfigured(why)) => {
            return Similarity::NotConfigured(format!(
                "full text only; for search by meaning too, {why}"
            ));
        }
        Err(e) => return Similarity::Failed(format!("full text only: {e}")),
    };
    let all: Vec<String> = std::iter::once(query.to_owned())
        .chain(texts.iter().take(MAX_EMBEDDED).cloned())
        .collect();
    match embeddings(&call, &service, &all).await {
        Ok(vectors) => {
            let Some((first, rest)) = vectors.split_first() else {
                return Similarity::Failed(
                    "full text only: the embeddings service answered no embedding".to_owned(),
                );
            };
            let mut scores: Vec<Option<f64>> =
                rest.iter().map(|v| Some(embed::cosine(first, v))).collect();
            scores.resize(texts.len(), None);
            Similarity::Scores(scores)
        }
        Err(e) => {
            tracing::warn!(user = %ctx.user_id, "{used_by}'s embeddings failed: {e}");
            Similarity::Failed(format!("full text only: {e}"))
        }
    }
}

/// The embeddings of `texts`, in order: from the cache where it has them, the rest asked of
/// `service` in batches of [`BATCH`] and kept.
async fn embeddings(
    call: &Call<'_>,
    service: &embed::Service,
    texts: &[String],
) -> Result<Vec<Arc<Vec<f32>>>, ToolError> {
    let fingerprint = service.fingerprint();
    let key = |text: &String| (call.ctx.user_id.clone(), fingerprint.clone(), text.clone());
    let mut found: Vec<Option<Arc<Vec<f32>>>> = {
        let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        texts.iter().map(|t| cache.get(&key(t)).cloned()).collect()
    };
    let missing: Vec<usize> = (0..texts.len())
        .filter(|&i| found.get(i).is_some_and(Option::is_none))
        .collect();
    for batch in missing.chunks(BATCH) {
        let asked: Vec<String> = batch
            .iter()
            .filter_map(|&i| texts.get(i).cloned())
            .collect();
        let answer = embed::embed_with(call, service, &asked).await?;
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() + asked.len() > MAX_CACHED {
            cache.clear();
        }
        for ((&i, text), vector) in batch.iter().zip(&asked).zip(answer.vectors) {
            let vector = Arc::new(vector);
            cache.insert(key(text), vector.clone());
            if let Some(slot) = found.get_mut(i) {
                *slot = Some(vector);
            }
        }
    }
    found
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            ToolError::Provider(
                "the embeddings service left a text without its embedding".to_owned(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_is_found_by_words_or_by_meaning_and_ranked_by_both() {
        let s = Similarity::Scores(vec![Some(0.9), Some(0.2), None, Some(0.6)]);
        // Meaning alone finds it above the floor; words alone always.
        assert_eq!(s.rank(0, 0.0), Some(9.0));
        assert_eq!(s.rank(1, 0.0), None);
        assert_eq!(s.rank(1, 3.0), Some(5.0));
        assert_eq!(s.rank(2, 0.0), None);
        assert_eq!(s.rank(2, 1.5), Some(1.5));
        assert!(s.rank(3, 0.0).is_some());
        let off = Similarity::NotConfigured("no service".to_owned());
        assert_eq!(off.rank(0, 0.0), None);
        assert_eq!(off.rank(0, 2.0), Some(2.0));

        let mut answer = serde_json::json!({});
        off.note(&mut answer, true);
        assert_eq!(
            answer,
            serde_json::json!({}),
            "nothing said without a service"
        );
        off.note(&mut answer, false);
        assert_eq!(answer["search"], "full text");
        let mut answer = serde_json::json!({});
        Similarity::Failed("full text only: HTTP 500".to_owned()).note(&mut answer, true);
        assert_eq!(answer["embeddings"], "full text only: HTTP 500");
        let mut answer = serde_json::json!({});
        s.note(&mut answer, true);
        assert_eq!(answer, serde_json::json!({"search": "hybrid"}));
    }
}
