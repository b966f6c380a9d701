//! Unit tests of the limit helpers: message formatting and stack clamping.

use std::time::Duration;

use super::*;

#[test]
fn durations_read_naturally() {
    assert_eq!(fmt_duration(Duration::from_millis(200)), "200 ms");
    assert_eq!(fmt_duration(Duration::from_secs(30)), "30 s");
    assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.5 s");
    assert_eq!(fmt_duration(Duration::from_millis(1)), "1 ms");
}

#[test]
fn byte_counts_read_naturally() {
    assert_eq!(fmt_bytes(50 * 1024 * 1024), "50 MB");
    assert_eq!(fmt_bytes(512 * 1024), "512 KB");
    assert_eq!(fmt_bytes(1000), "1000 bytes");
    assert_eq!(fmt_bytes(1536 * 1024), "1.5 MB");
}

#[test]
fn stack_limit_is_clamped_into_a_safe_range() {
    assert_eq!(clamp_stack(0), MIN_STACK_BYTES);
    assert_eq!(clamp_stack(512 * 1024), 512 * 1024);
    assert_eq!(clamp_stack(64 * 1024 * 1024), MAX_STACK_BYTES);
}

#[test]
fn limits_map_to_their_error_kinds() {
    let limits = JsLimits::default();
    let kinds: Vec<Option<ErrorKind>> = [Limit::Memory, Limit::Cpu, Limit::Wall, Limit::Cancelled]
        .iter()
        .map(|l| l.result(&limits).error_kind())
        .collect();
    assert_eq!(
        kinds,
        vec![
            Some(ErrorKind::MemoryLimit),
            Some(ErrorKind::CpuLimit),
            Some(ErrorKind::Timeout),
            Some(ErrorKind::Cancelled)
        ]
    );
    assert_eq!(
        Limit::Wall.result(&limits).error_message(),
        Some("the tool did not finish within its time limit of 30 s")
    );
}
