//! The client rmcp's streamable HTTP transport drives for a bridged upstream: the egress
//! guard's `reqwest::Client`, with one correction of how a lost session is recognised.
//!
//! An upstream that restarted has forgotten the session Toolsmith holds. The specification
//! says it answers `404`, which rmcp turns into `SessionExpired` (the connection ends, the
//! task reconnects and re-lists). Many servers — the TypeScript SDK's examples and the
//! reference `server-everything` among them — answer `400` with a JSON-RPC error whose `id` is
//! `null` (`Bad Request: No valid session ID provided`) instead. rmcp hands such an error on
//! as a message, which no request waits for, so every call then hung for its whole timeout and
//! the server showed `connected` until a health check failed. Here an error that answers a
//! request of an existing session but names no request is a lost session, as a `404` is; one
//! answering a request made without a session (the handshake) fails that request with the
//! upstream's message, so the attempt ends at once and the status says why.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// The egress guard's client, with lost sessions recognised as above.
#[derive(Clone)]
pub(crate) struct SessionAware(pub(crate) reqwest::Client);

type Result<T> = std::result::Result<T, StreamableHttpError<reqwest::Error>>;

impl SessionAware {
    /// `answer` to `message`, with an error for no request turned into the failure it stands
    /// for.
    fn correct(
        message_was_request: bool,
        session_was_attached: bool,
        answer: Result<StreamableHttpPostResponse>,
    ) -> Result<StreamableHttpPostResponse> {
        let Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _)) = &answer else {
            return answer;
        };
        if !message_was_request || error.id.is_some() {
            return answer;
        }
        if session_was_attached {
            tracing::info!(
                message = %error.error.message,
                "the MCP server answered for no request in its session: the session is lost"
            );
            return Err(StreamableHttpError::SessionExpired);
        }
        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!(
                "the server answered with an error for no request: {} (code {})",
                error.error.message, error.error.code.0
            ),
        )))
    }
}

impl StreamableHttpClient for SessionAware {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse> {
        let request = matches!(message, JsonRpcMessage::Request(_));
        let attached = session_id.is_some();
        let answer = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        Self::correct(request, attached, answer)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<()> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, std::result::Result<Sse, SseError>>> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, std::result::Result<Sse, SseError>>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
