//! `browser` (GoClaw's UI group, 001 §2): a headless Chromium driven over the DevTools
//! protocol — navigate, read the page (title, text, the elements one can act on), screenshot,
//! click, fill, press a key, go back, close.
//!
//! Each caller (user and agent) gets one browser of its own ([`instance::Browsers`]): a fresh
//! profile in a private temp folder (no extensions, downloads denied, nothing kept), Chromium's
//! own sandbox on and, under root, run as `nobody`; at most `max_browsers` on the server, each
//! closed after `idle_timeout` unused or at `max_lifetime`. Every request the page makes goes
//! through the egress guard ([`proxy`]); the tool itself opens only `http:` and `https:` URLs.
//! Screenshots are MCP image content.

pub(crate) mod cdp;
pub mod instance;
pub(crate) mod proxy;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{
    ErrorKind, Permission, RegisteredTool, ResultSource, ToolContext, ToolDefinition, ToolExecutor,
    ToolResult,
};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use instance::{Browser, Owner};
pub use instance::{BrowserSettings, Browsers};

/// The category of the family's tool.
pub const CATEGORY: &str = "Browser";
/// Most characters of a page's text returned by `snapshot`.
const MAX_TEXT_CHARS: usize = 20_000;
/// Most elements listed by `snapshot`.
const MAX_ELEMENTS: usize = 150;
/// Tallest full-page screenshot, in CSS pixels.
const MAX_SCREENSHOT_HEIGHT: u64 = 8_000;
/// How long a page load may take.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long after a click or key press a navigation may start and still be waited for.
const SETTLE: Duration = Duration::from_millis(400);

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    aliases: &["ui"],
    ..off(
        "browser",
        "Browser",
        "A headless Chromium the agent drives: open pages, read them, take screenshots, click \
         and fill forms; every request through the egress guard.",
        "runs a browser that reaches outside sites",
        ResultSource::External,
        &["browser"],
    )
}];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[(Effect::Runs, &["browser"])];

const ACTIONS: &[&str] = &[
    "navigate",
    "snapshot",
    "screenshot",
    "click",
    "fill",
    "press",
    "back",
    "close",
];

fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "browser",
        "Drive a real web browser (headless Chromium): open a web page (navigate), read it \
         (snapshot: title, text and the links, buttons and fields with a ref for each), take a \
         screenshot of the page (PNG image), click, fill in a form field, press a key, go back, \
         close. One browser per caller, kept between calls; every request goes through the \
         server's egress guard.",
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ACTIONS, "description": "navigate: open `url`; snapshot: the page's title, URL, text and the elements to act on (each with a `ref`); screenshot: a PNG of the page (`fullPage` for all of it); click: click the element `ref` or `selector`; fill: type `text` into the field `ref` or `selector` (replacing its value); press: press `key` (Enter, Tab, Escape …) in the focused element; back: the previous page; close: close your browser."},
                "url": {"type": "string", "maxLength": 4096, "description": "For navigate: an http(s) URL, e.g. \"https://example.com\"."},
                "ref": {"type": "integer", "minimum": 1, "description": "For click and fill: an element's ref from the last snapshot."},
                "selector": {"type": "string", "maxLength": 1000, "description": "For click and fill: a CSS selector, e.g. \"#email\" or \"button[type=submit]\" (instead of ref)."},
                "text": {"type": "string", "maxLength": 100000, "description": "For fill: the text to type."},
                "key": {"type": "string", "enum": ["Enter", "Tab", "Escape", "Backspace", "ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "PageDown", "PageUp", "Home", "End", "Space"], "description": "For press: the key — Enter (submits a form), Tab (next field), Escape, Backspace, ArrowDown, ArrowUp, ArrowLeft, ArrowRight, PageDown, PageUp, Home, End or Space."},
                "fullPage": {"type": "boolean", "default": false, "description": "For screenshot: the whole page rather than the visible part (at most 8000 px tall)."}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "browser", "web browser", "chromium", "chrome", "headless", "screenshot",
        "take a screenshot", "capture page", "open website", "open page", "visit", "navigate",
        "click", "fill form", "form", "type into", "web page", "page title", "read page",
        "scrape", "automation", "puppeteer", "playwright", "cdp",
    ])
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![crate::family_tool(
        definition(),
        CATEGORY,
        Permission::Network,
        Arc::new(BrowserTool {
            browsers: env.browsers.clone(),
        }),
    )]
}

struct BrowserTool {
    browsers: Option<Arc<Browsers>>,
}

#[async_trait]
impl ToolExecutor for BrowserTool {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let Some(browsers) = &self.browsers else {
            return ToolResult::error(
                ErrorKind::ExecutionError,
                "this server runs no browsers: it was started without the browser pool (an \
                 embedder must set BuiltinEnv::browsers; `toolsmith serve` always does)",
            );
        };
        let owner: Owner = (
            ctx.user_id.clone(),
            ctx.agent_id.clone().unwrap_or_default(),
        );
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        let run = act(browsers, &owner, action, &args);
        let outcome = tokio::select! {
            outcome = run => outcome,
            () = ctx.cancellation.cancelled() => {
                return ToolResult::error(ErrorKind::Cancelled, "the call was cancelled");
            }
        };
        match outcome {
            Ok(Done::Json(value)) => ToolResult::ok(value),
            Ok(Done::Image { about, png }) => {
                let blocks = vec![
                    json!({"type": "text", "text": about.to_string()}),
                    json!({"type": "image", "data": png, "mimeType": "image/png"}),
                ];
                ToolResult::blocks(blocks, Some(about), None, false).unwrap_or_else(|e| {
                    ToolResult::error(ErrorKind::Internal, format!("screenshot: {e}"))
                })
            }
            Err(Failure::Args(message)) => ToolResult::error(ErrorKind::InvalidArguments, message),
            Err(Failure::Denied(message)) => ToolResult::error(ErrorKind::Denied, message),
            Err(Failure::Failed(message)) => ToolResult::error(ErrorKind::ExecutionError, message),
        }
    }
}

enum Done {
    Json(Value),
    Image { about: Value, png: String },
}

enum Failure {
    Args(String),
    Denied(String),
    Failed(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Failed(message)
    }
}

async fn act(
    browsers: &Arc<Browsers>,
    owner: &Owner,
    action: &str,
    args: &Value,
) -> Result<Done, Failure> {
    match action {
        "close" => {
            let closed = browsers.close(owner).await;
            return Ok(Done::Json(json!({"closed": closed})));
        }
        "navigate" => {
            let url = checked_url(browsers, owner, args).await?;
            let browser = browsers.open(owner).await?;
            let mut browser = browser.lock().await;
            browser.last_used = std::time::Instant::now();
            return navigate(&browser, &url).await.map(Done::Json);
        }
        _ => {}
    }
    if !ACTIONS.contains(&action) {
        return Err(Failure::Args(format!(
            "unknown action '{action}': use one of {}",
            ACTIONS.join(", ")
        )));
    }
    let Some(browser) = browsers.running(owner).await else {
        return Err(Failure::Args(format!(
            "you have no page open to {action}: start with action 'navigate' and a url"
        )));
    };
    let mut browser = browser.lock().await;
    browser.last_used = std::time::Instant::now();
    let browser = &*browser;
    let done = match action {
        "snapshot" => Done::Json(snapshot(browser).await?),
        "screenshot" => screenshot(browser, args).await?,
        "click" => Done::Json(click(browser, args).await?),
        "fill" => Done::Json(fill(browser, args).await?),
        "press" => Done::Json(press(browser, args).await?),
        _ => Done::Json(back(browser).await?),
    };
    Ok(done)
}

/// The `url` argument, if the browser may open it: `http:` or `https:`, and allowed by the
/// egress guard for the caller (the proxy checks every request again, redirects included).
async fn checked_url(browsers: &Browsers, owner: &Owner, args: &Value) -> Result<String, Failure> {
    let Some(raw) = args.get("url").and_then(Value::as_str) else {
        return Err(Failure::Args(
            "navigate needs 'url', e.g. \"https://example.com\"".to_owned(),
        ));
    };
    let url = url::Url::parse(raw.trim())
        .or_else(|_| url::Url::parse(&format!("https://{}", raw.trim())));
    let url = url.map_err(|e| Failure::Args(format!("'{raw}' is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Failure::Denied(format!(
            "the browser opens only http: and https: URLs; '{}:' is refused (files, browser \
             pages and other schemes are out of its reach)",
            url.scheme()
        )));
    }
    browsers
        .guard_for(&owner.0)
        .resolve_checked(url.as_str())
        .await
        .map_err(|e| Failure::Denied(format!("{url} was blocked by the egress guard: {e}")))?;
    Ok(url.to_string())
}

/// Waits for the page's `load` after `start` (which starts a navigation, or may).
async fn loaded(
    browser: &Browser,
    events: &mut tokio::sync::broadcast::Receiver<cdp::Event>,
    may_not_start: bool,
) {
    let session = browser.session.clone();
    let ours = |e: &cdp::Event| e.session.as_deref() == Some(session.as_str());
    if may_not_start {
        let started = tokio::time::timeout(SETTLE, async {
            loop {
                match events.recv().await {
                    Ok(e)
                        if ours(&e)
                            && matches!(
                                e.method.as_str(),
                                "Page.frameStartedLoading"
                                    | "Page.frameRequestedNavigation"
                                    | "Page.loadEventFired"
                            ) =>
                    {
                        return e.method == "Page.loadEventFired";
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(_) => return true,
                }
            }
        })
        .await;
        match started {
            Err(_) | Ok(true) => return,
            Ok(false) => {}
        }
    }
    let _ = tokio::time::timeout(LOAD_TIMEOUT, async {
        loop {
            match events.recv().await {
                Ok(e) if ours(&e) && e.method == "Page.loadEventFired" => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
        }
    })
    .await;
}

async fn navigate(browser: &Browser, url: &str) -> Result<Value, Failure> {
    browser.proxy.take_blocked();
    let mut events = browser.cdp.subscribe();
    let answer = browser.page("Page.navigate", json!({"url": url})).await?;
    let error = answer
        .get("errorText")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if error.is_none() {
        loaded(browser, &mut events, false).await;
    }
    let mut page = page_info(browser).await?;
    let blocked = browser.proxy.take_blocked();
    if let Some(error) = error {
        let why = blocked.first().cloned().unwrap_or_else(|| error.clone());
        return Err(Failure::Failed(format!(
            "could not open {url}: {why} ({error})"
        )));
    }
    if !blocked.is_empty() {
        toolsmith_core::object::set(&mut page, "blocked", json!(blocked));
    }
    Ok(page)
}

/// The page's title and URL.
async fn page_info(browser: &Browser) -> Result<Value, Failure> {
    let value = eval(browser, "({title: document.title, url: location.href})").await?;
    Ok(json!({
        "url": value.get("url").cloned().unwrap_or(Value::Null),
        "title": value.get("title").cloned().unwrap_or(Value::Null),
    }))
}

/// Evaluates `expression` in the page; its value (JSON).
async fn eval(browser: &Browser, expression: &str) -> Result<Value, Failure> {
    let answer = browser
        .page(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        )
        .await?;
    if let Some(exception) = answer.get("exceptionDetails") {
        let said = exception
            .pointer("/exception/description")
            .or_else(|| exception.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("an error");
        return Err(Failure::Failed(format!("the page threw {said}")));
    }
    Ok(answer
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

const SNAPSHOT_JS: &str = r#"(() => {
  const seen = [];
  let next = 1;
  document.querySelectorAll('[data-toolsmith-ref]').forEach(e => e.removeAttribute('data-toolsmith-ref'));
  const visible = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e); return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const label = e => {
    if (e.labels && e.labels.length) return e.labels[0].innerText.trim();
    return (e.getAttribute('aria-label') || e.getAttribute('placeholder') || e.getAttribute('title') || e.innerText || e.value || e.getAttribute('name') || '').trim();
  };
  for (const e of document.querySelectorAll('a[href], button, input, select, textarea, [role=button], [role=link], [contenteditable=true]')) {
    if (seen.length >= __MAX__) break;
    if (!visible(e) || (e.type === 'hidden')) continue;
    const ref = next++;
    e.setAttribute('data-toolsmith-ref', String(ref));
    const item = {ref, tag: e.tagName.toLowerCase(), name: label(e).slice(0, 120)};
    if (e.getAttribute('role')) item.role = e.getAttribute('role');
    if (e.type && e.tagName !== 'BUTTON') item.type = e.type;
    if (e.id) item.id = e.id;
    if (e.tagName === 'A') item.href = e.href;
    if ('value' in e && e.tagName !== 'BUTTON' && e.type !== 'password') item.value = String(e.value).slice(0, 200);
    if (e.disabled) item.disabled = true;
    seen.push(item);
  }
  const text = (document.body ? document.body.innerText : '');
  return {title: document.title, url: location.href, text: text.slice(0, __TEXT__), truncated: text.length > __TEXT__, elements: seen};
})()"#;

async fn snapshot(browser: &Browser) -> Result<Value, Failure> {
    let script = SNAPSHOT_JS
        .replace("__MAX__", &MAX_ELEMENTS.to_string())
        .replace("__TEXT__", &MAX_TEXT_CHARS.to_string());
    eval(browser, &script).await
}

async fn screenshot(browser: &Browser, args: &Value) -> Result<Done, Failure> {
    let full = args
        .get("fullPage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut params = json!({"format": "png"});
    if full {
        let metrics = browser.page("Page.getLayoutMetrics", json!({})).await?;
        let size = metrics
            .get("cssContentSize")
            .or_else(|| metrics.get("contentSize"))
            .cloned()
            .unwrap_or(Value::Null);
        let width = size.get("width").and_then(Value::as_f64).unwrap_or(1280.0);
        let height = size
            .get("height")
            .and_then(Value::as_f64)
            .unwrap_or(800.0)
            .min(MAX_SCREENSHOT_HEIGHT as f64);
        params = json!({"format": "png", "captureBeyondViewport": true,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}});
    }
    let shot = browser.page("Page.captureScreenshot", params).await?;
    let Some(png) = shot.get("data").and_then(Value::as_str) else {
        return Err(Failure::Failed(
            "the browser returned no screenshot".to_owned(),
        ));
    };
    let mut about = page_info(browser).await?;
    toolsmith_core::object::set(&mut about, "mimeType", json!("image/png"));
    toolsmith_core::object::set(&mut about, "bytes", json!(png.len() / 4 * 3));
    toolsmith_core::object::set(&mut about, "fullPage", json!(full));
    Ok(Done::Image {
        about,
        png: png.to_owned(),
    })
}

/// The JS expression naming the element of `ref` or `selector`.
fn element(args: &Value, action: &str) -> Result<String, Failure> {
    let selector = match (
        args.get("ref").and_then(Value::as_u64),
        args.get("selector").and_then(Value::as_str),
    ) {
        (Some(r), _) => format!("[data-toolsmith-ref=\"{r}\"]"),
        (None, Some(s)) if !s.trim().is_empty() => s.to_owned(),
        _ => {
            return Err(Failure::Args(format!(
                "{action} needs 'ref' (from a snapshot) or 'selector' (CSS, e.g. \"#submit\")"
            )));
        }
    };
    Ok(format!(
        "document.querySelector({})",
        Value::String(selector)
    ))
}

/// Scrolls the element into view and returns its centre, or why not.
async fn centre(browser: &Browser, element: &str, action: &str) -> Result<(f64, f64), Failure> {
    let found = eval(
        browser,
        &format!(
            "(() => {{ const e = {element}; if (!e) return null; e.scrollIntoView({{block: 'center', inline: 'center'}}); const r = e.getBoundingClientRect(); return {{x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height}}; }})()"
        ),
    )
    .await?;
    if found.is_null() {
        return Err(Failure::Args(format!(
            "no element to {action}: take a snapshot for the current refs, or check the selector"
        )));
    }
    let x = found.get("x").and_then(Value::as_f64).unwrap_or(0.0);
    let y = found.get("y").and_then(Value::as_f64).unwrap_or(0.0);
    Ok((x, y))
}

async fn click(browser: &Browser, args: &Value) -> Result<Value, Failure> {
    let element = element(args, "click")?;
    let (x, y) = centre(browser, &element, "click").await?;
    browser.proxy.take_blocked();
    let mut events = browser.cdp.subscribe();
    for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
        browser
            .page(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await?;
    }
    loaded(browser, &mut events, true).await;
    after(browser, json!({"clicked": true})).await
}

/// `done` with the page's title and URL, and any request the guard blocked meanwhile.
async fn after(browser: &Browser, mut done: Value) -> Result<Value, Failure> {
    let page = page_info(browser).await?;
    toolsmith_core::object::set(
        &mut done,
        "url",
        page.get("url").cloned().unwrap_or(Value::Null),
    );
    toolsmith_core::object::set(
        &mut done,
        "title",
        page.get("title").cloned().unwrap_or(Value::Null),
    );
    let blocked = browser.proxy.take_blocked();
    if !blocked.is_empty() {
        toolsmith_core::object::set(&mut done, "blocked", json!(blocked));
    }
    Ok(done)
}

async fn fill(browser: &Browser, args: &Value) -> Result<Value, Failure> {
    let element = element(args, "fill")?;
    let Some(text) = args.get("text").and_then(Value::as_str) else {
        return Err(Failure::Args(
            "fill needs 'text', the value to type".to_owned(),
        ));
    };
    let kind = eval(
        browser,
        &format!(
            "(() => {{ const e = {element}; if (!e) return null; e.scrollIntoView({{block: 'center'}}); e.focus(); if (e.tagName === 'SELECT') return 'select'; if ('value' in e) {{ e.value = ''; e.dispatchEvent(new Event('input', {{bubbles: true}})); return 'field'; }} if (e.isContentEditable) {{ e.textContent = ''; return 'editable'; }} return 'other'; }})()"
        ),
    )
    .await?;
    match kind.as_str() {
        None => {
            return Err(Failure::Args(
                "no element to fill: take a snapshot for the current refs, or check the selector"
                    .to_owned(),
            ));
        }
        Some("other") => {
            return Err(Failure::Args(
                "that element is not a field one can type into: fill an input, textarea, select \
                 or editable element"
                    .to_owned(),
            ));
        }
        Some("select") => {
            let chosen = eval(
                browser,
                &format!(
                    "(() => {{ const e = {element}; const want = {}; const o = [...e.options].find(o => o.value === want || o.text.trim() === want); if (!o) return [...e.options].map(o => o.text.trim()); e.value = o.value; e.dispatchEvent(new Event('input', {{bubbles: true}})); e.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()",
                    Value::String(text.to_owned())
                ),
            )
            .await?;
            if let Some(options) = chosen.as_array() {
                return Err(Failure::Args(format!(
                    "the list has no option '{text}'; its options are {}",
                    Value::Array(options.clone())
                )));
            }
        }
        Some(_) => {
            browser
                .page("Input.insertText", json!({"text": text}))
                .await?;
            eval(
                browser,
                &format!(
                    "(() => {{ const e = {element}; if (e) e.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()"
                ),
            )
            .await?;
        }
    }
    after(browser, json!({"filled": true})).await
}

async fn press(browser: &Browser, args: &Value) -> Result<Value, Failure> {
    let Some(key) = args.get("key").and_then(Value::as_str) else {
        return Err(Failure::Args(
            "press needs 'key', e.g. \"Enter\"".to_owned(),
        ));
    };
    let (code, keycode, text) = match key {
        "Enter" => ("Enter", 13, Some("\r")),
        "Tab" => ("Tab", 9, None),
        "Escape" => ("Escape", 27, None),
        "Backspace" => ("Backspace", 8, None),
        "Space" => ("Space", 32, Some(" ")),
        "ArrowDown" => ("ArrowDown", 40, None),
        "ArrowUp" => ("ArrowUp", 38, None),
        "ArrowLeft" => ("ArrowLeft", 37, None),
        "ArrowRight" => ("ArrowRight", 39, None),
        "PageDown" => ("PageDown", 34, None),
        "PageUp" => ("PageUp", 33, None),
        "Home" => ("Home", 36, None),
        "End" => ("End", 35, None),
        other => {
            return Err(Failure::Args(format!("unknown key '{other}'")));
        }
    };
    let key_name = if key == "Space" { " " } else { key };
    browser.proxy.take_blocked();
    let mut events = browser.cdp.subscribe();
    let mut down = json!({"type": if text.is_some() { "keyDown" } else { "rawKeyDown" }, "key": key_name, "code": code, "windowsVirtualKeyCode": keycode});
    if let Some(text) = text {
        toolsmith_core::object::set(&mut down, "text", json!(text));
    }
    browser.page("Input.dispatchKeyEvent", down).await?;
    browser
        .page(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key_name, "code": code, "windowsVirtualKeyCode": keycode}),
        )
        .await?;
    loaded(browser, &mut events, true).await;
    after(browser, json!({"pressed": key})).await
}

async fn back(browser: &Browser) -> Result<Value, Failure> {
    let history = browser.page("Page.getNavigationHistory", json!({})).await?;
    let index = history
        .get("currentIndex")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let Some(entry) = index.checked_sub(1).and_then(|i| {
        history
            .get("entries")?
            .get(usize::try_from(i).ok()?)
            .cloned()
    }) else {
        return Err(Failure::Args("there is no previous page".to_owned()));
    };
    let id = entry.get("id").cloned().unwrap_or(Value::Null);
    browser.proxy.take_blocked();
    let mut events = browser.cdp.subscribe();
    browser
        .page("Page.navigateToHistoryEntry", json!({"entryId": id}))
        .await?;
    loaded(browser, &mut events, true).await;
    after(browser, json!({"back": true})).await
}
