//! `download_file` (003 §7): a URL fetched through the client and written into the caller's
//! workspace with the workspace's path rules and quota, at most 5 MB.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Call, MAX_RESPONSE_BYTES, ToolError, WebRequest, str_arg, timeout_arg, url_arg};
use crate::workspace::{WorkspaceError, WriteOptions};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "download_file",
        "Download a file from an http(s) URL into your workspace at 'path' (at most 5 MB). \
         Refuses to replace an existing file unless 'overwrite' is true.",
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "Absolute http(s) URL of the file."},
                "path": {"type": "string", "description": "Where to save it, relative to the workspace root."},
                "overwrite": {"type": "boolean", "default": false, "description": "Replace a file already at path (otherwise the download is refused)."},
                "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 30000, "description": "Stop after this many milliseconds (at most 30000)."}
            },
            "required": ["url", "path"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["download a file", "download", "save", "url", "fetch", "file", "workspace"])
}

pub async fn run(call: Call<'_>) -> Result<Value, ToolError> {
    let url = url_arg(&call.args)?;
    let raw_path = str_arg(&call.args, "path")?.to_owned();
    let overwrite = call
        .args
        .get("overwrite")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let workspaces = call
        .env
        .workspaces
        .clone()
        .ok_or(WorkspaceError::NotConfigured)?;
    // Check the path before spending a request on it.
    let workspace = workspaces.for_call(call.ctx)?;
    let path = workspace.path(&raw_path)?;
    let request = WebRequest {
        method: "GET".to_owned(),
        url: url.into(),
        headers: Vec::new(),
        body: None,
        timeout: timeout_arg(&call.args),
        max_response_bytes: MAX_RESPONSE_BYTES,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::Args(format!(
            "the server answered HTTP {} for {}; nothing was saved — check the URL",
            response.status, response.final_url
        )));
    }
    let content_type = response.header("content-type").map(str::to_owned);
    let final_url = response.final_url.clone();
    let body = response.body;
    let outcome = tokio::task::spawn_blocking(move || {
        workspace
            .write(
                &path,
                &body,
                WriteOptions {
                    overwrite,
                    create_parents: true,
                },
            )
            .map(|outcome| (path, outcome))
    })
    .await
    .map_err(|e| ToolError::Args(format!("the download could not be saved: {e}")))??;
    let (path, written) = outcome;
    Ok(json!({
        "path": path.to_string(),
        "url": final_url,
        "bytes": written.bytes,
        "contentType": content_type,
        "created": written.created,
    }))
}
