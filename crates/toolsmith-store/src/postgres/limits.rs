//! [`SharedLimits`] on PostgreSQL: the rate-limit buckets (`limit_buckets`) and concurrency
//! slots (`limit_slots`) every instance on the database shares.
//!
//! A call's take is one statement, the `toolsmith_take_limits` function of migration 3, so it
//! costs one round trip and is atomic: buckets are locked row by row (one per scope, in scope
//! order, so two callers never deadlock), refilled on the database's clock, and spent all or
//! none; a slot is counted and leased under a per-user advisory lock. Slots carry this
//! handle's instance id, for whoever looks at the table.

use std::time::Duration;

use async_trait::async_trait;

use super::PgStore;
use super::errors::pg;
use crate::{LimitOutcome, LimitRequest, SharedLimits, StoreError};

#[async_trait]
impl SharedLimits for PgStore {
    async fn take_limits(&self, request: &LimitRequest) -> Result<LimitOutcome, StoreError> {
        let mut buckets: Vec<_> = request.buckets.iter().enumerate().collect();
        buckets.sort_by(|(_, a), (_, b)| a.scope.cmp(&b.scope));
        let scopes: Vec<&str> = buckets.iter().map(|(_, b)| b.scope.as_str()).collect();
        let keys: Vec<String> = buckets.iter().map(|(_, b)| storable(&b.key)).collect();
        let capacity: Vec<f64> = buckets.iter().map(|(_, b)| b.capacity).collect();
        let per_second: Vec<f64> = buckets.iter().map(|(_, b)| b.per_second).collect();
        let (user, cap, ttl) = match &request.slot {
            Some(slot) => (
                Some(storable(&slot.user)),
                i32::try_from(slot.cap).unwrap_or(i32::MAX),
                slot.ttl.as_secs_f64(),
            ),
            None => (None, 0, 0.0),
        };
        let client = self.client().await?;
        if let ([(_, only)], [key], None) = (buckets.as_slice(), keys.as_slice(), &request.slot) {
            return spend_one(&client, only, key).await;
        }
        let row = client
            .query_one(
                "SELECT refused, wait_seconds, lease \
                 FROM toolsmith_take_limits($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &scopes,
                    &keys,
                    &capacity,
                    &per_second,
                    &user,
                    &cap,
                    &self.instance,
                    &ttl,
                ],
            )
            .await
            .map_err(pg)?;
        let refused: i32 = row.get(0);
        Ok(match refused {
            0 => LimitOutcome::Allowed { lease: row.get(2) },
            -1 => LimitOutcome::ConcurrencyLimited,
            i => {
                let sorted = usize::try_from(i - 1).unwrap_or(0);
                let index = buckets.get(sorted).map_or(0, |(index, _)| *index);
                let wait: f64 = row.get(1);
                LimitOutcome::RateLimited {
                    index,
                    wait: Duration::from_secs_f64(wait.clamp(0.0, 3600.0)),
                }
            }
        })
    }

    async fn release_slot(&self, lease: i64) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute("DELETE FROM limit_slots WHERE id = $1", &[&lease])
            .await
            .map_err(pg)?;
        Ok(())
    }

    async fn renew_slots(&self, leases: &[i64], ttl: Duration) -> Result<u64, StoreError> {
        if leases.is_empty() {
            return Ok(0);
        }
        let client = self.client().await?;
        client
            .execute(
                "UPDATE limit_slots SET expires_at = clock_timestamp() + make_interval(secs => $2) \
                 WHERE id = ANY($1)",
                &[&leases, &ttl.as_secs_f64()],
            )
            .await
            .map_err(pg)
    }

    async fn sweep_limits(&self) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let buckets = client
            .execute(
                "DELETE FROM limit_buckets WHERE tokens \
                 + extract(epoch FROM clock_timestamp() - updated_at)::double precision \
                   * per_second >= capacity",
                &[],
            )
            .await
            .map_err(pg)?;
        let slots = client
            .execute(
                "DELETE FROM limit_slots WHERE expires_at < clock_timestamp()",
                &[],
            )
            .await
            .map_err(pg)?;
        Ok(buckets + slots)
    }
}

/// The usual call (one bucket, `rate_per_user` alone, no slot) in one statement: the row lock
/// is held for that statement only, not for a function's several, which is what a user's
/// concurrent calls queue on. Same semantics as `toolsmith_take_limits`; on a refusal a second
/// read says how long to wait.
async fn spend_one(
    client: &deadpool_postgres::Client,
    bucket: &crate::RateBucketSpend,
    key: &str,
) -> Result<LimitOutcome, StoreError> {
    const LEVEL: &str = "least($3::double precision, b.tokens + greatest(0, extract(epoch FROM \
                         clock_timestamp() - b.updated_at)::double precision) \
                         * $4::double precision)";
    let key = if key.len() > 256 {
        // What the function stores such keys as (an index entry holds no more).
        let row = client
            .query_one(
                "SELECT 'sha256:' || encode(sha256(convert_to($1, 'UTF8')), 'hex')",
                &[&key],
            )
            .await
            .map_err(pg)?;
        row.get::<_, String>(0)
    } else {
        key.to_owned()
    };
    let spent = client
        .query_opt(
            &format!(
                "INSERT INTO limit_buckets AS b (scope, key, tokens, updated_at, capacity, per_second) \
                 VALUES ($1, $2, $3::double precision - 1, clock_timestamp(), $3, $4) \
                 ON CONFLICT (scope, key) DO UPDATE \
                 SET tokens = {LEVEL} - 1, updated_at = clock_timestamp(), capacity = $3, \
                     per_second = $4 \
                 WHERE {LEVEL} >= 1 \
                 RETURNING 1"
            ),
            &[&bucket.scope, &key, &bucket.capacity, &bucket.per_second],
        )
        .await
        .map_err(pg)?;
    if spent.is_some() {
        return Ok(LimitOutcome::Allowed { lease: None });
    }
    let row = client
        .query_opt(
            &format!("SELECT {LEVEL} FROM limit_buckets b WHERE b.scope = $1 AND b.key = $2"),
            &[&bucket.scope, &key, &bucket.capacity, &bucket.per_second],
        )
        .await
        .map_err(pg)?;
    let level: f64 = row.map_or(0.0, |r| r.get(0));
    let wait = if bucket.per_second > 0.0 {
        (1.0 - level).max(0.0) / bucket.per_second
    } else {
        3600.0
    };
    Ok(LimitOutcome::RateLimited {
        index: 0,
        wait: Duration::from_secs_f64(wait.clamp(0.0, 3600.0)),
    })
}

/// `key` as PostgreSQL text can hold it: a NUL (which text refuses) becomes `\0` and a
/// backslash `\\`, so distinct keys stay distinct.
fn storable(key: &str) -> String {
    if !key.contains(['\0', '\\']) {
        return key.to_owned();
    }
    key.replace('\\', "\\\\").replace('\0', "\\0")
}
