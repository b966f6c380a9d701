// The support module (`support.js`): the reports of a tool that threw or returned no data,
// `console`, and the `callTool` and `fetch` promises waiting for the host (`settle`). Loaded into
// a sandbox context only when its tool first touches `console`, `utils`, `fetch`, `fs` or
// `shell`, throws, or returns no data (see prelude.js and grants.rs), or when the Rust side needs
// it; compiled to bytecode once per process.
//
// It is kept small because every call that loads it reads its bytecode: the `utils` helpers are
// in `utils.js`, and `fetch`, `fs` and `shell` in `io.js`, which it loads (through the natives
// `loadUtils` and `loadIo`) only when one of those is first touched, handing on what they share
// (`pending`, `wellFormed`, `safeString`).
//
// `init` receives the native functions (`natives`, see utils.rs) and the prelude's
// `primordials`: `Object.freeze`, `Object.defineProperty`, `JSON.parse`, `JSON.stringify`,
// `Error` and `Promise` as they were before any tool code ran, so a tool that overwrites them
// cannot change how errors are described or made. The other built-ins are captured when this
// module loads.

let natives, primordials;
let freeze, parse, stringify, ErrorCtor, RangeErrorCtor, StringCtor, apply, toWellFormedFn;
let utilsHelpers, ioHelpers, mcpHelpers;

const STACK_OVERFLOW = 'Maximum call stack size exceeded';

// The `callTool` and `fetch` promises waiting for the host, by id: `settle` finishes them.
const pending = { __proto__: null };

// The globals a permission adds, by the message of the ReferenceError a tool without it gets:
// [global, permission, its bit in `failed`'s `granted`].
const PERMISSION_OF = {
    __proto__: null,
    'ReferenceError: fetch is not defined': ['fetch', 'network', 1],
    'ReferenceError: fs is not defined': ['fs', 'filesystem', 2],
    'ReferenceError: shell is not defined': ['shell', 'shell', 4],
};

/** Sets the module up for one context; returns what the prelude, the Rust side and the
 * permission globals (grants.rs) use. */
export function init(nativeFunctions, P) {
    natives = nativeFunctions;
    primordials = P;
    freeze = P[0];
    parse = P[2];
    stringify = P[3];
    ErrorCtor = P[4];
    RangeErrorCtor = RangeError;
    StringCtor = String;
    apply = Reflect.apply;
    toWellFormedFn = String.prototype.toWellFormed;
    return {
        describe,
        failed,
        noValue,
        notJson,
        settle,
        makeConsole,
        makeUtils: (configJson) => utilsModule().makeUtils(configJson),
        fetch: (resource, init) => ioModule().fetch(resource, init),
        fs: () => ioModule().fs(),
        shell: () => ioModule().shell(),
        mcp: () => mcpModule().mcp(),
        // A value the `mcp` content builders made, as the result to send (`mcp.js`); undefined
        // for plain JSON, and always when `mcp` was never touched.
        blocksOf: (value) => (mcpHelpers === undefined ? undefined : mcpHelpers.blocksOf(value)),
    };
}

/** `mcp.js`, loaded on first use. */
function mcpModule() {
    if (mcpHelpers === undefined) {
        mcpHelpers = natives.loadMcp(primordials, { pending, wellFormed, safeString });
    }
    return mcpHelpers;
}

/** `utils.js`, loaded on first use. */
function utilsModule() {
    if (utilsHelpers === undefined) {
        utilsHelpers = natives.loadUtils(primordials, { pending, wellFormed, safeString });
    }
    return utilsHelpers;
}

/** `io.js`, loaded on first use. */
function ioModule() {
    if (ioHelpers === undefined) {
        ioHelpers = natives.loadIo(primordials, { pending, wellFormed, safeString });
    }
    return ioHelpers;
}

/** The report of a tool that threw `e`; `granted` has a bit for each permission the tool has
 * (see PERMISSION_OF). */
function failed(e, granted) {
    const report = describe(e);
    const missing = PERMISSION_OF[report.message];
    if (missing !== undefined && (granted & missing[2]) === 0) {
        report.message +=
            ': ' + missing[0] + ' exists only in tools that declare permissions: ["' + missing[1] +
            '"] (set it with create_tool or update_custom_tool)';
    }
    return report;
}

/** The report of a tool that returned a value of type `type` (`undefined`, `function` or
 * `symbol`), which JSON cannot carry. */
function noValue(type) {
    const message =
        type === 'undefined'
            ? 'the tool returned undefined — does the code `return` a value? (e.g. `return {result: x};`)'
            : 'the tool returned a ' + type + ', which is not JSON — return data (an object, array, string, number or boolean), e.g. call the function and return its result';
    return { ok: false, message, stack: null, stackOverflow: false };
}

/** The report of a tool whose returned value `JSON.stringify` refused with `e`. */
function notJson(e) {
    const report = describe(e);
    report.message = 'the tool returned a value that cannot be turned into JSON: ' + report.message;
    return report;
}

/** Settles the pending `callTool` or `fetch` promise `id` with the host's answer. */
function settle(id, ok, payload) {
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
}

function wellFormed(text) {
    if (typeof toWellFormedFn === 'function') {
        return apply(toWellFormedFn, text, []);
    }
    return text;
}

function safeString(value) {
    if (value === undefined || value === null) {
        return '';
    }
    return typeof value === 'string' ? value : StringCtor(value);
}

/** `{ok: false, message, stack, stackOverflow}` for anything a tool can throw. */
function describe(e) {
    let message;
    let stack = null;
    let stackOverflow = false;
    try {
        if (e instanceof ErrorCtor) {
            const name = safeString(e.name);
            const text = safeString(e.message);
            if (name && name !== 'Error') {
                message = text ? name + ': ' + text : name;
            } else {
                message = text || 'Error';
            }
            stack = firstStackLine(e.stack);
            stackOverflow = e instanceof RangeErrorCtor && text === STACK_OVERFLOW;
        } else if (typeof e === 'string') {
            message = e;
        } else if (e === undefined) {
            message = 'the tool threw undefined';
        } else {
            message = formatValue(e);
        }
    } catch (_) {
        message = 'the tool threw a value that cannot be described';
    }
    return { ok: false, message: wellFormed(message), stack, stackOverflow };
}

function firstStackLine(stack) {
    if (typeof stack !== 'string') {
        return null;
    }
    const lines = stack.split('\n');
    for (let i = 0; i < lines.length; i++) {
        const line = lines[i].trim();
        if (line) {
            return wellFormed(line);
        }
    }
    return null;
}

/** The `console` of one context; what does not fit in `maxChars` is cut on the Rust side. */
function makeConsole(maxChars) {
    let open = true;
    const write = (level) => function (...values) {
        if (!open) {
            return;
        }
        let text = '';
        for (let i = 0; i < values.length; i++) {
            if (i > 0) {
                text += ' ';
            }
            text += formatValue(values[i]);
            if (text.length > maxChars) {
                break;
            }
        }
        if (text.length > maxChars) {
            text = text.slice(0, maxChars + 1);
        }
        open = natives.console(level, wellFormed(text));
    };
    return freeze({
        log: freeze(write('log')),
        info: freeze(write('log')),
        debug: freeze(write('log')),
        warn: freeze(write('warn')),
        error: freeze(write('error')),
    });
}

/** How `console.log` and `describe` show a value. */
function formatValue(value) {
    switch (typeof value) {
        case 'string':
            return value;
        case 'undefined':
            return 'undefined';
        case 'bigint':
            return StringCtor(value) + 'n';
        case 'symbol':
            return StringCtor(value);
        case 'function':
            return '[Function' + (value.name ? ': ' + safeString(value.name) : '') + ']';
        case 'object': {
            if (value === null) {
                return 'null';
            }
            if (value instanceof ErrorCtor) {
                const report = describe(value);
                return report.stack ? report.message + '\n    ' + report.stack : report.message;
            }
            try {
                const json = stringify(value);
                if (json !== undefined) {
                    return json;
                }
            } catch (_) {
                // Circular or otherwise not JSON: fall through.
            }
            try {
                return StringCtor(value);
            } catch (_) {
                return '[object]';
            }
        }
        default:
            return StringCtor(value);
    }
}
