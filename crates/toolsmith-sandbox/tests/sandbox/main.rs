//! Integration tests of the JS sandbox, through its public API only.

mod basics;
mod builtins;
mod config;
mod fetch;
mod host_calls;
mod hostile;
mod io_wait;
mod limits;
mod pool;
mod support;
mod utils;
