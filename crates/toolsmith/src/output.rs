//! Output: human tables and `key: value` blocks by default, exactly one JSON document with
//! `--json`. Everything meant for a pipe goes to stdout; diagnostics go to stderr.

use std::io::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;
use toolsmith_core::{
    ConsoleEntry, ConsoleLevel, CustomToolRecord, ExecutionRecord, ToolVersionRecord,
};

/// Writes to stdout; a closed pipe (`| head`) is not an error worth reporting.
pub fn stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Writes to stderr, ignoring failures (there is nowhere left to report them).
pub fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Prints one JSON document (pretty, newline-terminated) on stdout.
pub fn json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    stdout(&text)
}

/// A table with aligned columns; the last column is not padded.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&'static str]) -> Table {
        Table {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
                if i + 1 == n {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    let pad = width - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `key: value` lines with aligned values; a multi-line value starts on the next line,
/// indented by two spaces.
#[derive(Default)]
pub struct Block {
    pairs: Vec<(&'static str, String)>,
}

impl Block {
    pub fn field(&mut self, key: &'static str, value: impl Into<String>) -> &mut Self {
        self.pairs.push((key, value.into()));
        self
    }

    pub fn render(&self) -> String {
        let width = self
            .pairs
            .iter()
            .filter(|(_, v)| !v.contains('\n'))
            .map(|(k, _)| k.len() + 1)
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for (key, value) in &self.pairs {
            if value.contains('\n') {
                out.push_str(key);
                out.push_str(":\n");
                for line in value.trim_end_matches('\n').lines() {
                    if !line.is_empty() {
                        out.push_str("  ");
                        out.push_str(line);
                    }
                    out.push('\n');
                }
            } else {
                let label = format!("{key}:");
                out.push_str(format!("{label:<width$} {value}").trim_end());
                out.push('\n');
            }
        }
        out
    }
}

pub fn time(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Pretty JSON for people: objects one field a line, arrays on one line when they fit in
/// [`LINE_WIDTH`] columns (`[["the", 4], ["end", 2]]` rather than ten lines).
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(&mut out, value, 0, 0);
    out
}

const LINE_WIDTH: usize = 80;

/// Writes `value`, whose first character lands in column `column` of a line indented by
/// `indent`.
fn write_pretty(out: &mut String, value: &Value, indent: usize, column: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (key, item)) in map.iter().enumerate() {
                out.extend(std::iter::repeat_n(' ', indent + 2));
                let key = Value::String(key.clone()).to_string();
                out.push_str(&key);
                out.push_str(": ");
                let column = indent + 2 + key.chars().count() + 2;
                write_pretty(out, item, indent + 2, column);
                if i + 1 < map.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.extend(std::iter::repeat_n(' ', indent));
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            let inline = inline(value);
            // The value and the comma after it fit on the line.
            if column + inline.chars().count() < LINE_WIDTH {
                out.push_str(&inline);
                return;
            }
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.extend(std::iter::repeat_n(' ', indent + 2));
                write_pretty(out, item, indent + 2, indent + 2);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.extend(std::iter::repeat_n(' ', indent));
            out.push(']');
        }
        scalar => out.push_str(&inline(scalar)),
    }
}

/// One line, with a space after `,` and `:`.
fn inline(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), inline(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

fn list_or_dash<I: IntoIterator<Item = S>, S: ToString>(items: I) -> String {
    let items: Vec<String> = items.into_iter().map(|s| s.to_string()).collect();
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(", ")
    }
}

/// The listing table.
pub fn tool_table(tools: &[CustomToolRecord]) -> String {
    let mut table = Table::new(&[
        "NAME",
        "STATUS",
        "VERSION",
        "REV",
        "CREATED BY",
        "USES",
        "CATEGORY",
        "ID",
    ]);
    for tool in tools {
        table.row(vec![
            tool.name.clone(),
            tool.status.to_string(),
            tool.version.to_string(),
            tool.revision.to_string(),
            tool.created_by.to_string(),
            tool.usage_count.to_string(),
            tool.category.clone().unwrap_or_else(|| "-".to_owned()),
            tool.id.clone(),
        ]);
    }
    table.render()
}

/// Everything about one tool, code last.
pub fn tool_block(tool: &CustomToolRecord) -> String {
    let mut block = Block::default();
    block
        .field("name", tool.name.clone())
        .field("id", tool.id.clone())
        .field("status", tool.status.to_string())
        .field("version", tool.version.to_string())
        .field("revision", tool.revision.to_string())
        .field("kind", tool.kind.to_string())
        .field("owner", tool.owner.clone())
        .field("created by", tool.created_by.to_string())
        .field(
            "category",
            tool.category.clone().unwrap_or_else(|| "-".into()),
        )
        .field("tags", list_or_dash(&tool.tags))
        .field("permissions", list_or_dash(&tool.permissions))
        .field("requires approval", yes_no(tool.requires_approval))
        .field("uses", tool.usage_count.to_string())
        .field(
            "last used",
            tool.last_used_at
                .as_ref()
                .map_or_else(|| "never".into(), time),
        )
        .field("created", time(&tool.created_at))
        .field("updated", time(&tool.updated_at))
        .field("description", multiline(&tool.description))
        .field("parameters", pretty(&tool.parameters) + "\n");
    if tool.metadata.as_object().is_some_and(|m| !m.is_empty()) {
        block.field("metadata", pretty(&tool.metadata) + "\n");
    }
    block.field("code", multiline(&tool.code));
    block.render()
}

/// A value that is shown on its own lines if it has several.
fn multiline(text: &str) -> String {
    if text.contains('\n') {
        format!("{}\n", text.trim_end_matches('\n'))
    } else {
        text.to_owned()
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The history table; `current` marks the tool's current version.
pub fn version_table(versions: &[ToolVersionRecord], current: i64) -> String {
    let mut table = Table::new(&[
        "VERSION",
        "CREATED",
        "CODE BYTES",
        "PERMISSIONS",
        "DESCRIPTION",
    ]);
    for v in versions {
        let marker = if v.version == current { " *" } else { "" };
        table.row(vec![
            format!("{}{marker}", v.version),
            time(&v.created_at),
            v.code.len().to_string(),
            list_or_dash(&v.permissions),
            one_line(&v.description, 60),
        ]);
    }
    table.render()
}

/// Recent executions, newest first; `ASKED` is what each run asked of its caller's client.
pub fn execution_table(rows: &[ExecutionRecord]) -> String {
    let mut table = Table::new(&["CREATED", "TOOL", "STATUS", "MS", "CALLER", "ASKED"]);
    for r in rows {
        let asked = &r.client_requests;
        let asked = if asked.is_empty() {
            "-".to_owned()
        } else {
            format!(
                "logs {}, progress {}, samples {}, elicitations {}, refused {}",
                asked.logs, asked.progress, asked.samples, asked.elicitations, asked.refused
            )
        };
        table.row(vec![
            time(&r.created_at),
            r.tool_name.clone(),
            r.status.as_str().to_owned(),
            format!("{:.0}", r.duration_ms),
            r.agent_id.clone().unwrap_or_else(|| "-".to_owned()),
            asked,
        ]);
    }
    table.render()
}

/// The first line of `text`, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    if first.chars().count() > max || first.len() < text.trim_end().len() {
        let cut: String = first.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        first.to_owned()
    }
}

/// Console lines of a run, as written to stderr.
pub fn console_lines(entries: &[ConsoleEntry], truncated: bool) -> String {
    let mut out = String::new();
    for entry in entries {
        let level = match entry.level {
            ConsoleLevel::Log => "log",
            ConsoleLevel::Warn => "warn",
            ConsoleLevel::Error => "error",
        };
        for line in entry.message.lines() {
            out.push_str(&format!("[console.{level}] {line}\n"));
        }
    }
    if truncated {
        out.push_str("[console] … more console output was cut\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let mut t = Table::new(&["NAME", "STATUS", "ID"]);
        t.row(vec!["a".into(), "active".into(), "tool_1".into()]);
        t.row(vec![
            "longer_name".into(),
            "disabled".into(),
            "tool_2".into(),
        ]);
        assert_eq!(
            t.render(),
            "NAME         STATUS    ID\n\
             a            active    tool_1\n\
             longer_name  disabled  tool_2\n"
        );
    }

    #[test]
    fn blocks_align_and_indent() {
        let mut b = Block::default();
        b.field("name", "x")
            .field("requires approval", "no")
            .field("code", "a\n\nb\n");
        assert_eq!(
            b.render(),
            "name:              x\nrequires approval: no\ncode:\n  a\n\n  b\n"
        );
    }

    #[test]
    fn pretty_keeps_short_arrays_on_one_line() {
        let value = serde_json::json!({
            "top": [["the", 4], ["end", 2]],
            "empty": {},
            "none": [],
            "nested": {"long": ["a very long string that does not fit", "on one line with the other one"]}
        });
        assert_eq!(
            pretty(&value),
            "{\n  \"empty\": {},\n  \"nested\": {\n    \"long\": [\n      \"a very long string that does not fit\",\n      \"on one line with the other one\"\n    ]\n  },\n  \"none\": [],\n  \"top\": [[\"the\", 4], [\"end\", 2]]\n}"
        );
        let back: Value = serde_json::from_str(&pretty(&value)).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn one_line_cuts() {
        assert_eq!(one_line("short", 10), "short");
        assert_eq!(one_line("two\nlines", 10), "two…");
        assert_eq!(one_line("abcdefghijkl", 5), "abcd…");
    }
}
