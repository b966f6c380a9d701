//! A scheduled task's `schedule` (cron, or one ISO time) and `timezone`: parts `schedule`,
//! `timezone`.
//!
//! Asserts: no panic; each next time is strictly after the one it follows.
#![no_main]

#[path = "../common.rs"]
mod common;

use chrono::{DateTime, Utc};
use libfuzzer_sys::fuzz_target;
use toolsmith_builtins::schedule::when::When;

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let zone = parts.get(1).copied();
    let Ok(when) = When::parse(common::part(&parts, 0), zone) else {
        return;
    };
    for start in [0_i64, 1_774_000_000, 4_102_444_800] {
        let Some(mut after) = DateTime::<Utc>::from_timestamp(start, 0) else {
            continue;
        };
        for _ in 0..4 {
            let Some(next) = when.next_after(after) else {
                break;
            };
            assert!(next > after, "{next} is not after {after}");
            after = next;
        }
    }
});
