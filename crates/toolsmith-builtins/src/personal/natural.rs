//! Days as people write them: the few natural forms a model passes on from a person
//! ("tomorrow", "next Friday 9am", "in 3 days") resolved to an ISO date (and time) against
//! today, so a date field takes them as well as `YYYY-MM-DD`. A small grammar of its own rather
//! than a natural-language date crate: the forms are few, and everything else is refused with
//! the format and an example (see [`HOW_TO_WRITE`]).
//!
//! The grammar, case-insensitive: a day — `today`, `tomorrow`, `yesterday`, `day after
//! tomorrow`, `in N days|weeks`, `next week`, a weekday (`friday`, `fri`, `next friday`, `this
//! friday`, `on friday`: the first such day after today), or an ISO date — then, optionally,
//! `at` and a time of day (`9am`, `9:30 pm`, `14:00`, `noon`, `midnight`). A time alone is
//! today. A month alone (`November`) names no day and is refused.

use chrono::{Datelike, Days, NaiveDate, NaiveTime, Weekday};

/// How a date may be written, for refusals.
pub const HOW_TO_WRITE: &str = "YYYY-MM-DD (like 2026-12-04), or a day in words: \"today\", \
     \"tomorrow\", \"in 3 days\", \"next Friday\", optionally with a time (\"next Friday 9am\", \
     \"tomorrow at 14:30\"), in your time zone (UTC unless set)";

/// A day, and a time of day when one was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    pub date: NaiveDate,
    pub time: Option<NaiveTime>,
}

/// Why a text is not a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotADay {
    /// It names a month but no day of it (`November`).
    MonthOnly,
    /// It is none of the forms.
    Unknown,
}

/// Longest text read (a longer one is no natural date).
const MAX_CHARS: usize = 40;
/// Furthest `in N days` reaches (ten years).
const MAX_DAYS_AHEAD: u64 = 3660;

const WEEKDAYS: [(&str, &str, Weekday); 7] = [
    ("monday", "mon", Weekday::Mon),
    ("tuesday", "tue", Weekday::Tue),
    ("wednesday", "wed", Weekday::Wed),
    ("thursday", "thu", Weekday::Thu),
    ("friday", "fri", Weekday::Fri),
    ("saturday", "sat", Weekday::Sat),
    ("sunday", "sun", Weekday::Sun),
];

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// `text` resolved against `today`.
pub fn resolve(text: &str, today: NaiveDate) -> Result<Resolved, NotADay> {
    if text.chars().count() > MAX_CHARS {
        return Err(NotADay::Unknown);
    }
    let lower = text.to_lowercase().replace(',', " ");
    let words: Vec<&str> = lower.split_whitespace().collect();
    if words.iter().any(|w| is_month(w)) && !words.iter().any(|w| w.contains('-')) {
        return Err(NotADay::MonthOnly);
    }
    let words = match words.as_slice() {
        ["on" | "due" | "by", rest @ ..] => rest,
        all => all,
    };
    let (date, rest) = day(words, today).unwrap_or((today, words));
    let rest = match rest {
        ["at", rest @ ..] => rest,
        rest => rest,
    };
    let time = match rest {
        [] => None,
        [one] => Some(time_of_day(one, "").ok_or(NotADay::Unknown)?),
        [number, half] => Some(time_of_day(number, half).ok_or(NotADay::Unknown)?),
        _ => return Err(NotADay::Unknown),
    };
    // Nothing was read at all: neither a day nor a time.
    if time.is_none() && rest.len() == words.len() {
        return Err(NotADay::Unknown);
    }
    Ok(Resolved { date, time })
}

/// The day the first words name, and the words after it.
fn day<'a, 'w>(words: &'a [&'w str], today: NaiveDate) -> Option<(NaiveDate, &'a [&'w str])> {
    let after = |n: u64| today.checked_add_days(Days::new(n));
    match words {
        ["today" | "tonight", rest @ ..] => Some((today, rest)),
        ["tomorrow", rest @ ..] => Some((after(1)?, rest)),
        ["yesterday", rest @ ..] => Some((today.checked_sub_days(Days::new(1))?, rest)),
        ["day", "after", "tomorrow", rest @ ..] => Some((after(2)?, rest)),
        ["next", "week", rest @ ..] => Some((after(7)?, rest)),
        ["in", n, unit, rest @ ..] => {
            let n: u64 = n.parse().ok()?;
            let days = match *unit {
                "day" | "days" => n,
                "week" | "weeks" => n.checked_mul(7)?,
                _ => return None,
            };
            (days <= MAX_DAYS_AHEAD).then_some(())?;
            Some((after(days)?, rest))
        }
        ["next" | "this" | "coming", name, rest @ ..] => Some((weekday_after(name, today)?, rest)),
        [first, rest @ ..] => {
            if let Some(date) = weekday_after(first, today) {
                return Some((date, rest));
            }
            let date = NaiveDate::parse_from_str(first, "%Y-%m-%d").ok()?;
            Some((date, rest))
        }
        [] => None,
    }
}

/// The first day after `today` that is the weekday `name` (`friday`, `fri`, `fridays`).
fn weekday_after(name: &str, today: NaiveDate) -> Option<NaiveDate> {
    let name = name.trim_end_matches('s');
    let (_, _, weekday) = WEEKDAYS
        .iter()
        .find(|(long, short, _)| name == long.trim_end_matches('s') || name == *short)?;
    let ahead = (7 + weekday.num_days_from_monday() - today.weekday().num_days_from_monday()) % 7;
    today.checked_add_days(Days::new(if ahead == 0 { 7 } else { u64::from(ahead) }))
}

fn is_month(word: &str) -> bool {
    MONTHS
        .iter()
        .any(|m| word == *m || (word.len() == 3 && m.starts_with(word)))
}

/// Which half of the day a time names, when it says (`am`, `p.m.`).
fn half_of_day(word: &str) -> Option<bool> {
    match word.replace('.', "").as_str() {
        "am" => Some(false),
        "pm" => Some(true),
        _ => None,
    }
}

/// `9am`, `9:30pm`, `14:00`, `noon`, `midnight`; `half` is a separate `am`/`pm` (`9 am`).
fn time_of_day(word: &str, half: &str) -> Option<NaiveTime> {
    match word {
        "noon" | "midday" if half.is_empty() => return NaiveTime::from_hms_opt(12, 0, 0),
        "midnight" if half.is_empty() => return NaiveTime::from_hms_opt(0, 0, 0),
        _ => {}
    }
    let (clock, pm) = if half.is_empty() {
        let split = word
            .char_indices()
            .find(|(_, c)| c.is_ascii_alphabetic())
            .map_or(word.len(), |(i, _)| i);
        let (clock, suffix) = word.split_at_checked(split)?;
        if suffix.is_empty() {
            (clock, None)
        } else {
            (clock, Some(half_of_day(suffix)?))
        }
    } else {
        (word, Some(half_of_day(half)?))
    };
    let (hour, minute) = match clock.split_once(':') {
        Some((h, m)) => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        // A bare number is an hour only with am or pm (`9` alone could be anything).
        None if pm.is_some() => (clock.parse::<u32>().ok()?, 0),
        None => return None,
    };
    let hour = match pm {
        None => hour,
        Some(_) if !(1..=12).contains(&hour) => return None,
        Some(false) => hour % 12,
        Some(true) => hour % 12 + 12,
    };
    NaiveTime::from_hms_opt(hour, minute, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn natural_days_resolve_against_today() {
        // A Sunday.
        let today = day(2026, 11, 29);
        let at = |h, m| NaiveTime::from_hms_opt(h, m, 0);
        for (text, date, time) in [
            ("tomorrow", day(2026, 11, 30), None),
            ("Tomorrow at 14:30", day(2026, 11, 30), at(14, 30)),
            ("today", today, None),
            ("yesterday", day(2026, 11, 28), None),
            ("day after tomorrow", day(2026, 12, 1), None),
            ("next Friday 9am", day(2026, 12, 4), at(9, 0)),
            ("friday", day(2026, 12, 4), None),
            ("on Fri at 9:30 pm", day(2026, 12, 4), at(21, 30)),
            ("this sunday", day(2026, 12, 6), None),
            ("in 3 days", day(2026, 12, 2), None),
            ("in 2 weeks", day(2026, 12, 13), None),
            ("next week", day(2026, 12, 6), None),
            ("noon", today, at(12, 0)),
            ("tomorrow 12am", day(2026, 11, 30), at(0, 0)),
            ("tomorrow 12pm", day(2026, 11, 30), at(12, 0)),
            ("2026-12-24 7pm", day(2026, 12, 24), at(19, 0)),
        ] {
            assert_eq!(resolve(text, today), Ok(Resolved { date, time }), "{text}");
        }
    }

    #[test]
    fn months_alone_and_other_words_are_not_days() {
        let today = day(2026, 11, 29);
        for text in ["November", "in november", "Nov", "may"] {
            assert_eq!(resolve(text, today), Err(NotADay::MonthOnly), "{text}");
        }
        for text in [
            "",
            "soon",
            "9",
            "13pm",
            "tomorrow morning",
            "in 5 fortnights",
            "in 99999 days",
            "next friday 25:00",
            &"tomorrow ".repeat(10),
        ] {
            assert_eq!(resolve(text, today), Err(NotADay::Unknown), "{text}");
        }
    }
}
