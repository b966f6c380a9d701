use serde_json::json;

use super::*;

fn steps(path: &str) -> Vec<Step> {
    parse(path).unwrap().steps().to_vec()
}

fn key(k: &str) -> Step {
    Step::Key(k.to_owned())
}

fn token(t: &str) -> Step {
    Step::Token(t.to_owned())
}

/// The reason `path` is refused.
fn refused(path: &str) -> String {
    match parse(path) {
        Ok(parsed) => panic!("{path:?} was accepted as {parsed:?}"),
        Err(e) => e.reason().to_owned(),
    }
}

#[test]
fn parses_keys_and_indexes() {
    assert_eq!(
        steps("data.items[0][2].name"),
        [
            key("data"),
            key("items"),
            Step::Index(0),
            Step::Index(2),
            key("name")
        ]
    );
    assert_eq!(steps("[1].id"), [Step::Index(1), key("id")]);
    assert_eq!(steps("[0][1]"), [Step::Index(0), Step::Index(1)]);
    assert_eq!(steps("a[007]"), [key("a"), Step::Index(7)]);
    // Keys are taken as written: spaces, unicode, control characters.
    assert_eq!(
        steps(" a b .ünï😀.\u{202e}x\u{0}"),
        [key(" a b "), key("ünï😀"), key("\u{202e}x\u{0}")]
    );
}

#[test]
fn parses_json_pointers() {
    assert_eq!(
        steps("/data/items/0/name"),
        [token("data"), token("items"), token("0"), token("name")]
    );
    assert_eq!(steps("/"), [token("")]);
    assert_eq!(steps("//"), [token(""), token("")]);
    assert_eq!(
        steps("/a~1b/c~0d/~01"),
        [token("a/b"), token("c~d"), token("~1")]
    );
    assert_eq!(steps("/a.b[0]"), [token("a.b[0]")]);
}

#[test]
fn refuses_malformed_paths_saying_what_and_where() {
    let cases = [
        ("", "the path is empty"),
        ("a..b", "the key before the '.' at character 3 is empty"),
        (".a", "the key before the '.' at character 1 is empty"),
        ("a.", "the path ends with '.'"),
        ("a[", "the '[' at character 2 is never closed"),
        ("a[0", "the '[' at character 2 is never closed"),
        ("a[[0]]", "'[[0]' at character 2 is not an index"),
        ("a[x]", "'[x]' at character 2 is not an index"),
        ("a[ 0 ]", "'[ 0 ]' at character 2 is not an index"),
        ("a[+1]", "'[+1]' at character 2 is not an index"),
        ("a[1.5]", "'[1.5]' at character 2 is not an index"),
        ("a[٣]", "'[٣]' at character 2 is not an index"),
        ("a[]", "the index at character 2 is empty"),
        ("a[-1]", "the index at character 2 is negative"),
        ("é[-0]", "the index at character 2 is negative"),
        ("a[0]b", "'b' at character 5 follows an index"),
        ("a.[0]", "the '[' at character 3 follows a '.'"),
        ("[0].[1]", "the '[' at character 5 follows a '.'"),
        ("a]", "the ']' at character 2 closes no '['"),
        ("]", "the ']' at character 1 closes no '['"),
        ("a[0]]", "the ']' at character 5 closes no '['"),
        ("/a~", "the '~' at character 3 is not followed by 0 or 1"),
        ("/a~2", "the '~' at character 3 is not followed by 0 or 1"),
        ("/é/~x", "the '~' at character 4 is not followed by 0 or 1"),
    ];
    for (path, reason) in cases {
        let got = refused(path);
        assert!(got.starts_with(reason), "{path:?}: {got}");
    }
    let huge = format!("a[{}]", "9".repeat(30));
    assert!(refused(&huge).contains("larger than any array can be"));
    assert!(refused(&format!("a[{}]", u128::MAX)).contains("larger than any array"));
    assert!(parse(&format!("a[{}]", usize::MAX)).is_ok());
}

#[test]
fn an_error_quotes_the_path_shortened_and_says_how_to_write_one() {
    let e = parse("a[x]").unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid JSON path 'a[x]': '[x]' at character 2 is not an index: an index is a number \
         from 0 (digits only), as in items[0]; for a key with '.', '[' or ']' in it, use a JSON \
         Pointer such as \"/a.b\"; write it as \"data.items[0].name\" or as a JSON Pointer \
         \"/data/items/0/name\""
    );
    let long = format!("{}[x]", "ü".repeat(500));
    let e = parse(&long).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("invalid JSON path '{}…'", "ü".repeat(80))),
        "{e}"
    );
    assert!(e.contains("at character 501"), "{e}");
    // A long index is quoted shortened too.
    let e = refused(&format!("a[{}]", "x".repeat(900)));
    assert!(e.len() < 300, "{e}");
}

#[test]
fn huge_and_deep_paths_are_bounded() {
    // At the limit: parsed, each step looked up without recursion.
    let deep = format!("{}a", "a.".repeat((MAX_PATH_LEN - 1) / 2));
    assert!(deep.len() <= MAX_PATH_LEN);
    assert_eq!(parse(&deep).unwrap().steps().len(), MAX_PATH_LEN / 2);
    let indexes = "[0]".repeat(MAX_PATH_LEN / 3);
    assert_eq!(
        parse(&indexes).unwrap().lookup(&json!([[[1]]])),
        None,
        "deeper than the data"
    );
    let slashes = "/".repeat(MAX_PATH_LEN);
    assert_eq!(parse(&slashes).unwrap().steps().len(), MAX_PATH_LEN);
    // Over it: refused before any step is read, whatever follows.
    for over in [
        "a".repeat(MAX_PATH_LEN + 1),
        "[".repeat(1_000_000),
        format!("/{}", "~".repeat(MAX_PATH_LEN)),
        "é".repeat(MAX_PATH_LEN / 2 + 1),
    ] {
        assert!(
            refused(&over).contains("over the limit of 1024"),
            "{}",
            over.len()
        );
    }
}

#[test]
fn no_input_makes_it_panic() {
    // Every path of up to four characters from the grammar's own characters and a few others.
    let alphabet = ['a', '.', '[', ']', '0', '9', '-', '/', '~', '1', 'é', ' '];
    let doc = json!({"a": [{"a": 1}, [2]], "0": {"~": 3}, "": [4]});
    let mut paths = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..4 {
        let next: Vec<String> = frontier
            .iter()
            .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
            .collect();
        paths.extend(next.iter().cloned());
        frontier = next;
    }
    assert_eq!(paths.len(), 1 + 12 + 144 + 1728 + 20736);
    let mut accepted = 0;
    for path in &paths {
        if let Ok(parsed) = parse(path) {
            accepted += 1;
            let _ = parsed.lookup(&doc);
        }
    }
    assert!(accepted > 1000, "{accepted}");
}

#[test]
fn looks_up_values_and_misses_quietly() {
    let doc = json!({"data": {"items": [{"name": "x"}], "n": 3, "0": "zero", "a/b": 1, "~": 2}});
    let get = |p: &str| parse(p).unwrap().lookup(&doc).cloned();
    assert_eq!(get("data.items[0].name"), Some(json!("x")));
    assert_eq!(get("/data/items/0/name"), Some(json!("x")));
    assert_eq!(get("data.n"), Some(json!(3)));
    assert_eq!(get("data.items[5].name"), None);
    assert_eq!(get("data.n.deeper"), None);
    assert_eq!(get("data.items.name"), None);
    // A dotted index reads arrays only, a dotted key objects only; a pointer token either.
    assert_eq!(get("data[0]"), None);
    assert_eq!(get("data.0"), Some(json!("zero")));
    assert_eq!(get("/data/0"), Some(json!("zero")));
    assert_eq!(get("data.items.0"), None);
    // A pointer's index is decimal without a leading zero (RFC 6901).
    assert_eq!(get("/data/items/00"), None);
    assert_eq!(get("/data/items/-"), None);
    assert_eq!(get("/data/items/+0"), None);
    assert_eq!(get("/data/a~1b"), Some(json!(1)));
    assert_eq!(get("/data/~0"), Some(json!(2)));
    assert_eq!(
        parse("[1]").unwrap().lookup(&json!([0, 1])),
        Some(&json!(1))
    );
    assert_eq!(parse("/").unwrap().lookup(&json!({"": 5})), Some(&json!(5)));
}

#[test]
fn writes_steps_as_a_path_that_reads_back() {
    let idx = Step::Index;
    // Dotted where every key can be written so, a JSON Pointer otherwise.
    let cases: [(Vec<Step>, &str); 10] = [
        (
            vec![key("user"), key("items"), idx(0), key("id")],
            "user.items[0].id",
        ),
        (vec![idx(0), key("id")], "[0].id"),
        (vec![idx(1), idx(2)], "[1][2]"),
        (vec![key("a"), key("0")], "a.0"),
        (vec![key("a"), key("b/c"), key("~")], "a.b/c.~"),
        (vec![key("ta.gs"), idx(0)], "/ta.gs/0"),
        (vec![idx(0), key("")], "/0/"),
        (vec![key("a[1]"), key("x")], "/a[1]/x"),
        (vec![key("/x"), key("a/b~c")], "/~1x/a~1b~0c"),
        (vec![key("a"), token("01")], "/a/01"),
    ];
    let doc = json!({
        "user": {"items": [{"id": 1}]}, "a": {"0": 2, "b/c": {"~": 3}, "01": 4},
        "ta.gs": [5], "a[1]": {"x": 6}, "/x": {"a/b~c": 7}
    });
    for (steps, written) in cases {
        assert_eq!(write(&steps), written, "{steps:?}");
        let again = parse(written).unwrap();
        let finds = JsonPath {
            steps: steps.clone(),
        }
        .lookup(&doc);
        assert_eq!(again.lookup(&doc), finds, "{written}");
    }
    assert_eq!(
        parse("/0/").unwrap().lookup(&json!([{"": 8}])),
        Some(&json!(8))
    );
    assert_eq!(write(&[]), "");
}
