//! Where the database is (`--data-dir` or `--database-url`) and opening the service on it.
//!
//! SQLite: `sqlite:///abs/path.db`, `sqlite://relative.db`, `sqlite:rel.db` or a plain path.
//! PostgreSQL: `postgres://user:password@host:port/database` (or `postgresql://`), for several
//! instances sharing one database; start-up waits for an unreachable server for
//! `--database-startup-timeout`, and fails at once on a wrong password or a missing database.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use toolsmith_service::{ToolService, ToolServiceSettings};
use toolsmith_store::{PgOptions, PgStore, SqliteStore, Store, StoreError};

use crate::exit::CliError;

/// The file name of the database inside `--data-dir`.
pub const DB_FILE: &str = "toolsmith.db";

/// How long start-up waits for a PostgreSQL server that is not reachable yet, by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// A database given with `--database-url`.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Sqlite(PathBuf),
    /// The URL as given (it may hold a password: never print it; see [`Database`]'s Display).
    Postgres(String),
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseUrl::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            DatabaseUrl::Postgres(url) => f
                .debug_tuple("Postgres")
                .field(&PgStore::redact(url))
                .finish(),
        }
    }
}

impl DatabaseUrl {
    /// Parses `sqlite:///abs.db`, `sqlite://rel.db`, `sqlite:rel.db`, a plain path, or a
    /// `postgres://` / `postgresql://` URL.
    pub fn parse(text: &str) -> Result<DatabaseUrl, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the database URL is empty".to_owned());
        }
        let path = match scheme_of(text) {
            None => text,
            Some(scheme) => match scheme.to_ascii_lowercase().as_str() {
                "sqlite" => {
                    let rest = text.get(scheme.len() + 1..).unwrap_or_default();
                    rest.strip_prefix("//").unwrap_or(rest)
                }
                "postgres" | "postgresql" => {
                    PgStore::check_url(text)?;
                    return Ok(DatabaseUrl::Postgres(text.to_owned()));
                }
                other => {
                    return Err(format!(
                        "unsupported database URL scheme '{other}'; expected sqlite:///abs/path.db, \
                         sqlite://relative.db, a file path, or postgres://user@host/database"
                    ));
                }
            },
        };
        if path.is_empty() {
            return Err("the SQLite URL names no file (expected sqlite:///abs/path.db)".to_owned());
        }
        if path.contains('?') {
            return Err(format!(
                "query parameters in SQLite URLs are not supported: '{text}'"
            ));
        }
        Ok(DatabaseUrl::Sqlite(PathBuf::from(path)))
    }
}

/// `scheme` of `scheme:…` when the text starts like a URL (RFC 3986 scheme characters).
fn scheme_of(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && scheme.len() > 1;
    valid.then_some(scheme)
}

/// Where the store is, resolved.
#[derive(Clone, PartialEq, Eq)]
pub enum Database {
    /// The SQLite file (the Config Center's key file sits next to it).
    Sqlite(PathBuf),
    /// A PostgreSQL database; the key comes from `TOOLSMITH_SECRET_KEY` or `key_dir/secret.key`
    /// (every instance needs the same key).
    Postgres { url: String, key_dir: PathBuf },
}

impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Database::Sqlite(path) => write!(f, "{}", path.display()),
            Database::Postgres { url, .. } => f.write_str(&PgStore::redact(url)),
        }
    }
}

impl Database {
    /// The global option that points another `toolsmith` command at this store, for hints:
    /// `--data-dir DIR` for the default file name, else `--database-url URL` (a PostgreSQL
    /// URL without its password: the person adds it).
    pub fn cli_option(&self) -> String {
        match self {
            Database::Sqlite(path) if path.file_name() == Some(DB_FILE.as_ref()) => {
                let dir = path
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or_else(|| Path::new("."));
                format!("--data-dir {}", shell_word(&dir.display().to_string()))
            }
            Database::Sqlite(path) => {
                format!("--database-url {}", shell_word(&path.display().to_string()))
            }
            Database::Postgres { url, .. } => {
                format!("--database-url {}", shell_word(&PgStore::redact(url)))
            }
        }
    }
}

/// `text` as one shell word: as it is when it holds only safe characters, else single-quoted.
fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@=,".contains(c));
    if safe {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Database({self})")
    }
}

/// The database: `--database-url` if given, else `DIR/toolsmith.db`.
pub fn database_location(data_dir: &Path, url: Option<&DatabaseUrl>) -> Database {
    match url {
        Some(DatabaseUrl::Sqlite(path)) => Database::Sqlite(path.clone()),
        Some(DatabaseUrl::Postgres(url)) => Database::Postgres {
            url: url.clone(),
            key_dir: data_dir.to_path_buf(),
        },
        None => Database::Sqlite(data_dir.join(DB_FILE)),
    }
}

/// Opens the store and the service on it. `startup_timeout` bounds how long an unreachable
/// PostgreSQL server is waited for.
pub async fn open_service(
    database: &Database,
    config: ToolServiceSettings,
    startup_timeout: Duration,
) -> anyhow::Result<Arc<ToolService>> {
    let (store, key_dir): (Arc<dyn Store>, PathBuf) = match database {
        Database::Sqlite(path) => (Arc::new(open_sqlite(path).await?), sqlite_key_dir(path)),
        Database::Postgres { url, key_dir } => {
            let options = PgOptions {
                startup_timeout,
                ..PgOptions::default()
            };
            let store = PgStore::connect(url, &options).await.map_err(|e| {
                let shown = PgStore::redact(url);
                match e {
                    StoreError::Unreachable { .. } | StoreError::ConnectRefused { .. } => {
                        anyhow::Error::new(CliError::Store(e.to_string()))
                    }
                    other => anyhow::Error::new(other)
                        .context(format!("cannot open the Toolsmith database {shown}")),
                }
            })?;
            (Arc::new(store), key_dir.clone())
        }
    };
    open_on(database, store, &key_dir, config).await
}

/// Opens the SQLite file (creating it and its directory if needed).
async fn open_sqlite(path: &Path) -> anyhow::Result<SqliteStore> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
        && !dir.exists()
    {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::Store(format!(
                "cannot create the data directory {}: {e}",
                dir.display()
            ))
        })?;
    }
    let store = SqliteStore::open(path).await.map_err(|e| match e {
        // The store names the file; make sure the message also says it was not changed.
        StoreError::Corrupt { .. } | StoreError::UnknownSchema { .. } => {
            if e.to_string().contains("untouched") {
                anyhow::Error::new(e)
            } else {
                anyhow::Error::new(e).context(format!(
                    "cannot open the Toolsmith database {} (the file was left untouched)",
                    path.display()
                ))
            }
        }
        _ => anyhow::Error::new(e).context(format!(
            "cannot open the Toolsmith database {}",
            path.display()
        )),
    })?;
    Ok(store)
}

/// SQLite keeps the Config Center's key file next to the database.
fn sqlite_key_dir(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."))
        .to_path_buf()
}

/// The service on an opened store. The Config Center's key: TOOLSMITH_SECRET_KEY, or
/// `secret.key` in `key_dir` (created with mode 0600 only for a store that holds no sealed
/// value yet; see [`crate::secret_key`]).
async fn open_on(
    database: &Database,
    store: Arc<dyn Store>,
    key_dir: &Path,
    config: ToolServiceSettings,
) -> anyhow::Result<Arc<ToolService>> {
    let key = crate::secret_key::resolve(store.as_ref(), key_dir).await?;
    let connectors = toolsmith_service::Connectors {
        cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
        ..toolsmith_service::Connectors::default()
    };
    let service = match ToolService::open_with(config, store, connectors).await {
        Ok(service) => service,
        // What the configuration asks for cannot be honoured (a policy, tool groups or egress
        // rule that does not hold): the store is fine, the configuration needs the fix.
        Err(toolsmith_service::ServiceError::Validation(why)) => {
            return Err(
                crate::settings::ConfigError(format!("invalid configuration: {why}")).into(),
            );
        }
        Err(e) => {
            return Err(CliError::Store(e.to_string()))
                .with_context(|| format!("cannot load the tools stored in {database}"));
        }
    };
    for warning in service.startup_warnings() {
        tracing::warn!("{warning}");
    }
    Ok(service)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(text: &str) -> Result<PathBuf, String> {
        match DatabaseUrl::parse(text)? {
            DatabaseUrl::Sqlite(path) => Ok(path),
            DatabaseUrl::Postgres(url) => Err(format!("postgres: {url}")),
        }
    }

    #[test]
    fn sqlite_urls_and_paths() {
        assert_eq!(
            path_of("sqlite:///var/lib/ts.db"),
            Ok(PathBuf::from("/var/lib/ts.db"))
        );
        assert_eq!(path_of("sqlite://ts.db"), Ok(PathBuf::from("ts.db")));
        assert_eq!(path_of("sqlite:ts.db"), Ok(PathBuf::from("ts.db")));
        assert_eq!(path_of("SQLITE://a/b.db"), Ok(PathBuf::from("a/b.db")));
        assert_eq!(path_of("data/ts.db"), Ok(PathBuf::from("data/ts.db")));
        assert_eq!(path_of("/abs/ts.db"), Ok(PathBuf::from("/abs/ts.db")));
    }

    #[test]
    fn postgres_urls_are_taken_and_never_shown_with_their_password() {
        for url in [
            "postgres://u@h/db",
            "postgresql://h/db",
            "postgres://u:s3cret@db.internal:6432/toolsmith",
        ] {
            assert_eq!(
                DatabaseUrl::parse(url),
                Ok(DatabaseUrl::Postgres(url.to_owned()))
            );
        }
        let parsed = DatabaseUrl::parse("postgres://u:s3cret@h:6432/ts").unwrap();
        assert!(!format!("{parsed:?}").contains("s3cret"));
        let db = database_location(Path::new("data"), Some(&parsed));
        assert_eq!(db.to_string(), "postgres://u:***@h:6432/ts");
        assert!(!format!("{db:?}").contains("s3cret"));
        let err = DatabaseUrl::parse("postgres://u:s3cret@h:notaport/ts").unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn other_urls_are_refused_clearly() {
        assert!(
            path_of("mysql://h/db")
                .unwrap_err()
                .contains("unsupported database URL scheme 'mysql'")
        );
        assert!(path_of("sqlite://").is_err());
        assert!(path_of("").is_err());
        assert!(path_of("sqlite://x.db?mode=ro").is_err());
    }
}
