use super::*;

const URL: &str = "https://site.example/dir/page.html";

fn read(html: &str) -> Outline {
    outline(html, URL, 100)
}

fn links(html: &str) -> Vec<String> {
    read(html).links
}

#[test]
fn attributes_in_every_quoting_and_with_references() {
    assert_eq!(
        links(
            "<a href=a>1</a><a href='b'>2</a><a href=\"c\">3</a><a HREF = d >4</a>\
             <a data-x='>' href=e>5</a><a href=\"f?x=1&amp;y=&lt;2&gt;\">6</a>\
             <a href=g&#x2F;h>7</a><a href=\"i\"/>8"
        ),
        [
            "https://site.example/dir/a",
            "https://site.example/dir/b",
            "https://site.example/dir/c",
            "https://site.example/dir/d",
            "https://site.example/dir/e",
            "https://site.example/dir/f?x=1&y=%3C2%3E",
            "https://site.example/dir/g/h",
            "https://site.example/dir/i",
        ]
    );
}

#[test]
fn what_is_not_a_link_is_skipped() {
    let none = [
        "<a>no href</a>",
        "<a href=\"\">empty</a>",
        "<a href=\"#x\">fragment</a>",
        "<a href=\"mailto:a@b.c\">mail</a>",
        "<a href=\"javascript:void(0)\">js</a>",
        "<a href=\"ftp://x/y\">ftp</a>",
        "<link href=\"/style.css\">",
        "<area href=\"/map\">",
        "<!-- <a href=\"/c\"> -->",
        "<script>'<a href=\"/s\">'</script>",
        "<script><!--<script>'<a href=\"/s\">'</script>--></script>",
        "<style><a href=\"/st\"></style>",
        "<textarea><a href=\"/t\"></textarea>",
        "<noscript><a href=\"/n\"></noscript>",
        "<iframe><a href=\"/i\"></iframe>",
        "<xmp><a href=\"/x\"></xmp>",
        "<title><a href=\"/t\"></title>",
        "<plaintext><a href=\"/p\">",
        "<svg><![CDATA[<a href=\"/cdata\">]]></svg>",
        "<a href=\"/eof",
        "<a href=/eof",
        "<a href",
        "<",
        "",
    ];
    for html in none {
        assert_eq!(links(html), Vec::<String>::new(), "{html}");
    }
    // Outside SVG, CDATA is a bogus comment that ends at the first '>'.
    assert_eq!(
        links("<![CDATA[x]]><a href=/after>"),
        ["https://site.example/after"]
    );
}

#[test]
fn the_title_is_the_first_html_title_wherever_it_stands() {
    let title = |html: &str| read(html).title;
    assert_eq!(
        title("<title>\n  A   &amp;\tB </title>"),
        Some("A & B".into())
    );
    assert_eq!(title("<TITLE>Upper</TITLE>"), Some("Upper".into()));
    assert_eq!(
        title("<body><p>x</p><title>In body</title></body>"),
        Some("In body".into())
    );
    assert_eq!(
        title("</html><title>After the end</title>"),
        Some("After the end".into())
    );
    assert_eq!(
        title("<title>First</title><title>Second</title>"),
        Some("First".into())
    );
    assert_eq!(
        title("<svg><title>Icon</title></svg><title>Page</title>"),
        Some("Page".into())
    );
    assert_eq!(
        title("<math><title>M</title></math>"),
        None,
        "inside MathML"
    );
    // An HTML element breaks out of SVG, so a title after it is the page's.
    assert_eq!(
        title("<svg><p>x</p><title>Broke out</title>"),
        Some("Broke out".into())
    );
    assert_eq!(
        title("<title><b>tags</b> are text</title>"),
        Some("<b>tags</b> are text".into())
    );
    assert_eq!(title("<title>   </title><title>Late</title>"), None);
    assert_eq!(title("<!-- <title>c</title> -->"), None);
    assert_eq!(title("<script>'<title>s</title>'</script>"), None);
    assert_eq!(
        title("<title>Open to the end"),
        Some("Open to the end".into())
    );
    assert_eq!(
        title("<title a='</title>'>Attr</title>"),
        Some("Attr".into())
    );
}

#[test]
fn links_resolve_against_the_first_base() {
    assert_eq!(
        links("<a href=x><base href=/other/><base href=https://no.example/><a href=y>"),
        [
            "https://site.example/other/x",
            "https://site.example/other/y"
        ]
    );
    // A base that cannot be joined leaves the page's own URL.
    assert_eq!(
        links("<base href='http://['><a href=x>"),
        ["https://site.example/dir/x"]
    );
    // A page without a URL keeps only absolute links.
    assert_eq!(
        outline("<a href=/rel><a href=https://abs.example/>", "", 100).links,
        ["https://abs.example/"]
    );
}

#[test]
fn links_are_unique_and_capped() {
    let html = "<a href=/a><a href=/b><a href=/a><a href='/b'><a href=/c>";
    assert_eq!(
        outline(html, URL, 2).links,
        ["https://site.example/a", "https://site.example/b"]
    );
    // Relative and absolute spellings of one target are one link.
    assert_eq!(
        links("<a href=/a><a href=https://site.example/a>"),
        ["https://site.example/a"]
    );
    let many: String = (0..5_000).map(|i| format!("<a href=/l{i}>")).collect();
    let got = links(&many);
    assert_eq!(
        (got.len(), got.last().map(String::as_str)),
        (100, Some("https://site.example/l99"))
    );
    let long = format!("<a href=/{}><a href=/ok>", "x".repeat(MAX_HREF_BYTES));
    assert_eq!(links(&long), ["https://site.example/ok"]);
}

#[test]
fn hostile_pages_are_read_in_one_pass() {
    // Deep nesting, unbalanced tags, stray '<', NUL and invalid references: no panic, the links
    // still found.
    let deep = format!(
        "{}<a href=/deep>{}",
        "<div><span>".repeat(50_000),
        "</b></i></svg></math>".repeat(1_000)
    );
    assert_eq!(links(&deep), ["https://site.example/deep"]);
    let junk = "<<<a href=/1>><\u{0}a href=/2><a href=/3 <a href=/4>&#xFFFFFFFF;&bogus;<a href=\"/5&#0;\">";
    let got = links(junk);
    assert!(
        got.contains(&"https://site.example/1".to_owned()),
        "{got:?}"
    );
    assert!(
        got.iter().any(|l| l.starts_with("https://site.example/5")),
        "{got:?}"
    );
    let unclosed = format!("<title>{}", "abcd ".repeat(100_000));
    let title = read(&unclosed).title.unwrap_or_default();
    assert_eq!(title.chars().count(), MAX_TITLE_CHARS - 1);
    // Unicode in titles and targets.
    let page = read("<title>Ünïcødé 😀 \u{202e}rtl</title><a href='/ş/😀?q=ü'>");
    assert_eq!(page.title.as_deref(), Some("Ünïcødé 😀 \u{202e}rtl"));
    assert_eq!(
        page.links,
        ["https://site.example/%C5%9F/%F0%9F%98%80?q=%C3%BC"]
    );
}
