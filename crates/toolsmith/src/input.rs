//! Reading what the user hands in: tool files (JSON or YAML, with `codeFile`), call arguments
//! (inline, from a file, or from stdin) and code files.
//!
//! Everything large comes from files or stdin, never from the command line. Every failure is a
//! [`CliError::Input`] whose message names the file.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use toolsmith_core::json_type;
use toolsmith_server::definition::{CreateToolBody, MISSING_CODE};
use toolsmith_server::rest::types::Creator;
use toolsmith_service::CreateTool;

use crate::exit::CliError;

/// `-` as a path: standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

fn shown(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Reads a whole text file, or stdin for `-`.
pub fn read_text(path: &Path, what: &str) -> Result<String, CliError> {
    let read = if is_stdin(path) {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    } else {
        std::fs::read_to_string(path)
    };
    read.map_err(|e| CliError::Input(format!("cannot read {what} {}: {e}", shown(path))))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Yaml,
}

impl Format {
    /// By extension; otherwise (stdin, other names) JSON if the text starts like an object.
    fn of(path: &Path, text: &str) -> Format {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("json") => Format::Json,
            Some("yaml" | "yml") => Format::Yaml,
            _ if text.trim_start().starts_with('{') => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// Reads a tool file (or a patch file) into `T`: JSON or YAML, with `codeFile` (or
/// `code_file`) replaced by the content of that file, resolved relative to the tool file's
/// directory (the current directory for stdin).
pub fn read_tool_file<T: DeserializeOwned>(path: &Path) -> Result<T, CliError> {
    let fields = read_tool_object(path)?;
    serde_json::from_value(Value::Object(fields)).map_err(|e| invalid_tool_file(path, e))
}

/// Reads a new tool's file into the definition every face reads
/// ([`toolsmith_server::definition::CreateToolBody`]: REST's create body, where a command tool
/// may also be written in spec 001's form, `command`, `timeout_seconds` … at the top level),
/// with any field name also in snake_case; returns the service's input and `enabled`.
pub fn read_new_tool_file(path: &Path) -> Result<(CreateTool, Option<bool>), CliError> {
    let mut fields = read_tool_object(path)?;
    let renamed = camel_case_names(&mut fields).map_err(|e| invalid_tool_file(path, e))?;
    let tool: CreateToolBody = serde_json::from_value(Value::Object(fields)).map_err(|e| {
        // An unknown field is named as the file spells it.
        let mut why = e.to_string();
        for (camel, written) in &renamed {
            if let Some(rest) = why.strip_prefix(&format!("unknown field `{camel}`")) {
                why = format!("unknown field `{written}`{rest}");
            }
        }
        invalid_tool_file(path, why)
    })?;
    if tool.lacks_code() {
        return Err(invalid_tool_file(path, MISSING_CODE));
    }
    if tool.created_by == Some(Creator::Llm) {
        return Err(invalid_tool_file(
            path,
            "tools created with the CLI are created by a person: createdBy must be \"user\" or absent",
        ));
    }
    tool.into_input().map_err(|e| invalid_tool_file(path, e))
}

/// Renames the snake_case field names of a tool file to the camelCase ones the definition
/// reads (`requires_approval` → `requiresApproval`), and returns what was renamed (camelCase,
/// as written); the same field under both names is an error.
fn camel_case_names(fields: &mut Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let snake: Vec<String> = fields.keys().filter(|k| k.contains('_')).cloned().collect();
    let mut renamed = Vec::with_capacity(snake.len());
    for key in snake {
        let camel = camel_case(&key);
        if fields.contains_key(&camel) {
            return Err(format!("{camel} is given twice ({key} and {camel})"));
        }
        if let Some(value) = fields.remove(&key) {
            fields.insert(camel.clone(), value);
            renamed.push((camel, key));
        }
    }
    Ok(renamed)
}

fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

fn invalid_tool_file(path: &Path, why: impl std::fmt::Display) -> CliError {
    CliError::Input(format!("invalid tool file {}: {why}", shown(path)))
}

/// A tool file's object, with `codeFile` resolved.
fn read_tool_object(path: &Path) -> Result<Map<String, Value>, CliError> {
    let text = read_text(path, "tool file")?;
    let invalid =
        |why: String| CliError::Input(format!("invalid tool file {}: {why}", shown(path)));
    let value: Value = match Format::of(path, &text) {
        Format::Json => {
            serde_json::from_str(&text).map_err(|e| invalid(format!("not valid JSON: {e}")))?
        }
        Format::Yaml => {
            serde_norway::from_str(&text).map_err(|e| invalid(format!("not valid YAML: {e}")))?
        }
    };
    let Value::Object(mut fields) = value else {
        return Err(invalid(format!(
            "expected an object (name, description, parameters, code …), found {}",
            json_type(&value)
        )));
    };
    let base = if is_stdin(path) {
        PathBuf::from(".")
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    resolve_code_file(&mut fields, &base).map_err(invalid)?;
    Ok(fields)
}

/// Replaces `codeFile` with `code: <content of the file>`.
fn resolve_code_file(fields: &mut Map<String, Value>, base: &Path) -> Result<(), String> {
    let mut code_file = None;
    for key in ["codeFile", "code_file"] {
        if let Some(value) = fields.remove(key) {
            if code_file.is_some() {
                return Err("codeFile is given twice (codeFile and code_file)".to_owned());
            }
            code_file = Some(value);
        }
    }
    let Some(code_file) = code_file else {
        return Ok(());
    };
    let Value::String(relative) = code_file else {
        return Err(format!(
            "codeFile must be a path (a string), found {}",
            json_type(&code_file)
        ));
    };
    if fields.contains_key("code") {
        return Err("give either code or codeFile, not both".to_owned());
    }
    let file = base.join(&relative);
    let code = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read codeFile {}: {e}", file.display()))?;
    fields.insert("code".to_owned(), Value::String(code));
    Ok(())
}

/// The arguments of a call: `--args JSON` (`-` for stdin), `--args-file FILE` (`-` for stdin),
/// or `{}` when neither is given. Any JSON value is returned; the service checks the shape.
pub fn read_args(inline: Option<&str>, file: Option<&Path>) -> Result<Value, CliError> {
    let (text, origin) = match (inline, file) {
        (Some("-"), _) => (
            read_text(Path::new("-"), "arguments")?,
            "--args (stdin)".to_owned(),
        ),
        (Some(text), _) => (text.to_owned(), "--args".to_owned()),
        (None, Some(path)) => (
            read_text(path, "args file")?,
            format!("args file {}", shown(path)),
        ),
        (None, None) => return Ok(Value::Object(Map::new())),
    };
    serde_json::from_str(&text)
        .map_err(|e| CliError::Input(format!("invalid JSON in {origin}: {e}")))
}

/// Whether `--args -` or `--args-file -` reads stdin.
pub fn args_use_stdin(inline: Option<&str>, file: Option<&Path>) -> bool {
    inline == Some("-") || (inline.is_none() && file.is_some_and(is_stdin))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith_service::{CreateTool, ToolPatch};

    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn yaml_with_code_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("js")).unwrap();
        write(dir.path(), "js/t.js", "return args.a;\n");
        let file = write(
            dir.path(),
            "t.yaml",
            "name: t\ndescription: d\nparameters:\n  type: object\ncodeFile: js/t.js\ntags: [x]\n",
        );
        let tool: CreateTool = read_tool_file(&file).unwrap();
        assert_eq!(tool.code, "return args.a;\n");
        assert_eq!(tool.parameters, json!({"type": "object"}));
        assert_eq!(tool.tags, vec!["x".to_owned()]);
    }

    #[test]
    fn bad_files_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "bad.json", "{\"name\": ");
        let err = read_tool_file::<CreateTool>(&file).unwrap_err().to_string();
        assert!(err.starts_with(&format!(
            "invalid tool file {}: not valid JSON",
            file.display()
        )));

        let file = write(
            dir.path(),
            "typo.json",
            r#"{"name":"a","description":"d","parameters":{"type":"object"},"code":"return 1","permisions":[]}"#,
        );
        let err = read_tool_file::<CreateTool>(&file).unwrap_err().to_string();
        assert!(err.contains("typo.json"), "{err}");
        assert!(err.contains("unknown field `permisions`"), "{err}");

        let file = write(dir.path(), "both.yml", "code: x\ncodeFile: y.js\n");
        let err = read_tool_file::<ToolPatch>(&file).unwrap_err().to_string();
        assert!(err.contains("either code or codeFile"), "{err}");

        let file = write(dir.path(), "missing.yml", "codeFile: nope.js\n");
        let err = read_tool_file::<ToolPatch>(&file).unwrap_err().to_string();
        assert!(err.contains("cannot read codeFile"), "{err}");

        let err = read_tool_file::<ToolPatch>(&dir.path().join("absent.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot read tool file"), "{err}");
        assert!(err.contains("absent.json"), "{err}");

        let file = write(dir.path(), "list.yaml", "- a\n- b\n");
        let err = read_tool_file::<ToolPatch>(&file).unwrap_err().to_string();
        assert!(err.contains("found an array"), "{err}");
    }

    #[test]
    fn arguments() {
        assert_eq!(read_args(None, None).unwrap(), json!({}));
        assert_eq!(
            read_args(Some(r#"{"a":1}"#), None).unwrap(),
            json!({"a": 1})
        );
        let err = read_args(Some("{a:1}"), None).unwrap_err().to_string();
        assert!(err.starts_with("invalid JSON in --args:"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "args.json", r#"{"text": "hi"}"#);
        assert_eq!(read_args(None, Some(&file)).unwrap(), json!({"text": "hi"}));
    }
}
