//! `convert_units`: length, mass, temperature, volume, area, speed, time, data size, pressure
//! and energy. Each unit is a factor to its category's base unit; temperatures are affine.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, num_arg, number, significant, str_arg};

/// A unit: its canonical name, its category, its factor to the base unit, and its other
/// spellings (matched without regard to case, spaces or a trailing "s").
struct Unit {
    name: &'static str,
    category: &'static str,
    factor: f64,
    aliases: &'static [&'static str],
}

const fn u(
    name: &'static str,
    category: &'static str,
    factor: f64,
    aliases: &'static [&'static str],
) -> Unit {
    Unit {
        name,
        category,
        factor,
        aliases,
    }
}

/// Every unit. Bases: metre, gram, kelvin (special), litre, square metre, metre per second,
/// second, byte, pascal, joule. Data units follow IEC: "kb" is 1000 bytes, "kib" 1024.
const UNITS: &[Unit] = &[
    u("m", "length", 1.0, &["meter", "metre"]),
    u("km", "length", 1000.0, &["kilometer", "kilometre"]),
    u("cm", "length", 0.01, &["centimeter", "centimetre"]),
    u("mm", "length", 0.001, &["millimeter", "millimetre"]),
    u("um", "length", 1e-6, &["micrometer", "micron", "µm"]),
    u("nm", "length", 1e-9, &["nanometer", "nanometre"]),
    u("mi", "length", 1609.344, &["mile"]),
    u("yd", "length", 0.9144, &["yard"]),
    u("ft", "length", 0.3048, &["foot", "feet"]),
    u("in", "length", 0.0254, &["inch", "inches"]),
    u("nmi", "length", 1852.0, &["nautical mile"]),
    u("g", "mass", 1.0, &["gram", "gramme"]),
    u("kg", "mass", 1000.0, &["kilogram", "kilo"]),
    u("mg", "mass", 0.001, &["milligram"]),
    u("t", "mass", 1e6, &["tonne", "metric ton", "ton"]),
    u("lb", "mass", 453.592_37, &["pound", "lbs"]),
    u("oz", "mass", 28.349_523_125, &["ounce"]),
    u("st", "mass", 6_350.293_18, &["stone"]),
    u(
        "c",
        "temperature",
        0.0,
        &["celsius", "°c", "degc", "centigrade"],
    ),
    u("f", "temperature", 0.0, &["fahrenheit", "°f", "degf"]),
    u("k", "temperature", 0.0, &["kelvin"]),
    u("l", "volume", 1.0, &["liter", "litre"]),
    u("ml", "volume", 0.001, &["milliliter", "millilitre"]),
    u("cl", "volume", 0.01, &["centiliter", "centilitre"]),
    u(
        "m3",
        "volume",
        1000.0,
        &["cubic meter", "cubic metre", "m³"],
    ),
    u("gal", "volume", 3.785_411_784, &["gallon", "us gallon"]),
    u(
        "imp gal",
        "volume",
        4.546_09,
        &["imperial gallon", "uk gallon"],
    ),
    u("qt", "volume", 0.946_352_946, &["quart"]),
    u("pt", "volume", 0.473_176_473, &["pint"]),
    u("cup", "volume", 0.236_588_236_5, &[]),
    u(
        "fl oz",
        "volume",
        0.029_573_529_562_5,
        &["floz", "fluid ounce"],
    ),
    u("tbsp", "volume", 0.014_786_764_781_25, &["tablespoon"]),
    u("tsp", "volume", 0.004_928_921_593_75, &["teaspoon"]),
    u(
        "m2",
        "area",
        1.0,
        &["sqm", "square meter", "square metre", "m²"],
    ),
    u(
        "km2",
        "area",
        1e6,
        &["sqkm", "square kilometer", "square kilometre", "km²"],
    ),
    u("cm2", "area", 1e-4, &["sqcm", "square centimeter", "cm²"]),
    u(
        "ft2",
        "area",
        0.092_903_04,
        &["sqft", "square foot", "square feet", "ft²"],
    ),
    u(
        "in2",
        "area",
        0.000_645_16,
        &["sqin", "square inch", "square inches"],
    ),
    u("mi2", "area", 2_589_988.110_336, &["sqmi", "square mile"]),
    u("acre", "area", 4_046.856_422_4, &["ac"]),
    u("ha", "area", 10_000.0, &["hectare"]),
    u(
        "m/s",
        "speed",
        1.0,
        &["mps", "meters per second", "metres per second"],
    ),
    u(
        "km/h",
        "speed",
        1.0 / 3.6,
        &["kmh", "kph", "kilometers per hour", "kilometres per hour"],
    ),
    u("mph", "speed", 0.447_04, &["miles per hour", "mi/h"]),
    u("kn", "speed", 1852.0 / 3600.0, &["knot", "kt"]),
    u("ft/s", "speed", 0.3048, &["fps", "feet per second"]),
    u("s", "time", 1.0, &["sec", "second"]),
    u("ms", "time", 0.001, &["millisecond"]),
    u("min", "time", 60.0, &["minute"]),
    u("h", "time", 3600.0, &["hr", "hour"]),
    u("d", "time", 86_400.0, &["day"]),
    u("wk", "time", 604_800.0, &["week"]),
    u("yr", "time", 31_556_952.0, &["year"]),
    u("B", "data", 1.0, &["byte"]),
    u("bit", "data", 0.125, &["b"]),
    u("KB", "data", 1e3, &["kilobyte"]),
    u("MB", "data", 1e6, &["megabyte"]),
    u("GB", "data", 1e9, &["gigabyte"]),
    u("TB", "data", 1e12, &["terabyte"]),
    u("KiB", "data", 1024.0, &["kibibyte"]),
    u("MiB", "data", 1_048_576.0, &["mebibyte"]),
    u("GiB", "data", 1_073_741_824.0, &["gibibyte"]),
    u("TiB", "data", 1_099_511_627_776.0, &["tebibyte"]),
    u("Kbit", "data", 125.0, &["kilobit"]),
    u("Mbit", "data", 125_000.0, &["megabit"]),
    u("Gbit", "data", 1.25e8, &["gigabit"]),
    u("Pa", "pressure", 1.0, &["pascal"]),
    u("kPa", "pressure", 1000.0, &["kilopascal"]),
    u("bar", "pressure", 100_000.0, &[]),
    u("atm", "pressure", 101_325.0, &["atmosphere"]),
    u("psi", "pressure", 6_894.757_293_168, &[]),
    u("mmHg", "pressure", 133.322_387_415, &["torr"]),
    u("J", "energy", 1.0, &["joule"]),
    u("kJ", "energy", 1000.0, &["kilojoule"]),
    u("cal", "energy", 4.184, &["calorie"]),
    u("kcal", "energy", 4184.0, &["kilocalorie", "food calorie"]),
    u("Wh", "energy", 3600.0, &["watt hour"]),
    u("kWh", "energy", 3.6e6, &["kilowatt hour"]),
];

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "convert_units",
        "Convert a value between units of measurement: length (km, miles, feet, inches), mass \
         (kg, lb, oz), temperature (celsius, fahrenheit, kelvin), volume (liters, gallons, cups), \
         area, speed (km/h, mph, knots), time, data size (MB, GB; MiB, GiB), pressure and energy.",
        json!({
            "type": "object",
            "properties": {
                "value": {"type": "number", "description": "The value to convert."},
                "from": {"type": "string", "description": "The unit of the value, e.g. \"km\", \"lb\", \"celsius\", \"GB\"."},
                "to": {"type": "string", "description": "The unit to convert to, of the same kind, e.g. \"miles\", \"kg\", \"fahrenheit\", \"MB\"."}
            },
            "required": ["value", "from", "to"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "convert", "conversion", "units", "unit", "measurement", "celsius", "fahrenheit",
        "kelvin", "temperature", "km", "miles", "kg", "pounds", "lb", "feet", "inches", "liters",
        "gallons", "metric", "imperial", "mph", "bytes", "gb",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let value = num_arg(args, "value")?;
    let from = find("from", str_arg(args, "from")?)?;
    let to = find("to", str_arg(args, "to")?)?;
    if from.category != to.category {
        return Err(Fail::Args(format!(
            "cannot convert {} ({}) to {} ({}): pick a '{}' unit that is also a {} unit, e.g. {}",
            from.name,
            from.category,
            to.name,
            to.category,
            "to",
            from.category,
            examples(from.category)
        )));
    }
    let result = if from.category == "temperature" {
        from_kelvin(to_kelvin(value, from.name), to.name)
    } else {
        value * from.factor / to.factor
    };
    Ok(json!({
        "from": {"value": value, "unit": from.name},
        "to": {"value": number(significant(result))?, "unit": to.name},
        "category": from.category,
    }))
}

fn to_kelvin(v: f64, unit: &str) -> f64 {
    match unit {
        "c" => v + 273.15,
        "f" => (v - 32.0) * 5.0 / 9.0 + 273.15,
        _ => v,
    }
}

fn from_kelvin(k: f64, unit: &str) -> f64 {
    match unit {
        "c" => k - 273.15,
        "f" => (k - 273.15) * 9.0 / 5.0 + 32.0,
        _ => k,
    }
}

/// The unit spelled `text`: exact spellings first (`B` byte and `b` bit differ only by
/// case), then any spelling without regard to case, spaces, dots or a plural "s".
fn find(key: &str, text: &str) -> Result<&'static Unit, Fail> {
    let text = text.trim();
    if let Some(unit) = UNITS
        .iter()
        .find(|u| u.name == text || u.aliases.contains(&text))
    {
        return Ok(unit);
    }
    let wanted = normalize(text);
    let matches = |spelling: &str| {
        let s = normalize(spelling);
        s == wanted || (wanted.len() > 3 && wanted.strip_suffix('s') == Some(s.as_str()))
    };
    UNITS
        .iter()
        .find(|u| matches(u.name) || u.aliases.iter().any(|a| matches(a)))
        .ok_or_else(|| {
            let categories: Vec<String> = [
                "length",
                "mass",
                "temperature",
                "volume",
                "area",
                "speed",
                "time",
                "data",
                "pressure",
                "energy",
            ]
            .iter()
            .map(|c| format!("{c} ({})", examples(c)))
            .collect();
            Fail::Args(format!(
                "unknown unit '{}' in '{key}': use one of {}",
                super::datetime::shorten(text),
                categories.join("; ")
            ))
        })
}

fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '.' && *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The canonical names of a category's units.
fn examples(category: &str) -> String {
    UNITS
        .iter()
        .filter(|u| u.category == category)
        .map(|u| u.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(value: f64, from: &str, to: &str) -> f64 {
        let got = run(&json!({"value": value, "from": from, "to": to})).unwrap();
        got["to"]["value"].as_f64().unwrap()
    }

    #[test]
    fn conversions_people_ask_for() {
        assert_eq!(to(100.0, "celsius", "fahrenheit"), 212.0);
        assert_eq!(to(-40.0, "F", "C"), -40.0);
        assert_eq!(to(0.0, "Kelvin", "°C"), -273.15);
        assert_eq!(to(10.0, "km", "miles"), 6.21371192237);
        assert_eq!(to(1.0, "mile", "feet"), 5280.0);
        assert_eq!(to(70.0, "kg", "lbs"), 154.323583529);
        assert_eq!(to(1.0, "gallon", "Liters"), 3.785411784);
        assert_eq!(to(1.0, "GB", "MB"), 1000.0);
        assert_eq!(to(1.0, "GiB", "MiB"), 1024.0);
        assert_eq!(to(8.0, "b", "B"), 1.0, "b is a bit, B a byte");
        assert_eq!(to(100.0, "km/h", "mph"), 62.1371192237);
        assert_eq!(to(1.0, "atm", "psi"), 14.6959487755);
        assert_eq!(to(1.0, "kWh", "kcal"), 860.420650096);
        assert_eq!(
            to(0.1, "m", "cm") + to(0.2, "m", "cm"),
            30.0,
            "no binary noise"
        );
        let got = run(&json!({"value": 5, "from": "square feet", "to": "m2"})).unwrap();
        assert_eq!(
            got,
            json!({"from": {"value": 5.0, "unit": "ft2"}, "to": {"value": 0.4645152, "unit": "m2"}, "category": "area"})
        );
    }

    #[test]
    fn mistakes_name_the_fix() {
        let err = run(&json!({"value": 1, "from": "kg", "to": "km"})).unwrap_err();
        assert!(
            err.message()
                .starts_with("cannot convert kg (mass) to km (length)"),
            "{err:?}"
        );
        assert!(err.message().contains("lb, oz"), "{err:?}");
        let err = run(&json!({"value": 1, "from": "furlongs", "to": "m"})).unwrap_err();
        assert!(
            err.message().contains("unknown unit 'furlongs' in 'from'")
                && err.message().contains("temperature (c, f, k)"),
            "{err:?}"
        );
        let err = run(&json!({"value": "ten", "from": "m", "to": "km"})).unwrap_err();
        assert_eq!(err.message(), "'value' is required and must be a number");
        let err = run(&json!({"value": 1e308, "from": "t", "to": "mg"})).unwrap_err();
        assert!(matches!(err, Fail::Run(_)), "overflow: {err:?}");
    }
}
