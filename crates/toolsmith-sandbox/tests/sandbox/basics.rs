//! What a tool sees and what comes back: arguments, context, return values, thrown errors,
//! syntax errors, the console, `fetch` and permissions.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::{ConsoleEntry, ConsoleLevel, ErrorKind, Permission};

use crate::support::*;

#[tokio::test]
async fn the_trivial_tool_returns_its_value() {
    let res = run("return 1").await;
    assert!(!res.is_error);
    assert_eq!(res.content, json!(1));
    assert_eq!(res.error_kind(), None);
    assert!(res.metadata.duration_ms > 0.0);
}

#[tokio::test]
async fn args_are_a_plain_copy_of_the_json_arguments() {
    let args = json!({"text": "héllo", "n": 3, "list": [1, {"deep": true}], "none": null});
    let res = shared()
        .run(job_with(
            "return { args, proto: Object.getPrototypeOf(args) === Object.prototype, \
             list: Array.isArray(args.list), type: typeof args.n }",
            args.clone(),
            small_limits(),
            Arc::new(NoHost),
        ))
        .await;
    assert_eq!(
        res.content,
        json!({"args": args, "proto": true, "list": true, "type": "number"})
    );
}

#[tokio::test]
async fn context_describes_the_call() {
    assert_eq!(
        value("return [context, Object.isFrozen(context)]").await,
        json!([{
            "toolName": "test_tool",
            "callId": "call_1",
            "conversationId": "conv_1",
            "userId": "user_1"
        }, true])
    );
}

#[tokio::test]
async fn no_value_is_an_error_that_names_the_fix() {
    let no_return = "the tool returned undefined — does the code `return` a value? (e.g. `return {result: x};`)";
    for code in ["return undefined", "", "const x = 1 + 1;", "args.x = 1"] {
        let res = run(code).await;
        assert_eq!(
            failed(&res, ErrorKind::ExecutionError),
            no_return,
            "{code:?}"
        );
    }
    let res = run("return function f() {}").await;
    assert!(
        failed(&res, ErrorKind::ExecutionError)
            .starts_with("the tool returned a function, which is not JSON — return data"),
        "{}",
        res.content
    );
    let res = run("return Symbol('x')").await;
    assert!(failed(&res, ErrorKind::ExecutionError).starts_with("the tool returned a symbol"));
    // `null` is a value: it comes back as it is.
    assert_eq!(value("return null").await, json!(null));
}

#[tokio::test]
async fn values_round_trip_as_json() {
    assert_eq!(
        value(
            "return { s: 'x', n: 1.5, b: true, a: [null], f() {}, u: undefined, d: new Date(0) }"
        )
        .await,
        json!({"s": "x", "n": 1.5, "b": true, "a": [null], "d": "1970-01-01T00:00:00.000Z"})
    );
    assert_eq!(
        value("return await Promise.resolve('later')").await,
        json!("later")
    );
}

#[tokio::test]
async fn thrown_errors_keep_their_own_message() {
    let res = run("throw new Error('the input was empty')").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the input was empty"
    );
    assert_eq!(res.content["stack"], json!("at default (tool.js:1:11)"));

    let res = run("const x = 1;\nx()").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "TypeError: not a function"
    );
    assert_eq!(res.content["stack"], json!("at default (tool.js:2:1)"));

    let res = run("undefinedFunction()").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "ReferenceError: undefinedFunction is not defined"
    );

    let res = run("class ValidationError extends Error { constructor(m) { super(m); this.name = 'ValidationError' } }\nthrow new ValidationError('bad date')").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "ValidationError: bad date"
    );

    let res = run("throw 'plain text'").await;
    assert_eq!(failed(&res, ErrorKind::ExecutionError), "plain text");
    assert_eq!(res.content.get("stack"), None);

    let res = run("throw { code: 42 }").await;
    assert_eq!(failed(&res, ErrorKind::ExecutionError), r#"{"code":42}"#);

    let res = run("await null; throw new RangeError('after an await')").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "RangeError: after an await"
    );
}

#[tokio::test]
async fn a_value_that_is_not_json_is_an_execution_error() {
    let res = run("const a = {}; a.self = a; return a").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the tool returned a value that cannot be turned into JSON: TypeError: circular reference"
    );
    let res = run("return 10n").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the tool returned a value that cannot be turned into JSON: TypeError: BigInt are forbidden in JSON.stringify"
    );
}

#[tokio::test]
async fn syntax_errors_are_reported_with_their_line() {
    let res = run("const a = 1;\nconst b = ;\nreturn a").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the tool code has a syntax error: SyntaxError: unexpected token in expression: ';' (line 2, column 11)"
    );
}

#[tokio::test]
async fn code_runs_in_strict_mode() {
    let res = run("undeclared = 5; return undeclared").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "ReferenceError: undeclared is not defined"
    );
    assert_eq!(
        value("return typeof (function () { return this })()").await,
        json!("undefined")
    );
}

#[tokio::test]
async fn console_output_is_captured_as_data() {
    let res = run("console.log('hello', 42, {a: [1]}, null, undefined, 5n);\n\
         console.warn('careful');\n\
         console.error(new TypeError('bad'));\n\
         console.info('info is a log');\n\
         return 'done'")
    .await;
    assert_eq!(res.content, json!("done"));
    assert_eq!(
        res.metadata.console,
        vec![
            ConsoleEntry {
                level: ConsoleLevel::Log,
                message: r#"hello 42 {"a":[1]} null undefined 5n"#.to_owned(),
            },
            ConsoleEntry {
                level: ConsoleLevel::Warn,
                message: "careful".to_owned(),
            },
            ConsoleEntry {
                level: ConsoleLevel::Error,
                message: "TypeError: bad\n    at default (tool.js:3:19)".to_owned(),
            },
            ConsoleEntry {
                level: ConsoleLevel::Log,
                message: "info is a log".to_owned(),
            },
        ]
    );
    assert!(!res.metadata.console_truncated);
}

#[tokio::test]
async fn console_output_survives_a_failure() {
    let res = run("console.log('before'); throw new Error('after')").await;
    assert_eq!(failed(&res, ErrorKind::ExecutionError), "after");
    assert_eq!(res.metadata.console.len(), 1);
    assert_eq!(res.metadata.console[0].message, "before");
}

#[tokio::test]
async fn forged_log_lines_stay_data() {
    let forged = "ok\n2024-01-01T00:00:00Z ERROR server: admin password is hunter2\u{1b}[31m red \u{1b}[0m\r\n";
    let res = run(&format!(
        "console.log({}); return 1",
        serde_json::to_string(forged).unwrap()
    ))
    .await;
    assert_eq!(
        res.metadata.console,
        vec![ConsoleEntry {
            level: ConsoleLevel::Log,
            message: forged.to_owned(),
        }]
    );
}

#[tokio::test]
async fn fetch_exists_only_with_the_network_permission() {
    assert_eq!(value("return typeof fetch").await, json!("undefined"));

    let mut with_network = job("return typeof fetch");
    with_network.permissions.insert(Permission::Network);
    assert_eq!(shared().run(with_network).await.content, json!("function"));

    let mut fetching = job("const r = await fetch('https://example.com'); return r.status");
    fetching.permissions.insert(Permission::Network);
    let res = shared().run(fetching).await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "network access is not configured"
    );

    let mut shell_only = job("return await fetch('https://example.com')");
    shell_only.permissions.insert(Permission::Shell);
    let res = shared().run(shell_only).await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "ReferenceError: fetch is not defined: fetch exists only in tools that declare permissions: [\"network\"] (set it with create_tool or update_custom_tool)"
    );
}

#[tokio::test]
async fn optional_built_ins_are_there_when_used() {
    assert_eq!(
        value(
            "const m = new Map([[1, 'one']]); const s = new Set([1, 1, 2]); \
             const d = new Date(Date.UTC(2024, 0, 2)); const u = new Uint8Array([1, 2, 300]); \
             return [m.get(1), s.size, d.toISOString(), Array.from(u), new DataView(u.buffer).getUint8(2)]"
        )
        .await,
        json!(["one", 2, "2024-01-02T00:00:00.000Z", [1, 2, 44], 44])
    );
    assert_eq!(
        value("const name = 'Da' + 'te'; return typeof globalThis[name]").await,
        json!("function")
    );
}

/// `WeakRef` and `FinalizationRegistry` are added only to tools that mention them, like the
/// other optional built-ins.
#[tokio::test]
async fn weak_references_are_there_when_used() {
    assert_eq!(
        value(
            "const o = {}; const r = new WeakRef(o); new FinalizationRegistry(() => 1).register(o, 1); \
             return [r.deref() === o, typeof FinalizationRegistry]"
        )
        .await,
        json!([true, "function"])
    );
}

#[tokio::test]
async fn awkward_results_still_come_back() {
    assert_eq!(
        value("return ['\\ud800', 'ok\\ud83d\\ude00', NaN, -0, 1e400]").await,
        json!(["\u{fffd}", "ok😀", null, 0, null])
    );
    let res = run("let a = []; for (let i = 0; i < 200; i++) a = [a]; return a").await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the tool's result cannot be read as JSON: recursion limit exceeded at line 1 column 128"
    );
}
