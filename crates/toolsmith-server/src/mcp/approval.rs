//! Asking the person behind an MCP client to approve a call, with MCP elicitation.
//!
//! - Protocol 2025-11-25 (sessions): the server may send requests to the client, so a call
//!   that needs approval sends `elicitation/create` with a one-field form (`decision`:
//!   `allow_once`, `allow_always` or `deny`) and waits for the answer while the call is open
//!   ([`approver_for`] puts an [`ElicitingApprover`] on the call's context).
//! - Protocol 2026-07-28 (no server-to-client requests): the call answers an
//!   `InputRequiredResult` carrying the same form ([`input_required`]), with an unguessable,
//!   single-use ticket as `requestState` ([`ApprovalTickets`]); the client asks the person and
//!   retries the call with the answer in `inputResponses`, which [`retry_of`] reads before the
//!   call runs again. The answer counts only with a ticket this server issued for exactly this
//!   call: same user, same agent, same tool, same arguments, not used, not expired.
//! - A client that declared no elicitation capability, or a caller that may not decide
//!   approvals ([`Identity::approval_denial`]: an agent, no `tools:write`, read-only mode), gets
//!   the engine's "awaiting approval" result, which names the approval for a person to decide
//!   elsewhere. Forms are a door to deciding: they need what deciding through REST needs.
//!
//! Declining the form denies the call; cancelling (closing) it ends the call with the
//! "awaiting approval" result and leaves the approval pending, in both protocol generations.
//! A decision taken elsewhere (the web UI, REST, the CLI) while the form is open settles the
//! call; the engine then drops the question, and the form is withdrawn with
//! `notifications/cancelled` ([`Withdraw`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequiredResult, ProtocolVersion, RequestId, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use serde_json::{Value, json};
use toolsmith_core::{ApprovalAnswer, ApprovalPrompt, ApprovalQuestion, Approver};

use crate::auth::Identity;

/// The key of the approval form in `inputRequests` / `inputResponses`.
const INPUT_KEY: &str = "approval";
/// `requestState` of an approval round: this prefix and the round's ticket.
const STATE_PREFIX: &str = "approval:";
/// Length of a ticket: 64 hex digits (two random UUIDs, 244 random bits).
const TICKET_LEN: usize = 64;
/// Open rounds kept at most; past this the expired ones go, then the oldest.
const MAX_TICKETS: usize = 10_000;

/// The call an approval round was opened for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Round {
    pub approval_id: String,
    pub user: String,
    pub agent: Option<String>,
    pub tool: String,
    /// [`toolsmith_service::governance::approvals::args_hash`] of the call's arguments.
    pub args_hash: String,
}

/// The approval rounds this server opened with an `InputRequiredResult`, by ticket. A ticket
/// is random, used at most once, and dies with the approval's time to be decided (or with the
/// process: a client whose ticket is gone is asked again).
#[derive(Debug, Default)]
pub(crate) struct ApprovalTickets {
    open: Mutex<HashMap<String, (Round, Instant)>>,
}

impl ApprovalTickets {
    /// Opens a round for `round`, valid for `ttl`; the ticket to put in `requestState`.
    pub fn issue(&self, round: Round, ttl: Duration) -> String {
        let ticket = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let now = Instant::now();
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.len() >= MAX_TICKETS {
            open.retain(|_, (_, expires)| *expires > now);
        }
        if open.len() >= MAX_TICKETS
            && let Some(oldest) = open
                .iter()
                .min_by_key(|(_, (_, expires))| *expires)
                .map(|(ticket, _)| ticket.clone())
        {
            open.remove(&oldest);
        }
        open.insert(ticket.clone(), (round, now + ttl));
        ticket
    }

    /// Closes the round of `ticket` and returns it, if it is open and unexpired.
    pub fn take(&self, ticket: &str) -> Option<Round> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (round, expires) = open.remove(ticket)?;
        (expires > Instant::now()).then_some(round)
    }
}

/// Whether the client said it can show forms (an elicitation capability without modes means
/// forms, as the spec's back-compatibility rule says).
fn supports_forms(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

fn is_stateless_generation(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// The approver of a call on a 2025-11-25 session whose client can show forms, for a caller
/// that may decide approvals.
pub(crate) fn approver_for(
    context: &RequestContext<RoleServer>,
    identity: &Identity,
) -> Option<Approver> {
    let asks = supports_forms(context)
        && !is_stateless_generation(context)
        && identity.approval_denial().is_none();
    asks.then(|| {
        Approver(Arc::new(ElicitingApprover {
            peer: context.peer.clone(),
        }))
    })
}

/// Whether an approval should come back as an `InputRequiredResult` (2026-07-28 clients that
/// can show forms, for a caller that may decide approvals); otherwise why not.
pub(crate) fn input_required_denial(
    context: &RequestContext<RoleServer>,
    identity: &Identity,
) -> Option<String> {
    if !is_stateless_generation(context) {
        return Some("approval answers in inputResponses belong to protocol 2026-07-28; this session is asked through elicitation/create".to_owned());
    }
    if !supports_forms(context) {
        return Some("the client did not declare the elicitation capability, so it was never asked and cannot answer".to_owned());
    }
    identity.approval_denial()
}

/// Asks through `elicitation/create` on the session.
struct ElicitingApprover {
    peer: Peer<RoleServer>,
}

#[async_trait]
impl ApprovalPrompt for ElicitingApprover {
    async fn ask(&self, question: &ApprovalQuestion) -> Option<ApprovalAnswer> {
        let params = form(
            &question.tool_name,
            &question.args_preview,
            &question.approval_id,
        );
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let mut options = PeerRequestOptions::default();
        options.timeout = Some(question.expires_in);
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => {
                tracing::debug!(approval = %question.approval_id, error = %e, "the client could not be asked");
                return None;
            }
        };
        let mut withdraw = Withdraw(Some((self.peer.clone(), handle.id.clone())));
        let response = handle.await_response().await;
        withdraw.0 = None;
        match response {
            Ok(ClientResult::ElicitResult(result)) => answer_of(&result),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(approval = %question.approval_id, error = %e, "the client could not be asked");
                None
            }
        }
    }
}

/// Withdraws an open form when the question is dropped before the client answered (the call
/// was settled by a decision taken elsewhere, or cancelled): the client is sent
/// `notifications/cancelled` for the `elicitation/create` request, so it closes the form.
struct Withdraw(Option<(Peer<RoleServer>, RequestId)>);

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let notice = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some("decided elsewhere".to_owned()),
            ));
            if let Err(e) = peer.send_notification(notice.into()).await {
                tracing::debug!(error = %e, "the approval form could not be withdrawn");
            }
        });
    }
}

/// The approval form.
fn form(tool: &str, args_preview: &str, approval_id: &str) -> ElicitRequestParams {
    let schema = json!({
        "type": "object",
        "title": "Approve a tool call",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "allow_once: this call; allow_always: this tool from now on; deny: refuse",
                "enum": ["allow_once", "allow_always", "deny"],
            }
        },
        "required": ["decision"],
    });
    let requested_schema = match schema {
        Value::Object(map) => ElicitationSchema::from_json_schema(map).unwrap_or_else(|e| {
            // The schema is a constant: this is a programming error caught by the tests.
            tracing::error!(error = %e, "the approval form's schema is invalid");
            ElicitationSchema::new(BTreeMap::new())
        }),
        _ => ElicitationSchema::new(BTreeMap::new()),
    };
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "The assistant wants to run the tool '{tool}' with these arguments:\n{args_preview}\n\nAllow it? (approval {approval_id})"
        ),
        requested_schema,
    }
}

/// The person's answer in an elicitation result.
fn answer_of(result: &ElicitResult) -> Option<ApprovalAnswer> {
    match result.action {
        ElicitationAction::Accept => match result.content.as_ref()?.get("decision")?.as_str()? {
            "allow_once" => Some(ApprovalAnswer::AllowOnce),
            "allow_always" => Some(ApprovalAnswer::AllowAlways),
            "deny" => Some(ApprovalAnswer::Deny),
            _ => None,
        },
        ElicitationAction::Decline => Some(ApprovalAnswer::Deny),
        // Cancelled, or an action of a later protocol: no answer.
        _ => None,
    }
}

/// The `InputRequiredResult` asking for approval `approval_id`, whose round is `ticket`
/// (2026-07-28).
pub(crate) fn input_required(
    tool: &str,
    args_preview: &str,
    approval_id: &str,
    ticket: &str,
) -> InputRequiredResult {
    let mut requests = BTreeMap::new();
    requests.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form(tool, args_preview, approval_id))),
    );
    InputRequiredResult::new(Some(requests), Some(format!("{STATE_PREFIX}{ticket}")))
}

/// A retried call: the ticket of its round and the person's answer (`None`: the form was
/// cancelled or the answer is unusable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retry {
    /// `None` when `requestState` names an approval round but not in a ticket's form.
    pub ticket: Option<String>,
    pub answer: Option<ApprovalAnswer>,
}

/// The retry a call carries, if its `requestState` names an approval round.
pub(crate) fn retry_of(request: &CallToolRequestParams) -> Option<Retry> {
    let state = request
        .request_state
        .as_deref()?
        .strip_prefix(STATE_PREFIX)?;
    let well_formed = state.len() == TICKET_LEN && state.bytes().all(|b| b.is_ascii_hexdigit());
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(INPUT_KEY))
        .and_then(|value| serde_json::from_value::<ElicitResult>(value.clone()).ok())
        .and_then(|result| answer_of(&result));
    Some(Retry {
        ticket: well_formed.then(|| state.to_ascii_lowercase()),
        answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(tool: &str) -> Round {
        Round {
            approval_id: "apr_1".to_owned(),
            user: "alice".to_owned(),
            agent: None,
            tool: tool.to_owned(),
            args_hash: "h".to_owned(),
        }
    }

    #[test]
    fn tickets_are_random_single_use_and_expire() {
        let tickets = ApprovalTickets::default();
        let a = tickets.issue(round("a"), Duration::from_secs(60));
        let b = tickets.issue(round("a"), Duration::from_secs(60));
        assert_ne!(a, b);
        assert!(a.len() == TICKET_LEN && a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(tickets.take(&a), Some(round("a")));
        assert_eq!(tickets.take(&a), None, "used once");
        assert_eq!(tickets.take("apr_1"), None);
        let gone = tickets.issue(round("c"), Duration::ZERO);
        assert_eq!(tickets.take(&gone), None, "expired");
        assert_eq!(tickets.take(&b), Some(round("a")));
    }

    #[test]
    fn the_form_is_a_valid_elicitation_schema() {
        let ElicitRequestParams::FormElicitationParams {
            requested_schema,
            message,
            ..
        } = form("send_mail", "{\"to\":\"bob\"}", "apr_1")
        else {
            panic!("a form")
        };
        assert!(requested_schema.properties.contains_key("decision"));
        assert!(message.contains("send_mail") && message.contains("apr_1"));
    }

    #[test]
    fn answers_are_read_from_elicit_results_and_retries() {
        let accept = |decision: &str| {
            serde_json::from_value::<ElicitResult>(
                json!({"action": "accept", "content": {"decision": decision}}),
            )
            .unwrap()
        };
        assert_eq!(
            answer_of(&accept("allow_once")),
            Some(ApprovalAnswer::AllowOnce)
        );
        assert_eq!(
            answer_of(&accept("allow_always")),
            Some(ApprovalAnswer::AllowAlways)
        );
        assert_eq!(answer_of(&accept("deny")), Some(ApprovalAnswer::Deny));
        assert_eq!(answer_of(&accept("sure")), None);
        let decline: ElicitResult = serde_json::from_value(json!({"action": "decline"})).unwrap();
        assert_eq!(answer_of(&decline), Some(ApprovalAnswer::Deny));
        let cancel: ElicitResult = serde_json::from_value(json!({"action": "cancel"})).unwrap();
        assert_eq!(answer_of(&cancel), None);

        let ticket = "0123456789abcdef".repeat(4);
        let mut retry =
            CallToolRequestParams::new("t").with_request_state(format!("approval:{ticket}"));
        assert_eq!(
            retry_of(&retry),
            Some(Retry {
                ticket: Some(ticket.clone()),
                answer: None
            })
        );
        let mut responses = BTreeMap::new();
        responses.insert(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"decision": "allow_once"}}),
        );
        retry = retry.with_input_responses(responses);
        assert_eq!(
            retry_of(&retry),
            Some(Retry {
                ticket: Some(ticket),
                answer: Some(ApprovalAnswer::AllowOnce)
            })
        );
        // An approval id is not a ticket; neither is anything else.
        for state in [
            "approval:apr_0123456789abcdef",
            "approval:../../x",
            "approval:a b",
        ] {
            let hostile = CallToolRequestParams::new("t").with_request_state(state);
            assert_eq!(retry_of(&hostile).unwrap().ticket, None, "{state}");
        }
        let unrelated = CallToolRequestParams::new("t").with_request_state("other");
        assert_eq!(retry_of(&unrelated), None);
    }
}
