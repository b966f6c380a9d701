//! Tests for the registry.
