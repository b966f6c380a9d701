// The sandbox prelude (module `prelude.js`): evaluated in every fresh sandbox context before the
// tool code (compiled to bytecode once per process, see compile.rs).
//
// It runs for every execution, so it is kept small; everything else lives in `utils.js`, which
// is loaded only when a tool first touches `utils` or `console`, or throws.
//
// It owns, inside the sandbox: the lock-down of what the engine offers (no code from strings,
// no shared memory, no stack-trace hooks), the `utils` and `console` globals and the globals
// permissions add (`fetch` with `network`, `fs` with `filesystem`, `shell` with `shell`), and the
// hooks the Rust side drives: `begin` (per-job options), `run` (calls the tool and serializes
// its result), `settle` (finishes a `callTool` or `fetch` promise) and `describe` (turns a thrown value
// into a message). The `host` object of native functions it receives is captured here and never
// becomes reachable from tool code.
//
// Everything the hooks rely on is captured at load time, before any tool code runs, so a tool
// that overwrites `JSON`, `Object.freeze` or `Error` changes nothing here.

const G = globalThis;
const defineProperty = Object.defineProperty;
const getPrototypeOf = Object.getPrototypeOf;
const freeze = Object.freeze;
const parse = JSON.parse;
const stringify = JSON.stringify;
const ErrorCtor = Error;
const EvalErrorCtor = EvalError;
const PromiseCtor = Promise;
// The globals a permission adds, by the message of the ReferenceError a tool without it gets:
// [global, permission].
const PERMISSION_OF = {
    __proto__: null,
    'ReferenceError: fetch is not defined': ['fetch', 'network'],
    'ReferenceError: fs is not defined': ['fs', 'filesystem'],
    'ReferenceError: shell is not defined': ['shell', 'shell'],
};

// What this module captured anyway, handed on to `utils.js` (by position). The rest of what
// `utils.js` uses it captures when it loads: capturing everything here would force QuickJS to
// build built-in objects (Math, Reflect, ...) that it otherwise creates only on first use.
const primordials = [freeze, defineProperty, parse, stringify, ErrorCtor, PromiseCtor];

/** Locks the context down and sets up the globals; returns the hooks the Rust side drives. */
export function install(host) {
    // The context has no `Eval` intrinsic, so QuickJS itself refuses to compile strings whatever
    // path reaches it; these replacements only make the refusal say clearly what happened.
    const noCode = function () {
        throw new EvalErrorCtor(
            'code cannot be generated from strings in the sandbox (eval and the Function constructors are disabled)',
        );
    };
    const functionProto = getPrototypeOf(noCode);
    // `x instanceof Function` keeps working.
    defineProperty(noCode, 'prototype', { value: functionProto, writable: false });
    const protos = [
        functionProto,
        getPrototypeOf(async function () {}),
        getPrototypeOf(function* () {}),
        getPrototypeOf(async function* () {}),
    ];
    for (let i = 0; i < protos.length; i++) {
        defineProperty(protos[i], 'constructor', { value: noCode, writable: false, configurable: false });
    }
    defineProperty(G, 'Function', { value: noCode, writable: false, enumerable: false, configurable: false });
    defineProperty(G, 'eval', { value: noCode, writable: false, enumerable: false, configurable: false });
    // No shared memory. (Typed arrays are added only for tools that mention them, see
    // compile.rs; these two are removed again whenever they are.)
    delete G.SharedArrayBuffer;
    delete G.Atomics;
    // No V8-style stack hooks: call sites would hand out the functions on the stack.
    defineProperty(ErrorCtor, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
    const limits = bound();

    const pending = { __proto__: null };
    let support;
    let consoleObject;
    let utilsObject;
    let maxConsoleChars = 0;
    let maxOutputChars = 0;
    let configJson;
    let granted = { fetch: false, fs: false, shell: false };
    const load = () => {
        if (support === undefined) {
            support = host.loadSupport(primordials);
        }
        return support;
    };
    defineProperty(G, 'console', {
        get() {
            if (consoleObject === undefined) {
                consoleObject = load().makeConsole(maxConsoleChars);
            }
            return consoleObject;
        },
        enumerable: false,
        configurable: false,
    });
    defineProperty(G, 'utils', {
        get() {
            if (utilsObject === undefined) {
                utilsObject = load().makeUtils(pending, configJson);
            }
            return utilsObject;
        },
        enumerable: false,
        configurable: false,
    });

    const describe = (e) => load().describe(e);
    const noValue = (message) => ({ ok: false, message, stack: null, stackOverflow: false });

    return {
        begin(options) {
            limits.set(options.maxMemoryBytes);
            maxConsoleChars = options.maxConsoleChars;
            maxOutputChars = options.maxOutputChars;
            configJson = options.config;
            if (options.network) {
                let fetchImpl;
                const fetch = function fetch(resource, init) {
                    if (fetchImpl === undefined) {
                        fetchImpl = load().makeFetch(pending);
                    }
                    return fetchImpl(resource, init);
                };
                defineProperty(G, 'fetch', { value: fetch, writable: false, enumerable: false, configurable: false });
            }
            // `fs` (permission `filesystem`) and `shell` (permission `shell`): built on first
            // use, like `utils`.
            const lazyGlobal = (name, make) => {
                let object;
                defineProperty(G, name, {
                    get() {
                        if (object === undefined) {
                            object = make(load());
                        }
                        return object;
                    },
                    enumerable: false,
                    configurable: false,
                });
            };
            if (options.filesystem) {
                lazyGlobal('fs', (support) => support.makeFs(pending));
            }
            if (options.shell) {
                lazyGlobal('shell', (support) => support.makeShell(pending));
            }
            granted = { fetch: options.network === true, fs: options.filesystem === true, shell: options.shell === true };
        },

        async run(main, argsJson, contextJson) {
            let value;
            try {
                value = await main(parse(argsJson), freeze(parse(contextJson)));
            } catch (e) {
                const report = describe(e);
                const missing = PERMISSION_OF[report.message];
                if (missing !== undefined && !granted[missing[0]]) {
                    report.message +=
                        ': ' + missing[0] + ' exists only in tools that declare permissions: ["' + missing[1] +
                        '"] (set it with create_tool or update_custom_tool)';
                }
                return report;
            }
            // Values JSON cannot carry would otherwise come back as an empty result.
            if (value === undefined) {
                return noValue('the tool returned undefined — does the code `return` a value? (e.g. `return {result: x};`)');
            }
            if (typeof value === 'function' || typeof value === 'symbol') {
                return noValue(
                    'the tool returned a ' + typeof value + ', which is not JSON — return data (an object, array, string, number or boolean), e.g. call the function and return its result',
                );
            }
            let json;
            try {
                json = stringify(value);
            } catch (e) {
                const report = describe(e);
                report.message = 'the tool returned a value that cannot be turned into JSON: ' + report.message;
                return report;
            }
            if (json === undefined) {
                json = 'null';
            }
            if (json.length > maxOutputChars) {
                return { ok: true, tooLarge: json.length };
            }
            return { ok: true, json };
        },

        settle(id, ok, payload) {
            const entry = pending[id];
            if (entry === undefined) {
                return;
            }
            delete pending[id];
            if (!ok) {
                entry.reject(new ErrorCtor(payload));
                return;
            }
            let content;
            try {
                content = parse(payload);
            } catch (e) {
                entry.reject(e);
                return;
            }
            entry.resolve(content);
        },

        describe,
    };
}

// Built-ins that run long in native code without reaching the interrupt handler (so neither
// the CPU limit nor the wall clock can stop them) are replaced or guarded before any tool code
// runs; the hostile built-in test (tests/sandbox/builtins.rs) runs every string, regexp and
// array built-in on generated adversarial input to find them. Most guards are native functions
// (guards.rs: the generic array methods' length guard; guards/strings.rs: `normalize`,
// `localeCompare` and the long-needle string searches), which cost a fresh runtime far less
// than closures here. Only `flat` and `flatMap` are guarded here: they must walk nested arrays,
// which must be interruptible JavaScript. They refuse a length longer than any array the memory
// limit could hold densely, in what they are called on and in what they flatten.
function bound() {
    const isArray = Array.isArray;
    const apply = Reflect.apply;
    const RangeErrorCtor = RangeError;
    const ArrayProto = Array.prototype;
    // A JSValue takes 16 bytes: no dense array of more elements than this fits the memory limit.
    let maxLength = 1 << 20;

    const checkLength = (self, name) => {
        if (self === null || self === undefined) {
            return;
        }
        const len = +self.length;
        if (len > maxLength) {
            throw new RangeErrorCtor(
                'Array.prototype.' + name + ': a length of ' + len +
                ' is more than the sandbox allows (' + maxLength + ' elements)',
            );
        }
    };
    // flat walks every array down to its depth: each must pass before the native walk starts.
    // The check is JavaScript, so the CPU limit stops it on a deep or cyclic receiver.
    const checkNested = (array, depth, name) => {
        for (let k = 0; k < array.length; k++) {
            const item = array[k];
            if (isArray(item)) {
                checkLength(item, name);
                if (depth > 1) {
                    checkNested(item, depth - 1, name);
                }
            }
        }
    };
    // Assignments keep the properties' attributes; the methods have their names already, and
    // `flat`'s length is the built-in's (0: a rest parameter does not count), `flatMap`'s is set.
    const flat = ArrayProto.flat;
    const guardedFlat = {
        flat(...args) {
            checkLength(this, 'flat');
            if (isArray(this)) {
                const value = args[0];
                const depth = value === undefined ? 1 : +value;
                if (depth >= 1) {
                    checkNested(this, depth, 'flat');
                }
            }
            return apply(flat, this, args);
        },
    }.flat;
    ArrayProto.flat = guardedFlat;
    const flatMap = ArrayProto.flatMap;
    const guardedFlatMap = {
        flatMap(...args) {
            checkLength(this, 'flatMap');
            if (typeof args[0] === 'function') {
                // flatMap flattens what the callback returns: that is checked as it comes.
                const callback = args[0];
                const thisArg = args[1];
                args[0] = (value, index, array) => {
                    const mapped = apply(callback, thisArg, [value, index, array]);
                    if (isArray(mapped)) {
                        checkLength(mapped, 'flatMap');
                    }
                    return mapped;
                };
            }
            return apply(flatMap, this, args);
        },
    }.flatMap;
    defineProperty(guardedFlatMap, 'length', { value: flatMap.length });
    ArrayProto.flatMap = guardedFlatMap;

    return {
        set(memoryBytes) {
            maxLength = memoryBytes / 16 > 1 << 16 ? memoryBytes / 16 : 1 << 16;
        },
    };
}
