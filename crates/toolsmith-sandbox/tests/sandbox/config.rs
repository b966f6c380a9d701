//! The Config Center accessors of `utils`, read synchronously from the job's snapshot: the
//! default entry, labelled entries, missing services, entries and fields, copies that cannot
//! change the snapshot, and jobs without a snapshot.

use serde_json::{Value, json};

use crate::support::*;

fn snapshot() -> Value {
    json!({
        "weatherapi": {
            "service": {
                "name": "weatherapi",
                "displayName": "WeatherAPI",
                "description": "Weather data",
                "category": "weather",
                "docsUrl": "https://www.weatherapi.com/docs/",
                "multiEntry": false
            },
            "entries": [
                {"label": "main", "isDefault": true,
                 "values": {"api_key": "wk-123", "base_url": "https://api.weatherapi.com/v1"}}
            ]
        },
        "smtp": {
            "service": {"name": "smtp", "displayName": "SMTP", "multiEntry": true},
            "entries": [
                {"label": "work", "isDefault": false, "values": {"host": "smtp.work.example", "port": 587, "api_key": 42}},
                {"label": "personal", "isDefault": true, "values": {"host": "smtp.home.example", "port": 465, "tls": {"on": true}}}
            ]
        },
        "nodefault": {
            "service": {"name": "nodefault"},
            "entries": [
                {"label": "first", "values": {"api_key": "first-key"}},
                {"label": "second", "values": {"api_key": "second-key"}}
            ]
        },
        "unset": {"service": {"name": "unset"}, "entries": []}
    })
}

async fn with_config(code: &str, config: Option<Value>) -> Value {
    let mut job = job(code);
    job.config = config;
    let res = shared().run(job).await;
    assert!(!res.is_error, "{code} failed: {}", res.content);
    res.content
}

async fn configured(code: &str) -> Value {
    with_config(code, Some(snapshot())).await
}

#[tokio::test]
async fn get_api_key_reads_the_default_entry() {
    assert_eq!(
        configured("return utils.getApiKey('weatherapi')").await,
        json!("wk-123")
    );
    // The default entry, not the first.
    assert_eq!(
        configured("return utils.getApiKey('smtp') === undefined").await,
        json!(true)
    );
    // No default marked: the first entry.
    assert_eq!(
        configured("return utils.getApiKey('nodefault')").await,
        json!("first-key")
    );
    assert_eq!(
        configured("return [utils.getApiKey('unset'), utils.getApiKey('nope'), utils.getApiKey()].map(v => v === undefined)").await,
        json!([true, true, true])
    );
}

#[tokio::test]
async fn a_non_string_api_key_becomes_a_string() {
    let config = json!({"s": {"service": {"name": "s"}, "entries": [{"label": "a", "isDefault": true, "values": {"api_key": 42}}]}});
    assert_eq!(
        with_config("return utils.getApiKey('s')", Some(config)).await,
        json!("42")
    );
}

#[tokio::test]
async fn get_service_config_returns_the_service_and_its_entries() {
    let got = configured("return utils.getServiceConfig('weatherapi')").await;
    assert_eq!(got["displayName"], "WeatherAPI");
    assert_eq!(got["docsUrl"], "https://www.weatherapi.com/docs/");
    assert_eq!(got["multiEntry"], false);
    assert_eq!(got["entries"][0]["values"]["api_key"], "wk-123");
    assert_eq!(
        configured("return utils.getServiceConfig('nope')").await,
        Value::Null
    );
}

#[tokio::test]
async fn get_config_entry_by_default_and_by_label() {
    assert_eq!(
        configured("return utils.getConfigEntry('smtp')").await,
        json!({"label": "personal", "isDefault": true, "values": {"host": "smtp.home.example", "port": 465, "tls": {"on": true}}})
    );
    assert_eq!(
        configured("return utils.getConfigEntry('smtp', 'work').values.port").await,
        json!(587)
    );
    assert_eq!(
        configured("return [utils.getConfigEntry('smtp', 'nope'), utils.getConfigEntry('nope'), utils.getConfigEntry('unset')]").await,
        json!([null, null, null])
    );
}

#[tokio::test]
async fn get_config_entries_lists_every_entry() {
    assert_eq!(
        configured("return utils.getConfigEntries('smtp').map(e => e.label)").await,
        json!(["work", "personal"])
    );
    assert_eq!(
        configured("return [utils.getConfigEntries('unset'), utils.getConfigEntries('nope')]")
            .await,
        json!([[], []])
    );
}

#[tokio::test]
async fn get_field_value_reads_one_field() {
    assert_eq!(
        configured("return utils.getFieldValue('weatherapi', 'base_url')").await,
        json!("https://api.weatherapi.com/v1")
    );
    assert_eq!(
        configured("return utils.getFieldValue('smtp', 'port')").await,
        json!(465)
    );
    assert_eq!(
        configured("return utils.getFieldValue('smtp', 'port', 'work')").await,
        json!(587)
    );
    assert_eq!(
        configured("return utils.getFieldValue('smtp', 'tls')").await,
        json!({"on": true})
    );
    assert_eq!(
        configured("return [utils.getFieldValue('smtp', 'nope'), utils.getFieldValue('smtp', 'port', 'nope'), utils.getFieldValue('nope', 'port'), utils.getFieldValue('smtp', 'constructor'), utils.getFieldValue('smtp', '__proto__')].map(v => v === undefined)").await,
        json!([true, true, true, true, true])
    );
}

#[tokio::test]
async fn values_are_copies_the_tool_cannot_change() {
    let code = "
        const e = utils.getConfigEntry('smtp');
        e.values.port = 1; e.values.tls.on = false;
        utils.getConfigEntries('smtp')[1].values.port = 2;
        utils.getServiceConfig('smtp').entries.length = 0;
        utils.getFieldValue('smtp', 'tls').on = false;
        return [utils.getFieldValue('smtp', 'port'), utils.getFieldValue('smtp', 'tls'), utils.getConfigEntries('smtp').length]";
    assert_eq!(configured(code).await, json!([465, {"on": true}, 2]));
}

#[tokio::test]
async fn without_a_snapshot_nothing_is_found() {
    let code = "return [utils.getApiKey('weatherapi') === undefined, utils.getServiceConfig('weatherapi'), utils.getConfigEntry('weatherapi'), utils.getConfigEntries('weatherapi'), utils.getFieldValue('weatherapi', 'api_key') === undefined]";
    let expected = json!([true, null, null, [], true]);
    assert_eq!(with_config(code, None).await, expected);
    // A malformed snapshot is treated as empty, never as an error.
    for bad in [
        json!([1, 2]),
        json!("text"),
        json!({"weatherapi": 5}),
        json!({"weatherapi": {"entries": "x"}}),
    ] {
        let got = with_config(code, Some(bad.clone())).await;
        assert_eq!(got[0], json!(true), "{bad}");
        assert_eq!(got[2], Value::Null, "{bad}");
        assert_eq!(got[3], json!([]), "{bad}");
    }
}

#[tokio::test]
async fn hostile_service_names_find_nothing() {
    let code = "return ['__proto__', 'constructor', 'toString', 'hasOwnProperty', ''].map(n => [utils.getServiceConfig(n), utils.getConfigEntries(n).length, utils.getApiKey(n) === undefined])";
    assert_eq!(
        configured(code).await,
        json!([
            [null, 0, true],
            [null, 0, true],
            [null, 0, true],
            [null, 0, true],
            [null, 0, true]
        ])
    );
}
