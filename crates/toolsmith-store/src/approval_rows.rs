//! How both backends keep an approval's status in their `execution_approvals` table.
//!
//! The table's `CHECK` predates [`ApprovalStatus::Granted`]: an `allow_always` decision is kept
//! as `consumed` with the decision `allow_always`, and read back as `granted`. One mapping, so
//! SQLite and PostgreSQL answer the same.

use crate::{ApprovalDecision, ApprovalStatus};

/// The status as the table keeps it.
pub(crate) fn stored_status(status: ApprovalStatus) -> &'static str {
    match status {
        ApprovalStatus::Granted => ApprovalStatus::Consumed.as_str(),
        other => other.as_str(),
    }
}

/// The status a row means, from its stored status and decision.
pub(crate) fn read_status(
    stored: ApprovalStatus,
    decision: Option<ApprovalDecision>,
) -> ApprovalStatus {
    match (stored, decision) {
        (ApprovalStatus::Consumed, Some(ApprovalDecision::AllowAlways)) => ApprovalStatus::Granted,
        (status, _) => status,
    }
}

/// The status a decision leaves.
pub(crate) fn decided_status(decision: ApprovalDecision) -> ApprovalStatus {
    match decision {
        ApprovalDecision::AllowOnce => ApprovalStatus::Allowed,
        ApprovalDecision::AllowAlways => ApprovalStatus::Granted,
        ApprovalDecision::Deny => ApprovalStatus::Denied,
    }
}
