//! A result made of content blocks rather than one JSON value: text, image, audio, an embedded
//! resource or a link to one (MCP's content blocks, as MCP writes them), and optionally
//! structured content, the value a declared output schema describes.
//!
//! A [`ToolResult`] says which it holds with its [`ContentForm`]:
//!
//! - [`ContentForm::Json`] (every result unless a tool asked otherwise): `content` is any JSON
//!   value, shown by each interface as it always was;
//! - [`ContentForm::Blocks`]: `content` is `{"content": [block, …], "structuredContent"?: value,
//!   "_meta"?: object}`, MCP's `CallToolResult` without `isError` (that is the result's own
//!   `is_error`). MCP sends the blocks as they are; REST and the CLI show this object as the
//!   result's content. Blocks are checked by [`check_blocks`] when a result is made, so every
//!   face can trust their shape.
//!
//! Nothing becomes a block result by looking like one: only [`ToolResult::blocks`] makes one,
//! called by an executor that was told so (the sandbox's `mcp.result`, a bridged upstream's
//! answer). A plain object with a `content` array stays plain JSON.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{ErrorKind, ResultMetadata, ToolResult};
use crate::registry::RegisteredTool;

/// How a result's `content` is to be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentForm {
    /// Any JSON value.
    #[default]
    Json,
    /// `{"content": [blocks], "structuredContent"?, "_meta"?}` (see the module's doc).
    Blocks,
}

impl ContentForm {
    /// For serde's `skip_serializing_if`: the default form is not written.
    pub fn is_json(&self) -> bool {
        *self == ContentForm::Json
    }
}

/// The most content blocks one result may hold.
pub const MAX_BLOCKS: usize = 1000;

/// The block types a result may hold.
pub const BLOCK_TYPES: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

impl ToolResult {
    /// A result of content blocks (and optionally structured content and `_meta`), checked by
    /// [`check_blocks`]; the message of the first problem otherwise, naming the block and the
    /// field. A failed one (`is_error`) is an `execution_error`.
    pub fn blocks(
        blocks: Vec<Value>,
        structured: Option<Value>,
        meta: Option<Map<String, Value>>,
        is_error: bool,
    ) -> Result<ToolResult, String> {
        check_blocks(&blocks)?;
        let mut content = Map::new();
        content.insert("content".to_owned(), Value::Array(blocks));
        if let Some(structured) = structured {
            content.insert("structuredContent".to_owned(), structured);
        }
        if let Some(meta) = meta {
            content.insert("_meta".to_owned(), Value::Object(meta));
        }
        Ok(ToolResult {
            content: Value::Object(content),
            is_error,
            metadata: ResultMetadata {
                error_kind: is_error.then_some(ErrorKind::ExecutionError),
                ..ResultMetadata::default()
            },
            form: ContentForm::Blocks,
        })
    }

    /// The content blocks of a [`ContentForm::Blocks`] result.
    pub fn content_blocks(&self) -> Option<&Vec<Value>> {
        match self.form {
            ContentForm::Blocks => self.content.get("content").and_then(Value::as_array),
            ContentForm::Json => None,
        }
    }

    /// The structured content of a [`ContentForm::Blocks`] result, if it has one.
    pub fn structured_content(&self) -> Option<&Value> {
        match self.form {
            ContentForm::Blocks => self.content.get("structuredContent"),
            ContentForm::Json => None,
        }
    }

    /// The text of a block result's text blocks, one per line.
    pub(crate) fn blocks_text(&self) -> Option<String> {
        let blocks = self.content_blocks()?;
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        Some(texts.join("\n"))
    }
}

/// `res` checked against the output schema `tool` declares, if any: a successful result's
/// structured content (a block result's `structuredContent`, a JSON result's object itself)
/// must match it; a result with none, or one that breaks it, becomes an `execution_error`
/// naming each violation (the tool's console is kept). Failed results pass as they are.
pub fn check_output(tool: &RegisteredTool, res: ToolResult) -> ToolResult {
    let Some(schema) = &tool.output_schema else {
        return res;
    };
    if res.is_error {
        return res;
    }
    let name = tool.name();
    let structured = match res.form {
        ContentForm::Blocks => res.structured_content(),
        ContentForm::Json => Some(&res.content).filter(|c| c.is_object()),
    };
    let mut checked = match structured {
        None => ToolResult::error(
            ErrorKind::ExecutionError,
            format!(
                "tool '{name}' declares an outputSchema but returned no structured content: return a JSON object matching it (a JS tool: a plain object, or mcp.result({{content, structuredContent}}))"
            ),
        ),
        Some(value) => {
            let violations = schema.violations(value);
            if violations.is_empty() {
                return res;
            }
            let listed: Vec<String> = violations
                .iter()
                .map(|v| {
                    let at = if v.instance_path.is_empty() {
                        "(root)"
                    } else {
                        v.instance_path.as_str()
                    };
                    format!("at {at}: {}", v.message)
                })
                .collect();
            let mut details = crate::schema::violation_details(&violations, schema.schema());
            if let Some(schema) = details.remove("schema") {
                details.insert("outputSchema".to_owned(), schema);
            }
            ToolResult::error_with(
                ErrorKind::ExecutionError,
                format!(
                    "tool '{name}' returned structured content that does not match its outputSchema: {}; fix the tool's result or its outputSchema",
                    listed.join("; ")
                ),
                details,
            )
        }
    };
    checked.metadata.duration_ms = res.metadata.duration_ms;
    checked.metadata.console = res.metadata.console;
    checked.metadata.console_truncated = res.metadata.console_truncated;
    checked
}

/// Checks `blocks` against MCP's content block shapes: each an object whose `type` is one of
/// [`BLOCK_TYPES`] with that type's fields (`text`; `data` in base64 and `mimeType`; a
/// `resource` with `uri` and `text` or base64 `blob`; a link's `uri` and `name`), optional
/// `annotations` (`audience` of `user`/`assistant`, `priority` from 0 to 1, `lastModified`)
/// and an optional `_meta` object. Other fields a block's type allows (a link's `title`,
/// `description`, `size`, `icons` …) pass as they are.
pub fn check_blocks(blocks: &[Value]) -> Result<(), String> {
    if blocks.len() > MAX_BLOCKS {
        return Err(format!(
            "a result holds at most {MAX_BLOCKS} content blocks, this one {}",
            blocks.len()
        ));
    }
    for (i, block) in blocks.iter().enumerate() {
        check_block(block).map_err(|e| format!("content block {i}: {e}"))?;
    }
    Ok(())
}

fn check_block(block: &Value) -> Result<(), String> {
    let Some(fields) = block.as_object() else {
        return Err("must be an object with a \"type\"".to_owned());
    };
    let kind = fields.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => text_field(fields, "text")?,
        "image" | "audio" => {
            base64_field(fields, "data")?;
            text_field(fields, "mimeType")?;
        }
        "resource" => {
            let Some(resource) = fields.get("resource").and_then(Value::as_object) else {
                return Err(
                    "a \"resource\" block needs \"resource\": {uri, mimeType?, text | blob}"
                        .to_owned(),
                );
            };
            text_field(resource, "uri")?;
            optional_text(resource, "mimeType")?;
            match (resource.get("text"), resource.get("blob")) {
                (Some(_), None) => text_field(resource, "text")?,
                (None, Some(_)) => base64_field(resource, "blob")?,
                _ => {
                    return Err(
                        "a resource holds exactly one of \"text\" and \"blob\" (base64)".to_owned(),
                    );
                }
            }
            meta_field(resource)?;
        }
        "resource_link" => {
            text_field(fields, "uri")?;
            text_field(fields, "name")?;
            for optional in ["title", "description", "mimeType"] {
                optional_text(fields, optional)?;
            }
            if let Some(size) = fields.get("size")
                && !size.is_u64()
            {
                return Err("\"size\" must be a whole number of bytes".to_owned());
            }
        }
        other => {
            return Err(format!(
                "\"type\" is {}, not one of {}",
                if other.is_empty() {
                    "missing".to_owned()
                } else {
                    format!("'{other}'")
                },
                BLOCK_TYPES.join(", ")
            ));
        }
    }
    if let Some(annotations) = fields.get("annotations") {
        check_annotations(annotations)?;
    }
    meta_field(fields)
}

fn text_field(fields: &Map<String, Value>, name: &str) -> Result<(), String> {
    match fields.get(name) {
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err(format!("\"{name}\" must be a string")),
        None => Err(format!("\"{name}\" is missing")),
    }
}

fn optional_text(fields: &Map<String, Value>, name: &str) -> Result<(), String> {
    match fields.get(name) {
        None | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(format!("\"{name}\" must be a string")),
    }
}

fn meta_field(fields: &Map<String, Value>) -> Result<(), String> {
    match fields.get("_meta") {
        None | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err("\"_meta\" must be an object".to_owned()),
    }
}

/// A base64 text (the standard alphabet, padding optional): binary content is carried as it is
/// and never decoded here.
fn base64_field(fields: &Map<String, Value>, name: &str) -> Result<(), String> {
    text_field(fields, name)?;
    let text = fields.get(name).and_then(Value::as_str).unwrap_or("");
    let body = text.trim_end_matches('=');
    let padding = text.len() - body.len();
    let alphabet = body
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    if !alphabet
        || padding > 2
        || body.len() % 4 == 1
        || (padding > 0 && !text.len().is_multiple_of(4))
    {
        return Err(format!(
            "\"{name}\" must be base64 (A-Z, a-z, 0-9, + and /, padded with =); encode the bytes first (utils.base64Encode in a JS tool)"
        ));
    }
    Ok(())
}

fn check_annotations(annotations: &Value) -> Result<(), String> {
    let Some(fields) = annotations.as_object() else {
        return Err("\"annotations\" must be an object".to_owned());
    };
    if let Some(audience) = fields.get("audience") {
        let ok = audience.as_array().is_some_and(|roles| {
            roles
                .iter()
                .all(|r| matches!(r.as_str(), Some("user" | "assistant")))
        });
        if !ok {
            return Err(
                "\"annotations.audience\" must be a list of \"user\" and \"assistant\"".to_owned(),
            );
        }
    }
    if let Some(priority) = fields.get("priority") {
        let ok = priority.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p));
        if !ok {
            return Err("\"annotations.priority\" must be a number from 0 to 1".to_owned());
        }
    }
    optional_text(fields, "lastModified").map_err(|e| format!("annotations: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_block_type_is_accepted_with_annotations_and_meta() {
        let blocks = vec![
            json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}}),
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "_meta": {"k": 1}}),
            json!({"type": "audio", "data": "UklGRg", "mimeType": "audio/wav"}),
            json!({"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "x"}}),
            json!({"type": "resource", "resource": {"uri": "test://b", "blob": "AAAA"}}),
            json!({"type": "resource_link", "uri": "file:///x", "name": "x", "size": 3}),
        ];
        let result = ToolResult::blocks(blocks, Some(json!({"a": 1})), None, false).unwrap();
        assert_eq!(result.form, ContentForm::Blocks);
        assert_eq!(result.content_blocks().unwrap().len(), 6);
        assert_eq!(result.structured_content(), Some(&json!({"a": 1})));
        assert_eq!(result.blocks_text().unwrap(), "hi");
    }

    #[test]
    fn a_bad_block_is_named_with_its_field() {
        let cases = [
            (json!({"text": "no type"}), "block 0: \"type\" is missing"),
            (json!({"type": "video"}), "'video', not one of"),
            (json!({"type": "text"}), "\"text\" is missing"),
            (
                json!({"type": "image", "data": "not base64!", "mimeType": "image/png"}),
                "must be base64",
            ),
            (
                json!({"type": "image", "data": "AAAA"}),
                "\"mimeType\" is missing",
            ),
            (
                json!({"type": "resource", "resource": {"uri": "u", "text": "t", "blob": "AAAA"}}),
                "exactly one of",
            ),
            (
                json!({"type": "resource_link", "uri": "u"}),
                "\"name\" is missing",
            ),
            (
                json!({"type": "text", "text": "t", "annotations": {"priority": 2}}),
                "from 0 to 1",
            ),
            (
                json!({"type": "text", "text": "t", "annotations": {"audience": ["robot"]}}),
                "\"user\" and \"assistant\"",
            ),
            (
                json!({"type": "text", "text": "t", "_meta": 1}),
                "\"_meta\" must be",
            ),
        ];
        for (block, expected) in cases {
            let e = ToolResult::blocks(vec![block.clone()], None, None, false).unwrap_err();
            assert!(e.contains(expected), "{block}: {e}");
        }
    }

    struct Nothing;

    #[async_trait::async_trait]
    impl crate::model::ToolExecutor for Nothing {
        async fn execute(&self, _args: Value, _ctx: &crate::model::ToolContext) -> ToolResult {
            ToolResult::ok(Value::Null)
        }
    }

    fn typed_tool() -> RegisteredTool {
        let mut definition = crate::model::ToolDefinition::new(
            "typed",
            "d",
            json!({"type": "object", "properties": {}}),
        );
        definition.output_schema = Some(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        }));
        RegisteredTool::new(
            definition,
            crate::registry::ToolOrigin::BuiltIn {
                provider: "p".to_owned(),
            },
            crate::model::PermissionSet::new(),
            std::sync::Arc::new(Nothing),
        )
        .unwrap()
    }

    #[test]
    fn structured_content_is_checked_against_the_output_schema() {
        let tool = typed_tool();
        let fine = check_output(&tool, ToolResult::ok(json!({"n": 1})));
        assert!(!fine.is_error, "{:?}", fine.content);
        let blocks = ToolResult::blocks(vec![], Some(json!({"n": 2})), None, false).unwrap();
        assert!(!check_output(&tool, blocks).is_error);

        let wrong = check_output(&tool, ToolResult::ok(json!({"n": "one"})));
        assert!(wrong.is_error);
        let message = wrong.error_message().unwrap();
        assert!(
            message.contains("does not match its outputSchema"),
            "{message}"
        );
        assert!(message.contains("at /n"), "{message}");
        assert_eq!(wrong.content["violations"][0]["path"], "/n");
        assert!(wrong.content["outputSchema"].is_object());

        let none = check_output(&tool, ToolResult::ok(json!("text")));
        assert!(
            none.error_message()
                .unwrap()
                .contains("no structured content")
        );
        let no_structured = ToolResult::blocks(vec![], None, None, false).unwrap();
        assert!(check_output(&tool, no_structured).is_error);
        // A failed result passes as it is.
        let failed = ToolResult::error(ErrorKind::Timeout, "slow");
        assert_eq!(
            check_output(&tool, failed).error_kind(),
            Some(ErrorKind::Timeout)
        );
    }

    #[test]
    fn a_plain_result_stays_json_and_serializes_as_before() {
        let plain = ToolResult::ok(json!({"content": [{"type": "text", "text": "x"}]}));
        assert_eq!(plain.form, ContentForm::Json);
        assert!(plain.content_blocks().is_none());
        let shown = serde_json::to_value(&plain).unwrap();
        assert!(shown.get("form").is_none(), "{shown}");
    }
}
