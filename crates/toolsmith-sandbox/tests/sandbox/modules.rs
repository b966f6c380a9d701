//! The module loader: `import()` of a tool's npm packages (ES modules, CommonJS, JSON,
//! `exports` and `main`), read from package directories on disk as the host unpacked them;
//! Node built-ins refused by name; and the Node-isms (`process`, `Buffer`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::ErrorKind;
use toolsmith_sandbox::{JsPackage, JsPackages, NODE_VERSION};

use crate::support::{failed, job, shared, small_limits};

/// Writes `files` (path → content) under `dir`.
fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// A set of packages in a temp dir: `(name, version, files, dependencies by name)`, the
/// tool's dependencies being the ones named in `root`.
struct Packages {
    _dir: tempfile::TempDir,
    packages: Arc<JsPackages>,
}

/// `(name, version, files, dependencies)`.
type Spec<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);

fn packages(specs: &[Spec<'_>], root: &[&str]) -> Packages {
    let dir = tempfile::tempdir().unwrap();
    let index: BTreeMap<String, usize> = specs
        .iter()
        .enumerate()
        .map(|(i, (name, ..))| ((*name).to_owned(), i))
        .collect();
    let mut list = Vec::new();
    for (i, (name, version, files, deps)) in specs.iter().enumerate() {
        let pkg_dir = dir.path().join(format!("p{i}"));
        std::fs::create_dir_all(&pkg_dir).unwrap();
        write(&pkg_dir, files);
        list.push(JsPackage {
            name: (*name).to_owned(),
            version: (*version).to_owned(),
            dir: pkg_dir,
            dependencies: deps.iter().map(|d| ((*d).to_owned(), index[*d])).collect(),
        });
    }
    Packages {
        _dir: dir,
        packages: Arc::new(JsPackages {
            root: root.iter().map(|r| ((*r).to_owned(), index[*r])).collect(),
            packages: list,
        }),
    }
}

async fn run_with(code: &str, packages: &Packages) -> toolsmith_core::ToolResult {
    let mut job = job(code);
    job.limits = small_limits();
    job.packages = Some(packages.packages.clone());
    shared().run(job).await
}

async fn value_with(code: &str, packages: &Packages) -> Value {
    let res = run_with(code, packages).await;
    assert!(!res.is_error, "{code} failed: {}", res.content);
    res.content
}

#[tokio::test]
async fn an_es_module_package_is_imported_through_its_exports_with_relative_and_json_imports() {
    let pkgs = packages(
        &[(
            "esm-pkg",
            "1.2.3",
            &[
                (
                    "package.json",
                    r#"{"name": "esm-pkg", "type": "module",
                        "exports": {".": {"require": "./nope.cjs", "import": "./lib/index.js"},
                                    "./sync": {"import": {"types": "./x.d.ts", "default": "./lib/sync.js"}},
                                    "./data/*": "./data/*.json"}}"#,
                ),
                (
                    "lib/index.js",
                    "import { twice } from './util.js';\nimport table from '../data/table.json' with { type: 'json' };\nexport const hello = (n) => `hello ${n}`;\nexport const doubled = twice(table.n);\nexport default 'the default';",
                ),
                ("lib/util.js", "export function twice(x) { return x * 2; }"),
                ("lib/sync.js", "export const parse = (s) => s.split(',');"),
                ("data/table.json", r#"{"n": 21}"#),
            ],
            &[],
        )],
        &["esm-pkg"],
    );
    let content = value_with(
        "const m = await import('esm-pkg');\nconst { parse } = await import('esm-pkg/sync');\nconst data = await import('esm-pkg/data/table');\nreturn [m.hello('x'), m.doubled, m.default, parse('a,b'), data.default.n];",
        &pkgs,
    )
    .await;
    assert_eq!(
        content,
        json!(["hello x", 42, "the default", ["a", "b"], 21])
    );

    // Not exported: refused with what the package exports.
    let res = run_with("return await import('esm-pkg/lib/util.js');", &pkgs).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("does not export './lib/util.js'"),
        "{message}"
    );
}

#[tokio::test]
async fn a_commonjs_package_runs_through_require_and_module_exports() {
    let pkgs = packages(
        &[
            (
                "cjs-pkg",
                "2.0.0",
                &[
                    (
                        "package.json",
                        r#"{"name": "cjs-pkg", "main": "./lib/main"}"#,
                    ),
                    (
                        "lib/main.js",
                        "#!/usr/bin/env node\n'use strict';\nconst helper = require('helper');\nconst info = require('../info.json');\nconst { inc } = require('./inc');\nexports.total = (xs) => xs.reduce((a, b) => helper.add(a, b), 0);\nexports.version = info.version;\nexports.inc = inc;\nexports.same = require('./inc') === require('./inc.js');\nexports.self = this === module.exports;",
                    ),
                    ("lib/inc.js", "module.exports = { inc: (x) => x + 1 };"),
                    ("info.json", r#"{"version": "2.0.0-data"}"#),
                ],
                &["helper"],
            ),
            (
                "helper",
                "0.1.0",
                &[
                    ("package.json", r#"{"name": "helper"}"#),
                    (
                        "index.js",
                        "module.exports.add = function (a, b) { return a + b; };",
                    ),
                ],
                &[],
            ),
        ],
        &["cjs-pkg"],
    );
    let content = value_with(
        "const m = await import('cjs-pkg');\nreturn [m.total([1, 2, 3]), m.version, m.inc(1), m.same, m.self, typeof m.default.total];",
        &pkgs,
    )
    .await;
    assert_eq!(content, json!([6, "2.0.0-data", 2, true, true, "function"]));

    // `helper` is a dependency of cjs-pkg, not of the tool.
    let res = run_with("return await import('helper');", &pkgs).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("'helper', which is not among its dependencies")
            && message.contains("add {\"name\": \"helper\""),
        "{message}"
    );
}

#[tokio::test]
async fn an_import_names_the_dependency_to_declare_and_node_builtins_are_refused_by_name() {
    let res =
        crate::support::run("const { parse } = await import('csv-parse/sync'); return 1;").await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("'csv-parse', which is not among its dependencies"),
        "{message}"
    );

    for (builtin, names) in [
        ("fs", "permissions: [\"filesystem\"]"),
        ("node:child_process", "shell.exec"),
        ("net", "fetch"),
    ] {
        let res = crate::support::run(&format!("await import('{builtin}'); return 1;")).await;
        let message = failed(&res, ErrorKind::ExecutionError);
        let bare = builtin.trim_start_matches("node:");
        assert!(
            message.contains(&format!("the Node built-in '{bare}'")) && message.contains(names),
            "{builtin}: {message}"
        );
    }

    let pkgs = packages(
        &[(
            "uses-fs",
            "1.0.0",
            &[
                ("package.json", r#"{"name": "uses-fs", "main": "index.js"}"#),
                (
                    "index.js",
                    "const fs = require('fs');\nmodule.exports = fs.readFileSync;",
                ),
            ],
            &[],
        )],
        &["uses-fs"],
    );
    let res = run_with("return typeof (await import('uses-fs')).default;", &pkgs).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("the package 'uses-fs@1.0.0' (index.js) imports the Node built-in 'fs'"),
        "{message}"
    );
}

#[tokio::test]
async fn no_path_leaves_its_package_and_symlinks_are_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), &[("secret.js", "export default 'secret';")]);
    let pkgs = packages(
        &[(
            "escaper",
            "1.0.0",
            &[
                (
                    "package.json",
                    r#"{"name": "escaper", "type": "module", "exports": {".": "./index.js", "./up": "../../../secret.js"}}"#,
                ),
                (
                    "index.js",
                    "export const up = async () => (await import('../../../../../../../../../../etc/passwd')).default;",
                ),
            ],
            &[],
        )],
        &["escaper"],
    );
    let link = pkgs.packages.packages[0].dir.join("linked.js");
    std::os::unix::fs::symlink(outside.path().join("secret.js"), &link).unwrap();

    let res = run_with(
        "const m = await import('escaper'); return await m.up();",
        &pkgs,
    )
    .await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(message.contains("leads outside its package"), "{message}");

    let res = run_with("return (await import('escaper/up')).default;", &pkgs).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(message.contains("leads outside the package"), "{message}");

    // A symlink inside the package is not a file of it.
    std::fs::write(
        pkgs.packages.packages[0].dir.join("package.json"),
        r#"{"name": "escaper", "type": "module"}"#,
    )
    .unwrap();
    let res = run_with("return (await import('escaper/linked.js')).default;", &pkgs).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(message.contains("has no file './linked.js'"), "{message}");
}

#[tokio::test]
async fn package_code_runs_under_the_jobs_limits() {
    let pkgs = packages(
        &[(
            "spin",
            "1.0.0",
            &[
                ("package.json", r#"{"name": "spin", "type": "module"}"#),
                ("index.js", "export function spin() { for (;;) {} }"),
                (
                    "hog.js",
                    "const a = []; for (;;) { a.push('x'.repeat(1000) + a.length); }",
                ),
            ],
            &[],
        )],
        &["spin"],
    );
    let res = run_with(
        "const { spin } = await import('spin'); spin(); return 1;",
        &pkgs,
    )
    .await;
    failed(&res, ErrorKind::CpuLimit);
    let res = run_with("await import('spin/hog.js'); return 1;", &pkgs).await;
    failed(&res, ErrorKind::MemoryLimit);
}

#[tokio::test]
async fn process_and_buffer_are_there_with_a_fixed_version_and_only_the_env_passed() {
    let mut job = job(
        "const b = Buffer.from('héllo, wörld', 'utf8');\nreturn {\n  version: process.version,\n  env: process.env,\n  home: process.env.HOME === undefined,\n  hex: Buffer.from('hi').toString('hex'),\n  b64: b.toString('base64'),\n  back: Buffer.from(b.toString('base64'), 'base64').toString(),\n  len: b.length,\n  slice: b.slice(0, 5).toString('latin1'),\n  concat: Buffer.concat([Buffer.from('a'), Buffer.from('b')]).toString(),\n  isBuffer: Buffer.isBuffer(b) && !Buffer.isBuffer('x'),\n  global: global === globalThis,\n};",
    );
    job.env = Some(Arc::new(BTreeMap::from([(
        "GREETING".to_owned(),
        "hi".to_owned(),
    )])));
    let res = shared().run(job).await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(
        res.content,
        json!({
            "version": NODE_VERSION,
            "env": {"GREETING": "hi"},
            "home": true,
            "hex": "6869",
            "b64": "aMOpbGxvLCB3w7ZybGQ=",
            "back": "héllo, wörld",
            "len": 14,
            "slice": "hÃ©ll",
            "concat": "ab",
            "isBuffer": true,
            "global": true,
        })
    );

    let res = crate::support::run("process.exit(1); return 1;").await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("process.exit is not available in the sandbox: return a value"),
        "{message}"
    );
}
