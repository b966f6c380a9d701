//! The title and links of an HTML page, read by html5ever's tokenizer (the HTML standard's
//! tokenization, the parser `html2text` builds its tree with): attributes in any quoting,
//! character references decoded, comments, CDATA, and the raw text of `<script>`, `<style>`,
//! `<textarea>`, `<noscript>` and the like never taken for markup.
//!
//! The tree builder's part that matters here is done alongside: the tokenizer is switched to raw
//! text after the elements whose content is text (as the tree builder does), the title is the
//! first `<title>` outside SVG and MathML wherever it stands (as `document.title` is; HTML inside
//! their integration points, `foreignObject` and MathML's text elements, is not told apart), and
//! links resolve against the document's first `<base href>`. One pass, linear in the page, with the
//! title and the links kept capped.

use std::cell::{Cell, RefCell};

use html5ever::TokenizerResult;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Most characters of title text kept (an unclosed `<title>` runs to the end of the page).
const MAX_TITLE_CHARS: usize = 1_000;
/// Most link targets kept before resolution: enough for `max_links` after duplicates and
/// targets that are not web pages are dropped.
const MAX_CANDIDATES: usize = 2_000;
/// Longest `href` kept, in bytes (a longer one is no link a reader follows).
const MAX_HREF_BYTES: usize = 8_192;

/// Elements that end SVG or MathML content when they start inside it (the HTML standard's
/// "breakout" start tags).
const BREAKOUT: &[&str] = &[
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

/// What a page says about itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Outline {
    /// The first title's text, whitespace collapsed; `None` when absent or blank.
    pub title: Option<String>,
    /// Absolute http(s) links, in order, without duplicates.
    pub links: Vec<String>,
}

/// The title and at most `max_links` links of `html`, fetched from `url`.
pub(super) fn outline(html: &str, url: &str, max_links: usize) -> Outline {
    let sink = Sink::default();
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // The sink never asks to run a script, so one feed reads everything.
    while let TokenizerResult::Script(()) = tokenizer.feed(&input) {}
    tokenizer.end();
    let sink = tokenizer.sink;
    let title = sink
        .title
        .into_inner()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Outline {
        title: (!title.is_empty()).then_some(title),
        links: resolve(
            sink.hrefs.into_inner(),
            sink.base.into_inner(),
            url,
            max_links,
        ),
    }
}

/// Where the tokenizer is, for the title.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum TitleState {
    #[default]
    NotYet,
    Reading,
    Done,
}

#[derive(Default)]
struct Sink {
    title: RefCell<String>,
    title_chars: Cell<usize>,
    title_state: Cell<TitleState>,
    /// Open `<svg>` and `<math>` elements.
    foreign_depth: Cell<usize>,
    /// The first `<base href>`.
    base: RefCell<Option<String>>,
    hrefs: RefCell<Vec<String>>,
}

impl Sink {
    fn start_tag(&self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        if self.foreign_depth.get() > 0 {
            if BREAKOUT.contains(&name)
                || (name == "font"
                    && tag
                        .attrs
                        .iter()
                        .any(|a| matches!(&*a.name.local, "color" | "face" | "size")))
            {
                self.foreign_depth.set(0);
            } else {
                if matches!(name, "svg" | "math") && !tag.self_closing {
                    self.foreign_depth.set(self.foreign_depth.get() + 1);
                }
                if name == "a" {
                    self.link(tag);
                }
                return TokenSinkResult::Continue;
            }
        }
        match name {
            "svg" | "math" if !tag.self_closing => self.foreign_depth.set(1),
            "a" => self.link(tag),
            "base" => {
                let mut base = self.base.borrow_mut();
                if base.is_none() {
                    *base = attribute(tag, "href").map(str::to_owned);
                }
            }
            "title" => {
                if self.title_state.get() == TitleState::NotYet {
                    self.title_state.set(TitleState::Reading);
                }
                return TokenSinkResult::RawData(RawKind::Rcdata);
            }
            "textarea" => return TokenSinkResult::RawData(RawKind::Rcdata),
            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                return TokenSinkResult::RawData(RawKind::Rawtext);
            }
            "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
            "plaintext" => return TokenSinkResult::Plaintext,
            _ => {}
        }
        TokenSinkResult::Continue
    }

    fn end_tag(&self, tag: &Tag) {
        match &*tag.name {
            "title" if self.title_state.get() == TitleState::Reading => {
                self.title_state.set(TitleState::Done);
            }
            "svg" | "math" => self
                .foreign_depth
                .set(self.foreign_depth.get().saturating_sub(1)),
            _ => {}
        }
    }

    fn link(&self, tag: &Tag) {
        let Some(href) = attribute(tag, "href") else {
            return;
        };
        let href = href.trim_matches(|c: char| c.is_ascii_whitespace());
        let mut hrefs = self.hrefs.borrow_mut();
        if href.is_empty()
            || href.starts_with('#')
            || href.len() > MAX_HREF_BYTES
            || hrefs.len() >= MAX_CANDIDATES
            // A target of another scheme (mailto:, javascript:) is no page, whatever the base.
            || url::Url::parse(href).is_ok_and(|u| !is_web(&u))
            || hrefs.iter().any(|h| h == href)
        {
            return;
        }
        hrefs.push(href.to_owned());
    }

    fn text(&self, text: &str) {
        if self.title_state.get() != TitleState::Reading {
            return;
        }
        let room = MAX_TITLE_CHARS.saturating_sub(self.title_chars.get());
        let kept: String = text.chars().take(room).collect();
        self.title_chars
            .set(self.title_chars.get() + kept.chars().count());
        self.title.borrow_mut().push_str(&kept);
    }
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(tag) => match tag.kind {
                TagKind::StartTag => return self.start_tag(&tag),
                TagKind::EndTag => self.end_tag(&tag),
            },
            Token::CharacterTokens(text) => self.text(&text),
            Token::EOFToken
            | Token::CommentToken(_)
            | Token::DoctypeToken(_)
            | Token::NullCharacterToken
            | Token::ParseError(_) => {}
        }
        TokenSinkResult::Continue
    }

    /// `<![CDATA[…]]>` is CDATA inside SVG and MathML, a bogus comment elsewhere.
    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.foreign_depth.get() > 0
    }
}

/// The value of `tag`'s attribute `name` (the first, as the standard keeps).
fn attribute<'t>(tag: &'t Tag, name: &str) -> Option<&'t str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn is_web(url: &url::Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// The candidates as absolute http(s) URLs against the page's base, deduplicated, at most `max`.
fn resolve(hrefs: Vec<String>, base: Option<String>, url: &str, max: usize) -> Vec<String> {
    let document = url::Url::parse(url).ok();
    let base = match (&document, base) {
        (Some(document), Some(base)) => document
            .join(base.trim())
            .ok()
            .or_else(|| Some(document.clone())),
        (None, Some(base)) => url::Url::parse(base.trim()).ok(),
        (document, None) => document.clone(),
    };
    let mut links: Vec<String> = Vec::new();
    for href in hrefs {
        let absolute = match &base {
            Some(base) => base.join(&href),
            None => url::Url::parse(&href),
        };
        let Ok(absolute) = absolute else { continue };
        if !is_web(&absolute) {
            continue;
        }
        let absolute = String::from(absolute);
        if !links.contains(&absolute) {
            links.push(absolute);
        }
        if links.len() >= max {
            break;
        }
    }
    links
}

#[cfg(test)]
mod tests;
