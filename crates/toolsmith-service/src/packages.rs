//! npm dependencies of JS tools: resolved from the registry when a tool is created or
//! updated, unpacked into a content-addressed cache, and handed to the sandbox's module loader
//! as directories ([`JsPackages`]) when the tool runs — offline: a run never reaches the
//! registry.
//!
//! - Resolution (`resolve` below): each declared `{name, version}` and, transitively, each
//!   package's `dependencies`, non-optional `peerDependencies` and (best effort)
//!   `optionalDependencies`, by npm's semver ranges (`semver.rs`) or a dist-tag, one version
//!   per range, reusing a version already in the tree when it satisfies. Only registry
//!   versions: git, file, URL and alias specifiers are refused.
//! - Every package name passes the operator's allowlist and blocklist; the tree is bounded
//!   in packages, and each tarball in size, files and unpacked bytes (`NpmSettings`).
//! - Requests go only to the registry's origin (the operator's `npm_registry`; a tarball or a
//!   redirect anywhere else is refused), with rustls on the bundled roots plus, when set, the
//!   operator's `npm_ca_file` (npm's `cafile`: a registry mirror or a TLS-inspecting proxy), no
//!   proxy from the environment, bounded in time and size. Not through the egress guard: the
//!   guard stops URLs a tool chose from reaching private addresses, and here no URL is a
//!   tool's. Each tarball's sha512 is checked against the registry's `integrity` before a byte
//!   is unpacked, and unpacking is data only (`tarball.rs`): no symlink, no path outside, no
//!   execute bit. **No install script ever runs**: nothing here runs anything.
//! - The cache (`<cache dir>/<hex of the sha512>/`) is shared by every tool and every process
//!   using the same directory: an entry appears by an atomic rename once complete, and is never
//!   changed after. What a tool resolved (its [`PackageLock`]) is stored with the tool, so a
//!   process with an empty cache fetches exactly those tarballs (checked again) before the run.

mod semver;
mod tarball;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha512};
use toolsmith_egress::EgressPolicy;
use toolsmith_sandbox::{JsPackage, JsPackages};

use self::semver::Range;
use self::tarball::UnpackLimits;

/// The public npm registry, the default of [`NpmSettings::registry`].
pub const DEFAULT_NPM_REGISTRY: &str = "https://registry.npmjs.org";

/// The operator's settings for npm dependencies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSettings {
    /// The registry packages are resolved from (`npm_registry`).
    pub registry: String,
    /// The content-addressed cache of unpacked packages (`npm_cache_dir`, default
    /// `<data dir>/npm-cache`); `None`: dependencies are refused, saying so.
    pub cache_dir: Option<PathBuf>,
    /// Declared dependencies a tool may have (default 32).
    pub max_dependencies: usize,
    /// Packages in one tool's whole tree (default 200).
    pub max_packages: usize,
    /// Largest tarball, compressed (default 16 MiB).
    pub max_tarball_bytes: u64,
    /// Most bytes one tool's packages unpack to, together (default 64 MiB).
    pub max_unpacked_bytes: u64,
    /// Most files one tool's packages hold, together (default 10,000).
    pub max_files: usize,
    /// When non-empty, only these packages (exact names, or `@scope/*`) may be installed.
    pub allow: Vec<String>,
    /// These packages (exact names, or `@scope/*`) are never installed.
    pub block: Vec<String>,
    /// Environment variables of the server whose values a tool reads in `process.env`
    /// (default none).
    pub process_env: Vec<String>,
    /// Extra trusted roots for the registry's TLS (a PEM bundle, npm's `cafile`), besides the
    /// bundled ones.
    pub ca_file: Option<PathBuf>,
}

impl Default for NpmSettings {
    fn default() -> Self {
        NpmSettings {
            registry: DEFAULT_NPM_REGISTRY.to_owned(),
            cache_dir: None,
            max_dependencies: 32,
            max_packages: 200,
            max_tarball_bytes: 16 * 1024 * 1024,
            max_unpacked_bytes: 64 * 1024 * 1024,
            max_files: 10_000,
            allow: Vec::new(),
            block: Vec::new(),
            process_env: Vec::new(),
            ca_file: None,
        }
    }
}

/// A dependency as a tool declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dependency {
    pub name: String,
    /// A semver range or a dist-tag (`^5.5.0`, `1.x`, `latest`).
    pub version: String,
}

/// What a tool's dependencies resolved to: every package of the tree, exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageLock {
    /// The tool's own dependencies: name → `name@version`.
    pub root: BTreeMap<String, String>,
    /// By `name@version`.
    pub packages: BTreeMap<String, LockedPackage>,
}

/// One package of a [`PackageLock`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockedPackage {
    pub name: String,
    pub version: String,
    /// `sha512-<base64>`: the cache entry, and what the tarball is checked against.
    pub integrity: String,
    pub tarball: String,
    /// Its dependencies: name → `name@version`.
    #[serde(default)]
    pub dependencies: BTreeMap<String, String>,
    /// Install scripts it declares (never run), for the record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts_not_run: Vec<String>,
}

/// Why dependencies could not be installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// The declaration or a package is refused (name, range, list, limit, hostile tarball).
    #[error("{0}")]
    Refused(String),
    /// The registry could not be reached or answered badly.
    #[error("{0}")]
    Registry(String),
}

/// Installs and finds packages.
#[derive(Clone)]
pub struct Installer {
    settings: Arc<NpmSettings>,
    /// The registry client, or why there is none.
    client: Result<reqwest::Client, String>,
    timeout: Duration,
}

impl std::fmt::Debug for Installer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installer")
            .field("registry", &self.settings.registry)
            .finish()
    }
}

/// What a package's registry entry says of one version.
#[derive(Debug, Deserialize)]
struct VersionInfo {
    #[serde(default)]
    dependencies: BTreeMap<String, String>,
    #[serde(default, rename = "optionalDependencies")]
    optional_dependencies: BTreeMap<String, String>,
    #[serde(default, rename = "peerDependencies")]
    peer_dependencies: BTreeMap<String, String>,
    #[serde(default, rename = "peerDependenciesMeta")]
    peer_dependencies_meta: BTreeMap<String, Value>,
    #[serde(default)]
    scripts: BTreeMap<String, Value>,
    #[serde(default, rename = "hasInstallScript")]
    has_install_script: bool,
    dist: Dist,
}

#[derive(Debug, Deserialize)]
struct Dist {
    tarball: String,
    #[serde(default)]
    integrity: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Packument {
    #[serde(default, rename = "dist-tags")]
    dist_tags: BTreeMap<String, String>,
    #[serde(default)]
    versions: BTreeMap<String, Value>,
}

const INSTALL_SCRIPTS: [&str; 3] = ["preinstall", "install", "postinstall"];

impl Installer {
    /// An installer with `settings`; the time limit of each request is `egress`'s (at least
    /// 60 s).
    pub fn new(settings: NpmSettings, egress: &EgressPolicy) -> Installer {
        let client = registry_client(&settings);
        Installer {
            settings: Arc::new(settings),
            client,
            timeout: egress.total_timeout.max(Duration::from_secs(60)),
        }
    }

    pub fn settings(&self) -> &NpmSettings {
        &self.settings
    }

    /// Checks the declaration alone (names, ranges, counts, lists): no network.
    pub fn check(&self, declared: &[Dependency]) -> Result<(), PackageError> {
        if declared.len() > self.settings.max_dependencies {
            return Err(PackageError::Refused(format!(
                "a tool may declare at most {} dependencies (the npm_max_dependencies setting); this one declares {}",
                self.settings.max_dependencies,
                declared.len()
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for dependency in declared {
            check_name(&dependency.name)?;
            if !seen.insert(dependency.name.as_str()) {
                return Err(PackageError::Refused(format!(
                    "the dependency '{}' is declared twice",
                    dependency.name
                )));
            }
            if dependency.version.is_empty() || dependency.version.len() > 128 {
                return Err(PackageError::Refused(format!(
                    "the version of '{}' must be 1 to 128 characters: a semver range or a dist-tag",
                    dependency.name
                )));
            }
            check_spec(&dependency.name, &dependency.version)?;
            self.check_listed(&dependency.name)?;
        }
        Ok(())
    }

    /// Resolves `declared` and its whole tree from the registry, installs every package into
    /// the cache, and returns the lock. Nothing is stored for a tree that fails.
    pub async fn install(&self, declared: &[Dependency]) -> Result<PackageLock, PackageError> {
        self.check(declared)?;
        let cache = self.cache_dir()?;
        let mut lock = PackageLock::default();
        let mut packuments: BTreeMap<String, Packument> = BTreeMap::new();
        // (requester key or None for the tool, name, range, optional)
        let mut queue: std::collections::VecDeque<(Option<String>, String, String, bool)> =
            declared
                .iter()
                .map(|d| (None, d.name.clone(), d.version.clone(), false))
                .collect();
        while let Some((requester, name, spec, optional)) = queue.pop_front() {
            let resolved = self.resolve_one(&mut packuments, &lock, &name, &spec).await;
            let (key, info) = match resolved {
                Ok(found) => found,
                Err(_) if optional => continue,
                Err(e) => {
                    let who = requester
                        .as_deref()
                        .map_or_else(|| "the tool".to_owned(), |r| format!("'{r}'"));
                    return Err(match e {
                        PackageError::Refused(m) => {
                            PackageError::Refused(format!("{who} depends on {name}@{spec}: {m}"))
                        }
                        PackageError::Registry(m) => PackageError::Registry(m),
                    });
                }
            };
            match &requester {
                None => {
                    lock.root.insert(name.clone(), key.clone());
                }
                Some(requester) => {
                    if let Some(parent) = lock.packages.get_mut(requester) {
                        parent.dependencies.insert(name.clone(), key.clone());
                    }
                }
            }
            let Some(info) = info else { continue };
            if lock.packages.len() >= self.settings.max_packages {
                return Err(PackageError::Refused(format!(
                    "the tool's dependencies come to more than {} packages (the npm_max_packages setting)",
                    self.settings.max_packages
                )));
            }
            let version = key
                .rsplit_once('@')
                .map(|(_, v)| v.to_owned())
                .unwrap_or_default();
            let integrity = info
                .dist
                .integrity
                .clone()
                .filter(|i| sha512_of_integrity(i).is_some())
                .ok_or_else(|| {
                    PackageError::Refused(format!(
                        "the registry gives no sha512 integrity for {key}; it cannot be checked, so it is refused"
                    ))
                })?;
            let mut scripts_not_run: Vec<String> = INSTALL_SCRIPTS
                .iter()
                .filter(|s| info.scripts.contains_key(**s))
                .map(|s| (*s).to_owned())
                .collect();
            if info.has_install_script && scripts_not_run.is_empty() {
                scripts_not_run.push("install".to_owned());
            }
            lock.packages.insert(
                key.clone(),
                LockedPackage {
                    name: name.clone(),
                    version,
                    integrity,
                    tarball: info.dist.tarball.clone(),
                    dependencies: BTreeMap::new(),
                    scripts_not_run,
                },
            );
            for (dep, range) in &info.dependencies {
                queue.push_back((Some(key.clone()), dep.clone(), range.clone(), false));
            }
            for (dep, range) in &info.peer_dependencies {
                let optional_peer = info
                    .peer_dependencies_meta
                    .get(dep)
                    .and_then(|m| m.get("optional"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if !optional_peer && !info.dependencies.contains_key(dep) {
                    queue.push_back((Some(key.clone()), dep.clone(), range.clone(), false));
                }
            }
            for (dep, range) in &info.optional_dependencies {
                queue.push_back((Some(key.clone()), dep.clone(), range.clone(), true));
            }
        }
        let mut files = 0usize;
        let mut bytes = 0u64;
        for package in lock.packages.values() {
            let limits = UnpackLimits {
                max_files: self.settings.max_files.saturating_sub(files),
                max_bytes: self.settings.max_unpacked_bytes.saturating_sub(bytes),
            };
            let unpacked = self.ensure(&cache, package, limits).await?;
            files += unpacked.files;
            bytes += unpacked.bytes;
        }
        Ok(lock)
    }

    /// The packages of `lock` as the sandbox reads them, fetching (and checking) any the
    /// cache lacks — the tarballs the lock names, nothing resolved anew.
    pub async fn packages(&self, lock: &PackageLock) -> Result<JsPackages, PackageError> {
        let cache = self.cache_dir()?;
        let keys: Vec<&String> = lock.packages.keys().collect();
        let index = |key: &str| keys.iter().position(|k| k.as_str() == key);
        let mut packages = Vec::with_capacity(keys.len());
        for package in lock.packages.values() {
            let limits = UnpackLimits {
                max_files: self.settings.max_files,
                max_bytes: self.settings.max_unpacked_bytes,
            };
            self.ensure(&cache, package, limits).await?;
            packages.push(JsPackage {
                name: package.name.clone(),
                version: package.version.clone(),
                dir: entry_dir(&cache, &package.integrity)?,
                dependencies: package
                    .dependencies
                    .iter()
                    .filter_map(|(name, key)| index(key).map(|i| (name.clone(), i)))
                    .collect(),
            });
        }
        Ok(JsPackages {
            root: lock
                .root
                .iter()
                .filter_map(|(name, key)| index(key).map(|i| (name.clone(), i)))
                .collect(),
            packages,
        })
    }

    /// `process.env` for runs: the listed variables of the server's environment that are set.
    pub fn process_env(&self) -> BTreeMap<String, String> {
        self.settings
            .process_env
            .iter()
            .filter_map(|name| std::env::var(name).ok().map(|value| (name.clone(), value)))
            .collect()
    }

    fn cache_dir(&self) -> Result<PathBuf, PackageError> {
        self.settings.cache_dir.clone().ok_or_else(|| {
            PackageError::Refused(
                "npm dependencies are not available on this server: it has no package cache (the operator sets npm_cache_dir, by default <data dir>/npm-cache)".to_owned(),
            )
        })
    }

    fn check_listed(&self, name: &str) -> Result<(), PackageError> {
        let matches = |pattern: &String| {
            pattern == name
                || pattern
                    .strip_suffix("/*")
                    .is_some_and(|scope| name.starts_with(&format!("{scope}/")))
        };
        if self.settings.block.iter().any(matches) {
            return Err(PackageError::Refused(format!(
                "the package '{name}' is blocked on this server (the npm_block setting)"
            )));
        }
        if !self.settings.allow.is_empty() && !self.settings.allow.iter().any(matches) {
            return Err(PackageError::Refused(format!(
                "the package '{name}' is not in this server's allowlist (the npm_allow setting)"
            )));
        }
        Ok(())
    }

    /// The version of `name` that `spec` picks: one already in the tree if it satisfies, else
    /// the registry's highest. `None` info: the key was already in the tree.
    async fn resolve_one(
        &self,
        packuments: &mut BTreeMap<String, Packument>,
        lock: &PackageLock,
        name: &str,
        spec: &str,
    ) -> Result<(String, Option<VersionInfo>), PackageError> {
        check_name(name)?;
        self.check_listed(name)?;
        check_spec(name, spec)?;
        let range = Range::parse(spec).ok();
        if let Some(range) = &range {
            let existing = lock
                .packages
                .values()
                .filter(|p| p.name == name)
                .filter_map(|p| ::semver::Version::parse(&p.version).ok())
                .filter(|v| range.satisfies(v))
                .max();
            if let Some(version) = existing {
                return Ok((format!("{name}@{version}"), None));
            }
        }
        if !packuments.contains_key(name) {
            let packument = self.packument(name).await?;
            packuments.insert(name.to_owned(), packument);
        }
        let packument = packuments
            .get(name)
            .ok_or_else(|| PackageError::Registry(format!("no registry entry for '{name}'")))?;
        let version = match (&range, packument.dist_tags.get(spec)) {
            (_, Some(tagged)) => tagged.clone(),
            (Some(range), None) => {
                let versions: Vec<::semver::Version> = packument
                    .versions
                    .keys()
                    .filter_map(|v| ::semver::Version::parse(v).ok())
                    .collect();
                let latest = packument
                    .dist_tags
                    .get("latest")
                    .and_then(|v| ::semver::Version::parse(v).ok());
                // npm prefers the `latest` tag when it satisfies.
                match latest.filter(|v| range.satisfies(v)) {
                    Some(latest) => latest.to_string(),
                    None => range
                        .max_satisfying(versions.iter())
                        .map(ToString::to_string)
                        .ok_or_else(|| {
                            PackageError::Refused(format!(
                                "no version of '{name}' satisfies '{spec}'"
                            ))
                        })?,
                }
            }
            (None, None) => {
                return Err(PackageError::Refused(format!(
                    "'{spec}' is neither a semver range nor a dist-tag of '{name}'"
                )));
            }
        };
        let key = format!("{name}@{version}");
        if lock.packages.contains_key(&key) {
            return Ok((key, None));
        }
        let info = packument.versions.get(&version).cloned().ok_or_else(|| {
            PackageError::Refused(format!("'{name}' has no version {version} in the registry"))
        })?;
        let info: VersionInfo = serde_json::from_value(info).map_err(|e| {
            PackageError::Registry(format!(
                "the registry's entry for {key} cannot be read: {e}"
            ))
        })?;
        Ok((key, Some(info)))
    }

    async fn packument(&self, name: &str) -> Result<Packument, PackageError> {
        let url = format!(
            "{}/{}",
            self.settings.registry.trim_end_matches('/'),
            name.replace('/', "%2f")
        );
        let response = self
            .get(
                &url,
                "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
                MAX_PACKUMENT_BYTES,
            )
            .await?;
        if response.over {
            return Err(PackageError::Refused(format!(
                "the registry's entry for '{name}' is larger than {MAX_PACKUMENT_BYTES} bytes"
            )));
        }
        if response.status == 404 {
            return Err(PackageError::Refused(format!(
                "the registry {} has no package '{name}'",
                self.settings.registry
            )));
        }
        if response.status != 200 {
            return Err(PackageError::Registry(format!(
                "the registry answered {} for '{name}'",
                response.status
            )));
        }
        serde_json::from_slice(&response.body).map_err(|e| {
            PackageError::Registry(format!(
                "the registry's entry for '{name}' is not JSON: {e}"
            ))
        })
    }

    /// GETs `url` (on the registry's origin) and reads at most `max` bytes of its body.
    async fn get(&self, url: &str, accept: &str, max: u64) -> Result<Fetched, PackageError> {
        let unreachable = |e: &dyn std::fmt::Display| {
            PackageError::Registry(format!(
                "cannot reach the npm registry ({url}): {e}; the npm_registry setting names it"
            ))
        };
        let client = self.client.as_ref().map_err(|e| unreachable(e))?;
        let fetch = async {
            let mut response = client
                .get(url)
                .header(reqwest::header::ACCEPT, accept)
                .send()
                .await
                .map_err(|e| unreachable(&e))?;
            let status = response.status().as_u16();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| unreachable(&e))? {
                body.extend_from_slice(&chunk);
                if body.len() as u64 > max {
                    return Ok(Fetched {
                        status,
                        body,
                        over: true,
                    });
                }
            }
            Ok(Fetched {
                status,
                body,
                over: false,
            })
        };
        tokio::time::timeout(self.timeout, fetch)
            .await
            .unwrap_or_else(|_| Err(unreachable(&format!("no answer within {:?}", self.timeout))))
    }

    /// Makes sure `package` is in the cache: fetched, checked and unpacked if it is not.
    async fn ensure(
        &self,
        cache: &Path,
        package: &LockedPackage,
        limits: UnpackLimits,
    ) -> Result<tarball::Unpacked, PackageError> {
        let key = format!("{}@{}", package.name, package.version);
        let dir = entry_dir(cache, &package.integrity)?;
        if dir.is_dir() {
            return Ok(tarball::Unpacked::default());
        }
        self.check_listed(&package.name)?;
        let registry = url::Url::parse(&self.settings.registry).map_err(|e| {
            PackageError::Refused(format!("the npm_registry setting is not a URL: {e}"))
        })?;
        let tarball = url::Url::parse(&package.tarball).map_err(|e| {
            PackageError::Refused(format!("the tarball URL of {key} is not a URL: {e}"))
        })?;
        if tarball.origin() != registry.origin() {
            return Err(PackageError::Refused(format!(
                "the tarball of {key} is on {}, not on the registry {}: refused",
                tarball.origin().ascii_serialization(),
                registry.origin().ascii_serialization()
            )));
        }
        let response = self
            .get(
                tarball.as_str(),
                "application/octet-stream",
                self.settings.max_tarball_bytes,
            )
            .await?;
        if response.status != 200 {
            return Err(PackageError::Registry(format!(
                "the registry answered {} for the tarball of {key}",
                response.status
            )));
        }
        if response.over {
            return Err(PackageError::Refused(format!(
                "the tarball of {key} is over the limit of {} bytes (the npm_max_tarball_bytes setting)",
                self.settings.max_tarball_bytes
            )));
        }
        let expected = sha512_of_integrity(&package.integrity).unwrap_or_default();
        let actual = Sha512::digest(&response.body);
        if actual.as_slice() != expected.as_slice() {
            return Err(PackageError::Refused(format!(
                "the tarball of {key} does not match its integrity {}: refused (nothing was unpacked)",
                package.integrity
            )));
        }
        let cache = cache.to_path_buf();
        let body = response.body;
        let target = dir.clone();
        let label = key.clone();
        tokio::task::spawn_blocking(move || unpack_into_cache(&cache, &target, &body, limits))
            .await
            .map_err(|e| PackageError::Registry(format!("unpacking {label} failed: {e}")))?
            .map_err(|e| PackageError::Refused(format!("the package {key} is refused: {e}")))
    }
}

/// Largest registry entry of one package read (the abbreviated metadata of the largest
/// packages is a few MB).
const MAX_PACKUMENT_BYTES: u64 = 32 * 1024 * 1024;

/// A registry answer.
struct Fetched {
    status: u16,
    body: Vec<u8>,
    /// The body was longer than asked for (and was cut).
    over: bool,
}

/// The registry's client: rustls on `ring` with the bundled roots and the operator's
/// `ca_file`, no proxy from the environment, redirects only within the registry's origin.
fn registry_client(settings: &NpmSettings) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots: Vec<reqwest::Certificate> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| reqwest::Certificate::from_der(der).ok())
        .collect();
    if let Some(path) = &settings.ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| format!("cannot read npm_ca_file {}: {e}", path.display()))?;
        roots.extend(
            reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("npm_ca_file {} is not PEM: {e}", path.display()))?,
        );
    }
    let origin = url::Url::parse(&settings.registry)
        .map_err(|e| format!("the npm_registry setting is not a URL: {e}"))?
        .origin();
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else if attempt.url().origin() != origin {
            attempt.error("a redirect away from the registry's origin is refused")
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .tls_certs_only(roots)
        .no_proxy()
        .redirect(redirects)
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("toolsmith/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the registry's HTTP client: {e}"))
}

/// Unpacks into a fresh directory beside the entry, then renames it into place: an entry is
/// complete or absent. A hostile tarball leaves nothing behind.
fn unpack_into_cache(
    cache: &Path,
    target: &Path,
    tgz: &[u8],
    limits: UnpackLimits,
) -> Result<tarball::Unpacked, String> {
    std::fs::create_dir_all(cache).map_err(|e| format!("cannot create the cache: {e}"))?;
    let staging = cache.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&staging).map_err(|e| format!("cannot write the cache: {e}"))?;
    let result = tarball::unpack(tgz, &staging, limits);
    match result {
        Ok(unpacked) => match std::fs::rename(&staging, target) {
            Ok(()) => Ok(unpacked),
            Err(_) if target.is_dir() => {
                // Another process finished the same entry first: same bytes.
                let _ = std::fs::remove_dir_all(&staging);
                Ok(unpacked)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                Err(format!("cannot write the cache: {e}"))
            }
        },
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

/// The cache entry of an integrity: the hex of its sha512.
fn entry_dir(cache: &Path, integrity: &str) -> Result<PathBuf, PackageError> {
    let digest = sha512_of_integrity(integrity)
        .ok_or_else(|| PackageError::Refused(format!("'{integrity}' is not a sha512 integrity")))?;
    Ok(cache.join(hex::encode(digest)))
}

/// The sha512 digest of an SRI string (`sha512-<base64>`, maybe among other hashes).
fn sha512_of_integrity(integrity: &str) -> Option<Vec<u8>> {
    integrity.split_whitespace().find_map(|hash| {
        let encoded = hash.strip_prefix("sha512-")?;
        let encoded = encoded.split('?').next().unwrap_or(encoded);
        let digest = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()?;
        (digest.len() == 64).then_some(digest)
    })
}

/// npm's package-name rules.
fn check_name(name: &str) -> Result<(), PackageError> {
    let refused = |why: &str| {
        Err(PackageError::Refused(format!(
            "'{name}' is not an npm package name: {why}"
        )))
    };
    if name.is_empty() || name.len() > 214 {
        return refused("it must be 1 to 214 characters");
    }
    let bare = match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, rest)) if !scope.is_empty() && !rest.is_empty() => {
                if !scope.chars().all(name_char) {
                    return refused("the scope has characters npm does not allow");
                }
                rest
            }
            _ => return refused("a scoped name is @scope/name"),
        },
        None => name,
    };
    if bare.starts_with('.') || bare.starts_with('_') {
        return refused("it cannot start with . or _");
    }
    if !bare.chars().all(name_char) {
        return refused("only lowercase letters, digits and - . _ ~ are allowed");
    }
    Ok(())
}

fn name_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.' | '_' | '~')
}

/// Only registry versions: no git, file, URL, alias or workspace specifiers.
fn check_spec(name: &str, spec: &str) -> Result<(), PackageError> {
    let foreign = [
        "git",
        "http:",
        "https:",
        "file:",
        "link:",
        "npm:",
        "workspace:",
        "github:",
    ];
    if foreign.iter().any(|p| spec.starts_with(p)) || spec.contains('/') {
        return Err(PackageError::Refused(format!(
            "'{name}@{spec}': only registry versions are installed (a semver range or a dist-tag), not git, file, URL or alias specifiers"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
