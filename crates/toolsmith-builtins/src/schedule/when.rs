//! [`When`]: a task's schedule — a five-field cron expression (croner: POSIX/Vixie cron, with
//! `L`, `W` and `#`, and the `@daily`-style nicknames) or one moment (an ISO 8601 time) — in
//! an IANA time zone, and the next time it is due.
//!
//! Cron expressions are read in the task's time zone (`0 9 * * 1-5` is 9:00 on weekdays
//! there, daylight saving included); a one-off time without an offset is read in it too.
//! Seconds are not accepted: the scheduler runs at most once a minute per task.

use std::str::FromStr;

use chrono::{DateTime, Datelike, NaiveDateTime, SubsecRound, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;

/// Longest schedule string accepted.
const MAX_SCHEDULE_BYTES: usize = 200;

/// When a task is due.
#[derive(Debug, Clone)]
pub enum When {
    /// Every time the expression matches, in the zone.
    Cron { cron: Box<Cron>, tz: Tz },
    /// Once, at this moment.
    Once(DateTime<Utc>),
}

impl When {
    /// Reads `schedule` (cron or ISO time) in the time zone `timezone` (IANA; `None`: UTC).
    pub fn parse(schedule: &str, timezone: Option<&str>) -> Result<When, String> {
        let tz = match timezone.map(str::trim).filter(|t| !t.is_empty()) {
            None => Tz::UTC,
            Some(name) => Tz::from_str(name).map_err(|_| {
                format!(
                    "'timezone' must be an IANA time zone such as \"Europe/Paris\" or \
                     \"America/New_York\" (or \"UTC\"); '{}' is not one",
                    shown(name)
                )
            })?,
        };
        let schedule = schedule.trim();
        if schedule.is_empty() || schedule.len() > MAX_SCHEDULE_BYTES {
            return Err(format!(
                "'schedule' must be a cron expression such as \"0 9 * * 1-5\" (9:00 on \
                 weekdays) or \"*/15 * * * *\", or one time such as \"2026-12-01T09:00\"; at \
                 most {MAX_SCHEDULE_BYTES} bytes"
            ));
        }
        if let Some(at) = one_time(schedule, tz) {
            return Ok(When::Once(at));
        }
        let fields = schedule.split_whitespace().count();
        if !schedule.starts_with('@') && fields != 5 {
            return Err(format!(
                "'schedule' \"{}\" has {fields} fields; a cron expression has 5 (minute hour \
                 day-of-month month day-of-week, e.g. \"30 8 * * *\" for 8:30 every day), and \
                 a one-off time is ISO 8601 (\"2026-12-01T09:00\")",
                shown(schedule)
            ));
        }
        if let Some(problem) = field_out_of_range(schedule) {
            return Err(format!(
                "'schedule' \"{}\": {problem} (a cron expression's fields are minute hour \
                 day-of-month month day-of-week; e.g. \"15 9 * * 1\" is 9:15 every Monday)",
                shown(schedule)
            ));
        }
        let cron = Cron::from_str(schedule).map_err(|e| {
            format!(
                "'schedule' \"{}\" is not a valid cron expression ({e}); e.g. \"0 9 * * 1-5\" \
                 runs at 9:00 on weekdays, \"*/10 * * * *\" every 10 minutes",
                shown(schedule)
            )
        })?;
        if !fires(&cron) {
            return Err(format!(
                "'schedule' \"{}\" never fires: no date matches its day-of-month, month and \
                 day-of-week fields together (e.g. February 30, or an empty list item); e.g. \
                 \"0 9 L * *\" runs at 9:00 on the last day of every month",
                shown(schedule)
            ));
        }
        Ok(When::Cron {
            cron: Box::new(cron),
            tz,
        })
    }

    /// The first time it is due strictly after `after`; `None` when it never is again. A
    /// cron time is on the whole minute (croner carries the start's fraction of a second
    /// over, so the search starts from `after`'s whole second).
    #[must_use]
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            When::Once(at) => (*at > after).then_some(*at),
            When::Cron { cron, tz } => cron
                .find_next_occurrence(&after.trunc_subsecs(0).with_timezone(tz), false)
                .ok()
                .map(|next| next.with_timezone(&Utc).trunc_subsecs(0)),
        }
    }

    /// Whether it is due more than once.
    #[must_use]
    pub fn repeats(&self) -> bool {
        matches!(self, When::Cron { .. })
    }
}

/// The five cron fields in order: name and the range of their numbers.
const CRON_FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day-of-month", 1, 31),
    ("month", 1, 12),
    ("day-of-week", 0, 7),
];

/// The first number of a five-field cron expression outside its field's range, named with the
/// field and the range (croner says only "Number out of bounds"). Names (`MON`, `JAN`),
/// `L`, `W`, `#` and steps are left to croner.
fn field_out_of_range(schedule: &str) -> Option<String> {
    if schedule.starts_with('@') {
        return None;
    }
    for (position, (field, (name, min, max))) in
        schedule.split_whitespace().zip(CRON_FIELDS).enumerate()
    {
        for item in field.split(',') {
            // The step after `/` counts occurrences, not values of the field.
            let values = item.split('/').next().unwrap_or_default();
            for number in values.split('-') {
                if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                let out = number
                    .parse::<u32>()
                    .ok()
                    .is_none_or(|n| !(min..=max).contains(&n));
                if out {
                    return Some(format!(
                        "the {name} field (field {} of 5) is {}, but it must be {min}-{max}",
                        position + 1,
                        shown(number)
                    ));
                }
            }
        }
    }
    None
}

/// Years in which every combination of a date, its weekday and a leap year occurs (the
/// Gregorian calendar repeats every 28 years between 1901 and 2099).
const CALENDAR_CYCLE_YEARS: i32 = 28;

/// Whether `cron` matches some minute at all. croner looks for the next time up to the year
/// 5000, seconds of CPU for an expression that never matches (`0 0 30 2 *`, `* * , * *`), so
/// such an expression is refused here, after a walk over the days of one calendar cycle.
fn fires(cron: &Cron) -> bool {
    let pattern = &cron.pattern;
    let some_time = (0..24).any(|h| pattern.hour_match(h).unwrap_or(false))
        && (0..60).any(|m| pattern.minute_match(m).unwrap_or(false));
    let Some(first) = chrono::NaiveDate::from_ymd_opt(2001, 1, 1) else {
        return true;
    };
    some_time
        && first
            .iter_days()
            .take_while(|day| day.year() < 2001 + CALENDAR_CYCLE_YEARS)
            .any(|day| {
                pattern.month_match(day.month()).unwrap_or(false)
                    && pattern
                        .day_match(day.year(), day.month(), day.day())
                        .unwrap_or(false)
            })
}

/// `schedule` as one moment: RFC 3339 with an offset, or a local date-time (`T` or a space,
/// minutes or seconds) or a date (midnight) read in `tz`.
fn one_time(schedule: &str, tz: Tz) -> Option<DateTime<Utc>> {
    if let Ok(at) = DateTime::parse_from_rfc3339(schedule) {
        return Some(at.with_timezone(&Utc));
    }
    let naive = [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|format| NaiveDateTime::parse_from_str(schedule, format).ok())
    .or_else(|| {
        chrono::NaiveDate::parse_from_str(schedule, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
    })?;
    // A time skipped by a clock change is taken an hour later; an ambiguous one, the first.
    tz.from_local_datetime(&naive)
        .earliest()
        .or_else(|| {
            tz.from_local_datetime(&(naive + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|at| at.with_timezone(&Utc))
}

/// At most 60 characters of a caller's string, for an error message.
fn shown(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn cron_in_a_time_zone_follows_its_clock_changes() {
        let when = When::parse("0 9 * * 1-5", Some("Europe/Paris")).unwrap();
        // Friday 2026-03-27 is CET (UTC+1): 9:00 there is 8:00 UTC.
        assert_eq!(
            when.next_after(utc("2026-03-27T07:00:00Z")),
            Some(utc("2026-03-27T08:00:00Z"))
        );
        // After the change to CEST on Sunday 29 March, Monday's 9:00 is 7:00 UTC.
        assert_eq!(
            when.next_after(utc("2026-03-27T08:00:00Z")),
            Some(utc("2026-03-30T07:00:00Z"))
        );
        let every_minute = When::parse("* * * * *", None).unwrap();
        assert_eq!(
            every_minute.next_after(utc("2026-11-27T12:00:30.123456Z")),
            Some(utc("2026-11-27T12:01:00Z"))
        );
        assert_eq!(
            every_minute.next_after(utc("2026-11-27T12:00:59.999Z")),
            Some(utc("2026-11-27T12:01:00Z"))
        );
        assert_eq!(
            every_minute.next_after(utc("2026-11-27T12:01:00Z")),
            Some(utc("2026-11-27T12:02:00Z"))
        );
        assert!(When::parse("@daily", None).unwrap().repeats());
    }

    #[test]
    fn one_off_times_are_read_in_the_zone_and_are_due_once() {
        let when = When::parse("2026-12-01T09:00", Some("America/New_York")).unwrap();
        let at = utc("2026-12-01T14:00:00Z");
        assert_eq!(when.next_after(utc("2026-11-30T00:00:00Z")), Some(at));
        assert_eq!(when.next_after(at), None);
        assert!(!when.repeats());
        let offset = When::parse("2026-12-01T09:00:00+02:00", Some("Asia/Tokyo")).unwrap();
        assert_eq!(
            offset.next_after(utc("2026-01-01T00:00:00Z")),
            Some(utc("2026-12-01T07:00:00Z"))
        );
    }

    #[test]
    fn bad_schedules_and_zones_name_the_fix() {
        for (schedule, zone, needle) in [
            ("", None, "cron expression"),
            ("* * * * * *", None, "has 6 fields"),
            ("61 * * * *", None, "the minute field (field 1 of 5) is 61"),
            ("75 9 * * 1", None, "is 75, but it must be 0-59"),
            (
                "0 24 * * *",
                None,
                "the hour field (field 2 of 5) is 24, but it must be 0-23",
            ),
            ("0 9 0 * *", None, "day-of-month field"),
            ("0 9 * 1-13 *", None, "the month field (field 4 of 5) is 13"),
            ("0 9 * * 1,8", None, "day-of-week field (field 5 of 5) is 8"),
            ("every day", None, "has 2 fields"),
            ("0 9 * * *", Some("Mars/Olympus"), "IANA time zone"),
            (&"9".repeat(500), None, "at most 200 bytes"),
            // Found by fuzzing (fuzz/corpus/cron/never_*): croner searched up to the year 5000
            // for these, seconds of CPU for each next time.
            ("* * , * *", None, "never fires"),
            ("0 0 30 2 *", None, "never fires"),
            ("0 0 31 2,4 *", None, "never fires"),
            ("0 0 30W 2 *", Some("Europe/Paris"), "never fires"),
        ] {
            let err = When::parse(schedule, zone).err().unwrap_or_default();
            assert!(err.contains(needle), "{schedule:?} {zone:?}: {err}");
        }
    }
}
