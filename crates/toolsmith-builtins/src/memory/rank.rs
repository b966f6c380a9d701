//! How `recall` orders memories: each candidate the full-text search found gets
//!
//! `score = relevance × (0.5 + importance) × (0.3 + 0.7 × 0.5^(age / halfLife))`,
//! `halfLife = 30 days × (1 + 4 × importance)`
//!
//! - *relevance*, in `(0, 1]`: the database's full-text score (SQLite's BM25, PostgreSQL's
//!   `ts_rank`) relative to the best match of the query;
//! - *importance* (0 to 1) weighs a memory from 0.5× to 1.5×;
//! - *recency*: the time since the memory was last stored, merged or boosted decays its
//!   weight with a half-life that importance lengthens (30 days at 0, 150 days at 1: the
//!   spec's "decay resistance"); the decay never takes more than 70 %, so an old memory that
//!   is the only match is still found.
//!
//! `docs/builtins.md` ("Memory") says the same for users.

/// Days for a memory of importance 0 to lose half its recency weight.
pub const BASE_HALF_LIFE_DAYS: f64 = 30.0;
/// The share of the weight recency can take away.
pub const RECENCY_SHARE: f64 = 0.7;

/// The half-life of a memory of this importance, in days.
#[must_use]
pub fn half_life_days(importance: f64) -> f64 {
    BASE_HALF_LIFE_DAYS * (1.0 + 4.0 * importance.clamp(0.0, 1.0))
}

/// The recency factor, in `(0.3, 1]`.
#[must_use]
pub fn recency(age_days: f64, importance: f64) -> f64 {
    let decay = 0.5_f64.powf(age_days.max(0.0) / half_life_days(importance));
    (1.0 - RECENCY_SHARE) + RECENCY_SHARE * decay
}

/// A candidate's score (higher first).
#[must_use]
pub fn score(relevance: f64, importance: f64, age_days: f64) -> f64 {
    relevance.clamp(0.0, 1.0) * (0.5 + importance.clamp(0.0, 1.0)) * recency(age_days, importance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn importance_weighs_and_resists_decay() {
        // Equal matches: the more important memory first.
        assert!(score(1.0, 0.9, 0.0) > score(1.0, 0.2, 0.0));
        // A fresh memory beats a year-old one of the same importance and match.
        assert!(score(1.0, 0.5, 0.0) > score(1.0, 0.5, 365.0));
        // Half-life: 30 days at importance 0, 150 at 1.
        assert!((recency(30.0, 0.0) - 0.65).abs() < 1e-9);
        assert!((recency(150.0, 1.0) - 0.65).abs() < 1e-9);
        // After 90 days an important memory has kept more of its weight than a trivial one.
        assert!(recency(90.0, 1.0) > recency(90.0, 0.0) + 0.2);
        // Decay never takes more than 70 %.
        assert!(recency(1e9, 0.0) >= 0.3);
        // A much better match still wins over importance and age.
        assert!(score(1.0, 0.1, 200.0) > score(0.1, 1.0, 0.0));
    }
}
