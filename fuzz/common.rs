//! What every target shares: an input is one or more parts separated by the byte 0xFF (which no
//! UTF-8 text holds), so a seed file is the texts one after the other, `\xff` between them.

/// The parts of `data`, each as text; `None` when a part is not UTF-8.
#[allow(dead_code)]
pub fn parts(data: &[u8]) -> Option<Vec<&str>> {
    data.split(|b| *b == 0xff)
        .map(|part| std::str::from_utf8(part).ok())
        .collect()
}

/// The part at `idx`, or `""`.
#[allow(dead_code)]
pub fn part<'a>(parts: &[&'a str], idx: usize) -> &'a str {
    parts.get(idx).copied().unwrap_or("")
}

/// One tokio runtime for the targets that drive async code (current thread, with time).
#[allow(dead_code)]
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("a tokio runtime: {e}"));
    }
    RUNTIME.with(|rt| rt.block_on(future))
}
