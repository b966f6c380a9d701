//! How a call that needs a human's approval can ask one while it waits.
//!
//! The engine knows nothing of MCP: an interface that can put a question to the person behind
//! the caller (an MCP client with the elicitation capability) sets an [`Approver`] on the
//! call's [`ToolContext`](crate::ToolContext); the approval middleware asks it and, without
//! one or without an answer, leaves the approval pending for the REST API or the CLI.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

/// What the person is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalQuestion {
    pub approval_id: String,
    pub tool_name: String,
    /// The arguments, scrubbed and shortened.
    pub args_preview: String,
    /// How long the question stays open (then it counts as denied).
    pub expires_in: Duration,
}

/// What the person answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalAnswer {
    AllowOnce,
    AllowAlways,
    Deny,
}

/// Something that can ask the person behind a call.
#[async_trait]
pub trait ApprovalPrompt: Send + Sync {
    /// The person's answer, or `None` if they could not be asked or did not answer (declined
    /// the form, closed it, or the client does not support it).
    async fn ask(&self, question: &ApprovalQuestion) -> Option<ApprovalAnswer>;
}

/// The [`ApprovalPrompt`] of a call, cheap to clone into nested calls.
#[derive(Clone)]
pub struct Approver(pub Arc<dyn ApprovalPrompt>);

impl fmt::Debug for Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Approver")
    }
}
