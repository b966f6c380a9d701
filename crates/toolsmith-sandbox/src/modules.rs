//! The module loader: `await import('pkg')` and `import('pkg/sub')` of a tool's npm
//! dependencies, which the host installed (unpacked, checked) before the job; and the
//! Node-isms a tool or a package may use (`process`, `Buffer`, `global`: `node.js`).
//!
//! Nothing here reaches the network: a job's packages are directories on disk
//! ([`JsPackages`]), read when a module is first imported. Resolution is Node's
//! (`resolve.rs`); ES modules are compiled outside the sandbox like tool code (the sandbox
//! context cannot compile), CommonJS files run through a `require`/`module.exports` wrapper
//! (`cjs.js`), reached from `import` through a facade module whose named exports are found
//! without running the file (`exports.rs`), and JSON files are data, checked as JSON before
//! they become a module. A Node built-in (`fs`, `child_process`, `net`, …) is refused with its
//! name and what stands in for it. The sandbox's limits (memory, CPU, wall clock) apply to
//! everything a package runs: it runs in the job's runtime, on the job's thread.
//!
//! Compiled package modules are kept per process, keyed by the file (path, size, modification
//! time): the host's cache is content-addressed, so a file's bytes never change under a path,
//! and a warm import costs reading bytecode.

mod exports;
mod resolve;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Exception, Function, Module, Object};

use crate::compile::{self, CompileError, Needs, TOOL_MODULE};
use crate::host::JobSlot;
use crate::raw::{self, Bytecode, LazyIntrinsic};
pub(crate) use resolve::Format;
use resolve::{Found, Manifests, Mode};

/// The npm packages one job may import, unpacked on disk by the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsPackages {
    /// The tool's own dependencies: name → index in `packages`.
    pub root: BTreeMap<String, usize>,
    pub packages: Vec<JsPackage>,
}

/// One unpacked package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsPackage {
    pub name: String,
    pub version: String,
    /// The package's directory (its `package.json` at the top). Only regular files and
    /// directories are read: a symlink is never followed.
    pub dir: PathBuf,
    /// Its dependencies: name → index in [`JsPackages::packages`].
    pub dependencies: BTreeMap<String, usize>,
}

/// The name of the CommonJS helper module, reachable only from a facade (no npm name has a colon).
const CJS_HELPER: &str = "toolsmith:cjs";
/// The suffix of the module that holds a CommonJS file's code as a function.
const CJS_BODY: &str = "#cjs";
/// Named exports followed through re-exports at most this deep.
const REEXPORT_DEPTH: usize = 8;
/// Compiled package modules kept per process (bytecode bytes).
const CACHE_BYTES: usize = 64 * 1024 * 1024;
/// A module file larger than this is refused (the installer's limits are lower in practice).
const MAX_MODULE_BYTES: u64 = 16 * 1024 * 1024;

/// One job's module state, shared by the resolver, the loader and the CommonJS natives.
pub(crate) struct Modules {
    packages: Option<Arc<JsPackages>>,
    env_json: String,
    slot: Rc<JobSlot>,
    state: RefCell<State>,
}

#[derive(Default)]
struct State {
    manifests: Manifests,
    /// Every module name handed to QuickJS, and the file it stands for.
    names: HashMap<String, Found>,
    /// Facade modules of CommonJS files: the only importers of [`CJS_HELPER`].
    facades: HashSet<String>,
    node_installed: bool,
}

impl Modules {
    pub(crate) fn new(
        packages: Option<Arc<JsPackages>>,
        env: Option<&BTreeMap<String, String>>,
        slot: Rc<JobSlot>,
    ) -> Rc<Modules> {
        let env_json = env
            .and_then(|env| serde_json::to_string(env).ok())
            .unwrap_or_else(|| "{}".to_owned());
        Rc::new(Modules {
            packages,
            env_json,
            slot,
            state: RefCell::new(State::default()),
        })
    }

    /// The resolver and loader QuickJS calls for this job.
    pub(crate) fn loader(self: &Rc<Self>) -> (JobResolver, JobLoader) {
        (JobResolver(self.clone()), JobLoader(self.clone()))
    }

    /// Defines `process`, `Buffer` and `global` (once).
    pub(crate) fn install_node(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        if self.state.borrow().node_installed {
            return Ok(());
        }
        self.state.borrow_mut().node_installed = true;
        if !self.slot.ensure(ctx, LazyIntrinsic::TypedArrays) {
            return Err(rquickjs::Error::Exception);
        }
        let bytecode = compile::node()
            .map_err(|e| Exception::throw_internal(ctx, &format!("node.js: {e}")))?;
        let (module, _) = raw::load_module(ctx, &bytecode)?.eval()?;
        let init: Function<'_> = module.get("init")?;
        init.call::<_, ()>((self.env_json.as_str(),))
    }

    fn packages(&self) -> &JsPackages {
        static EMPTY: std::sync::LazyLock<JsPackages> =
            std::sync::LazyLock::new(JsPackages::default);
        self.packages.as_deref().unwrap_or(&EMPTY)
    }

    /// Resolves `specifier` from the module `base` and records the name it gets.
    fn resolve(&self, base: &str, specifier: &str, mode: Mode) -> Result<(String, Format), String> {
        let mut state = self.state.borrow_mut();
        let from = if base == TOOL_MODULE {
            None
        } else {
            let found = state
                .names
                .get(base)
                .ok_or_else(|| format!("cannot import '{specifier}' from '{base}'"))?;
            Some((found.package, found.path.clone()))
        };
        let packages = self.packages();
        let found = resolve::resolve(
            packages,
            &mut state.manifests,
            from.as_ref().map(|(p, path)| (*p, path.as_str())),
            specifier,
            mode,
        )?;
        let name = module_name(packages, &found);
        let format = found.format;
        state.names.insert(name.clone(), found);
        Ok((name, format))
    }

    fn found(&self, name: &str) -> Option<Found> {
        self.state.borrow().names.get(name).cloned()
    }

    /// The bytes of a resolved file, as text.
    fn read(&self, found: &Found) -> Result<(String, FileKey), String> {
        let package = self
            .packages()
            .packages
            .get(found.package)
            .ok_or("unknown package")?;
        let path = package.dir.join(&found.path);
        let meta =
            fs::symlink_metadata(&path).map_err(|e| format!("cannot read {}: {e}", found.path))?;
        if !meta.file_type().is_file() {
            return Err(format!("{} is not a regular file", found.path));
        }
        if meta.len() > MAX_MODULE_BYTES {
            return Err(format!(
                "{} is {} bytes, more than a module may have ({MAX_MODULE_BYTES})",
                found.path,
                meta.len()
            ));
        }
        let bytes = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", found.path))?;
        let key = FileKey {
            path,
            len: meta.len(),
            modified: meta.modified().ok(),
        };
        let text =
            String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", found.path))?;
        Ok((text, key))
    }

    /// Adds the built-ins `source` needs, and the Node-isms every package may use.
    fn prepare_for<'js>(&self, ctx: &Ctx<'js>, source: &str) -> rquickjs::Result<()> {
        let needs = Needs::of(source);
        let wanted = [
            (needs.typed_arrays, LazyIntrinsic::TypedArrays),
            (needs.map_set, LazyIntrinsic::MapSet),
            (needs.date, LazyIntrinsic::Date),
            (needs.weak_refs, LazyIntrinsic::WeakRefs),
        ];
        for (wanted, intrinsic) in wanted {
            if wanted && !self.slot.ensure(ctx, intrinsic) {
                return Err(rquickjs::Error::Exception);
            }
        }
        self.install_node(ctx)
    }

    fn load_module<'js>(
        self: &Rc<Self>,
        ctx: &Ctx<'js>,
        name: &str,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        if name == CJS_HELPER {
            let bytecode = compile::cjs()
                .map_err(|e| Exception::throw_internal(ctx, &format!("cjs.js: {e}")))?;
            let module = raw::load_module(ctx, &bytecode)?;
            module.meta()?.set("native", self.natives(ctx)?)?;
            return Ok(module);
        }
        let found = self
            .found(name)
            .ok_or_else(|| Exception::throw_message(ctx, &format!("cannot load '{name}'")))?;
        let (source, key) = self
            .read(&found)
            .map_err(|e| Exception::throw_message(ctx, &e))?;
        let bytecode = match found.format {
            Format::Esm => {
                self.prepare_for(ctx, &source)?;
                compiled(key, || compile::package_module(name, &source))
            }
            Format::Json => {
                serde_json::from_str::<serde_json::Value>(&source).map_err(|e| {
                    Exception::throw_syntax(ctx, &format!("{name} is not valid JSON: {e}"))
                })?;
                compiled(key, || {
                    compile::package_module(name, &format!("export default {source}\n;"))
                })
            }
            Format::Cjs => {
                let facade = self.facade(name, &source);
                self.state.borrow_mut().facades.insert(name.to_owned());
                compile::package_module(name, &facade)
            }
        }
        .map_err(|e| Exception::throw_syntax(ctx, &format!("{name}: {e}")))?;
        raw::load_module(ctx, &bytecode)
    }

    /// The ES module that stands for the CommonJS file `name`: `default` is its
    /// `module.exports`, and each name it exports is a named export.
    fn facade(&self, name: &str, source: &str) -> String {
        let mut names = Vec::new();
        self.exported_names(name, source, 0, &mut names);
        let literal = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".to_owned());
        let helper = serde_json::to_string(CJS_HELPER).unwrap_or_default();
        let mut out = format!(
            "import {{ load }} from {helper};\nconst m = load({literal});\nexport default m;\nconst o = m === null || m === undefined ? {{}} : m;\n"
        );
        for export in names {
            out.push_str(&format!("export const {export} = o.{export};\n"));
        }
        out
    }

    fn exported_names(&self, name: &str, source: &str, depth: usize, names: &mut Vec<String>) {
        let scanned = exports::scan(source);
        for export in scanned.names {
            if !names.contains(&export) {
                names.push(export);
            }
        }
        if depth >= REEXPORT_DEPTH {
            return;
        }
        for specifier in scanned.reexports {
            let Ok((inner, Format::Cjs)) = self.resolve(name, &specifier, Mode::Require) else {
                continue;
            };
            let Some(found) = self.found(&inner) else {
                continue;
            };
            if let Ok((text, _)) = self.read(&found) {
                self.exported_names(&inner, &text, depth + 1, names);
            }
        }
    }

    /// `import.meta.native` of the CommonJS helper.
    fn natives<'js>(self: &Rc<Self>, ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
        let me = self.clone();
        let natives = Object::new(ctx.clone())?;
        let modules = me.clone();
        natives.set(
            "wrapper",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: String| {
                modules.wrapper(&ctx, &name)
            })?,
        )?;
        let modules = me.clone();
        natives.set(
            "resolve",
            Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, base: String, specifier: String| {
                    let (name, format) = modules
                        .resolve(&base, &specifier, Mode::Require)
                        .map_err(|e| Exception::throw_message(&ctx, &e))?;
                    Ok::<_, rquickjs::Error>(vec![name, format.as_str().to_owned()])
                },
            )?,
        )?;
        let modules = me;
        natives.set(
            "json",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, name: String| {
                let found = modules.found(&name).ok_or_else(|| {
                    Exception::throw_message(&ctx, &format!("cannot load '{name}'"))
                })?;
                let (text, _) = modules
                    .read(&found)
                    .map_err(|e| Exception::throw_message(&ctx, &e))?;
                ctx.json_parse(text)
            })?,
        )?;
        Ok(natives)
    }

    /// The CommonJS file `name`'s code as a function of `exports, require, module,
    /// __filename, __dirname`.
    fn wrapper<'js>(&self, ctx: &Ctx<'js>, name: &str) -> rquickjs::Result<Function<'js>> {
        let found = self
            .found(name)
            .filter(|found| found.format == Format::Cjs)
            .ok_or_else(|| Exception::throw_message(ctx, &format!("cannot load '{name}'")))?;
        let (source, key) = self
            .read(&found)
            .map_err(|e| Exception::throw_message(ctx, &e))?;
        self.prepare_for(ctx, &source)?;
        let body_name = format!("{name}{CJS_BODY}");
        let body = strip_hashbang(&source);
        let bytecode = compiled(key, || {
            compile::package_module(
                &body_name,
                &format!(
                    "export default function (exports, require, module, __filename, __dirname) {{{body}\n}}"
                ),
            )
        })
        .map_err(|e| Exception::throw_syntax(ctx, &format!("{name}: {e}")))?;
        let (module, _) = raw::load_module(ctx, &bytecode)?.eval()?;
        module.get("default")
    }
}

/// The name QuickJS knows a resolved file by: `name@version/path`.
fn module_name(packages: &JsPackages, found: &Found) -> String {
    match packages.packages.get(found.package) {
        Some(p) => format!("{}@{}/{}", p.name, p.version, found.path),
        None => found.path.clone(),
    }
}

fn strip_hashbang(source: &str) -> &str {
    if source.starts_with("#!") {
        source
            .find('\n')
            .and_then(|at| source.get(at..))
            .unwrap_or("")
    } else {
        source
    }
}

/// What identifies a file's bytes in the compiled-module cache.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
}

/// Compiled modules of package files, per process.
fn compiled(
    key: FileKey,
    compile: impl FnOnce() -> Result<Bytecode, CompileError>,
) -> Result<Bytecode, CompileError> {
    static CACHE: std::sync::LazyLock<Mutex<(HashMap<FileKey, Bytecode>, usize)>> =
        std::sync::LazyLock::new(|| Mutex::new((HashMap::new(), 0)));
    if let Ok(cache) = CACHE.lock()
        && let Some(bytecode) = cache.0.get(&key)
    {
        return Ok(bytecode.clone());
    }
    let bytecode = compile()?;
    if let Ok(mut cache) = CACHE.lock() {
        if cache.1 + bytecode.len() > CACHE_BYTES {
            cache.0.clear();
            cache.1 = 0;
        }
        cache.1 += bytecode.len();
        cache.0.insert(key, bytecode.clone());
    }
    Ok(bytecode)
}

/// Resolves the specifiers of `import`s (QuickJS's module name normalizer).
pub(crate) struct JobResolver(Rc<Modules>);

impl Resolver for JobResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if name == CJS_HELPER {
            if self.0.state.borrow().facades.contains(base) {
                return Ok(name.to_owned());
            }
            return Err(Exception::throw_message(ctx, "cannot import that module"));
        }
        self.0
            .resolve(base, name, Mode::Import)
            .map(|(name, _)| name)
            .map_err(|e| Exception::throw_message(ctx, &e))
    }
}

/// Loads a resolved module.
pub(crate) struct JobLoader(Rc<Modules>);

impl Loader for JobLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        self.0.load_module(ctx, name)
    }
}
