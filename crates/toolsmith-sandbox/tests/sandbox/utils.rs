//! Every `utils` helper, with exact expected values.

use serde_json::{Value, json};
use toolsmith_core::ErrorKind;

use crate::support::*;

/// One test per helper: `code` must return `expected`.
macro_rules! cases {
    ($($name:ident: $code:expr => $expected:expr;)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                let expected: Value = $expected;
                assert_eq!(value($code).await, expected, "code: {}", $code);
            }
        )*
    };
}

cases! {
    hash_defaults_to_sha256: "return utils.hash('abc')"
        => json!("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hash_supports_other_algorithms: "return ['sha1', 'SHA-512', 'md5', 'sha384'].map(a => utils.hash('abc', a))"
        => json!([
            "a9993e364706816aba3e25717850c26c9cd0d89d",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            "900150983cd24fb0d6963f7d28e17f72",
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"
        ]);
    hash_of_unicode_is_of_its_utf8: "return utils.hash('é', 'md5')"
        => json!("66ddcd97cfdeabb2f6fb8a999b4bc76f");
    uuid_is_a_random_v4: "const a = utils.uuid(), b = utils.uuid(); return [utils.isUuid(a), a[14], '89ab'.includes(a[19]), a !== b]"
        => json!([true, "4", true, true]);
    generate_password_defaults_to_16: "const p = utils.generatePassword(); return [p.length, /[a-z]/.test(p), /[A-Z]/.test(p), /[0-9]/.test(p), /[^A-Za-z0-9]/.test(p)]"
        => json!([16, true, true, true, true]);
    generate_password_takes_a_length: "return [utils.generatePassword(40).length, utils.generatePassword(1).length, utils.generatePassword(40) !== utils.generatePassword(40)]"
        => json!([40, 1, true]);
    base64_encode_is_of_utf8: "return [utils.base64Encode('héllo'), utils.base64Encode('')]"
        => json!(["aMOpbGxv", ""]);
    base64_decode_reverses_it: "return [utils.base64Decode('aMOpbGxv'), utils.base64Decode('aGk'), utils.base64Decode('_-8')]"
        => json!(["héllo", "hi", "\u{fffd}\u{fffd}"]);
    url_encode: "return utils.urlEncode('a b&c=d/é?')"
        => json!("a%20b%26c%3Dd%2F%C3%A9%3F");
    url_decode: "return utils.urlDecode('a%20b%26c%3Dd%2F%C3%A9%3F')"
        => json!("a b&c=d/é?");
    hex_encode_is_of_utf8: "return [utils.hexEncode('hi'), utils.hexEncode('é')]"
        => json!(["6869", "c3a9"]);
    hex_decode_reverses_it: "return [utils.hexDecode('6869'), utils.hexDecode('C3A9')]"
        => json!(["hi", "é"]);
    now_is_an_iso_timestamp: "const n = utils.now(); return [/^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$/.test(n), Math.abs(Date.parse(n) - Date.now()) < 60000]"
        => json!([true, true]);
    timestamp_is_milliseconds: "const before = Date.now(); const t = utils.timestamp(); return [Number.isInteger(t), t >= before, t - before < 60000]"
        => json!([true, true, true]);
    date_diff_defaults_to_days: "return [utils.dateDiff('2024-01-01', '2024-01-31'), utils.dateDiff('2024-01-31', '2024-01-01')]"
        => json!([30, -30]);
    date_diff_takes_a_unit: "return [utils.dateDiff('2024-01-01T00:00:00Z', '2024-01-01T12:30:00Z', 'hours'), utils.dateDiff('2024-01-01', '2024-01-15', 'weeks'), utils.dateDiff('2024-01-01T00:00:00Z', '2024-01-01T00:01:30Z', 'seconds'), utils.dateDiff('2024-01-01T00:00:00Z', '2024-01-01T00:01:30Z', 'minutes')]"
        => json!([12, 2, 90, 1]);
    date_add_defaults_to_days: "return utils.dateAdd('2024-01-30T10:00:00Z', 3)"
        => json!("2024-02-02T10:00:00.000Z");
    date_add_takes_calendar_units: "return [utils.dateAdd('2024-01-31T00:00:00Z', 1, 'months'), utils.dateAdd('2024-02-29T00:00:00Z', 1, 'years'), utils.dateAdd('2024-01-01T00:00:00Z', -90, 'minutes'), utils.dateAdd('2024-01-01T00:00:00Z', 2, 'weeks')]"
        => json!(["2024-02-29T00:00:00.000Z", "2025-02-28T00:00:00.000Z", "2023-12-31T22:30:00.000Z", "2024-01-15T00:00:00.000Z"]);
    date_add_accepts_now: "const d = utils.dateAdd('now', 1, 'hours'); return Math.round((Date.parse(d) - Date.now()) / 60000)"
        => json!(60);
    format_date_defaults_to_us_english: "return utils.formatDate('2024-03-05T10:00:00Z')"
        => json!("March 5, 2024");
    format_date_takes_a_locale: "return ['en-GB', 'de-DE', 'fr', 'es', 'xx'].map(l => utils.formatDate('2024-03-05T10:00:00Z', l))"
        => json!(["5 March 2024", "5. März 2024", "5 mars 2024", "5 de marzo de 2024", "March 5, 2024"]);
    slugify: "return utils.slugify('  Héllo, Wörld! 2024 -- Edition ')"
        => json!("hello-world-2024-edition");
    camel_case: "return [utils.camelCase('hello world-foo_bar'), utils.camelCase('XMLHttpRequest'), utils.camelCase('Already camelCase')]"
        => json!(["helloWorldFooBar", "xmlHttpRequest", "alreadyCamelCase"]);
    snake_case: "return utils.snakeCase('helloWorld Foo-bar')"
        => json!("hello_world_foo_bar");
    kebab_case: "return utils.kebabCase('Hello World_fooBar')"
        => json!("hello-world-foo-bar");
    title_case: "return utils.titleCase('the QUICK brown fox')"
        => json!("The Quick Brown Fox");
    truncate: "return [utils.truncate('hello world', 8), utils.truncate('short'), utils.truncate('abcdefghij', 5, '…'), utils.truncate('x'.repeat(150)).length]"
        => json!(["hello...", "short", "abcd…", 100]);
    count_words: "return [utils.countWords('  one two\\tthree\\nfour  '), utils.countWords('')]"
        => json!([4, 0]);
    remove_diacritics: "return utils.removeDiacritics('Crème Brûlée à São Paulo')"
        => json!("Creme Brulee a Sao Paulo");
    is_email: "return ['a@b.co', 'first.last+tag@example.org', 'bad@', 'x y@z.com', 42].map(v => utils.isEmail(v))"
        => json!([true, true, false, false, false]);
    is_url: "return ['https://example.com/a?b=1', 'ftp://files.example.org', 'example.com', 'http://', 'https://exa mple.com'].map(v => utils.isUrl(v))"
        => json!([true, true, false, false, false]);
    is_json: "return ['{\"a\":1}', '[1,2]', '{a:1}', ''].map(v => utils.isJson(v))"
        => json!([true, true, false, false]);
    is_uuid: "return ['123e4567-e89b-12d3-a456-426614174000', '123E4567-E89B-12D3-A456-426614174000', 'nope', '123e4567e89b12d3a456426614174000'].map(v => utils.isUuid(v))"
        => json!([true, true, false, false]);
    clamp: "return [utils.clamp(15, 0, 10), utils.clamp(-5, 0, 10), utils.clamp(5, 0, 10)]"
        => json!([10, 0, 5]);
    round: "return [utils.round(1.005, 2), utils.round(2.5), utils.round(1234.5678, -2), utils.round(-1.2345, 3)]"
        => json!([1.01, 3, 1200, -1.234]);
    random_int: "const xs = Array.from({ length: 200 }, () => utils.randomInt(1, 3)); return [utils.randomInt(5, 5), xs.every(x => Number.isInteger(x) && x >= 1 && x <= 3), new Set(xs).size, xs.every(x => utils.randomInt() <= 100)]"
        => json!([5, true, 3, true]);
    sum: "return [utils.sum([1, 2, 3.5]), utils.sum([])]"
        => json!([6.5, 0]);
    avg: "return [utils.avg([1, 2, 3, 4]), utils.avg([])]"
        => json!([2.5, 0]);
    parse_json: "return utils.parseJson('{\"a\":[1,2]}')"
        => json!({"a": [1, 2]});
    to_json: "return [utils.toJson({ a: 1 }), utils.toJson({ a: [1] }, 0)]"
        => json!(["{\n  \"a\": 1\n}", "{\"a\":[1]}"]);
    parse_csv_handles_quotes: "return utils.parseCsv('name,age,city\\n\"Smith, J\",42,\"New\\nYork\"\\n\"Say \"\"hi\"\"\",7\\r\\nshort\\n\\n')"
        => json!([
            {"name": "Smith, J", "age": "42", "city": "New\nYork"},
            {"name": "Say \"hi\"", "age": "7", "city": ""},
            {"name": "short", "age": "", "city": ""}
        ]);
    parse_csv_takes_a_delimiter: "return utils.parseCsv('a;b\\n1;\"x;y\"', ';')"
        => json!([{"a": "1", "b": "x;y"}]);
    flatten: "return [utils.flatten({ a: { b: 1, c: [1, { d: 2 }] }, e: null, f: {} }), utils.flatten({ a: 1 }, 'x')]"
        => json!([{"a.b": 1, "a.c.0": 1, "a.c.1.d": 2, "e": null, "f": {}}, {"x.a": 1}]);
    get_path_reads_the_one_grammar: "const o = { a: { b: [{ c: 5 }, { 'd.e': 6, 'x/y~': 7 }] }, '': 8 }; return [utils.getPath(o, 'a.b[0].c'), utils.getPath(o, '/a/b/1/d.e'), utils.getPath(o, '/a/b/1/x~1y~0'), utils.getPath(o, 'a.x.y') === undefined, utils.getPath(o, 'a.b.length') === undefined, utils.getPath(o, 'constructor') === undefined, utils.getPath(o, '/a/b/01') === undefined, utils.getPath(o, '/'), utils.getPath([[1, 2]], '[0][1]'), utils.getPath(o, 'a.b') === o.a.b]"
        => json!([5, 6, 7, true, true, true, true, 8, 2, true]);
    unique: "return utils.unique([1, 2, 2, 'a', 'a', 3, 1])"
        => json!([1, 2, "a", 3]);
    chunk: "return [utils.chunk([1, 2, 3, 4, 5], 2), utils.chunk([], 3)]"
        => json!([[[1, 2], [3, 4], [5]], []]);
    shuffle: "const a = [1, 2, 3, 4, 5, 6, 7, 8]; const s = utils.shuffle(a); return [s.length, [...s].sort((x, y) => x - y), a]"
        => json!([8, [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8]]);
    sample: "const a = [1, 2, 3, 4]; const s = utils.sample(a, 2); return [s.length, s.every(x => a.includes(x)), new Set(s).size, utils.sample(a).length, utils.sample(a, 10).length]"
        => json!([2, true, 2, 1, 4]);
    group_by: "return utils.groupBy([{ t: 'a', v: 1 }, { t: 'b', v: 2 }, { t: 'a', v: 3 }, { v: 4 }], 't')"
        => json!({"a": [{"t": "a", "v": 1}, {"t": "a", "v": 3}], "b": [{"t": "b", "v": 2}], "undefined": [{"v": 4}]});
    group_by_takes_a_function: "return utils.groupBy([1, 2, 3, 4], n => n % 2 ? 'odd' : 'even')"
        => json!({"odd": [1, 3], "even": [2, 4]});
    utils_lists_every_helper: "return Object.keys(utils).sort()"
        => json!([
            "avg", "base64Decode", "base64Encode", "callTool", "camelCase", "chunk", "clamp",
            "countWords", "dateAdd", "dateDiff", "flatten", "formatDate", "generatePassword",
            "getApiKey", "getConfigEntries", "getConfigEntry", "getFieldValue", "getPath",
            "getServiceConfig", "groupBy", "hash", "hexDecode", "hexEncode", "isEmail", "isJson",
            "isUrl", "isUuid", "kebabCase", "listTools", "now", "parseCsv", "parseJson",
            "randomInt", "removeDiacritics", "round", "sample", "shuffle", "slugify", "snakeCase",
            "sum", "timestamp", "titleCase", "toJson", "truncate", "unique", "urlDecode",
            "urlEncode", "uuid"
        ]);
}

/// `code` must fail with `message`.
async fn fails_with(code: &str, message: &str) {
    let res = run(code).await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        message,
        "code: {code}"
    );
}

#[tokio::test]
async fn helpers_fail_with_clear_messages() {
    fails_with(
        "return utils.hash('x', 'sha3')",
        "utils.hash: unsupported algorithm 'sha3' (use sha256, sha384, sha512, sha1 or md5)",
    )
    .await;
    fails_with(
        "return utils.base64Decode('%%%')",
        "utils.base64Decode: the input is not valid Base64 (Invalid symbol 37, offset 0.)",
    )
    .await;
    fails_with(
        "return utils.hexDecode('xyz')",
        "utils.hexDecode: the input is not valid hex (Odd number of digits)",
    )
    .await;
    fails_with(
        "return utils.generatePassword(0)",
        "utils.generatePassword: length must be between 1 and 1024",
    )
    .await;
    fails_with(
        "return utils.dateDiff('yesterday', '2024-01-01')",
        "utils.dateDiff: invalid date 'yesterday'",
    )
    .await;
    fails_with(
        "return utils.dateAdd('2024-01-01', 1, 'fortnights')",
        "utils.dateAdd: unknown unit 'fortnights' (use seconds, minutes, hours, days, weeks, months or years)",
    )
    .await;
    fails_with(
        "return utils.chunk([1], 0)",
        "utils.chunk: the size must be a positive integer",
    )
    .await;
    fails_with("return utils.sum('12')", "utils.sum: expected an array").await;
    fails_with(
        "return utils.randomInt(5, 1)",
        "utils.randomInt: expected finite bounds with min <= max",
    )
    .await;
    fails_with(
        "return utils.parseJson('{oops')",
        "SyntaxError: Expected property name or '}' in JSON at position 1 (line 1 column 2)",
    )
    .await;
}

#[tokio::test]
async fn errors_from_helpers_can_be_caught() {
    assert_eq!(
        value("try { utils.hexDecode('zz') } catch (e) { return [e instanceof Error, e.message] }")
            .await,
        json!([
            true,
            "utils.hexDecode: the input is not valid hex (Invalid character 'z' at position 0)"
        ])
    );
}

#[tokio::test]
async fn utils_works_after_the_tool_rewrote_built_ins() {
    assert_eq!(
        value("Object.freeze = x => x; JSON.stringify = () => 'no'; return [Object.isFrozen(utils), utils.slugify('A B')]")
            .await,
        json!([true, "a-b"])
    );
}

/// `utils.getPath` reads the one JSON-path grammar of `format_json` and HTTP-tool mappings
/// (`toolsmith_httptool::path`): over one table of paths it finds what `path::parse` and
/// `lookup` find, and refuses what `parse` refuses.
#[tokio::test]
async fn get_path_finds_what_the_one_grammar_finds() {
    let doc = json!({
        "data": {"items": [{"name": "a"}, {"name": null}], "0": "zero", "a/b": 1, "~": 2, "x.y": 3, "": 4},
        "list": [[10, 11]]
    });
    let paths = [
        "data.items[1].name",
        "data.items[0].name",
        "/data/items/1/name",
        "data.items.0",
        "data.0",
        "/data/0",
        "data[0]",
        "/data/items/01",
        "/data/items/-",
        "/data/a~1b",
        "/data/~0",
        "/data/x.y",
        "data.x.y",
        "/data/",
        "list[0][1]",
        "/list/0/1",
        "list[0][2]",
        "data.items.length",
        "data.constructor",
        "__proto__",
        "data..x",
        "data.[0]",
        "data]",
        "data.items[ 0 ]",
        "data.items[-1]",
        "/data/~2",
        "",
        "[0]",
        "data.items[0]name",
        "data.items['0']",
    ];
    let code = format!(
        "const o = {doc}; return {}.map(p => {{ try {{ const v = utils.getPath(o, p); \
         return v === undefined ? {{ found: false }} : {{ found: true, value: v }}; }} \
         catch (e) {{ return {{ refused: e.message }}; }} }})",
        json!(paths)
    );
    let got = value(&code).await;
    for (path, got) in paths.iter().zip(got.as_array().unwrap()) {
        match toolsmith_httptool::path::parse(path) {
            Ok(parsed) => {
                let want = match parsed.lookup(&doc) {
                    Some(v) => json!({"found": true, "value": v}),
                    None => json!({"found": false}),
                };
                assert_eq!(got, &want, "{path:?}");
            }
            Err(e) => assert_eq!(
                got,
                &json!({"refused": format!("utils.getPath: {e}")}),
                "{path:?}"
            ),
        }
    }
}

#[tokio::test]
async fn get_path_refuses_a_path_outside_the_grammar_saying_how_to_write_one() {
    fails_with(
        "return utils.getPath({ a: { 'd.e': 1 } }, \"a['d.e']\")",
        "utils.getPath: invalid JSON path 'a['d.e']': '['d.e']' at character 2 is not an index: an \
         index is a number from 0 (digits only), as in items[0]; for a key with '.', '[' or ']' in \
         it, use a JSON Pointer such as \"/a.b\"; write it as \"data.items[0].name\" or as a JSON \
         Pointer \"/data/items/0/name\"",
    )
    .await;
}
