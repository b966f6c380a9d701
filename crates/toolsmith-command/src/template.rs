//! The `{{.param}}` template: parsing (with a check of the shell quoting context of every
//! placeholder) and one-pass rendering with every value single-quoted.
//!
//! Rendering never looks at a value's text for placeholders: the template is split into literal
//! and placeholder segments once, and values are only ever appended, quoted, to the output.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::quote::shell_quote;

/// The longest rendered command accepted, in bytes (Linux caps one argv string at 128 KiB).
pub const MAX_RENDERED_LEN: usize = 100_000;
/// The longest placeholder name accepted.
const MAX_NAME_LEN: usize = 64;

/// A parsed command template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
}

/// Why a template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    #[error("the command template is empty")]
    Empty,
    #[error("the command template contains a NUL byte")]
    NulByte,
    #[error("the command template is {len} bytes; the maximum is {max}")]
    TooLong { len: usize, max: usize },
    #[error("placeholder opened at byte {offset} is never closed with `}}}}`")]
    UnterminatedPlaceholder { offset: usize },
    #[error(
        "invalid placeholder `{text}` at byte {offset}: expected `{{{{.name}}}}` with a name of letters, digits and `_`"
    )]
    InvalidPlaceholder { offset: usize, text: String },
    #[error(
        "placeholder `{name}` at byte {offset} is inside {context}; placeholders must stand outside any quotes, backticks or escapes so their quoting holds"
    )]
    PlaceholderInQuotes {
        name: String,
        offset: usize,
        context: &'static str,
    },
    #[error("the command template ends inside {context}")]
    UnterminatedQuote { context: &'static str },
    #[error(
        "a template with placeholders cannot contain a here-document (`<<`): its body would expand quoted values"
    )]
    HereDocument,
}

impl TemplateError {
    /// A stable machine code for this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Empty => "template_empty",
            Self::NulByte => "template_nul_byte",
            Self::TooLong { .. } => "template_too_long",
            Self::UnterminatedPlaceholder { .. } => "template_unterminated_placeholder",
            Self::InvalidPlaceholder { .. } => "template_invalid_placeholder",
            Self::PlaceholderInQuotes { .. } => "template_placeholder_in_quotes",
            Self::UnterminatedQuote { .. } => "template_unterminated_quote",
            Self::HereDocument => "template_here_document",
        }
    }
}

/// Why a call's arguments cannot be rendered into the template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("argument `{param}` contains a NUL byte")]
    NulByte { param: String },
    #[error("the rendered command is {len} bytes; the maximum is {max}")]
    TooLong { len: usize, max: usize },
}

impl RenderError {
    /// A stable machine code for this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Template(err) => err.code(),
            Self::NulByte { .. } => "argument_nul_byte",
            Self::TooLong { .. } => "rendered_too_long",
        }
    }
}

/// Parses `template` and renders it with `args` in one pass (see [`Template::render`]).
pub fn render(template: &str, args: &Map<String, Value>) -> Result<String, RenderError> {
    Template::parse(template)?.render(args)
}

impl Template {
    /// Parses a template, checking that every placeholder is well formed and stands in plain
    /// (unquoted, unescaped) shell context, where a single-quoted value is one inert word.
    pub fn parse(src: &str) -> Result<Template, TemplateError> {
        if src.trim().is_empty() {
            return Err(TemplateError::Empty);
        }
        if src.contains('\0') {
            return Err(TemplateError::NulByte);
        }
        if src.len() > MAX_RENDERED_LEN {
            return Err(TemplateError::TooLong {
                len: src.len(),
                max: MAX_RENDERED_LEN,
            });
        }
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut lexer = ShellLexer::default();
        let mut rest = src;
        while !rest.is_empty() {
            let offset = src.len() - rest.len();
            if let Some(after_open) = rest.strip_prefix("{{") {
                let Some(close) = after_open.find("}}") else {
                    return Err(TemplateError::UnterminatedPlaceholder { offset });
                };
                let name = placeholder_name(&after_open[..close]).ok_or_else(|| {
                    TemplateError::InvalidPlaceholder {
                        offset,
                        text: format!("{{{{{}}}}}", &after_open[..close]),
                    }
                })?;
                if let Some(context) = lexer.context() {
                    return Err(TemplateError::PlaceholderInQuotes {
                        name: name.to_owned(),
                        offset,
                        context,
                    });
                }
                if !literal.is_empty() {
                    segments.push(Segment::Literal(std::mem::take(&mut literal)));
                }
                segments.push(Segment::Param(name.to_owned()));
                rest = &after_open[close + 2..];
                continue;
            }
            let Some(ch) = rest.chars().next() else { break };
            lexer.feed(ch, rest[ch.len_utf8()..].chars().next());
            literal.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
        if let Some(context) = lexer.unterminated() {
            return Err(TemplateError::UnterminatedQuote { context });
        }
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        let has_params = segments.iter().any(|it| matches!(it, Segment::Param(_)));
        if has_params && lexer.saw_here_document {
            return Err(TemplateError::HereDocument);
        }
        Ok(Template { segments })
    }

    /// The distinct placeholder names, in order of first appearance.
    #[must_use]
    pub fn placeholders(&self) -> Vec<&str> {
        let mut res: Vec<&str> = Vec::new();
        for segment in &self.segments {
            if let Segment::Param(name) = segment
                && !res.contains(&name.as_str())
            {
                res.push(name);
            }
        }
        res
    }

    /// The template with every placeholder rendered as `''`: what the author wrote, for the
    /// registration-time deny check.
    #[must_use]
    pub fn skeleton(&self) -> String {
        self.render_with(|_| Ok(Cow::Borrowed("")))
            .unwrap_or_default()
    }

    /// Renders the template in one pass: each placeholder becomes its argument, single-quoted.
    ///
    /// A missing or `null` argument renders as `''`; strings render as they are; numbers and
    /// booleans in their JSON spelling; arrays and objects as compact JSON. A value's own text
    /// is never scanned for placeholders. NUL bytes are refused.
    pub fn render(&self, args: &Map<String, Value>) -> Result<String, RenderError> {
        self.render_with(|name| {
            let text = args.get(name).map_or(Cow::Borrowed(""), value_text);
            if text.contains('\0') {
                return Err(RenderError::NulByte {
                    param: name.to_owned(),
                });
            }
            Ok(text)
        })
    }

    fn render_with<'a>(
        &self,
        mut value_of: impl FnMut(&str) -> Result<Cow<'a, str>, RenderError>,
    ) -> Result<String, RenderError> {
        let mut res = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => res.push_str(text),
                Segment::Param(name) => res.push_str(&shell_quote(&value_of(name)?)),
            }
            if res.len() > MAX_RENDERED_LEN {
                return Err(RenderError::TooLong {
                    len: res.len(),
                    max: MAX_RENDERED_LEN,
                });
            }
        }
        Ok(res)
    }
}

/// The name inside `{{ .name }}`, if the inside is well formed.
fn placeholder_name(inner: &str) -> Option<&str> {
    let name = inner.trim_matches(' ').strip_prefix('.')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= MAX_NAME_LEN;
    valid.then_some(name)
}

/// The text of one argument before quoting.
fn value_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::Null => Cow::Borrowed(""),
        Value::String(text) => Cow::Borrowed(text),
        Value::Bool(flag) => Cow::Borrowed(if *flag { "true" } else { "false" }),
        Value::Number(number) => Cow::Owned(number.to_string()),
        Value::Array(_) | Value::Object(_) => Cow::Owned(value.to_string()),
    }
}

/// Tracks just enough POSIX shell lexing to know whether a position is in plain context.
#[derive(Debug, Default)]
struct ShellLexer {
    state: LexState,
    escaped: bool,
    saw_here_document: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum LexState {
    #[default]
    Plain,
    Single,
    Double,
    Backtick,
}

impl ShellLexer {
    fn feed(&mut self, ch: char, next: Option<char>) {
        if self.escaped {
            self.escaped = false;
            return;
        }
        match (self.state, ch) {
            (LexState::Plain | LexState::Double | LexState::Backtick, '\\') => self.escaped = true,
            (LexState::Plain, '\'') => self.state = LexState::Single,
            (LexState::Plain, '"') => self.state = LexState::Double,
            (LexState::Plain, '`') => self.state = LexState::Backtick,
            (LexState::Plain, '<') if next == Some('<') => self.saw_here_document = true,
            (LexState::Single, '\'') | (LexState::Double, '"') | (LexState::Backtick, '`') => {
                self.state = LexState::Plain;
            }
            _ => {}
        }
    }

    /// Where the current position is, if not in plain context.
    fn context(&self) -> Option<&'static str> {
        if self.escaped {
            return Some("a backslash escape");
        }
        self.unterminated()
    }

    fn unterminated(&self) -> Option<&'static str> {
        match self.state {
            LexState::Plain => None,
            LexState::Single => Some("single quotes"),
            LexState::Double => Some("double quotes"),
            LexState::Backtick => Some("backticks"),
        }
    }
}

#[cfg(test)]
mod tests;
