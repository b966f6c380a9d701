//! Where the database is (`--data-dir` or `--database-url`) and opening the service on it.
//!
//! Only SQLite is built in: `sqlite:///abs/path.db`, `sqlite://relative.db` and plain paths are
//! accepted; a PostgreSQL URL gets a clear "not supported in this build yet".

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use toolsmith_service::{ServiceConfig, ToolService};
use toolsmith_store::{SqliteStore, StoreError};

use crate::exit::CliError;

/// The file name of the database inside `--data-dir`.
pub const DB_FILE: &str = "toolsmith.db";

/// A database location given with `--database-url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    pub path: PathBuf,
}

impl DatabaseUrl {
    /// Parses `sqlite:///abs.db`, `sqlite://rel.db`, `sqlite:rel.db` or a plain path.
    pub fn parse(text: &str) -> Result<DatabaseUrl, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the database URL is empty".to_owned());
        }
        let path = match scheme_of(text) {
            None => text,
            Some(scheme) => match scheme.to_ascii_lowercase().as_str() {
                "sqlite" => {
                    let rest = &text[scheme.len() + 1..];
                    rest.strip_prefix("//").unwrap_or(rest)
                }
                "postgres" | "postgresql" => {
                    return Err(
                        "PostgreSQL is not supported in this build yet; use a SQLite \
                         URL (sqlite:///path/to/toolsmith.db) or --data-dir"
                            .to_owned(),
                    );
                }
                other => {
                    return Err(format!(
                        "unsupported database URL scheme '{other}'; expected sqlite:///abs/path.db, \
                         sqlite://relative.db or a file path"
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
        Ok(DatabaseUrl {
            path: PathBuf::from(path),
        })
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

/// The database file: `--database-url` if given, else `DIR/toolsmith.db`.
pub fn database_path(data_dir: &Path, url: Option<&DatabaseUrl>) -> PathBuf {
    match url {
        Some(url) => url.path.clone(),
        None => data_dir.join(DB_FILE),
    }
}

/// Opens the store (creating the file and its directory if needed) and the service on it.
pub async fn open_service(path: &Path, config: ServiceConfig) -> anyhow::Result<Arc<ToolService>> {
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
    // The Config Center's key: TOOLSMITH_SECRET_KEY, or `secret.key` next to the database
    // (created with mode 0600 on first start).
    let key_dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let (key, source) = toolsmith_secrets::SecretKey::load(key_dir)
        .context("cannot load the Config Center's secret key")?;
    if let toolsmith_secrets::KeySource::File {
        path,
        created: true,
    } = &source
    {
        tracing::info!(file = %path.display(), "created a new secret key for the Config Center; back it up");
    }
    let connectors = toolsmith_service::Connectors {
        cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
        ..toolsmith_service::Connectors::default()
    };
    let service = ToolService::open_with(config, Arc::new(store), connectors)
        .await
        .map_err(|e| CliError::Store(e.to_string()))
        .with_context(|| format!("cannot load the tools stored in {}", path.display()))?;
    for warning in service.startup_warnings() {
        tracing::warn!("{warning}");
    }
    Ok(service)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(text: &str) -> Result<PathBuf, String> {
        DatabaseUrl::parse(text).map(|u| u.path)
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
    fn other_urls_are_refused_clearly() {
        for url in ["postgres://u@h/db", "postgresql://h/db"] {
            let err = path_of(url).unwrap_err();
            assert!(
                err.contains("PostgreSQL is not supported in this build yet"),
                "{err}"
            );
        }
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
