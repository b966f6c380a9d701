//! What both backends share of the delegation tables (`agent_links`, `delegations`,
//! `handoff_routes`): each row keeps its whole record as one JSON document beside the columns
//! queries filter on (the `status` column is the one that counts), and the SQL that counts the
//! delegations still running.

use serde::de::DeserializeOwned;
use toolsmith_core::delegation::{DelegationRecord, DelegationStatus};

use crate::StoreError;
use crate::agent_rows::corrupt;

/// A running delegation whose run has not ended (a run that ended without its delegation
/// being told, its instance gone, frees its place).
pub(crate) const STILL_RUNNING: &str = "status = 'running' AND NOT EXISTS (SELECT 1 FROM \
    agent_runs r WHERE r.id = delegations.run_id AND r.status IN ('completed', 'failed', \
    'cancelled'))";

/// A record as its row's document.
pub(crate) fn document<T: serde::Serialize>(record: &T) -> String {
    serde_json::to_string(record).unwrap_or_else(|_| "{}".to_owned())
}

/// A row's document read back.
pub(crate) fn read<T: DeserializeOwned>(
    table: &str,
    id: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(table, id, "document", e))
}

/// A delegation's row: its document, with the status column's word.
pub(crate) fn delegation(
    id: &str,
    status: &str,
    text: &str,
) -> Result<DelegationRecord, StoreError> {
    let mut record: DelegationRecord = read("delegations", id, text)?;
    record.status = DelegationStatus::parse(status)
        .ok_or_else(|| corrupt("delegations", id, "status", status))?;
    Ok(record)
}
