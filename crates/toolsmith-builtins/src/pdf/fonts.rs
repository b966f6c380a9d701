//! The fonts `create_pdf` writes with: the PDF standard fonts (Helvetica in four styles,
//! Courier), which every reader has, so nothing is embedded. Their glyph widths (Adobe's
//! core-font metrics, in thousandths of an em) are what lines are wrapped by, and text is
//! encoded in WinAnsiEncoding: Latin-1 plus typographic punctuation. Other characters cannot
//! be shown by these fonts and are written as `?` (and counted, so the caller is told).

use unicode_normalization::UnicodeNormalization;

/// A style of text in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Font {
    Regular,
    Bold,
    Italic,
    BoldItalic,
    Mono,
}

impl Font {
    /// Every font, in the order of their resource names `F1`…`F5`.
    pub const ALL: [Font; 5] = [
        Font::Regular,
        Font::Bold,
        Font::Italic,
        Font::BoldItalic,
        Font::Mono,
    ];

    /// The PostScript name of the standard font.
    #[must_use]
    pub fn base_name(self) -> &'static str {
        match self {
            Font::Regular => "Helvetica",
            Font::Bold => "Helvetica-Bold",
            Font::Italic => "Helvetica-Oblique",
            Font::BoldItalic => "Helvetica-BoldOblique",
            Font::Mono => "Courier",
        }
    }

    /// The name the page resources give it.
    #[must_use]
    pub fn resource(self) -> &'static str {
        match self {
            Font::Regular => "F1",
            Font::Bold => "F2",
            Font::Italic => "F3",
            Font::BoldItalic => "F4",
            Font::Mono => "F5",
        }
    }

    /// The style with bold and italic as given.
    #[must_use]
    pub fn styled(bold: bool, italic: bool) -> Font {
        match (bold, italic) {
            (false, false) => Font::Regular,
            (true, false) => Font::Bold,
            (false, true) => Font::Italic,
            (true, true) => Font::BoldItalic,
        }
    }

    /// The width of `c` (already encodable) in thousandths of an em.
    #[must_use]
    pub fn width(self, c: char) -> u16 {
        let table = match self {
            Font::Mono => return 600,
            Font::Regular | Font::Italic => &HELVETICA,
            Font::Bold | Font::BoldItalic => &HELVETICA_BOLD,
        };
        // The tables hold the printable ASCII characters, from 0x20.
        let width = |ch: char| {
            let index = usize::try_from(u32::from(ch).checked_sub(0x20)?).ok()?;
            table.get(index).copied()
        };
        if let Some(w) = width(c) {
            return w;
        }
        // An accented letter is as wide as its base letter; other symbols are given an em,
        // which only ever wraps a line early.
        match c.nfd().next() {
            Some(base) if base != c => width(base).unwrap_or(1000),
            _ => 1000,
        }
    }

    /// The width of `text` at `size` points.
    #[must_use]
    pub fn text_width(self, text: &str, size: f32) -> f32 {
        let units: u32 = text.chars().map(|c| u32::from(self.width(c))).sum();
        units as f32 * size / 1000.0
    }
}

/// Helvetica's widths for the characters 0x20…0x7e.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278,
    278, // ' '…'/'
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584,
    556, // '0'…'?'
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722,
    778, // '@'…'O'
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
    556, // 'P'…'_'
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556,
    556, // '`'…'o'
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // 'p'…'~'
];

/// Helvetica-Bold's widths for the characters 0x20…0x7e.
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278,
    278, // ' '…'/'
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584,
    611, // '0'…'?'
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722,
    778, // '@'…'O'
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584,
    556, // 'P'…'_'
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611,
    611, // '`'…'o'
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, // 'p'…'~'
];

/// The characters of WinAnsiEncoding's 0x80…0x9f row, by code (`None`: unused codes).
const WIN_ANSI_HIGH: [Option<char>; 32] = [
    Some('€'),
    None,
    Some('‚'),
    Some('ƒ'),
    Some('„'),
    Some('…'),
    Some('†'),
    Some('‡'),
    Some('ˆ'),
    Some('‰'),
    Some('Š'),
    Some('‹'),
    Some('Œ'),
    None,
    Some('Ž'),
    None,
    None,
    Some('‘'),
    Some('’'),
    Some('“'),
    Some('”'),
    Some('•'),
    Some('–'),
    Some('—'),
    Some('˜'),
    Some('™'),
    Some('š'),
    Some('›'),
    Some('œ'),
    None,
    Some('ž'),
    Some('Ÿ'),
];

/// The WinAnsiEncoding byte of `c`, if the standard fonts can show it.
#[must_use]
pub fn win_ansi(c: char) -> Option<u8> {
    let code = c as u32;
    match code {
        0x20..=0x7e | 0xa0..=0xff => u8::try_from(code).ok(),
        _ => WIN_ANSI_HIGH
            .iter()
            .position(|&x| x == Some(c))
            .and_then(|i| u8::try_from(0x80 + i).ok()),
    }
}

/// `text` with every character the fonts cannot show replaced by `?`, tabs by four spaces
/// and other control characters dropped; and how many were replaced.
#[must_use]
pub fn showable(text: &str) -> (String, usize) {
    let mut replaced = 0;
    let mut out = String::with_capacity(text.len());
    // Composed forms first, so "e" + combining acute is the encodable "é".
    for c in text.nfc() {
        match c {
            '\t' => out.push_str("    "),
            '\n' => out.push('\n'),
            c if c.is_control() => {}
            c if win_ansi(c).is_some() => out.push(c),
            _ => {
                replaced += 1;
                out.push('?');
            }
        }
    }
    (out, replaced)
}

/// The bytes of `text` (already [`showable`]) in WinAnsiEncoding.
#[must_use]
pub fn encode(text: &str) -> Vec<u8> {
    text.chars().map(|c| win_ansi(c).unwrap_or(b'?')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_encoding() {
        assert_eq!(Font::Regular.width('W'), 944);
        assert_eq!(Font::Bold.width('i'), 278);
        assert_eq!(Font::Regular.width('é'), Font::Regular.width('e'));
        assert_eq!(Font::Mono.text_width("abcd", 10.0), 24.0);
        assert_eq!(win_ansi('€'), Some(0x80));
        assert_eq!(win_ansi('—'), Some(0x97));
        assert_eq!(win_ansi('é'), Some(0xe9));
        assert_eq!(win_ansi('日'), None);
        assert_eq!(
            showable("a\tb 日本 e\u{301}"),
            ("a    b ?? é".to_owned(), 2)
        );
    }
}
