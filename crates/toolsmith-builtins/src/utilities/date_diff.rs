//! `date_diff`: the time between two dates, in every unit and as calendar years, months and
//! days.

use chrono::{DateTime, Datelike as _, Months, Utc};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::datetime::{Zone, parse_date};
use super::{Fail, choice, opt_str_arg, round, str_arg};

const UNITS: &[&str] = &[
    "all", "years", "months", "weeks", "days", "hours", "minutes", "seconds",
];

/// Average lengths: a Gregorian year is 365.2425 days, a month a twelfth of it.
const DAYS_PER_YEAR: f64 = 365.2425;
const DAYS_PER_MONTH: f64 = DAYS_PER_YEAR / 12.0;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "date_diff",
        "Calculate the difference between two dates: how many days between them, how long \
         until or since a date, how old someone is. Returns the difference from date1 to date2 \
         (negative when date2 is earlier) in years, months, weeks, days, hours, minutes and \
         seconds, and the calendar difference in whole years, months and days.",
        json!({
            "type": "object",
            "properties": {
                "date1": {"type": "string", "description": "The start: \"now\", \"today\", \"2024-01-15\", \"2024-01-15 14:30\" or ISO 8601 such as \"2024-01-15T14:30:00Z\"."},
                "date2": {"type": "string", "description": "The end, in the same forms."},
                "unit": {"type": "string", "enum": UNITS, "default": "all", "description": "all (default): the difference in every unit and the calendar difference; or one of years, months, weeks, days, hours, minutes, seconds: only the difference in that unit (a month is a twelfth of 365.2425 days)."},
                "timezone": {"type": "string", "default": "UTC", "description": "The IANA zone (e.g. \"Europe/Istanbul\") dates without an offset are read in; default UTC."}
            },
            "required": ["date1", "date2"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "date", "difference", "between", "days", "until", "since", "age", "old", "duration",
        "elapsed", "countdown", "how", "long",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let zone = Zone::parse(opt_str_arg(args, "timezone", "UTC"))?;
    let unit = choice(args, "unit", "all", UNITS)?;
    let now = Utc::now();
    let from = parse_date("date1", str_arg(args, "date1")?, &zone, now)?;
    let to = parse_date("date2", str_arg(args, "date2")?, &zone, now)?;
    Ok(difference(from, to, &zone, unit))
}

/// The difference from `from` to `to`, calendar parts counted in `zone`.
pub fn difference(from: DateTime<Utc>, to: DateTime<Utc>, zone: &Zone, unit: &str) -> Value {
    // Milliseconds, as f64: exact for any span chrono can represent to well under a second.
    let ms = (to - from).num_milliseconds() as f64;
    let seconds = ms / 1000.0;
    let days = seconds / 86_400.0;
    let in_unit = |unit: &str| {
        let v = match unit {
            "years" => days / DAYS_PER_YEAR,
            "months" => days / DAYS_PER_MONTH,
            "weeks" => days / 7.0,
            "days" => days,
            "hours" => seconds / 3600.0,
            "minutes" => seconds / 60.0,
            _ => seconds,
        };
        round(v, 4)
    };
    let base = json!({
        "from": zone.at(from).to_rfc3339(),
        "to": zone.at(to).to_rfc3339(),
        "isPositive": ms >= 0.0,
    });
    let mut out = base;
    if unit == "all" {
        object::set(
            &mut out,
            "difference",
            json!({
                "years": in_unit("years"),
                "months": in_unit("months"),
                "weeks": in_unit("weeks"),
                "days": in_unit("days"),
                "hours": in_unit("hours"),
                "minutes": in_unit("minutes"),
                "seconds": in_unit("seconds"),
            }),
        );
        object::set(&mut out, "calendar", calendar(from, to, zone));
    } else {
        object::set(&mut out, "difference", json!(in_unit(unit)));
        object::set(&mut out, "unit", json!(unit));
    }
    out
}

/// Whole years, months and days from the earlier to the later date (wall clock in `zone`),
/// plus the remaining hours, minutes and seconds; negative when `to` is earlier.
fn calendar(from: DateTime<Utc>, to: DateTime<Utc>, zone: &Zone) -> Value {
    let sign: i64 = if to < from { -1 } else { 1 };
    let (a, b) = if to < from { (to, from) } else { (from, to) };
    let (a, b) = (zone.at(a).naive_local(), zone.at(b).naive_local());
    // Whole months: the most m with a + m months <= b.
    let mut months = (i64::from(b.year()) - i64::from(a.year())) * 12 + i64::from(b.month0())
        - i64::from(a.month0());
    let plus = |m: i64| {
        u32::try_from(m)
            .ok()
            .and_then(|m| a.checked_add_months(Months::new(m)))
    };
    while months > 0 && plus(months).is_none_or(|d| d > b) {
        months -= 1;
    }
    let anchor = plus(months.max(0)).unwrap_or(a);
    let rest = b - anchor;
    let secs = rest.num_seconds();
    json!({
        "years": sign * (months / 12),
        "months": sign * (months % 12),
        "days": sign * (secs / 86_400),
        "hours": sign * (secs % 86_400 / 3600),
        "minutes": sign * (secs % 3600 / 60),
        "seconds": sign * (secs % 60),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diff(args: Value) -> Result<Value, Fail> {
        run(&args)
    }

    #[test]
    fn every_unit_and_the_calendar() {
        let got = diff(json!({"date1": "2024-01-15", "date2": "2024-03-20"})).unwrap();
        assert_eq!(got["difference"]["days"], 65.0);
        assert_eq!(got["difference"]["weeks"], 9.2857);
        assert_eq!(got["difference"]["hours"], 1560.0);
        assert_eq!(got["isPositive"], true);
        assert_eq!(
            got["calendar"],
            json!({"years": 0, "months": 2, "days": 5, "hours": 0, "minutes": 0, "seconds": 0})
        );
        assert_eq!(got["from"], "2024-01-15T00:00:00+00:00");

        // Someone born 1990-05-31 is 33 years, 11 months and some days old on 2024-05-30.
        let age = diff(json!({"date1": "1990-05-31", "date2": "2024-05-30"})).unwrap();
        assert_eq!(age["calendar"]["years"], 33);
        assert_eq!(age["calendar"]["months"], 11);
        assert_eq!(age["calendar"]["days"], 30);

        let back = diff(json!({"date1": "2024-03-20T12:00:00Z", "date2": "2024-03-19T11:30:00Z", "unit": "hours"})).unwrap();
        assert_eq!(
            back,
            json!({"from": "2024-03-20T12:00:00+00:00", "to": "2024-03-19T11:30:00+00:00", "isPositive": false, "difference": -24.5, "unit": "hours"})
        );
        let cal = diff(json!({"date1": "2024-03-20T12:00:00Z", "date2": "2024-03-19T11:30:00Z"}))
            .unwrap();
        assert_eq!(
            cal["calendar"],
            json!({"years": 0, "months": 0, "days": -1, "hours": 0, "minutes": -30, "seconds": 0})
        );
    }

    #[test]
    fn zones_matter_for_dates_without_an_offset() {
        // The night DST starts in Berlin is 23 hours long.
        let got = diff(json!({"date1": "2024-03-31", "date2": "2024-04-01", "unit": "hours", "timezone": "Europe/Berlin"})).unwrap();
        assert_eq!(got["difference"], 23.0);
        let got =
            diff(json!({"date1": "2024-03-31", "date2": "2024-04-01", "unit": "hours"})).unwrap();
        assert_eq!(got["difference"], 24.0);
    }

    #[test]
    fn bad_arguments_name_the_fix() {
        let err = diff(json!({"date1": "yesterday-ish", "date2": "2024-01-01"})).unwrap_err();
        assert!(
            matches!(&err, Fail::Args(m) if m.contains("'date1'") && m.contains("2024-01-15")),
            "{err:?}"
        );
        let err = diff(json!({"date1": "2024-01-01", "date2": "2024-01-02", "unit": "fortnights"}))
            .unwrap_err();
        assert_eq!(
            err.message(),
            "'unit' must be one of: all, years, months, weeks, days, hours, minutes, seconds"
        );
        let err = diff(json!({"date1": "2024-01-01"})).unwrap_err();
        assert!(err.message().contains("'date2'"), "{err:?}");
        let err = diff(json!({"date1": "2024-01-01", "date2": "now", "timezone": "Nowhere"}))
            .unwrap_err();
        assert!(err.message().contains("Europe/Istanbul"), "{err:?}");
    }

    #[test]
    fn the_widest_span_does_not_overflow() {
        let got = diff(json!({"date1": "0001-01-01", "date2": "9999-12-31"})).unwrap();
        assert_eq!(got["calendar"]["years"], 9998);
        assert_eq!(got["calendar"]["months"], 11);
        assert_eq!(got["calendar"]["days"], 30);
    }
}
