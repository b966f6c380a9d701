//! The tool list a caller sees, and the shape of what comes back from a call.
//!
//! - [`SERVER_TOOLS`] — the tools the MCP server itself provides (control plane, discovery
//!   meta-tools, the `dynamic.tool.*` compatibility names), each with its input schema compiled
//!   once so its arguments are validated like any other tool's.
//! - [`CatalogCache`] — the `tools/list` of each owner, updated tool by tool when that owner's
//!   catalogue version moved (10,000 custom tools must list in milliseconds, after a change too).
//! - [`call_result`] and friends — a [`ToolResult`] or a JSON value as an MCP `CallToolResult`:
//!   text content (strings as they are, everything else as JSON), the object itself as
//!   `structuredContent`, and `isError` for failures, whose text carries the message and the
//!   details (violations, schema, …) a model needs to correct itself; a result of content
//!   blocks (`toolsmith_core::content`) goes out as its blocks, structured content and
//!   `_meta`, unchanged.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{RegisteredTool, ToolRegistry, ToolResult};

use super::{compat, control_plane, manage, meta_tools};

/// Which server tool a name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerOp {
    Control(control_plane::Op),
    /// `manage_agents`, `manage_prompts`: each action checks its own scope (`mcp/manage.rs`).
    Manage(manage::Op),
    Meta(meta_tools::Op),
    Compat(compat::Op),
    /// A tool of dynamic-mcp's profiles (`system.health`, `upstream.mcp.attach` …).
    Profile(compat::profile::ProfileOp),
}

impl ServerOp {
    /// The scope a caller needs to use this server tool.
    pub(crate) fn scope(self) -> crate::auth::Scope {
        use crate::auth::Scope;
        match self {
            ServerOp::Profile(op) => op.scope(),
            ServerOp::Control(control_plane::Op::List | control_plane::Op::Get)
            | ServerOp::Compat(compat::Op::List | compat::Op::Get)
            | ServerOp::Meta(meta_tools::Op::Search | meta_tools::Op::Help)
            | ServerOp::Manage(_) => Scope::ToolsRead,
            ServerOp::Control(control_plane::Op::RunEphemeral)
            | ServerOp::Compat(compat::Op::RunEphemeral | compat::Op::Sandbox(_))
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

impl ServerTool {
    /// The built-in this server tool stands for (a compat name such as `sandbox.exec`), if
    /// any: it is served to a caller only while the caller can reach that built-in.
    pub fn builtin(&self) -> Option<&'static str> {
        match self.op {
            ServerOp::Compat(op) => op.builtin(),
            _ => None,
        }
    }

    /// Whether a compat mode with `surface` serves this tool (its profile's tools only).
    pub fn served_in(&self, surface: compat::profile::Surface) -> bool {
        compat::profile::serves(self.op, surface)
    }

    /// Whether this server tool runs code once (`run_js_ephemeral`, core or compat): a call of
    /// the one-off tool [`toolsmith_service::EPHEMERAL_TOOL`], which the policy decides on by
    /// that name, so it is listed only to a caller the policy lets call it.
    pub fn runs_code_once(&self) -> bool {
        matches!(
            self.op,
            ServerOp::Control(control_plane::Op::RunEphemeral)
                | ServerOp::Compat(compat::Op::RunEphemeral)
        )
    }

    /// Whether `owner` has this server tool: always, unless it stands for a built-in the
    /// registry does not hold for `owner` (its group is disabled).
    pub fn held_by(&self, registry: &ToolRegistry, owner: &str) -> bool {
        self.builtin()
            .is_none_or(|builtin| registry.get(owner, builtin).is_some())
    }
}

/// Every server tool: the control plane and meta-tools (always listed), and the compatibility
/// names (listed with `--compat dynamic-mcp`).
pub(crate) struct ServerTools {
    pub core: Vec<ServerTool>,
    pub compat: Vec<ServerTool>,
}

impl ServerTools {
    /// The server tool `name`, if it is served (compat names only when `compat` is on; a
    /// compat tool replaces the core tool of the same name, e.g. `run_js_ephemeral`).
    pub fn find(&self, name: &str, compat: bool) -> Option<&ServerTool> {
        self.compat
            .iter()
            .filter(|_| compat)
            .chain(&self.core)
            .find(|t| t.name == name)
    }

    /// The core tools served, in order: with `compat`, those a compat tool replaces are left
    /// out (the compat list has them).
    pub fn served_core(&self, compat: bool) -> impl Iterator<Item = &ServerTool> {
        self.core
            .iter()
            .filter(move |t| !compat || !self.compat.iter().any(|c| c.name == t.name))
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
            manage::definitions()
                .into_iter()
                .map(|(op, name, description, schema)| {
                    server_tool(ServerOp::Manage(op), name, description, schema)
                }),
        )
        .chain(
            meta_tools::definitions()
                .into_iter()
                .map(|(op, name, description, schema)| {
                    server_tool(ServerOp::Meta(op), name, description, schema)
                }),
        )
        .collect();
    let profile = compat::profile::definitions();
    let compat = compat::definitions()
        .into_iter()
        .map(|(op, name, description, schema)| {
            let mut tool = server_tool(ServerOp::Compat(op), name, description, schema);
            // dynamic-mcp's titles of its sandbox tools.
            if let compat::Op::Sandbox(sandbox) = op {
                tool.tool = tool.tool.with_title(sandbox.title());
            }
            tool
        })
        .chain(profile_tools(&profile))
        .collect();
    ServerTools { core, compat }
});

impl ServerTools {
    /// `tools/list` under `--mcp-listing discovery` (and the server tools of `compact`): the
    /// server tools `owner` has, `create_tool`, `update_custom_tool`, `manage_agents` and
    /// `manage_prompts` with their parameter docs left out (`get_tool_help` gives them in
    /// full), so the listing stays within its budget (`mcp_listing`).
    pub(crate) fn discovery_listing(
        &self,
        compat: bool,
        registry: &ToolRegistry,
        owner: &str,
    ) -> Vec<Tool> {
        let compat = if compat { self.compat.as_slice() } else { &[] };
        self.core
            .iter()
            .chain(compat)
            .filter(|t| t.held_by(registry, owner))
            .map(|t| match t.op {
                ServerOp::Control(control_plane::Op::Create) => slim(&t.tool, CREATE_TOOL_LISTED),
                ServerOp::Control(control_plane::Op::Update) => slim(&t.tool, UPDATE_TOOL_LISTED),
                ServerOp::Manage(op) => slim(&t.tool, manage::listed_description(op)),
                _ => t.tool.clone(),
            })
            .collect()
    }
}

/// How many of the caller's own tools the compact listing adds to the discovery tools.
pub(crate) const COMPACT_OWN_TOOLS: usize = 8;
/// The most JSON those tools may add to the compact listing (about 3,000 cl100k tokens): a
/// tool that would go past it is left to `search_tools`, so the listing's cost has a bound
/// whatever the caller's tools' schemas hold.
pub(crate) const COMPACT_OWN_BYTES: usize = 12_000;

/// A tool the compact listing may carry, with what ranks it.
pub(crate) struct UsedTool {
    pub name: String,
    /// The caller's calls of it in the last 30 days that ran (every source).
    pub recent_calls: u64,
    /// A custom tool's own count and times; 0 and `None` for a built-in or bridged tool.
    pub usage_count: i64,
    pub last_used_at: Option<chrono::DateTime<chrono::Utc>>,
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The compact listing's own tools: `candidates` most used first — by the caller's recent
/// calls, custom, built-in and bridged alike, then a custom tool's own count, then the most
/// recently used, then the newest —, each made a listed tool by `listed` (`None`: not listed
/// to this caller), at most [`COMPACT_OWN_TOOLS`] and [`COMPACT_OWN_BYTES`] of JSON.
pub(crate) fn most_used(
    mut candidates: Vec<UsedTool>,
    listed: impl Fn(&str) -> Option<Tool>,
) -> Vec<Tool> {
    candidates.sort_by(|a, b| {
        b.recent_calls
            .cmp(&a.recent_calls)
            .then(b.usage_count.cmp(&a.usage_count))
            .then(b.last_used_at.cmp(&a.last_used_at))
            .then(b.created_at.cmp(&a.created_at))
            .then(a.name.cmp(&b.name))
    });
    let mut bytes = 0;
    let mut tools = Vec::new();
    for tool in candidates.iter().filter_map(|c| listed(&c.name)) {
        if tools.len() == COMPACT_OWN_TOOLS {
            break;
        }
        let size = serde_json::to_string(&tool).map_or(usize::MAX, |json| json.len());
        if bytes + size <= COMPACT_OWN_BYTES {
            bytes += size;
            tools.push(tool);
        }
    }
    tools
}

/// `create_tool`'s description in the compact and discovery listings.
const CREATE_TOOL_LISTED: &str = "Create a reusable custom tool: code is the body of an async JavaScript function `(args, context)` that returns JSON-able data (kind command/http also exist). Call get_tool_help {\"tool_name\": \"create_tool\"} for every field and an example.";

/// `update_custom_tool`'s description in the compact and discovery listings.
const UPDATE_TOOL_LISTED: &str = "Change one of your custom tools: only the fields you give change, and the next call runs the new code. Give expected_revision (from get_custom_tool) to refuse the update if the tool changed meanwhile. get_tool_help {\"tool_name\": \"update_custom_tool\"} gives every field.";

/// A tool whose parameters keep their names, types, values and required list but lose their
/// docs, described by `description` (which points to `get_tool_help` for the rest).
fn slim(tool: &Tool, description: &str) -> Tool {
    let mut schema = (*tool.input_schema).clone();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for prop in props.values_mut() {
            if let Value::Object(prop) = prop {
                prop.remove("description");
            }
        }
    }
    let mut slim = tool.clone();
    slim.input_schema = Arc::new(schema);
    slim.description = Some(description.to_owned().into());
    slim
}

/// dynamic-mcp's profile tools as server tools, with their titles and output schemas.
fn profile_tools(
    definitions: &[compat::profile::Definition],
) -> impl Iterator<Item = ServerTool> + '_ {
    definitions
        .iter()
        .map(|(op, name, description, input, output)| {
            let mut tool = server_tool(ServerOp::Profile(*op), name, description, input.clone());
            tool.tool = tool
                .tool
                .with_title(op.title())
                .with_raw_output_schema(Arc::new(as_object(output.clone())));
            tool
        })
}

/// A server tool's input schema: an object with `properties`, of which `required` must be
/// given, that refuses any other field (`additionalProperties: false`), so a misspelt argument
/// is named back to the model instead of being ignored.
pub(crate) fn arguments(properties: Value, required: &[&str]) -> Value {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), properties);
    if !required.is_empty() {
        schema.insert("required".to_owned(), json!(required));
    }
    schema.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(schema)
}

/// # Panics
/// On a schema that does not compile: the server tools' schemas are constants, and every test
/// that lists tools builds them.
#[allow(clippy::panic)]
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
    use compat::sandbox::SandboxOp as S;
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
        ServerOp::Profile(op) => return op.annotations(),
        ServerOp::Control(C::List | C::Get)
        | ServerOp::Meta(M::Search | M::Help)
        | ServerOp::Compat(D::List | D::Get) => read_only,
        ServerOp::Control(C::Create) | ServerOp::Compat(D::Create) => writes(false, false),
        ServerOp::Control(C::Update) | ServerOp::Compat(D::Update) => writes(true, false),
        ServerOp::Control(C::Delete) | ServerOp::Compat(D::Delete) => writes(true, true),
        ServerOp::Control(C::Toggle) | ServerOp::Compat(D::Enable) => writes(false, true),
        ServerOp::Compat(D::Sandbox(S::List)) => read_only,
        ServerOp::Compat(D::Sandbox(S::Initialize)) => writes(false, false),
        ServerOp::Compat(D::Sandbox(S::Stop)) => writes(true, true),
        // Reads and writes of definitions, and runs that reach a model server.
        ServerOp::Manage(manage::Op::Agents) => writes(true, false).open_world(true),
        ServerOp::Manage(manage::Op::Prompts) => writes(true, false),
        // These run arbitrary code or tools: no promise either way.
        ServerOp::Control(C::RunEphemeral)
        | ServerOp::Compat(D::RunEphemeral | D::Sandbox(S::Exec | S::RunJs))
        | ServerOp::Meta(M::Use | M::Batch) => return None,
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

/// The `tools/list` of each owner, kept in step with the registry one tool at a time.
///
/// Each owner's entry keeps, in the registry's order (built-ins, then custom tools, each by
/// name), the `Arc<RegisteredTool>` every listed tool was made from and the MCP [`Tool`] made of
/// it. When the owner's catalogue version moves, the entries are merged with the registry's
/// current tools: a tool that is still the same `Arc` keeps its MCP form (moved, not copied), a
/// new or replaced one is converted, a removed one drops out. Only what changed is converted (a
/// schema's deep copy is the expensive part) and nothing is hashed or sorted, so the first list
/// after a change of one tool among 10,000 costs about as much as a warm one. The result is
/// always exactly what a full rebuild would give ([`CatalogCache::rebuild`], checked by the
/// tests).
pub(crate) struct CatalogCache {
    compat: bool,
    /// What the compat mode serves (its profile).
    surface: compat::profile::Surface,
    by_owner: Mutex<HashMap<String, Arc<Mutex<OwnerList>>>>,
}

/// One owner's cached list.
#[derive(Default)]
struct OwnerList {
    /// The catalogue version `entries` was built at; `None` before the first build.
    version: Option<u64>,
    /// The registry's tools for this owner, in the registry's order.
    entries: Vec<Entry>,
}

struct Entry {
    source: Arc<RegisteredTool>,
    /// Its MCP form; `None`: hidden because a server tool holds the name.
    tool: Option<Tool>,
}

/// Where a registry tool sits in the registry's order: built-ins first, then by name.
fn order_key(tool: &RegisteredTool) -> (bool, &str) {
    (!tool.is_builtin(), tool.name())
}

impl CatalogCache {
    pub fn new(compat: bool) -> CatalogCache {
        CatalogCache {
            compat,
            surface: compat::profile::Surface::default(),
            by_owner: Mutex::new(HashMap::new()),
        }
    }

    /// This cache for a compat mode serving `surface`.
    pub fn with_surface(mut self, surface: compat::profile::Surface) -> CatalogCache {
        self.surface = surface;
        self
    }

    pub fn compat(&self) -> bool {
        self.compat
    }

    pub fn surface(&self) -> compat::profile::Surface {
        self.surface
    }

    /// Everything `owner` can call, as MCP tools: server tools, the registry's tools, then the
    /// compat names.
    pub fn tools(&self, registry: &ToolRegistry, owner: &str) -> Vec<Tool> {
        let slot = self.lock().entry(owner.to_owned()).or_default().clone();
        let mut list = slot.lock().unwrap_or_else(|e| e.into_inner());
        // Read the version before the tools: a change in between leaves the list tagged older
        // than its content, which is brought up to date next time — never the other way round.
        let version = registry.catalog_version(owner);
        if list.version != Some(version) {
            list.entries = merge(
                std::mem::take(&mut list.entries),
                registry.tools(owner),
                owner,
            );
            list.version = Some(version);
        }
        let server = &*SERVER_TOOLS;
        let compat = if self.compat { server.compat.len() } else { 0 };
        let mut tools = Vec::with_capacity(server.core.len() + list.entries.len() + compat);
        tools.extend(server.served_core(self.compat).map(|t| t.tool.clone()));
        tools.extend(list.entries.iter().filter_map(|e| e.tool.clone()));
        if self.compat {
            tools.extend(
                server
                    .compat
                    .iter()
                    .filter(|t| t.held_by(registry, owner) && t.served_in(self.surface))
                    .map(|t| t.tool.clone()),
            );
        }
        tools
    }

    /// The whole list built from scratch (what [`CatalogCache::tools`] must always equal).
    #[cfg(test)]
    pub fn rebuild(&self, registry: &ToolRegistry, owner: &str) -> Vec<Tool> {
        let server = &*SERVER_TOOLS;
        let mut tools: Vec<Tool> = server
            .served_core(self.compat)
            .map(|t| t.tool.clone())
            .collect();
        tools.extend(
            registry
                .tools(owner)
                .iter()
                .filter_map(|t| mcp_form(t, owner)),
        );
        if self.compat {
            tools.extend(
                server
                    .compat
                    .iter()
                    .filter(|t| t.held_by(registry, owner) && t.served_in(self.surface))
                    .map(|t| t.tool.clone()),
            );
        }
        tools
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<OwnerList>>>> {
        self.by_owner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The entries for `registered` (the registry's tools, in its order), reusing every entry of
/// `old` (in the same order) whose source is still the same `Arc`.
fn merge(old: Vec<Entry>, registered: Vec<Arc<RegisteredTool>>, owner: &str) -> Vec<Entry> {
    let mut old = old.into_iter().peekable();
    let mut entries = Vec::with_capacity(registered.len());
    for source in registered {
        // Old entries ordered before this tool were removed (or renamed away).
        while old
            .next_if(|e| {
                !Arc::ptr_eq(&e.source, &source) && order_key(&e.source) < order_key(&source)
            })
            .is_some()
        {}
        let entry = match old.next_if(|e| Arc::ptr_eq(&e.source, &source)) {
            Some(unchanged) => unchanged,
            None => Entry {
                tool: mcp_form(&source, owner),
                source,
            },
        };
        entries.push(entry);
    }
    entries
}

/// A registry tool as `tools/list` shows it, or `None` when a server tool holds its name (a
/// custom tool cannot be reached under a server tool's name; the server tool wins) or the tool
/// is deferred (a bridged tool of a large upstream: `search_tools` finds it).
fn mcp_form(tool: &RegisteredTool, owner: &str) -> Option<Tool> {
    if tool.deferred {
        return None;
    }
    if SERVER_TOOLS.is_server_tool(tool.name()) {
        tracing::warn!(
            tool = tool.name(),
            owner,
            "tool hidden from MCP: its name belongs to an MCP server tool"
        );
        return None;
    }
    Some(registry_tool(&tool.definition))
}

/// A registry tool as MCP shows it: name, description and its own input schema (tags and
/// category stay server-side).
pub(crate) fn registry_tool(definition: &toolsmith_core::ToolDefinition) -> Tool {
    let mut tool = Tool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(as_object(definition.parameters.clone())),
    );
    if let Some(Value::Object(schema)) = &definition.output_schema {
        tool.output_schema = Some(Arc::new(schema.clone()));
    }
    if let Some(annotations) = &definition.annotations {
        tool.annotations = serde_json::from_value::<ToolAnnotations>(annotations.clone()).ok();
    }
    match &definition.title {
        Some(title) => tool.with_title(title.clone()),
        None => tool,
    }
}

/// A call's result as MCP returns it.
pub(crate) fn call_result(res: ToolResult) -> CallToolResult {
    if res.form == toolsmith_core::ContentForm::Blocks {
        return blocks_result(res);
    }
    if res.is_error {
        let text = error_text(&res);
        let mut out = CallToolResult::error(vec![ContentBlock::text(text)]);
        if res.content.is_object() {
            out.structured_content = Some(res.content);
        }
        return out;
    }
    // A `null` result says so: an empty text reads as nothing having happened.
    let text = match &res.content {
        Value::Null => "null".to_owned(),
        _ => res.content_text(),
    };
    let mut out = CallToolResult::success(vec![ContentBlock::text(text)]);
    if res.content.is_object() {
        out.structured_content = Some(res.content);
    }
    out
}

/// A result of content blocks as MCP returns it: the blocks, structured content and `_meta`
/// as the tool gave them (checked when the result was made, `toolsmith_core::content`).
fn blocks_result(res: ToolResult) -> CallToolResult {
    let mut wire = match res.content {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    wire.insert("isError".to_owned(), Value::Bool(res.is_error));
    match serde_json::from_value::<CallToolResult>(Value::Object(wire)) {
        Ok(mut out) => {
            out.result_type = CallToolResult::success(Vec::new()).result_type;
            out
        }
        Err(e) => {
            tracing::error!(error = %e, "a checked content-block result does not read as MCP's");
            CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool's content blocks cannot be sent over MCP: {e} [internal]"
            ))])
        }
    }
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
    if res.error_kind() == Some(toolsmith_core::ErrorKind::InvalidArguments)
        && let Some(schema) = res.content.get("schema")
    {
        text.push_str(&format!(
            "\nExpected arguments (\"?\" marks optional): {}",
            crate::discovery::expected_shape(schema)
        ));
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

    mod incremental {
        //! The per-tool cache update gives exactly what a full rebuild gives.

        use super::super::*;
        use async_trait::async_trait;
        use toolsmith_core::model::{PermissionSet, ToolContext, ToolExecutor};
        use toolsmith_core::{ToolDefinition, ToolOrigin};

        struct Echo;

        #[async_trait]
        impl ToolExecutor for Echo {
            async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
                ToolResult::ok(args)
            }
        }

        /// xorshift64*: a fixed, seeded sequence (no dependency, reproducible failures).
        struct Rng(u64);

        impl Rng {
            fn next(&mut self) -> u64 {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
            }

            fn below(&mut self, n: u64) -> u64 {
                self.next() % n
            }
        }

        fn registered(name: &str, origin: ToolOrigin, revision: u64) -> RegisteredTool {
            let parameters = json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": format!("rev {revision}")}},
            });
            let definition =
                ToolDefinition::new(name, format!("{name}, revision {revision}"), parameters);
            RegisteredTool::new(definition, origin, PermissionSet::new(), Arc::new(Echo)).unwrap()
        }

        fn custom(owner: &str, id: u64, name: &str, revision: u64) -> RegisteredTool {
            let origin = ToolOrigin::Custom {
                id: format!("id-{id}"),
                owner: owner.to_owned(),
            };
            registered(name, origin, revision)
        }

        /// A name from a small pool (so creates collide with updates and renames), sometimes a
        /// server tool's name (which the list must hide).
        fn name(rng: &mut Rng) -> String {
            match rng.below(20) {
                0 => "create_tool".to_owned(),
                1 => "search_tools".to_owned(),
                n => format!("tool_{:02}", rng.below(30) + n),
            }
        }

        fn check(cache: &CatalogCache, registry: &ToolRegistry, owners: &[&str], step: usize) {
            for owner in owners {
                let cached = cache.tools(registry, owner);
                let rebuilt = cache.rebuild(registry, owner);
                assert_eq!(cached, rebuilt, "owner {owner}, step {step}");
            }
        }

        #[test]
        fn random_changes_list_like_a_full_rebuild() {
            for seed in 1..=8u64 {
                for compat in [false, true] {
                    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                    let registry = ToolRegistry::default();
                    let cache = CatalogCache::new(compat);
                    let owners = ["alice", "bob"];
                    let mut revision = 0;
                    for step in 0..400 {
                        revision += 1;
                        let owner = owners[rng.below(2) as usize];
                        let id = rng.below(40);
                        match rng.below(10) {
                            // create, update or rename (same id): may be refused on a taken
                            // name, which must change nothing.
                            0..=5 => {
                                let _ = registry.upsert_custom(custom(
                                    owner,
                                    id,
                                    &name(&mut rng),
                                    revision,
                                ));
                            }
                            6..=7 => {
                                registry.remove_custom(owner, &format!("id-{id}"));
                            }
                            8 => {
                                let builtin = format!("builtin_{}", rng.below(3));
                                let origin = ToolOrigin::BuiltIn {
                                    provider: "test".to_owned(),
                                };
                                if registry
                                    .register_builtin(registered(&builtin, origin, revision))
                                    .is_err()
                                {
                                    registry.unregister_builtin(&builtin);
                                }
                            }
                            // Several changes between two lists.
                            _ => {
                                for _ in 0..5 {
                                    let id = rng.below(40);
                                    let _ = registry.upsert_custom(custom(
                                        owner,
                                        id,
                                        &name(&mut rng),
                                        revision,
                                    ));
                                }
                            }
                        }
                        if rng.below(3) > 0 {
                            check(&cache, &registry, &owners, step);
                        }
                    }
                    check(&cache, &registry, &owners, usize::MAX);
                }
            }
        }

        #[test]
        fn a_change_converts_only_the_changed_tool() {
            let registry = ToolRegistry::default();
            let cache = CatalogCache::new(false);
            for i in 0..50 {
                registry
                    .upsert_custom(custom("alice", i, &format!("tool_{i:02}"), 0))
                    .unwrap();
            }
            let before = cache.tools(&registry, "alice");
            registry
                .upsert_custom(custom("alice", 7, "tool_07", 1))
                .unwrap();
            registry.remove_custom("alice", "id-9");
            let after = cache.tools(&registry, "alice");
            assert_eq!(after, cache.rebuild(&registry, "alice"));
            let schema = |tools: &[Tool], name: &str| {
                tools
                    .iter()
                    .find(|t| t.name == name)
                    .map(|t| t.input_schema.clone())
            };
            let same = |name: &str| match (schema(&before, name), schema(&after, name)) {
                (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
                _ => false,
            };
            assert!(
                same("tool_00") && same("tool_49"),
                "unchanged tools are reused"
            );
            assert!(!same("tool_07"), "the updated tool is converted again");
            assert_eq!(schema(&after, "tool_09"), None, "the removed tool is gone");
            assert!(
                after
                    .iter()
                    .any(|t| t.description.as_deref() == Some("tool_07, revision 1")),
                "the update shows"
            );
        }
    }
}
