// `fetch`, `fs` and `shell` (module `io.js`). Loaded into a sandbox context by the support module
// (`support.js`) only when its tool first touches one of them; compiled to bytecode once per
// process.
//
// `init` receives the native functions (`natives`, see utils.rs), the prelude's `primordials`
// (`Object.freeze`, `Object.defineProperty`, `JSON.parse`, `JSON.stringify`, `Error` and
// `Promise` as they were before any tool code ran) and what it shares with the support module
// (`pending`, `wellFormed`, `safeString`); the other built-ins are captured when it loads.

let natives;
let freeze, parse, stringify, PromiseCtor, ErrorCtor, objectKeys, hasOwn, isArray, StringCtor, NumberCtor;
let pending, wellFormed, safeString;

/** Sets the module up for one context; returns what the support module hands on. */
export function init(nativeFunctions, P, shared) {
    natives = nativeFunctions;
    freeze = P[0];
    parse = P[2];
    stringify = P[3];
    ErrorCtor = P[4];
    PromiseCtor = P[5];
    pending = shared.pending;
    wellFormed = shared.wellFormed;
    safeString = shared.safeString;
    objectKeys = Object.keys;
    hasOwn = Object.hasOwn;
    isArray = Array.isArray;
    StringCtor = String;
    NumberCtor = Number;
    let fetchImpl;
    let fsObject;
    let shellObject;
    return {
        fetch(resource, init) {
            if (fetchImpl === undefined) {
                fetchImpl = makeFetch();
            }
            return fetchImpl(resource, init);
        },
        fs() {
            if (fsObject === undefined) {
                fsObject = makeFs();
            }
            return fsObject;
        },
        shell() {
            if (shellObject === undefined) {
                shellObject = makeShell();
            }
            return shellObject;
        },
    };
}

/** The lower-case name of a header, checked. */
function headerName(name) {
    const text = StringCtor(name).toLowerCase();
    if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(text)) {
        throw new ErrorCtor("fetch: '" + safeString(name) + "' is not a valid header name");
    }
    return text;
}

/** `init.headers` (a plain object, an array of pairs, or a `Headers`-like with `forEach`) as pairs. */
function headerPairs(headers) {
    const out = [];
    if (headers === undefined || headers === null) {
        return out;
    }
    if (isArray(headers)) {
        for (let i = 0; i < headers.length; i++) {
            const pair = headers[i];
            if (!isArray(pair) || pair.length !== 2) {
                throw new ErrorCtor('fetch: headers given as an array must be [name, value] pairs');
            }
            out.push([headerName(pair[0]), StringCtor(pair[1])]);
        }
        return out;
    }
    if (typeof headers !== 'object') {
        throw new ErrorCtor('fetch: headers must be an object or an array of [name, value] pairs');
    }
    if (typeof headers.forEach === 'function' && !hasOwn(headers, 'forEach')) {
        headers.forEach((value, name) => {
            out.push([headerName(name), StringCtor(value)]);
        });
        return out;
    }
    const names = objectKeys(headers);
    for (let i = 0; i < names.length; i++) {
        out.push([headerName(names[i]), StringCtor(headers[names[i]])]);
    }
    return out;
}

/** A frozen WHATWG-shaped `Headers` over `[name, value]` pairs (names lower-case). */
function makeHeaders(pairs) {
    const list = [];
    for (let i = 0; i < pairs.length; i++) {
        list.push([StringCtor(pairs[i][0]).toLowerCase(), StringCtor(pairs[i][1])]);
    }
    const values = (name) => {
        const wanted = StringCtor(name).toLowerCase();
        const found = [];
        for (let i = 0; i < list.length; i++) {
            if (list[i][0] === wanted) {
                found.push(list[i][1]);
            }
        }
        return found;
    };
    const headers = {
        get(name) {
            const found = values(name);
            return found.length === 0 ? null : found.join(', ');
        },
        has(name) {
            return values(name).length > 0;
        },
        forEach(callback) {
            for (let i = 0; i < list.length; i++) {
                callback(list[i][1], list[i][0], headers);
            }
        },
        entries() {
            return list.map((pair) => [pair[0], pair[1]]);
        },
        keys() {
            return list.map((pair) => pair[0]);
        },
        values() {
            return list.map((pair) => pair[1]);
        },
    };
    const names = objectKeys(headers);
    for (let i = 0; i < names.length; i++) {
        freeze(headers[names[i]]);
    }
    return freeze(headers);
}

/** The `Response` a script receives, from the host's `{status, statusText, headers, url, body}`. */
function makeResponse(raw) {
    const body = StringCtor(raw.body);
    const status = NumberCtor(raw.status);
    let used = false;
    const consume = (what) => {
        if (used) {
            throw new ErrorCtor('Response.' + what + ': the body has already been read');
        }
        used = true;
        return body;
    };
    const response = {
        status,
        ok: status >= 200 && status <= 299,
        statusText: StringCtor(raw.statusText),
        url: StringCtor(raw.url),
        headers: makeHeaders(raw.headers),
        get bodyUsed() {
            return used;
        },
        text() {
            return new PromiseCtor((resolve) => resolve(consume('text')));
        },
        json() {
            return new PromiseCtor((resolve) => resolve(parse(consume('json'))));
        },
    };
    freeze(response.text);
    freeze(response.json);
    return freeze(response);
}

/** The `fetch` global of a context with the `network` permission. Never throws: every failure
 * is a rejected promise, as in browsers. */
function makeFetch() {
    const host = natives;
    return function fetch(resource, init) {
        return new PromiseCtor((resolve, reject) => {
            const options = init === undefined || init === null ? {} : init;
            if (typeof options !== 'object') {
                throw new ErrorCtor('fetch: the options must be an object');
            }
            const url = StringCtor(resource);
            const method = options.method === undefined ? 'GET' : StringCtor(options.method).toUpperCase();
            const headers = headerPairs(options.headers);
            let body = options.body;
            if (body === null) {
                body = undefined;
            }
            if (body !== undefined && typeof body !== 'string') {
                body = stringify(body);
                if (body === undefined) {
                    throw new ErrorCtor('fetch: the body cannot be turned into JSON');
                }
                let typed = false;
                for (let i = 0; i < headers.length; i++) {
                    typed = typed || headers[i][0] === 'content-type';
                }
                if (!typed) {
                    headers.push(['content-type', 'application/json']);
                }
            }
            if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
                throw new ErrorCtor('fetch: a ' + method + ' request cannot have a body');
            }
            const id = host.fetch(
                wellFormed(url),
                wellFormed(method),
                wellFormed(stringify(headers)),
                body === undefined ? undefined : wellFormed(body),
            );
            pending[id] = {
                resolve(raw) {
                    resolve(makeResponse(raw));
                },
                reject,
            };
        });
    };
}

// `fs` and `shell`: the permissions `filesystem` and `shell` as small APIs over the built-in
// tools that do the work (`read_file`, `write_file`, `list_directory`, `file_info`,
// `create_folder`, `delete_file`, `execute_shell`). Each method is one `callTool`, so the
// caller's workspace, its path security and quota, the tool groups, the policy and approvals
// apply exactly as they do to the tools themselves; the host counts every file operation against
// the execution's budget (`js_max_fs_operations`).

/** `(label, tool, args, shape)` → a promise of `shape(content)`, rejected as `label: message`. */
function toolCall() {
    const host = natives;
    return (label, tool, args, shape) =>
        new PromiseCtor((resolve, reject) => {
            const id = host.callTool(tool, wellFormed(stringify(args)));
            pending[id] = {
                resolve(content) {
                    resolve(shape(content));
                },
                reject(e) {
                    reject(new ErrorCtor(label + ': ' + safeString(e && e.message)));
                },
            };
        });
}

/** A promise rejected at once with `label: message`. */
function refused(label, message) {
    return new PromiseCtor((resolve, reject) => {
        reject(new ErrorCtor(label + ': ' + message));
    });
}

/** The options object of a call (`undefined` is none), or `undefined` if it is not an object. */
function optionsOf(value) {
    if (value === undefined || value === null) {
        return {};
    }
    return typeof value === 'object' && !isArray(value) ? value : undefined;
}

/** `args` with each of `names` copied from `options` when present there. */
function withOptions(args, options, names) {
    for (let i = 0; i < names.length; i++) {
        if (options[names[i]] !== undefined) {
            args[names[i]] = options[names[i]];
        }
    }
    return args;
}

const FS_PATH_HINT = 'a non-empty string relative to the workspace root (e.g. "notes/todo.md")';

/** The `fs` object of one context (permission `filesystem`). */
function makeFs() {
    const call = toolCall();
    const same = (content) => content;
    // `method(path, options)`: checks both, then calls `tool` with the path under `key`.
    const method = (name, tool, key, names, shape, defaultPath) =>
        function (path, options) {
            const label = 'fs.' + name;
            const p = path === undefined ? defaultPath : path;
            if (typeof p !== 'string' || p === '') {
                return refused(label, 'the path must be ' + FS_PATH_HINT);
            }
            const opts = optionsOf(options);
            if (opts === undefined) {
                return refused(label, 'the options must be an object');
            }
            const args = {};
            args[key] = p;
            return call(label, tool, withOptions(args, opts, names), shape);
        };
    const encoding = (opts) => {
        const e = opts.encoding === 'utf-8' ? 'utf8' : opts.encoding;
        return e === undefined ? {} : { encoding: e };
    };
    const readFile = method('readFile', 'read_file', 'path', ['encoding', 'startLine', 'endLine'], (c) => c.content);
    const fs = {
        /** The file's text (or base64 with `{encoding: 'base64'}`). */
        readFile(path, options) {
            const opts = optionsOf(typeof options === 'string' ? { encoding: options } : options);
            if (opts === undefined) {
                return refused('fs.readFile', 'the options must be an object or an encoding');
            }
            return readFile(path, withOptions(encoding(opts), opts, ['startLine', 'endLine']));
        },
        /** Writes text (or base64 with `{encoding: 'base64'}`); missing folders are created. */
        writeFile(path, data, options) {
            const label = 'fs.writeFile';
            if (typeof path !== 'string' || path === '') {
                return refused(label, 'the path must be ' + FS_PATH_HINT);
            }
            if (typeof data !== 'string') {
                return refused(label, 'the data must be a string (JSON.stringify objects first)');
            }
            const opts = optionsOf(typeof options === 'string' ? { encoding: options } : options);
            if (opts === undefined) {
                return refused(label, 'the options must be an object or an encoding');
            }
            const args = withOptions(encoding(opts), opts, ['overwrite', 'createParents']);
            args.path = path;
            args.content = data;
            return call(label, 'write_file', args, same);
        },
        /** The names in a folder (default: the workspace root). */
        readdir: method('readdir', 'list_directory', 'path', [], (c) => c.entries.map((e) => e.name), '.'),
        /** `{path, count, entries: [{path, name, type, size, modified}], truncated}`. */
        list: method('list', 'list_directory', 'path', ['recursive', 'maxDepth', 'maxEntries'], same, '.'),
        /** `{path, type, size, modified, …}`; rejects when the path does not exist. */
        stat: method('stat', 'file_info', 'path', [], same, '.'),
        /** Creates a folder and any missing parents. */
        mkdir: method('mkdir', 'create_folder', 'path', [], same),
        /** Deletes a file, or a folder with `{recursive: true}`. */
        rm: method('rm', 'delete_file', 'path', ['recursive'], same),
    };
    const names = objectKeys(fs);
    for (let i = 0; i < names.length; i++) {
        freeze(fs[names[i]]);
    }
    return freeze(fs);
}

/** The `shell` object of one context (permission `shell`). */
function makeShell() {
    const call = toolCall();
    const shell = {
        /** Runs `command` with `/bin/sh` in the command sandbox, the workspace as its folder. */
        exec(command, options) {
            const label = 'shell.exec';
            if (typeof command !== 'string' || command === '') {
                return refused(label, 'the command must be a non-empty string (e.g. "ls -la")');
            }
            const opts = optionsOf(options);
            if (opts === undefined) {
                return refused(label, 'the options must be an object');
            }
            const args = withOptions({}, opts, objectKeys(opts));
            args.command = command;
            return call(label, 'execute_shell', args, (c) => c);
        },
    };
    freeze(shell.exec);
    return freeze(shell);
}
