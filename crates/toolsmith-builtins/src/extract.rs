//! The data extraction tools (003 §16): `extract_structured_data` (what a JSON Schema asks for),
//! `extract_entities`, `extract_table_data` and `summarize_text`, done by the caller's chat
//! model ([`crate::chat`]: the Config Center service `chat_model`, or else the calling MCP
//! client's own model through sampling). Each result says which answered (`model`, `via`).
//!
//! The model is asked for one JSON object, and its answer is checked against a schema — the
//! caller's for `extract_structured_data` (compiled as a tool's parameters are: an object
//! schema, patterns on the linear-time engine), the tool's own for the others — like any input:
//! an answer that breaks it is asked again once with the violations, and a second bad answer
//! is an error naming them. Nothing the model says is returned unchecked.

use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::chat::{self, ChatError, ChatRequest, Via};
use crate::groups::{ToolGroup, off};
use crate::web::{Call, ToolError, str_arg, web_tool_in};

/// The category of the family's tools.
pub const CATEGORY: &str = "Data Extraction";
/// Longest text worked on, in characters.
pub const MAX_TEXT_CHARS: usize = 50_000;
/// Largest schema `extract_structured_data` takes, as JSON text.
pub const MAX_SCHEMA_BYTES: usize = 32 * 1024;
/// Most tokens of the model's answer.
const ANSWER_TOKENS: u32 = 4096;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    "dataExtraction",
    "Data Extraction",
    "Extract structured data (against a JSON Schema), entities and tables from text, and \
     summarize it, with the chat model configured in the Config Center.",
    "sends text to the configured chat model (requests that cost tokens)",
    ResultSource::External,
    &[
        "extract_structured_data",
        "extract_entities",
        "extract_table_data",
        "summarize_text",
    ],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[(
    Effect::Reads,
    &[
        "extract_structured_data",
        "extract_entities",
        "extract_table_data",
        "summarize_text",
    ],
)];

/// The entity types `extract_entities` looks for unless told others.
const ENTITY_TYPES: &[&str] = &[
    "person",
    "organization",
    "location",
    "date",
    "time",
    "money",
    "email",
    "phone",
    "url",
    "product",
    "event",
];

fn text_property() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "description": "The text to work on (at most 50,000 characters)."})
}

fn definitions() -> [ToolDefinition; 4] {
    [
        ToolDefinition::new(
            "extract_structured_data",
            "Extract structured data from text as a JSON object matching a JSON Schema you \
             give (an invoice's fields, a form, a contact card …), with the configured chat \
             model; the result is checked against the schema.",
            json!({"type": "object", "properties": {
                "text": text_property(),
                "schema": {"type": "object", "description": "A JSON Schema of type object: the fields to extract, with their types and descriptions."},
                "instructions": {"type": "string", "maxLength": 2000, "description": "Anything more the model should know (which fields matter, formats)."}
            }, "required": ["text", "schema"], "additionalProperties": false}),
        )
        .with_tags(&["extract", "structured data", "parse text into json", "json schema", "pull fields from", "form"]),
        ToolDefinition::new(
            "extract_entities",
            "Find the named entities in a text — people, organizations, places, dates, amounts, \
             emails, phones, URLs … — with the configured chat model.",
            json!({"type": "object", "properties": {
                "text": text_property(),
                "types": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 40}, "maxItems": 20, "description": "The entity types to find (default: person, organization, location, date, time, money, email, phone, url, product, event)."}
            }, "required": ["text"], "additionalProperties": false}),
        )
        .with_tags(&["entities", "named entities", "who is mentioned", "people and places", "ner"]),
        ToolDefinition::new(
            "extract_table_data",
            "Turn tabular data written in a text (a list, a report, a pasted table) into \
             columns and rows, with the configured chat model.",
            json!({"type": "object", "properties": {
                "text": text_property(),
                "columns": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100}, "maxItems": 50, "description": "The columns wanted, in order (default: the model chooses)."}
            }, "required": ["text"], "additionalProperties": false}),
        )
        .with_tags(&["table", "extract table", "rows and columns", "tabular", "spreadsheet from text"]),
        ToolDefinition::new(
            "summarize_text",
            "Summarize a text (an article, an email thread, notes) in a paragraph or bullet \
             points, with the configured chat model.",
            json!({"type": "object", "properties": {
                "text": text_property(),
                "maxWords": {"type": "integer", "minimum": 10, "maximum": 1000, "default": 100, "description": "About how many words the summary may have."},
                "style": {"type": "string", "enum": ["paragraph", "bullets"], "default": "paragraph", "description": "paragraph: one paragraph; bullets: bullet points."}
            }, "required": ["text"], "additionalProperties": false}),
        )
        .with_tags(&["summarize", "summary", "tl;dr", "shorten", "key points", "digest"]),
    ]
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let [structured, entities, table, summary] = definitions();
    vec![
        web_tool_in(env, CATEGORY, structured, |c| Box::pin(structured_data(c))),
        web_tool_in(env, CATEGORY, entities, |c| Box::pin(extract_entities(c))),
        web_tool_in(env, CATEGORY, table, |c| Box::pin(table_data(c))),
        web_tool_in(env, CATEGORY, summary, |c| Box::pin(summarize(c))),
    ]
}

fn text_arg(args: &Value) -> Result<String, ToolError> {
    let text = str_arg(args, "text")?;
    if text.trim().is_empty() {
        return Err(ToolError::Args(
            "'text' is empty: pass the text to work on".to_owned(),
        ));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(ToolError::Args(format!(
            "'text' is longer than {MAX_TEXT_CHARS} characters: split it and work on the parts"
        )));
    }
    Ok(text.to_owned())
}

/// A list of short strings, or `None` when absent.
fn strings_arg(args: &Value, key: &str) -> Result<Option<Vec<String>>, ToolError> {
    let Some(list) = args.get(key) else {
        return Ok(None);
    };
    let bad = || ToolError::Args(format!("'{key}' must be a list of strings"));
    list.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(|l| (!l.is_empty()).then_some(l))
}

/// Asks the model for a JSON object meeting `schema`, once more with the violations if its
/// first answer breaks it. The object, and the model that answered.
async fn ask_checked(
    call: &Call<'_>,
    tool: &str,
    task: &str,
    text: String,
    schema: &CompiledSchema,
) -> Result<(Value, Answered), ToolError> {
    let mut system = format!(
        "{task}\nAnswer with one JSON object and nothing else, valid against this JSON \
         Schema:\n{}",
        schema.schema()
    );
    let mut problems = String::new();
    let mut answered_by = String::new();
    for attempt in 0..2 {
        if attempt == 1 {
            system.push_str(&format!(
                "\nYour previous answer was not valid: {problems}. Answer again with a valid \
                 JSON object."
            ));
        }
        let answer = chat::ask(
            call.env,
            call.ctx,
            ChatRequest {
                tool: tool.to_owned(),
                system: system.clone(),
                user: text.clone(),
                max_tokens: ANSWER_TOKENS,
            },
        )
        .await
        .map_err(|e| match e {
            ChatError::NotConfigured(why) => {
                ToolError::NotConfigured(format!("data extraction needs a chat model: {why}"))
            }
            ChatError::Failed(why) | ChatError::Declined(why) => ToolError::Provider(why),
            ChatError::Refused(why) => ToolError::Denied(why),
        })?;
        answered_by = match answer.via {
            Via::ChatModel => format!(
                "use a stronger model (the Config Center service '{}', field model)",
                chat::SERVICE
            ),
            Via::Sampling => format!(
                "have your MCP client answer with a stronger model than '{}'",
                answer.model
            ),
        };
        let Some(value) = chat::json_in(&answer.text).filter(Value::is_object) else {
            problems = "it was not a JSON object".to_owned();
            continue;
        };
        let violations = schema.violations(&value);
        if violations.is_empty() {
            return Ok((value, Answered::from(&answer)));
        }
        problems = violations
            .iter()
            .take(10)
            .map(|v| {
                let at = if v.instance_path.is_empty() {
                    "/"
                } else {
                    &v.instance_path
                };
                format!("{at}: {}", v.message)
            })
            .collect::<Vec<_>>()
            .join("; ");
    }
    Err(ToolError::Provider(format!(
        "the chat model's answer did not match the schema twice ({problems}): simplify the \
         schema, give instructions, or {answered_by}"
    )))
}

/// Which model answered, as each result tells it.
struct Answered {
    model: String,
    via: Via,
}

impl From<&chat::ChatAnswer> for Answered {
    fn from(answer: &chat::ChatAnswer) -> Self {
        Answered {
            model: answer.model.clone(),
            via: answer.via,
        }
    }
}

/// `result` with the model that answered (`model`) and how it was reached (`via`).
fn told(mut result: Value, by: &Answered) -> Value {
    toolsmith_core::object::set(&mut result, "model", json!(by.model));
    toolsmith_core::object::set(&mut result, "via", json!(by.via.as_str()));
    result
}

/// A schema of the tools' own (a constant of this crate).
fn own_schema(schema: &Value) -> Result<CompiledSchema, ToolError> {
    CompiledSchema::compile(schema)
        .map_err(|e| ToolError::Provider(format!("internal schema does not compile: {e}")))
}

async fn structured_data(call: Call<'_>) -> Result<Value, ToolError> {
    let text = text_arg(&call.args)?;
    let raw = call.args.get("schema").ok_or_else(|| {
        ToolError::Args("'schema' is missing: pass a JSON Schema of type object".to_owned())
    })?;
    if raw.to_string().len() > MAX_SCHEMA_BYTES {
        return Err(ToolError::Args(format!(
            "'schema' is larger than {} KiB: extract fewer fields at once",
            MAX_SCHEMA_BYTES / 1024
        )));
    }
    let schema = CompiledSchema::compile(raw).map_err(|e| {
        ToolError::Args(format!(
            "'schema' is not a usable JSON Schema ({e}): give one of type object with \
             'properties', e.g. {{\"type\": \"object\", \"properties\": {{\"total\": {{\"type\": \
             \"number\"}}}}, \"required\": [\"total\"]}}"
        ))
    })?;
    let mut task = "Extract the data the schema describes from the user's text. Use null (or \
                    leave a field out when the schema allows it) for what the text does not say; \
                    never invent values."
        .to_owned();
    if let Some(more) = call.args.get("instructions").and_then(Value::as_str) {
        task.push_str(&format!("\nInstructions: {more}"));
    }
    let (data, by) = ask_checked(&call, "extract_structured_data", &task, text, &schema).await?;
    Ok(told(json!({"data": data, "valid": true}), &by))
}

async fn extract_entities(call: Call<'_>) -> Result<Value, ToolError> {
    let text = text_arg(&call.args)?;
    let types = strings_arg(&call.args, "types")?
        .unwrap_or_else(|| ENTITY_TYPES.iter().map(|t| (*t).to_owned()).collect());
    let schema = own_schema(&json!({
        "type": "object",
        "properties": {"entities": {"type": "array", "maxItems": 1000, "items": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "type": {"type": "string", "enum": types}},
            "required": ["text", "type"]
        }}},
        "required": ["entities"]
    }))?;
    let task = format!(
        "Find the named entities in the user's text, of these types only: {}. Give each as it \
         is written in the text, once.",
        types.join(", ")
    );
    let (found, by) = ask_checked(&call, "extract_entities", &task, text, &schema).await?;
    let entities = found.get("entities").cloned().unwrap_or_else(|| json!([]));
    let count = entities.as_array().map_or(0, Vec::len);
    Ok(told(json!({"entities": entities, "count": count}), &by))
}

async fn table_data(call: Call<'_>) -> Result<Value, ToolError> {
    let text = text_arg(&call.args)?;
    let columns = strings_arg(&call.args, "columns")?;
    let cell = json!({"type": ["string", "number", "boolean", "null"]});
    let mut columns_schema = json!({"type": "array", "minItems": 1, "items": {"type": "string"}});
    let mut row = json!({"type": "array", "items": cell});
    if let Some(columns) = &columns {
        columns_schema = json!({"const": columns});
        toolsmith_core::object::set(&mut row, "minItems", json!(columns.len()));
        toolsmith_core::object::set(&mut row, "maxItems", json!(columns.len()));
    }
    let schema = own_schema(&json!({
        "type": "object",
        "properties": {"columns": columns_schema, "rows": {"type": "array", "maxItems": 10000, "items": row}},
        "required": ["columns", "rows"]
    }))?;
    let task = match &columns {
        Some(columns) => format!(
            "Extract the table in the user's text with exactly these columns, in this order: \
             {}. One row per record, one cell per column (null when the text does not say).",
            columns.join(", ")
        ),
        None => "Extract the table in the user's text: name its columns, then one row per \
                 record with one cell per column (null when the text does not say)."
            .to_owned(),
    };
    let (table, by) = ask_checked(&call, "extract_table_data", &task, text, &schema).await?;
    let columns = table.get("columns").cloned().unwrap_or(Value::Null);
    let width = columns.as_array().map_or(0, Vec::len);
    let rows = table
        .get("rows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if rows
        .iter()
        .any(|r| r.as_array().map_or(0, Vec::len) != width)
    {
        return Err(ToolError::Provider(format!(
            "the chat model's table has rows of another width than its {width} columns: try \
             again, or name the columns"
        )));
    }
    Ok(told(
        json!({"columns": columns, "rows": rows, "rowCount": rows.len()}),
        &by,
    ))
}

async fn summarize(call: Call<'_>) -> Result<Value, ToolError> {
    let text = text_arg(&call.args)?;
    let max_words = call
        .args
        .get("maxWords")
        .and_then(Value::as_u64)
        .unwrap_or(100)
        .clamp(10, 1000);
    let bullets = call.args.get("style").and_then(Value::as_str) == Some("bullets");
    let schema = own_schema(&json!({
        "type": "object",
        "properties": {"summary": {"type": "string", "minLength": 1}},
        "required": ["summary"]
    }))?;
    let task = format!(
        "Summarize the user's text in at most {max_words} words, {}, keeping the facts, names \
         and figures that matter; add nothing the text does not say.",
        if bullets {
            "as bullet points ('- ' lines)"
        } else {
            "as one paragraph"
        }
    );
    let (answer, by) = ask_checked(&call, "summarize_text", &task, text, &schema).await?;
    let summary = answer
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let words = summary.split_whitespace().count();
    Ok(told(json!({"summary": summary, "words": words}), &by))
}
