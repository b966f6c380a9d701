//! A custom table's definition and what its columns accept: the table and column names'
//! syntax, the column types (`text`, `number`, `boolean`, `date`, `datetime`, `json`), a
//! definition read from `create_custom_table`'s arguments ([`Definition::read`]), and a row's
//! data checked against it — a new row ([`Definition::read_row`]) or the changes to one
//! ([`Definition::read_changes`]). Every refusal names the column and the fix.
//!
//! Names are the only part of a definition that reaches a query, and only as a parameter
//! ([`toolsmith_core::data::FieldMatch`]); their syntax (lower-case ASCII letters, digits and
//! underscores, starting with a letter) is checked here before anything is stored.

use chrono::{NaiveDate, SecondsFormat};
use serde_json::{Map, Value, json};
use toolsmith_core::data::{FieldSort, FieldValue};
use toolsmith_core::object;

use crate::personal::fields::instant;
use crate::utilities::{Fail, check_size};

/// Most columns of one table.
pub const MAX_COLUMNS: usize = 50;
/// Longest table or column name.
pub const MAX_NAME: usize = 48;
/// Longest display name.
pub const MAX_DISPLAY_NAME: usize = 100;
/// Longest description of a table (a column's: [`MAX_COLUMN_DESCRIPTION`]).
pub const MAX_DESCRIPTION: usize = 1_000;
pub const MAX_COLUMN_DESCRIPTION: usize = 500;
/// Longest value of a `text` column.
pub const MAX_TEXT: usize = 10_000;
/// Largest value of a `json` column, as JSON text.
pub const MAX_JSON: usize = 16_384;
/// Column names a row's reply uses for itself.
const RESERVED: &[&str] = &["id"];

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Text of at most [`MAX_TEXT`] bytes, searched by `search_custom_records`.
    Text,
    /// A finite number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// A date and time in ISO 8601, kept in UTC (`2026-05-01T12:30:00Z`).
    Datetime,
    /// Any JSON value of at most [`MAX_JSON`] bytes; neither filtered nor sorted on.
    Json,
}

/// Every type's name, as the tools take it.
pub const TYPES: &[&str] = &["text", "number", "boolean", "date", "datetime", "json"];

impl ColumnType {
    fn parse(name: &str) -> Option<ColumnType> {
        Some(match name {
            "text" => ColumnType::Text,
            "number" => ColumnType::Number,
            "boolean" => ColumnType::Boolean,
            "date" => ColumnType::Date,
            "datetime" => ColumnType::Datetime,
            "json" => ColumnType::Json,
            _ => return None,
        })
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Text => "text",
            ColumnType::Number => "number",
            ColumnType::Boolean => "boolean",
            ColumnType::Date => "date",
            ColumnType::Datetime => "datetime",
            ColumnType::Json => "json",
        }
    }

    /// How the store compares this type's values; `None` for `json`.
    #[must_use]
    pub fn sort(self) -> Option<FieldSort> {
        match self {
            ColumnType::Text | ColumnType::Date | ColumnType::Datetime => Some(FieldSort::Text),
            ColumnType::Number => Some(FieldSort::Number),
            ColumnType::Boolean => Some(FieldSort::Bool),
            ColumnType::Json => None,
        }
    }

    fn example(self) -> &'static str {
        match self {
            ColumnType::Text => "\"Dune\"",
            ColumnType::Number => "8.5",
            ColumnType::Boolean => "true",
            ColumnType::Date => "\"2026-05-01\", written YYYY-MM-DD",
            ColumnType::Datetime => {
                "\"2026-05-01T14:30:00+02:00\", ISO 8601, UTC without an offset"
            }
            ColumnType::Json => "{\"any\": [\"JSON\"]}",
        }
    }
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: ColumnType,
    pub required: bool,
    /// The value a new row without this column gets.
    pub default: Option<Value>,
    pub description: Option<String>,
}

impl Column {
    /// `value` as this column keeps it (dates and times normalized), or why it cannot be.
    pub fn read(&self, value: &Value) -> Result<Value, Fail> {
        let name = &self.name;
        let wrong = || {
            Fail::Args(format!(
                "column '{name}' is of type {} (like {}); {} does not fit it",
                self.kind.name(),
                self.kind.example(),
                shown(value)
            ))
        };
        Ok(match self.kind {
            ColumnType::Text => {
                let text = value.as_str().ok_or_else(wrong)?;
                check_size(name, text.len(), MAX_TEXT)?;
                no_nul(name, text)?;
                json!(text)
            }
            ColumnType::Number => {
                let n = value.as_f64().filter(|f| f.is_finite()).ok_or_else(wrong)?;
                // Integers stay integers; other numbers as given.
                if value.is_i64() || value.is_u64() {
                    value.clone()
                } else {
                    json!(n)
                }
            }
            ColumnType::Boolean => Value::Bool(value.as_bool().ok_or_else(wrong)?),
            ColumnType::Date => {
                let text = value.as_str().map(str::trim).ok_or_else(wrong)?;
                let date = NaiveDate::parse_from_str(text, "%Y-%m-%d")
                    .ok()
                    .filter(|d| instant(&d.to_string()).is_some())
                    .ok_or_else(wrong)?;
                json!(date.format("%Y-%m-%d").to_string())
            }
            ColumnType::Datetime => {
                let text = value.as_str().map(str::trim).ok_or_else(wrong)?;
                let at = instant(text).ok_or_else(wrong)?;
                json!(at.to_rfc3339_opts(SecondsFormat::Secs, true))
            }
            ColumnType::Json => {
                let bytes = serde_json::to_vec(value).map_or(usize::MAX, |v| v.len());
                check_size(name, bytes, MAX_JSON)?;
                if contains_nul(value) {
                    return Err(Fail::Args(format!(
                        "column '{name}' contains a NUL character (\\u0000); remove it"
                    )));
                }
                value.clone()
            }
        })
    }

    /// The column as `describe_custom_table` shows it and the table's record stores it.
    #[must_use]
    pub fn view(&self) -> Value {
        let mut out =
            json!({"name": self.name, "type": self.kind.name(), "required": self.required});
        if let Some(default) = &self.default {
            object::set(&mut out, "default", default.clone());
        }
        if let Some(description) = &self.description {
            object::set(&mut out, "description", json!(description));
        }
        out
    }
}

/// A table's definition: its name, how people see it, its columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub name: String,
    pub display_name: String,
    pub description: Option<String>,
    pub columns: Vec<Column>,
}

impl Definition {
    /// The definition `create_custom_table`'s arguments give (`table`, `displayName`,
    /// `description`, `columns`).
    pub fn read(args: &Value) -> Result<Definition, Fail> {
        let name = table_name(args.get("table"))?;
        let display_name = match args.get("displayName") {
            None | Some(Value::Null) => name.clone(),
            Some(v) => label(v, "displayName", MAX_DISPLAY_NAME)?,
        };
        let description = match args.get("description") {
            None | Some(Value::Null) => None,
            Some(v) => Some(label(v, "description", MAX_DESCRIPTION)?),
        };
        let Some(items) = args.get("columns").and_then(Value::as_array) else {
            return Err(Fail::Args(
                "'columns' is required: an array of columns like [{\"name\": \"title\", \
                 \"type\": \"text\", \"required\": true}]"
                    .to_owned(),
            ));
        };
        if items.is_empty() || items.len() > MAX_COLUMNS {
            return Err(Fail::Args(format!(
                "'columns' has {} columns; a table has 1 to {MAX_COLUMNS}: keep the ones you need",
                items.len()
            )));
        }
        let mut columns: Vec<Column> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let column = read_column(item)
                .map_err(|e| Fail::Args(format!("columns[{i}]: {}", e.message())))?;
            if columns.iter().any(|c| c.name == column.name) {
                return Err(Fail::Args(format!(
                    "columns[{i}]: a column named '{}' is there already; column names must differ",
                    column.name
                )));
            }
            columns.push(column);
        }
        Ok(Definition {
            name,
            display_name,
            description,
            columns,
        })
    }

    /// The definition kept in a table's record.
    pub fn from_document(doc: &Value) -> Result<Definition, Fail> {
        let corrupt = || Fail::Run("a stored custom table cannot be read".to_owned());
        let columns = doc["columns"]
            .as_array()
            .ok_or_else(corrupt)?
            .iter()
            .map(|c| {
                Ok(Column {
                    name: c["name"].as_str().ok_or_else(corrupt)?.to_owned(),
                    kind: c["type"]
                        .as_str()
                        .and_then(ColumnType::parse)
                        .ok_or_else(corrupt)?,
                    required: c["required"].as_bool().unwrap_or(false),
                    default: c.get("default").cloned(),
                    description: c["description"].as_str().map(str::to_owned),
                })
            })
            .collect::<Result<Vec<_>, Fail>>()?;
        Ok(Definition {
            name: doc["name"].as_str().ok_or_else(corrupt)?.to_owned(),
            display_name: doc["displayName"].as_str().ok_or_else(corrupt)?.to_owned(),
            description: doc["description"].as_str().map(str::to_owned),
            columns,
        })
    }

    /// The document a table's record keeps.
    #[must_use]
    pub fn document(&self) -> Value {
        let mut doc = json!({
            "name": self.name,
            "displayName": self.display_name,
            "columns": self.columns.iter().map(Column::view).collect::<Vec<_>>(),
        });
        if let Some(description) = &self.description {
            object::set(&mut doc, "description", json!(description));
        }
        doc
    }

    /// The column named `name`, or an error listing the columns.
    pub fn column(&self, name: &str) -> Result<&Column, Fail> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| self.unknown(name))
    }

    fn unknown(&self, name: &str) -> Fail {
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        Fail::Args(format!(
            "table '{}' has no column '{}'; its columns are: {} (see describe_custom_table)",
            self.name,
            name.chars().take(64).collect::<String>(),
            names.join(", ")
        ))
    }

    /// A new row's data: every key a column, every value of its column's type, the required
    /// columns present (`null` counts as absent), the defaults filled in.
    pub fn read_row(&self, data: &Value) -> Result<Map<String, Value>, Fail> {
        let given = self.object(data)?;
        for key in given.keys() {
            self.column(key)?;
        }
        let mut row = Map::new();
        for column in &self.columns {
            match given.get(&column.name) {
                Some(value) if !value.is_null() => {
                    row.insert(column.name.clone(), column.read(value)?);
                }
                _ if column.required => {
                    return Err(Fail::Args(format!(
                        "column '{}' is required (type {}, like {})",
                        column.name,
                        column.kind.name(),
                        column.kind.example()
                    )));
                }
                _ => {
                    if let Some(default) = &column.default {
                        row.insert(column.name.clone(), default.clone());
                    }
                }
            }
        }
        Ok(row)
    }

    /// The changes `data` makes to a row: each column given replaces the stored value, and
    /// `null` clears an optional column. At least one change.
    pub fn read_changes(&self, data: &Value) -> Result<Map<String, Value>, Fail> {
        let given = self.object(data)?;
        if given.is_empty() {
            return Err(Fail::Args(
                "'data' changes nothing: give at least one column and its new value".to_owned(),
            ));
        }
        let mut changes = Map::new();
        for (key, value) in given {
            let column = self.column(key)?;
            let value = if value.is_null() {
                if column.required {
                    return Err(Fail::Args(format!(
                        "column '{key}' is required and cannot be cleared; give a new value instead"
                    )));
                }
                Value::Null
            } else {
                column.read(value)?
            };
            changes.insert(key.clone(), value);
        }
        Ok(changes)
    }

    fn object<'a>(&self, data: &'a Value) -> Result<&'a Map<String, Value>, Fail> {
        data.as_object().ok_or_else(|| {
            let example: Vec<String> = self
                .columns
                .iter()
                .take(2)
                .map(|c| format!("\"{}\": {}", c.name, c.kind.example()))
                .collect();
            Fail::Args(format!(
                "a row's data must be a JSON object of column values, like {{{}}}",
                example.join(", ")
            ))
        })
    }

    /// The text search reads: every `text` column's value.
    #[must_use]
    pub fn search_text(&self, row: &Map<String, Value>) -> String {
        self.columns
            .iter()
            .filter(|c| c.kind == ColumnType::Text)
            .filter_map(|c| row.get(&c.name).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `value` as a filter on the column `name` (exact match on its type).
    pub fn filter_value(&self, name: &str, value: &Value) -> Result<FieldValue, Fail> {
        let column = self.column(name)?;
        if column.kind == ColumnType::Json {
            return Err(Fail::Args(format!(
                "column '{name}' is of type json and cannot be filtered on; filter on another \
                 column, or use search_custom_records"
            )));
        }
        Ok(match column.read(value)? {
            Value::String(text) => FieldValue::Text(text),
            Value::Bool(b) => FieldValue::Bool(b),
            other => FieldValue::Number(other.as_f64().unwrap_or_default()),
        })
    }
}

/// The table name in `value`: its syntax checked.
pub fn table_name(value: Option<&Value>) -> Result<String, Fail> {
    let Some(name) = value.and_then(Value::as_str) else {
        return Err(Fail::Args(
            "'table' is required: the table's name, like \"books\"".to_owned(),
        ));
    };
    check_name(name, "table").map(str::to_owned)
}

/// `name` if it is a table or column name: 1 to [`MAX_NAME`] lower-case ASCII letters, digits
/// and underscores, starting with a letter.
pub fn check_name<'a>(name: &'a str, what: &str) -> Result<&'a str, Fail> {
    let mut bytes = name.bytes();
    let valid = name.len() <= MAX_NAME
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        return Err(Fail::Args(format!(
            "{what} name {} is not allowed: use 1 to {MAX_NAME} lower-case letters, digits and \
             underscores, starting with a letter (like \"reading_list\")",
            shown(&json!(name))
        )));
    }
    Ok(name)
}

fn read_column(item: &Value) -> Result<Column, Fail> {
    let Some(fields) = item.as_object() else {
        return Err(Fail::Args(
            "a column must be an object like {\"name\": \"title\", \"type\": \"text\"}".to_owned(),
        ));
    };
    for key in fields.keys() {
        if ![
            "name",
            "type",
            "required",
            "default",
            "description",
            "displayName",
        ]
        .contains(&key.as_str())
        {
            return Err(Fail::Args(format!(
                "unknown column field '{}'; a column has name, type, required, default, \
                 description and displayName",
                key.chars().take(64).collect::<String>()
            )));
        }
    }
    let name = fields
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Fail::Args("a column needs a 'name', like \"title\"".to_owned()))?;
    let name = check_name(name, "column")?.to_owned();
    if RESERVED.contains(&name.as_str()) {
        return Err(Fail::Args(format!(
            "column name '{name}' is reserved (every row has an id of its own): choose another"
        )));
    }
    let kind = fields
        .get("type")
        .and_then(Value::as_str)
        .and_then(ColumnType::parse)
        .ok_or_else(|| {
            Fail::Args(format!(
                "column '{name}' needs a 'type': one of {}",
                TYPES.join(", ")
            ))
        })?;
    let required = match fields.get("required") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(Fail::Args(format!(
                "column '{name}': 'required' must be true or false"
            )));
        }
    };
    let description = match fields.get("description") {
        None | Some(Value::Null) => None,
        Some(v) => Some(label(v, "description", MAX_COLUMN_DESCRIPTION)?),
    };
    if let Some(v) = fields.get("displayName").filter(|v| !v.is_null()) {
        label(v, "displayName", MAX_DISPLAY_NAME)?;
    }
    let mut column = Column {
        name,
        kind,
        required,
        default: None,
        description,
    };
    if let Some(default) = fields.get("default").filter(|v| !v.is_null()) {
        if required {
            return Err(Fail::Args(format!(
                "column '{}' is required and has a default, which would never be used: drop \
                 one of them",
                column.name
            )));
        }
        column.default = Some(
            column
                .read(default)
                .map_err(|e| Fail::Args(format!("the default of {}", e.message())))?,
        );
    }
    Ok(column)
}

/// A display name or description: a string of at most `max` bytes, trimmed, not empty,
/// without control characters.
fn label(value: &Value, key: &str, max: usize) -> Result<String, Fail> {
    let text = value.as_str().map(str::trim).unwrap_or_default();
    if text.is_empty() {
        return Err(Fail::Args(format!("'{key}' must be a non-empty string")));
    }
    check_size(key, text.len(), max)?;
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(Fail::Args(format!(
            "'{key}' contains control characters; remove them"
        )));
    }
    Ok(text.to_owned())
}

fn no_nul(name: &str, text: &str) -> Result<(), Fail> {
    if text.contains('\0') {
        return Err(Fail::Args(format!(
            "column '{name}' contains a NUL character (\\u0000); remove it"
        )));
    }
    Ok(())
}

fn contains_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(contains_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
        _ => false,
    }
}

/// A value as an error message quotes it: its JSON, cut to 40 characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(40).collect::<String>())
    } else {
        text
    }
}
