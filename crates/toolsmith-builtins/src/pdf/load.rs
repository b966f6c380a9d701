//! Opening a PDF of the workspace: read through the workspace (size-capped), checked to be a
//! PDF, parsed by `lopdf` with every stream's decompression capped, decrypted with the
//! caller's password when it has one. Every failure is a [`PdfError`] naming the fix.

use lopdf::{Document, LoadOptions};

use super::{MAX_DECOMPRESSED, MAX_PDF_BYTES, PdfError};
use crate::workspace::{Workspace, WsPath};

/// Most pages a document may have for the tools to open it (beyond it, the page tree is
/// more likely an attack than a document).
pub const MAX_PAGES: usize = 10_000;

/// An opened PDF and what was read to open it.
pub struct Opened {
    pub doc: Document,
    pub bytes: u64,
    /// Whether the file was encrypted (and opened with the password, or an empty one).
    pub encrypted: bool,
}

/// Reads and parses the PDF at `path`.
pub fn open(ws: &Workspace, path: &WsPath, password: Option<&str>) -> Result<Opened, PdfError> {
    let shown = path.to_string();
    let data = ws.read(path, MAX_PDF_BYTES).map_err(|e| {
        e.with_hint("the PDF tools open files up to 32 MB; split the document or use a smaller one")
    })?;
    parse(&data, &shown, password)
}

/// Parses `data` (the file `shown`) as a PDF.
pub fn parse(data: &[u8], shown: &str, password: Option<&str>) -> Result<Opened, PdfError> {
    // The header may follow up to 1 KB of junk, as readers allow.
    let head = data.get(..1024).unwrap_or(data);
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(PdfError::Unreadable(format!(
            "'{shown}' is not a PDF (no %PDF- header); check the path, or read it with read_file"
        )));
    }
    let options = LoadOptions {
        password: password.map(str::to_owned),
        max_decompressed_size: Some(MAX_DECOMPRESSED),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(data, options)
        .map_err(|e| unreadable(shown, &e, password.is_some()))?;
    let encrypted = doc.was_encrypted() || doc.is_encrypted();
    if doc.is_encrypted() {
        // lopdf leaves a document it could not decrypt marked encrypted.
        return Err(password_error(shown, password.is_some()));
    }
    let pages = doc.page_iter().take(MAX_PAGES + 1).count();
    if pages == 0 {
        return Err(PdfError::Unreadable(format!(
            "'{shown}' has no pages (its page tree is empty or damaged); try another copy of it"
        )));
    }
    if pages > MAX_PAGES {
        return Err(PdfError::Unreadable(format!(
            "'{shown}' has more than {MAX_PAGES} pages, more than the PDF tools open; split it \
             into smaller documents"
        )));
    }
    Ok(Opened {
        doc,
        bytes: data.len() as u64,
        encrypted,
    })
}

fn password_error(shown: &str, had_password: bool) -> PdfError {
    PdfError::Unreadable(if had_password {
        format!(
            "'{shown}' is encrypted and the password given does not open it; check the password"
        )
    } else {
        format!("'{shown}' is encrypted; pass its password in 'password' to read it")
    })
}

/// The error for a PDF lopdf could not load.
pub(crate) fn unreadable(shown: &str, e: &lopdf::Error, had_password: bool) -> PdfError {
    use lopdf::Error as E;
    match e {
        E::InvalidPassword | E::Decryption(_) => password_error(shown, had_password),
        E::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => {
            PdfError::Unreadable(format!(
                "'{shown}' holds a stream that decompresses to more than {} MB (a decompression \
                 bomb, or a document too large for the PDF tools); it cannot be read",
                MAX_DECOMPRESSED / (1024 * 1024)
            ))
        }
        E::ReferenceCycle(_) | E::ReferenceLimit | E::RecursionLimit => {
            PdfError::Unreadable(format!(
                "'{shown}' has a cyclic or too deeply nested structure and cannot be read; it is \
                 damaged or crafted — try another copy of the document"
            ))
        }
        other => PdfError::Unreadable(format!(
            "'{shown}' is damaged or not a valid PDF ({other}); try another copy of the document, \
             or re-save it with a PDF program"
        )),
    }
}
