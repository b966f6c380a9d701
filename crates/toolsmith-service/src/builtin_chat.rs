//! The built-ins' chat model (`toolsmith_builtins::chat::ChatModel`: translation's fallback,
//! the data extraction tools): the caller's Config Center service `chat_model`, read as an
//! agent's provider is ([`ProviderConfig::from_service`]) plus its `model`, and asked through
//! the agents' [`Provider`] — the egress guard for that origin, narrowed to the caller's
//! allowed domains when the operator set some (`owner_allowed_domains`), as the caller's web
//! tools are; the providers' timeout and retries, both wire protocols.
//!
//! A caller with no `chat_model` service is answered by their MCP client's own model when the
//! client declared `sampling`: one `sampling/createMessage` (the system prompt, the text as
//! the user's message, `maxTokens`; no model hint, the client chooses), sent with the agents'
//! one-shot code ([`sampling::sample`]) under the rule every request to a client obeys
//! ([`ClientRequestGate::may_ask`]: the policy's `mcp:sampling` deny entries, the per-user
//! limit; the built-in's own request stands for the declared permission, except in a call
//! nested in a tool, which must hold `sampling` itself) and audited as `client.sample` on the
//! built-in (the outcome, never the prompt or the answer). A configured `chat_model` is always
//! asked first: the client is never asked then. A call whose client cannot be asked (REST,
//! the CLI, a scheduled run, protocol 2026-07-28, a client without `sampling`) is refused
//! naming both ways.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_builtins::chat::{
    ChatAnswer, ChatError, ChatModel, ChatRequest, SERVICE, Via, how_to_configure,
};
use toolsmith_core::{Client, ClientError, Permission, ToolContext};

use crate::agents::providers::sampling::{self, SampleError};
use crate::agents::providers::{Message, ModelRequest, Provider, ProviderConfig};
use crate::bridge::relay::Asks;
use crate::config_center::{ConfigCache, PlainService};
use crate::governance::audit::AuditTarget;
use crate::governance::client_requests::{ClientRequest, ClientRequestBudget};
use crate::input::Actor;

/// The chat model of each caller, from their Config Center, or their client's.
pub(crate) struct BuiltinChat {
    pub(crate) config: Arc<ConfigCache>,
    pub(crate) egress: toolsmith_egress::EgressGuard,
    /// The operator's per-owner allowlists (`owner_allowed_domains`).
    pub(crate) owner_domains: HashMap<String, Vec<toolsmith_egress::DomainPattern>>,
    /// The rule for requests to a caller's client, set once the service has its policy and
    /// audit log (they are made after the built-ins); unset, the client is never asked.
    pub(crate) asks: Arc<OnceLock<Asks>>,
}

impl std::fmt::Debug for BuiltinChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuiltinChat")
    }
}

#[async_trait]
impl ChatModel for BuiltinChat {
    async fn complete(
        &self,
        ctx: &ToolContext,
        request: ChatRequest,
    ) -> Result<ChatAnswer, ChatError> {
        let config =
            self.config.owner(&ctx.user_id).await.map_err(|e| {
                ChatError::Failed(format!("the Config Center could not be read: {e}"))
            })?;
        match config.services.get(SERVICE) {
            Some(service) => self.configured(&ctx.user_id, service, request).await,
            None => self.client_model(ctx, request).await,
        }
    }
}

impl BuiltinChat {
    /// Asks the owner's `chat_model` service.
    async fn configured(
        &self,
        owner: &str,
        service: &PlainService,
        request: ChatRequest,
    ) -> Result<ChatAnswer, ChatError> {
        let not_configured =
            |why: &str| ChatError::NotConfigured(format!("{why}: {}", how_to_configure()));
        let model = service
            .default_entry()
            .and_then(|entry| entry.values.get("model"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                not_configured(&format!(
                    "the Config Center service '{SERVICE}' names no model (a text field 'model')"
                ))
            })?
            .to_owned();
        let provider_config =
            ProviderConfig::from_service(SERVICE, service).map_err(|e| not_configured(&e))?;
        let egress = match self.owner_domains.get(owner) {
            Some(domains) => self.egress.for_owner(domains.clone()),
            None => self.egress.clone(),
        };
        let provider = Provider::new(provider_config, &egress).map_err(ChatError::Failed)?;
        let asked = one_question(model.clone(), request);
        let reply = provider.complete(&asked, |_, _| {}).await.map_err(|e| {
            ChatError::Failed(format!(
                "{}: check the Config Center service '{SERVICE}' (base_url, api_key, model)",
                e.message
            ))
        })?;
        Ok(ChatAnswer {
            text: reply.text,
            model,
            via: Via::ChatModel,
        })
    }

    /// Asks the call's MCP client's own model, if it can be and the rule allows; audited.
    async fn client_model(
        &self,
        ctx: &ToolContext,
        request: ChatRequest,
    ) -> Result<ChatAnswer, ChatError> {
        let client = Client::of(ctx);
        let Some(asks) = self.asks.get().filter(|_| client.capabilities().sampling) else {
            // A client that cannot be asked refuses before sending anything; its refusal says
            // why (the door, or the capability not declared).
            let why = match client.sample(Value::Null).await {
                Err(e) => e.to_string(),
                Ok(_) => "this server does not ask clients' models for the built-ins".to_owned(),
            };
            return Err(neither(&why));
        };
        let tool = request.tool.clone();
        let allowed = if ctx
            .granted_permissions
            .as_ref()
            .is_some_and(|granted| !granted.contains(&Permission::Sampling))
        {
            Err(format!(
                "asking the client's model (sampling) for '{tool}' from inside another tool needs \
                 that tool to declare permissions: [\"sampling\"] (set it with create_tool or \
                 update_custom_tool), or configure the Config Center service '{SERVICE}'"
            ))
        } else {
            asks.gate.may_ask(
                &asks.policy,
                ctx,
                &tool,
                ClientRequest::Sampling,
                // The built-in's own request: Toolsmith's code, not the caller's.
                true,
                &ClientRequestBudget::default(),
            )
        };
        let outcome = match &allowed {
            Err(reason) => Err(ChatError::Refused(format!(
                "no chat model is configured (the Config Center service '{SERVICE}') and {reason}"
            ))),
            Ok(()) => sampling::sample(&client, &one_question(String::new(), request))
                .await
                .map_err(client_failure),
        };
        let details = match &outcome {
            Ok(_) => json!({"callId": ctx.call_id, "outcome": "answered"}),
            Err(e) => json!({
                "callId": ctx.call_id,
                "outcome": if allowed.is_err() { "refused" } else { "failed" },
                "reason": e.to_string(),
            }),
        };
        asks.audit
            .record(
                &Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
                    .with_member(ctx.member.clone()),
                ClientRequest::Sampling.audit_action(),
                AuditTarget::new("tool", tool.clone(), Some(tool)),
                (None, None),
                details,
            )
            .await;
        let sampled = outcome?;
        Ok(ChatAnswer {
            text: sampled.reply.text,
            model: sampled
                .model
                .unwrap_or_else(|| "the client's model".to_owned()),
            via: Via::Sampling,
        })
    }
}

/// The request of one question: the system prompt and the text as the user's one message.
fn one_question(model: String, request: ChatRequest) -> ModelRequest {
    ModelRequest {
        model,
        system: request.system,
        messages: vec![Message::User(request.user)],
        tools: Vec::new(),
        max_tokens: request.max_tokens,
    }
}

/// The refusal when neither a chat model nor the client's model can answer: both ways.
fn neither(why_not_the_client: &str) -> ChatError {
    ChatError::NotConfigured(format!(
        "no chat model is configured, and the client's model cannot be asked instead \
         ({why_not_the_client}). Either {}; or call the tool over MCP from a client that \
         declares the sampling capability, whose own model then answers",
        how_to_configure()
    ))
}

/// Why the client's model gave no answer, as the tool says it.
fn client_failure(error: SampleError) -> ChatError {
    match error {
        SampleError::Client(ClientError::Declined(reason)) => ChatError::Declined(format!(
            "the person declined the request to their MCP client's model (sampling): {reason}"
        )),
        SampleError::Client(
            e @ (ClientError::NoClient { .. } | ClientError::Unsupported { .. }),
        ) => neither(&e.to_string()),
        SampleError::Client(e) => {
            ChatError::Failed(format!("the MCP client's model gave no answer: {e}"))
        }
        SampleError::Unusable(e) => ChatError::Failed(e.message),
    }
}
