//! Laid-out [`Page`]s as the bytes of a PDF (version 1.7, compressed streams), with the
//! standard fonts in WinAnsiEncoding and a document information dictionary.

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, Stream, dictionary};

use super::fonts::{self, Font};
use super::layout::{Page, Settings};

/// Document information written to the file.
#[derive(Debug, Default)]
pub struct Metadata<'a> {
    pub title: Option<&'a str>,
    pub author: Option<&'a str>,
    pub subject: Option<&'a str>,
}

/// The PDF of `pages`.
pub fn write(pages: &[Page], settings: Settings, meta: &Metadata<'_>) -> Result<Vec<u8>, String> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let mut font_dict = Dictionary::new();
    for font in Font::ALL {
        let id = doc.add_object(dictionary! {
            "Type" => "Font",
            "Subtype" => "Type1",
            "BaseFont" => font.base_name(),
            "Encoding" => "WinAnsiEncoding",
        });
        font_dict.set(font.resource(), id);
    }
    let resources_id = doc.add_object(dictionary! { "Font" => font_dict });
    let mut kids = Vec::with_capacity(pages.len());
    for page in pages {
        let content = Content {
            operations: operations(page),
        };
        let bytes = content.encode().map_err(|e| e.to_string())?;
        let content_id = doc.add_object(Stream::new(Dictionary::new(), bytes));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(Object::from(page_id));
    }
    let count = i64::try_from(kids.len()).unwrap_or(i64::MAX);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), settings.width.into(), settings.height.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    let mut info = dictionary! {
        "Producer" => lopdf::text_string("Toolsmith create_pdf"),
        "CreationDate" => Object::string_literal(pdf_date(chrono::Utc::now())),
    };
    for (key, value) in [
        ("Title", meta.title),
        ("Author", meta.author),
        ("Subject", meta.subject),
    ] {
        if let Some(value) = value {
            info.set(key, lopdf::text_string(value));
        }
    }
    let info_id = doc.add_object(info);
    doc.trailer.set("Info", info_id);
    doc.compress();
    let mut out = Vec::new();
    doc.save_to(&mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The page's drawing operations: each line in its own text object (so readers and text
/// extractors see one line per object), then the rules.
fn operations(page: &Page) -> Vec<Operation> {
    let mut ops = Vec::new();
    for line in &page.lines {
        ops.push(Operation::new("BT", vec![]));
        ops.push(Operation::new(
            "Tm",
            vec![
                1.into(),
                0.into(),
                0.into(),
                1.into(),
                line.x.into(),
                line.y.into(),
            ],
        ));
        for (font, text) in &line.segments {
            ops.push(Operation::new(
                "Tf",
                vec![font.resource().into(), line.size.into()],
            ));
            ops.push(Operation::new(
                "Tj",
                vec![Object::string_literal(fonts::encode(text))],
            ));
        }
        ops.push(Operation::new("ET", vec![]));
    }
    for &(x1, x2, y) in &page.rules {
        ops.push(Operation::new("w", vec![0.75.into()]));
        ops.push(Operation::new("m", vec![x1.into(), y.into()]));
        ops.push(Operation::new("l", vec![x2.into(), y.into()]));
        ops.push(Operation::new("S", vec![]));
    }
    ops
}

/// A PDF date string (`D:YYYYMMDDHHmmSSZ`).
fn pdf_date(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("D:%Y%m%d%H%M%SZ").to_string()
}
