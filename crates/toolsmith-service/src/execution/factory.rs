//! The executor factory's ways out: the JS executors of stored and ephemeral code, and the
//! HTTP sender and egress guard of one owner (the process-wide ones narrowed to the owner's
//! allowlist).

use std::sync::Arc;

use toolsmith_core::PermissionSet;

use crate::execution::egress::EgressSender;
use crate::execution::js_tool::JsToolExecutor;
use crate::service::ToolService;

impl ToolService {
    /// The sender of `owner`'s HTTP tools: the default one, narrowed to the owner's allowlist.
    pub(crate) fn http_sender_for(&self, owner: &str) -> Arc<dyn toolsmith_httptool::HttpSender> {
        match (
            &self.http_guard,
            self.config.owner_allowed_domains.get(owner),
        ) {
            (Some(guard), Some(domains)) => {
                Arc::new(EgressSender::from_guard(guard.for_owner(domains.clone())))
            }
            _ => self.http_sender.clone(),
        }
    }

    /// The egress guard of `owner`'s JS tools, narrowed to the owner's allowlist.
    pub(crate) fn egress_for(&self, owner: &str) -> toolsmith_egress::EgressGuard {
        match self.config.owner_allowed_domains.get(owner) {
            Some(domains) => self.egress.for_owner(domains.clone()),
            None => self.egress.clone(),
        }
    }

    /// A JS executor whose runs get `owner`'s config of the `declared` services.
    pub(crate) fn js_executor_with_config(
        &self,
        name: &str,
        code: Arc<str>,
        permissions: PermissionSet,
        owner: String,
        declared: Vec<String>,
    ) -> JsToolExecutor {
        let egress = permissions
            .contains(&toolsmith_core::Permission::Network)
            .then(|| self.egress_for(&owner));
        JsToolExecutor {
            owner,
            declared_services: declared,
            config: self.config_cache.clone(),
            egress,
            sandbox: self.sandbox.clone(),
            pipeline: Arc::downgrade(&self.pipeline),
            policy: self.policy.clone(),
            tool_name: name.to_owned(),
            code,
            permissions,
            limits: self.config.js_limits,
            max_fs_operations: self.config.js_max_fs_operations,
            packages: None,
            installer: self.installer.clone(),
            process_env: self.process_env.clone(),
            client_requests: self.client_requests.clone(),
            audit: self.audit.clone(),
        }
    }
}
