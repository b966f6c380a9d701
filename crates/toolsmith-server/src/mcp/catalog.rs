//! The tool list a caller sees, and the shape of what comes back from a call.
//!
//! - [`SERVER_TOOLS`] — the tools the MCP server itself provides (control plane, discovery
//!   meta-tools, the `dynamic.tool.*` compatibility names), each with its input schema compiled
//!   once so its arguments are validated like any other tool's.
//! - [`CatalogCache`] — the `tools/list` of each owner, rebuilt only when that owner's catalogue
//!   version moved (10,000 custom tools must list in milliseconds).
//! - [`call_result`] and friends — a [`ToolResult`] or a JSON value as an MCP `CallToolResult`:
//!   text content (strings as they are, everything else as JSON), the object itself as
//!   `structuredContent`, and `isError` for failures, whose text carries the message and the
//!   details (violations, schema, …) a model needs to correct itself.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{ToolRegistry, ToolResult};

use super::{compat, control_plane, meta_tools};

/// Which server tool a name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerOp {
    Control(control_plane::Op),
    Meta(meta_tools::Op),
    Compat(compat::Op),
}

impl ServerOp {
    /// The scope a caller needs to use this server tool.
    pub(crate) fn scope(self) -> crate::auth::Scope {
        use crate::auth::Scope;
        match self {
            ServerOp::Control(control_plane::Op::List | control_plane::Op::Get)
            | ServerOp::Compat(compat::Op::List | compat::Op::Get)
            | ServerOp::Meta(meta_tools::Op::Search | meta_tools::Op::Help) => Scope::ToolsRead,
            ServerOp::Control(control_plane::Op::RunEphemeral)
            | ServerOp::Meta(meta_tools::Op::Use | meta_tools::Op::Batch) => Scope::ToolsExecute,
            ServerOp::Control(_) | ServerOp::Compat(_) => Scope::ToolsWrite,
        }
    }
}

/// A tool the MCP server provides itself (not in the registry).
pub(crate) struct ServerTool {
    pub name: &'static str,
    pub op: ServerOp,
    pub tool: Tool,
    pub schema: CompiledSchema,
}

/// Every server tool: the control plane and meta-tools (always listed), and the compatibility
/// names (listed with `--compat dynamic-mcp`).
pub(crate) struct ServerTools {
    pub core: Vec<ServerTool>,
    pub compat: Vec<ServerTool>,
}

impl ServerTools {
    /// The server tool `name`, if it is served (compat names only when `compat` is on).
    pub fn find(&self, name: &str, compat: bool) -> Option<&ServerTool> {
        self.core
            .iter()
            .chain(self.compat.iter().filter(|_| compat))
            .find(|t| t.name == name)
    }

    /// Whether `name` is any server tool's name, served or not.
    pub fn is_server_tool(&self, name: &str) -> bool {
        self.core.iter().chain(&self.compat).any(|t| t.name == name)
    }
}

pub(crate) static SERVER_TOOLS: LazyLock<ServerTools> = LazyLock::new(|| {
    let core = control_plane::definitions()
        .into_iter()
        .map(|(op, name, description, schema)| {
            server_tool(ServerOp::Control(op), name, description, schema)
        })
        .chain(
            meta_tools::definitions()
                .into_iter()
                .map(|(op, name, description, schema)| {
                    server_tool(ServerOp::Meta(op), name, description, schema)
                }),
        )
        .collect();
    let compat = compat::definitions()
        .into_iter()
        .map(|(op, name, description, schema)| {
            server_tool(ServerOp::Compat(op), name, description, schema)
        })
        .collect();
    ServerTools { core, compat }
});

fn server_tool(
    op: ServerOp,
    name: &'static str,
    description: &'static str,
    schema: Value,
) -> ServerTool {
    let compiled = CompiledSchema::compile(&schema)
        .unwrap_or_else(|e| panic!("the input schema of server tool {name} is invalid: {e}"));
    let mut tool = Tool::new(name, description, Arc::new(as_object(schema)));
    if let Some(annotations) = annotations(op) {
        tool = tool.with_annotations(annotations);
    }
    ServerTool {
        name,
        op,
        tool,
        schema: compiled,
    }
}

/// Behaviour hints for clients (e.g. which calls they may run without asking the user).
fn annotations(op: ServerOp) -> Option<ToolAnnotations> {
    use compat::Op as D;
    use control_plane::Op as C;
    use meta_tools::Op as M;
    let read_only = ToolAnnotations::new().read_only(true).open_world(false);
    let writes = |destructive: bool, idempotent: bool| {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(destructive)
            .idempotent(idempotent)
            .open_world(false)
    };
    Some(match op {
        ServerOp::Control(C::List | C::Get)
        | ServerOp::Meta(M::Search | M::Help)
        | ServerOp::Compat(D::List | D::Get) => read_only,
        ServerOp::Control(C::Create) | ServerOp::Compat(D::Create) => writes(false, false),
        ServerOp::Control(C::Update) | ServerOp::Compat(D::Update) => writes(true, false),
        ServerOp::Control(C::Delete) | ServerOp::Compat(D::Delete) => writes(true, true),
        ServerOp::Control(C::Toggle) | ServerOp::Compat(D::Enable) => writes(false, true),
        // These run arbitrary code or tools: no promise either way.
        ServerOp::Control(C::RunEphemeral) | ServerOp::Meta(M::Use | M::Batch) => return None,
    })
}

fn as_object(schema: Value) -> JsonObject {
    match schema {
        Value::Object(map) => map,
        // Registered schemas are always objects (the registry compiles them); keep the
        // protocol's shape even if one is not.
        _ => {
            let mut map = Map::new();
            map.insert("type".to_owned(), Value::String("object".to_owned()));
            map
        }
    }
}

/// owner → (the catalogue version it was built at, the owner's `tools/list`).
type ByOwner = HashMap<String, (u64, Arc<Vec<Tool>>)>;

/// The `tools/list` of each owner, tagged with the catalogue version it was built at.
pub(crate) struct CatalogCache {
    compat: bool,
    by_owner: Mutex<ByOwner>,
}

impl CatalogCache {
    pub fn new(compat: bool) -> CatalogCache {
        CatalogCache {
            compat,
            by_owner: Mutex::new(HashMap::new()),
        }
    }

    pub fn compat(&self) -> bool {
        self.compat
    }

    /// Everything `owner` can call, as MCP tools.
    pub fn tools(&self, registry: &ToolRegistry, owner: &str) -> Arc<Vec<Tool>> {
        // Read the version before the tools: a change in between leaves an entry tagged older
        // than its content, which is rebuilt next time — never the other way round.
        let version = registry.catalog_version(owner);
        if let Some((cached_version, tools)) = self.lock().get(owner)
            && *cached_version == version
        {
            return tools.clone();
        }
        let tools = Arc::new(self.build(registry, owner));
        self.lock()
            .insert(owner.to_owned(), (version, tools.clone()));
        tools
    }

    fn build(&self, registry: &ToolRegistry, owner: &str) -> Vec<Tool> {
        let server = &*SERVER_TOOLS;
        let registered = registry.tools(owner);
        let mut tools =
            Vec::with_capacity(server.core.len() + registered.len() + server.compat.len());
        tools.extend(server.core.iter().map(|t| t.tool.clone()));
        for tool in &registered {
            if server.is_server_tool(tool.name()) {
                // A custom tool cannot be reached under a server tool's name; the server tool wins.
                tracing::warn!(
                    tool = tool.name(),
                    owner,
                    "tool hidden from MCP: its name belongs to an MCP server tool"
                );
                continue;
            }
            tools.push(registry_tool(&tool.definition));
        }
        if self.compat {
            tools.extend(server.compat.iter().map(|t| t.tool.clone()));
        }
        tools
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ByOwner> {
        self.by_owner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A registry tool as MCP shows it: name, description and its own input schema (tags and
/// category stay server-side).
pub(crate) fn registry_tool(definition: &toolsmith_core::ToolDefinition) -> Tool {
    Tool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(as_object(definition.parameters.clone())),
    )
}

/// A call's result as MCP returns it.
pub(crate) fn call_result(res: ToolResult) -> CallToolResult {
    if res.is_error {
        let text = error_text(&res);
        let mut out = CallToolResult::error(vec![ContentBlock::text(text)]);
        if res.content.is_object() {
            out.structured_content = Some(res.content);
        }
        return out;
    }
    let mut out = CallToolResult::success(vec![ContentBlock::text(res.content_text())]);
    if res.content.is_object() {
        out.structured_content = Some(res.content);
    }
    out
}

/// The text of a failed call: the message, then the kind, then any details as JSON.
fn error_text(res: &ToolResult) -> String {
    let message = res
        .error_message()
        .map(str::to_owned)
        .unwrap_or_else(|| res.content_text());
    let mut text = message;
    if let Some(kind) = res.error_kind() {
        text.push_str(&format!(" [{kind}]"));
    }
    if let Value::Object(content) = &res.content {
        let details: Map<String, Value> = content
            .iter()
            .filter(|(k, _)| k.as_str() != "error" && k.as_str() != "kind")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !details.is_empty() {
            text.push_str("\nDetails: ");
            text.push_str(&Value::Object(details).to_string());
        }
    }
    text
}

/// A successful result carrying a JSON object (as text and as structured content).
pub(crate) fn json_result(value: Value) -> CallToolResult {
    let mut out = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    out.structured_content = Some(value);
    out
}

/// A failed result: `message` as text, `{error, code, …extra}` as structured content.
pub(crate) fn error_result(code: &str, message: &str, extra: Map<String, Value>) -> CallToolResult {
    let mut structured = Map::new();
    structured.insert("error".to_owned(), json!(message));
    structured.insert("code".to_owned(), json!(code));
    structured.extend(extra);
    let mut text = message.to_owned();
    if structured.len() > 2 {
        let details: Map<String, Value> = structured
            .iter()
            .filter(|(k, _)| k.as_str() != "error" && k.as_str() != "code")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        text.push_str("\nDetails: ");
        text.push_str(&Value::Object(details).to_string());
    }
    let mut out = CallToolResult::error(vec![ContentBlock::text(text)]);
    out.structured_content = Some(Value::Object(structured));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The service refuses these names for custom tools; they must be exactly the server's.
    #[test]
    fn reserved_names_are_the_server_tools() {
        let mut served: Vec<&str> = SERVER_TOOLS.core.iter().map(|t| t.name).collect();
        served.sort_unstable();
        let mut reserved = toolsmith_core::name::RESERVED_NAMES.to_vec();
        reserved.sort_unstable();
        assert_eq!(served, reserved);
    }
}
