// The sandbox prelude (module `prelude.js`): evaluated in every fresh sandbox context before the
// tool code (compiled to bytecode once per process, see compile.rs).
//
// It runs for every execution, and every fresh runtime pays for reading its bytecode, creating
// what it creates and collecting it again, so it holds only what a trivial call needs: everything
// else lives in `support.js` (and `utils.js`, which it loads in turn when first needed), loaded
// only when a tool first touches `utils`, `console`, `fetch`, `fs` or `shell`, throws, or fails
// to return data.
//
// It owns, inside the sandbox: the `utils` and `console` globals, and the hooks the Rust side
// drives: `run` (calls the tool and serializes its result) and `load` (the support module,
// through which the Rust side settles `callTool` and `fetch` promises and describes thrown
// values, and which the globals permissions add call: grants.rs). The lock-down of what the
// engine offers is native (lockdown.rs). The `host` object of native functions it receives is
// captured here and never becomes reachable from tool code.
//
// Everything the hooks rely on is captured at load time, before any tool code runs, so a tool
// that overwrites `JSON`, `Object.freeze` or `Error` changes nothing here.

const G = globalThis;
const defineProperty = Object.defineProperty;
const freeze = Object.freeze;
const parse = JSON.parse;
const stringify = JSON.stringify;
const ErrorCtor = Error;
const PromiseCtor = Promise;
// What this module captured anyway, handed on to `support.js` and `utils.js` (by position). The
// rest of what they use they capture when they load: capturing everything here would force QuickJS to
// build built-in objects (Math, Reflect, ...) that it otherwise creates only on first use.
const primordials = [freeze, defineProperty, parse, stringify, ErrorCtor, PromiseCtor];

/** Sets up the globals; returns the hooks the Rust side drives. */
export function install(host) {
    let support;
    let consoleObject;
    let utilsObject;
    let maxConsoleChars = 0;
    let configJson;
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
                utilsObject = load().makeUtils(configJson);
            }
            return utilsObject;
        },
        enumerable: false,
        configurable: false,
    });

    return {
        load,

        // For the lock-down (lockdown.rs): the prototypes of these two kinds of function are
        // reachable no other way (the async function prototype is `run`'s).
        generators: [function* () {}, async function* () {}],

        // Resolves with the result's JSON text, that text in a list for a result of MCP content
        // (`mcp.result` …), its length when that is over `maxOutputChars`, or a report of what
        // went wrong (an object, made by the support module).
        async run(main, argsJson, contextJson, maxOutputChars, maxConsole, config, granted) {
            maxConsoleChars = maxConsole;
            configJson = config;
            let value;
            try {
                value = await main(parse(argsJson), freeze(parse(contextJson)));
            } catch (e) {
                return load().failed(e, granted);
            }
            // Values JSON cannot carry would otherwise come back as an empty result.
            if (value === undefined || typeof value === 'function' || typeof value === 'symbol') {
                return load().noValue(typeof value);
            }
            // A value the `mcp` content builders made goes back as MCP content, in a list (the
            // support module is loaded whenever `mcp` was touched).
            const blocks = support === undefined ? undefined : support.blocksOf(value);
            let json;
            try {
                json = stringify(blocks === undefined ? value : blocks);
            } catch (e) {
                return load().notJson(e);
            }
            if (json === undefined) {
                json = 'null';
            }
            if (json.length > maxOutputChars) {
                return json.length;
            }
            return blocks === undefined ? json : [json];
        },
    };
}
