//! Lays [`Block`]s out on pages: words wrapped by the fonts' real widths (a word longer than a
//! line is broken), code lines broken at the line's width, a new page when one is full.

use super::fonts::Font;
use super::markdown::{Block, Run};

/// Points per indent level (lists, quotes).
const INDENT: f32 = 18.0;

/// The page and type settings of a document.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub width: f32,
    pub height: f32,
    pub margin: f32,
    /// Body text size in points.
    pub font_size: f32,
    /// Space after each paragraph, in points (none for plain text: its lines follow on).
    pub paragraph_gap: f32,
    /// Most pages the document may have.
    pub max_pages: usize,
}

/// One line of text: where its baseline starts, and its runs in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub x: f32,
    pub y: f32,
    pub size: f32,
    pub segments: Vec<(Font, String)>,
}

/// One page: its lines and horizontal rules (`x1`, `x2`, `y`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    pub lines: Vec<Line>,
    pub rules: Vec<(f32, f32, f32)>,
}

/// The document would have more than [`Settings::max_pages`] pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyPages;

/// Lays `blocks` out; at least one page, empty when there is nothing.
pub fn layout(blocks: &[Block], settings: Settings) -> Result<Vec<Page>, TooManyPages> {
    let mut out = Cursor {
        settings,
        pages: vec![Page::default()],
        y: settings.height - settings.margin,
    };
    for (i, block) in blocks.iter().enumerate() {
        match block {
            Block::Text {
                level,
                indent,
                runs,
            } => {
                let size = settings.font_size * heading_scale(*level);
                if *level > 0 && i > 0 {
                    out.y -= size * 0.6;
                }
                out.text(runs, size, *indent)?;
                out.y -= if *level > 0 {
                    size * 0.3
                } else {
                    settings.paragraph_gap
                };
            }
            Block::Code { indent, lines } => {
                out.code(lines, settings.font_size * 0.9, *indent)?;
                out.y -= settings.paragraph_gap;
            }
            Block::Rule => {
                out.y -= settings.font_size * 0.5;
                if out.y < settings.margin {
                    out.new_page()?;
                }
                let (x1, x2) = (settings.margin, settings.width - settings.margin);
                let y = out.y;
                out.page().rules.push((x1, x2, y));
                out.y -= settings.font_size * 0.5;
            }
        }
    }
    Ok(out.pages)
}

fn heading_scale(level: u8) -> f32 {
    match level {
        1 => 1.9,
        2 => 1.5,
        3 => 1.25,
        4 => 1.1,
        _ => 1.0,
    }
}

struct Cursor {
    settings: Settings,
    pages: Vec<Page>,
    /// The top of the next line.
    y: f32,
}

impl Cursor {
    #[allow(
        clippy::indexing_slicing,
        reason = "`pages` starts with one page and only grows, so `last` is in bounds"
    )]
    fn page(&mut self) -> &mut Page {
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    fn new_page(&mut self) -> Result<(), TooManyPages> {
        if self.pages.len() >= self.settings.max_pages {
            return Err(TooManyPages);
        }
        self.pages.push(Page::default());
        self.y = self.settings.height - self.settings.margin;
        Ok(())
    }

    fn left(&self, indent: u16) -> f32 {
        let max = self.settings.width / 2.0;
        (self.settings.margin + f32::from(indent) * INDENT).min(max)
    }

    fn line_width(&self, indent: u16) -> f32 {
        self.settings.width - self.settings.margin - self.left(indent)
    }

    /// Places a line of `size` text at the cursor (on a new page when this one is full).
    fn emit(
        &mut self,
        x: f32,
        size: f32,
        segments: Vec<(Font, String)>,
    ) -> Result<(), TooManyPages> {
        let leading = size * 1.3;
        if self.y - leading < self.settings.margin {
            self.new_page()?;
        }
        self.y -= leading;
        let y = self.y + leading - size;
        if segments.iter().any(|(_, t)| !t.is_empty()) {
            self.page().lines.push(Line {
                x,
                y,
                size,
                segments,
            });
        }
        Ok(())
    }

    fn text(&mut self, runs: &[Run], size: f32, indent: u16) -> Result<(), TooManyPages> {
        let x = self.left(indent);
        let width = self.line_width(indent);
        let mut line = LineBuilder::default();
        for run in runs {
            for (i, part) in run.text.split('\n').enumerate() {
                if i > 0 {
                    let done = std::mem::take(&mut line);
                    self.emit(x, size, done.segments)?;
                }
                for token in tokens(part) {
                    if token.starts_with(' ') {
                        line.pending_space = Some(run.font);
                        continue;
                    }
                    for piece in fit_word(token, run.font, size, width) {
                        let w = run.font.text_width(&piece, size);
                        let space = line
                            .pending_space
                            .filter(|_| !line.segments.is_empty())
                            .map_or(0.0, |f| f.text_width(" ", size));
                        if !line.segments.is_empty() && line.width + space + w > width {
                            let done = std::mem::take(&mut line);
                            self.emit(x, size, done.segments)?;
                        }
                        line.push(run.font, &piece, w, size);
                    }
                }
            }
        }
        self.emit(x, size, line.segments)
    }

    fn code(&mut self, lines: &[String], size: f32, indent: u16) -> Result<(), TooManyPages> {
        let x = self.left(indent) + 6.0;
        let per_line = ((self.line_width(indent) - 6.0) / (0.6 * size))
            .floor()
            .max(1.0) as usize;
        for line in lines {
            let chars: Vec<char> = line.chars().collect();
            if chars.is_empty() {
                self.emit(x, size, Vec::new())?;
            }
            for chunk in chars.chunks(per_line) {
                let text: String = chunk.iter().collect();
                self.emit(x, size, vec![(Font::Mono, text)])?;
            }
        }
        Ok(())
    }
}

/// A line being filled.
#[derive(Default)]
struct LineBuilder {
    segments: Vec<(Font, String)>,
    width: f32,
    /// A space (in this font) to put before the next word, unless the line breaks there.
    pending_space: Option<Font>,
}

impl LineBuilder {
    fn push(&mut self, font: Font, word: &str, w: f32, size: f32) {
        if let Some(space_font) = self.pending_space.take()
            && !self.segments.is_empty()
        {
            self.append(space_font, " ");
            self.width += space_font.text_width(" ", size);
        }
        self.append(font, word);
        self.width += w;
    }

    fn append(&mut self, font: Font, text: &str) {
        match self.segments.last_mut() {
            Some((f, t)) if *f == font => t.push_str(text),
            _ => self.segments.push((font, text.to_owned())),
        }
    }
}

/// `text` as words and runs of spaces.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let space = first == ' ';
        let end = rest
            .char_indices()
            .find(|(_, c)| (*c == ' ') != space)
            .map_or(rest.len(), |(i, _)| i);
        let (token, tail) = rest.split_at(end);
        rest = tail;
        Some(token)
    })
}

/// `word` in pieces no wider than `width` (itself when it fits).
fn fit_word(word: &str, font: Font, size: f32, width: f32) -> Vec<String> {
    if font.text_width(word, size) <= width {
        return vec![word.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut w = 0.0;
    for c in word.chars() {
        let cw = f32::from(font.width(c)) * size / 1000.0;
        if !piece.is_empty() && w + cw > width {
            pieces.push(std::mem::take(&mut piece));
            w = 0.0;
        }
        piece.push(c);
        w += cw;
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    const A4: Settings = Settings {
        width: 595.0,
        height: 842.0,
        margin: 56.0,
        font_size: 11.0,
        paragraph_gap: 5.5,
        max_pages: 3,
    };

    fn para(text: &str) -> Block {
        Block::Text {
            level: 0,
            indent: 0,
            runs: vec![Run {
                font: Font::Regular,
                text: text.into(),
            }],
        }
    }

    #[test]
    fn lines_wrap_within_the_margins_and_pages_break() {
        let long = "word ".repeat(400);
        let pages = layout(&[para(&long)], A4).unwrap();
        let max = A4.width - 2.0 * A4.margin;
        for line in pages.iter().flat_map(|p| &p.lines) {
            let w: f32 = line
                .segments
                .iter()
                .map(|(f, t)| f.text_width(t, line.size))
                .sum();
            assert!(w <= max + 0.01, "{w} > {max}");
            assert!(line.y >= A4.margin && line.y <= A4.height - A4.margin);
        }
        let words: usize = pages
            .iter()
            .flat_map(|p| &p.lines)
            .map(|l| l.segments[0].1.split(' ').count())
            .sum();
        assert_eq!(words, 400);
        let huge = "x".repeat(3000);
        assert_eq!(layout(&[para(&huge)], A4).unwrap().len(), 1);
        assert_eq!(
            layout(&[para(&"word ".repeat(50_000))], A4),
            Err(TooManyPages)
        );
    }
}
