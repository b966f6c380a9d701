//! Node's resolution of an `import` or `require` specifier, over the packages of one job:
//! relative paths inside a package, bare names through the importing package's own
//! dependencies (the tool's for tool code), package `exports` (subpaths, `*` patterns and the
//! conditions `import` / `require` / `node` / `default`), `main`, `module`, extension and
//! `index` probing, and the format of the file found (ES module, CommonJS or JSON).
//!
//! Every path stays inside its package's directory: `..` past the package root, absolute
//! specifiers and symlinks are refused. Nothing here runs JavaScript.

use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::{JsPackage, JsPackages};

/// How a module is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Esm,
    Cjs,
    Json,
}

impl Format {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Format::Esm => "esm",
            Format::Cjs => "cjs",
            Format::Json => "json",
        }
    }
}

/// Whether the specifier came from `import` (ESM) or `require` (CommonJS): picks the
/// `exports` condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Import,
    Require,
}

/// A resolved module: a file of one package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) package: usize,
    /// `/`-separated, relative to the package's directory.
    pub(crate) path: String,
    pub(crate) format: Format,
}

/// Node's built-in modules: importing one names it in the error.
pub(crate) const NODE_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// The Node built-in `specifier` names (`fs`, `node:fs`, `fs/promises`), if it names one.
pub(crate) fn builtin_of(specifier: &str) -> Option<&str> {
    if let Some(rest) = specifier.strip_prefix("node:") {
        return Some(rest.split('/').next().unwrap_or(rest));
    }
    let first = specifier.split('/').next().unwrap_or(specifier);
    NODE_BUILTINS.contains(&first).then_some(first)
}

/// What stands in for the Node built-in `name`, for the error that names it.
pub(crate) fn builtin_hint(name: &str) -> &'static str {
    match name {
        "fs" => {
            "QuickJS has no file system API; a tool that declares permissions: [\"filesystem\"] gets the global `fs` (its caller's workspace; docs/js-tools.md)"
        }
        "child_process" | "cluster" | "worker_threads" => {
            "no child processes or threads run in the sandbox; a tool that declares permissions: [\"shell\"] gets `shell.exec` (a command in the command sandbox)"
        }
        "net" | "tls" | "dgram" | "dns" | "http" | "https" | "http2" => {
            "no raw sockets or Node HTTP clients in the sandbox; a tool that declares permissions: [\"network\"] gets `fetch` (through the egress guard)"
        }
        "buffer" | "process" => {
            "use the global `Buffer` or `process`, which the sandbox provides without an import"
        }
        _ => {
            "the sandbox runs plain JavaScript (QuickJS) with none of Node's built-in modules; use a package, or a build of it, that needs none"
        }
    }
}

/// A parsed `package.json`, kept per package for one job.
#[derive(Default)]
pub(crate) struct Manifests {
    by_dir: HashMap<PathBuf, Option<Value>>,
}

impl Manifests {
    /// The `package.json` in `dir`, if there is a readable one.
    fn get(&mut self, dir: &Path) -> Option<&Value> {
        self.by_dir
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let path = dir.join("package.json");
                if !is_file(&path) {
                    return None;
                }
                fs::read(&path)
                    .ok()
                    .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            })
            .as_ref()
    }
}

/// Resolves `specifier`, imported by a file of `from` (`None`: the tool's own code).
pub(crate) fn resolve(
    packages: &JsPackages,
    manifests: &mut Manifests,
    from: Option<(usize, &str)>,
    specifier: &str,
    mode: Mode,
) -> Result<Found, String> {
    if let Some(name) = builtin_of(specifier) {
        let who = match from {
            None => "the tool".to_owned(),
            Some((package, path)) => format!("{} ({path})", label(packages, package)),
        };
        return Err(format!(
            "{who} imports the Node built-in '{name}', which the sandbox does not have: {}",
            builtin_hint(name)
        ));
    }
    if specifier.starts_with("./") || specifier.starts_with("../") || specifier == "." {
        let Some((package, path)) = from else {
            return Err(format!(
                "the tool imports '{specifier}', a relative path: tool code is one file; import a package named in the tool's dependencies"
            ));
        };
        let base = parent_of(path);
        let joined = join(base, specifier).ok_or_else(|| {
            format!(
                "{} ({path}) imports '{specifier}', which leads outside its package",
                label(packages, package)
            )
        })?;
        return file_in(packages, manifests, package, &joined, None).ok_or_else(|| {
            format!(
                "{} ({path}) imports '{specifier}', but the package has no such file",
                label(packages, package)
            )
        });
    }
    if specifier.starts_with('/') || specifier.contains('\\') || specifier.contains('\0') {
        return Err(format!(
            "cannot import '{specifier}': only package names and relative paths inside a package can be imported"
        ));
    }
    let (name, subpath) = split_bare(specifier)
        .ok_or_else(|| format!("cannot import '{specifier}': it is not a package name"))?;
    let package = match from {
        None => packages.root.get(name).copied().ok_or_else(|| {
            format!(
                "the tool imports '{name}', which is not among its dependencies: add {{\"name\": \"{name}\", \"version\": \"<range>\"}} to the tool's dependencies"
            )
        })?,
        Some((importer, path)) => {
            let of = packages.packages.get(importer).ok_or("unknown package")?;
            match of.dependencies.get(name) {
                Some(found) => *found,
                None if of.name == name => importer,
                None => packages.root.get(name).copied().ok_or_else(|| {
                    format!(
                        "{} ({path}) imports '{name}', which is not among its dependencies (nor the tool's)",
                        label(packages, importer)
                    )
                })?,
            }
        }
    };
    resolve_in_package(packages, manifests, package, subpath, mode)
        .map_err(|why| format!("cannot import '{specifier}': {why}"))
}

/// `name@version` of a package.
pub(crate) fn label(packages: &JsPackages, package: usize) -> String {
    packages.packages.get(package).map_or_else(
        || "a package".to_owned(),
        |p| format!("the package '{}@{}'", p.name, p.version),
    )
}

/// The package name and the subpath (`"."` or `"./x"`) of a bare specifier.
fn split_bare(specifier: &str) -> Option<(&str, String)> {
    let mut parts = specifier.splitn(3, '/');
    let first = parts.next()?;
    let (name_len, rest) = if first.starts_with('@') {
        let second = parts.next()?;
        if second.is_empty() {
            return None;
        }
        (first.len() + 1 + second.len(), parts.next())
    } else {
        let rest = specifier.split_once('/').map(|(_, rest)| rest);
        (first.len(), rest)
    };
    let name = specifier.get(..name_len)?;
    if name.is_empty() || first.is_empty() {
        return None;
    }
    let subpath = match rest {
        None | Some("") => ".".to_owned(),
        Some(rest) => format!("./{rest}"),
    };
    Some((name, subpath))
}

fn resolve_in_package(
    packages: &JsPackages,
    manifests: &mut Manifests,
    package: usize,
    subpath: String,
    mode: Mode,
) -> Result<Found, String> {
    let pkg = packages.packages.get(package).ok_or("unknown package")?;
    let manifest = manifests.get(&pkg.dir).cloned().unwrap_or(Value::Null);
    if let Some(exports) = manifest.get("exports").filter(|e| !e.is_null()) {
        let target = exports_target(exports, &subpath, mode).ok_or_else(|| {
            format!(
                "the package '{}@{}' does not export '{subpath}' (its package.json `exports` lists what may be imported)",
                pkg.name, pkg.version
            )
        })?;
        let path = join("", &target).ok_or_else(|| {
            format!("the package's `exports` target '{target}' leads outside the package")
        })?;
        return file_in(packages, manifests, package, &path, None).ok_or_else(|| {
            format!(
                "the package '{}@{}' exports '{subpath}' as '{target}', which is not in the package",
                pkg.name, pkg.version
            )
        });
    }
    if subpath != "." {
        let path = join("", &subpath).ok_or("the path leads outside the package")?;
        return file_in(packages, manifests, package, &path, None).ok_or_else(|| {
            format!(
                "the package '{}@{}' has no file '{subpath}'",
                pkg.name, pkg.version
            )
        });
    }
    let module_field = manifest.get("module").and_then(Value::as_str);
    let main_field = manifest.get("main").and_then(Value::as_str);
    let mut candidates: Vec<(&str, Option<Format>)> = Vec::new();
    if mode == Mode::Import
        && let Some(module) = module_field
    {
        candidates.push((module, Some(Format::Esm)));
    }
    if let Some(main) = main_field {
        candidates.push((main, None));
    }
    candidates.push(("index", None));
    for (entry, forced) in candidates {
        if let Some(path) = join("", entry)
            && let Some(found) = file_in(packages, manifests, package, &path, forced)
        {
            return Ok(found);
        }
    }
    Err(format!(
        "the package '{}@{}' has no entry point (no `exports`, `main` or index.js)",
        pkg.name, pkg.version
    ))
}

/// The target of `subpath` in a package's `exports`, for `mode`'s conditions.
fn exports_target(exports: &Value, subpath: &str, mode: Mode) -> Option<String> {
    let is_map = exports
        .as_object()
        .is_some_and(|map| map.keys().all(|k| k.starts_with('.')) && !map.is_empty());
    if !is_map {
        // `"exports": "./x.js"` or a conditions object: the package's "." alone.
        return (subpath == ".")
            .then(|| conditional(exports, mode, ""))
            .flatten();
    }
    let map = exports.as_object()?;
    if let Some(exact) = map.get(subpath) {
        return conditional(exact, mode, "");
    }
    // `./x/*` patterns, the longest prefix first.
    let mut best: Option<(&str, &str, &Value)> = None;
    for (key, value) in map {
        let Some((prefix, suffix)) = key.split_once('*') else {
            continue;
        };
        if subpath.len() >= prefix.len() + suffix.len()
            && subpath.starts_with(prefix)
            && subpath.ends_with(suffix)
            && best.is_none_or(|(p, _, _)| prefix.len() > p.len())
        {
            best = Some((prefix, suffix, value));
        }
    }
    let (prefix, suffix, value) = best?;
    let star = subpath.get(prefix.len()..subpath.len() - suffix.len())?;
    conditional(value, mode, star)
}

/// A target or a conditions object, with `*` replaced by `star`.
fn conditional(value: &Value, mode: Mode, star: &str) -> Option<String> {
    match value {
        Value::String(target) => Some(target.replace('*', star)),
        Value::Array(alternatives) => alternatives
            .iter()
            .find_map(|alternative| conditional(alternative, mode, star)),
        Value::Object(conditions) => {
            let wanted = match mode {
                Mode::Import => "import",
                Mode::Require => "require",
            };
            conditions.iter().find_map(|(condition, target)| {
                let applies = condition == wanted
                    || condition == "node"
                    || condition == "default"
                    || condition == "module-sync";
                if applies {
                    conditional(target, mode, star)
                } else {
                    None
                }
            })
        }
        _ => None,
    }
}

/// The file `path` names in `package`, probing extensions and `index` files as Node does.
fn file_in(
    packages: &JsPackages,
    manifests: &mut Manifests,
    package: usize,
    path: &str,
    forced: Option<Format>,
) -> Option<Found> {
    let pkg = packages.packages.get(package)?;
    let probes = [
        path.to_owned(),
        format!("{path}.js"),
        format!("{path}.mjs"),
        format!("{path}.cjs"),
        format!("{path}.json"),
    ];
    for probe in probes {
        if !probe.is_empty() && is_file(&pkg.dir.join(&probe)) {
            let format = forced.unwrap_or_else(|| format_of(pkg, manifests, &probe));
            return Some(Found {
                package,
                path: probe,
                format,
            });
        }
    }
    let dir = pkg.dir.join(path);
    if is_dir(&dir) {
        if let Some(main) = manifests
            .get(&dir)
            .and_then(|m| m.get("main"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            && let Some(inner) = join(path, &format!("./{main}"))
            && inner != path
            && let Some(found) = file_in(packages, manifests, package, &inner, forced)
        {
            return Some(found);
        }
        for index in ["index.js", "index.mjs", "index.cjs", "index.json"] {
            let probe = if path.is_empty() {
                index.to_owned()
            } else {
                format!("{path}/{index}")
            };
            if is_file(&pkg.dir.join(&probe)) {
                let format = forced.unwrap_or_else(|| format_of(pkg, manifests, &probe));
                return Some(Found {
                    package,
                    path: probe,
                    format,
                });
            }
        }
    }
    None
}

/// A file's format: by extension, else by the `type` of the nearest `package.json`.
fn format_of(pkg: &JsPackage, manifests: &mut Manifests, path: &str) -> Format {
    if path.ends_with(".json") {
        return Format::Json;
    }
    if path.ends_with(".mjs") {
        return Format::Esm;
    }
    if path.ends_with(".cjs") {
        return Format::Cjs;
    }
    let mut dir = parent_of(path).to_owned();
    loop {
        let here = if dir.is_empty() {
            pkg.dir.clone()
        } else {
            pkg.dir.join(&dir)
        };
        if let Some(manifest) = manifests.get(&here)
            && let Some(kind) = manifest.get("type").and_then(Value::as_str)
        {
            return if kind == "module" {
                Format::Esm
            } else {
                Format::Cjs
            };
        }
        if dir.is_empty() {
            return Format::Cjs;
        }
        dir = parent_of(&dir).to_owned();
    }
}

/// The directory part of a `/`-separated relative path (`""` at the top).
pub(crate) fn parent_of(path: &str) -> &str {
    path.rfind('/').and_then(|at| path.get(..at)).unwrap_or("")
}

/// `base` joined with the relative `specifier`, normalized; `None` when it leaves the package.
fn join(base: &str, specifier: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for component in Path::new(specifier).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

/// A regular file, not a symlink.
fn is_file(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

fn is_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}
