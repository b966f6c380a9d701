//! The `toolsmith` binary (placeholder).

fn main() {}
