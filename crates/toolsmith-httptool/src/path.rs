//! One grammar for JSON paths, shared by HTTP-tool response mappings and by `format_json`'s
//! `get_path` (in `toolsmith-builtins`): dotted keys with `[n]` indexes (`data.items[0].name`,
//! and `[0].id` for a top-level array), or a JSON Pointer (RFC 6901: `/data/items/0/name`, with
//! `~1` for a `/` and `~0` for a `~` inside a key).
//!
//! [`parse`] reads the whole path once into a [`JsonPath`], or a [`PathError`] that says what is
//! wrong, where, and how to write it; [`JsonPath::lookup`] never fails: a step that finds
//! nothing gives `None`. Parsing is one pass over the characters of a path of at most
//! [`MAX_PATH_LEN`] bytes, slices no string and panics on no input.

use serde_json::Value;

/// Longest path accepted, in bytes.
pub const MAX_PATH_LEN: usize = 1024;

/// How a path is written, said by every error.
const HOW: &str = "write it as \"data.items[0].name\" or as a JSON Pointer \"/data/items/0/name\"";

/// Characters of the path an error quotes.
const QUOTED_CHARS: usize = 80;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A member of an object (the dotted syntax's `name`).
    Key(String),
    /// An element of an array, counted from 0 (the dotted syntax's `[n]`).
    Index(usize),
    /// A JSON Pointer reference token, unescaped: a member of an object, or an element of an
    /// array when it is a decimal number without a leading zero.
    Token(String),
}

impl Step {
    /// The member of an object this step names: a key, or any pointer token.
    pub fn member(&self) -> Option<&str> {
        match self {
            Step::Key(name) | Step::Token(name) => Some(name),
            Step::Index(_) => None,
        }
    }

    /// The element of an array this step names: an index, or a pointer token that is a decimal
    /// number without a leading zero (RFC 6901).
    pub fn element(&self) -> Option<usize> {
        match self {
            Step::Index(index) => Some(*index),
            Step::Token(token) => pointer_index(token),
            Step::Key(_) => None,
        }
    }
}

/// A parsed path: the steps from the document's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// The steps, from the root.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The value the path names in `value`, or `None` where a step finds nothing (a missing
    /// key, an index past the end, a step into a value of another type).
    pub fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.steps
            .iter()
            .try_fold(value, |current, step| match current {
                Value::Object(map) => map.get(step.member()?),
                Value::Array(items) => items.get(step.element()?),
                _ => None,
            })
    }
}

/// Writes `steps` as a path that [`parse`] reads back to steps finding the same value: dotted
/// keys with `[n]` indexes (`items[0].name`) when every key can be written so — not empty, no
/// `.`, `[` or `]` in it, the first not starting with `/` — and no step is a pointer token;
/// otherwise a JSON Pointer (`/a.b/0/name`, `~` and `/` escaped as `~0` and `~1`). No steps (the
/// root, which no path names) give `""`.
pub fn write(steps: &[Step]) -> String {
    let dotted_key = |at: usize, key: &str| {
        !(key.is_empty() || key.contains(['.', '[', ']']) || (at == 0 && key.starts_with('/')))
    };
    let dotted = steps.iter().enumerate().all(|(at, step)| match step {
        Step::Key(key) => dotted_key(at, key),
        Step::Index(_) => true,
        Step::Token(_) => false,
    });
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Index(index) if dotted => out.push_str(&format!("[{index}]")),
            Step::Key(key) if dotted => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(index) => out.push_str(&format!("/{index}")),
            Step::Key(name) | Step::Token(name) => {
                out.push('/');
                out.push_str(&name.replace('~', "~0").replace('/', "~1"));
            }
        }
    }
    out
}

/// A path that is not in the grammar: what is wrong and where, then how to write one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON path '{path}': {reason}; {HOW}")]
pub struct PathError {
    path: String,
    reason: String,
}

impl PathError {
    fn new(path: &str, reason: impl Into<String>) -> Self {
        let mut quoted: String = path.chars().take(QUOTED_CHARS).collect();
        if path.chars().nth(QUOTED_CHARS).is_some() {
            quoted.push('…');
        }
        Self {
            path: quoted,
            reason: reason.into(),
        }
    }

    /// What is wrong with the path, without the path and the advice.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Parses a path: a JSON Pointer when it starts with `/`, dotted keys with `[n]` indexes
/// otherwise.
///
/// # Errors
///
/// An empty path, one longer than [`MAX_PATH_LEN`] bytes, and any text outside the grammar: an
/// empty key (`a..b`, `.a`, `a.`), an index that is not a number from 0 (`[x]`, `[-1]`, `[ 0 ]`,
/// `[+1]`, `[]`), one too large for this machine, an unclosed `[`, a `]` without its `[`, text
/// right after an index (`a[0]b`), an index after a dot (`a.[0]`), and in a pointer a `~` not
/// followed by `0` or `1`.
pub fn parse(path: &str) -> Result<JsonPath, PathError> {
    if path.is_empty() {
        return Err(PathError::new(path, "the path is empty"));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(PathError::new(
            path,
            format!(
                "the path is {} bytes long, over the limit of {MAX_PATH_LEN}",
                path.len()
            ),
        ));
    }
    let steps = match path.strip_prefix('/') {
        Some(pointer) => parse_pointer(path, pointer)?,
        None => parse_dotted(path)?,
    };
    Ok(JsonPath { steps })
}

/// The reference tokens of a JSON Pointer (`pointer` is the text after its first `/`).
fn parse_pointer(path: &str, pointer: &str) -> Result<Vec<Step>, PathError> {
    let mut steps = Vec::new();
    let mut token = String::new();
    // Character positions count from 1; the leading '/' is the first.
    let mut chars = pointer.chars().zip(2usize..);
    while let Some((c, at)) = chars.next() {
        match c {
            '/' => steps.push(Step::Token(std::mem::take(&mut token))),
            '~' => match chars.next() {
                Some(('0', _)) => token.push('~'),
                Some(('1', _)) => token.push('/'),
                _ => {
                    return Err(PathError::new(
                        path,
                        format!(
                            "the '~' at character {at} is not followed by 0 or 1 (in a JSON Pointer, ~0 stands for '~' and ~1 for '/')"
                        ),
                    ));
                }
            },
            other => token.push(other),
        }
    }
    steps.push(Step::Token(token));
    Ok(steps)
}

/// Dotted keys with `[n]` indexes.
fn parse_dotted(path: &str) -> Result<Vec<Step>, PathError> {
    let fail = |reason: String| PathError::new(path, reason);
    let mut steps = Vec::new();
    let mut key = String::new();
    // Whether the current segment (the text since the last '.') ended an index, and whether it
    // is the first segment (the only one that may start with an index).
    let mut after_index = false;
    let mut first_segment = true;
    let mut chars = path.chars().zip(1usize..);
    while let Some((c, at)) = chars.next() {
        match c {
            '.' => {
                if key.is_empty() && !after_index {
                    return Err(fail(format!(
                        "the key before the '.' at character {at} is empty (a path does not start with '.', nor hold '..')"
                    )));
                }
                if !key.is_empty() {
                    steps.push(Step::Key(std::mem::take(&mut key)));
                }
                after_index = false;
                first_segment = false;
            }
            '[' => {
                if key.is_empty() && !after_index && !first_segment {
                    return Err(fail(format!(
                        "the '[' at character {at} follows a '.': write items[0], not items.[0]"
                    )));
                }
                if !key.is_empty() {
                    steps.push(Step::Key(std::mem::take(&mut key)));
                }
                steps.push(Step::Index(read_index(&mut chars, at).map_err(fail)?));
                after_index = true;
            }
            ']' => {
                return Err(fail(format!(
                    "the ']' at character {at} closes no '[' (for a key with '.', '[' or ']' in it, use a JSON Pointer such as \"/a.b\")"
                )));
            }
            other if after_index => {
                return Err(fail(format!(
                    "'{other}' at character {at} follows an index: write items[0].name, not items[0]name"
                )));
            }
            other => key.push(other),
        }
    }
    if key.is_empty() && !after_index {
        return Err(fail(
            "the path ends with '.', so its last key is empty".to_owned(),
        ));
    }
    if !key.is_empty() {
        steps.push(Step::Key(key));
    }
    Ok(steps)
}

/// The number of an index whose `[` is at character `open`, read up to and including its `]`.
fn read_index(
    chars: &mut impl Iterator<Item = (char, usize)>,
    open: usize,
) -> Result<usize, String> {
    let mut text = String::new();
    loop {
        match chars.next() {
            Some((']', _)) => break,
            Some((c, _)) => text.push(c),
            None => return Err(format!("the '[' at character {open} is never closed")),
        }
    }
    if text.is_empty() {
        return Err(format!(
            "the index at character {open} is empty: write a number from 0, as in items[0]"
        ));
    }
    if text.strip_prefix('-').is_some_and(is_digits) {
        return Err(format!(
            "the index at character {open} is negative: indexes count from 0 at the start of an array, and negative ones are not supported"
        ));
    }
    if !is_digits(&text) {
        let shown: String = text.chars().take(QUOTED_CHARS).collect();
        return Err(format!(
            "'[{shown}]' at character {open} is not an index: an index is a number from 0 (digits only), as in items[0]; for a key with '.', '[' or ']' in it, use a JSON Pointer such as \"/a.b\""
        ));
    }
    text.parse().map_err(|_| {
        format!(
            "the index at character {open} is larger than any array can be (at most {})",
            usize::MAX
        )
    })
}

fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// A pointer token as an array index (RFC 6901: decimal digits, no leading zero but "0").
fn pointer_index(token: &str) -> Option<usize> {
    if !is_digits(token) || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests;
