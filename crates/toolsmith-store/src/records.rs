//! What both backends share of the agent's own records (`data_records`): the scale of a text
//! query's relevance.

use toolsmith_core::data::RecordHit;

/// Scales the backend's full-text scores (SQLite's `bm25`, PostgreSQL's `ts_rank`, which do
/// not share a scale) to the best hit of the query: the best is `1`, the rest in `(0, 1]`.
/// A query without text scores every hit `1`.
pub(crate) fn normalized(mut hits: Vec<RecordHit>) -> Vec<RecordHit> {
    let best = hits.iter().map(|h| h.relevance).fold(0.0_f64, f64::max);
    for hit in &mut hits {
        hit.relevance = if best > 0.0 && hit.relevance.is_finite() {
            (hit.relevance / best).clamp(f64::MIN_POSITIVE, 1.0)
        } else {
            1.0
        };
    }
    hits
}
