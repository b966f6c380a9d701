//! The web UI: a handful of hand-written static files (HTML, CSS, vanilla JavaScript modules)
//! compiled into the binary with `include_bytes!` and served at `/` and `/ui/…`.
//!
//! The page holds no data of its own: it reads and writes through the REST API with the
//! caller's token, like any other client, so these routes need no authentication. They carry
//! their own Content-Security-Policy ([`UI_CONTENT_SECURITY_POLICY`]): scripts, styles and
//! connections to this origin only, no inline script or style, no frames, no plugins. Answers
//! have a strong `ETag` (a digest of the file) and `Cache-Control: no-cache`, so a browser
//! revalidates and gets `304` until the binary changes.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};

use crate::rest::error::ApiError;

/// The policy of every UI answer.
pub const UI_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; manifest-src 'self'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'";

/// One embedded file.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $ty:expr) => {
        Asset {
            path: $path,
            content_type: $ty,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/ui/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the UI. `index.html` is also served at `/`.
static ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("js/app.js", JS),
    asset!("js/api.js", JS),
    asset!("js/oidc.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/format.js", JS),
    asset!("js/schemaform.js", JS),
    asset!("js/diff.js", JS),
    asset!("js/highlight.js", JS),
    asset!("js/code_editor.js", JS),
    asset!("js/sandbox_api.js", JS),
    asset!("js/chart.js", JS),
    asset!("js/pages/tools.js", JS),
    asset!("js/pages/tool.js", JS),
    asset!("js/pages/editor.js", JS),
    asset!("js/pages/approvals.js", JS),
    asset!("js/pages/config.js", JS),
    asset!("js/pages/executions.js", JS),
    asset!("js/pages/audit.js", JS),
    asset!("js/pages/policy.js", JS),
    asset!("js/pages/tokens.js", JS),
    asset!("js/pages/groups.js", JS),
    asset!("js/pages/mcp.js", JS),
    asset!("js/pages/catalog.js", JS),
    asset!("js/pages/analytics.js", JS),
    asset!("js/pages/agents.js", JS),
    asset!("js/pages/prompts.js", JS),
    asset!("js/pages/resources.js", JS),
    asset!("js/pages/orgs.js", JS),
];

/// The quoted digest of each asset, in [`ASSETS`] order.
static ETAGS: LazyLock<Vec<String>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|a| {
            let digest = Sha256::digest(a.body);
            format!("\"{}\"", hex::encode(digest.get(..12).unwrap_or_default()))
        })
        .collect()
});

/// Whether a path is one of the UI's (served without authentication).
pub fn is_public(path: &str) -> bool {
    path == "/" || path.starts_with("/ui/")
}

/// The total size of the UI's files, in bytes (the page weight, uncompressed).
pub fn total_bytes() -> usize {
    ASSETS.iter().map(|a| a.body.len()).sum()
}

/// `/` and `/ui/{path}`.
pub fn router() -> Router {
    Router::new()
        .route("/", get(|headers: HeaderMap| async move { serve("index.html", &headers) }))
        .route(
            "/ui/{*path}",
            get(|Path(path): Path<String>, headers: HeaderMap| async move {
                serve(&path, &headers)
            }),
        )
}

fn serve(path: &str, headers: &HeaderMap) -> Response {
    let found = ASSETS
        .iter()
        .zip(ETAGS.iter())
        .find(|(a, _)| a.path == path);
    let Some((asset, tag)) = found else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no UI file '{path}'"),
        )
        .into_response();
    };
    let fresh = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let common = [
        (
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(UI_CONTENT_SECURITY_POLICY),
        ),
        (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (
            ETAG,
            HeaderValue::from_str(tag).unwrap_or(HeaderValue::from_static("\"0\"")),
        ),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    (
        common,
        [(CONTENT_TYPE, HeaderValue::from_static(asset.content_type))],
        asset.body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_small_and_the_page_is_under_budget() {
        assert!(total_bytes() < 300 * 1024, "{} bytes", total_bytes());
        for a in ASSETS {
            assert!(!a.body.is_empty(), "{} is empty", a.path);
        }
    }

    /// Every file under `ui/` is embedded, and every module an asset imports or preloads is one.
    #[test]
    fn every_file_is_embedded_and_every_import_resolves() {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else {
                    out.push(path.to_string_lossy().into_owned());
                }
            }
        }
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/ui/");
        let mut files = Vec::new();
        walk(std::path::Path::new(root), &mut files);
        for file in &files {
            let rel = file.strip_prefix(root).unwrap();
            assert!(
                ASSETS.iter().any(|a| a.path == rel),
                "{rel} is not embedded"
            );
        }
        assert_eq!(files.len(), ASSETS.len());
        let import = regex_lite_imports();
        for a in ASSETS
            .iter()
            .filter(|a| a.path.ends_with(".js") || a.path.ends_with(".html"))
        {
            let text = std::str::from_utf8(a.body).unwrap();
            let base = a.path.rsplit_once('/').map_or("", |(dir, _)| dir);
            for target in import(text) {
                let resolved = if let Some(abs) = target.strip_prefix("/ui/") {
                    abs.to_owned()
                } else {
                    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
                    for piece in target.split('/') {
                        match piece {
                            "." => {}
                            ".." => {
                                parts.pop();
                            }
                            other => parts.push(other),
                        }
                    }
                    parts.join("/")
                };
                assert!(
                    ASSETS.iter().any(|x| x.path == resolved),
                    "{} refers to {target} ({resolved}), which is not embedded",
                    a.path
                );
            }
        }
    }

    /// The targets of `from '…'`, `href="/ui/…"` and `src="/ui/…"` in a file.
    fn regex_lite_imports() -> impl Fn(&str) -> Vec<String> {
        |text: &str| {
            let mut out = Vec::new();
            for (open, close) in [("from '", '\''), ("href=\"/ui/", '"'), ("src=\"/ui/", '"')] {
                let mut rest = text;
                while let Some(at) = rest.find(open) {
                    rest = &rest[at + open.len()..];
                    if let Some(end) = rest.find(close) {
                        let target = &rest[..end];
                        out.push(if open.starts_with("from") {
                            target.to_owned()
                        } else {
                            format!("/ui/{target}")
                        });
                        rest = &rest[end..];
                    }
                }
            }
            out
        }
    }

    #[test]
    fn the_index_loads_only_local_modules() {
        let index = std::str::from_utf8(ASSETS[0].body).unwrap();
        assert!(index.contains(r#"<script type="module" src="/ui/js/app.js">"#));
        for bad in [
            "http://", "https://", "<script>", "style=", "onload", "onclick",
        ] {
            assert!(!index.contains(bad), "index.html contains {bad}");
        }
    }
}
