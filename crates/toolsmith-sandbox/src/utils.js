// The `utils` helpers (module `utils.js`). Loaded into a sandbox context by the support module
// (`support.js`) only when its tool first touches `utils`; compiled to bytecode once per
// process. (`fetch`, `fs` and `shell` are in `io.js`.)
//
// `init` receives the native functions (`natives`, see utils.rs), the prelude's `primordials`:
// `Object.freeze`, `Object.defineProperty`, `JSON.parse`, `JSON.stringify`, `Error` and `Promise`
// as they were before any tool code ran, so a tool that overwrites them cannot change how `utils`
// is frozen, how `callTool` passes values, or how errors are made; and what it shares with the
// support module (`pending`, `wellFormed`, `safeString`). The other built-ins are captured when
// this module loads: a tool that rewrites, say, `Math.random` before first touching `utils`
// changes what `utils.shuffle` does in its own call, and nothing else (every call has a fresh
// context). The `utils` object is frozen, and so is every function in it.

let natives;
let freeze, defineProperty, objectKeys, hasOwn, isArray, parse, stringify;
let PromiseCtor, ErrorCtor, DateCtor, dateNow, dateUTC, SetCtor, StringCtor, NumberCtor;
let numberIsFinite, numberIsInteger, numberIsNaN;
let mathRandom, mathFloor, mathCeil, mathRound, mathTrunc, mathMin, mathMax;
let encodeURIComponentFn, decodeURIComponentFn;
let UNIT_MS, MONTHS;
let pending, wellFormed, safeString;

/** Sets the module up for one context; returns what the support module hands on. */
export function init(nativeFunctions, P, shared) {
    natives = nativeFunctions;
    freeze = P[0];
    defineProperty = P[1];
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
    DateCtor = Date;
    dateNow = Date.now;
    dateUTC = Date.UTC;
    SetCtor = Set;
    StringCtor = String;
    NumberCtor = Number;
    numberIsFinite = Number.isFinite;
    numberIsInteger = Number.isInteger;
    numberIsNaN = Number.isNaN;
    mathRandom = Math.random;
    mathFloor = Math.floor;
    mathCeil = Math.ceil;
    mathRound = Math.round;
    mathTrunc = Math.trunc;
    mathMin = Math.min;
    mathMax = Math.max;
    encodeURIComponentFn = encodeURIComponent;
    decodeURIComponentFn = decodeURIComponent;
    UNIT_MS = {
        __proto__: null,
        millisecond: 1,
        second: 1000,
        minute: 60 * 1000,
        hour: 60 * 60 * 1000,
        day: 24 * 60 * 60 * 1000,
        week: 7 * 24 * 60 * 60 * 1000,
    };
    MONTHS = {
        __proto__: null,
        en: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
        de: ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'],
        fr: ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'],
        es: ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'],
        it: ['gennaio', 'febbraio', 'marzo', 'aprile', 'maggio', 'giugno', 'luglio', 'agosto', 'settembre', 'ottobre', 'novembre', 'dicembre'],
        pt: ['janeiro', 'fevereiro', 'março', 'abril', 'maio', 'junho', 'julho', 'agosto', 'setembro', 'outubro', 'novembro', 'dezembro'],
        nl: ['januari', 'februari', 'maart', 'april', 'mei', 'juni', 'juli', 'augustus', 'september', 'oktober', 'november', 'december'],
    };
    return { makeUtils };
}

/** `obj[key] = value` without `__proto__` or setter surprises. */
function put(obj, key, value) {
    defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function fail(helper, message) {
    throw new ErrorCtor('utils.' + helper + ': ' + message);
}

function expectArray(helper, value) {
    if (!isArray(value)) {
        fail(helper, 'expected an array');
    }
    return value;
}

function toDate(helper, input) {
    let date;
    if (input === undefined || input === 'now') {
        date = new DateCtor();
    } else if (input instanceof DateCtor) {
        date = new DateCtor(input.getTime());
    } else if (typeof input === 'number') {
        date = new DateCtor(input);
    } else {
        date = new DateCtor(StringCtor(input));
    }
    if (numberIsNaN(date.getTime())) {
        fail(helper, "invalid date '" + safeString(input) + "'");
    }
    return date;
}

function unitName(unit) {
    const name = StringCtor(unit).toLowerCase();
    return name.endsWith('s') ? name.slice(0, -1) : name;
}

function daysInMonth(year, month) {
    return new DateCtor(dateUTC(year, month + 1, 0)).getUTCDate();
}

function addMonths(date, months) {
    const day = date.getUTCDate();
    date.setUTCDate(1);
    date.setUTCMonth(date.getUTCMonth() + months);
    date.setUTCDate(mathMin(day, daysInMonth(date.getUTCFullYear(), date.getUTCMonth())));
    return date;
}

function formatDate(date, locale) {
    const d = toDate('formatDate', date);
    const tag = StringCtor(locale === undefined ? 'en-US' : locale);
    const lang = tag.toLowerCase().split(/[-_]/)[0];
    const day = d.getUTCDate();
    const year = d.getUTCFullYear();
    const months = MONTHS[lang] || MONTHS.en;
    const month = months[d.getUTCMonth()];
    switch (lang) {
        case 'de':
            return day + '. ' + month + ' ' + year;
        case 'es':
        case 'pt':
            return day + ' de ' + month + ' de ' + year;
        case 'fr':
        case 'it':
        case 'nl':
            return day + ' ' + month + ' ' + year;
        case 'en':
            if (tag.toLowerCase() !== 'en' && tag.toLowerCase() !== 'en-us') {
                return day + ' ' + month + ' ' + year;
            }
            return month + ' ' + day + ', ' + year;
        default:
            return MONTHS.en[d.getUTCMonth()] + ' ' + day + ', ' + year;
    }
}

function words(text) {
    return StringCtor(text)
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
        .split(/[^\p{L}\p{N}]+/u)
        .filter((w) => w.length > 0);
}

function removeDiacritics(text) {
    return StringCtor(text).normalize('NFD').replace(/\p{M}/gu, '');
}

function roundTo(value, decimals) {
    const v = NumberCtor(value);
    const d = decimals === undefined ? 0 : mathTrunc(NumberCtor(decimals));
    if (!numberIsFinite(v) || !numberIsFinite(d)) {
        return v;
    }
    const shift = (n, by) => {
        const parts = StringCtor(n).split('e');
        return NumberCtor(parts[0] + 'e' + (NumberCtor(parts[1] || 0) + by));
    };
    return shift(mathRound(shift(v, d)), -d);
}

function parseCsvRows(text, delimiter) {
    const rows = [];
    let row = [];
    let field = '';
    let quoted = false;
    let i = 0;
    const n = text.length;
    while (i < n) {
        const c = text[i];
        if (quoted) {
            if (c === '"') {
                if (text[i + 1] === '"') {
                    field += '"';
                    i += 2;
                } else {
                    quoted = false;
                    i += 1;
                }
            } else {
                field += c;
                i += 1;
            }
        } else if (c === '"' && field === '') {
            quoted = true;
            i += 1;
        } else if (text.startsWith(delimiter, i)) {
            row.push(field);
            field = '';
            i += delimiter.length;
        } else if (c === '\r' || c === '\n') {
            row.push(field);
            rows.push(row);
            row = [];
            field = '';
            i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
        } else {
            field += c;
            i += 1;
        }
    }
    if (field !== '' || row.length > 0) {
        row.push(field);
        rows.push(row);
    }
    return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

function parseCsv(csv, delimiter) {
    const sep = delimiter === undefined ? ',' : StringCtor(delimiter);
    if (sep === '' || sep.includes('"') || sep.includes('\n') || sep.includes('\r')) {
        fail('parseCsv', 'the delimiter must be a non-empty string without quotes or line breaks');
    }
    const rows = parseCsvRows(StringCtor(csv), sep);
    if (rows.length === 0) {
        return [];
    }
    const header = rows[0].map((h) => h.trim());
    const out = [];
    for (let r = 1; r < rows.length; r++) {
        const obj = {};
        for (let c = 0; c < header.length; c++) {
            const cell = rows[r][c];
            put(obj, header[c], cell === undefined ? '' : cell);
        }
        out.push(obj);
    }
    return out;
}

function flatten(obj, prefix) {
    const out = {};
    const seen = new SetCtor();
    const walk = (value, path) => {
        if (value !== null && typeof value === 'object' && !(value instanceof DateCtor)) {
            if (seen.has(value)) {
                fail('flatten', 'the object contains a circular reference');
            }
            seen.add(value);
            const keys = objectKeys(value);
            if (keys.length === 0 && path) {
                put(out, path, isArray(value) ? [] : {});
            }
            for (let i = 0; i < keys.length; i++) {
                walk(value[keys[i]], path ? path + '.' + keys[i] : keys[i]);
            }
            seen.delete(value);
        } else if (path) {
            put(out, path, value);
        }
    };
    walk(obj, prefix === undefined || prefix === null ? '' : StringCtor(prefix));
    return out;
}

/**
 * The value at `path` in `obj`, in the one JSON-path grammar of `format_json` and HTTP-tool
 * mappings (`toolsmith_httptool::path`, read by the host): dotted keys with `[n]` indexes, or a
 * JSON Pointer. The host parses the path into steps, each the member of an object it names
 * (or null) and the element of an array it names (or null); the walk here reads own properties
 * only, and hands back the script's own value, not a copy.
 */
function getPath(obj, path) {
    const steps = parse(natives.pathSteps(wellFormed(StringCtor(path))));
    let current = obj;
    for (let i = 0; i < steps.length; i++) {
        const member = steps[i][0];
        const element = steps[i][1];
        if (isArray(current)) {
            if (element === null || element >= current.length) {
                return undefined;
            }
            current = current[element];
        } else if (current !== null && typeof current === 'object' && member !== null && hasOwn(current, member)) {
            current = current[member];
        } else {
            return undefined;
        }
    }
    return current;
}

function shuffled(arr) {
    const copy = arr.slice();
    for (let i = copy.length - 1; i > 0; i--) {
        const j = mathFloor(mathRandom() * (i + 1));
        const t = copy[i];
        copy[i] = copy[j];
        copy[j] = t;
    }
    return copy;
}

/** A deep copy of a JSON value (`undefined` stays `undefined`). */
function copy(value) {
    return value === undefined ? undefined : parse(stringify(value));
}

function isPlainObject(value) {
    return value !== null && typeof value === 'object' && !isArray(value);
}

/** The Config Center snapshot of one job, parsed on first use. */
function configSnapshot(configJson) {
    let snapshot;
    const load = () => {
        if (snapshot === undefined) {
            const parsed = typeof configJson === 'string' ? parse(configJson) : null;
            snapshot = isPlainObject(parsed) ? parsed : {};
        }
        return snapshot;
    };
    return {
        service(name) {
            const all = load();
            const key = StringCtor(name);
            return hasOwn(all, key) && isPlainObject(all[key]) ? all[key] : undefined;
        },
    };
}

function entriesOf(svc) {
    if (svc === undefined || !isArray(svc.entries)) {
        return [];
    }
    return svc.entries.filter(isPlainObject);
}

/** The entry labelled `label`, or without a label the default entry (else the first). */
function pickEntry(svc, label) {
    const entries = entriesOf(svc);
    if (label === undefined || label === null) {
        for (let i = 0; i < entries.length; i++) {
            if (entries[i].isDefault === true) {
                return entries[i];
            }
        }
        return entries[0];
    }
    const wanted = StringCtor(label);
    for (let i = 0; i < entries.length; i++) {
        if (entries[i].label === wanted) {
            return entries[i];
        }
    }
    return undefined;
}

function fieldOf(entry, field) {
    const values = entry.values;
    return isPlainObject(values) && hasOwn(values, field) ? values[field] : undefined;
}

/** The `utils` object of one context. */
function makeUtils(configJson) {
    const host = natives;
    const config = configSnapshot(configJson);
    const utils = {
        // Config Center: read from the job's snapshot; every value is a fresh copy.
        getApiKey(serviceName) {
            const entry = pickEntry(config.service(serviceName), undefined);
            const key = entry === undefined ? undefined : fieldOf(entry, 'api_key');
            if (key === undefined || key === null) {
                return undefined;
            }
            return typeof key === 'string' ? key : StringCtor(key);
        },
        getServiceConfig(serviceName) {
            const svc = config.service(serviceName);
            if (svc === undefined) {
                return null;
            }
            const out = isPlainObject(svc.service) ? copy(svc.service) : {};
            out.entries = copy(entriesOf(svc));
            return out;
        },
        getConfigEntry(serviceName, entryLabel) {
            const entry = pickEntry(config.service(serviceName), entryLabel);
            return entry === undefined ? null : copy(entry);
        },
        getConfigEntries(serviceName) {
            return copy(entriesOf(config.service(serviceName)));
        },
        getFieldValue(serviceName, fieldName, entryLabel) {
            const entry = pickEntry(config.service(serviceName), entryLabel);
            return entry === undefined ? undefined : copy(fieldOf(entry, StringCtor(fieldName)));
        },

        // Tool interoperability.
        callTool(name, args) {
            const toolName = StringCtor(name);
            const input = args === undefined ? {} : args;
            if (input === null || typeof input !== 'object' || isArray(input)) {
                return new PromiseCtor((resolve, reject) => {
                    reject(new ErrorCtor('utils.callTool: the arguments must be an object'));
                });
            }
            const json = stringify(input);
            return new PromiseCtor((resolve, reject) => {
                const id = host.callTool(toolName, wellFormed(json));
                pending[id] = { resolve, reject };
            });
        },
        listTools() {
            return parse(host.listTools());
        },

        // Hashing and cryptography.
        hash(text, algorithm) {
            return host.hash(wellFormed(StringCtor(text)), algorithm === undefined ? 'sha256' : StringCtor(algorithm));
        },
        uuid() {
            return host.uuid();
        },
        generatePassword(length) {
            return host.password(length === undefined ? 16 : NumberCtor(length));
        },

        // Encoding and decoding.
        base64Encode(text) {
            return host.base64Encode(wellFormed(StringCtor(text)));
        },
        base64Decode(text) {
            return host.base64Decode(wellFormed(StringCtor(text)));
        },
        urlEncode(text) {
            return encodeURIComponentFn(StringCtor(text));
        },
        urlDecode(text) {
            return decodeURIComponentFn(StringCtor(text));
        },
        hexEncode(text) {
            return host.hexEncode(wellFormed(StringCtor(text)));
        },
        hexDecode(hex) {
            return host.hexDecode(wellFormed(StringCtor(hex)));
        },

        // Date and time.
        now() {
            return new DateCtor().toISOString();
        },
        timestamp() {
            return dateNow();
        },
        dateDiff(date1, date2, unit) {
            const from = toDate('dateDiff', date1);
            const to = toDate('dateDiff', date2);
            const name = unit === undefined ? 'day' : unitName(unit);
            const ms = UNIT_MS[name];
            if (ms === undefined) {
                fail('dateDiff', "unknown unit '" + safeString(unit) + "' (use seconds, minutes, hours, days or weeks)");
            }
            return mathTrunc((to.getTime() - from.getTime()) / ms) + 0;
        },
        dateAdd(date, amount, unit) {
            const d = toDate('dateAdd', date);
            const n = NumberCtor(amount);
            if (!numberIsFinite(n)) {
                fail('dateAdd', 'the amount must be a finite number');
            }
            const name = unit === undefined ? 'day' : unitName(unit);
            if (name === 'month' || name === 'year') {
                addMonths(d, mathTrunc(name === 'year' ? n * 12 : n));
            } else {
                const ms = UNIT_MS[name];
                if (ms === undefined) {
                    fail('dateAdd', "unknown unit '" + safeString(unit) + "' (use seconds, minutes, hours, days, weeks, months or years)");
                }
                d.setTime(d.getTime() + n * ms);
            }
            if (numberIsNaN(d.getTime())) {
                fail('dateAdd', 'the resulting date is out of range');
            }
            return d.toISOString();
        },
        formatDate(date, locale) {
            return formatDate(date, locale);
        },

        // Text transforms.
        slugify(text) {
            return removeDiacritics(text)
                .toLowerCase()
                .replace(/[^a-z0-9]+/g, '-')
                .replace(/^-+|-+$/g, '');
        },
        camelCase(text) {
            return words(text)
                .map((w, i) => {
                    const lower = w.toLowerCase();
                    return i === 0 ? lower : lower.charAt(0).toUpperCase() + lower.slice(1);
                })
                .join('');
        },
        snakeCase(text) {
            return words(text).map((w) => w.toLowerCase()).join('_');
        },
        kebabCase(text) {
            return words(text).map((w) => w.toLowerCase()).join('-');
        },
        titleCase(text) {
            return StringCtor(text)
                .toLowerCase()
                .replace(/(^|[\s\-_])(\p{L})/gu, (m, sep, c) => sep + c.toUpperCase());
        },
        truncate(text, maxLength, suffix) {
            const s = StringCtor(text);
            const max = maxLength === undefined ? 100 : mathMax(0, mathTrunc(NumberCtor(maxLength)));
            const tail = suffix === undefined ? '...' : StringCtor(suffix);
            if (s.length <= max) {
                return s;
            }
            if (tail.length >= max) {
                return tail.slice(0, max);
            }
            return s.slice(0, max - tail.length) + tail;
        },
        countWords(text) {
            return StringCtor(text).split(/\s+/).filter((w) => w.length > 0).length;
        },
        removeDiacritics(text) {
            return removeDiacritics(text);
        },

        // Validation.
        isEmail(value) {
            return typeof value === 'string' && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
        },
        isUrl(value) {
            return typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^\s/?#]+[^\s]*$/i.test(value);
        },
        isJson(value) {
            if (typeof value !== 'string') {
                return false;
            }
            try {
                parse(value);
                return true;
            } catch (_) {
                return false;
            }
        },
        isUuid(value) {
            return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
        },

        // Math.
        clamp(value, min, max) {
            return mathMin(mathMax(NumberCtor(value), NumberCtor(min)), NumberCtor(max));
        },
        round(value, decimals) {
            return roundTo(value, decimals);
        },
        randomInt(min, max) {
            const lo = mathCeil(min === undefined ? 0 : NumberCtor(min));
            const hi = mathFloor(max === undefined ? 100 : NumberCtor(max));
            if (!numberIsFinite(lo) || !numberIsFinite(hi) || hi < lo) {
                fail('randomInt', 'expected finite bounds with min <= max');
            }
            return lo + mathFloor(mathRandom() * (hi - lo + 1));
        },
        sum(numbers) {
            const arr = expectArray('sum', numbers);
            let total = 0;
            for (let i = 0; i < arr.length; i++) {
                total += NumberCtor(arr[i]);
            }
            return total;
        },
        avg(numbers) {
            const arr = expectArray('avg', numbers);
            if (arr.length === 0) {
                return 0;
            }
            let total = 0;
            for (let i = 0; i < arr.length; i++) {
                total += NumberCtor(arr[i]);
            }
            return total / arr.length;
        },

        // Data processing.
        parseJson(text) {
            return parse(StringCtor(text));
        },
        toJson(data, indent) {
            return stringify(data, null, indent === undefined ? 2 : indent);
        },
        parseCsv(csv, delimiter) {
            return parseCsv(csv, delimiter);
        },
        flatten(obj, prefix) {
            return flatten(obj, prefix);
        },
        getPath(obj, path) {
            return getPath(obj, path);
        },

        // Arrays.
        unique(arr) {
            return [...new SetCtor(expectArray('unique', arr))];
        },
        chunk(arr, size) {
            const items = expectArray('chunk', arr);
            const n = NumberCtor(size);
            if (!numberIsInteger(n) || n < 1) {
                fail('chunk', 'the size must be a positive integer');
            }
            const out = [];
            for (let i = 0; i < items.length; i += n) {
                out.push(items.slice(i, i + n));
            }
            return out;
        },
        shuffle(arr) {
            return shuffled(expectArray('shuffle', arr));
        },
        sample(arr, n) {
            const items = expectArray('sample', arr);
            const count = n === undefined ? 1 : mathMax(0, mathTrunc(NumberCtor(n)));
            return shuffled(items).slice(0, count);
        },
        groupBy(arr, key) {
            const items = expectArray('groupBy', arr);
            const pick = typeof key === 'function' ? key : (item) => (item === null || item === undefined ? undefined : item[key]);
            const groups = {};
            for (let i = 0; i < items.length; i++) {
                const group = StringCtor(pick(items[i]));
                if (hasOwn(groups, group)) {
                    groups[group].push(items[i]);
                } else {
                    put(groups, group, [items[i]]);
                }
            }
            return groups;
        },
    };
    const names = objectKeys(utils);
    for (let i = 0; i < names.length; i++) {
        freeze(utils[names[i]]);
    }
    return freeze(utils);
}
