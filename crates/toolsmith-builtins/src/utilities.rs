//! The utilities (003 category 24): small, pure tools with no permissions and no I/O beyond
//! `system_info`'s reads of `/proc`.
//!
//! Each tool is one module exposing `definition()` (what the LLM sees) and `run(args)` (the
//! work, as a plain function); [`pure_tool`] turns the pair into a [`RegisteredTool`] whose
//! provider is the tool's group in [`crate::groups`]. The argument readers below are shared by
//! every tool: the pipeline has already checked the schema, but `run` is also called directly,
//! so each reader checks again and names the fix in its error.

pub mod array_operations;
pub mod calc;
pub mod calculate;
pub mod compare_text;
pub mod convert_units;
pub mod count_text;
pub mod csv_parse;
pub mod csv_write;
pub mod date_add;
pub mod date_diff;
pub mod datetime;
pub mod encode;
pub mod extract;
pub mod format_json;
pub mod hash;
pub mod password;
pub mod pattern;
pub mod random_number;
pub mod regex_tool;
pub mod statistics;
pub mod system_info;
pub mod transform_text;
pub mod uuid;
pub mod validate;

use std::sync::Arc;

use crate::groups::{ToolGroup, on};
use async_trait::async_trait;
use serde_json::{Number, Value};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;
use toolsmith_core::{
    ErrorKind, PermissionSet, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Utilities";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[
    on(
        "core",
        "Core",
        "Essential utilities: time, arithmetic, identifiers, hashing, encodings, the host's description.",
        ResultSource::UserData,
        &[
            "get_current_datetime",
            "calculate",
            "generate_uuid",
            "hash_text",
            "encode_decode",
            "system_info",
        ],
    ),
    on(
        "textUtils",
        "Text Utilities",
        "Count, extract, transform, compare and match text; format JSON.",
        ResultSource::UserData,
        &[
            "count_text",
            "extract_from_text",
            "transform_text",
            "compare_text",
            "regex",
            "format_json",
        ],
    ),
    on(
        "dateTime",
        "Date and Time",
        "Differences between dates and date arithmetic.",
        ResultSource::UserData,
        &["date_diff", "date_add"],
    ),
    on(
        "conversion",
        "Conversion",
        "Units of measurement, CSV to and from structured data.",
        ResultSource::UserData,
        &["convert_units", "parse_csv", "generate_csv"],
    ),
    on(
        "generation",
        "Generation",
        "Random passwords and numbers.",
        ResultSource::UserData,
        &["generate_password", "random_number"],
    ),
    on(
        "validation",
        "Validation",
        "Check that a value is a valid email, URL, phone number, UUID and more.",
        ResultSource::UserData,
        &["validate"],
    ),
    on(
        "listOps",
        "List Operations",
        "Sort, filter, deduplicate and chunk arrays.",
        ResultSource::UserData,
        &["array_operations"],
    ),
    on(
        "mathStats",
        "Math and Statistics",
        "Statistical measures of a list of numbers.",
        ResultSource::UserData,
        &["statistics"],
    ),
];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[(
    Effect::Reads,
    &[
        "get_current_datetime",
        "calculate",
        "generate_uuid",
        "hash_text",
        "encode_decode",
        "system_info",
        "count_text",
        "extract_from_text",
        "transform_text",
        "compare_text",
        "regex",
        "format_json",
        "date_diff",
        "date_add",
        "convert_units",
        "parse_csv",
        "generate_csv",
        "generate_password",
        "random_number",
        "validate",
        "array_operations",
        "statistics",
    ],
)];

/// Largest text (in UTF-8 bytes) a text argument may hold, unless a tool says otherwise.
pub const MAX_TEXT_BYTES: usize = 1_000_000;
/// Most elements an array argument may hold, unless a tool says otherwise.
pub const MAX_ARRAY_LEN: usize = 10_000;

/// Why a tool call failed: the arguments (`invalid_arguments`: the caller can fix them) or the
/// work itself (`execution_error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    Args(String),
    Run(String),
}

impl Fail {
    /// The message, whatever the kind.
    #[must_use]
    pub fn message(&self) -> &str {
        match self {
            Fail::Args(m) | Fail::Run(m) => m,
        }
    }
}

/// A bare message is about the arguments: that is what nearly every check of these tools is.
impl From<String> for Fail {
    fn from(message: String) -> Self {
        Fail::Args(message)
    }
}

/// The work of a pure built-in: validated arguments in, content or a failure out.
pub type ToolFn = fn(&Value) -> Result<Value, Fail>;

/// Runs a [`ToolFn`]; a [`Fail`] becomes an `invalid_arguments` or `execution_error` result.
/// Tools whose input can be large (up to a megabyte of text or ten thousand elements) run on
/// the blocking pool, so a long one never holds up an async worker; the small ones run inline.
struct FnExecutor {
    run: ToolFn,
    blocking: bool,
}

#[async_trait]
impl ToolExecutor for FnExecutor {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        let outcome = if self.blocking {
            let run = self.run;
            match tokio::task::spawn_blocking(move || run(&args)).await {
                Ok(outcome) => outcome,
                // The pipeline turns a panic into an `internal` result: hand it on.
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(_) => Err(Fail::Run(
                    "the tool was stopped before it finished".to_owned(),
                )),
            }
        } else {
            (self.run)(&args)
        };
        match outcome {
            Ok(content) => ToolResult::ok(content),
            Err(Fail::Args(message)) => ToolResult::error(ErrorKind::InvalidArguments, message),
            Err(Fail::Run(message)) => ToolResult::error(ErrorKind::ExecutionError, message),
        }
    }
}

/// What a tool's module gives the LLM: its definition.
type DefinitionFn = fn() -> ToolDefinition;

/// How a tool runs: inline on the caller's task, or on the blocking pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    Inline,
    Blocking,
}

/// A built-in tool that only computes (no permissions, no I/O), run by a plain function:
/// `definition` in `category`, its group as provider. The utilities are made with it; a tool of
/// another family that needs nothing from the server may be too.
pub fn pure_tool(
    definition: ToolDefinition,
    category: &str,
    run: ToolFn,
    runs: Runs,
) -> RegisteredTool {
    crate::builtin_tool(
        definition,
        category,
        PermissionSet::new(),
        Arc::new(FnExecutor {
            run,
            blocking: runs == Runs::Blocking,
        }),
    )
}

/// Every tool of the family, ready to register (the utilities need nothing from the server).
pub fn tools(_env: &crate::BuiltinEnv) -> Vec<RegisteredTool> {
    use Runs::{Blocking, Inline};
    let all: [(DefinitionFn, ToolFn, Runs); 22] = [
        (datetime::definition, datetime::run, Inline),
        (date_diff::definition, date_diff::run, Inline),
        (date_add::definition, date_add::run, Inline),
        (calculate::definition, calculate::run, Inline),
        (statistics::definition, statistics::run, Blocking),
        (convert_units::definition, convert_units::run, Inline),
        (uuid::definition, uuid::run, Inline),
        (password::definition, password::run, Inline),
        (random_number::definition, random_number::run, Inline),
        (hash::definition, hash::run, Blocking),
        (encode::definition, encode::run, Blocking),
        (count_text::definition, count_text::run, Blocking),
        (extract::definition, extract::run, Blocking),
        (transform_text::definition, transform_text::run, Blocking),
        (compare_text::definition, compare_text::run, Blocking),
        (regex_tool::definition, regex_tool::run, Blocking),
        (format_json::definition, format_json::run, Blocking),
        (csv_parse::definition, csv_parse::run, Blocking),
        (csv_write::definition, csv_write::run, Blocking),
        (
            array_operations::definition,
            array_operations::run,
            Blocking,
        ),
        (validate::definition, validate::run, Blocking),
        (system_info::definition, system_info::run, Inline),
    ];
    all.into_iter()
        .map(|(definition, run, runs)| pure_tool(definition(), CATEGORY, run, runs))
        .collect()
}

/// The string argument `key`. The schema has already checked it; a missing one is still an
/// error, never a panic.
pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, Fail> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Fail::Args(format!("'{key}' is required and must be a string")))
}

/// The optional string argument `key`, or `default`.
pub(crate) fn opt_str_arg<'a>(args: &'a Value, key: &str, default: &'a str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or(default)
}

/// The string argument `key`, at most `max_bytes` long.
pub(crate) fn text_arg<'a>(args: &'a Value, key: &str, max_bytes: usize) -> Result<&'a str, Fail> {
    let text = str_arg(args, key)?;
    check_size(key, text.len(), max_bytes)?;
    Ok(text)
}

/// An error when `len` bytes of `what` are over `max_bytes`.
pub(crate) fn check_size(what: &str, len: usize, max_bytes: usize) -> Result<(), Fail> {
    if len > max_bytes {
        return Err(Fail::Args(format!(
            "'{what}' is {len} bytes; the limit is {max_bytes} bytes: send a shorter text or split it into parts"
        )));
    }
    Ok(())
}

/// The optional string argument `key`, which must be one of `allowed` (default `default`).
pub(crate) fn choice<'a>(
    args: &'a Value,
    key: &str,
    default: &'a str,
    allowed: &[&str],
) -> Result<&'a str, Fail> {
    let value = match args.get(key) {
        None | Some(Value::Null) => default,
        Some(v) => v.as_str().unwrap_or(""),
    };
    if allowed.contains(&value) {
        Ok(value)
    } else {
        Err(Fail::Args(format!(
            "'{key}' must be one of: {}",
            allowed.join(", ")
        )))
    }
}

/// The required string argument `key`, which must be one of `allowed`.
pub(crate) fn required_choice<'a>(
    args: &'a Value,
    key: &str,
    allowed: &[&str],
) -> Result<&'a str, Fail> {
    if args.get(key).is_none_or(Value::is_null) {
        return Err(Fail::Args(format!(
            "'{key}' is required; use one of: {}",
            allowed.join(", ")
        )));
    }
    choice(args, key, "", allowed)
}

/// The optional boolean argument `key`, or `default`.
pub(crate) fn opt_bool(args: &Value, key: &str, default: bool) -> Result<bool, Fail> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(Fail::Args(format!("'{key}' must be true or false"))),
    }
}

/// The optional integer argument `key` in `min..=max`, or `default`.
pub(crate) fn opt_int(
    args: &Value,
    key: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, Fail> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => as_int(v)
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| Fail::Args(format!("'{key}' must be an integer from {min} to {max}"))),
    }
}

/// A JSON number that is a whole number (`3` or `3.0`) within ±2^53.
pub(crate) fn as_int(v: &Value) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if let Some(n) = v.as_i64() {
        return Some(n);
    }
    v.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() <= EXACT)
        // A whole f64 within ±2^53 converts to i64 exactly.
        .map(|f| f as i64)
}

/// The required finite number argument `key`.
pub(crate) fn num_arg(args: &Value, key: &str) -> Result<f64, Fail> {
    args.get(key)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
        .ok_or_else(|| Fail::Args(format!("'{key}' is required and must be a number")))
}

/// The optional finite number argument `key`, or `default`.
pub(crate) fn opt_num(args: &Value, key: &str, default: f64) -> Result<f64, Fail> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(_) => num_arg(args, key),
    }
}

/// A JSON value given either as itself or as a string of JSON text (the spec's tools take JSON
/// text; models often send the value). `max_bytes` caps the text.
pub(crate) fn json_arg(args: &Value, key: &str, max_bytes: usize) -> Result<Value, Fail> {
    match args.get(key) {
        None | Some(Value::Null) => Err(Fail::Args(format!("'{key}' is required"))),
        Some(Value::String(text)) => {
            check_size(key, text.len(), max_bytes)?;
            serde_json::from_str(text).map_err(|e| {
                Fail::Args(format!(
                    "'{key}' is not valid JSON ({e}): send the value itself or valid JSON text"
                ))
            })
        }
        Some(v) => Ok(v.clone()),
    }
}

/// An array given as itself or as JSON text, with at most `max_len` elements.
pub(crate) fn array_arg(args: &Value, key: &str, max_len: usize) -> Result<Vec<Value>, Fail> {
    let Value::Array(items) = json_arg(args, key, MAX_TEXT_BYTES)? else {
        return Err(Fail::Args(format!(
            "'{key}' must be an array such as [1, 2, 3] (or its JSON text)"
        )));
    };
    if items.len() > max_len {
        return Err(Fail::Args(format!(
            "'{key}' has {} elements; the limit is {max_len}: send fewer",
            items.len()
        )));
    }
    Ok(items)
}

/// `x` as a JSON number; a result that is not finite is a failure of the work.
pub(crate) fn number(x: f64) -> Result<Value, Fail> {
    Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| Fail::Run("the result is not a finite number (it overflowed)".to_owned()))
}

/// `x` rounded to `places` decimal places (values too large to round are returned as they are).
pub(crate) fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    let scaled = (x * scale).round() / scale;
    if scaled.is_finite() { scaled } else { x }
}

/// `x` rounded to 12 significant digits: conversion results without the binary noise
/// (`0.30000000000000004`), still far beyond any measurement's precision.
pub(crate) fn significant(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    // Decimal rounding through the shortest exact text: no scaling error for tiny values.
    format!("{x:.11e}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests;
