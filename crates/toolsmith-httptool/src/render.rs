//! Rendering the endpoint into a `PreparedRequest`, with the encoding each position needs.
//!
//! - URL path segments and query values: percent-encoded (only RFC 3986 unreserved characters
//!   pass), and a segment made of `.` or `..` (or empty) from a value is refused, because URL
//!   parsers treat those as directory steps.
//! - URL origin (scheme, host, port): only `store.*` config values, never a parameter, so the
//!   model cannot choose the host.
//! - Headers: inserted verbatim; CR, LF, NUL and other control characters are refused.
//! - JSON bodies: values JSON-encoded; a string leaf that is exactly one placeholder takes the
//!   value with its type (an object stays an object).
//! - Credentials (`store.*` keys that look like keys, tokens or passwords) only in headers.
//!
//! Every template is expanded in one pass: a value containing `{{…}}` is inserted as data.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::context::{ConfigLookup, ResolvedArgs};
use crate::definition::{HttpToolDefinition, ParamSource};
use crate::error::{HttpErrorKind, HttpToolError};
use crate::placeholder::{self, Piece, Ref, is_secret_like};
use crate::sender::PreparedRequest;

/// Everything but RFC 3986 unreserved characters is encoded in path segments and query values.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Longest rendered URL.
pub const MAX_URL_LEN: usize = 8 * 1024;
/// Largest rendered request body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Largest response body accepted (spec 004 §3.4).
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Headers a definition may not set: they belong to the transport.
pub(crate) const FORBIDDEN_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-authorization",
];

/// Where a placeholder sits, for the rules that differ by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    Url,
    Header,
    Body,
}

/// Renders the request for `def` with resolved arguments and config values.
pub fn prepare_request(
    def: &HttpToolDefinition,
    args: &ResolvedArgs,
    store: &dyn ConfigLookup,
) -> Result<PreparedRequest, HttpToolError> {
    let renderer = Renderer { def, args, store };
    let url = renderer.url(&def.endpoint.url)?;
    let mut headers = Vec::with_capacity(def.endpoint.headers.len() + 1);
    for (name, template) in &def.endpoint.headers {
        if !is_header_name(name) || FORBIDDEN_HEADERS.contains(&name.to_ascii_lowercase().as_str())
        {
            return Err(render_err(format!(
                "header name '{}' is not allowed",
                short(name)
            )));
        }
        headers.push((name.clone(), renderer.header_value(name, template)?));
    }
    let body = match &def.endpoint.body {
        None => None,
        Some(body) => Some(renderer.body(body)?),
    };
    if body.is_some()
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    Ok(PreparedRequest {
        method: def.endpoint.method,
        url,
        headers,
        body,
        timeout: timeout_of(def),
        max_response_bytes: MAX_RESPONSE_BYTES,
    })
}

pub(crate) fn timeout_of(def: &HttpToolDefinition) -> std::time::Duration {
    let secs = def.endpoint.timeout_secs();
    let secs = if secs.is_finite() {
        secs.clamp(0.001, crate::definition::MAX_TIMEOUT_SECS)
    } else {
        crate::definition::DEFAULT_TIMEOUT_SECS
    };
    std::time::Duration::from_secs_f64(secs)
}

struct Renderer<'a> {
    def: &'a HttpToolDefinition,
    args: &'a ResolvedArgs,
    store: &'a dyn ConfigLookup,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum UrlPart {
    Origin,
    Path,
    Query,
    Fragment,
}

impl Renderer<'_> {
    fn url(&self, template: &str) -> Result<String, HttpToolError> {
        let pieces = placeholder::parse(template).map_err(|e| render_err(e.to_string()))?;
        let mut out = String::new();
        let mut part = UrlPart::Origin;
        let mut scheme_done = false;
        let mut seg_start = 0;
        let mut seg_has_ref = false;
        // Where the origin (what only literals and store.* values may write) ends in `out`.
        let mut origin_end = None;
        for (piece_idx, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Lit(text) => {
                    let mut rest = *text;
                    while let Some(c) = rest.chars().next() {
                        if part == UrlPart::Origin
                            && !scheme_done
                            && let Some(after) = rest.strip_prefix("://")
                        {
                            out.push_str("://");
                            rest = after;
                            scheme_done = true;
                            continue;
                        }
                        let next = match (part, c) {
                            (UrlPart::Origin | UrlPart::Path, '/') => Some(UrlPart::Path),
                            (UrlPart::Origin | UrlPart::Path, '?') => Some(UrlPart::Query),
                            (UrlPart::Origin | UrlPart::Path | UrlPart::Query, '#') => {
                                Some(UrlPart::Fragment)
                            }
                            _ => None,
                        };
                        if let Some(next) = next {
                            if part == UrlPart::Origin {
                                origin_end = Some(out.len());
                            }
                            if part == UrlPart::Path {
                                check_segment(
                                    out.get(seg_start..).unwrap_or_default(),
                                    seg_has_ref,
                                )?;
                            }
                            part = next;
                            seg_start = out.len() + 1;
                            seg_has_ref = false;
                        }
                        out.push(c);
                        rest = rest.get(c.len_utf8()..).unwrap_or_default();
                    }
                }
                Piece::Ref(r) => {
                    self.refuse_secret(*r, Position::Url)?;
                    match part {
                        UrlPart::Origin => {
                            let Ref::Store(key) = r else {
                                return Err(render_err(format!(
                                    "parameter {} may not set the URL's scheme or host; use a store.* config value",
                                    r.display()
                                )));
                            };
                            let value = self.store_value(key)?;
                            out.push_str(origin_value(key, &value, piece_idx == 0)?);
                            scheme_done = true;
                        }
                        UrlPart::Path | UrlPart::Query => {
                            let text = self.required_text(*r, "the URL")?;
                            out.extend(utf8_percent_encode(&text, COMPONENT));
                            seg_has_ref = true;
                        }
                        UrlPart::Fragment => {
                            return Err(render_err(format!(
                                "placeholder {} is not allowed in the URL fragment",
                                r.display()
                            )));
                        }
                    }
                }
            }
            if out.len() > MAX_URL_LEN {
                return Err(render_err(format!(
                    "the rendered URL is longer than {MAX_URL_LEN} bytes"
                )));
            }
        }
        if part == UrlPart::Path {
            check_segment(out.get(seg_start..).unwrap_or_default(), seg_has_ref)?;
        }
        check_origin(
            &out,
            out.get(..origin_end.unwrap_or(out.len()))
                .unwrap_or_default(),
        )?;
        check_url(&out)?;
        Ok(out)
    }

    fn header_value(&self, name: &str, template: &str) -> Result<String, HttpToolError> {
        let pieces = placeholder::parse(template).map_err(|e| render_err(e.to_string()))?;
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Lit(text) => out.push_str(text),
                Piece::Ref(r) => {
                    self.refuse_secret(r, Position::Header)?;
                    out.push_str(&self.required_text(r, &format!("header '{name}'"))?);
                }
            }
        }
        if out.chars().any(|c| c.is_control() && c != '\t') {
            return Err(render_err(format!(
                "the value of header '{name}' contains a line break or control character"
            )));
        }
        Ok(out)
    }

    fn body(&self, body: &Value) -> Result<String, HttpToolError> {
        let text = match body {
            Value::String(template) => {
                let rendered = self.json_text(template)?;
                if serde_json::from_str::<Value>(&rendered).is_err() {
                    return Err(render_err(
                        "the body did not render to valid JSON".to_owned(),
                    ));
                }
                rendered
            }
            other => self.body_value(other)?.to_string(),
        };
        if text.len() > MAX_BODY_BYTES {
            return Err(render_err(format!(
                "the rendered body is larger than {MAX_BODY_BYTES} bytes"
            )));
        }
        Ok(text)
    }

    /// A JSON text template: each value is inserted JSON-encoded (strings without their quotes,
    /// so they can sit inside a quoted literal).
    fn json_text(&self, template: &str) -> Result<String, HttpToolError> {
        let pieces = placeholder::parse(template).map_err(|e| render_err(e.to_string()))?;
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Lit(text) => out.push_str(text),
                Piece::Ref(r) => {
                    self.refuse_secret(r, Position::Body)?;
                    let Some(value) = self.value(r)? else {
                        return Err(missing_value(r, "the body"));
                    };
                    let encoded = value.to_string();
                    match value {
                        // The JSON text of a string without its quotes: its escaped body.
                        Value::String(_) => out.push_str(
                            encoded
                                .strip_prefix('"')
                                .and_then(|e| e.strip_suffix('"'))
                                .unwrap_or(&encoded),
                        ),
                        _ => out.push_str(&encoded),
                    }
                }
            }
        }
        Ok(out)
    }

    fn body_value(&self, node: &Value) -> Result<Value, HttpToolError> {
        Ok(match node {
            Value::Object(map) => {
                let mut out = serde_json::Map::new();
                for (key, child) in map {
                    out.insert(key.clone(), self.body_value(child)?);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|it| self.body_value(it))
                    .collect::<Result<_, _>>()?,
            ),
            Value::String(template) => {
                let pieces = placeholder::parse(template).map_err(|e| render_err(e.to_string()))?;
                if let [Piece::Ref(r)] = pieces.as_slice() {
                    self.refuse_secret(*r, Position::Body)?;
                    return Ok(self.value(*r)?.unwrap_or(Value::Null));
                }
                let mut out = String::new();
                for piece in pieces {
                    match piece {
                        Piece::Lit(text) => out.push_str(text),
                        Piece::Ref(r) => {
                            self.refuse_secret(r, Position::Body)?;
                            out.push_str(&self.required_text(r, "the body")?);
                        }
                    }
                }
                Value::String(out)
            }
            other => other.clone(),
        })
    }

    /// The value of a reference; `None` for an optional parameter that has no value.
    fn value(&self, r: Ref<'_>) -> Result<Option<Value>, HttpToolError> {
        match r {
            Ref::Store(key) => Ok(Some(Value::String(self.store_value(key)?))),
            Ref::Param(name) => {
                if !self.def.parameters.iter().any(|p| p.name == name) {
                    return Err(render_err(format!(
                        "placeholder {} names no parameter",
                        r.display()
                    )));
                }
                Ok(self.args.get(name).filter(|v| !v.is_null()).cloned())
            }
        }
    }

    fn required_text(&self, r: Ref<'_>, place: &str) -> Result<String, HttpToolError> {
        match self.value(r)? {
            Some(value) => Ok(value_text(&value)),
            None => Err(missing_value(r, place)),
        }
    }

    fn store_value(&self, key: &str) -> Result<String, HttpToolError> {
        self.store.get(key).ok_or_else(|| {
            HttpToolError::new(
                HttpErrorKind::MissingParameter,
                format!("config value store.{key} is not set; configure it for this tool's owner"),
            )
        })
    }

    fn refuse_secret(&self, r: Ref<'_>, position: Position) -> Result<(), HttpToolError> {
        if position == Position::Header || !ref_is_secret(self.def, r) {
            return Ok(());
        }
        Err(render_err(format!(
            "{} looks like a credential; credentials may only be sent in headers",
            r.display()
        )))
    }
}

/// Whether a reference names a credential: a secret-like `store.*` key, or a secret-like
/// parameter filled from the store.
pub(crate) fn ref_is_secret(def: &HttpToolDefinition, r: Ref<'_>) -> bool {
    match r {
        Ref::Store(key) => is_secret_like(key),
        Ref::Param(name) => def
            .parameters
            .iter()
            .any(|p| p.name == name && p.source == ParamSource::Store && is_secret_like(name)),
    }
}

/// Text of a value in a URL or header: strings as they are, everything else as JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A config value used as (part of) the origin: a host, `host:port`, or at the very start a
/// full `http(s)://host[:port]` base URL; a trailing `/` is dropped.
fn origin_value<'v>(key: &str, value: &'v str, at_start: bool) -> Result<&'v str, HttpToolError> {
    let trimmed = value.strip_suffix('/').unwrap_or(value);
    let host = if at_start {
        trimmed
            .strip_prefix("https://")
            .or_else(|| trimmed.strip_prefix("http://"))
            .unwrap_or(trimmed)
    } else {
        trimmed
    };
    let bad = host.is_empty()
        || host.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '/' | '?' | '#' | '@' | '\\')
        });
    if bad {
        return Err(render_err(format!(
            "config value store.{key} is not a valid host or base URL"
        )));
    }
    Ok(trimmed)
}

fn check_segment(segment: &str, has_ref: bool) -> Result<(), HttpToolError> {
    if has_ref && matches!(segment, "" | "." | "..") {
        return Err(render_err(format!(
            "a parameter made the URL path segment '{segment}', which is not allowed"
        )));
    }
    Ok(())
}

/// The origin (scheme, host, port) of the rendered URL must be the one its origin part wrote,
/// in full (`http://` or `https://` and a host): with a scheme not followed by `://` and a host
/// (`https:/x`, `https:///x`), the URL parser would take the host from what the renderer read
/// as the path, where a parameter may stand; `https:host` is refused too, so that what is sent
/// is the URL as written.
fn check_origin(rendered: &str, origin: &str) -> Result<(), HttpToolError> {
    let lower = origin.to_ascii_lowercase();
    let in_full = lower.starts_with("https://") || lower.starts_with("http://");
    let same = match (url::Url::parse(origin), url::Url::parse(rendered)) {
        (Ok(written), Ok(parsed)) => {
            in_full
                && written.host_str().is_some_and(|h| !h.is_empty())
                && written.scheme() == parsed.scheme()
                && written.host_str() == parsed.host_str()
                && written.port_or_known_default() == parsed.port_or_known_default()
        }
        // A URL that does not parse is refused by check_url, saying why.
        (Ok(_), Err(_)) => true,
        (Err(_), _) => false,
    };
    if same {
        return Ok(());
    }
    Err(render_err(format!(
        "the URL must begin with its origin in full, a scheme, '://' and a host (https://host/...) or a store.* base URL, before its path; '{}' is not one, so what follows it could become the host",
        short(origin)
    )))
}

fn check_url(rendered: &str) -> Result<(), HttpToolError> {
    let parsed = url::Url::parse(rendered)
        .map_err(|e| render_err(format!("the rendered URL is invalid: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(render_err(format!(
            "URL scheme '{}' is not allowed; use https",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(render_err("the rendered URL has no host".to_owned()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(render_err(
            "the rendered URL carries credentials; send them in a header".to_owned(),
        ));
    }
    Ok(())
}

/// RFC 9110 token characters.
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

fn missing_value(r: Ref<'_>, place: &str) -> HttpToolError {
    HttpToolError::new(
        HttpErrorKind::MissingParameter,
        format!("{} has no value but is used in {place}", r.display()),
    )
}

fn render_err(message: String) -> HttpToolError {
    HttpToolError::new(HttpErrorKind::Render, message)
}

fn short(text: &str) -> String {
    text.chars().take(64).collect()
}
