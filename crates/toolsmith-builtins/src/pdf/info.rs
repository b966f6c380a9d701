//! `pdf_info`: a PDF's page count, size, version, encryption and document information
//! (title, author, dates…), without its text.

use lopdf::{Document, Object};
use serde_json::{Map, Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{PdfError, load, opt_str, path_arg};
use crate::workspace::Workspace;

/// The document information entries reported, and their names in the result.
const INFO_FIELDS: &[(&[u8], &str)] = &[
    (b"Title", "title"),
    (b"Author", "author"),
    (b"Subject", "subject"),
    (b"Keywords", "keywords"),
    (b"Creator", "creator"),
    (b"Producer", "producer"),
    (b"CreationDate", "creationDate"),
    (b"ModDate", "modificationDate"),
];

/// Longest metadata value reported, in characters.
const MAX_FIELD_CHARS: usize = 1000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "pdf_info",
        "Describe a PDF file in your workspace: page count, page size, PDF version, whether it \
         is encrypted, and its metadata (title, author, subject, keywords, creator, producer, \
         creation and modification dates). To read its text use read_pdf.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The PDF, relative to the workspace root (e.g. 'docs/report.pdf')."},
                "password": {"type": "string", "description": "The password of an encrypted PDF."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "pdf",
        "info",
        "metadata",
        "pages",
        "count",
        "author",
        "title",
        "document",
        "properties",
    ])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, PdfError> {
    let path = path_arg(ws, args, "path")?;
    let opened = load::open(ws, &path, opt_str(args, "password")?)?;
    let doc = &opened.doc;
    let pages: Vec<_> = doc.page_iter().collect();
    let mut out = json!({
        "path": path.to_string(),
        "size": opened.bytes,
        "pageCount": pages.len(),
        "version": doc.version,
        "encrypted": opened.encrypted,
    });
    if let Some(first) = pages.first()
        && let Some([x0, y0, x1, y1]) = media_box(doc, *first)
    {
        object::set(
            &mut out,
            "pageSize",
            json!({
                "width": (x1 - x0).abs(),
                "height": (y1 - y0).abs(),
                "unit": "pt",
            }),
        );
    }
    let info = info_fields(doc);
    if let Value::Object(map) = &mut out {
        map.extend(info);
    }
    Ok(out)
}

/// The document information dictionary's entries that are text.
fn info_fields(doc: &Document) -> Map<String, Value> {
    let mut out = Map::new();
    let Ok(info) = doc
        .trailer
        .get_deref(b"Info", doc)
        .and_then(Object::as_dict)
    else {
        return out;
    };
    for (key, name) in INFO_FIELDS {
        let Ok(value) = info.get_deref(key, doc) else {
            continue;
        };
        if let Ok(text) = lopdf::decode_text_string(value) {
            let text: String = text
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_FIELD_CHARS)
                .collect();
            out.insert((*name).to_owned(), Value::String(text));
        }
    }
    out
}

/// The page's media box, inherited from its ancestors when it has none (bounded walk).
fn media_box(doc: &Document, page: lopdf::ObjectId) -> Option<[f32; 4]> {
    let mut dict = doc.get_dictionary(page).ok()?;
    for _ in 0..32 {
        if let Ok(Object::Array(values)) = dict.get_deref(b"MediaBox", doc) {
            let nums: Vec<f32> = values.iter().filter_map(|v| v.as_float().ok()).collect();
            return nums.try_into().ok();
        }
        dict = dict.get_deref(b"Parent", doc).ok()?.as_dict().ok()?;
    }
    None
}
