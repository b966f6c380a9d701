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
    const limits = bound(host);

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
// the CPU limit nor the wall clock can stop them) are replaced or guarded here; the hostile
// built-in test (tests/sandbox/builtins.rs) runs every string, regexp and array built-in on
// generated adversarial input to find them.
//
// - `normalize` and `localeCompare` are quadratic in QuickJS on long runs of combining marks:
//   replaced by the host's linear implementation (the `unicode-normalization` crate).
// - The generic array methods loop over `length` of whatever they are called on, and an
//   array-like `{length: 2**53 - 1}` or a sparse array keeps them in native code for hours:
//   a length longer than any array the memory limit could hold densely is refused (here for
//   `flat` and `flatMap`; the others are native functions, guards.rs).
// - Searching a long string for a long string is quadratic in QuickJS's naive search: past a
//   size, `indexOf`, `lastIndexOf`, `includes`, `split`, `replace` and `replaceAll` use the
//   host's linear search.
//
// Every execution pays for what this function creates, so it holds only the guards and the
// checks every call makes. The rare paths (a long search, strings with lone surrogates) live in
// `bounds.js`, loaded the first time one is taken; it gets everything it uses from `kit`, captured
// here before any tool code ran.
function bound(host) {
    const uncurry = (fn) => fn.call.bind(fn);
    const StringProto = String.prototype;
    const ArrayProto = Array.prototype;
    const RangeErrorCtor = RangeError;
    const isArray = Array.isArray;
    const apply = Reflect.apply;
    const TypeErrorCtor = TypeError;
    // ToString: throws on symbols, as the built-ins do.
    const toStr = (value) => `${value}`;
    const isWellFormed = uncurry(StringProto.isWellFormed);
    const nativeNormalize = host.normalize;
    const nativeCompare = host.compareNfc;
    const kit = [
        apply, StringProto.slice, StringProto.codePointAt, StringProto.split, ArrayProto.join,
        StringProto.isWellFormed, RegExp, RegExp.escape, nativeNormalize, StringProto.lastIndexOf,
        StringProto.split, StringProto.replace, StringProto.replaceAll,
    ];
    let rare;
    const slow = () => {
        if (rare === undefined) {
            rare = host.loadBounds(kit);
        }
        return rare;
    };
    // A JSValue takes 16 bytes: no dense array of more elements than this fits the memory limit.
    let maxLength = 1 << 20;
    let maxStringBytes = 1 << 26;

    // The property keeps its attributes (an assignment), the function has its name already (a
    // method), and only a length that differs from the built-in's is redefined.
    const define = (proto, name, fn, length) => {
        if (fn.length !== length) {
            defineProperty(fn, 'length', { value: length });
        }
        proto[name] = fn;
    };
    const coerce = (self, name) => {
        if (self === null || self === undefined) {
            throw new TypeErrorCtor('String.prototype.' + name + ' called on null or undefined');
        }
        return toStr(self);
    };

    define(StringProto, 'normalize', {
        normalize(form) {
            const text = coerce(this, 'normalize');
            const f = form === undefined ? 'NFC' : toStr(form);
            if (f !== 'NFC' && f !== 'NFD' && f !== 'NFKC' && f !== 'NFKD') {
                throw new RangeErrorCtor('invalid normalization form');
            }
            return isWellFormed(text)
                ? nativeNormalize(text, f, maxStringBytes)
                : slow().normalize(text, f, maxStringBytes);
        },
    }.normalize, 0);
    define(StringProto, 'localeCompare', {
        localeCompare(that) {
            const a = coerce(this, 'localeCompare');
            const b = toStr(that);
            return isWellFormed(a) && isWellFormed(b)
                ? nativeCompare(a, b)
                : slow().localeCompare(a, b, maxStringBytes);
        },
    }.localeCompare, 1);

    // Long needle in a long haystack: the host's linear search (bounds.js).
    const QUADRATIC = 1 << 20;
    const long = (text, pattern) =>
        typeof pattern === 'string' && pattern.length > 16 && text.length * pattern.length > QUADRATIC;
    const stringSearch = (name, make) => {
        const method = StringProto[name];
        define(StringProto, name, make(uncurry(method)), method.length);
    };
    stringSearch('indexOf', (original) => ({
        indexOf(search, from) {
            const text = coerce(this, 'indexOf');
            const pattern = toStr(search);
            return long(text, pattern) ? slow().indexOf(text, pattern, from) : original(text, pattern, from);
        },
    }.indexOf));
    stringSearch('lastIndexOf', (original) => ({
        lastIndexOf(search, from) {
            const text = coerce(this, 'lastIndexOf');
            const pattern = toStr(search);
            return long(text, pattern)
                ? slow().lastIndexOf(text, pattern, from)
                : original(text, pattern, from);
        },
    }.lastIndexOf));
    stringSearch('includes', (original) => ({
        includes(search, from) {
            const text = coerce(this, 'includes');
            if (typeof search !== 'string' || !long(text, search)) {
                return original(text, search, from);
            }
            return slow().indexOf(text, search, from) !== -1;
        },
    }.includes));
    stringSearch('split', (original) => ({
        split(separator, limit) {
            if (this !== null && this !== undefined && typeof separator === 'string') {
                const text = toStr(this);
                if (long(text, separator)) {
                    return slow().splitLong(text, separator, limit);
                }
            }
            return original(this, separator, limit);
        },
    }.split));
    for (const name of ['replace', 'replaceAll']) {
        const all = name === 'replaceAll';
        stringSearch(name, (original) => ({
            [name](pattern, replacement) {
                if (this !== null && this !== undefined && typeof pattern === 'string') {
                    const text = toStr(this);
                    if (long(text, pattern)) {
                        return slow().replaceLong(all, text, pattern, replacement);
                    }
                }
                return original(this, pattern, replacement);
            },
        }[name]));
    }

    // `flat` and `flatMap`: no length a dense array could not have, in what they are called on
    // and in what they flatten. The other generic array methods have the same length guard as
    // native functions (guards.rs), which cost a fresh runtime far less than closures here; these
    // two walk nested arrays, which must be interruptible JavaScript.
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
    const flat = ArrayProto.flat;
    define(ArrayProto, 'flat', {
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
    }.flat, flat.length);
    const flatMap = ArrayProto.flatMap;
    define(ArrayProto, 'flatMap', {
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
    }.flatMap, flatMap.length);

    return {
        set(memoryBytes) {
            maxStringBytes = memoryBytes;
            maxLength = memoryBytes / 16 > 1 << 16 ? memoryBytes / 16 : 1 << 16;
        },
    };
}
