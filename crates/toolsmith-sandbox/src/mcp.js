// The `mcp` global (module `mcp.js`): the tool's side of the conversation with the client that
// called it. Loaded into a sandbox context by the support module (`support.js`) only when a tool
// that mentions `mcp` first touches it (grants.rs defines the global); compiled to bytecode once
// per process.
//
// - `mcp.log(level, data, logger?)` and `mcp.progress(progress, total?, message?)` are fire and
//   forget: checked here, counted against the execution's caps on the Rust side (`host.rs`), and
//   passed to the host in order. They return `true` when the message was passed on, `false` when
//   it was dropped (over a cap; the first drop writes one warning to the console).
// - `mcp.sample(params)` and `mcp.elicit(params)` are host calls like `fetch`: a promise settled
//   by the host with the client's answer (a fresh JSON copy), or rejected with an `Error` whose
//   message says why. Each needs its permission (`sampling`, `elicitation`), checked natively.
//
// `init` receives the native functions (`natives`, see utils.rs), the prelude's `primordials`
// and what it shares with the support module (`pending`, `wellFormed`, `safeString`).

let natives;
let freeze, stringify, ErrorCtor, TypeErrorCtor, PromiseCtor, isArray, objectKeys, numberIsFinite, numberIsInteger;
let pending, wellFormed, safeString;

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
// The default `maxTokens` of a sampling request that names none.
const DEFAULT_MAX_TOKENS = 1024;
const LOGGER_MAX_CHARS = 256;
const FORM_TYPES = ['string', 'number', 'integer', 'boolean', 'array'];

/** Sets the module up for one context; returns what the support module hands on. */
export function init(nativeFunctions, P, shared) {
    natives = nativeFunctions;
    freeze = P[0];
    stringify = P[3];
    ErrorCtor = P[4];
    PromiseCtor = P[5];
    TypeErrorCtor = TypeError;
    isArray = Array.isArray;
    objectKeys = Object.keys;
    numberIsFinite = Number.isFinite;
    numberIsInteger = Number.isInteger;
    pending = shared.pending;
    wellFormed = shared.wellFormed;
    safeString = shared.safeString;
    let mcpObject;
    return {
        mcp() {
            if (mcpObject === undefined) {
                mcpObject = makeMcp();
            }
            return mcpObject;
        },
        blocksOf,
    };
}

function isObject(value) {
    return value !== null && typeof value === 'object' && !isArray(value);
}

/** `value` as JSON text, or a TypeError naming `what`. */
function json(what, value) {
    let text;
    try {
        text = stringify(value);
    } catch (e) {
        throw new TypeErrorCtor(what + ' cannot be turned into JSON: ' + safeString(e && e.message));
    }
    return wellFormed(text === undefined ? 'null' : text);
}

/** A promise of the host's answer to `start(paramsJson)`, rejected as `label: message`. */
function ask(label, start, params) {
    return new PromiseCtor((resolve, reject) => {
        const id = start(json(label + ': the request', params));
        pending[id] = {
            resolve,
            reject(e) {
                reject(new ErrorCtor(label + ': ' + safeString(e && e.message)));
            },
        };
    });
}

/** A rejected promise of a TypeError `message` (a bad request never reaches the host). */
function refused(message) {
    return new PromiseCtor((resolve, reject) => {
        reject(new TypeErrorCtor(message));
    });
}

/** A message's content: a string is one text block; a block or a list of blocks as given. */
function messageContent(content, at) {
    if (typeof content === 'string') {
        return { type: 'text', text: content };
    }
    const blocks = isArray(content) ? content : [content];
    if (blocks.length === 0) {
        throw new TypeErrorCtor('mcp.sample: messages[' + at + '].content is an empty list');
    }
    for (let i = 0; i < blocks.length; i++) {
        if (!isObject(blocks[i]) || typeof blocks[i].type !== 'string') {
            throw new TypeErrorCtor(
                'mcp.sample: messages[' + at + '].content must be a string, a content block ({type: "text", text}) or a list of them',
            );
        }
    }
    return content;
}

/** `sampling/createMessage`'s params from what the tool gave: a prompt, or the params. */
function samplingParams(params) {
    if (typeof params === 'string') {
        return { messages: [{ role: 'user', content: { type: 'text', text: params } }], maxTokens: DEFAULT_MAX_TOKENS };
    }
    if (!isObject(params)) {
        throw new TypeErrorCtor('mcp.sample: give a prompt (a string) or {messages, maxTokens?, systemPrompt?, …}');
    }
    const out = {};
    const keys = objectKeys(params);
    for (let i = 0; i < keys.length; i++) {
        out[keys[i]] = params[keys[i]];
    }
    const messages = params.messages;
    if (!isArray(messages) || messages.length === 0) {
        throw new TypeErrorCtor('mcp.sample: messages must be a non-empty list of {role: "user" | "assistant", content}');
    }
    out.messages = [];
    for (let i = 0; i < messages.length; i++) {
        const message = messages[i];
        if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant')) {
            throw new TypeErrorCtor('mcp.sample: messages[' + i + '] must be {role: "user" | "assistant", content}');
        }
        const copy = {};
        const fields = objectKeys(message);
        for (let j = 0; j < fields.length; j++) {
            copy[fields[j]] = message[fields[j]];
        }
        copy.content = messageContent(message.content, i);
        out.messages.push(copy);
    }
    if (params.maxTokens === undefined) {
        out.maxTokens = DEFAULT_MAX_TOKENS;
    } else if (!numberIsInteger(params.maxTokens) || params.maxTokens < 1) {
        throw new TypeErrorCtor('mcp.sample: maxTokens must be a positive whole number');
    }
    if (params.systemPrompt !== undefined && typeof params.systemPrompt !== 'string') {
        throw new TypeErrorCtor('mcp.sample: systemPrompt must be a string');
    }
    return out;
}

/** Checks a form's `requestedSchema`: a flat object of strings, numbers, booleans and lists of
 * choices, as MCP's form elicitation allows. */
function checkForm(schema) {
    if (!isObject(schema) || schema.type !== 'object' || !isObject(schema.properties)) {
        throw new TypeErrorCtor('mcp.elicit: requestedSchema must be {type: "object", properties: {name: {type: "string"}, …}, required?: [names]}');
    }
    const names = objectKeys(schema.properties);
    for (let i = 0; i < names.length; i++) {
        const property = schema.properties[names[i]];
        const type = isObject(property) ? property.type : undefined;
        if (FORM_TYPES.indexOf(type) < 0) {
            throw new TypeErrorCtor(
                "mcp.elicit: property '" + names[i] + "' must have type string, number, integer, boolean or array (a list of choices): a form is flat, nested objects are not allowed",
            );
        }
    }
    if (schema.required !== undefined && !isArray(schema.required)) {
        throw new TypeErrorCtor('mcp.elicit: requestedSchema.required must be a list of property names');
    }
}

/** `elicitation/create`'s params from what the tool gave, checked. */
function elicitationParams(params) {
    if (!isObject(params)) {
        throw new TypeErrorCtor('mcp.elicit: give {message, requestedSchema} (a form) or {mode: "url", message, url}');
    }
    if (typeof params.message !== 'string' || params.message.length === 0) {
        throw new TypeErrorCtor('mcp.elicit: message must be a non-empty string: what the user is asked');
    }
    const mode = params.mode === undefined ? 'form' : params.mode;
    if (mode === 'url') {
        if (typeof params.url !== 'string' || params.url.length === 0) {
            throw new TypeErrorCtor('mcp.elicit: a URL request needs url, the page the user is sent to');
        }
    } else if (mode === 'form') {
        checkForm(params.requestedSchema);
    } else {
        throw new TypeErrorCtor('mcp.elicit: mode must be "form" (the default) or "url"');
    }
    return params;
}

function makeMcp() {
    let lastProgress;
    const mcp = {
        /** Sends a log message at `level` (debug … emergency) to the client. */
        log(level, data, logger) {
            if (typeof level !== 'string' || LEVELS.indexOf(level) < 0) {
                throw new TypeErrorCtor('mcp.log: the level must be one of ' + LEVELS.join(', ') + ' (got ' + safeString(level) + ')');
            }
            if (logger !== undefined && logger !== null && typeof logger !== 'string') {
                throw new TypeErrorCtor("mcp.log: the logger's name must be a string");
            }
            if (typeof logger === 'string' && logger.length > LOGGER_MAX_CHARS) {
                throw new TypeErrorCtor("mcp.log: the logger's name is longer than " + LOGGER_MAX_CHARS + ' characters');
            }
            const text = json('mcp.log: the data', data === undefined ? null : data);
            return natives.log(level, text, typeof logger === 'string' ? wellFormed(logger) : undefined);
        },

        /** Reports progress to the client (when the call asked for it); `progress` must grow. */
        progress(progress, total, message) {
            if (typeof progress !== 'number' || !numberIsFinite(progress)) {
                throw new TypeErrorCtor('mcp.progress: progress must be a finite number');
            }
            if (total !== undefined && total !== null && (typeof total !== 'number' || !numberIsFinite(total))) {
                throw new TypeErrorCtor('mcp.progress: total must be a finite number when given');
            }
            if (message !== undefined && message !== null && typeof message !== 'string') {
                throw new TypeErrorCtor('mcp.progress: message must be a string when given');
            }
            if (lastProgress !== undefined && !(progress > lastProgress)) {
                throw new TypeErrorCtor(
                    'mcp.progress: progress must increase with each call (it was ' + lastProgress + ', now ' + progress + ')',
                );
            }
            lastProgress = progress;
            return natives.progress(
                progress,
                typeof total === 'number' ? total : undefined,
                typeof message === 'string' ? wellFormed(message) : undefined,
            );
        },

        /** Asks the client's model (needs the `sampling` permission); resolves with its answer
         * `{role, content, model, stopReason}`. */
        sample(params) {
            let request;
            try {
                request = samplingParams(params);
            } catch (e) {
                return refused(e.message);
            }
            return ask('mcp.sample', natives.sample, request);
        },

        /** Asks the user (needs the `elicitation` permission); resolves with `{action: "accept"
         * | "decline" | "cancel", content?}`. */
        elicit(params) {
            let request;
            try {
                request = elicitationParams(params);
            } catch (e) {
                return refused(e.message);
            }
            return ask('mcp.elicit', natives.elicit, request);
        },
    };

    // ---- Content builders (helper B, issue 34): `mcp.text`, `mcp.image`, `mcp.audio`,
    // `mcp.resource`, `mcp.resourceLink`, `mcp.result` are added to `mcp` here, before it is
    // frozen. Keep this section separate from the conversation helpers above.
    addBuilders(mcp);
    // ---- end of the content builders.

    return freeze(mcp);
}

// ---- Content builders (helper B, issue 34) -------------------------------------------------
//
// The rule: a tool's return value is sent as MCP content only when it is a value these
// builders made — the object `mcp.result(...)` returned, one block `mcp.text/image/audio/
// resource/resourceLink(...)` returned, or a list of such blocks — and is returned as the result
// itself. Each made value is remembered here (`made`, out of every script's reach); anything
// else, even an object of exactly the same shape (a fetched JSON document with a `content` list,
// a copy of a made block), is plain JSON as before. Inside `mcp.result({content})` plain block
// objects are fine: asking for a result is explicit. The Rust side checks every block's shape
// again (`toolsmith_core::content`).

const made = [];
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

function remember(value) {
    made.push(value);
    return freeze(value);
}

function isMade(value) {
    return made.indexOf(value) >= 0;
}

/** What the run hook serializes for a returned value: `{content, structuredContent?, isError?,
 * _meta?}` for a made value, `undefined` for anything else (plain JSON). */
function blocksOf(value) {
    if (value === null || typeof value !== 'object' || made.length === 0) {
        return undefined;
    }
    if (isArray(value)) {
        if (value.length === 0) {
            return undefined;
        }
        for (let i = 0; i < value.length; i++) {
            if (!isMade(value[i]) || value[i].type === undefined) {
                return undefined;
            }
        }
        return { content: value };
    }
    if (!isMade(value)) {
        return undefined;
    }
    return value.type === undefined ? value : { content: [value] };
}

/** Copies `annotations` and `_meta` of a builder's `options` onto `block`. */
function withOptions(name, block, options) {
    if (options === undefined || options === null) {
        return block;
    }
    if (!isObject(options)) {
        throw new TypeErrorCtor('mcp.' + name + ': the last argument, when given, is {annotations?, _meta?}');
    }
    if (options.annotations !== undefined) {
        if (!isObject(options.annotations)) {
            throw new TypeErrorCtor('mcp.' + name + ': annotations must be {audience?: ["user" | "assistant"], priority?: 0..1, lastModified?}');
        }
        block.annotations = options.annotations;
    }
    if (options._meta !== undefined) {
        if (!isObject(options._meta)) {
            throw new TypeErrorCtor('mcp.' + name + ': _meta must be an object');
        }
        block._meta = options._meta;
    }
    return block;
}

function needString(name, field, value) {
    if (typeof value !== 'string') {
        throw new TypeErrorCtor('mcp.' + name + ': ' + field + ' must be a string (got ' + (value === null ? 'null' : typeof value) + ')');
    }
    return value;
}

function needBase64(name, field, value) {
    needString(name, field, value);
    if (!B64.test(value)) {
        throw new TypeErrorCtor('mcp.' + name + ': ' + field + ' must be base64 text (encode the bytes first, e.g. with utils.base64Encode)');
    }
    return value;
}

function binaryBlock(type) {
    return function (data, mimeType, options) {
        return remember(
            withOptions(type, { type, data: needBase64(type, 'data', data), mimeType: needString(type, 'mimeType', mimeType) }, options),
        );
    };
}

function copyFields(from, names, to) {
    for (let i = 0; i < names.length; i++) {
        if (from[names[i]] !== undefined) {
            to[names[i]] = from[names[i]];
        }
    }
    return to;
}

function addBuilders(mcp) {
    /** A text block. */
    mcp.text = function (text, options) {
        return remember(withOptions('text', { type: 'text', text: needString('text', 'the text', text) }, options));
    };
    /** An image block: base64 `data` and its `mimeType` (`image/png` …). */
    mcp.image = binaryBlock('image');
    /** An audio block: base64 `data` and its `mimeType` (`audio/wav` …). */
    mcp.audio = binaryBlock('audio');
    /** An embedded resource: `{uri, mimeType?, text}` or `{uri, mimeType?, blob}` (base64). */
    mcp.resource = function (resource, options) {
        if (!isObject(resource)) {
            throw new TypeErrorCtor('mcp.resource: give {uri, mimeType?, text} or {uri, mimeType?, blob (base64)}');
        }
        const inner = { uri: needString('resource', 'uri', resource.uri) };
        if (resource.mimeType !== undefined) {
            inner.mimeType = needString('resource', 'mimeType', resource.mimeType);
        }
        if ((resource.text === undefined) === (resource.blob === undefined)) {
            throw new TypeErrorCtor('mcp.resource: give exactly one of text and blob (base64)');
        }
        if (resource.text !== undefined) {
            inner.text = needString('resource', 'text', resource.text);
        } else {
            inner.blob = needBase64('resource', 'blob', resource.blob);
        }
        if (resource._meta !== undefined) {
            inner._meta = resource._meta;
        }
        return remember(withOptions('resource', { type: 'resource', resource: inner }, options));
    };
    /** A link to a resource: `{uri, name, title?, description?, mimeType?, size?, annotations?, _meta?}`. */
    mcp.resourceLink = function (link) {
        if (!isObject(link)) {
            throw new TypeErrorCtor('mcp.resourceLink: give {uri, name, title?, description?, mimeType?, size?}');
        }
        const block = { type: 'resource_link', uri: needString('resourceLink', 'uri', link.uri), name: needString('resourceLink', 'name', link.name) };
        copyFields(link, ['title', 'description', 'mimeType', 'size', 'icons'], block);
        return remember(withOptions('resourceLink', block, { annotations: link.annotations, _meta: link._meta }));
    };
    /** A whole result: `{content?, structuredContent?, isError?, _meta?}`. `content` is a block,
     * a list of blocks or a string (one text block); without it, the structured content's JSON
     * is the text block (MCP's advice for clients that read only the text). */
    mcp.result = function (result) {
        if (!isObject(result)) {
            throw new TypeErrorCtor('mcp.result: give {content?, structuredContent?, isError?, _meta?}');
        }
        const out = {};
        let content = result.content;
        if (content === undefined) {
            if (result.structuredContent === undefined) {
                throw new TypeErrorCtor('mcp.result: give content (blocks or a string), structuredContent, or both');
            }
            content = [{ type: 'text', text: json('mcp.result: structuredContent', result.structuredContent) }];
        } else if (typeof content === 'string') {
            content = [{ type: 'text', text: content }];
        } else if (!isArray(content)) {
            content = [content];
        }
        for (let i = 0; i < content.length; i++) {
            if (!isObject(content[i]) || typeof content[i].type !== 'string') {
                throw new TypeErrorCtor('mcp.result: content[' + i + '] is not a content block (make one with mcp.text, mcp.image, mcp.audio, mcp.resource or mcp.resourceLink)');
            }
        }
        out.content = content;
        if (result.structuredContent !== undefined) {
            out.structuredContent = result.structuredContent;
        }
        if (result.isError !== undefined) {
            if (typeof result.isError !== 'boolean') {
                throw new TypeErrorCtor('mcp.result: isError must be true or false');
            }
            out.isError = result.isError;
        }
        if (result._meta !== undefined) {
            if (!isObject(result._meta)) {
                throw new TypeErrorCtor('mcp.result: _meta must be an object');
            }
            out._meta = result._meta;
        }
        return remember(out);
    };
}
