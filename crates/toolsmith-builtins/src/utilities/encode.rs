//! `encode_decode`: base64, URL (percent), hex and HTML-entity encoding and decoding of text.
//!
//! Decoding that yields bytes which are not UTF-8 is an error: the tool returns text.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode, utf8_percent_encode};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, MAX_TEXT_BYTES, str_arg, text_arg};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "encode_decode",
        "Encode or decode text (at most 1 MB) with base64 (standard alphabet, padded), URL percent-encoding \
         (RFC 3986: everything but letters, digits and -_.~ is escaped), hex (of the UTF-8 \
         bytes) or HTML entities.",
        json!({
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": "The text to encode, or the encoded text to decode."
                },
                "method": {
                    "type": "string",
                    "description": "base64 (standard alphabet, padded), url (percent-encoding), hex (of the UTF-8 bytes) or html (entities such as &amp;).",
                    "enum": ["base64", "url", "hex", "html"]
                },
                "operation": {
                    "type": "string",
                    "description": "Whether to encode or decode the text.",
                    "enum": ["encode", "decode"]
                }
            },
            "required": ["text", "method", "operation"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "encode", "decode", "base64", "url", "percent", "hex", "html", "escape", "entities",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    let method = str_arg(args, "method")?;
    let result = match (method, str_arg(args, "operation")?) {
        ("base64", "encode") => STANDARD.encode(text),
        ("base64", "decode") => {
            let bytes = STANDARD
                .decode(text.trim())
                .map_err(|e| Fail::Run(format!("invalid base64: {e}")))?;
            utf8(bytes, method)?
        }
        ("url", "encode") => url_encode(text),
        ("url", "decode") => utf8(url_decode(text).map_err(Fail::Run)?, method)?,
        ("hex", "encode") => hex::encode(text),
        ("hex", "decode") => {
            let bytes =
                hex::decode(text.trim()).map_err(|e| Fail::Run(format!("invalid hex: {e}")))?;
            utf8(bytes, method)?
        }
        ("html", "encode") => html_encode(text),
        ("html", "decode") => html_decode(text),
        (method, operation) => {
            return Err(Fail::Args(format!(
                "unsupported method/operation '{method}'/'{operation}': 'method' must be one of base64, url, hex, html and 'operation' encode or decode"
            )));
        }
    };
    Ok(json!({ "result": result }))
}

fn utf8(bytes: Vec<u8>, method: &str) -> Result<String, Fail> {
    String::from_utf8(bytes).map_err(|_| {
        Fail::Run(format!(
            "the {method}-decoded bytes are not valid UTF-8 text"
        ))
    })
}

/// Every byte but the RFC 3986 unreserved characters (letters, digits, `-`, `.`, `_`, `~`).
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes every byte but the RFC 3986 unreserved characters (upper-case hex).
pub fn url_encode(text: &str) -> String {
    utf8_percent_encode(text, NOT_UNRESERVED).to_string()
}

/// Decodes `%XX` escapes; every other character stands for itself (`+` stays `+`). A `%` not
/// followed by two hex digits is an error (the crate's decoder would pass it through).
pub fn url_decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if let Some(i) = bytes.iter().enumerate().position(|(i, &b)| {
        b == b'%'
            && !bytes
                .get(i + 1..i + 3)
                .is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit))
    }) {
        return Err(format!(
            "invalid URL encoding: '%' at byte {i} is not followed by two hex digits"
        ));
    }
    Ok(percent_decode(bytes).collect())
}

/// Escapes the five characters that matter in HTML text and attributes.
pub fn html_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Decodes the common named entities and numeric references (`&#65;`, `&#x41;`); anything
/// else, including references to invalid code points, is left as written.
pub fn html_decode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once('&') {
        out.push_str(before);
        let decoded = after
            .split_once(';')
            .filter(|(entity, _)| entity.len() <= 32)
            .and_then(|(entity, tail)| entity_char(entity).map(|c| (c, tail)));
        match decoded {
            Some((c, tail)) => {
                out.push(c);
                rest = tail;
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity_char(entity: &str) -> Option<char> {
    let numeric = |digits: &str, radix: u32| {
        u32::from_str_radix(digits, radix)
            .ok()
            .filter(|_| !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)))
            .and_then(char::from_u32)
    };
    if let Some(hex) = entity
        .strip_prefix("#x")
        .or_else(|| entity.strip_prefix("#X"))
    {
        return numeric(hex, 16);
    }
    if let Some(dec) = entity.strip_prefix('#') {
        return numeric(dec, 10);
    }
    Some(match entity {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_round_trip() {
        let text = "a b&c=d/é?~_.-+";
        let encoded = url_encode(text);
        assert_eq!(encoded, "a%20b%26c%3Dd%2F%C3%A9%3F~_.-%2B");
        assert_eq!(url_decode(&encoded).unwrap(), text.as_bytes());
        assert_eq!(url_decode("a+b%2b").unwrap(), b"a+b+");
        assert!(url_decode("%").is_err());
        assert!(url_decode("%4").is_err());
        assert!(url_decode("%zz").is_err());
        assert!(url_decode("%+1").is_err());
        assert_eq!(
            url_decode("ok%20then%").unwrap_err(),
            "invalid URL encoding: '%' at byte 9 is not followed by two hex digits"
        );
        // Escapes decode whatever their case; lone bytes that are not UTF-8 survive as bytes.
        assert_eq!(url_decode("%2f%2F%ff").unwrap(), [b'/', b'/', 0xff]);
    }

    #[test]
    fn html() {
        assert_eq!(
            html_encode(r#"<a href="x">Tom & Jerry's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
        assert_eq!(
            html_decode(
                "&lt;b&gt; &amp;amp; &#65;&#x42;&#X43; &apos;&quot; &bogus; & &#xD800; &#;"
            ),
            "<b> &amp; ABC '\" &bogus; & &#xD800; &#;"
        );
        assert_eq!(html_decode("&#x1F600;é&"), "😀é&");
        assert_eq!(html_decode("&#+65;"), "&#+65;");
    }
}
