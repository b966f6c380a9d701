//! The built-ins' chat model (`toolsmith_builtins::chat::ChatModel`: translation's fallback,
//! the data extraction tools): the caller's Config Center service `chat_model`, read as an
//! agent's provider is ([`ProviderConfig::from_service`]) plus its `model`, and asked through
//! the agents' [`Provider`] — the egress guard for that origin, narrowed to the caller's
//! allowed domains when the operator set some (`owner_allowed_domains`), as the caller's web
//! tools are; the providers' timeout and retries, both wire protocols.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_builtins::chat::{
    ChatAnswer, ChatError, ChatModel, ChatRequest, SERVICE, how_to_configure,
};

use crate::agents::providers::{Message, ModelRequest, Provider, ProviderConfig};
use crate::config_center::ConfigCache;

/// The chat model of each caller, from their Config Center.
pub(crate) struct BuiltinChat {
    pub(crate) config: Arc<ConfigCache>,
    pub(crate) egress: toolsmith_egress::EgressGuard,
    /// The operator's per-owner allowlists (`owner_allowed_domains`).
    pub(crate) owner_domains: HashMap<String, Vec<toolsmith_egress::DomainPattern>>,
}

impl std::fmt::Debug for BuiltinChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuiltinChat")
    }
}

#[async_trait]
impl ChatModel for BuiltinChat {
    async fn complete(&self, owner: &str, request: ChatRequest) -> Result<ChatAnswer, ChatError> {
        let not_configured =
            |why: &str| ChatError::NotConfigured(format!("{why}: {}", how_to_configure()));
        let config =
            self.config.owner(owner).await.map_err(|e| {
                ChatError::Failed(format!("the Config Center could not be read: {e}"))
            })?;
        let service = config
            .services
            .get(SERVICE)
            .ok_or_else(|| not_configured("no chat model is configured"))?;
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
        let asked = ModelRequest {
            model: model.clone(),
            system: request.system,
            messages: vec![Message::User(request.user)],
            tools: Vec::new(),
            max_tokens: request.max_tokens,
        };
        let reply = provider.complete(&asked, |_, _| {}).await.map_err(|e| {
            ChatError::Failed(format!(
                "{}: check the Config Center service '{SERVICE}' (base_url, api_key, model)",
                e.message
            ))
        })?;
        Ok(ChatAnswer {
            text: reply.text,
            model,
        })
    }
}
