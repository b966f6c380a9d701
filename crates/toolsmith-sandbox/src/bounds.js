// The rare paths of the string guards (module `bounds.js`): a search for a long string in a
// long string, and Unicode normalization or comparison of strings with lone surrogates. The
// guards themselves, and the checks every call makes, are native functions (guards/strings.rs);
// this module is loaded into a context only the first time one of these paths is taken, so an
// execution that never takes one does not pay for reading it (compiled to bytecode once per
// process).
//
// By the time it loads, tool code has run and may have rewritten any built-in. So it uses only
// what `init` receives, captured by the guards before any tool code ran (`kit`, by position),
// and calls methods only through the captured `Reflect.apply`: no `.call`, no destructuring (an
// iterator), no method looked up on a prototype a tool could have changed.

let apply, slice, codePointAt, split, join, isWellFormed, RegExpCtor, escape;
let nativeNormalize, nativeFind, nativeRfind, nativeFindAll;
let originalLastIndexOf, originalSplit, originalReplace, originalReplaceAll;

// Lone surrogates are starters that never compose: the well-formed runs between them
// normalize independently.
const LONE = /([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/;

/** Sets the module up for one context; returns the rare paths the string guards take. */
export function init(natives, kit) {
    apply = kit[0];
    slice = kit[1];
    codePointAt = kit[2];
    split = kit[3];
    join = kit[4];
    isWellFormed = kit[5];
    RegExpCtor = kit[6];
    escape = kit[7];
    originalLastIndexOf = kit[8];
    originalSplit = kit[9];
    originalReplace = kit[10];
    originalReplaceAll = kit[11];
    nativeNormalize = natives.normalize;
    nativeFind = natives.find;
    nativeRfind = natives.rfind;
    nativeFindAll = natives.findAll;
    return { normalize, localeCompare, indexOf, lastIndexOf, splitLong, replaceLong };
}

const wellFormed = (text) => apply(isWellFormed, text, []);
const hostable = (text, pattern) => wellFormed(text) && wellFormed(pattern);
const literal = (pattern, flags) => new RegExpCtor(escape(pattern), flags);
const position = (value, fallback) => {
    const n = +value;
    return n !== n ? fallback : n;
};

/** `text.normalize(form)` for a string with lone surrogates. */
function normalize(text, form, maxStringBytes) {
    if (wellFormed(text)) {
        return nativeNormalize(text, form, maxStringBytes);
    }
    const parts = apply(split, text, [LONE]);
    for (let i = 0; i < parts.length; i += 2) {
        parts[i] = nativeNormalize(parts[i], form, maxStringBytes);
    }
    return apply(join, parts, ['']);
}

/** `a.localeCompare(b)` when either has lone surrogates: code points after NFC. */
function localeCompare(a, b, maxStringBytes) {
    const x = normalize(a, 'NFC', maxStringBytes);
    const y = normalize(b, 'NFC', maxStringBytes);
    let i = 0;
    let j = 0;
    while (i < x.length && j < y.length) {
        const c = apply(codePointAt, x, [i]);
        const d = apply(codePointAt, y, [j]);
        if (c !== d) {
            return c < d ? -1 : 1;
        }
        i += c > 0xffff ? 2 : 1;
        j += d > 0xffff ? 2 : 1;
    }
    return i < x.length ? 1 : j < y.length ? -1 : 0;
}

/** `text.indexOf(pattern, from)` for a long pattern: the host's linear search. */
function indexOf(text, pattern, from) {
    const start = position(from, 0);
    if (hostable(text, pattern)) {
        return nativeFind(text, pattern, start);
    }
    // Lone surrogates, which the host cannot take: an escaped RegExp.
    const re = literal(pattern, 'g');
    re.lastIndex = start < 0 ? 0 : start > text.length ? text.length : start;
    const found = re.exec(text);
    return found === null ? -1 : found.index;
}

function lastIndexOf(text, pattern, from) {
    if (!hostable(text, pattern)) {
        return apply(originalLastIndexOf, text, [pattern, from]);
    }
    return nativeRfind(text, pattern, position(from, Infinity));
}

function splitLong(text, separator, limit) {
    if (!hostable(text, separator)) {
        return apply(originalSplit, text, [literal(separator, ''), limit]);
    }
    const max = limit === undefined ? 4294967295 : limit >>> 0;
    const parts = [];
    if (max === 0) {
        return parts;
    }
    const found = nativeFindAll(text, separator);
    let last = 0;
    for (let i = 0; i < found.length && parts.length < max; i++) {
        parts[parts.length] = apply(slice, text, [last, found[i]]);
        last = found[i] + separator.length;
    }
    if (parts.length < max) {
        parts[parts.length] = apply(slice, text, [last]);
    }
    return parts;
}

// GetSubstitution for a match of a plain string (no captures, no named groups).
function substitute(matched, text, at, replacement) {
    let out = '';
    for (let i = 0; i < replacement.length; i++) {
        const c = replacement[i];
        const next = replacement[i + 1];
        if (c !== '$' || next === undefined) {
            out += c;
        } else if (next === '$') {
            out += '$';
            i++;
        } else if (next === '&') {
            out += matched;
            i++;
        } else if (next === '`') {
            out += apply(slice, text, [0, at]);
            i++;
        } else if (next === "'") {
            out += apply(slice, text, [at + matched.length]);
            i++;
        } else {
            out += c;
        }
    }
    return out;
}

/** `replace` (`all` false) or `replaceAll` of a long plain-string pattern. */
function replaceLong(all, text, pattern, replacement) {
    if (!hostable(text, pattern)) {
        const original = all ? originalReplaceAll : originalReplace;
        return apply(original, text, [literal(pattern, all ? 'g' : ''), replacement]);
    }
    let positions;
    if (all) {
        positions = nativeFindAll(text, pattern);
    } else {
        const at = nativeFind(text, pattern, 0);
        positions = at === -1 ? [] : [at];
    }
    const fn = typeof replacement === 'function' ? replacement : undefined;
    const rep = fn === undefined ? `${replacement}` : '';
    let out = '';
    let last = 0;
    for (let i = 0; i < positions.length; i++) {
        const at = positions[i];
        out += apply(slice, text, [last, at]);
        out += fn === undefined ? substitute(pattern, text, at, rep) : `${fn(pattern, at, text)}`;
        last = at + pattern.length;
    }
    return out + apply(slice, text, [last]);
}
