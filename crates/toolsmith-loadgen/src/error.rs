//! [`LoadError`]: everything that can stop a load run before it measures anything, each with a
//! stable machine `code()`.

/// Why a load run could not start (failures during the run are counted, not raised).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("invalid URL '{url}': {why}")]
    BadUrl { url: String, why: String },
    #[error(
        "refusing to load '{host}': the load generator only targets loopback addresses (127.0.0.0/8, ::1, localhost)"
    )]
    NotLoopback { host: String },
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("HTTP error: {0}")]
    Http(String),
    #[error("the server answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("unexpected MCP answer: {0}")]
    Protocol(String),
    #[error("setup failed: {0}")]
    Setup(String),
}

impl LoadError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            LoadError::BadUrl { .. } => "bad_url",
            LoadError::NotLoopback { .. } => "not_loopback",
            LoadError::Connect { .. } => "connect",
            LoadError::Http(_) => "http",
            LoadError::Status { .. } => "status",
            LoadError::Protocol(_) => "protocol",
            LoadError::Setup(_) => "setup",
        }
    }
}
