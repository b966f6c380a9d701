//! `generate_password`: random passwords from the operating system's CSPRNG-seeded generator
//! (`rand`'s thread generator, ChaCha), drawn uniformly (no modulo bias), with at least one
//! character of every class asked for.

use rand::seq::{IndexedRandom as _, SliceRandom as _};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{Fail, opt_bool, opt_int};

pub const MIN_LENGTH: i64 = 4;
pub const MAX_LENGTH: i64 = 256;
pub const MAX_COUNT: i64 = 20;

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";
const SYMBOLS: &str = "!@#$%^&*()-_=+[]{};:,.<>?/|~";
/// Characters easily confused with others in many fonts.
const AMBIGUOUS: &str = "0O1lI|";

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "generate_password",
        "Generate secure random passwords. Every character class asked for appears at least \
         once. Returns the password(s), the entropy in bits and a strength rating.",
        json!({
            "type": "object",
            "properties": {
                "length": {"type": "integer", "minimum": MIN_LENGTH, "maximum": MAX_LENGTH, "default": 16, "description": "Characters per password (4-256, default 16)."},
                "includeUppercase": {"type": "boolean", "default": true, "description": "Use A-Z (default true)."},
                "includeLowercase": {"type": "boolean", "default": true, "description": "Use a-z (default true)."},
                "includeNumbers": {"type": "boolean", "default": true, "description": "Use 0-9 (default true)."},
                "includeSymbols": {"type": "boolean", "default": true, "description": "Use symbols such as !@#$% (default true)."},
                "excludeAmbiguous": {"type": "boolean", "default": false, "description": "Leave out look-alike characters 0 O 1 l I | (default false)."},
                "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": 1, "description": "How many passwords (1-20, default 1)."}
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "password", "passphrase", "random", "secret", "credentials", "generate",
        "strong", "pin", "key",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let length = opt_int(args, "length", 16, MIN_LENGTH, MAX_LENGTH)?;
    let count = opt_int(args, "count", 1, 1, MAX_COUNT)?;
    let exclude = opt_bool(args, "excludeAmbiguous", false)?;
    let mut classes: Vec<Vec<char>> = Vec::new();
    for (key, set) in [
        ("includeUppercase", UPPER),
        ("includeLowercase", LOWER),
        ("includeNumbers", DIGITS),
        ("includeSymbols", SYMBOLS),
    ] {
        if opt_bool(args, key, true)? {
            classes.push(
                set.chars()
                    .filter(|c| !(exclude && AMBIGUOUS.contains(*c)))
                    .collect(),
            );
        }
    }
    if classes.is_empty() {
        return Err(Fail::Args(
            "every character class is switched off: set at least one of includeUppercase, includeLowercase, includeNumbers, includeSymbols to true".to_owned(),
        ));
    }
    let length = usize::try_from(length).unwrap_or(16);
    if length < classes.len() {
        return Err(Fail::Args(format!(
            "'length' {length} is shorter than the {} character classes asked for: use a longer length",
            classes.len()
        )));
    }
    let alphabet: Vec<char> = classes.concat();
    let mut rng = rand::rng();
    let passwords: Vec<String> = (0..count)
        .map(|_| {
            // One of each class, the rest from the whole alphabet, then shuffled.
            let mut chars: Vec<char> = classes
                .iter()
                .filter_map(|c| c.choose(&mut rng).copied())
                .collect();
            chars
                .extend((classes.len()..length).filter_map(|_| alphabet.choose(&mut rng).copied()));
            chars.shuffle(&mut rng);
            chars.into_iter().collect()
        })
        .collect();
    let entropy = (alphabet.len() as f64).log2() * length as f64;
    let strength = match entropy {
        e if e >= 128.0 => "very strong",
        e if e >= 80.0 => "strong",
        e if e >= 60.0 => "moderate",
        e if e >= 40.0 => "weak",
        _ => "very weak",
    };
    let mut out = json!({"length": length, "strength": strength, "entropyBits": entropy.round()});
    if count == 1 {
        object::set(&mut out, "password", json!(passwords.first()));
    } else {
        object::set(&mut out, "passwords", json!(passwords));
        object::set(&mut out, "count", json!(count));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_classes() {
        let got = run(&json!({})).unwrap();
        let pw = got["password"].as_str().unwrap();
        assert_eq!(pw.chars().count(), 16);
        for set in [UPPER, LOWER, DIGITS, SYMBOLS] {
            assert!(
                pw.chars().any(|c| set.contains(c)),
                "{pw} lacks one of {set}"
            );
        }
        assert_eq!(got["entropyBits"], 104.0, "16 characters of 90");
        assert_eq!(got["strength"], "strong");

        let got = run(&json!({"length": 4, "includeUppercase": false, "includeSymbols": false, "excludeAmbiguous": true, "count": 20})).unwrap();
        let all = got["passwords"].as_array().unwrap();
        assert_eq!((all.len(), got["count"].as_i64()), (20, Some(20)));
        for pw in all {
            let pw = pw.as_str().unwrap();
            assert_eq!(pw.len(), 4);
            assert!(
                pw.chars()
                    .all(|c| (c.is_ascii_lowercase() || c.is_ascii_digit())
                        && !AMBIGUOUS.contains(c)),
                "{pw}"
            );
            assert!(pw.chars().any(|c| c.is_ascii_digit()), "{pw}");
        }
        let digits_only = run(&json!({"length": 256, "includeUppercase": false, "includeLowercase": false, "includeSymbols": false})).unwrap();
        assert_eq!(digits_only["password"].as_str().unwrap().len(), 256);
    }

    #[test]
    fn passwords_do_not_repeat() {
        let got = run(&json!({"count": 20, "length": 12})).unwrap();
        let mut all: Vec<&str> = got["passwords"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 20);
    }

    #[test]
    fn bad_arguments_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        assert_eq!(
            msg(json!({"length": 257})),
            "'length' must be an integer from 4 to 256"
        );
        assert_eq!(
            msg(json!({"length": 3})),
            "'length' must be an integer from 4 to 256"
        );
        assert_eq!(
            msg(json!({"count": 21})),
            "'count' must be an integer from 1 to 20"
        );
        assert_eq!(
            msg(json!({"length": "long"})),
            "'length' must be an integer from 4 to 256"
        );
        assert_eq!(
            msg(json!({"includeSymbols": "no"})),
            "'includeSymbols' must be true or false"
        );
        assert!(msg(json!({"includeUppercase": false, "includeLowercase": false, "includeNumbers": false, "includeSymbols": false})).contains("set at least one"));
    }
}
