//! A scripted person behind an MCP client (issue 34's tests): rmcp's client on 2025-11-25 that
//! declares sampling and elicitation (or neither), answers them itself, and records what its
//! model and its person were asked and the log and progress notifications it got.

#![allow(
    deprecated,
    reason = "logging and sampling are MCP 2025-11-25's; rmcp marks them for SEP-2577"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion, SamplingMessage,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

/// A log message as the client saw it: level, logger, data.
pub type LogSeen = (String, Option<String>, Value);
/// A progress notification as the client saw it: progress, total, message.
pub type ProgressSeen = (f64, Option<f64>, Option<String>);

/// What the model and the person behind the test client saw.
#[derive(Clone, Default)]
pub struct Seen {
    pub sampled: Arc<Mutex<Vec<Value>>>,
    pub elicited: Arc<Mutex<Vec<Value>>>,
    pub logs: Arc<Mutex<Vec<LogSeen>>>,
    pub progress: Arc<Mutex<Vec<ProgressSeen>>>,
}

impl Seen {
    /// Waits until `logs` log and `progress` progress messages have reached the client's
    /// handlers (rmcp's client runs each notification handler on a task of its own, so they may
    /// finish after the result and in any order), then gives them sorted.
    pub async fn settled(&self, logs: usize, progress: usize) -> (Vec<LogSeen>, Vec<ProgressSeen>) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let (mut l, mut p) = (
                self.logs.lock().unwrap().clone(),
                self.progress.lock().unwrap().clone(),
            );
            if (l.len() >= logs && p.len() >= progress) || tokio::time::Instant::now() > deadline {
                l.sort_by(|a, b| a.0.cmp(&b.0));
                p.sort_by(|a, b| a.0.total_cmp(&b.0));
                return (l, p);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// An MCP client that can sample and elicit (or, with `able: false`, neither). Its model
/// answers `answer`; its person accepts with name Ada, `check: true` and an email.
#[derive(Clone)]
pub struct Person {
    pub able: bool,
    pub answer: &'static str,
    pub seen: Seen,
}

impl Person {
    /// A person whose client can (`able`) or cannot sample and elicit, recording into `seen`.
    pub fn new(able: bool, answer: &'static str, seen: &Seen) -> Person {
        Person {
            able,
            answer,
            seen: seen.clone(),
        }
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.able {
            ClientCapabilities::builder()
                .enable_sampling()
                .enable_elicitation()
                .build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("person-test-client", "1.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.seen
            .sampled
            .lock()
            .unwrap()
            .push(serde_json::to_value(&params).unwrap());
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(self.answer),
            "test-model".to_owned(),
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.seen
            .elicited
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap());
        Ok(serde_json::from_value(json!({
            "action": "accept",
            "content": {"name": "Ada", "check": true, "email": "ada@example.com"}
        }))
        .unwrap())
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        self.seen.logs.lock().unwrap().push((
            level.as_str().unwrap_or_default().to_owned(),
            params.logger,
            params.data,
        ));
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen
            .progress
            .lock()
            .unwrap()
            .push((params.progress, params.total, params.message));
    }
}
