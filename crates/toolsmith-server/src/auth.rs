//! Who is calling, and what they may do.
//!
//! Without auth configured (loopback only), every request acts as user `default` with every
//! scope. Tokens (`Authorization: Bearer …`, hashed in the store) come with the access-control
//! part of the interfaces issue; handlers already take an [`Identity`] and check scopes, so
//! that part changes only this module.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// A permission a token can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    ToolsRead,
    ToolsWrite,
    ToolsExecute,
    Admin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ToolsRead => "tools:read",
            Scope::ToolsWrite => "tools:write",
            Scope::ToolsExecute => "tools:execute",
            Scope::Admin => "admin",
        }
    }
}

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub user_id: String,
    pub agent_id: Option<String>,
    pub scopes: Vec<Scope>,
}

impl Identity {
    /// The caller when no auth is configured: user `default`, every scope.
    pub fn local_default() -> Identity {
        Identity {
            user_id: "default".to_owned(),
            agent_id: None,
            scopes: vec![
                Scope::ToolsRead,
                Scope::ToolsWrite,
                Scope::ToolsExecute,
                Scope::Admin,
            ],
        }
    }

    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope) || self.scopes.contains(&Scope::Admin)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Identity {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let mut identity = Identity::local_default();
        identity.agent_id = parts
            .headers
            .get("x-toolsmith-agent")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok(identity)
    }
}

/// Whether callers must authenticate: true once API tokens exist or an admin token is set.
/// `toolsmith serve` refuses to bind a non-loopback address while this is false.
pub async fn auth_configured(_state: &crate::AppState) -> bool {
    false
}
