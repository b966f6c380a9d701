//! `generate_csv`: CSV text from rows (objects, arrays or single values), with the `csv`
//! crate's writer (quotes only where needed, doubled quotes inside).

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::csv_parse::{MAX_COLUMNS, MAX_ROWS, delimiter};
use super::{Fail, MAX_TEXT_BYTES, array_arg, opt_bool, opt_str_arg};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "generate_csv",
        "Generate CSV text (for a spreadsheet or Excel export) from rows: an array of objects \
         (the header is every key, in order of first appearance), an array of arrays, or an \
         array of single values. Nested objects and arrays become JSON text in their cell.",
        json!({
            "type": "object",
            "properties": {
                "data": {"anyOf": [{"type": "array"}, {"type": "string"}], "description": "The rows, e.g. [{\"name\": \"Ada\", \"age\": 36}], or their JSON text. At most 10000 rows."},
                "columns": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_COLUMNS, "description": "For objects: these keys, in this order (default: every key)."},
                "delimiter": {"type": "string", "default": ",", "description": "One character: \",\" (default), \";\", \"|\", or \"tab\"."},
                "includeHeader": {"type": "boolean", "default": true, "description": "Write the header row for objects (default true)."},
                "escapeFormulas": {"type": "boolean", "default": false, "description": "Prefix cells starting with = + - @ with ' so spreadsheets do not run them as formulas (default false)."}
            },
            "required": ["data"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "csv", "generate", "export", "spreadsheet", "excel", "table", "rows", "columns", "json", "tsv", "download",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let rows = array_arg(args, "data", MAX_ROWS)?;
    let delimiter = delimiter(opt_str_arg(args, "delimiter", ","))?;
    let include_header = opt_bool(args, "includeHeader", true)?;
    let escape = opt_bool(args, "escapeFormulas", false)?;
    let objects = rows.iter().all(Value::is_object) && !rows.is_empty();
    let header: Vec<String> = if objects {
        match args.get("columns") {
            Some(Value::Array(cols)) => cols
                .iter()
                .map(|c| {
                    c.as_str().map(str::to_owned).ok_or_else(|| {
                        Fail::Args("'columns' must be an array of key names (strings)".to_owned())
                    })
                })
                .collect::<Result<_, _>>()?,
            _ => {
                let mut keys: Vec<String> = Vec::new();
                for row in &rows {
                    for k in row.as_object().into_iter().flat_map(|o| o.keys()) {
                        if !keys.contains(k) {
                            if keys.len() == MAX_COLUMNS {
                                return Err(too_wide());
                            }
                            keys.push(k.clone());
                        }
                    }
                }
                keys
            }
        }
    } else {
        Vec::new()
    };
    let mut writer = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_writer(Vec::new());
    let cell = |v: &Value| {
        let text = match v {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if escape { formula_safe(text) } else { text }
    };
    let write = |w: &mut csv::Writer<Vec<u8>>, record: Vec<String>| {
        if record.len() > MAX_COLUMNS {
            return Err(too_wide());
        }
        w.write_record(&record)
            .map_err(|e| Fail::Run(format!("cannot write CSV: {e}")))?;
        if w.get_ref().len() > MAX_TEXT_BYTES {
            return Err(Fail::Args(format!(
                "the CSV would be longer than {MAX_TEXT_BYTES} bytes: send fewer rows"
            )));
        }
        Ok(())
    };
    if objects && include_header {
        write(&mut writer, header.clone())?;
    }
    for row in &rows {
        let record = match row {
            Value::Object(map) if objects => header
                .iter()
                .map(|h| map.get(h).map(cell).unwrap_or_default())
                .collect(),
            Value::Array(items) => items.iter().map(cell).collect(),
            other => vec![cell(other)],
        };
        write(&mut writer, record)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| Fail::Run(format!("cannot write CSV: {e}")))?;
    let csv = String::from_utf8(bytes).map_err(|_| Fail::Run("the CSV is not UTF-8".to_owned()))?;
    Ok(json!({
        "csv": csv,
        "rowCount": rows.len(),
        "columnCount": if objects { header.len() } else { rows.iter().map(|r| r.as_array().map_or(1, Vec::len)).max().unwrap_or(0) },
    }))
}

fn too_wide() -> Fail {
    Fail::Args(format!(
        "more than {MAX_COLUMNS} columns: pick the keys you need with 'columns'"
    ))
}

/// A CSV cell a spreadsheet will not run as a formula: one that starts with `=`, `+`, `-`, `@`,
/// a tab or a carriage return gets a leading `'` (OWASP, "CSV Injection").
pub(crate) fn formula_safe(text: String) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_arrays_and_values() {
        let got = run(&json!({"data": [{"name": "Ada", "note": "says \"hi\", twice"}, {"name": "Bob", "age": 7, "tags": ["a"]}]})).unwrap();
        assert_eq!(
            got["csv"],
            "name,note,age,tags\nAda,\"says \"\"hi\"\", twice\",,\nBob,,7,\"[\"\"a\"\"]\"\n"
        );
        assert_eq!(
            (got["rowCount"].as_u64(), got["columnCount"].as_u64()),
            (Some(2), Some(4))
        );
        let got = run(&json!({"data": "[[1, null, true], [\"x\"]]", "delimiter": ";"})).unwrap();
        assert_eq!(got["csv"], "1;;true\nx\n");
        let got = run(
            &json!({"data": [{"a": 1, "b": 2}], "columns": ["b", "c"], "includeHeader": false}),
        )
        .unwrap();
        assert_eq!(got["csv"], "2,\n");
        let got = run(&json!({"data": ["=1+1", "-3", "ok"], "escapeFormulas": true})).unwrap();
        assert_eq!(got["csv"], "'=1+1\n'-3\nok\n");
        // What parse_csv reads back is what was written.
        let back = super::super::csv_parse::run(
            &json!({"csv": run(&json!({"data": [{"k": "line\nbreak, \"q\""}]})).unwrap()["csv"]}),
        )
        .unwrap();
        assert_eq!(back["data"], json!([{"k": "line\nbreak, \"q\""}]));
    }

    #[test]
    fn bad_input_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        assert!(msg(json!({"data": {"a": 1}})).contains("must be an array"));
        assert!(msg(json!({"data": "[1,"})).contains("not valid JSON"));
        assert!(msg(json!({"data": vec![1; MAX_ROWS + 1]})).contains("the limit is 10000"));
        assert!(msg(json!({"data": [1], "delimiter": "ab"})).contains("one ASCII character"));
        assert!(
            msg(json!({"data": [vec![1; MAX_COLUMNS + 1]]})).contains("more than 1000 columns")
        );
        let big = "x".repeat(200_000);
        assert!(msg(json!({"data": vec![big; 6]})).contains("longer than 1000000 bytes"));
        assert_eq!(run(&json!({"data": []})).unwrap()["csv"], "");
    }
}
