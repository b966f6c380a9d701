//! `get_current_datetime`: the current date and time in UTC or at a fixed UTC offset.
//!
//! Only fixed offsets (`+02:00`, `-0530`) are understood, never zone names such as
//! `Europe/Paris`: that would need a time-zone database, and a wrong guess about daylight
//! saving time is worse than asking the model to pass the offset it means.

use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::opt_str_arg;

/// What `timezone` must look like (checked by the schema before the executor runs).
const TIMEZONE_PATTERN: &str = "^(UTC|utc|Z|z|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])$";

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "get_current_datetime",
        "Get the current date and time, in UTC or at a fixed UTC offset. Returns the ISO 8601 \
         time, Unix seconds and milliseconds, the RFC 2822 time, the weekday, and the value in \
         the requested format. Time-zone names (e.g. Europe/Paris) are not supported: pass the \
         offset instead.",
        json!({
            "type": "object",
            "properties": {
                "timezone": {
                    "type": "string",
                    "description": "\"UTC\" (default) or a fixed UTC offset such as \"+02:00\", \"-05:30\" or \"+0100\".",
                    "pattern": TIMEZONE_PATTERN,
                    "default": "UTC"
                },
                "format": {
                    "type": "string",
                    "description": "The format of the `formatted` field: ISO 8601 (default), Unix seconds, Unix milliseconds, or RFC 2822.",
                    "enum": ["iso", "unix", "unix_ms", "rfc2822"],
                    "default": "iso"
                }
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "date", "time", "datetime", "now", "clock", "timezone", "timestamp", "unix",
    ])
}

pub fn run(args: &Value) -> Result<Value, String> {
    let timezone = opt_str_arg(args, "timezone", "UTC");
    let format = opt_str_arg(args, "format", "iso");
    describe(Utc::now(), timezone, format)
}

/// Everything the tool reports about the instant `now`, seen at `timezone`.
pub fn describe(now: DateTime<Utc>, timezone: &str, format: &str) -> Result<Value, String> {
    let offset = parse_offset(timezone)?;
    let local = now.with_timezone(&offset);
    let utc = offset.local_minus_utc() == 0;
    let iso = local.to_rfc3339_opts(SecondsFormat::Millis, utc);
    let unix = now.timestamp();
    let unix_ms = now.timestamp_millis();
    let rfc2822 = local.to_rfc2822();
    let formatted = match format {
        "iso" => iso.clone(),
        "unix" => unix.to_string(),
        "unix_ms" => unix_ms.to_string(),
        "rfc2822" => rfc2822.clone(),
        other => {
            return Err(format!(
                "unknown format '{other}' (use iso, unix, unix_ms or rfc2822)"
            ));
        }
    };
    Ok(json!({
        "iso": iso,
        "unix": unix,
        "unixMs": unix_ms,
        "rfc2822": rfc2822,
        "timezone": if utc { "UTC".to_owned() } else { offset.to_string() },
        "utcOffsetSeconds": offset.local_minus_utc(),
        "date": local.format("%Y-%m-%d").to_string(),
        "time": local.format("%H:%M:%S").to_string(),
        "weekday": local.format("%A").to_string(),
        "format": format,
        "formatted": formatted,
    }))
}

/// `UTC`/`Z` or `±HH:MM` / `±HHMM` (hours 0–23, minutes 0–59).
pub fn parse_offset(timezone: &str) -> Result<FixedOffset, String> {
    let bad = || {
        format!(
            "unsupported timezone '{timezone}': use \"UTC\" or a fixed offset such as \"+02:00\" or \"-05:30\""
        )
    };
    if timezone.eq_ignore_ascii_case("utc") || timezone.eq_ignore_ascii_case("z") {
        return FixedOffset::east_opt(0).ok_or_else(bad);
    }
    let (sign, rest) = match timezone.as_bytes().first() {
        Some(b'+') => (1, &timezone[1..]),
        Some(b'-') => (-1, &timezone[1..]),
        _ => return Err(bad()),
    };
    let digits: String = match rest.len() {
        5 if rest.as_bytes()[2] == b':' => rest.chars().filter(|c| *c != ':').collect(),
        4 => rest.to_owned(),
        _ => return Err(bad()),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let hours: i32 = digits[..2].parse().map_err(|_| bad())?;
    let minutes: i32 = digits[2..].parse().map_err(|_| bad())?;
    if hours > 23 || minutes > 59 {
        return Err(bad());
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60)).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instant() -> DateTime<Utc> {
        // 2024-02-29T13:45:30.123Z, a Thursday.
        DateTime::from_timestamp_millis(1_709_214_330_123).unwrap()
    }

    #[test]
    fn utc_in_every_format() {
        let got = describe(instant(), "UTC", "iso").unwrap();
        assert_eq!(
            got,
            json!({
                "iso": "2024-02-29T13:45:30.123Z",
                "unix": 1_709_214_330_i64,
                "unixMs": 1_709_214_330_123_i64,
                "rfc2822": "Thu, 29 Feb 2024 13:45:30 +0000",
                "timezone": "UTC",
                "utcOffsetSeconds": 0,
                "date": "2024-02-29",
                "time": "13:45:30",
                "weekday": "Thursday",
                "format": "iso",
                "formatted": "2024-02-29T13:45:30.123Z",
            })
        );
        for (format, expected) in [
            ("unix", "1709214330"),
            ("unix_ms", "1709214330123"),
            ("rfc2822", "Thu, 29 Feb 2024 13:45:30 +0000"),
        ] {
            let got = describe(instant(), "z", format).unwrap();
            assert_eq!(got["formatted"], expected, "{format}");
        }
    }

    #[test]
    fn fixed_offsets_cross_the_date_line() {
        let got = describe(instant(), "+10:30", "iso").unwrap();
        assert_eq!(got["iso"], "2024-03-01T00:15:30.123+10:30");
        assert_eq!(got["date"], "2024-03-01");
        assert_eq!(got["weekday"], "Friday");
        assert_eq!(got["timezone"], "+10:30");
        assert_eq!(got["utcOffsetSeconds"], 37_800);
        assert_eq!(got["unix"], 1_709_214_330_i64, "the instant does not move");
        assert_eq!(got["rfc2822"], "Fri, 1 Mar 2024 00:15:30 +1030");

        let got = describe(instant(), "-0500", "iso").unwrap();
        assert_eq!(got["iso"], "2024-02-29T08:45:30.123-05:00");
        assert_eq!(got["timezone"], "-05:00");

        // A zero offset is UTC, whatever its spelling.
        assert_eq!(
            describe(instant(), "+00:00", "iso").unwrap()["timezone"],
            "UTC"
        );
        assert_eq!(
            describe(instant(), "-0000", "iso").unwrap()["iso"],
            "2024-02-29T13:45:30.123Z"
        );
    }

    #[test]
    fn bad_offsets_are_errors_not_panics() {
        for bad in [
            "",
            "+",
            "+2",
            "+02",
            "+24:00",
            "+02:60",
            "+2:00",
            "02:00",
            "+02-00",
            "+0٢:00",
            "Europe/Paris",
            "UTC+2",
            "+é:00",
            "+02:00:00",
            "−02:00",
        ] {
            let err = parse_offset(bad).unwrap_err();
            assert!(err.contains("unsupported timezone"), "{bad}: {err}");
        }
        assert!(describe(instant(), "UTC", "weird").is_err());
    }
}
