//! What a running tool may ask the caller's client: its model (sampling, `mcp.sample`) and its
//! person (elicitation, `mcp.elicit`). Both cost the user something — model tokens, attention —
//! so a tool must declare them, the policy may deny them, and limits bound them per execution
//! and per user per minute, so no tool can drain a user's model budget in a loop.
//!
//! [`ClientRequestGate::may_ask`] is the one rule: the sandbox's `mcp` (through
//! `PipelineHost`) and the MCP bridge's relay of an upstream's requests both ask it before the
//! client is asked. Every request asked is written to the audit log (`client.sample`,
//! `client.elicit`: the tool, the outcome, never the prompt or the answer).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use toolsmith_core::ToolContext;

use crate::governance::policy::PolicyGate;

/// Something a tool asks the caller's client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientRequest {
    /// `sampling/createMessage`: the client's model.
    Sampling,
    /// `elicitation/create`: the client's person.
    Elicitation,
}

impl ClientRequest {
    /// The permission a tool declares for it, and the policy entry that denies it.
    pub fn permission(self) -> toolsmith_core::Permission {
        match self {
            ClientRequest::Sampling => toolsmith_core::Permission::Sampling,
            ClientRequest::Elicitation => toolsmith_core::Permission::Elicitation,
        }
    }

    /// The policy's name for it: a deny entry naming it refuses it (`docs/policy.md`).
    pub fn policy_entry(self) -> &'static str {
        match self {
            ClientRequest::Sampling => "mcp:sampling",
            ClientRequest::Elicitation => "mcp:elicitation",
        }
    }

    /// The audit log's action.
    pub fn audit_action(self) -> &'static str {
        match self {
            ClientRequest::Sampling => "client.sample",
            ClientRequest::Elicitation => "client.elicit",
        }
    }

    fn asking(self) -> &'static str {
        match self {
            ClientRequest::Sampling => "asking the client's model (sampling)",
            ClientRequest::Elicitation => "asking the user (elicitation)",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            ClientRequest::Sampling => "sampling requests",
            ClientRequest::Elicitation => "elicitation requests",
        }
    }
}

/// The limits on requests to the caller's client (settings `mcp_max_samples_per_call` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientRequestLimits {
    /// Sampling requests one call (one execution, its nested calls included) may make
    /// (default 10).
    pub samples_per_call: u32,
    /// Sampling requests one user's calls may make in a minute, across every tool (default 30).
    pub samples_per_user_minute: u32,
    /// Elicitation requests one call may make (default 5).
    pub elicitations_per_call: u32,
    /// Elicitation requests one user's calls may make in a minute (default 10).
    pub elicitations_per_user_minute: u32,
}

impl Default for ClientRequestLimits {
    fn default() -> Self {
        ClientRequestLimits {
            samples_per_call: 10,
            samples_per_user_minute: 30,
            elicitations_per_call: 5,
            elicitations_per_user_minute: 10,
        }
    }
}

impl ClientRequestLimits {
    fn per_call(&self, request: ClientRequest) -> (u32, &'static str) {
        match request {
            ClientRequest::Sampling => (self.samples_per_call, "mcp_max_samples_per_call"),
            ClientRequest::Elicitation => {
                (self.elicitations_per_call, "mcp_max_elicitations_per_call")
            }
        }
    }

    fn per_minute(&self, request: ClientRequest) -> (u32, &'static str) {
        match request {
            ClientRequest::Sampling => (
                self.samples_per_user_minute,
                "mcp_max_samples_per_user_per_minute",
            ),
            ClientRequest::Elicitation => (
                self.elicitations_per_user_minute,
                "mcp_max_elicitations_per_user_per_minute",
            ),
        }
    }
}

/// One call's count of requests to the client, against the per-call limits. A JS execution
/// keeps one for its run; the bridge one per relayed call.
#[derive(Debug, Default)]
pub struct ClientRequestBudget {
    samples: AtomicU32,
    elicitations: AtomicU32,
}

impl ClientRequestBudget {
    fn counter(&self, request: ClientRequest) -> &AtomicU32 {
        match request {
            ClientRequest::Sampling => &self.samples,
            ClientRequest::Elicitation => &self.elicitations,
        }
    }

    /// Requests of this kind allowed so far.
    pub fn used(&self, request: ClientRequest) -> u32 {
        self.counter(request).load(Ordering::Relaxed)
    }
}

/// The per-user windows: requests of each kind in the current minute.
type Windows = HashMap<(String, ClientRequest), (Instant, u32)>;

/// Decides whether a running tool may ask the caller's client now. One per service.
pub struct ClientRequestGate {
    limits: ClientRequestLimits,
    windows: Mutex<Windows>,
}

/// The length of a per-user window.
const WINDOW: Duration = Duration::from_secs(60);

impl ClientRequestGate {
    pub fn new(limits: ClientRequestLimits) -> ClientRequestGate {
        ClientRequestGate {
            limits,
            windows: Mutex::new(HashMap::new()),
        }
    }

    pub fn limits(&self) -> ClientRequestLimits {
        self.limits
    }

    /// Whether the call of `ctx`, running `tool`, may make `request` of its client now; counts
    /// it when it may. The rule, in order: the tool declared the permission (`declared`; the
    /// bridge passes `true`, an upstream's requests being the operator's registration), the
    /// policy names no deny entry for it for this caller (`mcp:sampling`, `mcp:elicitation`),
    /// the call has requests left (`budget`), and the user has requests left this minute.
    /// The refusal says which and what to change.
    pub fn may_ask(
        &self,
        policy: &PolicyGate,
        ctx: &ToolContext,
        tool: &str,
        request: ClientRequest,
        declared: bool,
        budget: &ClientRequestBudget,
    ) -> Result<(), String> {
        if !declared {
            return Err(format!(
                "{} needs the tool '{tool}' to declare permissions: [\"{}\"] (set it with create_tool or update_custom_tool)",
                request.asking(),
                request.permission()
            ));
        }
        if let Some(reason) = policy.denies_capability(ctx, request.policy_entry()) {
            return Err(format!(
                "{} is not allowed for this caller: {reason} (the policy entry '{}')",
                request.asking(),
                request.policy_entry()
            ));
        }
        let (per_call, call_setting) = self.limits.per_call(request);
        let counter = budget.counter(request);
        if counter
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < per_call).then_some(n + 1)
            })
            .is_err()
        {
            return Err(format!(
                "this call has made its {per_call} {} (the `{call_setting}` setting); ask once for what you need, or split the work into several calls",
                request.noun()
            ));
        }
        let (per_minute, minute_setting) = self.limits.per_minute(request);
        let now = Instant::now();
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        windows.retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
        let (_, used) = windows
            .entry((ctx.user_id.clone(), request))
            .or_insert((now, 0));
        if *used >= per_minute {
            // Not spent after all.
            counter.fetch_sub(1, Ordering::Relaxed);
            return Err(format!(
                "user '{}' has made {per_minute} {} in the last minute (the `{minute_setting}` setting); try again in a minute",
                ctx.user_id,
                request.noun()
            ));
        }
        *used += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
