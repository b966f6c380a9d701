//! `parse_csv`: CSV (or TSV, semicolon-separated …) text to rows, with the `csv` crate's
//! RFC 4180 reader: quoted fields, doubled quotes, newlines inside quotes, ragged rows.

use std::collections::HashSet;

use serde_json::{Map, Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, MAX_TEXT_BYTES, opt_bool, opt_str_arg, text_arg};

/// Most data rows one call returns.
pub const MAX_ROWS: usize = 10_000;
/// Most columns a row may have.
pub const MAX_COLUMNS: usize = 1000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "parse_csv",
        "Parse CSV text (a spreadsheet export, TSV, semicolon-separated) into structured rows: \
         objects keyed by the header row, or arrays. Handles quoted fields, doubled quotes and \
         line breaks inside quotes.",
        json!({
            "type": "object",
            "properties": {
                "csv": {"type": "string", "description": "The CSV text (at most 1 MB, 10000 rows)."},
                "delimiter": {"type": "string", "default": ",", "description": "One character: \",\" (default), \";\", \"|\", or \"\\t\" / \"tab\" for TSV."},
                "hasHeader": {"type": "boolean", "default": true, "description": "The first row holds the column names (default true): rows become objects."},
                "trimValues": {"type": "boolean", "default": true, "description": "Trim spaces around values (default true)."},
                "inferTypes": {"type": "boolean", "default": false, "description": "Turn numbers, true/false and empty values into JSON numbers, booleans and null (default false: every value is text)."}
            },
            "required": ["csv"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "csv", "tsv", "parse", "spreadsheet", "excel", "table", "rows", "columns", "import", "comma", "separated", "tabular", "json", "objects",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "csv", MAX_TEXT_BYTES)?;
    let delimiter = delimiter(opt_str_arg(args, "delimiter", ","))?;
    let has_header = opt_bool(args, "hasHeader", true)?;
    let trim = opt_bool(args, "trimValues", true)?;
    let infer = opt_bool(args, "inferTypes", false)?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .trim(if trim {
            csv::Trim::All
        } else {
            csv::Trim::None
        })
        .from_reader(text.as_bytes());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| {
            Fail::Args(format!(
                "row {} is not valid CSV ({e}): check its quotes",
                i + 1
            ))
        })?;
        if record.iter().all(str::is_empty) && record.len() <= 1 {
            continue;
        }
        if rows.len() == MAX_ROWS + usize::from(has_header) {
            return Err(Fail::Args(format!(
                "the CSV has more than {MAX_ROWS} rows: send it in parts"
            )));
        }
        if record.len() > MAX_COLUMNS {
            return Err(Fail::Args(format!(
                "row {} has {} columns; the limit is {MAX_COLUMNS}: check the delimiter",
                i + 1,
                record.len()
            )));
        }
        rows.push(record.iter().map(str::to_owned).collect());
    }
    let cell = |s: String| {
        if infer {
            infer_type(s)
        } else {
            Value::String(s)
        }
    };
    if !has_header {
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let data: Vec<Value> = rows
            .into_iter()
            .map(|r| Value::Array(r.into_iter().map(cell).collect()))
            .collect();
        return Ok(json!({"data": data, "rowCount": data.len(), "columnCount": columns}));
    }
    let mut rows = rows.into_iter();
    let headers = unique_headers(rows.next().unwrap_or_default());
    let mut extra = headers.len();
    let data: Vec<Value> = rows
        .map(|row| {
            let mut object = Map::new();
            let len = row.len();
            for (i, value) in row.into_iter().enumerate() {
                let key = headers
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("column{}", i + 1));
                object.insert(key, cell(value));
            }
            for header in headers.iter().skip(len) {
                object.insert(header.clone(), if infer { Value::Null } else { json!("") });
            }
            extra = extra.max(len);
            Value::Object(object)
        })
        .collect();
    Ok(json!({"headers": headers, "data": data, "rowCount": data.len(), "columnCount": extra}))
}

/// The delimiter byte: one ASCII character, or "tab".
pub(crate) fn delimiter(text: &str) -> Result<u8, Fail> {
    match (text, text.as_bytes()) {
        ("\t" | "\\t" | "tab" | "TAB", _) => Ok(b'\t'),
        (_, &[b]) if b.is_ascii() && !matches!(b, b'"' | b'\n' | b'\r') => Ok(b),
        _ => Err(Fail::Args(
            "'delimiter' must be one ASCII character such as \",\", \";\" or \"|\", or \"tab\" (not a quote or a line break)".to_owned(),
        )),
    }
}

/// Header names made unique (`name`, `name_2`, …) and never empty (`column3`).
fn unique_headers(raw: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    raw.into_iter()
        .enumerate()
        .map(|(i, h)| {
            let base = if h.is_empty() {
                format!("column{}", i + 1)
            } else {
                h
            };
            let mut name = base.clone();
            let mut n = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            name
        })
        .collect()
}

/// `true`/`false`, numbers and empty text as JSON; everything else stays text. Numbers with
/// leading zeros (`007`, zip codes) stay text.
fn infer_type(s: String) -> Value {
    match s.as_str() {
        "" => return Value::Null,
        "true" | "TRUE" | "True" => return json!(true),
        "false" | "FALSE" | "False" => return json!(false),
        _ => {}
    }
    let digits = s.trim_start_matches('-');
    let leading_zero = digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0.");
    if !leading_zero {
        if let Ok(n) = s.parse::<i64>() {
            return json!(n);
        }
        let plain = s
            .bytes()
            .all(|b| b.is_ascii_digit() || b"-+.eE".contains(&b));
        if let Some(n) = s
            .parse::<f64>()
            .ok()
            .filter(|f| plain && f.is_finite())
            .and_then(serde_json::Number::from_f64)
        {
            return Value::Number(n);
        }
    }
    Value::String(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_quotes_and_ragged_rows() {
        let csv =
            "name, age ,note\nAda,36,\"says \"\"hi\"\"\nand more\"\nBob,7\n\n Cy ,x,y,extra\n";
        let got = run(&json!({"csv": csv})).unwrap();
        assert_eq!(got["headers"], json!(["name", "age", "note"]));
        assert_eq!(got["rowCount"], 3);
        assert_eq!(got["columnCount"], 4);
        assert_eq!(
            got["data"][0],
            json!({"name": "Ada", "age": "36", "note": "says \"hi\"\nand more"})
        );
        assert_eq!(
            got["data"][1],
            json!({"name": "Bob", "age": "7", "note": ""})
        );
        assert_eq!(
            got["data"][2],
            json!({"name": "Cy", "age": "x", "note": "y", "column4": "extra"})
        );
    }

    #[test]
    fn delimiters_types_and_no_header() {
        let got = run(&json!({"csv": "a\tb\n1.5\t007\n-2\ttrue\n\tx", "delimiter": "tab", "inferTypes": true})).unwrap();
        assert_eq!(
            got["data"],
            json!([{"a": 1.5, "b": "007"}, {"a": -2, "b": true}, {"a": null, "b": "x"}])
        );
        let got = run(&json!({"csv": "1;2\n3;4", "delimiter": ";", "hasHeader": false})).unwrap();
        assert_eq!(
            got,
            json!({"data": [["1", "2"], ["3", "4"]], "rowCount": 2, "columnCount": 2})
        );
        let dup = run(&json!({"csv": "x,x,,x\n1,2,3,4"})).unwrap();
        assert_eq!(dup["headers"], json!(["x", "x_2", "column3", "x_3"]));
        let raw = run(&json!({"csv": " a ,b\n 1 ,2", "trimValues": false})).unwrap();
        assert_eq!(raw["data"][0][" a "], " 1 ");
    }

    #[test]
    fn bad_input_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        assert!(msg(json!({"csv": "a,b", "delimiter": ",,"})).contains("one ASCII character"));
        assert!(msg(json!({"csv": "a,b", "delimiter": "\""})).contains("not a quote"));
        let rows = "x\n".to_owned() + &"1\n".repeat(MAX_ROWS + 1);
        assert!(msg(json!({"csv": rows})).contains("more than 10000 rows"));
        let fits = "x\n".to_owned() + &"1\n".repeat(MAX_ROWS);
        assert_eq!(run(&json!({"csv": fits})).unwrap()["rowCount"], MAX_ROWS);
        assert!(
            msg(json!({"csv": ",".repeat(MAX_COLUMNS)}))
                .contains("the limit is 1000: check the delimiter")
        );
        assert!(
            msg(json!({"csv": "a".repeat(MAX_TEXT_BYTES + 1)}))
                .contains("the limit is 1000000 bytes")
        );
        assert_eq!(run(&json!({"csv": ""})).unwrap()["rowCount"], 0);
    }
}
