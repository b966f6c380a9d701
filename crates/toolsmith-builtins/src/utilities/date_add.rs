//! `date_add`: a date plus or minus an amount of time. Months and years are calendar months
//! and years (the day is kept, or clamped to the month's last day); smaller units are exact.

use chrono::{DateTime, Duration, Months, Utc};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::datetime::{Zone, parse_date, readable};
use super::{Fail, as_int, num_arg, opt_str_arg, required_choice, round, str_arg};

const UNITS: &[&str] = &[
    "seconds", "minutes", "hours", "days", "weeks", "months", "years",
];
/// Largest amount of months (or years × 12) one call may add: beyond it chrono's range ends.
const MAX_MONTHS: i64 = 12 * 10_000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "date_add",
        "Add or subtract time from a date: what date is 30 days from today, 3 weeks ago, a \
         month later, in 2 years. Use \"now\" as the date for the current time and a negative amount \
         to go back. Months and years are calendar months (Jan 31 + 1 month = Feb 29 in a leap \
         year, the last day of the month).",
        json!({
            "type": "object",
            "properties": {
                "date": {"type": "string", "description": "The starting date: \"now\", \"today\", \"2024-01-15\", \"2024-01-15 14:30\" or ISO 8601 such as \"2024-01-15T14:30:00Z\"."},
                "amount": {"type": "number", "description": "How much to add; negative to subtract. Whole numbers for months and years."},
                "unit": {"type": "string", "enum": UNITS, "description": "The unit of the amount: seconds, minutes, hours, days, weeks, months or years (months and years take whole numbers and move the calendar date: January 31 plus one month is the last day of February)."},
                "timezone": {"type": "string", "default": "UTC", "description": "The IANA zone (e.g. \"Europe/Istanbul\") the date is read and the result shown in; default UTC."}
            },
            "required": ["date", "amount", "unit"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "date", "add", "subtract", "plus", "minus", "later", "ago", "future", "past", "deadline", "days", "today",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let zone = Zone::parse(opt_str_arg(args, "timezone", "UTC"))?;
    let unit = required_choice(args, "unit", UNITS)?;
    let amount = num_arg(args, "amount")?;
    let start = parse_date("date", str_arg(args, "date")?, &zone, Utc::now())?;
    let result = add(start, amount, unit, &zone)?;
    let shown = zone.at(result);
    Ok(json!({
        "original": zone.at(start).to_rfc3339(),
        "result": shown.to_rfc3339(),
        "resultFormatted": readable(&shown),
        "date": shown.format("%Y-%m-%d").to_string(),
        "dayOfWeek": shown.format("%A").to_string(),
        "added": {"amount": amount, "unit": unit},
        "timezone": zone.name(),
    }))
}

/// `start` plus `amount` `unit`s; calendar units move the wall clock in `zone`.
pub fn add(
    start: DateTime<Utc>,
    amount: f64,
    unit: &str,
    zone: &Zone,
) -> Result<DateTime<Utc>, Fail> {
    let out_of_range = || {
        Fail::Args(format!(
            "adding {amount} {unit} goes beyond the dates this tool can show (years 1 to 9999): use a smaller amount"
        ))
    };
    let months = match unit {
        "months" | "years" => {
            let whole = as_int(&json!(amount)).ok_or_else(|| {
                Fail::Args(format!(
                    "'amount' must be a whole number for {unit} (got {amount}): use days or weeks for fractions"
                ))
            })?;
            Some(if unit == "years" {
                whole.saturating_mul(12)
            } else {
                whole
            })
        }
        _ => None,
    };
    let result = if let Some(months) = months {
        if months.abs() > MAX_MONTHS {
            return Err(out_of_range());
        }
        let local = zone.at(start).naive_local();
        let shifted = if months >= 0 {
            local.checked_add_months(Months::new(
                u32::try_from(months).map_err(|_| out_of_range())?,
            ))
        } else {
            local.checked_sub_months(Months::new(
                u32::try_from(-months).map_err(|_| out_of_range())?,
            ))
        };
        zone.from_local(shifted.ok_or_else(out_of_range)?)?
    } else {
        let per_unit = match unit {
            "seconds" => 1.0,
            "minutes" => 60.0,
            "hours" => 3600.0,
            "days" => 86_400.0,
            _ => 604_800.0,
        };
        let ms = round(amount * per_unit * 1000.0, 0);
        // Beyond ±10,000 years in milliseconds the result cannot be shown anyway.
        if ms.abs() > 3.2e14 {
            return Err(out_of_range());
        }
        start
            .checked_add_signed(Duration::milliseconds(ms as i64))
            .ok_or_else(out_of_range)?
    };
    use chrono::Datelike as _;
    if !(1..=9999).contains(&zone.at(result).year()) {
        return Err(out_of_range());
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_(args: Value) -> Result<Value, Fail> {
        run(&args)
    }

    #[test]
    fn calendar_and_exact_units() {
        let got = add_(json!({"date": "2024-01-31", "amount": 1, "unit": "months"})).unwrap();
        assert_eq!(got["result"], "2024-02-29T00:00:00+00:00");
        assert_eq!(got["dayOfWeek"], "Thursday");
        assert_eq!(got["resultFormatted"], "Thursday, February 29, 2024, 00:00");
        assert_eq!(got["added"], json!({"amount": 1.0, "unit": "months"}));
        assert_eq!(
            add_(json!({"date": "2024-02-29", "amount": -1, "unit": "years"})).unwrap()["date"],
            "2023-02-28"
        );
        assert_eq!(
            add_(json!({"date": "2024-01-15 10:00", "amount": 1.5, "unit": "days"})).unwrap()["result"],
            "2024-01-16T22:00:00+00:00"
        );
        assert_eq!(
            add_(json!({"date": "2024-01-15T10:00:00Z", "amount": -3, "unit": "weeks"})).unwrap()["date"],
            "2023-12-25"
        );
        assert_eq!(
            add_(json!({"date": "2024-01-15T10:00:00Z", "amount": 90, "unit": "minutes"})).unwrap()
                ["result"],
            "2024-01-15T11:30:00+00:00"
        );
        // A month later in Berlin keeps the wall clock across the DST change.
        let got = add_(json!({"date": "2024-03-15 09:00", "amount": 1, "unit": "months", "timezone": "Europe/Berlin"})).unwrap();
        assert_eq!(got["result"], "2024-04-15T09:00:00+02:00");
        let now = add_(json!({"date": "now", "amount": 0, "unit": "days"})).unwrap();
        assert_eq!(now["original"], now["result"]);
    }

    #[test]
    fn bad_arguments_and_limits() {
        let err = add_(json!({"date": "2024-01-31", "amount": 1.5, "unit": "months"})).unwrap_err();
        assert!(
            err.message().contains("whole number") && err.message().contains("days"),
            "{err:?}"
        );
        let err =
            add_(json!({"date": "2024-01-31", "amount": 1, "unit": "fortnights"})).unwrap_err();
        assert_eq!(
            err.message(),
            "'unit' must be one of: seconds, minutes, hours, days, weeks, months, years"
        );
        let err = add_(json!({"date": "2024-01-31", "amount": 1})).unwrap_err();
        assert!(err.message().contains("'unit' is required"), "{err:?}");
        let err = add_(json!({"date": "2024-01-31", "amount": "one", "unit": "days"})).unwrap_err();
        assert_eq!(err.message(), "'amount' is required and must be a number");
        let err = add_(json!({"date": "31/01/2024", "amount": 1, "unit": "days"})).unwrap_err();
        assert!(err.message().contains("2024-01-15"), "{err:?}");
        for (amount, unit) in [
            (1e300, "seconds"),
            (1e9, "years"),
            (8000.0, "years"),
            (-1e7, "days"),
            (9e15, "months"),
        ] {
            let err =
                add_(json!({"date": "2024-01-31", "amount": amount, "unit": unit})).unwrap_err();
            assert!(
                err.message().contains("years 1 to 9999"),
                "{amount} {unit}: {err:?}"
            );
        }
    }
}
