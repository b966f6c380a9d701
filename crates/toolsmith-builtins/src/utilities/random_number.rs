//! `random_number`: random integers (inclusive range, optionally all different) or decimals.

use std::collections::BTreeSet;

use rand::RngExt as _;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, as_int, opt_bool, opt_int, opt_num, round};

pub const MAX_COUNT: i64 = 1000;
/// Integers beyond ±2^53 are not exact in JSON numbers.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "random_number",
        "Generate random numbers in a range: a dice roll (1-6), a coin flip (0-1), lottery \
         numbers (unique), a random pick. Integers include both min and max; decimals are in \
         [min, max).",
        json!({
            "type": "object",
            "properties": {
                "min": {"type": "number", "default": 0, "description": "The smallest value (default 0)."},
                "max": {"type": "number", "default": 100, "description": "The largest value (default 100)."},
                "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": 1, "description": "How many numbers (1-1000, default 1)."},
                "integer": {"type": "boolean", "default": true, "description": "Whole numbers (default true) or decimals."},
                "unique": {"type": "boolean", "default": false, "description": "Integers only: no number twice (like lottery numbers)."},
                "decimals": {"type": "integer", "minimum": 0, "maximum": 15, "default": 4, "description": "Decimal places of decimals (default 4)."}
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "random", "number", "dice", "roll", "coin", "flip", "lottery", "pick", "chance", "rng",
        "integer", "range",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let min = opt_num(args, "min", 0.0)?;
    let max = opt_num(args, "max", 100.0)?;
    let count = usize::try_from(opt_int(args, "count", 1, 1, MAX_COUNT)?).unwrap_or(1);
    let integer = opt_bool(args, "integer", true)?;
    let unique = opt_bool(args, "unique", false)?;
    let decimals = i32::try_from(opt_int(args, "decimals", 4, 0, 15)?).unwrap_or(4);
    if min > max {
        return Err(Fail::Args(format!(
            "'min' ({min}) is greater than 'max' ({max}): swap them"
        )));
    }
    let mut rng = rand::rng();
    let numbers: Vec<Value> = if integer {
        let (lo, hi) = bounds(args, min, max)?;
        let span = u64::try_from(i128::from(hi) - i128::from(lo) + 1).unwrap_or(u64::MAX);
        if unique && (count as u64) > span {
            return Err(Fail::Args(format!(
                "only {span} different integers lie between {lo} and {hi}, fewer than 'count' ({count}): widen the range or lower the count"
            )));
        }
        let mut seen = BTreeSet::new();
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let n = rng.random_range(lo..=hi);
            // With at most 1000 draws from at least as many values this ends quickly.
            if !unique || seen.insert(n) {
                out.push(json!(n));
            }
        }
        out
    } else {
        if unique {
            return Err(Fail::Args(
                "'unique' works with integers only: set 'integer' to true or leave 'unique' out"
                    .to_owned(),
            ));
        }
        if min == max {
            return Err(Fail::Args(
                "decimals need 'min' < 'max': widen the range".to_owned(),
            ));
        }
        (0..count)
            .map(|_| super::number(round(rng.random_range(min..max), decimals)))
            .collect::<Result<_, _>>()?
    };
    Ok(if count == 1 {
        json!({"number": numbers.first(), "min": min, "max": max})
    } else {
        json!({"numbers": numbers, "count": count, "min": min, "max": max})
    })
}

/// `min` and `max` as whole numbers within ±2^53 for integer draws.
fn bounds(args: &Value, min: f64, max: f64) -> Result<(i64, i64), Fail> {
    let whole = |key: &str, v: f64| {
        as_int(&args.get(key).cloned().unwrap_or(json!(v)))
            .filter(|n| (*n as f64).abs() <= MAX_SAFE)
            .ok_or_else(|| {
                Fail::Args(format!(
                    "'{key}' must be a whole number within ±9007199254740991 for integers: round it, or set 'integer' to false"
                ))
            })
    };
    Ok((whole("min", min)?, whole("max", max)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dice_coins_and_lotteries() {
        let got = run(&json!({"min": 1, "max": 6, "count": 1000})).unwrap();
        let rolls: Vec<i64> = got["numbers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_i64)
            .collect();
        assert_eq!(rolls.len(), 1000);
        assert!(rolls.iter().all(|n| (1..=6).contains(n)));
        for face in 1..=6 {
            assert!(
                rolls.contains(&face),
                "1000 rolls of a fair die show every face"
            );
        }
        let lotto = run(&json!({"min": 1, "max": 49, "count": 49, "unique": true})).unwrap();
        let mut drawn: Vec<i64> = lotto["numbers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_i64)
            .collect();
        drawn.sort_unstable();
        assert_eq!(drawn, (1..=49).collect::<Vec<_>>());
        let one = run(&json!({"min": 7, "max": 7})).unwrap();
        assert_eq!(one, json!({"number": 7, "min": 7.0, "max": 7.0}));
        let dec = run(&json!({"min": 0, "max": 1, "integer": false, "decimals": 2, "count": 50}))
            .unwrap();
        for n in dec["numbers"].as_array().unwrap() {
            let n = n.as_f64().unwrap();
            assert!((0.0..=1.0).contains(&n) && round(n, 2) == n, "{n}");
        }
        let wide =
            run(&json!({"min": -9_007_199_254_740_991_i64, "max": 9_007_199_254_740_991_i64}))
                .unwrap();
        assert!(wide["number"].is_i64());
    }

    #[test]
    fn bad_arguments_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        assert_eq!(
            msg(json!({"min": 10, "max": 1})),
            "'min' (10) is greater than 'max' (1): swap them"
        );
        assert!(
            msg(json!({"min": 1, "max": 5, "count": 6, "unique": true}))
                .contains("widen the range or lower the count")
        );
        assert!(msg(json!({"min": 0.5, "max": 5})).contains("set 'integer' to false"));
        assert!(msg(json!({"min": 0, "max": 1e300})).contains("whole number within"));
        assert_eq!(
            msg(json!({"count": 1001})),
            "'count' must be an integer from 1 to 1000"
        );
        assert!(msg(json!({"integer": false, "unique": true})).contains("integers only"));
        assert!(msg(json!({"min": 1, "max": 1, "integer": false})).contains("min' < 'max'"));
    }
}
