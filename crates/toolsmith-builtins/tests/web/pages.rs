//! `fetch_web_page` on pages a regular expression misreads: the title and the links come from
//! the HTML tokenizer, so attributes in any quoting, a `>` inside a value, character
//! references, comments, scripts, styles, SVG and CDATA are read as a browser reads them. Each
//! page is served at `/html/{name}` by the module's server (`super::server`).

use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{Value, json};

use super::Web;

/// Links a browser does not follow, and markup that is not markup.
const MALFORMED: &str = "<html><head><title>Broken <b>page</title>\
    <body><a href=/unquoted>u</a> <a href = 'single'>s</a> <A HREF=\"UPPER\">U</A> \
    <a title=\"x>y\" href=\"after-gt\">g</a> <a href=\"/amp?a=1&amp;b=2\">amp</a> \
    <a href=/q?x=1&amp;y=2>unquoted amp</a>\
    <a\nhref\n=\n\"/newlines\"\n>n</a> <a href=\"/dup\">1</a><a href=\"/dup\">2</a> \
    <a href=\"#top\">fragment</a> <a href=\"mailto:x@example.org\">mail</a> \
    <a href=\"javascript:alert(1)\">js</a> <a href=\"/first\" href=\"/second\">two</a> \
    <a href=' /spaced '>sp</a> <ahref=\"/not-an-a\">no</ahref> \
    <!-- <a href=\"/in-comment\">c</a> -->\
    <script>document.write('<a href=\"/in-script\">')</script>\
    <style>a[href=\"/in-style\"] { color: red }</style>\
    <textarea><a href=\"/in-textarea\">t</a></textarea>\
    <svg><![CDATA[<a href=\"/in-cdata\">]]></svg>\
    <p>after</p><a href=\"/unclosed";

/// The first `<title>` outside SVG wins, wherever it stands; the ones in a comment or a
/// script are text.
const ODD_TITLE: &str = "<!-- <title>Commented</title> -->\
    <script>var t = '<title>Scripted</title>';</script>\
    <svg><title>Icon</title></svg>\
    <body><p>Text</p><title> Real &amp;\n  Late </title><title>Second</title></body>";

/// Links resolve against the document's `<base href>`, even one that comes after them.
const BASED: &str = "<a href=\"page\">p</a><base href=\"https://example.org/docs/\">\
    <base href=\"https://ignored.example/\"><a href=\"/root\">r</a>";

/// A huge page: 100,000 links (2.7 MB) and a title after them.
fn huge() -> String {
    let mut page = String::with_capacity(3_000_000);
    for i in 0..100_000 {
        page.push_str(&format!("<a href=\"/l{i}\">{i}</a>"));
    }
    page.push_str("<title>At the end</title>");
    page
}

/// A title that is never closed runs to the end of the page: kept to 1,000 characters.
fn unclosed_title() -> String {
    format!("<title>{}", "word ".repeat(500_000))
}

pub(super) async fn serve(
    axum::extract::Path(name): axum::extract::Path<String>,
) -> impl IntoResponse {
    let page = match name.as_str() {
        "malformed" => MALFORMED.to_owned(),
        "odd-title" => ODD_TITLE.to_owned(),
        "based" => BASED.to_owned(),
        "huge" => huge(),
        "unclosed-title" => unclosed_title(),
        _ => String::new(),
    };
    ([(header::CONTENT_TYPE, "text/html")], page)
}

async fn fetch(web: &Web, name: &str) -> Value {
    web.ok(
        "fetch_web_page",
        json!({"url": web.url(&format!("/html/{name}"))}),
    )
    .await
}

#[tokio::test]
async fn links_are_read_as_a_browser_reads_them() {
    let web = Web::new(true).await;
    let page = fetch(&web, "malformed").await;
    assert_eq!(page["title"], "Broken <b>page", "the title is text: {page}");
    let at = |path: &str| web.url(path);
    assert_eq!(
        page["links"],
        json!([
            at("/unquoted"),
            at("/html/single"),
            at("/html/UPPER"),
            at("/html/after-gt"),
            at("/amp?a=1&b=2"),
            at("/q?x=1&y=2"),
            at("/newlines"),
            at("/dup"),
            at("/first"),
            at("/spaced"),
        ]),
        "{page}"
    );
    let text = page["text"].as_str().unwrap();
    assert!(text.contains("after"), "{text}");
}

#[tokio::test]
async fn the_title_is_the_first_one_outside_svg_wherever_it_stands() {
    let web = Web::new(true).await;
    let page = fetch(&web, "odd-title").await;
    assert_eq!(page["title"], "Real & Late", "{page}");
    assert_eq!(page["links"], json!([]));
    let based = fetch(&web, "based").await;
    assert_eq!(
        based["links"],
        json!(["https://example.org/docs/page", "https://example.org/root"]),
        "{based}"
    );
    assert_eq!(based["title"], Value::Null);
}

#[tokio::test]
async fn huge_pages_keep_the_links_and_the_title_capped() {
    let web = Web::new(true).await;
    let page = fetch(&web, "huge").await;
    assert_eq!(page["title"], "At the end");
    let links = page["links"].as_array().unwrap();
    assert_eq!(links.len(), 100);
    assert_eq!(links[99], web.url("/l99"));
    let page = fetch(&web, "unclosed-title").await;
    let title = page["title"].as_str().unwrap();
    assert_eq!(
        title.chars().count(),
        999,
        "1,000 characters, the last a space"
    );
    assert!(title.starts_with("word word"), "{title}");
}
