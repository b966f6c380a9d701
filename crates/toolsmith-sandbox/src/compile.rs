//! Turning source into bytecode, outside the sandbox.
//!
//! The sandbox context has no `Eval` intrinsic, so it cannot compile anything itself (that is
//! what makes `eval` and the `Function` constructors dead there). Code is compiled here instead,
//! in a separate *compiler runtime* that only ever parses: a context with `Eval` and the RegExp
//! compiler, a module declared with "compile only", written out as bytecode, and the context
//! dropped. Nothing is ever executed in the compiler runtime.
//!
//! Tool code becomes the module `tool.js`:
//! `export default async function (args, context) {<code>\n}` — the header shares the first line
//! with the code, so line numbers in errors and stacks are the code's own. Being a module, tool
//! code runs in strict mode.
//!
//! Each thread keeps one [`Compiler`] with a small LRU cache keyed by the exact source, so a tool
//! called again skips parsing. `prelude.js`, `support.js`, `utils.js`, `io.js`, `mcp.js`, `bounds.js` and `flat.js` are
//! compiled once per process.

use std::collections::HashMap;
use std::sync::OnceLock;

use rquickjs::context::intrinsic;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Runtime};

use crate::raw::Bytecode;

/// Module name of tool code, as it appears in stacks.
pub(crate) const TOOL_MODULE: &str = "tool.js";
/// The prelude every context evaluates, and the `utils` helpers it loads on first use.
const PRELUDE_MODULE: &str = "prelude.js";
const PRELUDE_SOURCE: &str = include_str!("prelude.js");
const SUPPORT_MODULE: &str = "support.js";
const SUPPORT_SOURCE: &str = include_str!("support.js");
const IO_MODULE: &str = "io.js";
const IO_SOURCE: &str = include_str!("io.js");
const UTILS_MODULE: &str = "utils.js";
const UTILS_SOURCE: &str = include_str!("utils.js");
const BOUNDS_MODULE: &str = "bounds.js";
const BOUNDS_SOURCE: &str = include_str!("bounds.js");
const FLAT_MODULE: &str = "flat.js";
const FLAT_SOURCE: &str = include_str!("flat.js");
const MCP_MODULE: &str = "mcp.js";
const MCP_SOURCE: &str = include_str!("mcp.js");
const NODE_MODULE: &str = "node.js";
const NODE_SOURCE: &str = include_str!("node.js");
const CJS_MODULE: &str = "toolsmith:cjs";
const CJS_SOURCE: &str = include_str!("cjs.js");
/// What precedes the tool code on its first line.
const TOOL_HEADER: &str = "export default async function (args, context) {";

/// Memory and stack of the compiler runtime: parsing only, but of code nobody has checked yet.
const COMPILER_MEMORY_BYTES: usize = 64 * 1024 * 1024;
const COMPILER_STACK_BYTES: usize = 1024 * 1024;
/// Cached compilations per thread, and the total source size they may hold.
const CACHE_ENTRIES: usize = 256;
const CACHE_SOURCE_BYTES: usize = 16 * 1024 * 1024;
/// The compiler runtime is replaced after this many compilations, so nothing accumulates.
const RUNTIME_REUSE: usize = 1000;

/// Why code did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CompileError {
    /// The code is not valid JavaScript; the message names the line.
    #[error("{0}")]
    Syntax(String),
    /// The compiler itself failed (out of memory, or a runtime that could not start).
    #[error("{0}")]
    Internal(String),
}

/// A thread's compiler: a parse-only runtime and a cache of compiled tool code.
pub(crate) struct Compiler {
    runtime: Option<(Runtime, usize)>,
    cache: HashMap<String, CacheEntry>,
    cached_bytes: usize,
    clock: u64,
}

struct CacheEntry {
    result: Result<(Bytecode, Needs), CompileError>,
    last_used: u64,
}

/// The optional built-ins a tool may use (see `raw::LazyIntrinsic`): those whose names appear
/// anywhere in its source. A script can only reach these constructors by name, through the
/// global object (`globalThis`, so a source that mentions it gets everything), or by a name
/// spelled with a `\u` escape (likewise); tool code is strict, so `this` is never the global
/// object. Mentions in strings and comments count too, which only costs a little time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Needs {
    /// `process`, `Buffer` or `global` (the Node-isms of `node.js`).
    pub(crate) node: bool,
    /// `mcp` (the caller's client: `mcp.js`).
    pub(crate) mcp: bool,
    pub(crate) typed_arrays: bool,
    pub(crate) map_set: bool,
    pub(crate) date: bool,
    pub(crate) weak_refs: bool,
}

/// The globals `LazyIntrinsic::TypedArrays` defines.
const TYPED_ARRAY_NAMES: [&str; 14] = [
    "ArrayBuffer",
    "DataView",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "BigInt64Array",
    "BigUint64Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
];

impl Needs {
    pub(crate) fn of(code: &str) -> Needs {
        // The Node-isms only for a tool that names them.
        let node = code.contains("process") || code.contains("Buffer") || code.contains("global");
        let mcp = code.contains("mcp");
        if code.contains("globalThis") || code.contains("\\u") {
            return Needs {
                node: code.contains("process") || code.contains("Buffer"),
                mcp: true,
                typed_arrays: true,
                map_set: true,
                date: true,
                weak_refs: true,
            };
        }
        Needs {
            node,
            mcp,
            typed_arrays: TYPED_ARRAY_NAMES.iter().any(|name| code.contains(name)),
            map_set: code.contains("Map") || code.contains("Set"),
            date: code.contains("Date"),
            weak_refs: code.contains("WeakRef") || code.contains("FinalizationRegistry"),
        }
    }
}

impl Compiler {
    pub(crate) fn new() -> Self {
        Compiler {
            runtime: None,
            cache: HashMap::new(),
            cached_bytes: 0,
            clock: 0,
        }
    }

    /// The bytecode of the module that wraps `code` as the body of an async function, and the
    /// optional built-ins it needs.
    pub(crate) fn tool(&mut self, code: &str) -> Result<(Bytecode, Needs), CompileError> {
        self.clock += 1;
        if let Some(entry) = self.cache.get_mut(code) {
            entry.last_used = self.clock;
            return entry.result.clone();
        }
        let result = match self.compile(&tool_source(code)) {
            Ok(bytecode) => Ok((bytecode, Needs::of(code))),
            Err(CompileError::Syntax(message)) => {
                Err(CompileError::Syntax(shift_first_line(&message)))
            }
            Err(other) => Err(other),
        };
        if code.len() <= CACHE_SOURCE_BYTES / 4 {
            self.insert(code, result.clone());
        }
        result
    }

    fn insert(&mut self, code: &str, result: Result<(Bytecode, Needs), CompileError>) {
        while !self.cache.is_empty()
            && (self.cache.len() >= CACHE_ENTRIES
                || self.cached_bytes + code.len() > CACHE_SOURCE_BYTES)
        {
            let oldest = self
                .cache
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(key, _)| key.clone());
            let Some(oldest) = oldest else { break };
            self.cache.remove(&oldest);
            self.cached_bytes -= oldest.len();
        }
        self.cached_bytes += code.len();
        self.cache.insert(
            code.to_owned(),
            CacheEntry {
                result,
                last_used: self.clock,
            },
        );
    }

    fn compile(&mut self, source: &str) -> Result<Bytecode, CompileError> {
        let reuse = match self.runtime.take() {
            Some((runtime, n)) if n < RUNTIME_REUSE => Some((runtime, n)),
            _ => None,
        };
        let (runtime, n) = match reuse {
            Some(it) => it,
            None => (new_compiler_runtime()?, 0),
        };
        let result = compile_in(&runtime, TOOL_MODULE, source, true);
        // A runtime whose compilation failed for lack of memory is not trusted again.
        if !matches!(result, Err(CompileError::Internal(_))) {
            self.runtime = Some((runtime, n + 1));
        }
        result
    }
}

/// The bytecode of `prelude.js`, compiled on first use.
pub(crate) fn prelude() -> Result<Bytecode, CompileError> {
    static PRELUDE: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    PRELUDE
        .get_or_init(|| compile_once(PRELUDE_MODULE, PRELUDE_SOURCE))
        .clone()
}

/// The bytecode of `support.js`, compiled on first use.
pub(crate) fn support() -> Result<Bytecode, CompileError> {
    static SUPPORT: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    SUPPORT
        .get_or_init(|| compile_once(SUPPORT_MODULE, SUPPORT_SOURCE))
        .clone()
}

/// The bytecode of `io.js`, compiled on first use.
pub(crate) fn io() -> Result<Bytecode, CompileError> {
    static IO: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    IO.get_or_init(|| compile_once(IO_MODULE, IO_SOURCE))
        .clone()
}

/// The bytecode of `utils.js`, compiled on first use.
pub(crate) fn utils() -> Result<Bytecode, CompileError> {
    static UTILS: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    UTILS
        .get_or_init(|| compile_once(UTILS_MODULE, UTILS_SOURCE))
        .clone()
}

/// The bytecode of `bounds.js`, compiled on first use.
pub(crate) fn bounds() -> Result<Bytecode, CompileError> {
    static BOUNDS: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    BOUNDS
        .get_or_init(|| compile_once(BOUNDS_MODULE, BOUNDS_SOURCE))
        .clone()
}

/// The bytecode of `flat.js`, compiled on first use.
pub(crate) fn flat() -> Result<Bytecode, CompileError> {
    static FLAT: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    FLAT.get_or_init(|| compile_once(FLAT_MODULE, FLAT_SOURCE))
        .clone()
}

/// The bytecode of `mcp.js` (the `mcp` global), compiled on first use.
pub(crate) fn mcp() -> Result<Bytecode, CompileError> {
    static MCP: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    MCP.get_or_init(|| compile_once(MCP_MODULE, MCP_SOURCE))
        .clone()
}

/// The bytecode of `node.js` (`process`, `Buffer`, `global`), compiled on first use.
pub(crate) fn node() -> Result<Bytecode, CompileError> {
    static NODE: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    NODE.get_or_init(|| compile_once(NODE_MODULE, NODE_SOURCE))
        .clone()
}

/// The bytecode of `cjs.js` (CommonJS `require` and `module`), compiled on first use.
pub(crate) fn cjs() -> Result<Bytecode, CompileError> {
    static CJS: OnceLock<Result<Bytecode, CompileError>> = OnceLock::new();
    // With debug information: `import.meta` finds its module through it.
    CJS.get_or_init(|| {
        let runtime = new_compiler_runtime()?;
        compile_in(&runtime, CJS_MODULE, CJS_SOURCE, true)
    })
    .clone()
}

/// A module of an npm package (its own source, or the wrapper `modules.rs` made of it),
/// compiled with line numbers, in a compiler runtime of its own.
pub(crate) fn package_module(name: &str, source: &str) -> Result<Bytecode, CompileError> {
    let runtime = new_compiler_runtime()?;
    // QuickJS loads a module's imports as it compiles it; here each is an empty stand-in (only
    // the specifier goes into the bytecode: the sandbox's loader resolves it when it runs).
    runtime.set_loader(StandIns, StandIns);
    compile_in(&runtime, name, source, true)
}

/// The compiler runtime's resolver and loader for package modules: every import is an empty
/// module, never read.
struct StandIns;

impl rquickjs::loader::Resolver for StandIns {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<rquickjs::loader::ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        Ok(format!("{base}\u{1}{name}"))
    }
}

impl rquickjs::loader::Loader for StandIns {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<rquickjs::loader::ImportAttributes<'js>>,
    ) -> rquickjs::Result<rquickjs::Module<'js, rquickjs::module::Declared>> {
        rquickjs::Module::declare(ctx.clone(), name, "")
    }
}

fn compile_once(name: &str, source: &str) -> Result<Bytecode, CompileError> {
    let runtime = new_compiler_runtime()?;
    compile_in(&runtime, name, source, false)
}

/// The module source of tool code.
pub(crate) fn tool_source(code: &str) -> String {
    let mut source = String::with_capacity(TOOL_HEADER.len() + code.len() + 2);
    source.push_str(TOOL_HEADER);
    source.push_str(code);
    source.push_str("\n}");
    source
}

fn new_compiler_runtime() -> Result<Runtime, CompileError> {
    let runtime = Runtime::new()
        .map_err(|e| CompileError::Internal(format!("could not start the JS compiler: {e}")))?;
    runtime.set_memory_limit(COMPILER_MEMORY_BYTES);
    runtime.set_max_stack_size(COMPILER_STACK_BYTES);
    Ok(runtime)
}

fn compile_in(
    runtime: &Runtime,
    name: &str,
    source: &str,
    debug: bool,
) -> Result<Bytecode, CompileError> {
    let context = Context::custom::<(intrinsic::Eval, intrinsic::RegExpCompiler)>(runtime)
        .map_err(|e| CompileError::Internal(format!("could not start the JS compiler: {e}")))?;
    context.with(|ctx| {
        Bytecode::compile(&ctx, name, source, debug)
            .catch(&ctx)
            .map_err(|e| describe_compile_error(&ctx, e))
    })
}

fn describe_compile_error<'js>(ctx: &Ctx<'js>, error: CaughtError<'js>) -> CompileError {
    match error {
        CaughtError::Exception(exception) => {
            let object = exception.as_object();
            let name: String = object
                .get("name")
                .unwrap_or_else(|_| "SyntaxError".to_owned());
            let message = exception.message().unwrap_or_default();
            if message == "out of memory" {
                return CompileError::Internal(
                    "the code is too large for the JS compiler".to_owned(),
                );
            }
            let location = exception
                .stack()
                .as_deref()
                .and_then(first_location)
                .unwrap_or_default();
            CompileError::Syntax(format!("{name}: {message}{location}"))
        }
        CaughtError::Value(value) => {
            let _ = ctx;
            CompileError::Syntax(format!("{value:?}"))
        }
        CaughtError::Error(e) => CompileError::Internal(format!("the JS compiler failed: {e}")),
    }
}

/// ` (line 3, column 5)` from the first `tool.js:3:5` / `utils.js:3:5` of a stack.
fn first_location(stack: &str) -> Option<String> {
    let (_, rest) = stack.split_once(".js:")?;
    let location = rest
        .split(|c: char| !(c.is_ascii_digit() || c == ':'))
        .next()
        .unwrap_or_default();
    let mut parts = location.split(':');
    let line = parts.next()?.parse::<u32>().ok()?;
    match parts.next().and_then(|c| c.parse::<u32>().ok()) {
        Some(column) => Some(format!(" (line {line}, column {column})")),
        None => Some(format!(" (line {line})")),
    }
}

/// The column in tool code of a column on the first line of its module.
pub(crate) fn code_column(module_column: usize) -> usize {
    module_column.saturating_sub(TOOL_HEADER.len()).max(1)
}

/// Columns on line 1 of tool code count from the end of the header.
fn shift_first_line(message: &str) -> String {
    const MARK: &str = " (line 1, column ";
    let Some((head, tail)) = message.rsplit_once(MARK) else {
        return message.to_owned();
    };
    let Some(column) = tail.strip_suffix(')').and_then(|c| c.parse::<usize>().ok()) else {
        return message.to_owned();
    };
    let column = code_column(column);
    format!("{head}{MARK}{column})")
}

#[cfg(test)]
mod tests;
