//! `read_file`: a text file of the workspace, whole or by line range; or any file in base64.
//!
//! A file larger than the read limit is read by line ranges: lines are streamed, so only the
//! requested lines (at most the limit in bytes) are held, and the total line count is given.

use std::io::{BufRead, BufReader, Read};

use base64::Engine;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, bool_arg, path_arg};
use crate::workspace::Workspace;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "read_file",
        "Read a file of your workspace. Text is returned whole (up to 512 KB) or by line range \
         (startLine/endLine, 1-based, inclusive) for larger files; encoding base64 returns any \
         file's bytes. Paths are relative to the workspace root.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the workspace root (e.g. 'notes/todo.md')."},
                "startLine": {"type": "integer", "minimum": 1, "description": "First line to return (1-based). Default 1."},
                "endLine": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive). Default: the last line."},
                "encoding": {"type": "string", "enum": ["utf8", "base64"], "default": "utf8", "description": "utf8 (default) for text; base64 for binary files (whole file only)."},
                "lineNumbers": {"type": "boolean", "default": false, "description": "Prefix each line with its number."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["read", "file", "open", "cat", "view", "contents", "lines", "text", "txt", "show"])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", None)?;
    let start = args.get("startLine").and_then(Value::as_u64);
    let end = args.get("endLine").and_then(Value::as_u64);
    let max = ws.limits().max_read_bytes;
    if args.get("encoding").and_then(Value::as_str) == Some("base64") {
        if start.is_some() || end.is_some() {
            return Err(FileError::Args(
                "line ranges apply to text; drop startLine/endLine or use encoding utf8".into(),
            ));
        }
        let bytes = ws.read(&path, max)?;
        return Ok(json!({
            "path": path.to_string(),
            "encoding": "base64",
            "size": bytes.len(),
            "content": base64::engine::general_purpose::STANDARD.encode(&bytes),
        }));
    }
    if let (Some(start), Some(end)) = (start, end)
        && end < start
    {
        return Err(FileError::Args(format!(
            "endLine ({end}) is before startLine ({start}); give endLine >= startLine"
        )));
    }
    let numbered = bool_arg(args, "lineNumbers", false);
    if start.is_none() && end.is_none() {
        let bytes = ws.read(&path, max)?;
        let text = utf8(bytes, &path.to_string())?;
        let total = text.lines().count();
        let content = if numbered {
            number(text.lines(), 1)
        } else {
            text
        };
        return Ok(json!({
            "path": path.to_string(),
            "content": content,
            "totalLines": total,
        }));
    }
    let (file, _) = ws.open_file(&path)?;
    let start = start.unwrap_or(1);
    let end = end.unwrap_or(u64::MAX);
    let (lines, total) = read_lines(file, start, end, max, &path.to_string())?;
    let returned = lines.len() as u64;
    let content = if numbered {
        number(lines.iter().map(String::as_str), start)
    } else {
        lines.join("\n")
    };
    Ok(json!({
        "path": path.to_string(),
        "content": content,
        "startLine": start,
        "endLine": if returned == 0 { start.saturating_sub(1) } else { start + returned - 1 },
        "totalLines": total,
    }))
}

/// Lines `start..=end` of `file` (at most `max` bytes of them) and the file's line count.
fn read_lines(
    file: std::fs::File,
    start: u64,
    end: u64,
    max: u64,
    shown: &str,
) -> Result<(Vec<String>, u64), FileError> {
    let mut reader = BufReader::new(file);
    let mut lines = Vec::new();
    let mut held = 0u64;
    let mut total = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Lines outside the range are skipped a bounded chunk at a time, never held whole.
        let wanted = (start..=end).contains(&(total + 1));
        let read = if wanted {
            (&mut reader)
                .take(max.saturating_sub(held) + 2)
                .read_until(b'\n', &mut buf)
        } else {
            skip_line(&mut reader)
        }
        .map_err(|source| crate::workspace::WorkspaceError::Io {
            op: "read",
            path: shown.to_owned(),
            source,
        })?;
        if read == 0 {
            break;
        }
        total += 1;
        if wanted {
            if buf.last() != Some(&b'\n') && read as u64 > max.saturating_sub(held) {
                return Err(FileError::Args(format!(
                    "lines {start} to {} of '{shown}' are more than {max} bytes; ask for fewer lines",
                    total
                )));
            }
            held += read as u64;
            let line = strip_eol(&buf);
            lines.push(String::from_utf8(line.to_vec()).map_err(|_| not_text(shown))?);
        }
    }
    Ok((lines, total))
}

/// Skips to the end of the current line; the bytes skipped.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<usize> {
    let mut skipped = 0;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(skipped);
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(skipped + at + 1);
            }
            None => {
                let n = chunk.len();
                reader.consume(n);
                skipped += n;
            }
        }
    }
}

fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn utf8(bytes: Vec<u8>, shown: &str) -> Result<String, FileError> {
    String::from_utf8(bytes).map_err(|_| not_text(shown))
}

fn not_text(shown: &str) -> FileError {
    FileError::Args(format!(
        "'{shown}' is not UTF-8 text; read it with encoding: base64"
    ))
}

fn number<'a>(lines: impl Iterator<Item = &'a str>, first: u64) -> String {
    lines
        .zip(first..)
        .map(|(line, n)| format!("{n}\t{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
