//! Amounts without float drift. An expense's `amount` is kept as decimal text with exactly its
//! currency's number of decimals (ISO 4217 minor units: `12.50` USD, `1200` JPY, `1.250` BHD),
//! read from the caller's number by its shortest decimal form (`19.99` stays `19.99`) and
//! refused when it has more decimals than the currency. Sums are whole numbers of minor units
//! (`i128`) of one currency, written back as decimal text; amounts of different currencies are
//! never added together. The store's `weight` of an expense is its amount in thousandths of
//! its currency's major unit (exact in an `f64` up to 9 × 10¹², far above [`MAX_AMOUNT`]), so
//! amount filters and the amount order are exact across currencies.

use serde_json::{Map, Value, json};
use toolsmith_core::data::RecordQuery;

use crate::utilities::Fail;

/// Largest amount one expense may have, in major units.
pub const MAX_AMOUNT: i128 = 1_000_000_000_000;
/// The currency of an expense given without one.
pub const DEFAULT_CURRENCY: &str = "USD";

/// ISO 4217 currencies without minor units.
const NO_DECIMALS: &[&str] = &[
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];
/// ISO 4217 currencies with three decimals.
const THREE_DECIMALS: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];

/// How many decimals `currency` has (2 unless ISO 4217 says otherwise).
#[must_use]
pub fn decimals(currency: &str) -> u32 {
    if NO_DECIMALS.contains(&currency) {
        0
    } else if THREE_DECIMALS.contains(&currency) {
        3
    } else {
        2
    }
}

/// `text` (digits and at most one point) as a whole number of units of 10^-`scale`; `None`
/// when it is malformed or has non-zero digits beyond `scale`.
#[must_use]
pub fn to_units(text: &str, scale: u32) -> Option<i128> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 20 || !digits(whole) || !digits(fraction) {
        return None;
    }
    let scale = scale as usize;
    let (kept, beyond) = fraction
        .split_at_checked(scale.min(fraction.len()))
        .unwrap_or((fraction, ""));
    if beyond.bytes().any(|b| b != b'0') {
        return None;
    }
    let padded = format!("{whole}{kept}{}", "0".repeat(scale - kept.len()));
    padded.parse().ok()
}

/// Whole `units` of 10^-`scale` as decimal text (`1250`, 2 → `12.50`).
#[must_use]
pub fn to_text(units: i128, scale: u32) -> String {
    let sign = if units < 0 { "-" } else { "" };
    let units = units.unsigned_abs();
    if scale == 0 {
        return format!("{sign}{units}");
    }
    let div = 10u128.pow(scale);
    format!(
        "{sign}{}.{:0width$}",
        units / div,
        units % div,
        width = scale as usize
    )
}

/// An expense's amount in minor units of its currency.
#[must_use]
pub fn minor_units(expense: &Map<String, Value>) -> (String, i128) {
    let currency = currency_of(expense).to_owned();
    let amount = expense.get("amount").and_then(Value::as_str).unwrap_or("0");
    let units = to_units(amount, decimals(&currency)).unwrap_or(0);
    (currency, units)
}

fn currency_of(expense: &Map<String, Value>) -> &str {
    expense
        .get("currency")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_CURRENCY)
}

/// An expense's weight: its amount in thousandths.
pub fn weight(expense: &Map<String, Value>) -> f64 {
    let amount = expense.get("amount").and_then(Value::as_str).unwrap_or("0");
    to_units(amount, 3).map_or(0.0, |t| t as f64)
}

/// The expense family's check: the currency an upper-case ISO 4217 code, the amount given
/// exactly its currency's decimals and at most [`MAX_AMOUNT`], the date today when not given.
pub fn settle(expense: &mut Map<String, Value>) -> Result<(), Fail> {
    let currency = currency_of(expense).trim().to_ascii_uppercase();
    if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(Fail::Args(format!(
            "'currency' must be a three-letter ISO 4217 code like USD, EUR or JPY, got '{}'",
            currency.chars().take(20).collect::<String>()
        )));
    }
    let scale = decimals(&currency);
    let amount = expense.get("amount").and_then(Value::as_str).unwrap_or("");
    let units = to_units(amount, scale).ok_or_else(|| {
        Fail::Args(format!(
            "'amount' {amount} has more decimals than {currency} has ({scale}): round it to \
             {scale} decimals"
        ))
    })?;
    if units == 0 || units > MAX_AMOUNT * 10i128.pow(scale) {
        return Err(Fail::Args(format!(
            "'amount' must be more than 0 and at most {MAX_AMOUNT}"
        )));
    }
    expense.insert("amount".to_owned(), json!(to_text(units, scale)));
    expense.insert("currency".to_owned(), json!(currency));
    if !expense.contains_key("date") {
        expense.insert(
            "date".to_owned(),
            json!(chrono::Utc::now().date_naive().to_string()),
        );
    }
    Ok(())
}

/// The list filters `minAmount` and `maxAmount` (in major units, whatever the currency).
pub fn filter_schema(props: &mut Map<String, Value>) {
    for (key, what) in [("minAmount", "at least"), ("maxAmount", "at most")] {
        props.insert(
            key.to_owned(),
            json!({"type": "number", "minimum": 0, "description": format!("Only expenses of {what} this amount.")}),
        );
    }
}

/// `minAmount` and `maxAmount` as bounds of the query's weight (thousandths).
pub fn apply_filters(args: &Value, query: &mut RecordQuery) -> Result<(), Fail> {
    for key in ["minAmount", "maxAmount"] {
        let text = match args.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(_) => String::new(),
        };
        let bound = to_units(&text, 3).ok_or_else(|| {
            Fail::Args(format!(
                "'{key}' must be a number of at least 0 with at most 3 decimals, like 12.50"
            ))
        })? as f64;
        if key == "minAmount" {
            query.min_weight = Some(bound);
        } else {
            query.max_weight = Some(bound);
        }
    }
    if let (Some(min), Some(max)) = (query.min_weight, query.max_weight)
        && min > max
    {
        return Err(Fail::Args(
            "'minAmount' must not be more than 'maxAmount'".to_owned(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_exact_decimals_of_their_currency() {
        assert_eq!(to_units("12.5", 2), Some(1250));
        assert_eq!(to_units("12.50", 2), Some(1250));
        assert_eq!(to_units("12.500", 2), Some(1250));
        assert_eq!(to_units("12.505", 2), None);
        assert_eq!(to_units("1200", 0), Some(1200));
        assert_eq!(to_units("1200.5", 0), None);
        assert_eq!(to_units("-1", 2), None);
        assert_eq!(to_units("1e3", 2), None);
        assert_eq!(to_units("", 2), None);
        assert_eq!(to_units(".5", 2), None);
        assert_eq!(to_text(1250, 2), "12.50");
        assert_eq!(to_text(5, 3), "0.005");
        assert_eq!(to_text(1200, 0), "1200");
        // A hundred times 0.10 is 10.00, not 9.999999999999998.
        let sum: i128 = (0..100).map(|_| to_units("0.10", 2).unwrap()).sum();
        assert_eq!(to_text(sum, 2), "10.00");
        let mut e = Map::new();
        e.insert("amount".into(), json!("19.9"));
        e.insert("currency".into(), json!("eur"));
        settle(&mut e).unwrap();
        assert_eq!(e["amount"], "19.90");
        assert_eq!(e["currency"], "EUR");
        assert_eq!(weight(&e), 19_900.0);
        e.insert("currency".into(), json!("JPY"));
        assert!(
            settle(&mut e)
                .unwrap_err()
                .message()
                .contains("round it to 0 decimals")
        );
    }
}
