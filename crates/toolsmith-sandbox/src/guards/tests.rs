//! Unit tests of the array guards' helpers (their behaviour in a sandbox is tested in
//! `tests/sandbox/builtins.rs`).

use super::*;

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    assert_eq!(js_number(9_007_199_254_740_991.0), "9007199254740991");
    assert_eq!(js_number(65536.0), "65536");
    assert_eq!(js_number(f64::INFINITY), "Infinity");
    assert_eq!(js_number(1.5), "1.5");
}
