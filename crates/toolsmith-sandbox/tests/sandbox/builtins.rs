//! Every string, regexp and array built-in on generated adversarial input stays under the CPU
//! limit: none may run on in native code where the interrupt handler cannot stop it (issue 12,
//! item 6: `normalize` and `localeCompare` were quadratic on combining marks, generic array
//! methods looped over `{length: 2**53 - 1}`, a long needle made string search quadratic).
//!
//! Each case runs alone on a sandbox of its own thread count and measures the *process* CPU
//! time it cost (nextest runs each test in its own process), so the check does not depend on
//! how loaded the machine is. QuickJS has no `Intl`; that is asserted too, so a build that adds
//! it must extend this test.

use std::sync::LazyLock;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;
use toolsmith_core::{ErrorKind, ToolResult};
use toolsmith_sandbox::{JsLimits, JsSandbox, PoolSettings};

use crate::support::*;

/// The CPU limit of every case.
const CPU_LIMIT: Duration = Duration::from_millis(100);
/// What a case may cost in all: its limit, the run around it, and the stretch between two
/// looks of the interrupt handler.
const CPU_ALLOWED: Duration = Duration::from_millis(1500);

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
});

static SANDBOX: LazyLock<JsSandbox> = LazyLock::new(|| {
    JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 4,
    })
});

fn limits() -> JsLimits {
    JsLimits {
        cpu_time: CPU_LIMIT,
        wall_time: Duration::from_secs(60),
        ..small_limits()
    }
}

/// Runs `code` and checks that it ended by itself (returned, threw, or hit the CPU or memory
/// limit) within [`CPU_ALLOWED`] of process CPU time.
fn check(code: &str) -> Result<(), TestCaseError> {
    let before = process_cpu_time();
    let res: ToolResult = RUNTIME.block_on(SANDBOX.run(job_with(
        code,
        json!({}),
        limits(),
        std::sync::Arc::new(NoHost),
    )));
    let spent = process_cpu_time().saturating_sub(before);
    let kind = res.error_kind();
    prop_assert!(
        matches!(
            kind,
            None | Some(ErrorKind::CpuLimit | ErrorKind::MemoryLimit | ErrorKind::ExecutionError)
        ),
        "{code}: ended as {kind:?}: {}",
        res.content
    );
    prop_assert!(
        spent <= CPU_ALLOWED,
        "{code}: cost {spent:?} of CPU under a limit of {CPU_LIMIT:?} ({kind:?})"
    );
    Ok(())
}

/// Runs `setup` then the `how`-th of `calls`.
fn check_one(setup: &str, calls: &[&str], how: usize) -> Result<(), TestCaseError> {
    check(&format!("{setup} {}; return 1;", calls[how % calls.len()]))
}

/// A JS expression for an adversarial string of about `n` code units.
fn hostile_string() -> impl Strategy<Value = String> {
    let n = (8u32..21).prop_map(|bits| 1u32 << bits);
    let shape = prop_oneof![
        // Marks of different combining classes, alternating: every one must be reordered.
        Just("'e' + '\\u0301\\u0316\\u0334'.repeat(N / 3)"),
        Just("'\\u1100\\u1161\\u11a8'.repeat(N / 3)"),
        Just("'a'.repeat(N)"),
        Just("'a'.repeat(N) + 'b'"),
        Just("'\\ud800'.repeat(N)"),
        Just("'\\ufdfa'.repeat(N / 16)"),
        Just("'ab'.repeat(N / 2)"),
    ];
    (shape, n).prop_map(|(shape, n)| shape.replace('N', &n.to_string()))
}

/// A JS expression for an adversarial receiver of the generic array methods.
fn hostile_array() -> impl Strategy<Value = String> {
    prop_oneof![
        (16u32..54).prop_map(|bits| format!("({{ length: 2 ** {bits} - 1 }})")),
        (16u32..33).prop_map(|bits| format!(
            "(() => {{ const a = []; a.length = 2 ** {bits} - 1; return a; }})()"
        )),
        (8u32..19).prop_map(|bits| format!(
            "Array.from({{ length: 2 ** {bits} }}, (_, i) => 2 ** {bits} - i)"
        )),
        (16u32..33).prop_map(|bits| format!(
            "(() => {{ const a = [1, 2]; a.length = 2 ** {bits} - 1; return [a, a]; }})()"
        )),
    ]
}

/// An argument for a built-in: strings, numbers, callbacks and nothing.
fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        hostile_string(),
        Just("''".to_owned()),
        Just("0".to_owned()),
        Just("-1".to_owned()),
        Just("2 ** 30".to_owned()),
        Just("(x) => x".to_owned()),
        Just("undefined".to_owned()),
        Just("'NFD'".to_owned()),
        Just("'NFKC'".to_owned()),
    ]
}

/// Calls the `pick`-th function of `proto` (sorted by name) on `receiver` with two arguments;
/// a `TypeError` or `RangeError` the built-in throws is a fine way to end.
fn call_every(proto: &str, receiver: &str, pick: usize, a: &str, b: &str) -> String {
    format!(
        "const P = {proto}; \
         const names = Object.getOwnPropertyNames(P).filter((n) => n !== 'constructor' && typeof P[n] === 'function').sort(); \
         const name = names[{pick} % names.length]; \
         const R = {receiver}; const A = {a}; const B = {b}; \
         try {{ P[name].call(R, A, B); }} catch (e) {{ if (!(e instanceof TypeError || e instanceof RangeError)) throw e; }} \
         return name;"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn string_built_ins_stay_under_the_cpu_limit(
        receiver in hostile_string(), pick in 0usize..64, a in argument(), b in argument()
    ) {
        check(&call_every("String.prototype", &receiver, pick, &a, &b))?;
    }

    #[test]
    fn array_built_ins_stay_under_the_cpu_limit(
        receiver in hostile_array(), pick in 0usize..64, a in argument(), b in argument()
    ) {
        check(&call_every("Array.prototype", &receiver, pick, &a, &b))?;
    }

    #[test]
    fn regexp_built_ins_stay_under_the_cpu_limit(
        pattern in prop_oneof![
            Just("(a+)+$"), Just("(a|a)*b"), Just("(?:a*)*b"), Just("a{1,30000}b"), Just("(\\\\w+\\\\s?)+$"),
        ],
        subject in hostile_string(),
        how in 0usize..7,
    ) {
        check_one(
            &format!("const re = new RegExp({pattern:?}); const S = {subject};"),
            &[
            "re.exec(S)", "S.replace(re, 'x')", "S.split(re)", "S.match(re)", "S.search(re)",
            "[...S.matchAll(new RegExp(re.source, 'g'))]", "S.replaceAll(new RegExp(re.source, 'g'), '$&$&')",
            ],
            how,
        )?;
    }

    #[test]
    fn searching_long_strings_for_long_strings_stays_under_the_cpu_limit(
        bits in 10u32..23, how in 0usize..7,
    ) {
        check_one(
            &format!("const S = 'a'.repeat(2 ** {bits}); const N = 'a'.repeat(2 ** {bits} / 2) + 'b';"),
            &[
            "S.indexOf(N)", "S.lastIndexOf(N)", "S.includes(N)", "S.split(N)", "S.replace(N, 'x')",
            "S.replaceAll(N, 'x')", "S.localeCompare(S + '\\u0301')",
            ],
            how,
        )?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn normalizing_combining_marks_stays_under_the_cpu_limit(bits in 10u32..20, how in 0usize..6) {
        check_one(
            &format!("const S = 'e' + '\\u0301\\u0316\\u0334'.repeat(2 ** {bits} / 3);"),
            &[
            "S.normalize()", "S.normalize('NFD')", "S.normalize('NFKC')", "S.normalize('NFKD')",
            "S.localeCompare(S + 'x')", "utils.slugify(S)",
            ],
            how,
        )?;
    }
}

/// The cases the generated ones found: what `flat` and `flatMap` walk besides the receiver
/// (CI, session 4: `[a, a].flatMap((x) => x)` with a sparse `a` of 2**24 - 1 cost 2.3 s of CPU
/// under a limit of 100 ms).
#[test]
fn flattening_huge_nested_arrays_stays_under_the_cpu_limit() {
    let sparse = "const a = [1, 2]; a.length = 2 ** 24 - 1;";
    for call in [
        "[a, a].flatMap((x) => x)",
        "[0].flatMap(() => a)",
        "[[a]].flat(2)",
        "[[[a]]].flat(Infinity)",
        "const c = [a]; c.push(c); c.flat(Infinity)",
    ] {
        check(&format!("{sparse} {call}; return 1;")).unwrap();
    }
}

/// CI, session 21: `join` on an empty array of length 2**16 - 1 with a separator of 131,072
/// lone surrogates cost 2.16 s of CPU under a limit of 100 ms (the built-in copies the
/// separator into one string in native code until the memory limit ends it).
#[test]
fn joining_with_a_huge_separator_stays_under_the_cpu_limit() {
    let holes = "const R = []; R.length = 2 ** 16 - 1;";
    for call in [
        "R.join('\\ud800'.repeat(131072))",
        "R.join('ab'.repeat(65536))",
        "Array.prototype.join.call({ length: 2 ** 16 - 1 }, 'x'.repeat(1 << 20))",
    ] {
        check(&format!("{holes} try {{ {call}; }} catch (e) {{ if (!(e instanceof RangeError)) throw e; }} return 1;")).unwrap();
    }
}

#[tokio::test]
async fn a_join_whose_separators_pass_the_memory_limit_is_refused_saying_so() {
    let answer = value(
        "const R = []; R.length = 2 ** 16 - 1; \
         try { R.join('x'.repeat(1 << 20)); return 'joined'; } catch (e) { return `${e.name}: ${e.message}`; }",
    )
    .await;
    let text = answer.as_str().unwrap_or_default();
    assert!(
        text.starts_with("RangeError: Array.prototype.join:") && text.contains("memory limit"),
        "{answer}"
    );
    // An ordinary join is unchanged.
    assert_eq!(value("return [1, 2, 3].join(', ')").await, json!("1, 2, 3"));
    assert_eq!(value("return Array(3).join('ab')").await, json!("abab"));
}

#[tokio::test]
async fn there_is_no_intl_to_test() {
    assert_eq!(value("return typeof Intl").await, json!("undefined"));
}

#[tokio::test]
async fn the_replacements_keep_what_the_built_ins_answer() {
    let checks = [
        ("'e\\u0301'.normalize()", json!("\u{e9}")),
        ("'\\u00e9'.normalize('NFD')", json!("e\u{301}")),
        ("'\\ufb01'.normalize('NFKC')", json!("fi")),
        (
            "'a\\ud800\\u0301e\\u0301'.normalize() === 'a\\ud800\\u0301\\u00e9'",
            json!(true),
        ),
        ("'\\u00e9'.localeCompare('e\\u0301')", json!(0)),
        ("'a'.localeCompare('b')", json!(-1)),
        ("'b'.localeCompare('a')", json!(1)),
        ("'ab'.localeCompare('a')", json!(1)),
        ("'\\ud800'.localeCompare('\\ud800')", json!(0)),
        (
            "String.prototype.normalize.name + String.prototype.normalize.length",
            json!("normalize0"),
        ),
        ("[1, 2, 3].join('-')", json!("1-2-3")),
        ("[3, 1, 2].sort()", json!([1, 2, 3])),
        ("[[1], [2, [3]]].flat(2)", json!([1, 2, 3])),
        ("[[[[1]]], 2].flat(Infinity)", json!([1, 2])),
        ("[[1], [[2]]].flat()", json!([1, [2]])),
        ("[[1]].flat(0)", json!([[1]])),
        ("[[1], [2]].flatMap((x) => x)", json!([1, 2])),
        (
            "[1, 2].flatMap(function (x, i, all) { return [x, this.k, i, all.length]; }, { k: 0 })",
            json!([1, 0, 0, 2, 2, 0, 1, 2]),
        ),
        ("Array.prototype.flatMap.length", json!(1)),
        ("[1].concat([2], 3)", json!([1, 2, 3])),
        ("Array.prototype.join.length", json!(1)),
        // Each replacement keeps the built-in's name, length and property attributes.
        (
            "['indexOf', 'lastIndexOf', 'includes', 'split', 'replace', 'replaceAll', 'localeCompare'] \
             .map((n) => [String.prototype[n].name, String.prototype[n].length])",
            json!([
                ["indexOf", 1],
                ["lastIndexOf", 1],
                ["includes", 1],
                ["split", 2],
                ["replace", 2],
                ["replaceAll", 2],
                ["localeCompare", 1]
            ]),
        ),
        (
            "['concat', 'fill', 'slice', 'splice', 'sort', 'with', 'toString'] \
             .map((n) => [Array.prototype[n].name, Array.prototype[n].length])",
            json!([
                ["concat", 1],
                ["fill", 1],
                ["slice", 2],
                ["splice", 2],
                ["sort", 1],
                ["with", 2],
                ["toString", 0]
            ]),
        ),
        (
            "[[String.prototype, 'indexOf'], [String.prototype, 'normalize'], [Array.prototype, 'join'], \
              [Array.prototype, 'flat']].map(([p, n]) => Object.getOwnPropertyDescriptor(p, n)) \
             .map((d) => [d.writable, d.enumerable, d.configurable])",
            json!([
                [true, false, true],
                [true, false, true],
                [true, false, true],
                [true, false, true]
            ]),
        ),
        (
            "Object.keys(Array.prototype).length + Object.keys(String.prototype).length",
            json!(0),
        ),
    ];
    for (expr, expected) in checks {
        assert_eq!(value(&format!("return {expr}")).await, expected, "{expr}");
    }
    let long = "const S = 'x'.repeat(300000) + 'needle-that-is-long-enough' + 'y'.repeat(10); \
                const N = 'needle-that-is-long-enough';";
    let searches = [
        ("S.indexOf(N)", json!(300000)),
        ("S.indexOf(N, 300001)", json!(-1)),
        ("S.includes(N)", json!(true)),
        ("S.split(N).length", json!(2)),
        ("S.replace(N, '[$&]').length", json!(300000 + 28 + 10)),
        ("S.replaceAll(N, () => '!').length", json!(300011)),
        ("S.lastIndexOf(N)", json!(300000)),
        ("S.lastIndexOf(N, 299999)", json!(-1)),
        ("S.split(N, 1).length", json!(1)),
        (
            "S.replace(N, '$$-$`').length - S.length",
            json!(2 + 300000 - 26),
        ),
        ("('\\u00e9' + S).indexOf(N)", json!(300001)),
        ("('\\u{1F600}' + S).lastIndexOf(N)", json!(300002)),
        // Issue 31: `from + needle length` falling inside a 3-byte character panicked (a byte
        // index cut inside a character), with the tool's argument in the panic message.
        (
            "('\\u20ac'.repeat(300000) + N).lastIndexOf(N, 1)",
            json!(-1),
        ),
        (
            "('\\u20ac'.repeat(300000) + N).lastIndexOf(N)",
            json!(300000),
        ),
        (
            "('\\u20ac'.repeat(3) + N + '\\u20ac').lastIndexOf(N, 4)",
            json!(3),
        ),
    ];
    for (expr, expected) in searches {
        assert_eq!(
            value(&format!("{long} return {expr}")).await,
            expected,
            "{expr}"
        );
    }
    assert_eq!(
        failed(
            &run("return Array.prototype.join.call({ length: 2 ** 53 - 1 }, '')").await,
            ErrorKind::ExecutionError
        ),
        "RangeError: Array.prototype.join: a length of 9007199254740991 is more than the sandbox allows (1048576 elements)"
    );
}

/// The array guards are native functions (`guards.rs`): they read `length` as `+x.length` does
/// (primitives, getters, `valueOf`), check `concat`'s object arguments, are no constructors, and
/// call the built-in they replaced directly, whatever the tool did to `call`, `apply` or
/// `Reflect`.
#[tokio::test]
async fn native_array_guards_read_length_as_javascript_does() {
    let refused = [
        "return Array.prototype.join.call('x'.repeat(2000000), '')",
        "return [].concat([1], { length: 2 ** 40 })",
        "return Array.prototype.slice.call({ get length() { return 2 ** 32; } })",
        "return Array.prototype.fill.call({ length: { valueOf: () => 2 ** 30 } }, 0)",
    ];
    for code in refused {
        let message = failed(&run(code).await, ErrorKind::ExecutionError);
        assert!(
            message.starts_with("RangeError: Array.prototype.")
                && message.contains("more than the sandbox allows"),
            "{code}: {message}"
        );
    }
    let checks = [
        ("Array.prototype.join.call('abc', '-')", json!("a-b-c")),
        ("[1].concat(null, undefined, () => 2).length", json!(4)),
        (
            "(() => { try { new [].join(); return 'constructed'; } catch (e) { return e.name; } })()",
            json!("TypeError"),
        ),
        (
            "(() => { Function.prototype.call = null; Function.prototype.apply = null; Reflect.apply = null; \
               return [3, 1, 2].sort().join(''); })()",
            json!("123"),
        ),
        (
            "(() => { let n = 0; [1, 2, 3].sort((a, b) => { n++; return b - a; }); return n > 0; })()",
            json!(true),
        ),
        ("String([1, [2, 3]])", json!("1,2,3")),
    ];
    for (expr, expected) in checks {
        assert_eq!(value(&format!("return {expr}")).await, expected, "{expr}");
    }
    let thrown = failed(
        &run("return Array.prototype.join.call(undefined)").await,
        ErrorKind::ExecutionError,
    );
    assert!(thrown.starts_with("TypeError"), "{thrown}");
}

/// The rare paths of the guards (`bounds.js`) load only when first taken, after tool code has
/// run: a tool that rewrote the built-ins they would use first still gets the right answers, by
/// the linear search.
#[tokio::test]
async fn the_guards_rare_paths_ignore_built_ins_rewritten_before_they_load() {
    let code = "const S = 'x'.repeat(300000) + 'needle-that-is-long-enough' + 'y'.repeat(10); \
                const N = 'needle-that-is-long-enough'; \
                Function.prototype.call = function () { return 'call'; }; \
                Function.prototype.apply = function () { return 'apply'; }; \
                Function.prototype.bind = function () { return () => 'bind'; }; \
                Reflect.apply = function () { return 'Reflect.apply'; }; \
                String.prototype.slice = function () { return 'slice'; }; \
                String.prototype.codePointAt = function () { return 0; }; \
                Array.prototype.join = function () { return 'join'; }; \
                Array.prototype[Symbol.iterator] = function* () {}; \
                RegExp.escape = function () { return '.*'; }; \
                globalThis.RegExp = function () { throw new Error('RegExp'); }; \
                return [S.indexOf(N), S.lastIndexOf(N), S.includes(N), S.split(N).length, \
                        S.split(N)[1], S.replace(N, '!').length, S.replaceAll(N, '$&').length, \
                        'a\\ud800\\u0301e\\u0301'.normalize() === 'a\\ud800\\u0301\\u00e9', \
                        '\\ud800e\\u0301'.localeCompare('\\ud800\\u00e9')];";
    assert_eq!(
        value(code).await,
        json!([
            300000,
            300000,
            true,
            2,
            "yyyyyyyyyy",
            300011,
            300036,
            true,
            0
        ])
    );
}

/// The string guards are native functions (`guards/strings.rs`): they coerce what they are
/// called on and with as the built-ins do (objects through `toString`, symbols and `null`
/// refused with the built-ins' errors), are no constructors, and reach the built-ins they
/// replaced directly, whatever the tool did to `call`, `apply` or `Reflect`.
#[tokio::test]
async fn native_string_guards_coerce_as_the_built_ins_do() {
    let checks = [
        ("String.prototype.indexOf.call(1234, 3)", json!(2)),
        (
            "String.prototype.includes.call({ toString: () => 'abc' }, 'b')",
            json!(true),
        ),
        ("'a,b'.split({ toString: () => ',' })", json!(["a", "b"])),
        ("'aXbX'.replaceAll('X', (m, at) => at)", json!("a1b3")),
        ("'abc'.lastIndexOf('c', undefined)", json!(2)),
        ("'e\\u0301'.normalize(undefined)", json!("\u{e9}")),
        (
            "(() => { try { ''.normalize('nfc'); } catch (e) { return e.name + ': ' + e.message; } })()",
            json!("RangeError: invalid normalization form"),
        ),
        (
            "(() => { try { String.prototype.indexOf.call(null, 'a'); } catch (e) { return e.name + ': ' + e.message; } })()",
            json!("TypeError: String.prototype.indexOf called on null or undefined"),
        ),
        (
            "(() => { try { 'a'.includes(Symbol('x')); } catch (e) { return e.name; } })()",
            json!("TypeError"),
        ),
        (
            "(() => { try { new ''.indexOf('a'); return 'constructed'; } catch (e) { return e.name; } })()",
            json!("TypeError"),
        ),
        (
            "(() => { Function.prototype.call = null; Function.prototype.apply = null; Reflect.apply = null; \
               return ['abc'.indexOf('c'), 'x'.repeat(100000).includes('x'.repeat(50) + 'y'), \
                       'b\\u0301'.localeCompare('a')]; })()",
            json!([2, false, 1]),
        ),
    ];
    for (expr, expected) in checks {
        assert_eq!(value(&format!("return {expr}")).await, expected, "{expr}");
    }
}

/// The CPU time this test process has used, all threads (`CLOCK_PROCESS_CPUTIME_ID`).
fn process_cpu_time() -> std::time::Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    std::time::Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}
