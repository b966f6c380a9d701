// The Node-isms a tool or a package may use (module `node.js`), loaded only into a context
// whose tool mentions `process`, `Buffer` or `global`, or that loads an npm package
// (modules.rs): `process` (`env` holds only the names the operator passes, `version` is fixed),
// `Buffer` (on `Uint8Array`: the encodings utf8, hex, base64, base64url, latin1/binary, ascii,
// utf16le) and `global`. What cannot work in QuickJS says so: `process.exit`, `process.binding`.

const NODE_VERSION = 'v22.0.0';

export function init(envJson) {
    const G = globalThis;
    const freeze = Object.freeze;
    const env = Object.assign(Object.create(null), JSON.parse(envJson));
    let buffer;
    const unavailable = (what, instead) => () => {
        throw new Error(`${what} is not available in the sandbox: ${instead}`);
    };
    const process = {
        env,
        version: NODE_VERSION,
        versions: freeze({ node: NODE_VERSION.slice(1) }),
        platform: 'linux',
        arch: 'x64',
        argv: freeze(['node', 'tool.js']),
        execArgv: freeze([]),
        title: 'toolsmith',
        browser: false,
        cwd: () => '/',
        nextTick: (fn, ...args) => {
            Promise.resolve().then(() => fn(...args));
        },
        emitWarning: () => {},
        on: () => process,
        once: () => process,
        off: () => process,
        exit: unavailable('process.exit', 'return a value from the tool instead (or throw an Error to fail)'),
        abort: unavailable('process.abort', 'throw an Error to fail the call'),
        kill: unavailable('process.kill', 'the sandbox runs no processes'),
        binding: unavailable('process.binding', 'the sandbox has none of Node\'s internals'),
        hrtime: unavailable('process.hrtime', 'the sandbox has no high-resolution clock'),
        memoryUsage: unavailable('process.memoryUsage', 'the sandbox does not report it'),
    };
    const define = (name, get) => Object.defineProperty(G, name, { get, configurable: true, enumerable: false });
    define('process', () => process);
    define('Buffer', () => {
        if (buffer === undefined) {
            buffer = makeBuffer();
        }
        return buffer;
    });
    define('global', () => G);
}

function makeBuffer() {
    const HEX = '0123456789abcdef';
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const B64_INDEX = Object.create(null);
    for (let i = 0; i < 64; i++) {
        B64_INDEX[B64[i]] = i;
    }
    B64_INDEX['-'] = 62;
    B64_INDEX['_'] = 63;

    function normalize(encoding) {
        const e = String(encoding === undefined ? 'utf8' : encoding).toLowerCase();
        switch (e) {
            case 'utf8': case 'utf-8': return 'utf8';
            case 'hex': return 'hex';
            case 'base64': return 'base64';
            case 'base64url': return 'base64url';
            case 'latin1': case 'binary': return 'latin1';
            case 'ascii': return 'ascii';
            case 'utf16le': case 'utf-16le': case 'ucs2': case 'ucs-2': return 'utf16le';
            default: throw new TypeError(`Unknown encoding: ${encoding}`);
        }
    }

    function utf8Bytes(text) {
        const out = [];
        for (let i = 0; i < text.length; i++) {
            let c = text.charCodeAt(i);
            if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
                const d = text.charCodeAt(i + 1);
                if (d >= 0xdc00 && d < 0xe000) {
                    c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
                    i++;
                } else {
                    c = 0xfffd;
                }
            } else if (c >= 0xd800 && c < 0xe000) {
                c = 0xfffd;
            }
            if (c < 0x80) {
                out.push(c);
            } else if (c < 0x800) {
                out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
            } else if (c < 0x10000) {
                out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
            } else {
                out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
            }
        }
        return out;
    }

    function utf8Text(bytes, start, end) {
        let out = '';
        let i = start;
        while (i < end) {
            const b = bytes[i];
            let c = 0xfffd;
            let n = 1;
            if (b < 0x80) {
                c = b;
            } else if (b >= 0xc2 && b < 0xe0 && i + 1 < end && (bytes[i + 1] & 0xc0) === 0x80) {
                c = ((b & 31) << 6) | (bytes[i + 1] & 63);
                n = 2;
            } else if (b >= 0xe0 && b < 0xf0 && i + 2 < end && (bytes[i + 1] & 0xc0) === 0x80 && (bytes[i + 2] & 0xc0) === 0x80) {
                c = ((b & 15) << 12) | ((bytes[i + 1] & 63) << 6) | (bytes[i + 2] & 63);
                n = c < 0x800 || (c >= 0xd800 && c < 0xe000) ? 1 : 3;
                if (n === 1) c = 0xfffd;
            } else if (b >= 0xf0 && b < 0xf5 && i + 3 < end && (bytes[i + 1] & 0xc0) === 0x80 && (bytes[i + 2] & 0xc0) === 0x80 && (bytes[i + 3] & 0xc0) === 0x80) {
                c = ((b & 7) << 18) | ((bytes[i + 1] & 63) << 12) | ((bytes[i + 2] & 63) << 6) | (bytes[i + 3] & 63);
                n = c < 0x10000 || c > 0x10ffff ? 1 : 4;
                if (n === 1) c = 0xfffd;
            }
            out += String.fromCodePoint(c);
            i += n;
        }
        return out;
    }

    function bytesOf(text, encoding) {
        switch (normalize(encoding)) {
            case 'utf8': return utf8Bytes(text);
            case 'hex': {
                const out = [];
                for (let i = 0; i + 1 < text.length; i += 2) {
                    const byte = parseInt(text.substr(i, 2), 16);
                    if (Number.isNaN(byte)) break;
                    out.push(byte);
                }
                return out;
            }
            case 'base64': case 'base64url': {
                const out = [];
                let bits = 0;
                let value = 0;
                for (let i = 0; i < text.length; i++) {
                    const v = B64_INDEX[text[i]];
                    if (v === undefined) continue;
                    value = (value << 6) | v;
                    bits += 6;
                    if (bits >= 8) {
                        bits -= 8;
                        out.push((value >> bits) & 255);
                    }
                }
                return out;
            }
            case 'latin1': case 'ascii': {
                const out = new Array(text.length);
                for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 255;
                return out;
            }
            default: {
                const out = [];
                for (let i = 0; i < text.length; i++) {
                    const c = text.charCodeAt(i);
                    out.push(c & 255, c >> 8);
                }
                return out;
            }
        }
    }

    function textOf(bytes, encoding, start, end) {
        switch (normalize(encoding)) {
            case 'utf8': return utf8Text(bytes, start, end);
            case 'hex': {
                let out = '';
                for (let i = start; i < end; i++) out += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
                return out;
            }
            case 'base64': case 'base64url': {
                const url = normalize(encoding) === 'base64url';
                let out = '';
                let i = start;
                for (; i + 2 < end; i += 3) {
                    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
                    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
                }
                if (end - i === 1) {
                    const n = bytes[i] << 16;
                    out += B64[n >> 18] + B64[(n >> 12) & 63] + (url ? '' : '==');
                } else if (end - i === 2) {
                    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
                    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + (url ? '' : '=');
                }
                return url ? out.replace(/\+/g, '-').replace(/\//g, '_') : out;
            }
            case 'latin1': {
                let out = '';
                for (let i = start; i < end; i++) out += String.fromCharCode(bytes[i]);
                return out;
            }
            case 'ascii': {
                let out = '';
                for (let i = start; i < end; i++) out += String.fromCharCode(bytes[i] & 127);
                return out;
            }
            default: {
                let out = '';
                for (let i = start; i + 1 < end; i += 2) out += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8));
                return out;
            }
        }
    }

    class Buffer extends Uint8Array {
        static from(value, encodingOrOffset, length) {
            if (typeof value === 'string') {
                return Buffer.fromArray(bytesOf(value, encodingOrOffset));
            }
            if (value instanceof ArrayBuffer) {
                const offset = encodingOrOffset === undefined ? 0 : encodingOrOffset;
                const len = length === undefined ? value.byteLength - offset : length;
                return new Buffer(value, offset, len);
            }
            if (value && typeof value === 'object' && value.type === 'Buffer' && Array.isArray(value.data)) {
                return Buffer.fromArray(value.data);
            }
            if (value && typeof value.length === 'number') {
                return Buffer.fromArray(value);
            }
            throw new TypeError('The first argument must be a string, Buffer, ArrayBuffer, Array, or array-like object.');
        }
        static fromArray(array) {
            const buf = new Buffer(array.length);
            for (let i = 0; i < array.length; i++) buf[i] = array[i];
            return buf;
        }
        static alloc(size, fill, encoding) {
            const buf = new Buffer(size);
            if (fill !== undefined) buf.fill(fill, 0, size, encoding);
            return buf;
        }
        static allocUnsafe(size) { return new Buffer(size); }
        static allocUnsafeSlow(size) { return new Buffer(size); }
        static isBuffer(value) { return value instanceof Buffer; }
        static isEncoding(encoding) {
            try { normalize(encoding); return true; } catch (e) { return false; }
        }
        static byteLength(value, encoding) {
            if (typeof value !== 'string') return value.byteLength;
            return bytesOf(value, encoding).length;
        }
        static concat(list, total) {
            const length = total === undefined ? list.reduce((n, b) => n + b.length, 0) : total;
            const out = new Buffer(length);
            let at = 0;
            for (const b of list) {
                if (at >= length) break;
                const part = b.length > length - at ? b.subarray(0, length - at) : b;
                out.set(part, at);
                at += part.length;
            }
            return out;
        }
        static compare(a, b) { return a.compare(b); }

        toString(encoding, start, end) {
            const s = start === undefined ? 0 : Math.max(0, start | 0);
            const e = end === undefined ? this.length : Math.min(this.length, end | 0);
            return e <= s ? '' : textOf(this, encoding, s, e);
        }
        toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
        slice(start, end) { return this.subarray(start, end); }
        equals(other) { return this.compare(other) === 0; }
        compare(other) {
            const n = Math.min(this.length, other.length);
            for (let i = 0; i < n; i++) {
                if (this[i] !== other[i]) return this[i] < other[i] ? -1 : 1;
            }
            return this.length === other.length ? 0 : this.length < other.length ? -1 : 1;
        }
        copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
            const end = Math.min(sourceEnd, this.length, sourceStart + target.length - targetStart);
            if (end <= sourceStart) return 0;
            target.set(this.subarray(sourceStart, end), targetStart);
            return end - sourceStart;
        }
        write(text, offset = 0, length, encoding) {
            if (typeof offset === 'string') { encoding = offset; offset = 0; }
            if (typeof length === 'string') { encoding = length; length = undefined; }
            const bytes = bytesOf(String(text), encoding);
            const n = Math.min(bytes.length, this.length - offset, length === undefined ? Infinity : length);
            for (let i = 0; i < n; i++) this[offset + i] = bytes[i];
            return n;
        }
        fill(value, start = 0, end = this.length, encoding) {
            if (typeof start === 'string') { encoding = start; start = 0; end = this.length; }
            if (typeof value === 'string') {
                const bytes = bytesOf(value, encoding);
                if (bytes.length === 0) return super.fill(0, start, end);
                for (let i = start; i < end; i++) this[i] = bytes[(i - start) % bytes.length];
                return this;
            }
            return super.fill(value, start, end);
        }
        indexOf(value, from = 0, encoding) {
            if (typeof value === 'number') return super.indexOf(value & 255, from);
            const needle = typeof value === 'string' ? bytesOf(value, encoding) : value;
            if (needle.length === 0) return from <= this.length ? from : this.length;
            outer: for (let i = Math.max(0, from); i + needle.length <= this.length; i++) {
                for (let j = 0; j < needle.length; j++) {
                    if (this[i + j] !== needle[j]) continue outer;
                }
                return i;
            }
            return -1;
        }
        includes(value, from, encoding) { return this.indexOf(value, from, encoding) !== -1; }
        readUInt8(offset = 0) { return this[offset]; }
        readUInt16LE(offset = 0) { return this[offset] | (this[offset + 1] << 8); }
        readUInt16BE(offset = 0) { return (this[offset] << 8) | this[offset + 1]; }
        readUInt32LE(offset = 0) { return (this[offset] | (this[offset + 1] << 8) | (this[offset + 2] << 16)) + this[offset + 3] * 0x1000000; }
        readUInt32BE(offset = 0) { return this[offset] * 0x1000000 + ((this[offset + 1] << 16) | (this[offset + 2] << 8) | this[offset + 3]); }
    }
    Buffer.poolSize = 8192;
    return Buffer;
}
