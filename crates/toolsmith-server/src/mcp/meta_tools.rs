//! The discovery meta-tools of the spec: `search_tools`, `get_tool_help`, `use_tool` and
//! `batch_use_tool`, over the tools the caller can see (built-ins and their active custom
//! tools). The ranking, the parameter docs and the tool max limits live in
//! [`crate::discovery`]; this module wires them to the registry and the pipeline.
//!
//! `use_tool` and `batch_use_tool` run catalogue tools only: a meta-tool or control-plane tool
//! passed to them is refused with a clear message (no `use_tool` of `use_tool` loops; those
//! tools are called directly).

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_core::object;
use toolsmith_core::{BatchCall, ErrorKind, ToolDefinition, ToolResult};

use super::catalog::{SERVER_TOOLS, arguments, call_result, error_result, json_result};
use super::handler::Caller;
use super::hints;
use super::search_index::Source;
use crate::discovery::{lists_everything, parameter_docs, text};
use rmcp::model::CallToolResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Search,
    Help,
    Use,
    Batch,
}

/// How many tools `search_tools` offers when the caller sets no `limit`.
const DEFAULT_SEARCH_LIMIT: usize = 5;
/// Most tools one `search_tools` reply offers (a larger `limit` is capped to it).
const MAX_SEARCH_LIMIT: usize = 20;
/// Most operations in one `batch_use_tool`.
const MAX_BATCH: usize = 25;
/// A search result's summary (its description's first sentence) is cut to this many characters.
const SUMMARY_CHARS: usize = 120;

/// `(op, name, description, input schema)` of every discovery meta-tool.
pub(crate) fn definitions() -> Vec<(Op, &'static str, &'static str, Value)> {
    vec![
        (
            Op::Search,
            "search_tools",
            "Find tools by what you need, in plain words or keywords (\"how many euros for 250 dollars\", \"show me my files\"): the best few matches (5 unless you set limit), each with a one-line summary, among the built-in tools, your custom tools and the tool-management tools (category Meta). When nothing here does it, the reply says so (and create_tool makes a tool); a tool of a switched-off group is named with its group. \"all\" lists every tool by name, a page at a time.",
            arguments(
                json!({
                    "query": {"type": "string", "maxLength": text::MAX_QUERY_BYTES, "description": "What you need, e.g. \"remind me every Monday at 9am\" or \"convert currency\"; \"all\" lists every tool."},
                    "limit": {"type": "integer", "minimum": 1, "description": "How many tools at most (default 5; more than 20 counts as 20).", "default": DEFAULT_SEARCH_LIMIT},
                    "offset": {"type": "integer", "minimum": 0, "description": "Skip this many matches: the next page of a long answer (\"all\").", "default": 0},
                    "category": {"type": "string", "description": "Only tools of this category."},
                    "include_params": {"type": "boolean", "description": "Include each tool's full parameter schema (costs many tokens; get_tool_help gives one tool's).", "default": false}
                }),
                &["query"],
            ),
        ),
        (
            Op::Help,
            "get_tool_help",
            "Get a tool's full description and parameter documentation, to call it correctly.",
            arguments(
                json!({"tool_name": {"type": "string", "description": "Exact tool name, e.g. from search_tools."}}),
                &["tool_name"],
            ),
        ),
        (
            Op::Use,
            "use_tool",
            "Run any catalogue tool by name. Count parameters of list tools are capped at their limits. If the arguments are wrong, the error comes with the tool's parameter documentation.",
            arguments(
                json!({
                    "tool_name": {"type": "string", "description": "Exact tool name."},
                    "arguments": {"type": "object", "description": "Arguments matching the tool's parameters."}
                }),
                &["tool_name"],
            ),
        ),
        (
            Op::Batch,
            "batch_use_tool",
            "Run several catalogue tools in one request, in parallel. Each operation gets its own status; one failure does not stop the others.",
            arguments(
                json!({
                    "operations": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_BATCH,
                        "items": {
                            "type": "object",
                            "properties": {
                                "tool_name": {"type": "string", "description": "Exact tool name."},
                                "tool": {"type": "string", "description": "Same as tool_name."},
                                "arguments": {"type": "object"},
                                "args": {"type": "object", "description": "Same as arguments."}
                            },
                            "additionalProperties": false
                        }
                    }
                }),
                &["operations"],
            ),
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    include_params: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HelpArgs {
    tool_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UseArgs {
    tool_name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchArgs {
    operations: Vec<Operation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Operation {
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    args: Option<Value>,
}

/// Runs a meta-tool on arguments already validated against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: Op,
    args: Value,
) -> Result<CallToolResult, String> {
    use super::control_plane::parse;
    Ok(match op {
        Op::Search => search_tools(caller, parse(args)?).await,
        Op::Help => {
            let HelpArgs { tool_name } = parse(args)?;
            tool_help(caller, &tool_name).await
        }
        Op::Use => {
            let UseArgs {
                tool_name,
                arguments,
            } = parse(args)?;
            use_tool(caller, &tool_name, arguments).await
        }
        Op::Batch => batch(caller, parse(args)?).await,
    })
}

async fn search_tools(caller: &Caller<'_>, args: SearchArgs) -> CallToolResult {
    let index = caller.search_index();
    let everything = lists_everything(&args.query);
    let found = index.search(
        &args.query,
        args.category.as_deref(),
        |source| match source {
            Source::Registry(tool) | Source::Off(tool) => caller.can_see(tool),
            Source::Server(_) => true,
        },
    );
    // The relevance floor (a tool sharing a word with the request is no answer to it), and
    // with the caller's embeddings service the tools close in meaning too.
    let (hits, similarity) = if everything {
        (found, None)
    } else {
        let (hits, similarity) = index
            .answering(caller, &args.query, args.category.as_deref(), found)
            .await;
        (hits, Some(similarity))
    };
    // An alias is answered by the listed tool it stands for, once.
    let hits = index.listed_names_only(hits);
    let limit = args
        .limit
        .unwrap_or(DEFAULT_SEARCH_LIMIT)
        .clamp(1, MAX_SEARCH_LIMIT);
    let shown: Vec<usize> = hits
        .iter()
        .skip(args.offset)
        .take(limit)
        .map(|hit| hit.doc)
        .collect();
    // The switched-off groups among the shown tools, each once, with what switches it on.
    let mut off_groups: Vec<(&str, String)> = Vec::new();
    let listed: Vec<Value> = shown
        .iter()
        .map(|&i| {
            let def = index.definition(i);
            let mut entry = json!({"name": def.name});
            if !everything {
                object::set(&mut entry, "summary", json!(summary(&def.description)));
            }
            if args.include_params {
                object::set(&mut entry, "parameters", def.parameters.clone());
            }
            match index.source(i) {
                Source::Server(_) => object::set(&mut entry, "callDirectly", json!(true)),
                Source::Off(_) => {
                    let group = toolsmith_builtins::groups::group_of(&def.name).map(|g| g.id);
                    if let Some(group) = group {
                        object::set(&mut entry, "offGroup", json!(group));
                    }
                    let group = group.unwrap_or_default();
                    if !off_groups.iter().any(|(g, _)| *g == group) {
                        off_groups.push((
                            group,
                            toolsmith_builtins::groups::disabled_message(&def.name),
                        ));
                    }
                }
                Source::Registry(_) => {}
            }
            entry
        })
        .collect();
    let mut out = json!({
        "query": text::truncate(&args.query, text::MAX_QUERY_BYTES),
        "tools": listed,
    });
    if everything {
        object::set(&mut out, "total", json!(hits.len()));
    }
    let more = hits
        .len()
        .saturating_sub(args.offset.saturating_add(shown.len()));
    if more > 0 {
        object::set(&mut out, "more", json!(more));
    }
    if let Some(category) = args.category {
        object::set(&mut out, "category", json!(category));
    }
    if let Some(similarity) = &similarity {
        similarity.note(&mut out, true);
    }
    let all_off = !shown.is_empty()
        && shown
            .iter()
            .all(|&i| matches!(index.source(i), Source::Off(_)));
    if shown.is_empty() {
        let message = if hits.is_empty() && everything {
            "no tools in this category; search without a category, or with query \"all\"".to_owned()
        } else if !hits.is_empty() {
            format!("no more matches past offset {}", args.offset)
        } else {
            "No tool here does that: none of the tools' names or keywords match the request. Make one with create_tool (JavaScript, a shell command or an HTTP call), or search again with other words for what the tool would do.".to_owned()
        };
        object::set(&mut out, "message", json!(message));
    } else if all_off {
        object::set(
            &mut out,
            "message",
            json!(format!(
                "Only tools of switched-off groups do that, and they cannot be called until the group is on. {}",
                off_groups
                    .iter()
                    .map(|(_, m)| m.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
        );
    } else {
        if !off_groups.is_empty() {
            object::set(
                &mut out,
                "switchedOff",
                json!(
                    off_groups
                        .iter()
                        .map(|(_, m)| m.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            );
        }
        let next = if everything {
            "page on with offset; get_tool_help {\"tool_name\": …} describes a tool"
        } else {
            "call a tool by its name, or use_tool {\"tool_name\": …, \"arguments\": {…}}; get_tool_help {\"tool_name\": …} gives its parameters"
        };
        object::set(&mut out, "next", json!(next));
    }
    json_result(out)
}

async fn tool_help(caller: &Caller<'_>, name: &str) -> CallToolResult {
    // Only what the caller may call is described, as in `tools/list`.
    if let Some(tool) = caller.find_tool(name)
        && !SERVER_TOOLS.is_server_tool(name)
        && caller.may_call(&tool)
    {
        return json_result(help_of(&tool.definition, None));
    }
    if let Some(server) = caller.server_tool(name) {
        let def = ToolDefinition::new(
            server.name,
            server.tool.description.as_deref().unwrap_or_default(),
            server.schema.schema().clone(),
        );
        return json_result(help_of(
            &def,
            Some("a Toolsmith server tool: call it directly (not through use_tool)"),
        ));
    }
    not_found(caller, name).await
}

fn help_of(def: &ToolDefinition, note: Option<&str>) -> Value {
    let mut out = json!({
        "name": def.name,
        "description": def.description,
        "parameters": def.parameters,
        "parameterDocs": parameter_docs(&def.parameters),
    });
    if let Some(category) = &def.category {
        object::set(&mut out, "category", json!(category));
    }
    if let Some(note) = note {
        object::set(&mut out, "note", json!(note));
    }
    out
}

async fn use_tool(caller: &Caller<'_>, name: &str, arguments: Option<Value>) -> CallToolResult {
    if let Some(refused) = refuse_server_tool("use_tool", name) {
        return refused;
    }
    let Some(tool) = caller.find_tool(name) else {
        return not_found(caller, name).await;
    };
    // The pipeline applies the tool max limits, as on every path.
    let args = arguments.unwrap_or_else(|| json!({}));
    let res = caller
        .service()
        .execute(name, args, caller.tool_context())
        .await;
    call_result(with_docs(res, &tool.definition))
}

/// An invalid-arguments failure gets the tool's parameter docs, so the model can correct itself
/// (the schema is already in its details, once).
fn with_docs(mut res: ToolResult, def: &ToolDefinition) -> ToolResult {
    if res.error_kind() == Some(ErrorKind::InvalidArguments)
        && let Value::Object(content) = &mut res.content
    {
        content.insert(
            "parameterDocs".to_owned(),
            json!(parameter_docs(&def.parameters)),
        );
        content
            .entry("schema".to_owned())
            .or_insert_with(|| def.parameters.clone());
    }
    res
}

async fn batch(caller: &Caller<'_>, args: BatchArgs) -> CallToolResult {
    let registry = caller.registry();
    let owner = caller.owner();
    // Each slot is either an early refusal or the index of its call in the batch.
    let mut slots: Vec<(String, Result<usize, ToolResult>)> =
        Vec::with_capacity(args.operations.len());
    let mut calls = Vec::new();
    for op in args.operations {
        let name = match (op.tool_name, op.tool) {
            (Some(a), Some(b)) if a != b => {
                slots.push((
                    a,
                    Err(ToolResult::error(
                        ErrorKind::InvalidArguments,
                        "give tool_name or tool, not two different names",
                    )),
                ));
                continue;
            }
            (Some(name), _) | (None, Some(name)) => name,
            (None, None) => {
                slots.push((
                    String::new(),
                    Err(ToolResult::error(
                        ErrorKind::InvalidArguments,
                        "each operation needs tool_name",
                    )),
                ));
                continue;
            }
        };
        if SERVER_TOOLS.is_server_tool(&name) {
            let message = refusal_message("batch_use_tool", &name);
            slots.push((name, Err(ToolResult::error(ErrorKind::Denied, message))));
            continue;
        }
        if caller.find_tool(&name).is_none() {
            let message = hints::unknown_tool(caller, &name).await;
            slots.push((name, Err(ToolResult::error(ErrorKind::NotFound, message))));
            continue;
        }
        let args = match (op.arguments, op.args) {
            (Some(_), Some(_)) => {
                slots.push((
                    name,
                    Err(ToolResult::error(
                        ErrorKind::InvalidArguments,
                        "give arguments or args, not both",
                    )),
                ));
                continue;
            }
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => json!({}),
        };
        slots.push((name.clone(), Ok(calls.len())));
        calls.push(BatchCall {
            name,
            args,
            ctx: caller.tool_context(),
        });
    }
    let mut results: Vec<Option<ToolResult>> = caller
        .service()
        .pipeline()
        .execute_batch(calls)
        .await
        .into_iter()
        .map(Some)
        .collect();

    let mut succeeded = 0;
    let mut failed = 0;
    let entries: Vec<Value> = slots
        .into_iter()
        .enumerate()
        .map(|(index, (name, slot))| {
            let res = match slot {
                Ok(i) => results
                    .get_mut(i)
                    .and_then(Option::take)
                    .unwrap_or_else(|| {
                        ToolResult::error(ErrorKind::Internal, "the batch lost this result")
                    }),
                Err(refused) => refused,
            };
            let res = match registry.get(owner, &name) {
                Some(tool) => with_docs(res, &tool.definition),
                None => res,
            };
            let mut entry = Map::new();
            entry.insert("index".to_owned(), json!(index));
            entry.insert("tool_name".to_owned(), json!(name));
            if res.is_error {
                failed += 1;
                entry.insert("status".to_owned(), json!("error"));
                entry.insert(
                    "error".to_owned(),
                    json!(res.error_message().unwrap_or("the call failed")),
                );
                if let Some(kind) = res.error_kind() {
                    entry.insert("kind".to_owned(), json!(kind));
                }
                if let Value::Object(content) = &res.content {
                    for (k, v) in content {
                        if k != "error" && k != "kind" {
                            entry.insert(k.clone(), v.clone());
                        }
                    }
                }
            } else {
                succeeded += 1;
                entry.insert("status".to_owned(), json!("success"));
                entry.insert("result".to_owned(), res.content);
            }
            Value::Object(entry)
        })
        .collect();
    json_result(json!({
        "results": entries,
        "succeeded": succeeded,
        "failed": failed,
    }))
}

fn refuse_server_tool(via: &str, name: &str) -> Option<CallToolResult> {
    SERVER_TOOLS
        .is_server_tool(name)
        .then(|| error_result("denied", &refusal_message(via, name), Map::new()))
}

fn refusal_message(via: &str, name: &str) -> String {
    format!(
        "{via} cannot run '{name}': meta-tools and control-plane tools are not reachable through use_tool or batch_use_tool; call '{name}' directly"
    )
}

/// A tool this caller cannot call: why, and the closest names it can.
async fn not_found(caller: &Caller<'_>, name: &str) -> CallToolResult {
    let message = hints::unknown_tool(caller, name).await;
    error_result("not_found", &message, Map::new())
}

/// The first sentence of a description, at most [`SUMMARY_CHARS`] characters.
fn summary(description: &str) -> String {
    let first = description.trim();
    let end = first
        .char_indices()
        .find(|&(i, c)| {
            c == '\n'
                || ((c == '.' || c == ';' || c == ':')
                    && first.get(i + 1..).is_some_and(|rest| rest.starts_with(' ')))
        })
        .map_or(first.len(), |(i, _)| i);
    let sentence = first.get(..end).unwrap_or(first).trim_end();
    if sentence.chars().count() <= SUMMARY_CHARS {
        return sentence.to_owned();
    }
    let cut: String = sentence.chars().take(SUMMARY_CHARS).collect();
    format!("{}…", cut.trim_end())
}
