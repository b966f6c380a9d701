//! Tests for the pipeline.
