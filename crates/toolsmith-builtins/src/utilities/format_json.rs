//! `format_json`: pretty-print, minify, query (`user.items[0].id` or a JSON Pointer, the path
//! grammar HTTP-tool mappings share: `toolsmith_httptool::path`), list keys or values, flatten or
//! sort the keys of JSON.

use std::io::{self, Write};

use serde::Serialize as _;
use serde_json::{Map, Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_httptool::path::{self, Step};

use super::{Fail, MAX_TEXT_BYTES, choice, json_arg, opt_int, opt_str_arg};

const OPERATIONS: &[&str] = &[
    "prettify",
    "minify",
    "get_path",
    "get_keys",
    "get_values",
    "flatten",
    "sort_keys",
];
/// Longest formatted text returned, in bytes (indentation can multiply a deep document).
pub const MAX_OUTPUT_BYTES: usize = 2_000_000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "format_json",
        "Format or query JSON: pretty-print (prettify), minify, get the value at a path \
         (\"user.items[0].id\" or \"/user/items/0/id\"), list the keys or values, flatten nested \
         objects to dotted keys, or sort keys alphabetically. Also tells whether the text is \
         valid JSON: invalid input is answered with the parser's line and column.",
        json!({
            "type": "object",
            "properties": {
                "json": {"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": true}, {"type": "array"}], "description": "The JSON text (at most 1 MB), or the JSON object or array itself."},
                "operation": {"type": "string", "enum": OPERATIONS, "default": "prettify", "description": "prettify (default: indented), minify (no white space), get_path (the value at path), get_keys / get_values (of the top-level object), flatten (nested objects to dotted keys), sort_keys (keys alphabetically, indented)."},
                "path": {"type": "string", "description": "For get_path: \"user.name\", \"items[0].id\" or a JSON Pointer such as \"/items/0/id\"."},
                "indent": {"type": "integer", "minimum": 0, "maximum": 8, "default": 2, "description": "Spaces per level for prettify and sort_keys (default 2)."}
            },
            "required": ["json"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "json", "format", "prettify", "pretty", "beautify", "minify", "indent", "query", "path", "flatten", "keys", "validate", "parse",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let operation = choice(args, "operation", "prettify", OPERATIONS)?;
    let indent = usize::try_from(opt_int(args, "indent", 2, 0, 8)?).unwrap_or(2);
    let data = json_arg(args, "json", MAX_TEXT_BYTES)?;
    let result = match operation {
        "prettify" => json!(to_text(&data, indent)?),
        "minify" => json!(to_text(&data, 0)?),
        "sort_keys" => json!(to_text(&sort_keys(data), indent)?),
        "get_path" => {
            let path = opt_str_arg(args, "path", "");
            if path.is_empty() {
                return Err(Fail::Args(
                    "'path' is required for get_path, e.g. \"user.name\" or \"items[0].id\""
                        .to_owned(),
                ));
            }
            let found = lookup(&data, path)?;
            return Ok(
                json!({"operation": operation, "path": path, "found": found.is_some(), "result": found.cloned().unwrap_or(Value::Null)}),
            );
        }
        "get_keys" => match &data {
            Value::Object(map) => json!(map.keys().collect::<Vec<_>>()),
            Value::Array(items) => json!((0..items.len()).collect::<Vec<_>>()),
            _ => json!([]),
        },
        "get_values" => match data {
            Value::Object(map) => Value::Array(map.into_iter().map(|(_, v)| v).collect()),
            Value::Array(items) => Value::Array(items),
            other => json!([other]),
        },
        _ => {
            let mut flat = Map::new();
            flatten(&data, &mut Vec::new(), &mut flat);
            Value::Object(flat)
        }
    };
    Ok(json!({"operation": operation, "result": result}))
}

/// `value` as JSON text, indented by `indent` spaces (0: minified), at most
/// [`MAX_OUTPUT_BYTES`].
fn to_text(value: &Value, indent: usize) -> Result<String, Fail> {
    let mut out = Capped(Vec::new());
    let spaces = vec![b' '; indent];
    let written = if indent == 0 {
        value.serialize(&mut serde_json::Serializer::new(&mut out))
    } else {
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&spaces);
        value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut out, formatter,
        ))
    };
    written.map_err(|_| {
        Fail::Args(format!(
            "the formatted JSON is longer than {MAX_OUTPUT_BYTES} bytes: use a smaller indent, minify, or send less"
        ))
    })?;
    String::from_utf8(out.0).map_err(|_| Fail::Run("the formatted JSON is not UTF-8".to_owned()))
}

/// A writer that refuses to grow past [`MAX_OUTPUT_BYTES`].
struct Capped(Vec<u8>);

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.0.len() + buf.len() > MAX_OUTPUT_BYTES {
            return Err(io::Error::other("output limit"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn sort_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// Leaves keyed by their path in the one JSON-path grammar (`toolsmith_httptool::path::write`):
/// dotted (`a.b[0].c`), or a JSON Pointer (`/x.y/0/c`) where a member's name holds a `.`, `[` or
/// `]`, is empty, or (the first) starts with `/`; so every key is a path `get_path` reads back.
/// Empty objects and arrays stay as leaves; a document that is one value gives the key `""`.
fn flatten(value: &Value, steps: &mut Vec<Step>, out: &mut Map<String, Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                steps.push(Step::Key(k.clone()));
                flatten(v, steps, out);
                steps.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                steps.push(Step::Index(i));
                flatten(v, steps, out);
                steps.pop();
            }
        }
        leaf => {
            out.insert(path::write(steps), leaf.clone());
        }
    }
}

/// The value at `path`, in the one JSON-path grammar of HTTP-tool mappings
/// (`toolsmith_httptool::path`): dotted keys with `[n]` indexes (`a[0].b`) or a JSON Pointer
/// (`/a/0/b`). The whole path is read before the walk, so a malformed one is an error even where
/// the data ends early.
fn lookup<'v>(data: &'v Value, path: &str) -> Result<Option<&'v Value>, Fail> {
    let parsed = path::parse(path).map_err(|e| Fail::Args(e.to_string()))?;
    Ok(parsed.lookup(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str =
        r#"{"user": {"name": "Ada", "tags": ["x", "y"]}, "items": [{"id": 7}], "b": 1, "a": {}}"#;

    fn op(operation: &str, extra: Value) -> Value {
        let mut args = json!({"json": DOC, "operation": operation});
        if let (Some(a), Value::Object(e)) = (args.as_object_mut(), extra) {
            a.extend(e);
        }
        run(&args).unwrap()
    }

    #[test]
    fn every_operation() {
        assert_eq!(
            run(&json!({"json": "[1,{\"a\":null}]"})).unwrap()["result"],
            "[\n  1,\n  {\n    \"a\": null\n  }\n]"
        );
        // Object keys come out in alphabetical order: JSON objects are unordered.
        assert_eq!(
            op("minify", json!({}))["result"],
            r#"{"a":{},"b":1,"items":[{"id":7}],"user":{"name":"Ada","tags":["x","y"]}}"#
        );
        assert_eq!(
            op("sort_keys", json!({"indent": 0}))["result"],
            r#"{"a":{},"b":1,"items":[{"id":7}],"user":{"name":"Ada","tags":["x","y"]}}"#
        );
        assert_eq!(op("get_path", json!({"path": "items[0].id"}))["result"], 7);
        assert_eq!(
            op("get_path", json!({"path": "/user/tags/1"}))["result"],
            "y"
        );
        let missing = op("get_path", json!({"path": "user.age"}));
        assert_eq!(
            (missing["found"].as_bool(), missing["result"].is_null()),
            (Some(false), true)
        );
        assert_eq!(
            op("get_keys", json!({}))["result"],
            json!(["a", "b", "items", "user"])
        );
        assert_eq!(op("get_values", json!({}))["result"][1], 1);
        assert_eq!(
            op("flatten", json!({}))["result"],
            json!({"user.name": "Ada", "user.tags[0]": "x", "user.tags[1]": "y", "items[0].id": 7, "b": 1, "a": {}})
        );
        // The value itself works as well as its text.
        assert_eq!(
            run(&json!({"json": {"k": [1]}, "operation": "minify"})).unwrap()["result"],
            r#"{"k":[1]}"#
        );
    }

    #[test]
    fn bad_input_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        let m = msg(json!({"json": "{\"a\": 1,}"}));
        assert!(
            m.contains("not valid JSON") && m.contains("line 1 column 9"),
            "{m}"
        );
        assert!(msg(json!({"json": "{}", "operation": "get_path"})).contains("'path' is required"));
        assert!(
            msg(json!({"json": "{}", "operation": "get_path", "path": "a[x]"}))
                .contains("JSON Pointer")
        );
        assert!(
            msg(json!({"json": "{}", "operation": "get_path", "path": "a..b"}))
                .contains("JSON Pointer")
        );
        assert!(
            msg(json!({"json": "{}", "operation": "yamlify"}))
                .starts_with("'operation' must be one of: prettify, minify")
        );
        assert!(msg(json!({"json": "{}", "indent": 9})).contains("from 0 to 8"));
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert!(
            msg(json!({"json": deep})).contains("recursion limit"),
            "serde_json's depth limit"
        );
        assert!(
            msg(json!({"json": " ".repeat(MAX_TEXT_BYTES + 1)}))
                .contains("the limit is 1000000 bytes")
        );
        // 100 levels deep, 8 spaces each: 800 bytes of indent per number, over the output cap.
        let wide = format!(
            "{}{}{}",
            "[".repeat(100),
            vec!["1"; 5000].join(","),
            "]".repeat(100)
        );
        assert!(msg(json!({"json": wide, "indent": 8})).contains("longer than 2000000 bytes"));
    }

    #[test]
    fn get_path_reads_the_grammar_of_http_tool_mappings() {
        let get = |path: &str| {
            run(&json!({"json": DOC, "operation": "get_path", "path": path}))
                .map_err(|e| e.message().to_owned())
        };
        // What the mappings refused, get_path refuses too, with the reason and the fix.
        for (path, reason) in [
            ("items[ 0 ].id", "'[ 0 ]' at character 6 is not an index"),
            ("items[+0].id", "'[+0]' at character 6 is not an index"),
            ("items.[0]", "follows a '.': write items[0], not items.[0]"),
            ("user]", "the ']' at character 5 closes no '['"),
            (
                "/user/~2",
                "the '~' at character 7 is not followed by 0 or 1",
            ),
        ] {
            let message = get(path).unwrap_err();
            assert!(
                message.contains(reason) && message.contains("or as a JSON Pointer"),
                "{path}: {message}"
            );
        }
        let huge = "a.".repeat(600) + "a";
        assert!(get(&huge).unwrap_err().contains("over the limit of 1024"));
        // A leading index reads a top-level array; a pointer reads a key with a '.'.
        let top = run(&json!({"json": "[{\"a.b\": 1}]", "operation": "get_path", "path": "[0]"}))
            .unwrap();
        assert_eq!(top["result"], json!({"a.b": 1}));
        let dotted_key =
            run(&json!({"json": "[{\"a.b\": 1}]", "operation": "get_path", "path": "/0/a.b"}))
                .unwrap();
        assert_eq!(dotted_key["result"], 1);
    }

    /// A member named with a `.`, `[`, `]`, a leading `/` or nothing is written as a JSON
    /// Pointer, so every key `flatten` makes is a path `get_path` reads back to its leaf.
    #[test]
    fn flatten_writes_keys_in_the_path_grammar() {
        let doc = json!({"plain": {"list": [1]}, "x.y": {"a[0]": 2}, "": [{"/k~": 3}], "/top": 4});
        let flat = run(&json!({"json": doc, "operation": "flatten"})).unwrap()["result"].clone();
        assert_eq!(
            flat,
            json!({"plain.list[0]": 1, "/x.y/a[0]": 2, "//0/~1k~0": 3, "/~1top": 4})
        );
        for (key, leaf) in flat.as_object().unwrap() {
            let got = run(&json!({"json": doc, "operation": "get_path", "path": key})).unwrap();
            assert_eq!(&got["result"], leaf, "{key}");
        }
    }
}
