//! A person's time zone (an IANA name, `Europe/Paris`; UTC unless set): where the personal
//! data families' dates in words are read ("today" is today there, "tomorrow 9am" is 9am
//! there). Kept as one record of the per-user record store (collection [`COLLECTION`], id
//! [`ID`], the user's, no agent), so every agent of the user reads the same zone and export and
//! erasure cover it; no table of its own.

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::json;
use toolsmith_core::data::{DataRecord, RecordScope};

use crate::data::Records;
use crate::utilities::Fail;
use crate::utilities::datetime::Zone;

/// The record store's collection of a user's settings.
pub const COLLECTION: &str = "setting";
/// The id of the time zone's record in it.
pub const ID: &str = "timezone";

/// The user's settings scope: theirs, whichever agent calls.
fn scope(owner: &str) -> RecordScope {
    RecordScope::new(owner, None)
}

/// The zone `name` names (an IANA name in any letter case: `Europe/Paris`, `europe/paris`,
/// `UTC`), or the refusal that names the form. A fixed offset (`+02:00`) is refused: it would
/// not follow daylight saving time.
pub fn parse(name: &str) -> Result<Tz, Fail> {
    match Zone::parse(name) {
        Ok(Zone::Named(zone)) => Ok(zone),
        _ => {
            let shown: String = name.trim().chars().take(64).collect();
            Err(Fail::Args(format!(
                "'{shown}' is not a time zone name: give an IANA time zone name, like \
                 Europe/Paris, America/New_York or UTC (not an offset: a name follows daylight \
                 saving time)"
            )))
        }
    }
}

/// The time zone of `owner` (UTC when none is set, or when the stored one is no longer known).
pub async fn get(records: &dyn Records, owner: &str) -> Result<Tz, Fail> {
    let found = records.get(&scope(owner), COLLECTION, ID).await?;
    Ok(found
        .and_then(|r| r.document.get("timeZone")?.as_str().map(str::to_owned))
        .and_then(|name| parse(&name).ok())
        .unwrap_or(Tz::UTC))
}

/// Sets the time zone of `owner` to `name`; the zone set.
pub async fn set(records: &dyn Records, owner: &str, name: &str) -> Result<Tz, Fail> {
    let zone = parse(name)?;
    let scope = scope(owner);
    let document = json!({ "timeZone": zone.name() });
    let mut record = DataRecord::new(&scope, COLLECTION, ID, document, String::new());
    if let Some(found) = records.get(&scope, COLLECTION, ID).await? {
        record.created_at = found.created_at;
        records.update(record).await?;
    } else {
        records.put(record).await?;
    }
    Ok(zone)
}

/// Today's date in `zone` at `now`.
#[must_use]
pub fn today(zone: Tz, now: DateTime<Utc>) -> chrono::NaiveDate {
    now.with_timezone(&zone).date_naive()
}

/// The instant the wall-clock time `local` names in `zone`, with its offset. A time the clocks
/// skip (a spring-forward gap) is read as the same time an hour later; a time they pass twice
/// is its first.
#[must_use]
pub fn at(zone: Tz, local: NaiveDateTime) -> Option<DateTime<chrono::FixedOffset>> {
    zone.from_local_datetime(&local)
        .earliest()
        .or_else(|| {
            zone.from_local_datetime(&(local + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::personal::fields::{Field, FieldKind};

    fn read(text: &str, zone: &str, now: &str) -> Result<serde_json::Value, Fail> {
        let field = Field::new("when", FieldKind::Time, "when");
        let now = DateTime::parse_from_rfc3339(now).map(|t| t.with_timezone(&Utc));
        field.read_at(
            &json!(text),
            parse(zone)?,
            now.map_err(|e| Fail::Run(e.to_string()))?,
        )
    }

    fn utc(stored: &serde_json::Value) -> Option<String> {
        let text = stored.as_str()?;
        let at = DateTime::parse_from_rfc3339(text).ok()?;
        Some(at.with_timezone(&Utc).to_rfc3339())
    }

    /// Europe/Paris moves from +01:00 to +02:00 at 02:00 on 2026-03-29: 9am is 08:00Z the day
    /// before, 07:00Z that day and after.
    #[test]
    fn tomorrow_at_nine_across_a_dst_change() -> Result<(), Fail> {
        let cases = [
            (
                "2026-03-27T12:00:00Z",
                "2026-03-28T09:00:00+01:00",
                "2026-03-28T08:00:00+00:00",
            ),
            (
                "2026-03-28T12:00:00Z",
                "2026-03-29T09:00:00+02:00",
                "2026-03-29T07:00:00+00:00",
            ),
            (
                "2026-03-29T12:00:00Z",
                "2026-03-30T09:00:00+02:00",
                "2026-03-30T07:00:00+00:00",
            ),
        ];
        for (now, stored, instant) in cases {
            let got = read("tomorrow 9am", "Europe/Paris", now)?;
            assert_eq!(got, json!(stored), "from {now}");
            assert_eq!(utc(&got).as_deref(), Some(instant), "from {now}");
        }
        // In UTC, the same words are 09:00Z.
        let got = read("tomorrow 9am", "UTC", "2026-03-28T12:00:00Z")?;
        assert_eq!(got, json!("2026-03-29T09:00:00+00:00"));
        Ok(())
    }

    /// "today" is the zone's date: at 23:30Z on 2026-03-28 it is already the 29th in Paris and
    /// still the 28th in New York.
    #[test]
    fn today_is_the_zones_date() -> Result<(), Fail> {
        let date = Field::new("day", FieldKind::Date, "day");
        let now = DateTime::parse_from_rfc3339("2026-03-28T23:30:00Z")
            .map_err(|e| Fail::Run(e.to_string()))?
            .with_timezone(&Utc);
        let paris = date.read_at(&json!("today"), parse("Europe/Paris")?, now)?;
        let new_york = date.read_at(&json!("today"), parse("America/New_York")?, now)?;
        assert_eq!(paris, json!("2026-03-29"));
        assert_eq!(new_york, json!("2026-03-28"));
        Ok(())
    }

    /// 02:30 does not happen in Paris on 2026-03-29: it is read as 03:30 (+02:00).
    #[test]
    fn a_skipped_time_is_the_hour_after() -> Result<(), Fail> {
        let got = read("tomorrow at 2:30", "Europe/Paris", "2026-03-28T12:00:00Z")?;
        assert_eq!(got, json!("2026-03-29T03:30:00+02:00"));
        Ok(())
    }

    /// `list_calendar_events` without a range lists from midnight today in the user's zone
    /// (Asia/Kolkata, +05:30 all year: 18:30Z the day before).
    #[test]
    fn upcoming_events_start_at_midnight_in_the_zone() -> Result<(), Fail> {
        use crate::personal::{calendar, ops};
        let scope = RecordScope::new("alice", None);
        let kolkata = parse("Asia/Kolkata")?;
        let midnight = || {
            let day = today(kolkata, Utc::now()).and_time(chrono::NaiveTime::MIN);
            at(kolkata, day).map(|t| t.with_timezone(&Utc))
        };
        let before = midnight();
        let query = ops::list_query(&calendar::FAMILY, &scope, &json!({}), kolkata)?;
        let after = midnight();
        assert!(
            query.at_from == before || query.at_from == after,
            "{query:?}"
        );
        let from = query.at_from.map(|t| t.to_rfc3339()).unwrap_or_default();
        assert!(from.contains("T18:30:00"), "{from}");
        Ok(())
    }

    #[test]
    fn a_name_in_any_case_but_no_offset() -> Result<(), Fail> {
        assert_eq!(parse("europe/paris")?, Tz::Europe__Paris);
        assert!(parse("+02:00").is_err());
        Ok(())
    }

    #[test]
    fn an_unknown_zone_names_the_form() {
        let Err(fail) = parse("Paris") else {
            panic!("'Paris' was taken as a zone");
        };
        assert!(
            fail.message().contains("Europe/Paris"),
            "{}",
            fail.message()
        );
    }
}
