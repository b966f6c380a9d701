//! `statistics`: the descriptive statistics of a list of numbers (mean, median, mode, variance,
//! standard deviation, quartiles, a requested percentile).

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{Fail, check_size, number, round};

/// Most numbers one call may describe.
pub const MAX_NUMBERS: usize = 100_000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "statistics",
        "Calculate statistics of a list of numbers: count, sum, mean (average), median, mode, \
         variance and standard deviation (population and sample), min, max, range, quartiles \
         and an optional percentile. Percentiles interpolate linearly between ranks.",
        json!({
            "type": "object",
            "properties": {
                "numbers": {
                    "anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "string"}],
                    "description": "The numbers: an array such as [1, 2.5, 3], or text such as \"1, 2.5, 3\". At most 100000."
                },
                "percentile": {"type": "number", "minimum": 0, "maximum": 100, "description": "Also compute this percentile (0-100)."},
                "decimals": {"type": "integer", "minimum": 0, "maximum": 12, "default": 4, "description": "Decimal places of the results (default 4)."}
            },
            "required": ["numbers"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "statistics", "stats", "average", "mean", "median", "mode", "variance", "deviation",
        "stddev", "percentile", "quartile", "sum", "min", "max", "numbers", "math",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let numbers = read_numbers(args.get("numbers"))?;
    let decimals = super::opt_int(args, "decimals", 4, 0, 12)?;
    let percentile = match args.get("percentile") {
        None | Some(Value::Null) => None,
        Some(p) => Some(
            p.as_f64()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| {
                    Fail::Args("'percentile' must be a number from 0 to 100".to_owned())
                })?,
        ),
    };
    describe(&numbers, percentile, i32::try_from(decimals).unwrap_or(4))
}

/// The numbers of an array, or of text separated by commas, semicolons or white space.
fn read_numbers(value: Option<&Value>) -> Result<Vec<f64>, Fail> {
    let numbers: Vec<f64> = match value {
        Some(Value::Array(items)) => {
            if items.len() > MAX_NUMBERS {
                return Err(too_many(items.len()));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_f64().ok_or_else(|| {
                        Fail::Args(format!(
                            "'numbers'[{i}] is not a number: send only numbers, e.g. [1, 2.5, 3]"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?
        }
        Some(Value::String(text)) => {
            check_size("numbers", text.len(), super::MAX_TEXT_BYTES)?;
            let text = text.trim().trim_start_matches('[').trim_end_matches(']');
            let parts: Vec<&str> = text
                .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                .filter(|p| !p.is_empty())
                .collect();
            if parts.len() > MAX_NUMBERS {
                return Err(too_many(parts.len()));
            }
            parts
                .iter()
                .map(|p| {
                    p.parse::<f64>().ok().filter(|f| f.is_finite()).ok_or_else(|| {
                        Fail::Args(format!(
                            "'{}' in 'numbers' is not a number: send numbers separated by commas, e.g. \"1, 2.5, 3\"",
                            super::datetime::shorten(p)
                        ))
                    })
                })
                .collect::<Result<_, _>>()?
        }
        _ => {
            return Err(Fail::Args(
                "'numbers' is required: an array such as [1, 2.5, 3] or text such as \"1, 2.5, 3\""
                    .to_owned(),
            ));
        }
    };
    if numbers.is_empty() {
        return Err(Fail::Args(
            "'numbers' is empty: send at least one number".to_owned(),
        ));
    }
    Ok(numbers)
}

fn too_many(n: usize) -> Fail {
    Fail::Args(format!(
        "'numbers' has {n} values; the limit is {MAX_NUMBERS}: summarise in parts"
    ))
}

/// The statistics of `numbers` (not empty), rounded to `decimals` places.
pub fn describe(numbers: &[f64], percentile: Option<f64>, decimals: i32) -> Result<Value, Fail> {
    let n = numbers.len();
    let mut sorted = numbers.to_vec();
    sorted.sort_by(f64::total_cmp);
    let sum: f64 = numbers.iter().sum();
    let mean = sum / n as f64;
    let squares: f64 = numbers.iter().map(|x| (x - mean).powi(2)).sum();
    let variance = squares / n as f64;
    let sample_variance = (n > 1).then(|| squares / (n - 1) as f64);
    let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
        return Err(Fail::Args(
            "'numbers' is empty: send at least one number".to_owned(),
        ));
    };
    let at = |p: f64| {
        let rank = p / 100.0 * (n - 1) as f64;
        let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
        let value = |k: usize| sorted.get(k).copied().unwrap_or(max);
        value(lo) + (value(hi) - value(lo)) * (rank - lo as f64)
    };
    let r = |x: f64| number(round(x, decimals));
    let mut out = json!({
        "count": n,
        "sum": r(sum)?,
        "mean": r(mean)?,
        "median": r(at(50.0))?,
        "mode": mode(&sorted),
        "min": number(min)?,
        "max": number(max)?,
        "range": r(max - min)?,
        "variance": r(variance)?,
        "standardDeviation": r(variance.sqrt())?,
        "sampleVariance": sample_variance.map(r).transpose()?,
        "sampleStandardDeviation": sample_variance.map(|v| r(v.sqrt())).transpose()?,
        "quartiles": {"q1": r(at(25.0))?, "q2": r(at(50.0))?, "q3": r(at(75.0))?},
    });
    if let Some(p) = percentile {
        object::set(
            &mut out,
            "requestedPercentile",
            json!({"percentile": p, "value": r(at(p))?}),
        );
    }
    Ok(out)
}

/// The most frequent values (ascending); empty when every value occurs once.
fn mode(sorted: &[f64]) -> Vec<f64> {
    let mut best = 1;
    let mut modes = Vec::new();
    for run in sorted.chunk_by(|a, b| a == b) {
        if run.len() > best {
            best = run.len();
            modes.clear();
        }
        if run.len() == best && best > 1 {
            modes.extend(run.first());
        }
    }
    modes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_sample() {
        let got = run(&json!({"numbers": [2, 4, 4, 4, 5, 5, 7, 9], "percentile": 90})).unwrap();
        assert_eq!(got["count"], 8);
        assert_eq!(got["sum"], 40.0);
        assert_eq!(got["mean"], 5.0);
        assert_eq!(got["median"], 4.5);
        assert_eq!(got["mode"], json!([4.0]));
        assert_eq!(got["variance"], 4.0);
        assert_eq!(got["standardDeviation"], 2.0);
        assert_eq!(got["sampleVariance"], 4.5714);
        assert_eq!(got["sampleStandardDeviation"], 2.1381);
        assert_eq!(
            (
                got["min"].as_f64(),
                got["max"].as_f64(),
                got["range"].as_f64()
            ),
            (Some(2.0), Some(9.0), Some(7.0))
        );
        assert_eq!(got["quartiles"], json!({"q1": 4.0, "q2": 4.5, "q3": 5.5}));
        assert_eq!(
            got["requestedPercentile"],
            json!({"percentile": 90.0, "value": 7.6})
        );
    }

    #[test]
    fn text_input_one_value_and_no_mode() {
        let got = run(&json!({"numbers": "3; 1.5, -2  10", "decimals": 2})).unwrap();
        assert_eq!(got["count"], 4);
        assert_eq!(got["mean"], 3.13);
        assert_eq!(got["mode"], json!([]));
        let got = run(&json!({"numbers": "[1, 1, 2, 2, 3]"})).unwrap();
        assert_eq!(got["mode"], json!([1.0, 2.0]));
        let one = run(&json!({"numbers": [42]})).unwrap();
        assert_eq!(one["standardDeviation"], 0.0);
        assert_eq!(one["sampleVariance"], Value::Null);
    }

    #[test]
    fn bad_input_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        assert!(msg(json!({"numbers": [1, "two", 3]})).contains("'numbers'[1] is not a number"));
        assert!(msg(json!({"numbers": "1, two, 3"})).contains("'two' in 'numbers'"));
        assert!(msg(json!({"numbers": []})).contains("at least one number"));
        assert!(msg(json!({"numbers": ""})).contains("at least one number"));
        assert!(msg(json!({})).contains("'numbers' is required"));
        assert!(msg(json!({"numbers": [1], "percentile": 101})).contains("0 to 100"));
        assert!(msg(json!({"numbers": "1, inf"})).contains("'inf'"));
        let many = vec![1; MAX_NUMBERS + 1];
        assert!(msg(json!({"numbers": many})).contains("the limit is 100000"));
        let ok = vec![1; MAX_NUMBERS];
        assert_eq!(run(&json!({"numbers": ok})).unwrap()["count"], MAX_NUMBERS);
        // A sum past f64's range is an error, not a null.
        let err = run(&json!({"numbers": [1e308, 1e308]})).unwrap_err();
        assert!(
            matches!(err, Fail::Run(ref m) if m.contains("overflowed")),
            "{err:?}"
        );
    }
}
