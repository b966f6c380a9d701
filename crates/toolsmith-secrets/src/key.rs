//! The master key: where it comes from, how the key file is created and when it is refused.
//!
//! Order: the environment variable [`KEY_ENV`] if it is set (a bad value is an error, never a
//! fallback), else the file [`KEY_FILE`] in the data dir. [`SecretKey::find`] never creates the
//! file: whoever starts the process decides whether a missing key may be replaced (only when
//! nothing sealed exists yet) and then calls [`SecretKey::load_or_create_file`].

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use rand::TryRng;
use rand::rngs::SysRng;
use zeroize::{Zeroize, Zeroizing};

use crate::SecretError;

/// The environment variable holding the master key.
pub const KEY_ENV: &str = "TOOLSMITH_SECRET_KEY";

/// The key file's name inside the data dir.
pub const KEY_FILE: &str = "secret.key";

/// Key length in bytes (AES-256).
const KEY_LEN: usize = 32;

/// A key file larger than this is not a key file.
const MAX_KEY_FILE_LEN: u64 = 1024;

/// The 32-byte master key. Wiped from memory on drop; `Debug` never shows it.
#[derive(Clone)]
pub struct SecretKey {
    bytes: Zeroizing<[u8; KEY_LEN]>,
}

/// What [`SecretKey::find`] found.
#[derive(Debug)]
pub enum KeyLookup {
    /// A usable key, and where it came from.
    Found(SecretKey, KeySource),
    /// No [`KEY_ENV`] and no key file at `path` (nothing was created).
    Missing { path: PathBuf },
}

/// Where the key in use came from (for a start-up log line; it holds no key material).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Env,
    File { path: PathBuf, created: bool },
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

impl SecretKey {
    /// A fresh random key from the operating system's random source.
    pub fn generate() -> Result<SecretKey, SecretError> {
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        SysRng
            .try_fill_bytes(bytes.as_mut())
            .map_err(|e| SecretError::Random(e.to_string()))?;
        Ok(SecretKey { bytes })
    }

    /// The key from [`KEY_ENV`] if set, else from `<data_dir>/secret.key` if that file exists.
    /// Creates nothing.
    pub fn find(data_dir: &Path) -> Result<KeyLookup, SecretError> {
        SecretKey::find_with(std::env::var_os(KEY_ENV), data_dir)
    }

    /// [`SecretKey::find`] with the environment value given (testable without touching the
    /// process environment).
    pub(crate) fn find_with(
        env_value: Option<std::ffi::OsString>,
        data_dir: &Path,
    ) -> Result<KeyLookup, SecretError> {
        if let Some(value) = env_value {
            let text = value.into_string().map_err(|_| SecretError::BadEnvKey {
                reason: "it is not valid UTF-8".to_owned(),
            })?;
            let text = Zeroizing::new(text);
            return Ok(KeyLookup::Found(
                SecretKey::from_text(&text)?,
                KeySource::Env,
            ));
        }
        let path = data_dir.join(KEY_FILE);
        match read_key_file(&path) {
            Ok(key) => Ok(KeyLookup::Found(
                key,
                KeySource::File {
                    path,
                    created: false,
                },
            )),
            Err(SecretError::KeyFileIo { source, .. }) if source.kind() == ErrorKind::NotFound => {
                Ok(KeyLookup::Missing { path })
            }
            Err(e) => Err(e),
        }
    }

    /// The key from [`KEY_ENV`] if set, else from (or newly in) `<data_dir>/secret.key`.
    #[cfg(test)]
    pub(crate) fn load_with(
        env_value: Option<std::ffi::OsString>,
        data_dir: &Path,
    ) -> Result<(SecretKey, KeySource), SecretError> {
        match SecretKey::find_with(env_value, data_dir)? {
            KeyLookup::Found(key, source) => Ok((key, source)),
            KeyLookup::Missing { path } => {
                let (key, created) = SecretKey::load_or_create_file(&path)?;
                Ok((key, KeySource::File { path, created }))
            }
        }
    }

    /// Parses a key written as 64 hex digits or as base64 (standard or URL-safe alphabet,
    /// padding optional). Surrounding whitespace is ignored.
    pub fn from_text(text: &str) -> Result<SecretKey, SecretError> {
        let bad = |reason: String| SecretError::BadEnvKey { reason };
        let text = text.trim();
        if text.is_empty() {
            return Err(bad("it is empty".to_owned()));
        }
        let decoded = decode_key_text(text).ok_or_else(|| {
            bad(format!(
                "it is {} characters of neither hex nor base64",
                text.chars().count()
            ))
        })?;
        SecretKey::from_bytes(&decoded)
            .map_err(|len| bad(format!("it decodes to {len} bytes, not {KEY_LEN}")))
    }

    /// Reads the key file at `path`, or creates it with a fresh key if it does not exist.
    /// Returns the key and whether the file was created now.
    ///
    /// Creation is race-free: the key goes to a private temporary file (mode `0600`) that is
    /// then hard-linked into place, so two processes starting at once end up with one key.
    pub fn load_or_create_file(path: &Path) -> Result<(SecretKey, bool), SecretError> {
        match read_key_file(path) {
            Ok(key) => return Ok((key, false)),
            Err(SecretError::KeyFileIo { source, .. }) if source.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let key = SecretKey::generate()?;
        if create_key_file(path, &key)? {
            Ok((key, true))
        } else {
            // Another process created it first: use its key.
            read_key_file(path).map(|key| (key, false))
        }
    }

    /// The raw key bytes (for the cipher).
    pub(crate) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.bytes
    }

    fn from_bytes(bytes: &[u8]) -> Result<SecretKey, usize> {
        let array: [u8; KEY_LEN] = bytes.try_into().map_err(|_| bytes.len())?;
        Ok(SecretKey {
            bytes: Zeroizing::new(array),
        })
    }

    fn to_text(&self) -> Zeroizing<String> {
        Zeroizing::new(STANDARD.encode(self.bytes.as_ref()))
    }
}

fn decode_key_text(text: &str) -> Option<Zeroizing<Vec<u8>>> {
    if text.len() == 2 * KEY_LEN
        && let Ok(bytes) = hex::decode(text)
    {
        return Some(Zeroizing::new(bytes));
    }
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .map(Zeroizing::new)
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SecretError {
    let path = path.to_path_buf();
    move |source| SecretError::KeyFileIo {
        action,
        path,
        source,
    }
}

/// Reads and checks an existing key file: a regular file (not a symlink), owned by nobody but
/// its user (no permission bits for group or others), holding exactly one 32-byte key.
///
/// The checks look at the file that was opened (`fstat` on the descriptor), not at the path
/// before opening it, so the file cannot be swapped between the check and the read; the open
/// never follows a symlink and never blocks on a FIFO.
fn read_key_file(path: &Path) -> Result<SecretKey, SecretError> {
    let refuse = |reason: String| SecretError::BadKeyFile {
        path: path.to_path_buf(),
        reason,
    };
    let not_regular = || {
        refuse(
            "it is not a regular file (a symlink, directory or device is never followed)"
                .to_owned(),
        )
    };
    let mut file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(file) => file,
        // O_NOFOLLOW on a symlink fails with ELOOP.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_regular()),
        Err(e) => return Err(io_error("read", path)(e)),
    };
    let meta = file.metadata().map_err(io_error("read", path))?;
    if !meta.file_type().is_file() {
        return Err(not_regular());
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(refuse(format!(
            "its permissions are {mode:04o}, so group or others can read or change it; run `chmod 600 {}` (and consider the key exposed)",
            path.display()
        )));
    }
    if meta.len() > MAX_KEY_FILE_LEN {
        return Err(refuse(format!(
            "it is {} bytes long; a key file holds one base64 line",
            meta.len()
        )));
    }
    let mut raw = Zeroizing::new(Vec::new());
    Read::by_ref(&mut file)
        .take(MAX_KEY_FILE_LEN)
        .read_to_end(&mut raw)
        .map_err(io_error("read", path))?;
    let text = std::str::from_utf8(&raw).map_err(|_| {
        refuse("its content is not text; a key file holds one base64 line".to_owned())
    })?;
    SecretKey::from_text(text).map_err(|e| match e {
        SecretError::BadEnvKey { reason } => refuse(format!("its content is not a key: {reason}")),
        other => other,
    })
}

/// `O_NOFOLLOW`: creating through a symlink fails instead of following it.
fn nofollow() -> i32 {
    libc::O_NOFOLLOW
}

/// Writes `key` to `path` unless a file is already there. Returns whether this call created it.
fn create_key_file(path: &Path, key: &SecretKey) -> Result<bool, SecretError> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        fs::create_dir_all(dir).map_err(io_error("create the directory of", path))?;
    }
    let tmp = temp_path(path)?;
    let written = write_private(&tmp, key);
    let linked = written.and_then(|()| match fs::hard_link(&tmp, path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error("create", path)(e)),
    });
    // The temporary name is gone either way; a failure to remove it leaves a private file.
    let _ = fs::remove_file(&tmp);
    let created = linked?;
    if created {
        sync_dir(path);
    }
    Ok(created)
}

fn temp_path(path: &Path) -> Result<PathBuf, SecretError> {
    let mut suffix = [0u8; 8];
    SysRng
        .try_fill_bytes(&mut suffix)
        .map_err(|e| SecretError::Random(e.to_string()))?;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", hex::encode(suffix)));
    Ok(path.with_file_name(name))
}

fn write_private(tmp: &Path, key: &SecretKey) -> Result<(), SecretError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nofollow())
        .open(tmp)
        .map_err(io_error("create", tmp))?;
    let mut line = key.to_text();
    line.push('\n');
    let res = file
        .write_all(line.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io_error("write", tmp));
    line.zeroize();
    res
}

/// Makes the new directory entry durable (best effort: not every file system supports it).
fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent()
        && let Ok(d) = fs::File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
    {
        let _ = d.sync_all();
    }
}
