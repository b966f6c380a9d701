//! `read_pdf`: the text of a PDF of the workspace, a range of pages at a time.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{PdfError, load, opt_str, path_arg, text};
use crate::workspace::Workspace;

/// Most pages one call reads.
pub const MAX_PAGES_PER_CALL: u64 = 100;
/// Most bytes of text one call returns (half the pipeline's output cap, so the reply fits
/// once escaped).
pub const MAX_TEXT_BYTES: usize = 512 * 1024;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "read_pdf",
        "Extract the text of a PDF file in your workspace, page by page (up to 100 pages and \
         512 KB of text per call; use startPage/endPage for the rest). Scanned pages without a \
         text layer give no text (no OCR). For page count and metadata use pdf_info.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The PDF, relative to the workspace root (e.g. 'docs/report.pdf')."},
                "startPage": {"type": "integer", "minimum": 1, "description": "First page to read (1-based). Default 1."},
                "endPage": {"type": "integer", "minimum": 1, "description": "Last page to read (inclusive). Default: the last page, at most 100 pages after startPage."},
                "byPage": {"type": "boolean", "default": false, "description": "Return the text of each page separately (pages: [{page, text}]) instead of one text."},
                "password": {"type": "string", "description": "The password of an encrypted PDF."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "pdf", "read", "extract", "text", "document", "open", "parse", "content", "pages",
    ])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, PdfError> {
    let path = path_arg(ws, args, "path")?;
    let start = args.get("startPage").and_then(Value::as_u64).unwrap_or(1);
    let end_arg = args.get("endPage").and_then(Value::as_u64);
    if let Some(end) = end_arg
        && end < start
    {
        return Err(PdfError::Args(format!(
            "endPage ({end}) is before startPage ({start}); give endPage >= startPage"
        )));
    }
    let opened = load::open(ws, &path, opt_str(args, "password")?)?;
    let pages: Vec<_> = opened.doc.page_iter().collect();
    let count = pages.len() as u64;
    if start > count {
        return Err(PdfError::Args(format!(
            "startPage {start} is past the last page: '{path}' has {count} pages"
        )));
    }
    let last_wanted = end_arg.unwrap_or(count).min(count);
    let end = last_wanted.min(start + MAX_PAGES_PER_CALL - 1);
    let mut texts: Vec<(u64, String)> = Vec::new();
    let mut unreadable: Vec<Value> = Vec::new();
    let mut held = 0usize;
    let mut truncated = false;
    for page in start..=end {
        let Some(&id) = usize::try_from(page.saturating_sub(1))
            .ok()
            .and_then(|index| pages.get(index))
        else {
            break;
        };
        match text::page_text(&opened.doc, id) {
            Ok(mut text) => {
                if held + text.len() > MAX_TEXT_BYTES {
                    let mut cut = MAX_TEXT_BYTES.saturating_sub(held);
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    truncated = true;
                }
                held += text.len();
                texts.push((page, text));
            }
            Err(e @ lopdf::Error::Decompress(_)) => {
                return Err(load::unreadable(&path.to_string(), &e, false));
            }
            Err(e) => unreadable.push(json!({"page": page, "reason": e.to_string()})),
        }
        if truncated {
            break;
        }
    }
    let last_read = texts.last().map_or(end, |(p, _)| *p);
    let mut out = json!({
        "path": path.to_string(),
        "pageCount": count,
        "startPage": start,
        "endPage": last_read,
        "truncated": truncated || last_read < last_wanted,
    });
    let characters: usize = texts.iter().map(|(_, t)| t.chars().count()).sum();
    object::set(&mut out, "characters", json!(characters));
    if args.get("byPage").and_then(Value::as_bool).unwrap_or(false) {
        object::set(
            &mut out,
            "pages",
            texts
                .iter()
                .map(|(page, text)| json!({"page": page, "text": text}))
                .collect(),
        );
    } else {
        let joined: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
        object::set(&mut out, "text", json!(joined.join("\n\n")));
    }
    if !unreadable.is_empty() {
        object::set(&mut out, "unreadablePages", Value::Array(unreadable));
    }
    if truncated || last_read < last_wanted {
        let next = if truncated { last_read } else { last_read + 1 };
        object::set(
            &mut out,
            "hint",
            json!(format!(
                "more text follows: call read_pdf again with startPage {next}"
            )),
        );
    } else if characters == 0 {
        object::set(
            &mut out,
            "hint",
            json!(
                "no text found on these pages: they may be scanned images (read_pdf does not do OCR)"
            ),
        );
    }
    Ok(out)
}
