//! The weather tools (003 §20): `get_weather` (now) and `get_weather_forecast` (up to 16
//! days), through a service speaking Open-Meteo's API — its geocoding search
//! (`{geocoding_url}/search?name=…`) to find a place, and its forecast
//! (`{base_url}/forecast?latitude=…&longitude=…&current=…&daily=…`).
//!
//! No key is needed by default: without a Config Center service [`SERVICE`] the tools ask
//! Open-Meteo's free API ([`DEFAULT_BASE_URL`], [`DEFAULT_GEOCODING_URL`]). The service's
//! entry may set `base_url` and `geocoding_url` (a self-hosted Open-Meteo, or its commercial
//! `https://customer-api.open-meteo.com/v1`) and `api_key` (sent as Open-Meteo's `apikey`
//! parameter). Every request leaves through the egress guard: a service on a loopback or
//! private address is reached only when the operator lists it in `allowed_private_hosts`.

use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::outside::{self, Answer};
use crate::web::{Call, ToolError, str_arg, web_tool_in};

/// The category of the family's tools.
pub const CATEGORY: &str = "Weather";
/// The Config Center service that may point the tools at another Open-Meteo or give a key.
pub const SERVICE: &str = "weather";
/// Open-Meteo's free forecast API, asked when the service sets no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://api.open-meteo.com/v1";
/// Open-Meteo's free geocoding API, asked when the service sets no `geocoding_url`.
pub const DEFAULT_GEOCODING_URL: &str = "https://geocoding-api.open-meteo.com/v1";
/// Most forecast days (Open-Meteo's limit).
pub const MAX_DAYS: u64 = 16;
const DEFAULT_DAYS: u64 = 7;
/// Largest answer read from the service.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    "weather",
    "Weather",
    "Current weather and forecasts for a place, through Open-Meteo's API (no key needed) or \
     the weather service set in the Config Center.",
    "reaches an outside weather service",
    ResultSource::External,
    &["get_weather", "get_weather_forecast"],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[(Effect::Reads, &["get_weather", "get_weather_forecast"])];

const TAGS: &[&str] = &[
    "weather",
    "forecast",
    "temperature",
    "rain",
    "will it rain",
    "this weekend",
    "snow",
    "wind",
    "sunny",
    "umbrella",
    "tomorrow",
    "climate",
    "open-meteo",
];

fn schema(days: bool) -> Value {
    let mut properties = json!({
        "location": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A place name ('Lyon', 'Lyon, France') or coordinates as 'latitude,longitude' ('45.76,4.84')."},
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric", "description": "metric: °C, km/h, mm; imperial: °F, mph, inch."}
    });
    if days {
        toolsmith_core::object::set(
            &mut properties,
            "days",
            json!({"type": "integer", "minimum": 1, "maximum": MAX_DAYS, "default": DEFAULT_DAYS, "description": "How many days, today first (at most 16)."}),
        );
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": ["location"],
        "additionalProperties": false
    })
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![
        web_tool_in(
            env,
            CATEGORY,
            ToolDefinition::new(
                "get_weather",
                "The weather now at a place: temperature, feels-like, humidity, precipitation, \
                 wind and conditions (Open-Meteo; the Config Center service 'weather' may point \
                 at another).",
                schema(false),
            )
            .with_tags(TAGS),
            |c| Box::pin(run(c, false)),
        ),
        web_tool_in(
            env,
            CATEGORY,
            ToolDefinition::new(
                "get_weather_forecast",
                "The weather forecast for a place for the coming days (today, tomorrow … up \
                 to 16 days): highs and lows, precipitation and its chance, wind and \
                 conditions per day.",
                schema(true),
            )
            .with_tags(TAGS),
            |c| Box::pin(run(c, true)),
        ),
    ]
}

/// A place the forecast is for.
struct Place {
    latitude: f64,
    longitude: f64,
    about: Value,
}

/// The service's settings: forecast and geocoding base URLs and the key, if any.
struct Provider {
    base: String,
    geocoding: String,
    key: Option<String>,
}

impl Provider {
    async fn of(call: &Call<'_>) -> Provider {
        let values = outside::values(call, SERVICE).await;
        let values = values.as_ref();
        Provider {
            base: outside::field(values, &["base_url", "baseUrl"])
                .unwrap_or(DEFAULT_BASE_URL)
                .to_owned(),
            geocoding: outside::field(values, &["geocoding_url", "geocodingUrl"])
                .unwrap_or(DEFAULT_GEOCODING_URL)
                .to_owned(),
            key: outside::field(values, &["api_key", "apiKey"]).map(str::to_owned),
        }
    }

    async fn get(
        &self,
        call: &Call<'_>,
        field: &str,
        base: &str,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Value, ToolError> {
        let mut url = outside::endpoint(SERVICE, field, base, path)?;
        {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in query {
                pairs.append_pair(name, value);
            }
            if let Some(key) = &self.key {
                pairs.append_pair("apikey", key);
            }
        }
        let answer: Answer =
            outside::send(call, "GET", url, Vec::new(), None, MAX_ANSWER_BYTES).await?;
        if !(200..300).contains(&answer.status) {
            return Err(ToolError::Provider(format!(
                "the weather service answered HTTP {}{}: check the Config Center service \
                 '{SERVICE}' (base_url, geocoding_url, api_key), or remove it to use Open-Meteo's \
                 free API",
                answer.status,
                answer.reason()
            )));
        }
        if !answer.body.is_object() {
            return Err(ToolError::Provider(format!(
                "the weather service's answer is not a JSON object: the Config Center service \
                 '{SERVICE}' must point at an API speaking Open-Meteo's (e.g. {DEFAULT_BASE_URL})"
            )));
        }
        Ok(answer.body)
    }

    /// `location` as coordinates: given as `lat,lon`, or found by the geocoding search.
    async fn place(&self, call: &Call<'_>, location: &str) -> Result<Place, ToolError> {
        if let Some((latitude, longitude)) = coordinates(location) {
            return Ok(Place {
                latitude,
                longitude,
                about: json!({"latitude": latitude, "longitude": longitude}),
            });
        }
        let found = self
            .get(
                call,
                "geocoding_url",
                &self.geocoding,
                "search",
                &[
                    ("name", location.to_owned()),
                    ("count", "1".to_owned()),
                    ("language", "en".to_owned()),
                    ("format", "json".to_owned()),
                ],
            )
            .await?;
        let first = found.pointer("/results/0").ok_or_else(|| {
            ToolError::Args(format!(
                "no place named '{location}' was found: give a city name ('Lyon'), or the \
                 coordinates as 'latitude,longitude'"
            ))
        })?;
        let number = |key: &str| first.get(key).and_then(Value::as_f64);
        let (Some(latitude), Some(longitude)) = (number("latitude"), number("longitude")) else {
            return Err(ToolError::Provider(format!(
                "the geocoding service's answer has no coordinates for '{location}': check the \
                 Config Center service '{SERVICE}' (geocoding_url)"
            )));
        };
        let text = |key: &str| first.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(Place {
            latitude,
            longitude,
            about: json!({
                "name": text("name"),
                "region": text("admin1"),
                "country": text("country"),
                "latitude": latitude,
                "longitude": longitude,
                "timezone": text("timezone"),
            }),
        })
    }
}

/// `"45.76, 4.84"` as a latitude and longitude in range.
fn coordinates(text: &str) -> Option<(f64, f64)> {
    let (lat, lon) = text.split_once(',')?;
    let lat: f64 = lat.trim().parse().ok()?;
    let lon: f64 = lon.trim().parse().ok()?;
    ((-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon)).then_some((lat, lon))
}

/// WMO weather interpretation codes (Open-Meteo's `weather_code`) in words.
fn conditions(code: Option<i64>) -> &'static str {
    match code {
        Some(0) => "clear sky",
        Some(1) => "mainly clear",
        Some(2) => "partly cloudy",
        Some(3) => "overcast",
        Some(45 | 48) => "fog",
        Some(51 | 53 | 55) => "drizzle",
        Some(56 | 57) => "freezing drizzle",
        Some(61) => "light rain",
        Some(63) => "rain",
        Some(65) => "heavy rain",
        Some(66 | 67) => "freezing rain",
        Some(71) => "light snow",
        Some(73) => "snow",
        Some(75) => "heavy snow",
        Some(77) => "snow grains",
        Some(80..=82) => "rain showers",
        Some(85 | 86) => "snow showers",
        Some(95) => "thunderstorm",
        Some(96 | 99) => "thunderstorm with hail",
        _ => "unknown",
    }
}

const CURRENT: &str = "temperature_2m,apparent_temperature,relative_humidity_2m,precipitation,weather_code,wind_speed_10m,wind_direction_10m";
const DAILY: &str = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max";

async fn run(call: Call<'_>, forecast: bool) -> Result<Value, ToolError> {
    let location = str_arg(&call.args, "location")?.trim().to_owned();
    if location.is_empty() {
        return Err(ToolError::Args(
            "'location' is empty: give a place name or 'latitude,longitude'".to_owned(),
        ));
    }
    let imperial = call.args.get("units").and_then(Value::as_str) == Some("imperial");
    let days = call
        .args
        .get("days")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_DAYS)
        .clamp(1, MAX_DAYS);
    let provider = Provider::of(&call).await;
    let place = provider.place(&call, &location).await?;
    let mut query = vec![
        ("latitude", place.latitude.to_string()),
        ("longitude", place.longitude.to_string()),
        ("timezone", "auto".to_owned()),
    ];
    if forecast {
        query.push(("daily", DAILY.to_owned()));
        query.push(("forecast_days", days.to_string()));
    } else {
        query.push(("current", CURRENT.to_owned()));
    }
    if imperial {
        query.push(("temperature_unit", "fahrenheit".to_owned()));
        query.push(("wind_speed_unit", "mph".to_owned()));
        query.push(("precipitation_unit", "inch".to_owned()));
    }
    let data = provider
        .get(&call, "base_url", &provider.base, "forecast", &query)
        .await?;
    let mut about = place.about;
    if about.get("timezone").is_none_or(Value::is_null)
        && let Some(zone) = data.get("timezone")
    {
        toolsmith_core::object::set(&mut about, "timezone", zone.clone());
    }
    let units = if imperial {
        json!({"temperature": "°F", "windSpeed": "mph", "precipitation": "inch"})
    } else {
        json!({"temperature": "°C", "windSpeed": "km/h", "precipitation": "mm"})
    };
    if forecast {
        Ok(json!({"location": about, "units": units, "days": daily(&data)?}))
    } else {
        let now = data.get("current").ok_or_else(|| missing("current"))?;
        let code = now.get("weather_code").and_then(Value::as_i64);
        Ok(json!({
            "location": about,
            "units": units,
            "current": {
                "time": now.get("time"),
                "conditions": conditions(code),
                "weatherCode": code,
                "temperature": now.get("temperature_2m"),
                "feelsLike": now.get("apparent_temperature"),
                "humidity": now.get("relative_humidity_2m"),
                "precipitation": now.get("precipitation"),
                "windSpeed": now.get("wind_speed_10m"),
                "windDirection": now.get("wind_direction_10m"),
            }
        }))
    }
}

fn missing(what: &str) -> ToolError {
    ToolError::Provider(format!(
        "the weather service's answer has no '{what}': the Config Center service '{SERVICE}' \
         must point at an API speaking Open-Meteo's (e.g. {DEFAULT_BASE_URL})"
    ))
}

/// The forecast's days, one object each, from Open-Meteo's column arrays.
fn daily(data: &Value) -> Result<Vec<Value>, ToolError> {
    let daily = data.get("daily").ok_or_else(|| missing("daily"))?;
    let dates = daily
        .get("time")
        .and_then(Value::as_array)
        .ok_or_else(|| missing("daily.time"))?;
    let column = |name: &str, i: usize| {
        daily
            .get(name)
            .and_then(Value::as_array)
            .and_then(|values| values.get(i))
            .cloned()
            .unwrap_or(Value::Null)
    };
    Ok(dates
        .iter()
        .take(usize::try_from(MAX_DAYS).unwrap_or(16))
        .enumerate()
        .map(|(i, date)| {
            let code = column("weather_code", i).as_i64();
            json!({
                "date": date,
                "conditions": conditions(code),
                "weatherCode": code,
                "temperatureMax": column("temperature_2m_max", i),
                "temperatureMin": column("temperature_2m_min", i),
                "precipitation": column("precipitation_sum", i),
                "precipitationChance": column("precipitation_probability_max", i),
                "windSpeedMax": column("wind_speed_10m_max", i),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_read_only_in_range() {
        assert_eq!(coordinates("45.76, 4.84"), Some((45.76, 4.84)));
        assert_eq!(coordinates("-33.9,151.2"), Some((-33.9, 151.2)));
        assert_eq!(coordinates("Lyon, France"), None);
        assert_eq!(coordinates("95,10"), None);
        assert_eq!(coordinates("10,200"), None);
    }

    #[test]
    fn days_come_from_open_meteos_columns() {
        let data = json!({"daily": {"time": ["2026-06-01", "2026-06-02"], "weather_code": [61, 0],
            "temperature_2m_max": [21.5, 25.0], "temperature_2m_min": [12.0, 14.1]}});
        let days = daily(&data).unwrap();
        assert_eq!(days.len(), 2);
        assert_eq!(days[0]["conditions"], "light rain");
        assert_eq!(days[1]["temperatureMax"], 25.0);
        assert_eq!(days[1]["precipitation"], Value::Null);
        assert!(
            daily(&json!({}))
                .unwrap_err()
                .to_string()
                .contains("'weather'")
        );
    }
}
