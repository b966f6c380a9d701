//! The `{{.param}}` template: parsing (with a check of the shell quoting context of every
//! placeholder: quotes, escapes, comments and nested expansions) and one-pass rendering with
//! every value single-quoted.
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
    #[error(
        "placeholder `{name}` at byte {offset} follows {construct}, after which shells disagree on what is quoted; put placeholders before it, or move that part into a script the command runs"
    )]
    QuotingUnclear {
        name: String,
        offset: usize,
        construct: &'static str,
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
            Self::QuotingUnclear { .. } => "template_quoting_unclear",
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
                let Some((inner, after_close)) = after_open.split_once("}}") else {
                    return Err(TemplateError::UnterminatedPlaceholder { offset });
                };
                let name =
                    placeholder_name(inner).ok_or_else(|| TemplateError::InvalidPlaceholder {
                        offset,
                        text: format!("{{{{{inner}}}}}"),
                    })?;
                if let Some(context) = lexer.context() {
                    return Err(TemplateError::PlaceholderInQuotes {
                        name: name.to_owned(),
                        offset,
                        context,
                    });
                }
                if let Some(construct) = lexer.lost {
                    return Err(TemplateError::QuotingUnclear {
                        name: name.to_owned(),
                        offset,
                        construct,
                    });
                }
                lexer.placeholder();
                if !literal.is_empty() {
                    segments.push(Segment::Literal(std::mem::take(&mut literal)));
                }
                segments.push(Segment::Param(name.to_owned()));
                rest = after_close;
                continue;
            }
            let len = lexer.feed(rest).clamp(1, rest.len());
            let (token, after) = (len..=rest.len())
                .find_map(|n| rest.split_at_checked(n))
                .unwrap_or((rest, ""));
            literal.push_str(token);
            rest = after;
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

    /// The placeholders that stand where a program reads code — `bash -c {{.x}}`, `python3 -c
    /// {{.x}}`, `node -e {{.x}}` (see `deny::code_option_before`) — each with the
    /// program and option as written. A value there runs as code, as with `eval`, so
    /// [`crate::CommandToolSpec::validate`] refuses them.
    #[must_use]
    pub fn code_placeholders(&self) -> Vec<(String, String)> {
        let mut before = String::new();
        let mut res = Vec::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => before.push_str(text),
                Segment::Param(name) => {
                    if let Some(program) = crate::deny::code_option_before(&before) {
                        res.push((name.clone(), program));
                    }
                    before.push_str("''");
                }
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

/// Follows POSIX shell quoting far enough to know whether a position is in plain context: the
/// nesting of quotes, escapes, comments and expansions (`$(…)`, `${…}`, `$((…))`, backticks).
///
/// It errs one way only: where it cannot be sure how the shell reads what follows (a quote
/// inside an expansion inside double quotes, `$'…'`), it stops accepting placeholders rather
/// than guess. Placeholders are accepted at top level and inside `$(…)` that stand in plain
/// context (quoting starts afresh there, so a single-quoted value is one word).
#[derive(Debug)]
struct ShellLexer {
    /// Open constructs, innermost last; empty is plain top-level context.
    stack: Vec<Frame>,
    escaped: bool,
    /// The previous character ends a word, so a `#` here starts a comment.
    word_start: bool,
    saw_here_document: bool,
    /// Set once the lexer met something it does not model: no placeholder may follow.
    lost: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Single,
    Double,
    Backtick,
    /// `$( … )`; `depth` counts parentheses opened inside it.
    CommandSubstitution {
        depth: u32,
    },
    /// `$(( … ))`.
    Arithmetic {
        depth: u32,
    },
    /// `${ … }`.
    Parameter,
    /// `# …` up to the end of the line.
    Comment,
}

impl Frame {
    fn describe(self) -> &'static str {
        match self {
            Frame::Single => "single quotes",
            Frame::Double => "double quotes",
            Frame::Backtick => "backticks",
            Frame::CommandSubstitution { .. } => "a command substitution `$(…)`",
            Frame::Arithmetic { .. } => "an arithmetic expansion `$((…))`",
            Frame::Parameter => "a parameter expansion `${…}`",
            Frame::Comment => "a shell comment",
        }
    }
}

impl Default for ShellLexer {
    fn default() -> Self {
        ShellLexer {
            stack: Vec::new(),
            escaped: false,
            word_start: true,
            saw_here_document: false,
            lost: None,
        }
    }
}

impl ShellLexer {
    /// Consumes the next token of `rest` (one character, or a two- or three-character opener
    /// such as `$(`) and returns its length in bytes (at least 1 for a non-empty `rest`).
    fn feed(&mut self, rest: &str) -> usize {
        let Some(ch) = rest.chars().next() else {
            return 0;
        };
        let one = ch.len_utf8();
        if self.escaped {
            self.escaped = false;
            self.word_start = false;
            return one;
        }
        let top = self.stack.last().copied();
        // Inside an expansion nested in double quotes or backticks, how quotes and nested
        // expansions are read differs between shells: stop following.
        let nested_in_quotes = self
            .stack
            .iter()
            .rev()
            .skip(1)
            .any(|f| matches!(f, Frame::Double | Frame::Backtick));
        let len = match top {
            None | Some(Frame::CommandSubstitution { .. }) => {
                // `case … in pattern)` has a `)` that does not end the substitution.
                let case = self.word_start && rest.starts_with("case");
                if nested_in_quotes
                    && (case || matches!(ch, '\'' | '"' | '`' | '#' | '(' | '\\' | '$' | '<'))
                {
                    self.lost = self.lost.or(Some(
                        "a quote or expansion inside `$(…)` within double quotes",
                    ));
                }
                self.plain(rest, ch)
            }
            Some(Frame::Single) => {
                if ch == '\'' {
                    self.stack.pop();
                }
                one
            }
            Some(Frame::Double) => self.double(rest, ch),
            Some(Frame::Backtick) => {
                match ch {
                    '\\' => self.escaped = true,
                    '`' => {
                        self.stack.pop();
                    }
                    _ => {}
                }
                one
            }
            Some(Frame::Parameter) => {
                if nested_in_quotes && matches!(ch, '\'' | '"' | '`' | '$' | '\\') {
                    self.lost = self.lost.or(Some(
                        "a quote or expansion inside `${…}` within double quotes",
                    ));
                }
                match ch {
                    '}' => {
                        self.stack.pop();
                        one
                    }
                    '\'' => {
                        self.stack.push(Frame::Single);
                        one
                    }
                    _ => self.double(rest, ch),
                }
            }
            Some(Frame::Arithmetic { depth }) => {
                if matches!(ch, '\'' | '"' | '`' | '\\' | '#') {
                    self.lost = self.lost.or(Some("a quote inside `$((…))`"));
                }
                match ch {
                    '(' => {
                        self.set_top(Frame::Arithmetic { depth: depth + 1 });
                        one
                    }
                    ')' if depth == 0 && rest.starts_with("))") => {
                        self.stack.pop();
                        2
                    }
                    ')' if depth == 0 => {
                        self.lost = self.lost.or(Some("an unbalanced `)` in `$((…))`"));
                        self.stack.pop();
                        one
                    }
                    ')' => {
                        self.set_top(Frame::Arithmetic { depth: depth - 1 });
                        one
                    }
                    _ => self.expansion_opener(rest, ch).unwrap_or(one),
                }
            }
            Some(Frame::Comment) => {
                if ch == '\n' {
                    self.stack.pop();
                }
                one
            }
        };
        let last = rest
            .get(..len.min(rest.len()))
            .and_then(|token| token.chars().next_back())
            .unwrap_or(ch);
        self.word_start = matches!(
            last,
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
        ) && !self.escaped;
        len
    }

    /// Plain context: top level, or directly inside `$(…)`.
    fn plain(&mut self, rest: &str, ch: char) -> usize {
        let one = ch.len_utf8();
        match ch {
            '\\' => self.escaped = true,
            '\'' => self.stack.push(Frame::Single),
            '"' => self.stack.push(Frame::Double),
            '`' => self.stack.push(Frame::Backtick),
            '#' if self.word_start => self.stack.push(Frame::Comment),
            '<' if rest.starts_with("<<") => {
                self.saw_here_document = true;
                return 2;
            }
            '(' => {
                if let Some(Frame::CommandSubstitution { depth }) = self.stack.last().copied() {
                    self.set_top(Frame::CommandSubstitution { depth: depth + 1 });
                }
            }
            ')' => {
                if let Some(Frame::CommandSubstitution { depth }) = self.stack.last().copied() {
                    if depth == 0 {
                        self.stack.pop();
                    } else {
                        self.set_top(Frame::CommandSubstitution { depth: depth - 1 });
                    }
                }
            }
            '$' if rest.starts_with("$'") => {
                // `$'…'` is ANSI-C quoting in bash and ksh, plain `$` then quotes in dash.
                self.lost = self.lost.or(Some("`$'…'` quoting"));
            }
            _ => return self.expansion_opener(rest, ch).unwrap_or(one),
        }
        one
    }

    /// Inside double quotes (and the word of `${…}`): escapes, the closing quote, expansions.
    fn double(&mut self, rest: &str, ch: char) -> usize {
        let one = ch.len_utf8();
        match ch {
            '\\' => self.escaped = true,
            '"' => {
                if self.stack.last() == Some(&Frame::Double) {
                    self.stack.pop();
                } else {
                    self.stack.push(Frame::Double);
                }
            }
            '`' => self.stack.push(Frame::Backtick),
            _ => return self.expansion_opener(rest, ch).unwrap_or(one),
        }
        one
    }

    /// `$((`, `$(` or `${` at `rest`: pushes the frame and returns the opener's length.
    fn expansion_opener(&mut self, rest: &str, ch: char) -> Option<usize> {
        if ch != '$' {
            return None;
        }
        if rest.starts_with("$((") {
            self.stack.push(Frame::Arithmetic { depth: 0 });
            Some(3)
        } else if rest.starts_with("$(") {
            self.stack.push(Frame::CommandSubstitution { depth: 0 });
            Some(2)
        } else if rest.starts_with("${") {
            self.stack.push(Frame::Parameter);
            Some(2)
        } else {
            None
        }
    }

    fn set_top(&mut self, frame: Frame) {
        if let Some(top) = self.stack.last_mut() {
            *top = frame;
        }
    }

    /// Where the current position is, if a placeholder may not stand here.
    fn context(&self) -> Option<&'static str> {
        if self.escaped {
            return Some("a backslash escape");
        }
        self.stack
            .iter()
            .rev()
            .find(|f| !matches!(f, Frame::CommandSubstitution { .. }))
            .map(|f| f.describe())
    }

    /// The construct left open at the end of the template (a comment may run to the end).
    fn unterminated(&self) -> Option<&'static str> {
        self.stack
            .iter()
            .rev()
            .find(|f| **f != Frame::Comment)
            .map(|f| f.describe())
    }

    /// A placeholder was rendered here: it reads as one quoted word.
    fn placeholder(&mut self) {
        self.word_start = false;
    }
}

#[cfg(test)]
mod shell;
#[cfg(test)]
mod tests;
