//! `create_pdf`: a PDF in the workspace from text or Markdown, written through the workspace
//! (path security, the write limit, the quota).

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::layout::{self, Settings};
use super::markdown;
use super::writer::{self, Metadata};
use super::{PdfError, opt_str, path_arg};
use crate::workspace::{Workspace, WriteOptions};

/// Longest content accepted, in bytes.
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;
/// Most pages a created document may have.
pub const MAX_PAGES: usize = 500;
/// Longest title, author or subject, in characters.
const MAX_META_CHARS: usize = 500;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "create_pdf",
        "Create a PDF document in your workspace from Markdown (headings, bold/italic, lists, \
         code blocks, tables, quotes, rules) or plain text. Up to 1 MB of content and 500 \
         pages. Uses the standard PDF fonts: Latin-1 text and common punctuation; other \
         characters (e.g. CJK, emoji) are written as '?' and counted in the result.",
        json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The document's text: Markdown (default) or plain text."},
                "outputPath": {"type": "string", "description": "Where to write the PDF, relative to the workspace root (e.g. 'reports/summary.pdf')."},
                "format": {"type": "string", "enum": ["markdown", "text"], "default": "markdown", "description": "How content is written: markdown (default) or text (each line as it is)."},
                "title": {"type": "string", "description": "The document's title (metadata)."},
                "author": {"type": "string", "description": "The document's author (metadata)."},
                "subject": {"type": "string", "description": "The document's subject (metadata)."},
                "pageSize": {"type": "string", "enum": ["A4", "Letter"], "default": "A4", "description": "Paper size: A4 (default) or Letter."},
                "fontSize": {"type": "number", "minimum": 6, "maximum": 24, "default": 11, "description": "Body text size in points (6-24, default 11)."},
                "overwrite": {"type": "boolean", "default": true, "description": "Replace an existing file at outputPath (default true)."}
            },
            "required": ["content", "outputPath"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "pdf", "create", "make", "generate", "export", "document", "report", "markdown", "write",
        "convert", "print",
    ])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, PdfError> {
    let path = path_arg(ws, args, "outputPath")?;
    let content = opt_str(args, "content")?
        .ok_or_else(|| PdfError::Args("'content' must be a string".into()))?;
    if content.len() > MAX_CONTENT_BYTES {
        return Err(PdfError::Args(format!(
            "'content' is {} bytes, more than {MAX_CONTENT_BYTES}; split it into several PDFs",
            content.len()
        )));
    }
    let plain = opt_str(args, "format")? == Some("text");
    let (width, height) = match opt_str(args, "pageSize")? {
        Some("Letter") => (612.0, 792.0),
        _ => (595.0, 842.0),
    };
    let font_size = args
        .get("fontSize")
        .and_then(Value::as_f64)
        .map_or(11.0, |s| s.clamp(6.0, 24.0) as f32);
    let settings = Settings {
        width,
        height,
        margin: 56.0,
        font_size,
        paragraph_gap: if plain { 0.0 } else { font_size * 0.5 },
        max_pages: MAX_PAGES,
    };
    let (text, replaced) = super::fonts::showable(content);
    let blocks = if plain {
        markdown::plain(&text)
    } else {
        markdown::markdown(&text)
    };
    let pages = layout::layout(&blocks, settings).map_err(|_| {
        PdfError::Args(format!(
            "the document would have more than {MAX_PAGES} pages; split the content into several PDFs"
        ))
    })?;
    let meta_arg = |key| -> Result<Option<String>, PdfError> {
        Ok(opt_str(args, key)?.map(|v| {
            v.chars()
                .filter(|c| !c.is_control())
                .take(MAX_META_CHARS)
                .collect()
        }))
    };
    let (title, author, subject) = (
        meta_arg("title")?,
        meta_arg("author")?,
        meta_arg("subject")?,
    );
    let meta = Metadata {
        title: title.as_deref(),
        author: author.as_deref(),
        subject: subject.as_deref(),
    };
    let bytes = writer::write(&pages, settings, &meta).map_err(|e| {
        PdfError::Unreadable(format!(
            "the PDF could not be written ({e}); simplify the content"
        ))
    })?;
    let options = WriteOptions {
        overwrite: args
            .get("overwrite")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        create_parents: true,
    };
    let outcome = ws
        .write(&path, &bytes, options)
        .map_err(|e| e.with_hint("make the content shorter"))?;
    let mut out = json!({
        "path": path.to_string(),
        "pageCount": pages.len(),
        "bytes": outcome.bytes,
        "created": outcome.created,
    });
    if replaced > 0 {
        object::set(&mut out, "unsupportedCharacters", json!(replaced));
        object::set(
            &mut out,
            "hint",
            json!(format!(
                "{replaced} characters outside Latin-1 cannot be shown by the standard PDF fonts and \
             were written as '?'"
            )),
        );
    }
    Ok(out)
}
