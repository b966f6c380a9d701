//! The content of `create_pdf` as [`Block`]s: Markdown (CommonMark with tables, task lists and
//! strikethrough, parsed by `pulldown-cmark`) or plain text (one paragraph per line).
//!
//! What each Markdown element becomes: headings (six sizes, bold), paragraphs with bold,
//! italic and `code` runs, bulleted and numbered lists (nested by indent), block quotes
//! (indented, italic), fenced and indented code (monospaced, lines kept), tables (one line per
//! row, cells separated by `|`, the header bold), rules, links (their text, then the URL in
//! parentheses), images (their description in brackets). Raw HTML is kept as text.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::fonts::Font;

/// A run of text in one font.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub font: Font,
    pub text: String,
}

/// A block of the document, laid out one after another.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Wrapped text: a heading (`level` 1–6) or a paragraph (`level` 0), `indent` levels in.
    /// A `\n` in a run breaks the line.
    Text {
        level: u8,
        indent: u16,
        runs: Vec<Run>,
    },
    /// Lines kept as written, monospaced.
    Code { indent: u16, lines: Vec<String> },
    /// A horizontal line.
    Rule,
}

/// Plain text: each line a paragraph (an empty line a gap).
#[must_use]
pub fn plain(text: &str) -> Vec<Block> {
    text.lines()
        .map(|line| Block::Text {
            level: 0,
            indent: 0,
            runs: vec![Run {
                font: Font::Regular,
                text: line.to_owned(),
            }],
        })
        .collect()
}

/// Markdown, as blocks.
#[must_use]
pub fn markdown(text: &str) -> Vec<Block> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut b = Builder::default();
    for event in Parser::new_ext(text, options) {
        b.event(event);
    }
    b.flush();
    b.blocks
}

/// Builds blocks from the parser's events.
#[derive(Default)]
struct Builder {
    blocks: Vec<Block>,
    /// The block being filled: its heading level and runs.
    level: u8,
    runs: Vec<Run>,
    /// Open lists: the next number of each numbered one.
    lists: Vec<Option<u64>>,
    quotes: u16,
    bold: u16,
    italic: u16,
    /// A list item's marker, given to the first text of the item.
    marker: Option<String>,
    code: Option<Vec<String>>,
    links: Vec<String>,
    in_image: bool,
    cells: Option<Vec<String>>,
    head_row: bool,
}

impl Builder {
    fn indent(&self) -> u16 {
        u16::try_from(self.lists.len()).unwrap_or(u16::MAX) + self.quotes
    }

    fn font(&self) -> Font {
        Font::styled(
            self.bold > 0 || self.level > 0,
            self.italic > 0 || self.quotes > 0,
        )
    }

    fn push_text(&mut self, text: &str, font: Font) {
        if let Some(cells) = &mut self.cells {
            if let Some(cell) = cells.last_mut() {
                cell.push_str(text);
            }
            return;
        }
        if let Some(marker) = self.marker.take() {
            self.runs.push(Run {
                font: Font::Regular,
                text: marker,
            });
        }
        match self.runs.last_mut() {
            Some(run) if run.font == font => run.text.push_str(text),
            _ => self.runs.push(Run {
                font,
                text: text.to_owned(),
            }),
        }
    }

    /// Ends the block being filled, if it has text.
    fn flush(&mut self) {
        if let Some(marker) = self.marker.take()
            && self.runs.is_empty()
        {
            self.runs.push(Run {
                font: Font::Regular,
                text: marker,
            });
        }
        if self.runs.is_empty() {
            return;
        }
        self.blocks.push(Block::Text {
            level: self.level,
            indent: self.indent(),
            runs: std::mem::take(&mut self.runs),
        });
        self.level = 0;
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some(lines) = &mut self.code {
                    lines.extend(text.lines().map(str::to_owned));
                } else {
                    self.push_text(&text, self.font());
                }
            }
            Event::Code(text) | Event::InlineMath(text) => self.push_text(&text, Font::Mono),
            Event::DisplayMath(text) => {
                self.flush();
                self.blocks.push(Block::Code {
                    indent: self.indent(),
                    lines: text.lines().map(str::to_owned).collect(),
                });
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                self.push_text(text.trim_end_matches('\n'), self.font());
            }
            Event::SoftBreak => self.push_text(" ", self.font()),
            Event::HardBreak => self.push_text("\n", self.font()),
            Event::Rule => {
                self.flush();
                self.blocks.push(Block::Rule);
            }
            Event::TaskListMarker(done) => {
                self.push_text(if done { "[x] " } else { "[ ] " }, Font::Mono);
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[{name}]"), self.font()),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush();
                self.level = heading_level(level);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quotes += 1;
            }
            Tag::CodeBlock(_) => {
                self.flush();
                self.code = Some(Vec::new());
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.marker = Some(marker);
            }
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Link { dest_url, .. } => self.links.push(dest_url.to_string()),
            Tag::Image { .. } => {
                self.in_image = true;
                self.push_text("[image: ", self.font());
            }
            Tag::Table(_) => self.flush(),
            Tag::TableHead => {
                self.head_row = true;
                self.cells = Some(Vec::new());
            }
            Tag::TableRow => self.cells = Some(Vec::new()),
            Tag::TableCell => {
                if let Some(cells) = &mut self.cells {
                    cells.push(String::new());
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item => self.flush(),
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quotes = self.quotes.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                let lines = self.code.take().unwrap_or_default();
                self.blocks.push(Block::Code {
                    indent: self.indent(),
                    lines,
                });
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Link => {
                let url = self.links.pop().unwrap_or_default();
                let shown = self.runs.last().map(|r| r.text.as_str()).unwrap_or("");
                if !url.is_empty() && !shown.ends_with(url.as_str()) && !self.in_image {
                    self.push_text(&format!(" ({url})"), self.font());
                }
            }
            TagEnd::Image => {
                self.in_image = false;
                self.push_text("]", self.font());
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                let cells = self.cells.take().unwrap_or_default();
                let font = if self.head_row {
                    Font::Bold
                } else {
                    Font::Regular
                };
                self.head_row = false;
                self.push_text(&cells.join("  |  "), font);
                self.flush();
            }
            _ => {}
        }
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(blocks: &[Block]) -> Vec<String> {
        blocks
            .iter()
            .map(|b| match b {
                Block::Text { level, runs, .. } => format!(
                    "{level}:{}",
                    runs.iter().map(|r| r.text.as_str()).collect::<String>()
                ),
                Block::Code { lines, .. } => format!("code:{}", lines.join("/")),
                Block::Rule => "rule".into(),
            })
            .collect()
    }

    #[test]
    fn markdown_elements_become_blocks() {
        let md = "# Title\n\nSome **bold** and *it* and `x`.\n\n- one\n- two\n\n1. a\n2. b\n\n\
                  ```\nfn main() {}\n  indented\n```\n\n---\n\n> quoted\n\n| A | B |\n|---|---|\n| 1 | 2 |\n\n\
                  [site](https://e.org) ![logo](l.png)\n\n- [x] done\n";
        let blocks = markdown(md);
        assert_eq!(
            texts(&blocks),
            [
                "1:Title",
                "0:Some bold and it and x.",
                "0:• one",
                "0:• two",
                "0:1. a",
                "0:2. b",
                "code:fn main() {}/  indented",
                "rule",
                "0:quoted",
                "0:A  |  B",
                "0:1  |  2",
                "0:site (https://e.org) [image: logo]",
                "0:• [x] done",
            ]
        );
        let Block::Text { runs, .. } = &blocks[1] else {
            panic!()
        };
        let fonts: Vec<Font> = runs.iter().map(|r| r.font).collect();
        assert_eq!(
            fonts,
            [
                Font::Regular,
                Font::Bold,
                Font::Regular,
                Font::Italic,
                Font::Regular,
                Font::Mono,
                Font::Regular
            ]
        );
    }
}
