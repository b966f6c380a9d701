//! Asking the person behind an MCP client to approve a call, with MCP elicitation.
//!
//! - Protocol 2025-11-25 (sessions): the server may send requests to the client, so a call
//!   that needs approval sends `elicitation/create` with a one-field form (`decision`:
//!   `allow_once`, `allow_always` or `deny`) and waits for the answer while the call is open
//!   ([`approver_for`] puts an [`ElicitingApprover`] on the call's context).
//! - Protocol 2026-07-28 (no server-to-client requests): the call answers an
//!   `InputRequiredResult` carrying the same form ([`input_required`]), with the approval id as
//!   `requestState`; the client asks the person and retries the call with the answer in
//!   `inputResponses`, which [`retry_answer`] reads before the call runs again.
//! - A client that declared no elicitation capability gets the engine's "awaiting approval"
//!   result, which names the approval for a person to decide elsewhere.
//!
//! Declining the form denies the call; cancelling (closing) it leaves the approval pending.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Value, json};
use toolsmith_core::{ApprovalAnswer, ApprovalPrompt, ApprovalQuestion, Approver};

/// The key of the approval form in `inputRequests` / `inputResponses`.
const INPUT_KEY: &str = "approval";
/// `requestState` of an approval round: this prefix and the approval id.
const STATE_PREFIX: &str = "approval:";

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

/// The approver of a call on a 2025-11-25 session whose client can show forms.
pub(crate) fn approver_for(context: &RequestContext<RoleServer>) -> Option<Approver> {
    (supports_forms(context) && !is_stateless_generation(context)).then(|| {
        Approver(Arc::new(ElicitingApprover {
            peer: context.peer.clone(),
        }))
    })
}

/// Whether an approval should come back as an `InputRequiredResult` (2026-07-28 clients that
/// can show forms).
pub(crate) fn wants_input_required(context: &RequestContext<RoleServer>) -> bool {
    supports_forms(context) && is_stateless_generation(context)
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
        match self
            .peer
            .create_elicitation_with_timeout(params, Some(question.expires_in))
            .await
        {
            Ok(result) => answer_of(&result),
            Err(e) => {
                tracing::debug!(approval = %question.approval_id, error = %e, "the client could not be asked");
                None
            }
        }
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

/// The `InputRequiredResult` asking for approval `approval_id` (2026-07-28).
pub(crate) fn input_required(
    tool: &str,
    args_preview: &str,
    approval_id: &str,
) -> InputRequiredResult {
    let mut requests = BTreeMap::new();
    requests.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form(tool, args_preview, approval_id))),
    );
    InputRequiredResult::new(Some(requests), Some(format!("{STATE_PREFIX}{approval_id}")))
}

/// The approval id and the person's answer carried by a retried call, if it is one.
/// `Some((id, None))` when the retry carries no usable answer (the form was cancelled).
pub(crate) fn retry_answer(
    request: &CallToolRequestParams,
) -> Option<(String, Option<ApprovalAnswer>)> {
    let id = request
        .request_state
        .as_deref()?
        .strip_prefix(STATE_PREFIX)?;
    let well_formed = id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !well_formed {
        return None;
    }
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(INPUT_KEY))
        .and_then(|value| serde_json::from_value::<ElicitResult>(value.clone()).ok())
        .and_then(|result| answer_of(&result));
    Some((id.to_owned(), answer))
}

#[cfg(test)]
mod tests {
    use super::*;

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

        let mut retry =
            CallToolRequestParams::new("t").with_request_state("approval:apr_0123456789abcdef");
        assert_eq!(
            retry_answer(&retry),
            Some(("apr_0123456789abcdef".to_owned(), None))
        );
        let mut responses = BTreeMap::new();
        responses.insert(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"decision": "allow_once"}}),
        );
        retry = retry.with_input_responses(responses);
        assert_eq!(
            retry_answer(&retry),
            Some((
                "apr_0123456789abcdef".to_owned(),
                Some(ApprovalAnswer::AllowOnce)
            ))
        );
        for state in ["other", "approval:../../x", "approval:a b"] {
            let hostile = CallToolRequestParams::new("t").with_request_state(state);
            assert_eq!(retry_answer(&hostile), None, "{state}");
        }
    }
}
