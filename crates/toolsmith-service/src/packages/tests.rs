//! The installer against a registry on 127.0.0.1 serving tarballs made here: resolution,
//! integrity, the limits, hostile tarballs, the lists, install scripts that never run, and
//! runs that work from the cache alone. (The public registry is used by the server's tests.)

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha512};
use toolsmith_core::PermissionSet;
use toolsmith_egress::EgressPolicy;
use toolsmith_sandbox::{JsCallContext, JsJob, JsLimits, JsSandbox, PoolSettings};

use super::*;

/// A tar entry: path, type (`b'0'` file, `b'2'` symlink, `b'5'` directory), content, link.
struct Entry<'a>(&'a str, u8, &'a [u8], &'a str);

fn tgz(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut tar = Vec::new();
    for Entry(path, kind, content, link) in entries {
        let mut header = [0u8; 512];
        header[..path.len()].copy_from_slice(path.as_bytes());
        header[100..108].copy_from_slice(b"0000644\0");
        header[108..116].copy_from_slice(b"0000000\0");
        header[116..124].copy_from_slice(b"0000000\0");
        let size = format!("{:011o}\0", content.len());
        header[124..136].copy_from_slice(size.as_bytes());
        header[136..148].copy_from_slice(b"00000000000\0");
        header[156] = *kind;
        header[157..157 + link.len()].copy_from_slice(link.as_bytes());
        header[257..263].copy_from_slice(b"ustar\0");
        header[263..265].copy_from_slice(b"00");
        header[148..156].copy_from_slice(b"        ");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        tar.extend_from_slice(&header);
        tar.extend_from_slice(content);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.resize(tar.len() + 1024, 0);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn integrity(bytes: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes))
    )
}

#[derive(Default)]
struct RegistryState {
    packuments: Mutex<BTreeMap<String, Value>>,
    tarballs: Mutex<BTreeMap<String, Vec<u8>>>,
    requests: AtomicUsize,
    tarball_requests: AtomicUsize,
}

/// An npm registry on 127.0.0.1.
struct Registry {
    url: String,
    state: Arc<RegistryState>,
}

impl Registry {
    async fn start() -> Registry {
        let state = Arc::new(RegistryState::default());
        let app = axum::Router::new()
            .route("/{*path}", axum::routing::get(serve))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Registry { url, state }
    }

    /// Publishes `name@version` with `files` (under `package/`), `extra` merged into its
    /// version entry; returns the tarball's integrity.
    fn publish(&self, name: &str, version: &str, tarball: Vec<u8>, extra: Value) -> String {
        let file = format!("{}-{version}.tgz", name.rsplit('/').next().unwrap());
        let tarball_url = format!("{}/{name}/-/{file}", self.url);
        let sri = integrity(&tarball);
        self.state
            .tarballs
            .lock()
            .unwrap()
            .insert(format!("{name}/-/{file}"), tarball);
        let mut entry = json!({
            "name": name, "version": version,
            "dist": {"tarball": tarball_url, "integrity": sri},
        });
        if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                entry.insert(k.clone(), v.clone());
            }
        }
        let mut packuments = self.state.packuments.lock().unwrap();
        let packument = packuments
            .entry(name.to_owned())
            .or_insert_with(|| json!({"name": name, "dist-tags": {}, "versions": {}}));
        packument["versions"][version] = entry;
        packument["dist-tags"]["latest"] = json!(version);
        sri
    }

    /// A package whose files are `files` (paths under `package/`).
    fn publish_files(&self, name: &str, version: &str, files: &[(&str, &str)], extra: Value) {
        let entries: Vec<(String, &str)> = files
            .iter()
            .map(|(path, content)| (format!("package/{path}"), *content))
            .collect();
        let entries: Vec<Entry<'_>> = entries
            .iter()
            .map(|(path, content)| Entry(path, b'0', content.as_bytes(), ""))
            .collect();
        self.publish(name, version, tgz(&entries), extra);
    }

    fn tarball_requests(&self) -> usize {
        self.state.tarball_requests.load(Ordering::SeqCst)
    }

    fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }
}

async fn serve(
    State(state): State<Arc<RegistryState>>,
    UrlPath(path): UrlPath<String>,
) -> Response {
    state.requests.fetch_add(1, Ordering::SeqCst);
    if path.ends_with(".tgz") {
        state.tarball_requests.fetch_add(1, Ordering::SeqCst);
        return match state.tarballs.lock().unwrap().get(&path) {
            Some(bytes) => bytes.clone().into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        };
    }
    let name = path.replace("%2f", "/").replace("%2F", "/");
    match state.packuments.lock().unwrap().get(&name) {
        Some(packument) => axum::Json(packument.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

fn installer(registry: &str, cache: &Path, tweak: impl FnOnce(&mut NpmSettings)) -> Installer {
    let mut settings = NpmSettings {
        registry: registry.to_owned(),
        cache_dir: Some(cache.to_path_buf()),
        ..NpmSettings::default()
    };
    tweak(&mut settings);
    Installer::new(settings, &EgressPolicy::default())
}

fn dep(name: &str, version: &str) -> Dependency {
    Dependency {
        name: name.to_owned(),
        version: version.to_owned(),
    }
}

/// What the cache holds (entries, staging folders included).
fn cache_entries(cache: &Path) -> Vec<String> {
    match std::fs::read_dir(cache) {
        Ok(dir) => dir
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

async fn run(code: &str, packages: JsPackages) -> toolsmith_core::ToolResult {
    struct NoHost;
    #[async_trait::async_trait]
    impl toolsmith_sandbox::HostCalls for NoHost {
        async fn call_tool(&self, _: &str, _: Value) -> Result<Value, String> {
            Err("none".to_owned())
        }
        fn list_tools(&self) -> Vec<Value> {
            Vec::new()
        }
    }
    let sandbox = JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 4,
    });
    sandbox
        .run(JsJob {
            code: code.to_owned(),
            args: json!({}),
            context: JsCallContext {
                tool_name: "t".to_owned(),
                call_id: "c".to_owned(),
                conversation_id: None,
                user_id: "u".to_owned(),
            },
            permissions: PermissionSet::new(),
            limits: JsLimits::default(),
            host: Arc::new(NoHost),
            config: None,
            packages: Some(Arc::new(packages)),
            env: None,
        })
        .await
}

#[tokio::test]
async fn a_tree_resolves_by_range_installs_once_and_runs_from_the_cache_with_the_registry_gone() {
    let registry = Registry::start().await;
    for version in ["1.0.0", "1.4.0", "2.0.0"] {
        registry.publish_files(
            "leaf",
            version,
            &[
                ("package.json", r#"{"name": "leaf", "main": "index.js"}"#),
                ("index.js", &format!("exports.version = '{version}';")),
            ],
            json!({}),
        );
    }
    registry.publish_files(
        "top",
        "3.1.0",
        &[
            ("package.json", r#"{"name": "top", "type": "module", "exports": "./main.js"}"#),
            (
                "main.js",
                "import leaf from 'leaf';\nexport const describe = () => `top uses leaf ${leaf.version}`;",
            ),
        ],
        json!({"dependencies": {"leaf": "^1.0.0"}}),
    );
    let cache = tempfile::tempdir().unwrap();
    let install = installer(&registry.url, cache.path(), |_| {});
    let lock = install
        .install(&[dep("top", "^3"), dep("leaf", "~1.0")])
        .await
        .unwrap();
    assert_eq!(
        lock.root,
        BTreeMap::from([
            ("leaf".to_owned(), "leaf@1.0.0".to_owned()),
            ("top".to_owned(), "top@3.1.0".to_owned()),
        ])
    );
    // `top` wants ^1.0.0: the 1.0.0 already in the tree satisfies it.
    assert_eq!(
        lock.packages["top@3.1.0"].dependencies,
        BTreeMap::from([("leaf".to_owned(), "leaf@1.0.0".to_owned())])
    );
    assert_eq!(lock.packages.len(), 2);
    assert_eq!(cache_entries(cache.path()).len(), 2);
    let fetched = registry.tarball_requests();
    assert_eq!(fetched, 2);

    // A second tool with the same packages fetches no tarball.
    let again = install
        .install(&[dep("top", "3.1.0"), dep("leaf", "1.0.0")])
        .await
        .unwrap();
    assert_eq!(again, lock);
    assert_eq!(registry.tarball_requests(), fetched);

    // The registry gone (a closed port): the run reads the cache alone.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let offline = installer(&closed, cache.path(), |_| {});
    let before = registry.requests();
    let packages = offline.packages(&lock).await.unwrap();
    let res = run(
        "const { describe } = await import('top'); const leaf = await import('leaf'); return [describe(), leaf.version];",
        packages,
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!(["top uses leaf 1.0.0", "1.0.0"]));
    assert_eq!(registry.requests(), before, "the run reached the registry");

    // With an empty cache, the locked tarballs are fetched again (and checked) from the
    // registry; none is fetched from anywhere else.
    let empty = tempfile::tempdir().unwrap();
    let err = installer(&closed, empty.path(), |_| {})
        .packages(&lock)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not on the registry"), "{err}");
    let refetched = installer(&registry.url, empty.path(), |_| {})
        .packages(&lock)
        .await
        .unwrap();
    assert_eq!(refetched.packages.len(), 2);
    assert_eq!(registry.tarball_requests(), fetched + 2);
}

#[tokio::test]
async fn an_install_script_is_never_run() {
    let registry = Registry::start().await;
    let marker = tempfile::tempdir().unwrap();
    let pwned = marker.path().join("pwned");
    let script = format!("touch {}", pwned.display());
    registry.publish_files(
        "scripted",
        "1.0.0",
        &[
            (
                "package.json",
                &json!({"name": "scripted", "main": "index.js", "scripts": {"preinstall": script, "postinstall": script}}).to_string(),
            ),
            ("index.js", "module.exports = 'plain';"),
        ],
        json!({"scripts": {"preinstall": script, "postinstall": script}, "hasInstallScript": true}),
    );
    let cache = tempfile::tempdir().unwrap();
    let install = installer(&registry.url, cache.path(), |_| {});
    let lock = install.install(&[dep("scripted", "1")]).await.unwrap();
    assert_eq!(
        lock.packages["scripted@1.0.0"].scripts_not_run,
        ["preinstall", "postinstall"]
    );
    let res = run(
        "return (await import('scripted')).default;",
        install.packages(&lock).await.unwrap(),
    )
    .await;
    assert_eq!(res.content, json!("plain"));
    assert!(!pwned.exists(), "an install script ran");
    // No file of the package can be executed either.
    for entry in walk(cache.path()) {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&entry).unwrap().permissions(),
        );
        if entry.is_file() {
            assert_eq!(mode & 0o111, 0, "{} is executable", entry.display());
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[tokio::test]
async fn hostile_tarballs_are_refused_with_the_reason_and_leave_nothing() {
    let registry = Registry::start().await;
    let outside = tempfile::tempdir().unwrap();
    let file = |path: &'static str| Entry(path, b'0', b"x", "");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "traversal",
            tgz(&[
                file("package/index.js"),
                Entry("package/../../escaped.js", b'0', b"x", ""),
            ]),
            "would land outside the package",
        ),
        (
            "symlink",
            tgz(&[
                file("package/index.js"),
                Entry("package/link", b'2', b"", "/etc/passwd"),
            ]),
            "symlink 'package/link' -> '/etc/passwd': links are refused",
        ),
        (
            "hardlink",
            tgz(&[
                file("package/index.js"),
                Entry("package/hard", b'1', b"", "package/index.js"),
            ]),
            "hard link",
        ),
        (
            "many-files",
            {
                let names: Vec<String> = (0..30).map(|i| format!("package/f{i}.js")).collect();
                let entries: Vec<Entry<'_>> =
                    names.iter().map(|n| Entry(n, b'0', b"x", "")).collect();
                tgz(&entries)
            },
            "more than 20 files (the npm_max_files setting)",
        ),
        (
            "big-unpacked",
            tgz(&[Entry("package/big.js", b'0', &vec![b' '; 300_000], "")]),
            "unpacks to more than 200000 bytes",
        ),
    ];
    for (name, tarball, _) in &cases {
        registry.publish(name, "1.0.0", tarball.clone(), json!({}));
    }
    // A tarball whose bytes are not what the registry's integrity says.
    let sri = registry.publish(
        "tampered",
        "1.0.0",
        tgz(&[file("package/index.js")]),
        json!({}),
    );
    registry.state.tarballs.lock().unwrap().insert(
        "tampered/-/tampered-1.0.0.tgz".to_owned(),
        tgz(&[file("package/evil.js")]),
    );
    // A tarball larger than the compressed limit.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let huge: Vec<u8> = (0..400_000)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect();
    registry.publish(
        "huge",
        "1.0.0",
        tgz(&[Entry("package/noise.bin", b'0', &huge, "")]),
        json!({}),
    );
    // A tarball on another origin than the registry.
    registry.publish_files("elsewhere", "1.0.0", &[("index.js", "1")], json!({}));
    registry
        .state
        .packuments
        .lock()
        .unwrap()
        .get_mut("elsewhere")
        .unwrap()["versions"]["1.0.0"]["dist"]["tarball"] =
        json!("http://127.0.0.2:9/elsewhere-1.0.0.tgz");

    let cache = tempfile::tempdir().unwrap();
    let install = installer(&registry.url, cache.path(), |s| {
        s.max_files = 20;
        s.max_unpacked_bytes = 200_000;
        s.max_tarball_bytes = 300_000;
    });
    let mut all: Vec<(String, String)> = cases
        .iter()
        .map(|(name, _, expected)| ((*name).to_owned(), (*expected).to_owned()))
        .collect();
    all.push((
        "tampered".to_owned(),
        format!("does not match its integrity {sri}"),
    ));
    all.push((
        "huge".to_owned(),
        "over the limit of 300000 bytes (the npm_max_tarball_bytes setting)".to_owned(),
    ));
    all.push((
        "elsewhere".to_owned(),
        "is on http://127.0.0.2:9, not on the registry".to_owned(),
    ));
    for (name, expected) in all {
        let err = install.install(&[dep(&name, "^1")]).await.unwrap_err();
        assert!(
            matches!(err, PackageError::Refused(_)) && err.to_string().contains(&expected),
            "{name}: {err}"
        );
        assert!(
            cache_entries(cache.path()).is_empty(),
            "{name} left {:?}",
            cache_entries(cache.path())
        );
    }
    assert!(!outside.path().join("escaped.js").exists());
    assert!(!cache.path().parent().unwrap().join("escaped.js").exists());
}

#[tokio::test]
async fn the_operators_lists_and_the_declarations_rules_are_applied_before_any_download() {
    let registry = Registry::start().await;
    registry.publish_files(
        "fine",
        "1.0.0",
        &[("package.json", r#"{"name": "fine"}"#), ("index.js", "")],
        json!({"dependencies": {"@evil/thing": "*"}}),
    );
    registry.publish_files("@evil/thing", "1.0.0", &[("index.js", "")], json!({}));
    let cache = tempfile::tempdir().unwrap();
    let blocked = installer(&registry.url, cache.path(), |s| {
        s.block = vec!["@evil/*".to_owned()]
    });
    let err = blocked
        .install(&[dep("@evil/thing", "1")])
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("'@evil/thing' is blocked on this server (the npm_block setting)"),
        "{err}"
    );
    // Transitively too, and nothing of the tree is stored.
    let err = blocked.install(&[dep("fine", "1")]).await.unwrap_err();
    assert!(
        err.to_string().contains(
            "'fine@1.0.0' depends on @evil/thing@*: the package '@evil/thing' is blocked"
        ),
        "{err}"
    );
    assert_eq!(registry.tarball_requests(), 0);
    assert!(cache_entries(cache.path()).is_empty());

    let allowed = installer(&registry.url, cache.path(), |s| {
        s.allow = vec!["fine".to_owned()]
    });
    let err = allowed.install(&[dep("other", "1")]).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("not in this server's allowlist (the npm_allow setting)"),
        "{err}"
    );

    let install = installer(&registry.url, cache.path(), |s| s.max_dependencies = 1);
    for (deps, expected) in [
        (vec![dep("a", "1"), dep("b", "1")], "at most 1 dependencies"),
        (vec![dep("Bad Name", "1")], "is not an npm package name"),
        (
            vec![dep("x", "git+https://github.com/x/y")],
            "only registry versions are installed",
        ),
        (vec![dep("x", "")], "1 to 128 characters"),
    ] {
        let err = install.check(&deps).unwrap_err();
        assert!(err.to_string().contains(expected), "{deps:?}: {err}");
    }
    let err = install.install(&[dep("missing", "1")]).await.unwrap_err();
    assert!(
        err.to_string().contains("has no package 'missing'"),
        "{err}"
    );
    let err = install.install(&[dep("fine", "^2")]).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("no version of 'fine' satisfies '^2'"),
        "{err}"
    );

    let none = Installer::new(NpmSettings::default(), &EgressPolicy::default());
    let err = none.install(&[dep("fine", "1")]).await.unwrap_err();
    assert!(err.to_string().contains("npm_cache_dir"), "{err}");
}
