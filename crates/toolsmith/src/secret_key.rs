//! Which master key the Config Center uses, and when start-up refuses to go on.
//!
//! The key comes from `TOOLSMITH_SECRET_KEY` or `secret.key` next to the database
//! ([`toolsmith_secrets::SecretKey::find`]). Before it is used it is checked against what the
//! store already holds:
//! - no key and no sealed value in the store: a new key file is created (mode 0600);
//! - no key but sealed values exist: start-up stops and says how to restore the key — a new
//!   key would silently turn every stored secret into "missing configuration";
//! - a key that opens none of the sampled sealed values (a different key): start-up stops too.
//!
//! What this module does not do: read or show any secret; it only tries to open a few.

use std::path::Path;

use anyhow::Context as _;
use toolsmith_secrets::{Cipher, KEY_ENV, KeyLookup, KeySource, SecretKey, SecretPlace};
use toolsmith_store::{SealedSample, Store};

use crate::exit::CliError;

/// How many sealed values are tried at start-up (a wrong key opens none of them).
const SAMPLE: u32 = 16;

/// The key to use for the store at `key_dir`, checked against its sealed values.
pub async fn resolve(store: &dyn Store, key_dir: &Path) -> anyhow::Result<SecretKey> {
    let sample = store
        .sealed_values(SAMPLE)
        .await
        .context("cannot count the sealed values of the Config Center")?;
    let lookup = SecretKey::find(key_dir).context("cannot load the Config Center's secret key")?;
    match lookup {
        KeyLookup::Found(key, source) => {
            check(&key, &source, &sample)?;
            Ok(key)
        }
        KeyLookup::Missing { path } => {
            if sample.total > 0 {
                return Err(CliError::Store(missing_key_message(&path, sample.total)).into());
            }
            let (key, created) = SecretKey::load_or_create_file(&path)
                .context("cannot create the Config Center's secret key")?;
            if created {
                tracing::info!(file = %path.display(), "created a new secret key for the Config Center; back it up");
            }
            Ok(key)
        }
    }
}

/// Refuses a key that opens none of the sampled values; warns when only some open (those
/// entries were altered or copied between rows, which a different key does not explain).
fn check(key: &SecretKey, source: &KeySource, sample: &SealedSample) -> anyhow::Result<()> {
    if sample.values.is_empty() {
        return Ok(());
    }
    let cipher = Cipher::new(key);
    let opened = sample
        .values
        .iter()
        .filter(|v| {
            let place = SecretPlace {
                owner: &v.owner,
                service_id: &v.service_id,
                entry_id: &v.entry_id,
                field: &v.field,
            };
            cipher.open(&v.sealed, &place).is_ok()
        })
        .count();
    if opened == 0 {
        let from = match source {
            KeySource::Env => KEY_ENV.to_owned(),
            KeySource::File { path, .. } => format!("the key file {}", path.display()),
        };
        return Err(CliError::Store(format!(
            "the secret key from {from} cannot open the Config Center's sealed values ({} tried, \
             {} stored): it is not the key they were sealed with. Restore the original \
             secret.key from your backup (mode 0600, next to the database), or set {KEY_ENV} to \
             the key used before; nothing was changed",
            sample.values.len(),
            sample.total
        ))
        .into());
    }
    if opened < sample.values.len() {
        tracing::warn!(
            tried = sample.values.len(),
            opened,
            "some sealed Config Center values do not open with the secret key (altered, or copied between entries); those fields read as missing"
        );
    }
    Ok(())
}

fn missing_key_message(path: &Path, total: u64) -> String {
    let dir = path
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!(
        "the Config Center holds {total} sealed secret value(s), but the key that sealed them is \
         missing: {} does not exist and {KEY_ENV} is not set. A new key would make every stored \
         secret unreadable, so none was created. Restore secret.key from your backup into {dir} \
         (mode 0600), or set {KEY_ENV} to the key used before. If the key is lost for good, the \
         values cannot be recovered: delete the entries that hold them (SQL: DELETE FROM \
         config_entries WHERE field_values LIKE '%\"secret\"%') and enter those secrets again",
        path.display()
    )
}
