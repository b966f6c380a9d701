//! One kept-alive HTTP/1.1 connection (hyper's connection API, no pool): each load client owns
//! one and sends its requests on it one after the other, like a real MCP client does.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, combinators::BoxBody};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request, StatusCode};
use hyper_util::rt::TokioIo;

use crate::error::LoadError;
use crate::target::Target;

type Body = BoxBody<Bytes, std::convert::Infallible>;

/// A response, read whole.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// One connection to the target.
pub struct Conn {
    target: Target,
    token: Option<String>,
    sender: SendRequest<Body>,
}

impl Conn {
    /// Connects (with `TCP_NODELAY`, as every latency-bound client should).
    pub async fn open(target: &Target, token: Option<&str>) -> Result<Conn, LoadError> {
        let connect = |source| LoadError::Connect {
            addr: target.addr.to_string(),
            source,
        };
        let stream = tokio::net::TcpStream::connect(target.addr)
            .await
            .map_err(connect)?;
        stream.set_nodelay(true).map_err(connect)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| LoadError::Http(e.to_string()))?;
        tokio::spawn(async move {
            // Ends when the connection closes; the next request on it reports the error.
            let _ = connection.await;
        });
        Ok(Conn {
            target: target.clone(),
            token: token.map(str::to_owned),
            sender,
        })
    }

    /// `POST path` with a JSON body and `extra` headers.
    pub async fn post_json(
        &mut self,
        path: &str,
        body: String,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<Response, LoadError> {
        let body = Full::new(Bytes::from(body)).boxed();
        let mut headers = vec![
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            ),
        ];
        headers.extend_from_slice(extra);
        self.send(Method::POST, path, body, &headers).await
    }

    /// `GET path`.
    pub async fn get(&mut self, path: &str) -> Result<Response, LoadError> {
        self.send(Method::GET, path, Empty::new().boxed(), &[])
            .await
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Body,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<Response, LoadError> {
        let http = |e: &dyn std::fmt::Display| LoadError::Http(e.to_string());
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.target.host.as_str());
        if let Some(token) = &self.token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request.body(body).map_err(|e| http(&e))?;
        self.sender.ready().await.map_err(|e| http(&e))?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|e| http(&e))?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map_err(|e| http(&e))?.to_bytes();
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
}
