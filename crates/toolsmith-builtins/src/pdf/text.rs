//! Text extraction from one page's content stream, by position: a show operator whose baseline
//! is below the last one starts a new line, and one that starts well to the right of where the
//! last text ended gets a space. (lopdf's own extractor only breaks lines at `ET` and `T*`, so
//! the lines of most real documents — placed with `Td` and `Tm` — would run together.)
//!
//! Glyph widths are estimated (half an em per character): enough to tell a word gap from the
//! next glyph of the same word. Text in form XObjects and annotations is not read.

use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::{Document, Encoding, Object, ObjectId};

use super::MAX_DECOMPRESSED;

/// Why a page's text could not be read.
pub type PageError = lopdf::Error;

/// The text of page `page_id` of `doc`.
pub fn page_text(doc: &Document, page_id: ObjectId) -> Result<String, PageError> {
    let fonts = doc.get_page_fonts(page_id)?;
    let mut encodings: BTreeMap<Vec<u8>, Encoding<'_>> = BTreeMap::new();
    for (name, font) in fonts {
        match font.get_font_encoding_with_limit(doc, MAX_DECOMPRESSED) {
            Ok(encoding) => {
                encodings.insert(name, encoding);
            }
            // A bomb in a font is the document's failure, not just this font's.
            Err(e @ lopdf::Error::Decompress(_)) => return Err(e),
            Err(_) => {}
        }
    }
    let content = doc.get_page_content_with_limit(page_id, MAX_DECOMPRESSED)?;
    let mut state = State::default();
    for op in Content::decode_iter(&content) {
        let op = op?;
        state.apply(&op.operator, &op.operands, &encodings);
    }
    Ok(state.finish())
}

/// The text state the extractor tracks: the text and line matrices' translation and scale,
/// the leading, the font and where the last shown text ended.
struct State<'a> {
    out: String,
    /// Text matrix (a b c d e f) and line matrix.
    tm: [f32; 6],
    tlm: [f32; 6],
    leading: f32,
    font_size: f32,
    encoding: Option<&'a Encoding<'a>>,
    /// Baseline and estimated end of the last shown text; `None` before any.
    last: Option<(f32, f32)>,
}

impl Default for State<'_> {
    fn default() -> Self {
        State {
            out: String::new(),
            tm: IDENTITY,
            tlm: IDENTITY,
            leading: 0.0,
            font_size: 12.0,
            encoding: None,
            last: None,
        }
    }
}

const IDENTITY: [f32; 6] = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

fn num(o: Option<&Object>) -> f32 {
    match o {
        Some(Object::Integer(i)) => *i as f32,
        Some(Object::Real(r)) => *r,
        _ => 0.0,
    }
}

impl<'a> State<'a> {
    fn apply(
        &mut self,
        operator: &str,
        operands: &[Object],
        encodings: &'a BTreeMap<Vec<u8>, Encoding<'a>>,
    ) {
        match operator {
            "BT" => {
                self.tm = IDENTITY;
                self.tlm = IDENTITY;
            }
            "Tf" => {
                self.encoding = operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .and_then(|name| encodings.get(name));
                self.font_size = num(operands.get(1));
            }
            "TL" => self.leading = num(operands.first()),
            "Td" => self.move_line(num(operands.first()), num(operands.get(1))),
            "TD" => {
                let ty = num(operands.get(1));
                self.leading = -ty;
                self.move_line(num(operands.first()), ty);
            }
            "Tm" => {
                let mut m = [0.0; 6];
                for (slot, o) in m.iter_mut().zip(operands) {
                    *slot = num(Some(o));
                }
                self.tm = m;
                self.tlm = m;
            }
            "T*" => self.move_line(0.0, -self.leading),
            "Tj" => self.show(operands.first()),
            "TJ" => {
                if let Some(Object::Array(items)) = operands.first() {
                    self.show_array(items);
                }
            }
            "'" => {
                self.move_line(0.0, -self.leading);
                self.show(operands.first());
            }
            "\"" => {
                self.move_line(0.0, -self.leading);
                self.show(operands.get(2));
            }
            _ => {}
        }
    }

    fn move_line(&mut self, tx: f32, ty: f32) {
        let [a, b, c, d, e, f] = self.tlm;
        self.tlm = [a, b, c, d, e + tx * a + ty * c, f + tx * b + ty * d];
        self.tm = self.tlm;
    }

    /// The size of an em in text space on the page (the font size times the matrix's scale).
    fn em(&self) -> f32 {
        (self.font_size * self.tm[3].abs().max(self.tm[0].abs())).max(0.1)
    }

    fn show_array(&mut self, items: &[Object]) {
        for item in items {
            match item {
                Object::String(..) => self.show(Some(item)),
                // A move right of more than a fifth of an em (thousandths of an em, negative
                // to the right) is a word gap.
                Object::Integer(_) | Object::Real(_) => {
                    let adjust = num(Some(item));
                    let shift = -adjust / 1000.0 * self.em();
                    if let Some((_, end)) = &mut self.last {
                        *end += shift;
                    }
                    self.tm[4] += shift;
                    if adjust < -200.0 && !self.out.ends_with([' ', '\n']) {
                        self.out.push(' ');
                    }
                }
                _ => {}
            }
        }
    }

    fn show(&mut self, operand: Option<&Object>) {
        let (Some(Object::String(bytes, _)), Some(encoding)) = (operand, self.encoding) else {
            return;
        };
        let Ok(text) = encoding.bytes_to_string(bytes) else {
            return;
        };
        let (x, y) = (self.tm[4], self.tm[5]);
        let em = self.em();
        if let Some((last_y, last_end)) = self.last {
            if (y - last_y).abs() > em * 0.5 {
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                }
            } else if x > last_end + em * 0.15
                && !self.out.ends_with([' ', '\n'])
                && !text.starts_with(' ')
            {
                self.out.push(' ');
            }
        }
        let advance = text.chars().count() as f32 * em * 0.5;
        self.out.push_str(&text);
        self.tm[4] += advance;
        self.last = Some((y, x + advance));
    }

    fn finish(self) -> String {
        let lines: Vec<&str> = self.out.lines().map(str::trim_end).collect();
        lines.join("\n").trim().to_owned()
    }
}
