//! Capped reading of one output pipe: keeps the first `cap` bytes, drains and discards the rest
//! so the writer never blocks on a full pipe.

use tokio::io::{AsyncRead, AsyncReadExt};

/// What was kept of one stream.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) bytes: Vec<u8>,
    pub(crate) truncated: bool,
}

/// Reads `reader` to its end, keeping at most `cap` bytes.
pub(crate) async fn read_capped<R: AsyncRead + Unpin>(reader: Option<R>, cap: usize) -> Captured {
    let mut res = Captured::default();
    let Some(mut reader) = reader else { return res };
    let mut chunk = vec![0_u8; 16 * 1024];
    loop {
        let n_read = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n_read) => n_read,
        };
        let room = cap.saturating_sub(res.bytes.len());
        if n_read > room {
            res.truncated = true;
        }
        res.bytes
            .extend_from_slice(chunk.get(..n_read.min(room)).unwrap_or_default());
    }
    res
}

#[cfg(test)]
mod tests {
    use super::read_capped;

    #[tokio::test]
    async fn keeps_the_first_cap_bytes_and_flags_the_rest() {
        let data = vec![b'x'; 100_000];
        let res = read_capped(Some(&data[..]), 1000).await;
        assert_eq!(res.bytes.len(), 1000);
        assert!(res.truncated);

        let res = read_capped(Some(&b"hello"[..]), 5).await;
        assert_eq!(res.bytes, b"hello");
        assert!(!res.truncated);

        let res = read_capped(None::<&[u8]>, 5).await;
        assert!(res.bytes.is_empty());
    }
}
