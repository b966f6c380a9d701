//! Unpacking an npm tarball (gzip, then tar: ustar, pax and GNU long names) into a directory,
//! as data only: regular files (written without execute bits) and directories. A symlink, a
//! hard link, a device, an absolute path or one with `..` fails the whole tarball, naming the
//! entry; so does going over the file count or the unpacked size, which are counted while the
//! stream is read (a gzip bomb stops at the limit). Nothing in the package is ever run.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path};

use flate2::read::GzDecoder;

/// What one tarball may hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnpackLimits {
    pub(crate) max_files: usize,
    pub(crate) max_bytes: u64,
}

/// What an unpack wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Unpacked {
    pub(crate) files: usize,
    pub(crate) bytes: u64,
}

const BLOCK: usize = 512;

/// Unpacks the gzipped tar `tgz` into `into` (which must exist and be empty), stripping each
/// entry's first path component (`package/`) as npm does.
pub(crate) fn unpack(tgz: &[u8], into: &Path, limits: UnpackLimits) -> Result<Unpacked, String> {
    // Headers and padding are read too: at most two blocks of overhead per file.
    let budget = limits
        .max_bytes
        .saturating_add((limits.max_files as u64 + 4).saturating_mul(3 * BLOCK as u64));
    let mut stream = GzDecoder::new(tgz).take(budget.saturating_add(1));
    let mut read_total: u64 = 0;
    let mut out = Unpacked::default();
    let mut long_name: Option<String> = None;
    let mut pax_path: Option<String> = None;
    let mut header = [0u8; BLOCK];
    loop {
        if !read_block(&mut stream, &mut header, &mut read_total, budget)? {
            return Err("the tarball ends without its end-of-archive blocks".to_owned());
        }
        if header.iter().all(|b| *b == 0) {
            return Ok(out);
        }
        check_checksum(&header)?;
        let size = octal(header.get(124..136).unwrap_or(&[]))?;
        let kind = header.get(156).copied().unwrap_or(0);
        let raw_name = match (kind, pax_path.take(), long_name.take()) {
            (b'x' | b'g' | b'L', _, _) => String::new(),
            (_, Some(path), _) => path,
            (_, None, Some(name)) => name,
            _ => ustar_name(&header),
        };
        match kind {
            b'x' | b'L' => {
                let body = read_body(&mut stream, size, &mut read_total, budget, 1024 * 1024)?;
                if kind == b'L' {
                    long_name = Some(cstr(&body));
                } else {
                    pax_path = pax_value(&body, "path");
                }
                continue;
            }
            b'g' => {
                read_body(&mut stream, size, &mut read_total, budget, 1024 * 1024)?;
                continue;
            }
            _ => {}
        }
        let Some(relative) = strip_first(&raw_name) else {
            skip(&mut stream, size, &mut read_total, budget)?;
            continue;
        };
        match kind {
            b'0' | 0 | b'7' => {
                let target = checked_path(into, &relative, &raw_name)?;
                out.files += 1;
                if out.files > limits.max_files {
                    return Err(format!(
                        "the package has more than {} files (the npm_max_files setting)",
                        limits.max_files
                    ));
                }
                out.bytes = out.bytes.saturating_add(size);
                if out.bytes > limits.max_bytes {
                    return Err(format!(
                        "the package unpacks to more than {} bytes (the npm_max_unpacked_bytes setting)",
                        limits.max_bytes
                    ));
                }
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot write {relative}: {e}"))?;
                }
                // A later entry of the same path replaces an earlier one, as tar does (the
                // folder is fresh and holds no link, so only this unpack's own files are there).
                let mut file = fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&target)
                    .map_err(|e| format!("cannot write {relative}: {e}"))?;
                copy_body(&mut stream, &mut file, size, &mut read_total, budget)
                    .map_err(|e| format!("{relative}: {e}"))?;
            }
            b'5' => {
                let target = checked_path(into, &relative, &raw_name)?;
                fs::create_dir_all(&target)
                    .map_err(|e| format!("cannot create {relative}: {e}"))?;
                skip(&mut stream, size, &mut read_total, budget)?;
            }
            b'1' | b'2' => {
                let link = cstr(header.get(157..257).unwrap_or(&[]));
                return Err(format!(
                    "the tarball holds a {} '{raw_name}' -> '{link}': links are refused (a package is plain files)",
                    if kind == b'2' { "symlink" } else { "hard link" }
                ));
            }
            other => {
                return Err(format!(
                    "the tarball holds '{raw_name}' of type '{}', which is not a file or a directory: refused",
                    char::from(other)
                ));
            }
        }
    }
}

fn read_block(
    stream: &mut impl Read,
    block: &mut [u8; BLOCK],
    read_total: &mut u64,
    budget: u64,
) -> Result<bool, String> {
    let mut filled = 0;
    while filled < BLOCK {
        let n = stream
            .read(block.get_mut(filled..).unwrap_or(&mut []))
            .map_err(|e| format!("the tarball is not valid gzip: {e}"))?;
        if n == 0 {
            if filled == 0 {
                return Ok(false);
            }
            return Err("the tarball is truncated".to_owned());
        }
        filled += n;
    }
    *read_total += BLOCK as u64;
    if *read_total > budget {
        return Err("the package unpacks to more than its limits allow (the npm_max_unpacked_bytes and npm_max_files settings)".to_owned());
    }
    Ok(true)
}

fn padded(size: u64) -> u64 {
    size.div_ceil(BLOCK as u64) * BLOCK as u64
}

fn read_body(
    stream: &mut impl Read,
    size: u64,
    read_total: &mut u64,
    budget: u64,
    max: u64,
) -> Result<Vec<u8>, String> {
    if size > max {
        return Err(format!("a tar header of {size} bytes is refused"));
    }
    let mut body = Vec::new();
    copy_body(stream, &mut body, size, read_total, budget)?;
    Ok(body)
}

fn copy_body(
    stream: &mut impl Read,
    out: &mut impl Write,
    size: u64,
    read_total: &mut u64,
    budget: u64,
) -> Result<(), String> {
    let mut block = [0u8; BLOCK];
    let mut left = size;
    for _ in 0..padded(size) / BLOCK as u64 {
        if !read_block(stream, &mut block, read_total, budget)? {
            return Err("the tarball is truncated".to_owned());
        }
        let take = left.min(BLOCK as u64) as usize;
        out.write_all(block.get(..take).unwrap_or(&[]))
            .map_err(|e| format!("cannot write: {e}"))?;
        left -= take as u64;
    }
    Ok(())
}

fn skip(
    stream: &mut impl Read,
    size: u64,
    read_total: &mut u64,
    budget: u64,
) -> Result<(), String> {
    copy_body(stream, &mut std::io::sink(), size, read_total, budget)
}

fn check_checksum(header: &[u8; BLOCK]) -> Result<(), String> {
    let stored = octal(header.get(148..156).unwrap_or(&[]))?;
    let sum: u64 = header
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(*b)
            }
        })
        .sum();
    if sum != stored {
        return Err("the tarball has a damaged header (checksum)".to_owned());
    }
    Ok(())
}

fn octal(field: &[u8]) -> Result<u64, String> {
    let text = cstr(field);
    let text = text.trim();
    if text.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(text, 8).map_err(|_| format!("the tarball has a damaged header ('{text}')"))
}

/// Bytes up to the first NUL, as text.
fn cstr(field: &[u8]) -> String {
    let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(field.get(..end).unwrap_or(&[])).into_owned()
}

fn ustar_name(header: &[u8; BLOCK]) -> String {
    let name = cstr(header.get(0..100).unwrap_or(&[]));
    let magic = header.get(257..262).unwrap_or(&[]);
    let prefix = if magic == b"ustar" {
        cstr(header.get(345..500).unwrap_or(&[]))
    } else {
        String::new()
    };
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

/// The value of `key` in pax records (`<len> key=value\n`).
fn pax_value(body: &[u8], key: &str) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    text.lines().find_map(|line| {
        let (_, record) = line.split_once(' ')?;
        let (k, value) = record.split_once('=')?;
        (k == key).then(|| value.to_owned())
    })
}

/// The entry's path without its first component; `None` for the top directory itself.
fn strip_first(name: &str) -> Option<String> {
    let name = name.trim_start_matches("./");
    let (_, rest) = name.split_once('/')?;
    let rest = rest.trim_end_matches('/');
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// `into` joined with `relative`, which must be a plain relative path.
fn checked_path(into: &Path, relative: &str, raw: &str) -> Result<std::path::PathBuf, String> {
    let refused = || {
        format!("the tarball holds the path '{raw}', which would land outside the package: refused")
    };
    if relative.contains('\0') || relative.contains('\\') {
        return Err(refused());
    }
    let path = Path::new(relative);
    if !path
        .components()
        .all(|component| matches!(component, Component::Normal(_) | Component::CurDir))
    {
        return Err(refused());
    }
    Ok(into.join(path))
}
