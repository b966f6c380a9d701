//! What both backends share of the agents' tables: a run's fields kept as one JSON document
//! (`agent_runs.document`), the statuses of a run that has not ended, and the corrupt-row error.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolsmith_core::agent::{AgentRunRecord, AgentRunStatus, RunUsage};

use crate::StoreError;

/// The statuses of a run that has not ended, as an SQL list.
pub(crate) const RUNNING: &str = "('running', 'waiting_approval')";

/// The most runs with a lapsed lease one sweep reads (the next sweep takes the rest).
pub(crate) const LAPSED_AT_ONCE: u32 = 100;

/// A corrupt-row error for `table`, row `id`.
pub(crate) fn corrupt(
    table: &str,
    id: &str,
    what: &str,
    detail: impl std::fmt::Display,
) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason: format!("{table}: row {id} has an unreadable {what}: {detail}"),
    }
}

/// The fields of a run that no query filters on.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunDocument {
    agent_revision: i64,
    input: String,
    #[serde(default)]
    output: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    usage: RunUsage,
    #[serde(default)]
    iterations: u32,
}

impl RunDocument {
    pub(crate) fn of(run: &AgentRunRecord) -> RunDocument {
        RunDocument {
            agent_revision: run.agent_revision,
            input: run.input.clone(),
            output: run.output.clone(),
            error: run.error.clone(),
            usage: run.usage,
            iterations: run.iterations,
        }
    }

    /// The record of this document and the row's own columns.
    #[allow(
        clippy::too_many_arguments,
        reason = "one argument per column of the row"
    )]
    pub(crate) fn into_record(
        self,
        id: String,
        owner: String,
        caller_agent: Option<String>,
        agent_id: String,
        status: AgentRunStatus,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
        instance: String,
        lease_until: Option<DateTime<Utc>>,
    ) -> AgentRunRecord {
        AgentRunRecord {
            id,
            owner,
            caller_agent,
            agent_id,
            agent_revision: self.agent_revision,
            status,
            input: self.input,
            output: self.output,
            error: self.error,
            usage: self.usage,
            iterations: self.iterations,
            created_at,
            updated_at,
            instance,
            lease_until,
        }
    }
}
