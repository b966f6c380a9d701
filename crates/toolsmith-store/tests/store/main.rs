//! The store's integration tests, one test binary for the crate (each binary links the whole
//! store): one module per topic, each against a real SQLite file (`copy` also against a private
//! PostgreSQL cluster from the test kit).

mod config_secrets;
mod copy;
mod crash;
mod tokens;
