//! `get_current_datetime`: the current date and time in an IANA time zone (chrono-tz's copy of
//! the tz database) or at a fixed UTC offset, with the spec's fields.
//!
//! Also the date reading shared by `date_diff` and `date_add` ([`Zone`], [`parse_date`]), so
//! the three tools understand the same zones and date spellings.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, choice, opt_str_arg};

/// What `format` may ask for in the `formatted` field.
const FORMATS: &[&str] = &["locale", "iso", "unix", "unix_ms", "rfc2822"];

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "get_current_datetime",
        "Get the current date and time in a time zone: ISO 8601 time, a readable form, Unix \
         seconds and milliseconds, the date, the time, the day of the week, the ISO week number, \
         the quarter and whether it is a weekend. Call it whenever the user asks what time or day \
         it is, or you need today's date.",
        json!({
            "type": "object",
            "properties": {
                "timezone": {
                    "type": "string",
                    "description": "An IANA time zone name such as \"Europe/Istanbul\", \"America/New_York\" or \"Asia/Tokyo\", \"UTC\" (default), or a fixed UTC offset such as \"+02:00\".",
                    "default": "UTC",
                    "maxLength": 64
                },
                "format": {
                    "type": "string",
                    "description": "What the `formatted` field holds: \"locale\" (default, e.g. \"Friday, 01/30/2026, 14:30:00\"), \"iso\", \"unix\", \"unix_ms\" or \"rfc2822\".",
                    "enum": FORMATS,
                    "default": "locale"
                }
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "date", "time", "datetime", "now", "today", "clock", "timezone", "zone", "timestamp", "unix", "weekday", "day", "week", "current",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let zone = Zone::parse(opt_str_arg(args, "timezone", "UTC"))?;
    let format = choice(args, "format", "locale", FORMATS)?;
    Ok(describe(Utc::now(), &zone, format))
}

/// A time zone: a named IANA zone (daylight saving time included) or a fixed offset.
#[derive(Debug, Clone, PartialEq)]
pub enum Zone {
    Named(Tz),
    Fixed(FixedOffset),
}

impl Zone {
    /// An IANA name (any letter case: `europe/paris` is `Europe/Paris`), `UTC`/`Z`, or a fixed
    /// offset `±HH:MM` / `±HHMM`.
    pub fn parse(name: &str) -> Result<Zone, Fail> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("utc") || name.eq_ignore_ascii_case("z") {
            return Ok(Zone::Named(Tz::UTC));
        }
        if name.starts_with(['+', '-']) {
            return parse_offset(name).map(Zone::Fixed);
        }
        if let Ok(tz) = name.parse::<Tz>() {
            return Ok(Zone::Named(tz));
        }
        chrono_tz::TZ_VARIANTS
            .iter()
            .find(|tz| tz.name().eq_ignore_ascii_case(name))
            .map(|tz| Zone::Named(*tz))
            .ok_or_else(|| {
                Fail::Args(format!(
                    "unknown time zone '{}': use an IANA name such as \"Europe/Istanbul\", \"America/New_York\" or \"UTC\", or a fixed offset such as \"+02:00\"",
                    shorten(name)
                ))
            })
    }

    /// The zone's name as the caller should see it: the IANA name, `UTC`, or `+HH:MM`.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Zone::Named(tz) => tz.name().to_owned(),
            Zone::Fixed(offset) if offset.local_minus_utc() == 0 => "UTC".to_owned(),
            Zone::Fixed(offset) => offset.to_string(),
        }
    }

    /// `instant` seen in this zone.
    #[must_use]
    pub fn at(&self, instant: DateTime<Utc>) -> DateTime<FixedOffset> {
        match self {
            Zone::Named(tz) => instant.with_timezone(tz).fixed_offset(),
            Zone::Fixed(offset) => instant.with_timezone(offset),
        }
    }

    /// The instant a wall-clock time in this zone stands for. A time skipped by a daylight
    /// saving change is an error; a repeated one is its earlier instant.
    pub fn from_local(&self, local: NaiveDateTime) -> Result<DateTime<Utc>, Fail> {
        use chrono::TimeZone as _;
        let mapped = match self {
            Zone::Named(tz) => tz
                .from_local_datetime(&local)
                .earliest()
                .map(|d| d.to_utc()),
            Zone::Fixed(offset) => offset
                .from_local_datetime(&local)
                .earliest()
                .map(|d| d.to_utc()),
        };
        mapped.ok_or_else(|| {
            Fail::Args(format!(
                "{local} does not exist in {} (the clocks skip it for daylight saving time): use a time an hour later or give an offset",
                self.name()
            ))
        })
    }
}

/// Everything the tool reports about `now`, seen in `zone`: the spec's fields.
pub fn describe(now: DateTime<Utc>, zone: &Zone, format: &str) -> Value {
    let local = zone.at(now);
    let utc = local.offset().local_minus_utc() == 0;
    let iso = local.to_rfc3339_opts(SecondsFormat::Millis, utc);
    let formatted = match format {
        "iso" => iso.clone(),
        "unix" => now.timestamp().to_string(),
        "unix_ms" => now.timestamp_millis().to_string(),
        "rfc2822" => local.to_rfc2822(),
        _ => local.format("%A, %m/%d/%Y, %H:%M:%S").to_string(),
    };
    let weekday = local.weekday();
    json!({
        "iso": iso,
        "formatted": formatted,
        "unix": now.timestamp(),
        "unixMs": now.timestamp_millis(),
        "timezone": zone.name(),
        "date": local.format("%Y-%m-%d").to_string(),
        "time": local.format("%H:%M:%S").to_string(),
        "dayOfWeek": local.format("%A").to_string(),
        "weekNumber": local.iso_week().week(),
        "quarter": local.month0() / 3 + 1,
        "isWeekend": matches!(weekday, chrono::Weekday::Sat | chrono::Weekday::Sun),
    })
}

/// `±HH:MM` or `±HHMM` (hours 0–23, minutes 0–59).
pub fn parse_offset(timezone: &str) -> Result<FixedOffset, Fail> {
    let bad = || {
        Fail::Args(format!(
            "unsupported offset '{}': write it as \"+02:00\" or \"-0530\" (hours 00-23, minutes 00-59), or use an IANA name such as \"Europe/Istanbul\"",
            shorten(timezone)
        ))
    };
    let (sign, rest) = if let Some(rest) = timezone.strip_prefix('+') {
        (1, rest)
    } else if let Some(rest) = timezone.strip_prefix('-') {
        (-1, rest)
    } else {
        return Err(bad());
    };
    let digits: String = match rest.len() {
        5 if rest.as_bytes().get(2) == Some(&b':') => rest.chars().filter(|c| *c != ':').collect(),
        4 => rest.to_owned(),
        _ => return Err(bad()),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (hours, minutes) = digits.split_at_checked(2).ok_or_else(bad)?;
    let hours: i32 = hours.parse().map_err(|_| bad())?;
    let minutes: i32 = minutes.parse().map_err(|_| bad())?;
    if hours > 23 || minutes > 59 {
        return Err(bad());
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60)).ok_or_else(bad)
}

/// The accepted date spellings, for error messages.
pub const DATE_FORMS: &str = "\"now\", \"2024-01-15\", \"2024-01-15 14:30\", \"2024-01-15T14:30:00\" (read in 'timezone'), or ISO 8601 with an offset such as \"2024-01-15T14:30:00Z\" or \"2024-01-15T14:30:00+03:00\"";

/// A date argument: `now`, RFC 3339 / ISO 8601 with an offset, or a date or date-time without
/// one, which is read in `zone`.
pub fn parse_date(
    key: &str,
    text: &str,
    zone: &Zone,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, Fail> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("now") {
        return Ok(now);
    }
    if text.eq_ignore_ascii_case("today") {
        let today = zone.at(now).date_naive();
        return zone.from_local(today.and_time(chrono::NaiveTime::MIN));
    }
    if let Ok(with_offset) = DateTime::parse_from_rfc3339(text) {
        return Ok(with_offset.to_utc());
    }
    for form in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(local) = NaiveDateTime::parse_from_str(text, form) {
            return zone.from_local(local);
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return zone.from_local(date.and_time(chrono::NaiveTime::MIN));
    }
    Err(Fail::Args(format!(
        "'{key}' is not a date I can read ('{}'): use {DATE_FORMS}",
        shorten(text)
    )))
}

/// At most 40 characters of a caller's text, for an error message.
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// A readable form of an instant in a zone: "Friday, January 30, 2026, 14:30".
#[must_use]
pub fn readable(local: &DateTime<FixedOffset>) -> String {
    local.format("%A, %B %-d, %Y, %H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instant() -> DateTime<Utc> {
        // 2024-02-29T13:45:30.123Z, a Thursday.
        DateTime::from_timestamp_millis(1_709_214_330_123).unwrap()
    }

    fn zone(name: &str) -> Zone {
        Zone::parse(name).unwrap()
    }

    #[test]
    fn the_spec_fields_in_utc() {
        let got = describe(instant(), &zone("UTC"), "locale");
        assert_eq!(
            got,
            json!({
                "iso": "2024-02-29T13:45:30.123Z",
                "formatted": "Thursday, 02/29/2024, 13:45:30",
                "unix": 1_709_214_330_i64,
                "unixMs": 1_709_214_330_123_i64,
                "timezone": "UTC",
                "date": "2024-02-29",
                "time": "13:45:30",
                "dayOfWeek": "Thursday",
                "weekNumber": 9,
                "quarter": 1,
                "isWeekend": false,
            })
        );
        for (format, expected) in [
            ("iso", "2024-02-29T13:45:30.123Z"),
            ("unix", "1709214330"),
            ("unix_ms", "1709214330123"),
            ("rfc2822", "Thu, 29 Feb 2024 13:45:30 +0000"),
        ] {
            assert_eq!(
                describe(instant(), &zone("z"), format)["formatted"],
                expected,
                "{format}"
            );
        }
    }

    #[test]
    fn iana_zones_follow_daylight_saving_time() {
        // Istanbul is UTC+3 all year.
        let got = describe(instant(), &zone("Europe/Istanbul"), "locale");
        assert_eq!(got["timezone"], "Europe/Istanbul");
        assert_eq!(got["iso"], "2024-02-29T16:45:30.123+03:00");
        assert_eq!(got["formatted"], "Thursday, 02/29/2024, 16:45:30");
        // New York: EST (-5) in February, EDT (-4) in July.
        let ny = zone("america/new_york");
        assert_eq!(ny.name(), "America/New_York");
        assert_eq!(describe(instant(), &ny, "iso")["time"], "08:45:30");
        let july = DateTime::parse_from_rfc3339("2024-07-01T12:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(
            describe(july, &ny, "iso")["iso"],
            "2024-07-01T08:00:00.000-04:00"
        );
        // Across the date line: Kiritimati is UTC+14, already Friday, 1 March: Q1, week 9.
        let kiri = describe(instant(), &zone("Pacific/Kiritimati"), "locale");
        assert_eq!(
            (kiri["date"].as_str(), kiri["dayOfWeek"].as_str()),
            (Some("2024-03-01"), Some("Friday"))
        );
        // A Saturday in Q4, ISO week 52 of 2023 on 2023-12-30.
        let sat = DateTime::parse_from_rfc3339("2023-12-30T10:00:00Z")
            .unwrap()
            .to_utc();
        let got = describe(sat, &zone("UTC"), "locale");
        assert_eq!(
            (
                got["quarter"].as_u64(),
                got["isWeekend"].as_bool(),
                got["weekNumber"].as_u64()
            ),
            (Some(4), Some(true), Some(52))
        );
        // 2027-01-01 (a Friday) is in ISO week 53 of 2026.
        let jan1 = DateTime::parse_from_rfc3339("2027-01-01T10:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(describe(jan1, &zone("UTC"), "locale")["weekNumber"], 53);
    }

    #[test]
    fn fixed_offsets_still_work() {
        let got = describe(instant(), &zone("+10:30"), "iso");
        assert_eq!(got["iso"], "2024-03-01T00:15:30.123+10:30");
        assert_eq!(got["timezone"], "+10:30");
        assert_eq!(got["unix"], 1_709_214_330_i64, "the instant does not move");
        assert_eq!(
            describe(instant(), &zone("-0500"), "iso")["timezone"],
            "-05:00"
        );
        assert_eq!(
            describe(instant(), &zone("+00:00"), "iso")["timezone"],
            "UTC"
        );
    }

    #[test]
    fn unknown_zones_name_an_example() {
        for bad in [
            "",
            "Mars/Olympus",
            "Europe/Pariss",
            "UTC+2",
            "+2",
            "+24:00",
            "+02:60",
            "−02:00",
            "+0٢:00",
            &"x".repeat(500),
        ] {
            let err = Zone::parse(bad).unwrap_err();
            assert!(matches!(err, Fail::Args(_)), "{bad}");
            assert!(err.message().contains("Europe/Istanbul"), "{bad}: {err:?}");
            assert!(err.message().len() < 300, "the caller's text is shortened");
        }
    }

    #[test]
    fn dates_in_every_spelling() {
        let now = instant();
        let utc = zone("UTC");
        let at = |s: &str, z: &Zone| parse_date("date", s, z, now).unwrap().to_rfc3339();
        assert_eq!(at("now", &utc), now.to_rfc3339());
        assert_eq!(at("2024-01-15", &utc), "2024-01-15T00:00:00+00:00");
        assert_eq!(at("2024-01-15 14:30", &utc), "2024-01-15T14:30:00+00:00");
        assert_eq!(
            at("2024-01-15T14:30:05.5", &utc),
            "2024-01-15T14:30:05.500+00:00"
        );
        assert_eq!(
            at("2024-01-15T14:30:00+03:00", &utc),
            "2024-01-15T11:30:00+00:00"
        );
        assert_eq!(
            at("2024-01-15", &zone("Europe/Istanbul")),
            "2024-01-14T21:00:00+00:00"
        );
        assert_eq!(
            at("today", &zone("Pacific/Kiritimati")),
            "2024-02-29T10:00:00+00:00"
        );
        let err = parse_date("date1", "next tuesday", &utc, now).unwrap_err();
        assert!(
            err.message().contains("'date1'") && err.message().contains("2024-01-15"),
            "{err:?}"
        );
        assert!(parse_date("d", "2024-02-30", &utc, now).is_err());
        // 02:30 on 2024-03-10 does not exist in New York.
        let err = parse_date("d", "2024-03-10 02:30", &zone("America/New_York"), now).unwrap_err();
        assert!(err.message().contains("daylight saving"), "{err:?}");
    }
}
