//! The built-in families that talk to an outside service (issue 39), end to end through MCP
//! against real local counterparts this test starts on 127.0.0.1 and speaking each provider's
//! real protocol with scripted answers: Open-Meteo's geocoding and forecast API (weather). The
//! service is reached through the real egress guard, only once the operator lists its host,
//! with the caller's Config Center entry; each family's group is switched on as an admin does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Query;
use axum::http::{Method, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Identity;

use crate::mcp_support::{McpClient, call_ok, connect_in_process};
use crate::rest_support::{TestApp, serve_loopback, settings_reaching};

/// What a counterpart was asked: each request's path and query parameters, or its JSON body.
pub type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// An app whose egress may reach `host` (none if `None`), with `group` switched on.
pub async fn app_with_group(host: Option<&str>, group: &str) -> TestApp {
    let settings = match host {
        Some(host) => settings_reaching(host),
        None => {
            let mut service = settings_reaching("127.0.0.1:1");
            service.egress.allowed_private_hosts.clear();
            service
        }
    };
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    app.json(
        Method::PUT,
        &format!("/api/v1/tool-groups/{group}"),
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app
}

/// Creates the Config Center service `service` with `fields` (`(name, kind)`) and its default
/// entry `values`.
pub async fn configure(app: &TestApp, service: &str, fields: &[(&str, &str)], values: Value) {
    let fields: Vec<Value> = fields
        .iter()
        .map(|(name, kind)| json!({"name": name, "kind": kind}))
        .collect();
    app.post(
        "/api/v1/config/services",
        &json!({"name": service, "fields": fields}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    app.post(
        &format!("/api/v1/config/services/{service}/entries"),
        &json!({"values": values}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
}

/// An MCP client of `app` as its local user.
pub async fn mcp(app: &TestApp) -> McpClient<()> {
    connect_in_process(&app.state, Identity::local_default(), ()).await
}

/// `(isError, result as JSON, text)` of a call of `tool` through MCP.
pub async fn call(client: &McpClient<()>, tool: &str, args: Value) -> (bool, Value, String) {
    let (is_error, structured, text) = call_ok(client, tool, args).await;
    let value = if structured.is_null() {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    } else {
        structured
    };
    (is_error, value, text)
}

/// Open-Meteo's two APIs on loopback: `/v1/search` (geocoding: Lyon only) and `/v1/forecast`
/// (current or daily, as asked); its `host:port`.
async fn open_meteo(seen: Seen) -> String {
    let geo_seen = seen.clone();
    let app = Router::new()
        .route(
            "/geo/v1/search",
            get(move |Query(q): Query<HashMap<String, String>>| {
                let seen = geo_seen.clone();
                async move {
                    seen.lock().unwrap().push(("search".to_owned(), json!(q)));
                    if q.get("name").map(String::as_str) == Some("Lyon") {
                        axum::Json(json!({"results": [{"id": 2996944, "name": "Lyon", "latitude": 45.74846, "longitude": 4.84671,
                            "country": "France", "admin1": "Auvergne-Rhône-Alpes", "timezone": "Europe/Paris"}], "generationtime_ms": 0.5}))
                    } else {
                        axum::Json(json!({"generationtime_ms": 0.5}))
                    }
                }
            }),
        )
        .route(
            "/v1/forecast",
            get(move |Query(q): Query<HashMap<String, String>>| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(("forecast".to_owned(), json!(q)));
                    let mut body = json!({"latitude": 45.74, "longitude": 4.84, "timezone": "Europe/Paris", "timezone_abbreviation": "CEST"});
                    if q.contains_key("current") {
                        body["current"] = json!({"time": "2026-06-01T14:00", "interval": 900, "temperature_2m": 24.3, "apparent_temperature": 25.1,
                            "relative_humidity_2m": 48, "precipitation": 0.0, "weather_code": 2, "wind_speed_10m": 11.2, "wind_direction_10m": 200});
                    }
                    if q.contains_key("daily") {
                        let days: usize = q.get("forecast_days").and_then(|d| d.parse().ok()).unwrap_or(7);
                        let dates: Vec<String> = (0..days).map(|i| format!("2026-06-{:02}", i + 1)).collect();
                        body["daily"] = json!({"time": dates, "weather_code": vec![61; days], "temperature_2m_max": vec![22.5; days],
                            "temperature_2m_min": vec![13.0; days], "precipitation_sum": vec![3.2; days], "precipitation_probability_max": vec![70; days],
                            "wind_speed_10m_max": vec![18.0; days]});
                    }
                    axum::Json(body)
                }
            }),
        );
    serve_loopback(app).await
}

async fn configure_weather(app: &TestApp, host: &str, key: Option<&str>) {
    let mut values = json!({"base_url": format!("http://{host}/v1"), "geocoding_url": format!("http://{host}/geo/v1")});
    let mut fields = vec![("base_url", "url"), ("geocoding_url", "url")];
    if let Some(key) = key {
        values["api_key"] = json!(key);
        fields.push(("api_key", "secret"));
    }
    configure(app, "weather", &fields, values).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weather_now_and_tomorrow_come_from_an_open_meteo_api_through_the_egress_guard() {
    let seen = Seen::default();
    let host = open_meteo(seen.clone()).await;
    let app = app_with_group(Some(&host), "weather").await;
    configure_weather(&app, &host, Some("om-key-0123456789")).await;
    let client = mcp(&app).await;

    let (is_error, now, text) = call(&client, "get_weather", json!({"location": "Lyon"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(now["location"]["name"], "Lyon", "{now}");
    assert_eq!(now["location"]["country"], "France");
    assert_eq!(now["current"]["temperature"], 24.3);
    assert_eq!(now["current"]["conditions"], "partly cloudy");
    assert_eq!(now["units"]["temperature"], "°C");
    assert!(!text.contains("om-key"), "the key never comes back: {text}");

    let (is_error, forecast, text) = call(
        &client,
        "get_weather_forecast",
        json!({"location": "Lyon", "days": 2, "units": "imperial"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let days = forecast["days"].as_array().unwrap();
    assert_eq!(days.len(), 2, "{forecast}");
    assert_eq!(days[1]["date"], "2026-06-02");
    assert_eq!(days[1]["conditions"], "light rain");
    assert_eq!(days[1]["precipitationChance"], 70);
    assert_eq!(forecast["units"]["temperature"], "°F");

    // What the service was asked: Open-Meteo's own parameters, the key as `apikey`.
    let asked = seen.lock().unwrap().clone();
    let (path, search) = &asked[0];
    assert_eq!(path, "search");
    assert_eq!(search["name"], "Lyon");
    assert_eq!(search["apikey"], "om-key-0123456789");
    let (_, daily) = asked.iter().rfind(|(p, _)| p == "forecast").unwrap();
    assert_eq!(daily["latitude"], "45.74846");
    assert_eq!(daily["forecast_days"], "2");
    assert_eq!(daily["temperature_unit"], "fahrenheit");
    assert!(
        daily["daily"]
            .as_str()
            .unwrap()
            .contains("temperature_2m_max")
    );

    // Coordinates skip the geocoding; an unknown place and a provider's refusal say what to do.
    let before = seen.lock().unwrap().len();
    let (is_error, _, text) = call(&client, "get_weather", json!({"location": "45.7,4.8"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        seen.lock().unwrap().len(),
        before + 1,
        "one request: the forecast"
    );
    let (is_error, _, text) = call(&client, "get_weather", json!({"location": "Atlantis"})).await;
    assert!(is_error);
    assert!(text.contains("no place named 'Atlantis'"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weather_cannot_reach_a_private_address_the_operator_did_not_list() {
    let seen = Seen::default();
    let host = open_meteo(seen.clone()).await;
    let app = app_with_group(None, "weather").await;
    configure_weather(&app, &host, None).await;
    let client = mcp(&app).await;
    let (is_error, _, text) = call(&client, "get_weather", json!({"location": "Lyon"})).await;
    assert!(is_error);
    assert!(text.contains("allowed_private_hosts"), "{text}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the service"
    );
}

/// A LibreTranslate API on loopback: `/translate` (one text or a list; "auto" detected as
/// English), `/detect` (always French) and `/languages`; every request's path and body kept.
async fn libretranslate(seen: Seen) -> String {
    let (t, d) = (seen.clone(), seen.clone());
    let app = Router::new()
        .route(
            "/translate",
            post(move |body: axum::Json<Value>| {
                let seen = t.clone();
                async move {
                    seen.lock().unwrap().push(("translate".to_owned(), body.0.clone()));
                    if body.0["api_key"] != "lt-key-0123456789" {
                        return (StatusCode::FORBIDDEN, axum::Json(json!({"error": "Invalid API key"})));
                    }
                    let target = body.0["target"].as_str().unwrap_or("").to_owned();
                    let one = |q: &Value| json!(format!("[{target}] {}", q.as_str().unwrap_or("")));
                    let answer = match &body.0["q"] {
                        Value::Array(list) => json!({"translatedText": list.iter().map(one).collect::<Vec<_>>()}),
                        q => json!({"translatedText": one(q), "detectedLanguage": {"confidence": 95, "language": "en"}}),
                    };
                    (StatusCode::OK, axum::Json(answer))
                }
            }),
        )
        .route(
            "/detect",
            post(move |body: axum::Json<Value>| {
                let seen = d.clone();
                async move {
                    seen.lock().unwrap().push(("detect".to_owned(), body.0));
                    axum::Json(json!([{"confidence": 92.0, "language": "fr"}, {"confidence": 8.0, "language": "ca"}]))
                }
            }),
        )
        .route(
            "/languages",
            get(|| async {
                axum::Json(json!([{"code": "en", "name": "English", "targets": ["de", "fr"]}, {"code": "de", "name": "German", "targets": ["en"]}]))
            }),
        );
    serve_loopback(app).await
}

/// An OpenAI-compatible chat-completions server on loopback whose message is what `answer`
/// makes of the system prompt and the user's text; every request body kept.
pub async fn chat_server(seen: Seen, answer: fn(&str, &str) -> String) -> String {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |body: axum::Json<Value>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(("chat".to_owned(), body.0.clone()));
                let system = body.0["messages"][0]["content"].as_str().unwrap_or("").to_owned();
                let user = body.0["messages"][1]["content"].as_str().unwrap_or("").to_owned();
                axum::Json(json!({"id": "chatcmpl-1", "object": "chat.completion", "model": body.0["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": answer(&system, &user)}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}))
            }
        }),
    );
    serve_loopback(app).await
}

/// The caller's chat model: the Config Center service `chat_model` at `host`.
pub async fn configure_chat_model(app: &TestApp, host: &str) {
    configure(
        app,
        "chat_model",
        &[("protocol", "text"), ("base_url", "url"), ("api_key", "secret"), ("model", "text")],
        json!({"protocol": "openai", "base_url": format!("http://{host}/v1"), "api_key": "sk-chat-0123456789", "model": "test-model"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn translation_asks_a_libretranslate_api_with_the_key_in_the_body() {
    let seen = Seen::default();
    let host = libretranslate(seen.clone()).await;
    let app = app_with_group(Some(&host), "translation").await;
    configure(
        &app,
        "translation",
        &[("base_url", "url"), ("api_key", "secret")],
        json!({"base_url": format!("http://{host}"), "api_key": "lt-key-0123456789"}),
    )
    .await;
    let client = mcp(&app).await;

    let (is_error, out, text) = call(
        &client,
        "translate_text",
        json!({"text": "Send the report to Anna", "targetLanguage": "German"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        out["translatedText"], "[de] Send the report to Anna",
        "{out}"
    );
    assert_eq!(out["sourceLanguage"], "en");
    assert_eq!(out["provider"], "translation");
    assert!(!text.contains("lt-key"), "the key never comes back: {text}");
    let asked = seen.lock().unwrap()[0].1.clone();
    assert_eq!(
        asked,
        json!({"q": "Send the report to Anna", "source": "auto", "target": "de", "format": "text", "api_key": "lt-key-0123456789"})
    );

    let (is_error, out, text) = call(
        &client,
        "batch_translate",
        json!({"texts": ["one", "two"], "targetLanguage": "fr", "sourceLanguage": "English"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["translations"], json!(["[fr] one", "[fr] two"]));
    assert_eq!(seen.lock().unwrap()[1].1["source"], "en");

    let (is_error, out, text) = call(
        &client,
        "detect_language",
        json!({"text": "Bonjour tout le monde"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["language"], "fr");
    assert_eq!(out["name"], "French");
    assert_eq!(out["confidence"], 0.92);

    let (is_error, out, text) = call(&client, "list_languages", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(out["count"], 2);

    let (is_error, _, text) = call(
        &client,
        "translate_text",
        json!({"text": "x", "targetLanguage": "Klingonish"}),
    )
    .await;
    assert!(is_error);
    assert!(text.contains("'de'"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn translation_without_a_service_falls_back_to_the_configured_chat_model() {
    let seen = Seen::default();
    let host = chat_server(seen.clone(), |system, user| {
        if system.contains("Identify the language") {
            json!({"language": "it", "confidence": 0.9}).to_string()
        } else if system.contains("JSON array of texts") {
            let texts: Vec<String> = serde_json::from_str(user).unwrap();
            json!({"translations": texts.iter().map(|t| format!("DE:{t}")).collect::<Vec<_>>()})
                .to_string()
        } else {
            format!(
                "```json\n{}\n```",
                json!({"translatedText": format!("DE:{user}"), "sourceLanguage": "en"})
            )
        }
    })
    .await;
    let app = app_with_group(Some(&host), "translation").await;
    let client = mcp(&app).await;
    // Neither a translation service nor a chat model: the answer names both services.
    let (is_error, _, text) = call(
        &client,
        "translate_text",
        json!({"text": "translate this to German", "targetLanguage": "German"}),
    )
    .await;
    assert!(is_error);
    assert!(
        text.contains("'translation'") && text.contains("'chat_model'"),
        "{text}"
    );
    assert!(seen.lock().unwrap().is_empty());

    configure_chat_model(&app, &host).await;
    let (is_error, out, text) = call(
        &client,
        "translate_text",
        json!({"text": "good morning", "targetLanguage": "German"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["translatedText"], "DE:good morning", "{out}");
    assert_eq!(out["provider"], "chat_model");
    let asked = seen.lock().unwrap()[0].1.clone();
    assert_eq!(asked["model"], "test-model");
    assert!(
        asked["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("into German (de)"),
        "{asked}"
    );

    let (is_error, out, text) = call(
        &client,
        "batch_translate",
        json!({"texts": ["a", "b", "c"], "targetLanguage": "de"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["translations"], json!(["DE:a", "DE:b", "DE:c"]));
    let (is_error, out, text) = call(&client, "detect_language", json!({"text": "ciao"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(out["name"], "Italian");
}

/// Incoming webhooks on loopback as Slack, Discord, Teams and a generic service answer them
/// (200 "ok", 204, 202, 200 JSON; the generic one wants its bearer token); every body kept
/// with its route.
async fn webhooks(seen: Seen) -> String {
    let hook = |name: &'static str, status: StatusCode, seen: Seen| {
        post(
            move |headers: axum::http::HeaderMap, body: axum::Json<Value>| {
                let seen = seen.clone();
                async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    seen.lock().unwrap().push((
                        name.to_owned(),
                        json!({"body": body.0, "authorization": auth}),
                    ));
                    if name == "hook" && auth != "Bearer hook-token-0123456789" {
                        return (StatusCode::UNAUTHORIZED, "no token".to_owned());
                    }
                    (
                        status,
                        if status == StatusCode::NO_CONTENT {
                            String::new()
                        } else {
                            "ok".to_owned()
                        },
                    )
                }
            },
        )
    };
    let app = Router::new()
        .route(
            "/services/T000/B000/slack",
            hook("slack", StatusCode::OK, seen.clone()),
        )
        .route(
            "/api/webhooks/1/discord",
            hook("discord", StatusCode::NO_CONTENT, seen.clone()),
        )
        .route(
            "/workflows/teams",
            hook("teams", StatusCode::ACCEPTED, seen.clone()),
        )
        .route("/hook", hook("hook", StatusCode::OK, seen.clone()));
    serve_loopback(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_posts_each_chat_services_own_webhook_payload() {
    let seen = Seen::default();
    let host = webhooks(seen.clone()).await;
    let app = app_with_group(Some(&host), "messaging").await;
    let client = mcp(&app).await;
    // No channel yet: the answer names the service to create.
    let (is_error, _, text) = call(&client, "message", json!({"text": "deploy done"})).await;
    assert!(is_error);
    assert!(text.contains("Config Center service 'messaging'"), "{text}");

    let fields = [
        ("webhook_url", "secret"),
        ("kind", "text"),
        ("token", "secret"),
    ];
    for (service, path, kind) in [
        ("messaging", "/services/T000/B000/slack", "slack"),
        ("messaging_gamers", "/api/webhooks/1/discord", "discord"),
        ("messaging_ops", "/workflows/teams", "teams"),
    ] {
        configure(
            &app,
            service,
            &fields,
            json!({"webhook_url": format!("http://{host}{path}"), "kind": kind}),
        )
        .await;
    }
    configure(
        &app,
        "messaging_alerts",
        &fields,
        json!({"webhook_url": format!("http://{host}/hook"), "token": "hook-token-0123456789"}),
    )
    .await;

    let (is_error, out, text) = call(
        &client,
        "message",
        json!({"text": "deploy done", "title": "CI"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        out,
        json!({"sent": true, "channel": "default", "kind": "slack", "status": 200})
    );
    let (is_error, out, text) = call(
        &client,
        "message",
        json!({"text": "@everyone gg", "channel": "gamers"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["status"], 204);
    let (is_error, _, text) = call(
        &client,
        "message",
        json!({"text": "disk 91%", "channel": "ops"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let (is_error, out, text) = call(
        &client,
        "message",
        json!({"text": "paged", "channel": "alerts"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["kind"], "generic");
    assert!(!text.contains("hook-token"), "{text}");

    let sent = seen.lock().unwrap().clone();
    assert_eq!(
        sent[0],
        (
            "slack".to_owned(),
            json!({"body": {"text": "*CI*\ndeploy done"}, "authorization": ""})
        )
    );
    assert_eq!(
        sent[1].1["body"],
        json!({"content": "@everyone gg", "allowed_mentions": {"parse": []}})
    );
    let card = &sent[2].1["body"]["attachments"][0];
    assert_eq!(
        card["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    assert_eq!(card["content"]["body"][0]["text"], "disk 91%");
    assert_eq!(sent[3].1["authorization"], "Bearer hook-token-0123456789");
    assert_eq!(sent[3].1["body"]["channel"], "alerts");
    assert_eq!(sent[3].1["body"]["text"], "paged");

    // A channel with no service, and a webhook that refuses, say what to fix.
    let (is_error, _, text) = call(
        &client,
        "message",
        json!({"text": "x", "channel": "nowhere"}),
    )
    .await;
    assert!(is_error);
    assert!(text.contains("'messaging_nowhere'"), "{text}");
    configure(
        &app,
        "messaging_broken",
        &fields,
        json!({"webhook_url": format!("http://{host}/hook")}),
    )
    .await;
    let (is_error, _, text) = call(
        &client,
        "message",
        json!({"text": "x", "channel": "broken"}),
    )
    .await;
    assert!(is_error);
    assert!(
        text.contains("HTTP 401") && text.contains("'messaging_broken'"),
        "{text}"
    );
}

/// The extraction model: answers each task's prompt; the first structured answer breaks the
/// schema (a retry must fix it), and a text holding `ALWAYS-BAD` never gets a valid one.
fn extraction_answers(system: &str, user: &str) -> String {
    let answer = if system.contains("Extract the data the schema describes") {
        if user.contains("ALWAYS-BAD") || !system.contains("previous answer was not valid") {
            json!({"total": "lots"})
        } else {
            json!({"customer": "Anna", "total": 42.5, "currency": "EUR"})
        }
    } else if system.contains("named entities") {
        json!({"entities": [{"text": "Anna", "type": "person"}, {"text": "Lyon", "type": "location"}]})
    } else if system.contains("Extract the table") {
        json!({"columns": ["item", "qty"], "rows": [["apples", 3], ["pears", 5]]})
    } else {
        json!({"summary": "Anna sends the report on Friday."})
    };
    format!("Here you go:\n```json\n{answer}\n```")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_asks_the_chat_model_and_checks_its_answer_against_the_schema() {
    let seen = Seen::default();
    let host = chat_server(seen.clone(), extraction_answers).await;
    let app = app_with_group(Some(&host), "dataExtraction").await;
    let client = mcp(&app).await;
    let schema = json!({"type": "object", "properties": {"customer": {"type": "string"}, "total": {"type": "number"}, "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["customer", "total"]});
    let invoice = "Invoice for Anna, Lyon: total 42.50 EUR, due Friday.";
    // No chat model: the answer names the service to set.
    let (is_error, _, text) = call(&client, "summarize_text", json!({"text": invoice})).await;
    assert!(is_error);
    assert!(text.contains("'chat_model'"), "{text}");

    configure_chat_model(&app, &host).await;
    let (is_error, out, text) = call(
        &client,
        "extract_structured_data",
        json!({"text": invoice, "schema": schema}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        out["data"],
        json!({"customer": "Anna", "total": 42.5, "currency": "EUR"})
    );
    assert_eq!(out["model"], "test-model");
    // The first answer broke the schema; the second request said how.
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    let retry = asked[1].1["messages"][0]["content"].as_str().unwrap();
    assert!(retry.contains("/total"), "{retry}");
    assert_eq!(asked[0].1["messages"][1]["content"], invoice);

    let (is_error, _, text) = call(
        &client,
        "extract_structured_data",
        json!({"text": "ALWAYS-BAD", "schema": schema}),
    )
    .await;
    assert!(is_error);
    assert!(
        text.contains("did not match the schema") && text.contains("/total"),
        "{text}"
    );
    let (is_error, _, text) = call(
        &client,
        "extract_structured_data",
        json!({"text": invoice, "schema": {"type": "array"}}),
    )
    .await;
    assert!(is_error);
    assert!(text.contains("type object"), "{text}");

    let (is_error, out, text) = call(&client, "extract_entities", json!({"text": invoice})).await;
    assert!(!is_error, "{text}");
    assert_eq!(out["count"], 2);
    assert_eq!(
        out["entities"][1],
        json!({"text": "Lyon", "type": "location"})
    );
    let (is_error, _, text) = call(
        &client,
        "extract_entities",
        json!({"text": invoice, "types": ["money"]}),
    )
    .await;
    assert!(
        is_error,
        "entities of types not asked for break the schema: {text}"
    );

    let (is_error, out, text) = call(
        &client,
        "extract_table_data",
        json!({"text": "apples: 3, pears: 5", "columns": ["item", "qty"]}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["rows"], json!([["apples", 3], ["pears", 5]]));
    let (is_error, out, text) = call(
        &client,
        "summarize_text",
        json!({"text": invoice, "maxWords": 20, "style": "bullets"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["summary"], "Anna sends the report on Friday.");
    let last = seen.lock().unwrap().last().unwrap().1.clone();
    assert!(
        last["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 20 words"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_each_new_tool_from_what_a_person_types() {
    assert_search_finds(&[
        (
            "what's the weather in Lyon tomorrow",
            &["get_weather_forecast", "get_weather"][..],
        ),
        ("will it rain this weekend", &["get_weather_forecast"]),
        (
            "translate this to German",
            &["translate_text", "batch_translate"],
        ),
        ("which language is this text in", &["detect_language"]),
        ("post the release notes to our Slack channel", &["message"]),
        ("notify the team on Discord", &["message"]),
        (
            "pull the invoice fields out of this text as JSON",
            &["extract_structured_data"],
        ),
        ("summarize this article", &["summarize_text"]),
        (
            "find the people and places mentioned in this text",
            &["extract_entities"],
        ),
        ("turn this list into a table", &["extract_table_data"]),
    ])
    .await;
}

/// With every group on, asks `search_tools` each query of `cases` (what a person types, and
/// the tools one of which must come back in the top 3); every miss is named at once.
pub async fn assert_search_finds(cases: &[(&str, &[&str])]) {
    let app = crate::search_quality::all_groups_on().await;
    let client = mcp(&app).await;
    let mut report = Vec::new();
    for (query, expect) in cases {
        let (is_error, reply, text) = call(&client, "search_tools", json!({"query": query})).await;
        assert!(!is_error, "{text}");
        let top: Vec<String> = reply["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .take(3)
            .collect();
        if !top.iter().any(|name| expect.contains(&name.as_str())) {
            report.push(format!("{query:?} → {top:?} (expected one of {expect:?})"));
        }
    }
    assert!(
        report.is_empty(),
        "not in the top 3:\n{}",
        report.join("\n")
    );
}

/// The operator's per-owner allowlist (`owner_allowed_domains`) holds for the chat model the
/// built-ins ask, as for the owner's web tools: a model server outside it is never reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_model_outside_the_owners_allowed_domains_is_never_asked() {
    let seen = Seen::default();
    let host = chat_server(seen.clone(), extraction_answers).await;
    let mut service = settings_reaching(&host);
    service.owner_allowed_domains.insert(
        "default".to_owned(),
        vec!["api.example.com".parse().unwrap()],
    );
    let app = TestApp::with_configs(service, ServerSettings::default()).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/dataExtraction",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    configure_chat_model(&app, &host).await;
    let client = mcp(&app).await;
    let (is_error, _, text) =
        call(&client, "summarize_text", json!({"text": "Anna writes."})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("not one of the allowed domains"), "{text}");
    assert!(text.contains("owner_allowed_domains"), "{text}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "the model server was asked"
    );
}
