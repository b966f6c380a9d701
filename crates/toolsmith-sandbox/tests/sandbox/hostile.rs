//! Scripts that try to reach the host, generate code, keep state, or escape the limits. Each
//! fails with a clean error, or shows that the capability is simply not there.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::ErrorKind;

use crate::support::*;

const NO_CODE: &str = "EvalError: code cannot be generated from strings in the sandbox (eval and the Function constructors are disabled)";

/// Asserts that `code` fails as an execution error with `message`.
async fn refused(code: &str, message: &str) {
    let res = run(code).await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        message,
        "code: {code}"
    );
}

#[tokio::test]
async fn eval_is_refused_however_it_is_spelled() {
    refused("return eval('1 + 1')", NO_CODE).await;
    refused("return (0, eval)('this')", NO_CODE).await;
    refused("const e = eval; return e('globalThis')", NO_CODE).await;
    refused("return \\u0065val('1')", NO_CODE).await;
    refused("return globalThis['ev' + 'al']('1')", NO_CODE).await;
    refused(
        "const k = ['e', 'v', 'a', 'l'].join(''); return globalThis[k]('1')",
        NO_CODE,
    )
    .await;
}

#[tokio::test]
async fn function_constructors_are_refused_on_every_path() {
    refused("return Function('return 1')()", NO_CODE).await;
    refused("return new Function('return 1')()", NO_CODE).await;
    refused(
        "return (function () {}).constructor('return globalThis')()",
        NO_CODE,
    )
    .await;
    refused("return (() => 1).constructor('return 1')()", NO_CODE).await;
    refused("return [].constructor.constructor('return 1')()", NO_CODE).await;
    refused(
        "return Reflect.construct(Function, ['return 1'])()",
        NO_CODE,
    )
    .await;
    refused(
        "return Reflect.apply(Function, null, ['return 1'])()",
        NO_CODE,
    )
    .await;
    refused(
        "return (async function () {}).constructor('return 1')()",
        NO_CODE,
    )
    .await;
    refused(
        "return Object.getPrototypeOf(function* () {}).constructor('yield 1')",
        NO_CODE,
    )
    .await;
    refused(
        "return (async function* () {}).constructor('yield 1')",
        NO_CODE,
    )
    .await;
    refused(
        "class F extends Function {}; return new F('return 1')()",
        NO_CODE,
    )
    .await;
    refused("return utils.hash.constructor('return 1')()", NO_CODE).await;
    refused(
        "return console.log.constructor.constructor('return 1')()",
        NO_CODE,
    )
    .await;
    refused(
        "const F = Object.getOwnPropertyDescriptor(Function.prototype, 'constructor').value; return F('return 1')()",
        NO_CODE,
    )
    .await;
}

#[tokio::test]
async fn the_constructor_chain_to_the_global_object_is_cut() {
    refused(
        "return this.constructor.constructor('return this')()",
        "TypeError: cannot read property 'constructor' of undefined",
    )
    .await;
    refused(
        "return arguments.callee",
        "TypeError: invalid property access",
    )
    .await;
    assert_eq!(
        value(
            "return [Function === Function.prototype.constructor, (() => 1) instanceof Function]"
        )
        .await,
        json!([true, true])
    );
}

#[tokio::test]
async fn there_is_no_module_loader() {
    // The loader knows only the tool's declared npm packages (none here) and names the Node
    // built-ins it refuses (issue 33).
    for (code, message) in [
        (
            "return await import('os')",
            "the tool imports the Node built-in 'os', which the sandbox does not have",
        ),
        (
            "const m = 'st' + 'd'; return await import(m)",
            "the tool imports 'std', which is not among its dependencies",
        ),
    ] {
        let res = run(code).await;
        let refusal = failed(&res, ErrorKind::ExecutionError);
        assert!(refusal.starts_with(message), "{code}: {refusal}");
    }
    refused(
        "}\nimport * as os from 'os';\nexport function x() {",
        "the tool code does not compile: ReferenceError: could not load module 'os'",
    )
    .await;
}

#[tokio::test]
async fn host_globals_do_not_exist() {
    assert_eq!(
        value(
            "return ['require', 'module', 'exports', '__dirname', '__filename', \
             'std', 'os', 'scriptArgs', 'print', 'setTimeout', 'setInterval', 'setImmediate', \
             'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'fetch', 'performance', 'gc', \
             'navigator', 'Deno', 'Bun'].filter(n => n in globalThis || typeof globalThis[n] !== 'undefined')"
        )
        .await,
        json!([])
    );
    refused(
        "return require('fs')",
        "ReferenceError: require is not defined",
    )
    .await;
    // `process` is a Node-ism tools may use (issue 33): its `env` holds none of the host's
    // environment, only what the job passes (nothing here).
    assert_eq!(
        value("return [process.env, Object.keys(process.env).length, process.env.PATH]").await,
        json!([{}, 0, null])
    );
    refused(
        "return \\u0072equire('fs')",
        "ReferenceError: require is not defined",
    )
    .await;
}

#[tokio::test]
async fn the_global_object_holds_only_the_standard_library_and_what_was_injected() {
    assert_eq!(
        value("return Object.getOwnPropertyNames(globalThis).sort()").await,
        json!([
            "AggregateError",
            "Array",
            "ArrayBuffer",
            "AsyncDisposableStack",
            "BigInt",
            "BigInt64Array",
            "BigUint64Array",
            "Boolean",
            "DataView",
            "Date",
            "DisposableStack",
            "Error",
            "EvalError",
            "FinalizationRegistry",
            "Float16Array",
            "Float32Array",
            "Float64Array",
            "Function",
            "Infinity",
            "Int16Array",
            "Int32Array",
            "Int8Array",
            "InternalError",
            "Iterator",
            "JSON",
            "Map",
            "Math",
            "NaN",
            "Number",
            "Object",
            "Promise",
            "Proxy",
            "RangeError",
            "ReferenceError",
            "Reflect",
            "RegExp",
            "Set",
            "String",
            "SuppressedError",
            "Symbol",
            "SyntaxError",
            "TypeError",
            "URIError",
            "Uint16Array",
            "Uint32Array",
            "Uint8Array",
            "Uint8ClampedArray",
            "WeakMap",
            "WeakRef",
            "WeakSet",
            "console",
            "decodeURI",
            "decodeURIComponent",
            "encodeURI",
            "encodeURIComponent",
            "escape",
            "eval",
            "globalThis",
            "isFinite",
            "isNaN",
            "mcp",
            "parseFloat",
            "parseInt",
            "queueMicrotask",
            "undefined",
            "unescape",
            "utils"
        ])
    );
}

#[tokio::test]
async fn utils_and_console_cannot_be_changed() {
    refused(
        "utils.hash = () => 'forged'",
        "TypeError: 'hash' is read-only",
    )
    .await;
    refused("utils.extra = 1", "TypeError: object is not extensible").await;
    refused(
        "Object.defineProperty(utils, 'uuid', { value: () => 'x' })",
        "TypeError: property is not configurable",
    )
    .await;
    refused(
        "utils.hash.extra = 1",
        "TypeError: object is not extensible",
    )
    .await;
    refused("utils = {}", "TypeError: no setter for property").await;
    refused("console = {}", "TypeError: no setter for property").await;
    refused("console.log = () => {}", "TypeError: 'log' is read-only").await;
    assert_eq!(
        value("return [Object.isFrozen(utils), Object.isFrozen(utils.callTool), Object.isFrozen(console)]")
            .await,
        json!([true, true, true])
    );
}

#[tokio::test]
async fn nothing_survives_into_the_next_call() {
    let sandbox = sandbox();
    let first = sandbox
        .run(job(
            "globalThis.leak = 'secret'; Object.prototype.polluted = 'yes'; \
             Array.prototype.map = () => 'hijacked'; JSON.stringify = () => '\"hijacked\"'; \
             Math.random = () => 4; return 'planted'",
        ))
        .await;
    assert_eq!(first.content, json!("planted"));
    for _ in 0..4 {
        let next = sandbox
            .run(job(
                "return [typeof leak, ({}).polluted === undefined, [1].map(x => x + 1), Math.random() < 1]",
            ))
            .await;
        assert_eq!(next.content, json!(["undefined", true, [2], true]));
    }
}

#[tokio::test]
async fn a_tool_that_rewrites_built_ins_still_returns_through_pristine_json() {
    assert_eq!(
        value("JSON.stringify = () => 'not json at all'; JSON.parse = () => 1; return { ok: [1] }")
            .await,
        json!({"ok": [1]})
    );
}

#[tokio::test]
async fn stack_trace_hooks_are_locked() {
    refused(
        "Error.prepareStackTrace = (e, sites) => sites.map(s => s.getFunction()); return new Error('x').stack",
        "TypeError: 'prepareStackTrace' is read-only",
    )
    .await;
}

#[tokio::test]
async fn the_result_is_serialized_under_the_limits() {
    let res = run("return { toJSON() { while (true) {} } }").await;
    failed(&res, ErrorKind::CpuLimit);
    let res = run("return { get x() { while (true) {} } }").await;
    failed(&res, ErrorKind::CpuLimit);
    let res = run("return new Proxy({}, { ownKeys() { for (;;) {} } })").await;
    failed(&res, ErrorKind::CpuLimit);
    let res = run("return { toJSON() { return 'y'.repeat(1e8) } }").await;
    failed(&res, ErrorKind::MemoryLimit);
}

#[tokio::test]
async fn a_thenable_that_never_resolves_is_caught() {
    refused(
        "return { then(resolve) { } }",
        "the tool never finished: it awaits a promise that nothing can settle any more",
    )
    .await;
    let res = run("return { then() { while (true) {} } }").await;
    failed(&res, ErrorKind::CpuLimit);
    assert_eq!(
        value("return { then(resolve) { resolve('via then') } }").await,
        json!("via then")
    );
}

#[tokio::test]
async fn symbol_to_primitive_traps_are_bounded() {
    let res = run(
        "const e = new Error('x'); e.name = { [Symbol.toPrimitive]() { while (true) {} } }; throw e",
    )
    .await;
    failed(&res, ErrorKind::CpuLimit);
    let res = run(
        "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('inner') } }); throw e",
    )
    .await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "the tool threw a value that cannot be described"
    );
    refused(
        "throw { [Symbol.toPrimitive]() { return 'primitive' }, toJSON() { return 'json form' } }",
        "\"json form\"",
    )
    .await;
}

#[tokio::test]
async fn escape_attempts_through_the_module_wrapper_stay_inside() {
    refused(
        "}\nexport const x = 1;\nexport default function() {",
        "the tool code has a syntax error: SyntaxError: duplicate exported name 'default' (line 4, column 2)",
    )
    .await;
    // Closing the function early only runs the rest as module code, in the same sandbox.
    assert_eq!(
        value("return 1 }\nconst state = globalThis.leak = 'module';\nasync function again() {")
            .await,
        json!(1)
    );
}

#[tokio::test]
async fn shared_memory_and_wasm_are_absent() {
    assert_eq!(
        value("const u = new Uint8Array(4); return [typeof SharedArrayBuffer, typeof Atomics, typeof WebAssembly, u.length]")
            .await,
        json!(["undefined", "undefined", "undefined", 4])
    );
}

#[tokio::test]
async fn two_concurrent_calls_never_see_each_other() {
    use async_trait::async_trait;
    use serde_json::Value;
    use toolsmith_sandbox::HostCalls;

    /// Holds both calls at a barrier, so they are in flight at the same time.
    struct Barrier(tokio::sync::Barrier);

    #[async_trait]
    impl HostCalls for Barrier {
        async fn call_tool(&self, _name: &str, _args: Value) -> Result<Value, String> {
            self.0.wait().await;
            Ok(Value::Null)
        }

        fn list_tools(&self) -> Vec<Value> {
            Vec::new()
        }
    }

    let sandbox = sandbox();
    let host: Arc<Barrier> = Arc::new(Barrier(tokio::sync::Barrier::new(2)));
    let code = "globalThis.mine = args.name; Object.prototype.owner = args.name; \
                await utils.callTool('barrier'); \
                return [mine, ({}).owner, typeof theirs]";
    let a = sandbox.run(job_with(
        code,
        json!({"name": "a"}),
        small_limits(),
        host.clone(),
    ));
    let b = sandbox.run(job_with(
        code,
        json!({"name": "b"}),
        small_limits(),
        host.clone(),
    ));
    let (a, b) = tokio::join!(a, b);
    assert_eq!(a.content, json!(["a", "a", "undefined"]));
    assert_eq!(b.content, json!(["b", "b", "undefined"]));
}
