//! What the image and audio families share: the caller's Config Center service of an
//! OpenAI-compatible API (`base_url`, `api_key`, model fields), requests to it through the web
//! tools' client (the egress guard) — JSON or `multipart/form-data` — the caller's workspace
//! files they read and write, and results that carry the picture or the sound as MCP content
//! blocks beside the JSON.
//!
//! A tool's work is either a network call ([`network_tool`], `network` and `filesystem`
//! permissions, an async [`MediaFn`]) or a local one on workspace files ([`local_tool`],
//! `filesystem` only, a blocking [`LocalFn`] run off the runtime, at most [`MAX_LOCAL`] at
//! once so that decoding large files cannot take every worker).

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;
use toolsmith_core::{
    Permission, PermissionSet, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor,
    ToolResult,
};

use crate::BuiltinEnv;
use crate::outside::{self, Answer};
use crate::web::{Call, MAX_TIMEOUT, ToolError, WebRequest, WebResponse};
use crate::workspace::{Workspace, WorkspaceError, WriteOptions};

/// Most local media jobs (decoding, resizing, splitting) running at once in the process.
pub const MAX_LOCAL: usize = 2;
/// The most media bytes (before base64) one result carries as content blocks; past it the
/// file is only named (the pipeline caps a result at 1 MiB).
pub const MAX_INLINE_BYTES: usize = 512 * 1024;

static LOCAL_SLOTS: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(MAX_LOCAL));

/// A tool's answer: its JSON, and the media to show beside it (`(block type, MIME type,
/// bytes)`: `image` or `audio`), shown while they fit [`MAX_INLINE_BYTES`].
#[derive(Debug, Default)]
pub struct Reply {
    pub value: Value,
    pub media: Vec<(&'static str, String, Vec<u8>)>,
}

impl Reply {
    /// A reply of JSON only.
    pub fn json(value: Value) -> Reply {
        Reply {
            value,
            media: Vec::new(),
        }
    }

    /// The tool result: plain JSON without media; otherwise MCP content blocks — the JSON as
    /// text and as structured content, then each medium that fits (`inline` in the JSON says
    /// how many did).
    fn into_result(self) -> ToolResult {
        if self.media.is_empty() {
            return ToolResult::ok(self.value);
        }
        let mut value = self.value;
        let mut blocks = Vec::new();
        let mut budget = MAX_INLINE_BYTES;
        for (kind, mime, bytes) in &self.media {
            if bytes.len() > budget {
                break;
            }
            budget -= bytes.len();
            blocks.push(json!({"type": kind, "data": STANDARD.encode(bytes), "mimeType": mime}));
        }
        toolsmith_core::object::set(&mut value, "inline", json!(blocks.len()));
        let mut all = vec![json!({"type": "text", "text": value.to_string()})];
        all.extend(blocks);
        ToolResult::blocks(all, Some(value.clone()), None, false)
            .unwrap_or_else(|_| ToolResult::ok(value))
    }
}

/// The work of a tool that calls the provider.
pub type MediaFn = for<'a> fn(
    Call<'a>,
) -> std::pin::Pin<
    Box<dyn Future<Output = Result<Reply, ToolError>> + Send + 'a>,
>;

/// The work of a local tool: the caller's workspace and the arguments.
pub type LocalFn = fn(&Workspace, &Value) -> Result<Reply, ToolError>;

struct NetworkExecutor {
    env: BuiltinEnv,
    run: MediaFn,
}

#[async_trait]
impl ToolExecutor for NetworkExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let client = match crate::web::client_of(&self.env) {
            Ok(client) => client,
            Err(missing) => return missing,
        };
        let call = Call {
            client: client.as_ref(),
            env: &self.env,
            ctx,
            args,
        };
        match (self.run)(call).await {
            Ok(reply) => reply.into_result(),
            Err(e) => ToolResult::error(e.kind(), e.to_string()),
        }
    }
}

struct LocalExecutor {
    env: BuiltinEnv,
    run: LocalFn,
}

#[async_trait]
impl ToolExecutor for LocalExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let outcome = async {
            let workspace = workspace(&self.env, ctx)?;
            let _slot = LOCAL_SLOTS.acquire().await.map_err(|_| {
                ToolError::Provider("the server is shutting down: try again".to_owned())
            })?;
            let run = self.run;
            tokio::task::spawn_blocking(move || run(&workspace, &args))
                .await
                .map_err(|e| ToolError::Provider(format!("the work stopped: {e}")))?
        }
        .await;
        match outcome {
            Ok(reply) => reply.into_result(),
            Err(e) => ToolResult::error(e.kind(), e.to_string()),
        }
    }
}

/// A tool that calls the provider: `network` (for the request) and `filesystem` (for the
/// files it reads and saves).
pub fn network_tool(
    env: &BuiltinEnv,
    category: &str,
    definition: ToolDefinition,
    run: MediaFn,
) -> RegisteredTool {
    crate::builtin_tool(
        definition,
        category,
        PermissionSet::from([Permission::Network, Permission::Filesystem]),
        Arc::new(NetworkExecutor {
            env: env.clone(),
            run,
        }),
    )
}

/// A tool that works on workspace files alone: `filesystem`.
pub fn local_tool(
    env: &BuiltinEnv,
    category: &str,
    definition: ToolDefinition,
    run: LocalFn,
) -> RegisteredTool {
    crate::builtin_tool(
        definition,
        category,
        PermissionSet::from([Permission::Filesystem]),
        Arc::new(LocalExecutor {
            env: env.clone(),
            run,
        }),
    )
}

/// The caller's workspace.
pub fn workspace(env: &BuiltinEnv, ctx: &ToolContext) -> Result<Workspace, ToolError> {
    let workspaces = env
        .workspaces
        .clone()
        .ok_or(WorkspaceError::NotConfigured)?;
    Ok(workspaces.for_call(ctx)?)
}

/// The file `raw` of `workspace`, at most `max` bytes: its shown path and its bytes.
pub fn read(workspace: &Workspace, raw: &str, max: u64) -> Result<(String, Vec<u8>), ToolError> {
    let path = workspace.path(raw)?;
    let bytes = workspace.read(&path, max)?;
    Ok((path.to_string(), bytes))
}

/// Writes `bytes` as `raw` in `workspace` (folders made as needed): `{path, bytes, created}`.
pub fn write(
    workspace: &Workspace,
    raw: &str,
    bytes: &[u8],
    overwrite: bool,
) -> Result<Value, ToolError> {
    let path = workspace.path(raw)?;
    let written = workspace.write(
        &path,
        bytes,
        WriteOptions {
            overwrite,
            create_parents: true,
        },
    )?;
    Ok(json!({"path": path.to_string(), "bytes": written.bytes, "created": written.created}))
}

/// [`read`] for a network tool: off the runtime.
pub async fn read_for(
    call: &Call<'_>,
    raw: &str,
    max: u64,
) -> Result<(String, Vec<u8>), ToolError> {
    let workspace = workspace(call.env, call.ctx)?;
    let raw = raw.to_owned();
    tokio::task::spawn_blocking(move || read(&workspace, &raw, max))
        .await
        .map_err(|e| ToolError::Provider(format!("the file could not be read: {e}")))?
}

/// [`write`] for a network tool: off the runtime.
pub async fn write_for(
    call: &Call<'_>,
    raw: &str,
    bytes: Vec<u8>,
    overwrite: bool,
) -> Result<Value, ToolError> {
    let workspace = workspace(call.env, call.ctx)?;
    let raw = raw.to_owned();
    tokio::task::spawn_blocking(move || write(&workspace, &raw, &bytes, overwrite))
        .await
        .map_err(|e| ToolError::Provider(format!("the file could not be saved: {e}")))?
}

/// The `overwrite` argument (default false).
pub fn overwrite(args: &Value) -> bool {
    args.get("overwrite")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The caller's OpenAI-compatible service: where it is, its key and its other fields.
pub struct Provider {
    /// The Config Center service read.
    pub service: &'static str,
    base: String,
    key: Option<String>,
    values: BTreeMap<String, Value>,
}

/// How to configure `service` (its fields listed in `fields`), for the errors that name it.
pub fn configure_hint(service: &str, fields: &str) -> String {
    format!(
        "set the Config Center service '{service}' with base_url (an OpenAI-compatible API such \
         as https://api.openai.com/v1, or a self-hosted one) and api_key (a secret field; \
         empty for a server that needs none), e.g. `toolsmith config set {service} \
         base_url=https://api.openai.com/v1` and `printf %s \"$KEY\" | toolsmith config set \
         {service} api_key=@-` (or POST /api/v1/config/services/{service}/entries); {fields}"
    )
}

impl Provider {
    /// The caller's service `service` (else `fallback`, when given), or an error naming
    /// `service` and its `fields` (`why`: what cannot be done without it).
    pub async fn of(
        call: &Call<'_>,
        service: &'static str,
        fallback: Option<&'static str>,
        why: &str,
        fields: &str,
    ) -> Result<Provider, ToolError> {
        for name in std::iter::once(service).chain(fallback) {
            let Some(values) = outside::values(call, name).await else {
                continue;
            };
            let Some(base) = outside::field(Some(&values), &["base_url", "baseUrl"]) else {
                continue;
            };
            return Ok(Provider {
                service: name,
                base: base.to_owned(),
                key: outside::field(Some(&values), &["api_key", "apiKey"]).map(str::to_owned),
                values,
            });
        }
        Err(ToolError::NotConfigured(format!(
            "no {service} service is configured, so {why}: {}",
            configure_hint(service, fields)
        )))
    }

    /// The non-empty text field `name` of the service.
    pub fn field(&self, name: &str) -> Option<&str> {
        outside::field(Some(&self.values), &[name])
    }

    fn url(&self, path: &str) -> Result<url::Url, ToolError> {
        outside::endpoint(self.service, "base_url", &self.base, path)
    }

    fn auth(&self) -> Vec<(String, String)> {
        self.key
            .iter()
            .map(|key| ("Authorization".to_owned(), format!("Bearer {key}")))
            .collect()
    }

    /// `POST {base_url}/{path}` with a JSON body; the answer as JSON, a failure naming the
    /// service (`what`: the provider's job, for the message).
    pub async fn post_json(
        &self,
        call: &Call<'_>,
        path: &str,
        body: &Value,
        max: usize,
        what: &str,
    ) -> Result<Value, ToolError> {
        let answer =
            outside::send(call, "POST", self.url(path)?, self.auth(), Some(body), max).await?;
        self.check(&answer, what)?;
        Ok(answer.body)
    }

    /// `POST {base_url}/{path}` with a JSON body, the answer's bytes as they are (audio).
    pub async fn post_for_bytes(
        &self,
        call: &Call<'_>,
        path: &str,
        body: &Value,
        max: usize,
        what: &str,
    ) -> Result<WebResponse, ToolError> {
        let mut headers = self.auth();
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
        let response = self
            .raw(call, path, headers, body.to_string().into_bytes(), max)
            .await?;
        self.check_raw(&response, what)?;
        Ok(response)
    }

    /// `POST {base_url}/{path}` with `form` as `multipart/form-data`; the answer as JSON.
    pub async fn post_form(
        &self,
        call: &Call<'_>,
        path: &str,
        form: Form,
        max: usize,
        what: &str,
    ) -> Result<Value, ToolError> {
        let (content_type, body) = form.finish();
        let mut headers = self.auth();
        headers.push(("Content-Type".to_owned(), content_type));
        headers.push(("Accept".to_owned(), "application/json".to_owned()));
        let response = self.raw(call, path, headers, body, max).await?;
        self.check_raw(&response, what)?;
        serde_json::from_slice(&response.body).map_err(|_| {
            ToolError::Provider(format!(
                "the {what} service's answer is not JSON: the Config Center service '{}' must \
                 point at an OpenAI-compatible API (base_url)",
                self.service
            ))
        })
    }

    async fn raw(
        &self,
        call: &Call<'_>,
        path: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        max: usize,
    ) -> Result<WebResponse, ToolError> {
        let request = WebRequest {
            method: "POST".to_owned(),
            url: self.url(path)?.into(),
            headers,
            body: Some(body),
            timeout: MAX_TIMEOUT * 4,
            max_response_bytes: max,
        };
        Ok(call.client.send(&call.ctx.user_id, request).await?)
    }

    fn check(&self, answer: &Answer, what: &str) -> Result<(), ToolError> {
        if (200..300).contains(&answer.status) {
            return Ok(());
        }
        Err(ToolError::Provider(format!(
            "the {what} service answered HTTP {}{}: check the Config Center service '{}' \
             (base_url, api_key, the model fields)",
            answer.status,
            answer.reason(),
            self.service
        )))
    }

    fn check_raw(&self, response: &WebResponse, what: &str) -> Result<(), ToolError> {
        self.check(
            &Answer {
                status: response.status,
                body: serde_json::from_slice(&response.body).unwrap_or(Value::Null),
            },
            what,
        )
    }
}

/// A `multipart/form-data` body (RFC 7578), as OpenAI's file endpoints take them.
pub struct Form {
    boundary: String,
    body: Vec<u8>,
}

impl Default for Form {
    fn default() -> Self {
        Form {
            boundary: format!("toolsmith-{}", uuid::Uuid::new_v4().simple()),
            body: Vec::new(),
        }
    }
}

impl Form {
    /// A text field.
    pub fn text(mut self, name: &str, value: &str) -> Form {
        self.head(name, None);
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
        self
    }

    /// A file field: `filename` (ours, never the caller's words) and its MIME type.
    pub fn file(mut self, name: &str, filename: &str, mime: &str, bytes: &[u8]) -> Form {
        self.head(name, Some((filename, mime)));
        self.body.extend_from_slice(bytes);
        self.body.extend_from_slice(b"\r\n");
        self
    }

    fn head(&mut self, name: &str, file: Option<(&str, &str)>) {
        let mut head = format!(
            "--{}\r\nContent-Disposition: form-data; name=\"{name}\"",
            self.boundary
        );
        if let Some((filename, mime)) = file {
            head.push_str(&format!(
                "; filename=\"{filename}\"\r\nContent-Type: {mime}"
            ));
        }
        head.push_str("\r\n\r\n");
        self.body.extend_from_slice(head.as_bytes());
    }

    /// The `Content-Type` header and the body.
    pub fn finish(mut self) -> (String, Vec<u8>) {
        self.body
            .extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        (
            format!("multipart/form-data; boundary={}", self.boundary),
            self.body,
        )
    }
}

/// The `n` argument: how many results (1 to `max`, default 1).
pub fn count(args: &Value, max: u64) -> u64 {
    args.get("n")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .clamp(1, max)
}

/// `object` with the `(key, value)` pairs whose value is not null.
pub fn present(pairs: &[(&str, Value)]) -> Value {
    let mut object = Map::new();
    for (key, value) in pairs {
        if !value.is_null() {
            object.insert((*key).to_owned(), value.clone());
        }
    }
    Value::Object(object)
}
