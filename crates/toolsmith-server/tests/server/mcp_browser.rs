//! The `browser` built-in (issue 39) end to end through MCP: Debian's Chromium, driven over
//! its DevTools pipe, against loopback HTTP servers this test starts. One server is listed in
//! the operator's `allowed_private_hosts`; the other is not, and must never be reached — not
//! by a navigation, a redirect, an image or a script of an allowed page — because every request
//! of the browser goes through the egress guard.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Query;
use axum::response::{Html, Redirect};
use axum::routing::get;
use base64::Engine as _;
use serde_json::{Value, json};

use crate::mcp_outside::{app_with_group, assert_search_finds, mcp};
use crate::mcp_support::call_tool;
use crate::rest_support::serve_loopback;

const FORM: &str = r#"<!doctype html><html><head><title>Order form</title></head><body>
<h1>Order</h1>
<form action="/result" method="get">
  <label for="name">Your name</label> <input id="name" name="name">
  <label for="size">Size</label> <select id="size" name="size"><option>Small</option><option>Large</option></select>
  <button type="submit">Send order</button>
</form></body></html>"#;

/// The site the operator allows: a form, its result, a redirect and a page that loads from
/// `forbidden`; its `host:port`.
async fn allowed_site(forbidden: String) -> String {
    let redirect_to = format!("http://{forbidden}/secret");
    let page = format!(
        "<!doctype html><html><head><title>Loader</title>\
         <script src=\"http://{forbidden}/script.js\"></script></head>\
         <body><p>Loader page</p><img src=\"http://{forbidden}/pixel.png\"></body></html>"
    );
    let app = Router::new()
        .route("/form", get(|| async { Html(FORM) }))
        .route(
            "/result",
            get(
                |Query(q): Query<std::collections::HashMap<String, String>>| async move {
                    let name = q.get("name").cloned().unwrap_or_default();
                    let size = q.get("size").cloned().unwrap_or_default();
                    Html(format!(
                        "<!doctype html><html><head><title>Thanks</title></head><body>\
                     <p id=\"greeting\">Hello, {name}: one {size} order.</p></body></html>"
                    ))
                },
            ),
        )
        .route(
            "/redirect",
            get(move || {
                let to = redirect_to.clone();
                async move { Redirect::temporary(&to) }
            }),
        )
        .route(
            "/loader",
            get(move || {
                let page = page.clone();
                async move { Html(page) }
            }),
        );
    serve_loopback(app).await
}

/// A site nobody listed: counts every request it gets; its `host:port`.
async fn forbidden_site(hits: Arc<AtomicUsize>) -> String {
    let app = Router::new().fallback(move || {
        let hits = hits.clone();
        async move {
            hits.fetch_add(1, Ordering::SeqCst);
            Html("<title>Secret</title><p>metadata</p>")
        }
    });
    serve_loopback(app).await
}

fn chromium_present() -> bool {
    toolsmith_core::testkit::require_path("chromium", std::path::Path::new("/usr/bin/chromium"))
}

/// `(isError, the result as JSON, the whole result)` of a `browser` call.
async fn browse(client: &crate::mcp_support::McpClient<()>, args: Value) -> (bool, Value, Value) {
    let result = call_tool(client, "browser", args.clone())
        .await
        .unwrap_or_else(|e| panic!("browser {args}: {e:?}"));
    let whole = serde_json::to_value(&result).unwrap();
    let text = whole["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let value = result
        .structured_content
        .clone()
        .unwrap_or_else(|| serde_json::from_str(&text).unwrap_or(Value::String(text)));
    (result.is_error.unwrap_or(false), value, whole)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_filled_clicked_read_and_photographed_through_mcp() {
    if !chromium_present() {
        return;
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let forbidden = forbidden_site(hits.clone()).await;
    let site = allowed_site(forbidden).await;
    let app = app_with_group(Some(&site), "browser").await;
    let client = mcp(&app).await;

    let (is_error, page, _) = browse(
        &client,
        json!({"action": "navigate", "url": format!("http://{site}/form")}),
    )
    .await;
    assert!(!is_error, "{page}");
    assert_eq!(page["title"], "Order form", "{page}");

    let (is_error, snapshot, _) = browse(&client, json!({"action": "snapshot"})).await;
    assert!(!is_error, "{snapshot}");
    assert!(
        snapshot["text"].as_str().unwrap().contains("Order"),
        "{snapshot}"
    );
    let elements = snapshot["elements"].as_array().unwrap();
    let by_id = |id: &str| {
        elements
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("no element #{id} in {snapshot}"))["ref"]
            .clone()
    };
    let name = by_id("name");
    let size = by_id("size");
    let button = elements
        .iter()
        .find(|e| e["tag"] == "button")
        .unwrap_or_else(|| panic!("no button in {snapshot}"))["ref"]
        .clone();
    assert_eq!(
        elements.iter().find(|e| e["id"] == "name").unwrap()["name"],
        "Your name",
        "a field is named by its label: {snapshot}"
    );

    let (is_error, filled, _) = browse(
        &client,
        json!({"action": "fill", "ref": name, "text": "Ada Lovelace"}),
    )
    .await;
    assert!(!is_error, "{filled}");
    let (is_error, chosen, _) = browse(
        &client,
        json!({"action": "fill", "ref": size, "text": "Large"}),
    )
    .await;
    assert!(!is_error, "{chosen}");

    let (is_error, clicked, _) = browse(&client, json!({"action": "click", "ref": button})).await;
    assert!(!is_error, "{clicked}");
    assert_eq!(
        clicked["title"], "Thanks",
        "the click submitted the form: {clicked}"
    );
    assert!(
        clicked["url"]
            .as_str()
            .unwrap()
            .contains("name=Ada+Lovelace"),
        "{clicked}"
    );

    let (_, read, _) = browse(&client, json!({"action": "snapshot"})).await;
    assert!(
        read["text"]
            .as_str()
            .unwrap()
            .contains("Hello, Ada Lovelace: one Large order."),
        "{read}"
    );

    let (is_error, about, whole) = browse(&client, json!({"action": "screenshot"})).await;
    assert!(!is_error, "{whole}");
    assert_eq!(about["title"], "Thanks", "{about}");
    let image = whole["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block in {whole}"));
    assert_eq!(image["mimeType"], "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(image["data"].as_str().unwrap())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(png.len() > 1000, "a real picture, {} bytes", png.len());

    let (is_error, back, _) = browse(&client, json!({"action": "back"})).await;
    assert!(!is_error, "{back}");
    assert_eq!(back["title"], "Order form", "{back}");

    let (is_error, closed, _) = browse(&client, json!({"action": "close"})).await;
    assert!(!is_error && closed["closed"] == true, "{closed}");
    let (is_error, after, _) = browse(&client, json!({"action": "snapshot"})).await;
    assert!(is_error, "no page after close: {after}");
    assert!(
        after.to_string().contains("start with action 'navigate'"),
        "{after}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_guard_refuses_is_never_reached_by_the_page_and_files_are_out_of_reach() {
    if !chromium_present() {
        return;
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let forbidden = forbidden_site(hits.clone()).await;
    let site = allowed_site(forbidden.clone()).await;
    let app = app_with_group(Some(&site), "browser").await;
    let client = mcp(&app).await;

    // A host nobody listed, a metadata address, a file and a browser page: refused by the tool.
    for (url, says) in [
        (format!("http://{forbidden}/"), "egress guard"),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "egress guard",
        ),
        ("file:///etc/passwd".to_owned(), "only http: and https:"),
        ("chrome://settings".to_owned(), "only http: and https:"),
    ] {
        let (is_error, answer, _) =
            browse(&client, json!({"action": "navigate", "url": url})).await;
        assert!(is_error, "{url}: {answer}");
        assert!(answer.to_string().contains(says), "{url}: {answer}");
    }

    // An allowed page that redirects to the forbidden host: the hop is refused by the proxy.
    let (is_error, redirected, _) = browse(
        &client,
        json!({"action": "navigate", "url": format!("http://{site}/redirect")}),
    )
    .await;
    let said = redirected.to_string();
    assert!(
        is_error || redirected["blocked"].is_array(),
        "the redirect's hop is reported: {said}"
    );
    assert!(
        said.contains(&forbidden) && said.contains("egress guard"),
        "{said}"
    );

    // An allowed page whose script and image come from the forbidden host.
    let (is_error, loader, _) = browse(
        &client,
        json!({"action": "navigate", "url": format!("http://{site}/loader")}),
    )
    .await;
    assert!(!is_error, "{loader}");
    assert_eq!(loader["title"], "Loader", "{loader}");
    let blocked = loader["blocked"]
        .as_array()
        .unwrap_or_else(|| panic!("{loader}"));
    assert!(
        blocked.iter().any(|b| b
            .as_str()
            .unwrap()
            .contains(&format!("{forbidden}/pixel.png"))),
        "{loader}"
    );
    assert!(
        blocked.iter().any(|b| b
            .as_str()
            .unwrap()
            .contains(&format!("{forbidden}/script.js"))),
        "{loader}"
    );

    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the forbidden host was never reached"
    );
    browse(&client, json!({"action": "close"})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_the_browser_from_what_a_person_types() {
    assert_search_finds(&[
        ("take a screenshot of this page", &["browser"][..]),
        ("open example.com and read the title", &["browser"][..]),
        (
            "fill in the signup form on this website and click submit",
            &["browser"][..],
        ),
        ("click the login button on the page", &["browser"][..]),
    ])
    .await;
}
