//! `validate`: is a value a well-formed e-mail address, URL, phone number, UUID, IP address,
//! JSON, credit card number (Luhn), IBAN (mod 97), date, time, hex color, semantic version,
//! domain name, base64, or Turkish identity number? Answers `valid` with the reason when not.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use base64::Engine as _;
use regex::Regex;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{Fail, required_choice, text_arg};

const TYPES: &[&str] = &[
    "email",
    "url",
    "phone",
    "uuid",
    "ip",
    "ipv4",
    "ipv6",
    "json",
    "credit_card",
    "iban",
    "date",
    "time",
    "datetime",
    "hex_color",
    "semver",
    "domain",
    "base64",
    "tc_kimlik",
];
/// Longest value checked (JSON may be longer: up to 1 MB).
pub const MAX_VALUE_BYTES: usize = 10_000;

/// Patterns of this module: constants, compiled once (its tests compile every one).
#[allow(clippy::panic)]
fn re(pattern: &'static str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("validate: bad built-in pattern {pattern}: {e}"))
}

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$",
    )
});
static DOMAIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"));
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-([0-9a-fA-F])[0-9a-fA-F]{3}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    )
});
static HEX_COLOR: LazyLock<Regex> =
    LazyLock::new(|| re(r"^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$"));
static SEMVER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$",
    )
});

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "validate",
        "Check whether a value is valid: an e-mail address, URL, phone number, UUID, IP address \
         (v4 or v6), JSON, credit card number (Luhn check), IBAN (checksum), date \
         (YYYY-MM-DD), time, date-time (ISO 8601), hex color, semantic version, domain name, \
         base64, or Turkish identity number (TC Kimlik). Returns valid, the reason when it is \
         not, and details such as the card brand or IP version.",
        json!({
            "type": "object",
            "properties": {
                "value": {"type": "string", "description": "The value to check (at most 10000 bytes; JSON up to 1 MB)."},
                "type": {"type": "string", "enum": TYPES, "description": "What the value should be: email, url, phone, uuid, ip (v4 or v6), ipv4, ipv6, json, credit_card (Luhn check), iban (checksum), date (YYYY-MM-DD), time, datetime (ISO 8601), hex_color (#rgb, #rrggbb …), semver (semantic version), domain, base64, tc_kimlik (Turkish identity number)."}
            },
            "required": ["value", "type"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "validate", "validation", "check", "verify", "valid", "email", "url", "phone", "uuid",
        "ip", "json", "credit", "card", "iban", "luhn", "format", "semver", "color",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let kind = required_choice(args, "type", TYPES)?;
    let max = if kind == "json" {
        super::MAX_TEXT_BYTES
    } else {
        MAX_VALUE_BYTES
    };
    let value = text_arg(args, "value", max)?;
    let mut out = check(kind, value.trim());
    object::set(&mut out, "type", json!(kind));
    Ok(out)
}

fn yes() -> Value {
    json!({"valid": true})
}

fn no(reason: &str) -> Value {
    json!({"valid": false, "reason": reason})
}

fn check(kind: &str, v: &str) -> Value {
    match kind {
        "email" => {
            if v.len() > 254 {
                no("longer than 254 characters")
            } else if EMAIL.is_match(v)
                && v.split('@').next().is_some_and(|local| local.len() <= 64)
            {
                yes()
            } else {
                no("not of the form name@domain.tld")
            }
        }
        "url" => match url::Url::parse(v) {
            Ok(u) if u.has_host() || u.scheme() == "mailto" => {
                json!({"valid": true, "scheme": u.scheme(), "host": u.host_str()})
            }
            Ok(_) => no("the URL has no host"),
            Err(e) => no(&format!(
                "not a URL: {e} (write it with its scheme, e.g. https://example.com/path)"
            )),
        },
        "phone" => {
            let allowed = v
                .chars()
                .all(|c| c.is_ascii_digit() || " +-().".contains(c));
            let digits: String = v.chars().filter(char::is_ascii_digit).collect();
            let plus_ok = !v.get(1..).unwrap_or("").contains('+');
            if !allowed || !plus_ok {
                no("a phone number holds only digits, spaces, + at the start, - ( ) and .")
            } else if !(7..=15).contains(&digits.len()) {
                no("a phone number has 7 to 15 digits (E.164)")
            } else {
                json!({"valid": true, "normalized": if v.starts_with('+') { format!("+{digits}") } else { digits }})
            }
        }
        "uuid" => match UUID.captures(v) {
            Some(c) => {
                json!({"valid": true, "version": c.get(1).and_then(|m| m.as_str().parse::<u8>().ok())})
            }
            None => no("not of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex digits)"),
        },
        "ip" => match v.parse::<IpAddr>() {
            Ok(IpAddr::V4(_)) => json!({"valid": true, "version": 4}),
            Ok(IpAddr::V6(_)) => json!({"valid": true, "version": 6}),
            Err(_) => no("neither an IPv4 (192.168.1.1) nor an IPv6 (2001:db8::1) address"),
        },
        "ipv4" => {
            if v.parse::<Ipv4Addr>().is_ok() {
                yes()
            } else {
                no("not a dotted IPv4 address such as 192.168.1.1")
            }
        }
        "ipv6" => {
            if v.parse::<Ipv6Addr>().is_ok() {
                yes()
            } else {
                no("not an IPv6 address such as 2001:db8::1")
            }
        }
        "json" => match serde_json::from_str::<Value>(v) {
            Ok(parsed) => json!({"valid": true, "jsonType": json_type(&parsed)}),
            Err(e) => no(&format!("not valid JSON: {e}")),
        },
        "credit_card" => credit_card(v),
        "iban" => iban(v),
        "date" => match chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d") {
            Ok(d) if v.len() == 10 => {
                json!({"valid": true, "dayOfWeek": d.format("%A").to_string()})
            }
            _ => no("not a calendar date in the form YYYY-MM-DD"),
        },
        "time" => {
            let ok = ["%H:%M", "%H:%M:%S", "%H:%M:%S%.f"]
                .iter()
                .any(|f| chrono::NaiveTime::parse_from_str(v, f).is_ok());
            if ok {
                yes()
            } else {
                no("not a 24-hour time such as 14:30 or 14:30:05")
            }
        }
        "datetime" => match chrono::DateTime::parse_from_rfc3339(v) {
            Ok(_) => yes(),
            Err(_) if chrono::NaiveDateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S%.f").is_ok() => {
                json!({"valid": true, "note": "no time zone offset"})
            }
            Err(_) => no("not an ISO 8601 date-time such as 2024-01-15T14:30:00Z"),
        },
        "hex_color" => {
            if HEX_COLOR.is_match(v) {
                yes()
            } else {
                no("not #RGB, #RGBA, #RRGGBB or #RRGGBBAA")
            }
        }
        "semver" => {
            if SEMVER.is_match(v) {
                yes()
            } else {
                no("not MAJOR.MINOR.PATCH with optional -prerelease and +build, e.g. 1.4.2-rc.1")
            }
        }
        "domain" => {
            if v.len() <= 253 && DOMAIN.is_match(v) {
                yes()
            } else {
                no("not a domain name such as example.com")
            }
        }
        "base64" => {
            let engine = base64::engine::general_purpose::STANDARD;
            match engine.decode(v) {
                Ok(bytes) => json!({"valid": true, "decodedBytes": bytes.len()}),
                Err(e) => no(&format!("not standard padded base64: {e}")),
            }
        }
        _ => tc_kimlik(v),
    }
}

/// A value's JSON type without the article core's `json_type` gives it (`an object` → `object`).
fn json_type(v: &Value) -> &'static str {
    let with_article = toolsmith_core::json_type(v);
    with_article
        .strip_prefix("an ")
        .or_else(|| with_article.strip_prefix("a "))
        .unwrap_or(with_article)
}

/// Digits, spaces and dashes only; 12–19 digits; the Luhn checksum; the brand by prefix.
fn credit_card(v: &str) -> Value {
    if !v
        .chars()
        .all(|c| c.is_ascii_digit() || c == ' ' || c == '-')
    {
        return no("a card number holds only digits, spaces and dashes");
    }
    let digits: Vec<u32> = v.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(12..=19).contains(&digits.len()) {
        return no("a card number has 12 to 19 digits");
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    if !sum.is_multiple_of(10) {
        return no("the Luhn checksum fails: a digit is wrong or two are swapped");
    }
    let number: String = digits
        .iter()
        .map(|d| char::from_digit(*d, 10).unwrap_or('0'))
        .collect();
    let prefix = |n: usize| {
        number
            .get(..n)
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0)
    };
    let brand = if number.starts_with('4') {
        "Visa"
    } else if (51..=55).contains(&prefix(2)) || (2221..=2720).contains(&prefix(4)) {
        "Mastercard"
    } else if matches!(prefix(2), 34 | 37) {
        "American Express"
    } else if number.starts_with("6011")
        || number.starts_with("65")
        || (644..=649).contains(&prefix(3))
    {
        "Discover"
    } else if (3528..=3589).contains(&prefix(4)) {
        "JCB"
    } else {
        "unknown"
    };
    json!({"valid": true, "brand": brand, "lastFour": number.get(number.len().saturating_sub(4)..)})
}

/// Letters and digits (spaces ignored), 15–34 long, country letters first, mod 97 == 1.
fn iban(v: &str) -> Value {
    let cleaned: String = v
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase();
    if !(15..=34).contains(&cleaned.len()) || !cleaned.chars().all(|c| c.is_ascii_alphanumeric()) {
        return no("an IBAN has 15 to 34 letters and digits");
    }
    let start = cleaned.split_at_checked(4).filter(|(head, _)| {
        matches!(head.as_bytes(), [c1, c2, d1, d2]
            if c1.is_ascii_uppercase()
                && c2.is_ascii_uppercase()
                && d1.is_ascii_digit()
                && d2.is_ascii_digit())
    });
    let Some((head, tail)) = start else {
        return no(
            "an IBAN starts with a two-letter country code and two check digits, e.g. DE89…",
        );
    };
    let rearranged = tail.chars().chain(head.chars());
    let mut rem: u32 = 0;
    for c in rearranged {
        let n = c.to_digit(36).unwrap_or(0);
        rem = if n >= 10 {
            (rem * 100 + n) % 97
        } else {
            (rem * 10 + n) % 97
        };
    }
    if rem == 1 {
        json!({"valid": true, "country": head.get(..2), "normalized": cleaned})
    } else {
        no("the IBAN checksum fails: a character is wrong or two are swapped")
    }
}

/// 11 digits, not starting with 0, with the two check digits of the Turkish identity number.
fn tc_kimlik(v: &str) -> Value {
    let d: Vec<u32> = v.chars().filter_map(|c| c.to_digit(10)).collect();
    let d: [u32; 11] = match d.try_into() {
        Ok(d) if v.chars().all(|c| c.is_ascii_digit()) => d,
        _ => return no("a TC Kimlik number has exactly 11 digits"),
    };
    if d[0] == 0 {
        return no("a TC Kimlik number does not start with 0");
    }
    let odd = d[0] + d[2] + d[4] + d[6] + d[8];
    let even = d[1] + d[3] + d[5] + d[7];
    if (odd * 7 + 10 * 9 - even) % 10 != d[9] {
        return no("the 10th digit (first check digit) is wrong");
    }
    if d[..10].iter().sum::<u32>() % 10 != d[10] {
        return no("the 11th digit (second check digit) is wrong");
    }
    yes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(kind: &str, value: &str) -> bool {
        let got = run(&json!({"type": kind, "value": value})).unwrap();
        assert_eq!(got["type"], kind);
        assert!(
            got["valid"].as_bool().unwrap() || got["reason"].is_string(),
            "{got}"
        );
        got["valid"].as_bool().unwrap()
    }

    #[test]
    fn good_and_bad_values_of_every_type() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "email",
                &["ada@example.com", "first.last+tag@sub.example.co.uk"],
                &[
                    "ada@",
                    "ada@example",
                    "a b@example.com",
                    "ada@@example.com",
                    ".ada@example.com",
                ],
            ),
            (
                "url",
                &[
                    "https://example.com/a?b=1",
                    "http://127.0.0.1:8080",
                    "mailto:ada@example.com",
                ],
                &["example.com", "https://", "ht tp://x"],
            ),
            (
                "phone",
                &["+1 (555) 123-4567", "0212 555 12 34"],
                &["12345", "+1 555 CALL NOW", "1+2345678"],
            ),
            (
                "uuid",
                &["550e8400-e29b-41d4-a716-446655440000"],
                &["550e8400e29b41d4a716446655440000", "not-a-uuid"],
            ),
            (
                "ip",
                &["192.168.1.1", "2001:db8::1"],
                &["256.1.1.1", "1.2.3"],
            ),
            ("ipv4", &["10.0.0.1"], &["2001:db8::1"]),
            ("ipv6", &["::1"], &["10.0.0.1"]),
            ("json", &["{\"a\": [1]}", "null"], &["{a: 1}", "[1,]"]),
            (
                "credit_card",
                &[
                    "4111 1111 1111 1111",
                    "5500-0000-0000-0004",
                    "378282246310005",
                ],
                &["4111 1111 1111 1112", "1234", "4111-1111-1111-111a"],
            ),
            (
                "iban",
                &[
                    "DE89 3704 0044 0532 0130 00",
                    "GB82WEST12345698765432",
                    "tr330006100519786457841326",
                ],
                &["DE89 3704 0044 0532 0130 01", "DE89", "1234567890123456"],
            ),
            (
                "date",
                &["2024-02-29"],
                &["2023-02-29", "2024-1-5", "15/01/2024"],
            ),
            ("time", &["14:30", "23:59:59"], &["24:00", "2pm"]),
            (
                "datetime",
                &["2024-01-15T14:30:00Z", "2024-01-15T14:30:00+03:00"],
                &["2024-01-15 14:30", "yesterday"],
            ),
            (
                "hex_color",
                &["#fff", "#FF8800", "#ff880080"],
                &["fff", "#ggg", "#12345"],
            ),
            (
                "semver",
                &["1.2.3", "1.0.0-rc.1+build.5"],
                &["1.2", "01.2.3", "v1.2.3"],
            ),
            (
                "domain",
                &["example.com", "a-b.example.co.uk"],
                &["-bad.com", "localhost", "exa mple.com"],
            ),
            ("base64", &["aGVsbG8=", ""], &["aGVsbG8", "!!"]),
            (
                "tc_kimlik",
                &["10000000146"],
                &["10000000147", "01234567890", "1234"],
            ),
        ];
        for (kind, good, bad) in cases {
            for v in *good {
                assert!(valid(kind, v), "{kind}: {v} should be valid");
            }
            for v in *bad {
                assert!(!valid(kind, v), "{kind}: {v} should be invalid");
            }
        }
        let card = run(&json!({"type": "credit_card", "value": "4111 1111 1111 1111"})).unwrap();
        assert_eq!(
            (card["brand"].as_str(), card["lastFour"].as_str()),
            (Some("Visa"), Some("1111"))
        );
        let json = run(&json!({"type": "json", "value": "{\"a\": 1}"})).unwrap();
        assert_eq!(json["jsonType"], "object");
        let ip = run(&json!({"type": "ip", "value": "::1"})).unwrap();
        assert_eq!(ip["version"], 6);
        let uuid =
            run(&json!({"type": "uuid", "value": "550e8400-e29b-41d4-a716-446655440000"})).unwrap();
        assert_eq!(uuid["version"], 4);
    }

    #[test]
    fn bad_arguments_and_limits() {
        let err = run(&json!({"type": "zip", "value": "x"})).unwrap_err();
        assert!(
            err.message()
                .starts_with("'type' must be one of: email, url, phone"),
            "{err:?}"
        );
        let err =
            run(&json!({"type": "email", "value": "a".repeat(MAX_VALUE_BYTES + 1)})).unwrap_err();
        assert!(
            err.message().contains("the limit is 10000 bytes"),
            "{err:?}"
        );
        let long_json = format!("[{}1]", "1,".repeat(100_000));
        assert!(valid("json", &long_json));
        let err = run(&json!({"value": "x"})).unwrap_err();
        assert!(err.message().starts_with("'type' is required"), "{err:?}");
    }
}
