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
                "DELETE FROM limit_buckets WHERE full_at < clock_timestamp()",
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

/// `key` as PostgreSQL text can hold it: a NUL (which text refuses) becomes `\0` and a
/// backslash `\\`, so distinct keys stay distinct.
fn storable(key: &str) -> String {
    if !key.contains(['\0', '\\']) {
        return key.to_owned();
    }
    key.replace('\\', "\\\\").replace('\0', "\\0")
}
