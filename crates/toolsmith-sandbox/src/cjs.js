// CommonJS inside the sandbox (module `toolsmith:cjs`): loaded once per execution, the first
// time a package's CommonJS file is imported or required (modules.rs).
//
// The module loader (Rust) resolves and compiles; this module keeps, per execution, each
// CommonJS module's `module` object, so a file runs once and cycles see partial exports as in
// Node. `import.meta.native` is set by the loader before this module runs and holds:
// `wrapper(name)` → the file's code as `function (exports, require, module, __filename,
// __dirname)`; `resolve(base, specifier)` → `[name, format]` (throws an Error naming what is
// missing, e.g. a Node built-in); `json(name)` → the parsed JSON file.

const native = import.meta.native;
const modules = Object.create(null);
const ErrorCtor = Error;

function dirnameOf(name) {
    const at = name.lastIndexOf('/');
    return at < 0 ? '/node_modules' : '/node_modules/' + name.slice(0, at);
}

/** `module.exports` of the CommonJS module `name`, running it the first time. */
export function load(name) {
    const known = modules[name];
    if (known !== undefined) {
        return known.exports;
    }
    const module = { exports: {}, id: name, filename: '/node_modules/' + name, loaded: false };
    module.require = requireFrom(name);
    modules[name] = module;
    const body = native.wrapper(name);
    body.call(module.exports, module.exports, module.require, module, module.filename, dirnameOf(name));
    module.loaded = true;
    return module.exports;
}

function requireFrom(base) {
    const require = function require(specifier) {
        const found = native.resolve(base, String(specifier));
        const name = found[0];
        const format = found[1];
        if (format === 'cjs') {
            return load(name);
        }
        if (format === 'json') {
            let known = modules[name];
            if (known === undefined) {
                known = { exports: native.json(name), loaded: true };
                modules[name] = known;
            }
            return known.exports;
        }
        throw new ErrorCtor(
            `require('${specifier}'): ${name} is an ES module, which require() cannot load here; import it with \`await import('${specifier}')\``,
        );
    };
    require.resolve = (specifier) => '/node_modules/' + native.resolve(base, String(specifier))[0];
    require.cache = modules;
    return require;
}
