//! The store's integration tests, one test binary for the crate (each binary links the whole
//! store): one module per topic, each against a real SQLite file.

mod config_secrets;
mod crash;
mod tokens;
