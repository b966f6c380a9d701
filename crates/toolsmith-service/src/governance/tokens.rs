//! API tokens as the faces reach them: the server's authentication reads them, the CLI's
//! `toolsmith token` creates, lists and revokes them. Creating and revoking are audited here,
//! so every door that changes a token leaves the same record.
//!
//! Only a token's SHA-256 is ever stored; minting the secret and hashing it is the server's
//! `auth` module's job.

use chrono::{DateTime, Utc};
use serde_json::json;
use toolsmith_core::ApiTokenRecord;

use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::service::ToolService;

impl ToolService {
    /// Every API token (never a secret: only hashes are stored).
    pub async fn list_tokens(&self) -> Result<Vec<ApiTokenRecord>, ServiceError> {
        Ok(self.store.list_tokens().await?)
    }

    /// The token whose SHA-256 is `token_hash`, if any.
    pub async fn find_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<ApiTokenRecord>, ServiceError> {
        Ok(self.store.find_token(token_hash).await?)
    }

    /// Records that the token `id` was used at `at` (for `token list`).
    pub async fn touch_token(&self, id: &str, at: DateTime<Utc>) -> Result<(), ServiceError> {
        Ok(self.store.touch_token(id, at).await?)
    }

    /// Stores a new token and audits it (`token.create`).
    pub async fn create_token(
        &self,
        actor: &Actor,
        record: &ApiTokenRecord,
    ) -> Result<(), ServiceError> {
        self.store.insert_token(record).await?;
        self.audit
            .record(
                actor,
                "token.create",
                AuditTarget::new("token", record.id.clone(), Some(record.name.clone())),
                (None, None),
                json!({"user": record.user_id, "scopes": record.scopes, "agent": record.agent_id}),
            )
            .await;
        Ok(())
    }

    /// Revokes the token `id` and audits it (`token.revoke`); false when there is no such token.
    pub async fn revoke_token(&self, actor: &Actor, id: &str) -> Result<bool, ServiceError> {
        if !self.store.delete_token(id).await? {
            return Ok(false);
        }
        self.audit
            .record(
                actor,
                "token.revoke",
                AuditTarget::new("token", id.to_owned(), None),
                (None, None),
                json!({}),
            )
            .await;
        Ok(true)
    }
}
