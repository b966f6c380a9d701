//! The custom-tool lifecycle (placeholder).
