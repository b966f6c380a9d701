//! The image tools' picture reader (`toolsmith_builtins::images::local`: `Kind::sniff`,
//! `dimensions`, `decode`), which `resize_image` and `analyze_image` run on a workspace file:
//! the input is the file's bytes.
//!
//! Asserts: no panic; a size `dimensions` accepts is within `MAX_PIXELS` and `MAX_SIDE` (a
//! header claiming more is refused before any pixel is decoded); a picture of up to a million
//! pixels that decodes has the size its header said.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith_builtins::images::local::{self, Kind};

fuzz_target!(|data: &[u8]| {
    let Ok(kind) = Kind::sniff(data, "the input") else {
        return;
    };
    let Ok((width, height)) = local::dimensions(data, kind) else {
        return;
    };
    assert!(
        u64::from(width) * u64::from(height) <= local::MAX_PIXELS
            && width <= local::MAX_SIDE
            && height <= local::MAX_SIDE,
        "{width} x {height} accepted"
    );
    if u64::from(width) * u64::from(height) > 1_000_000 {
        return;
    }
    if let Ok(picture) = local::decode(data, kind) {
        assert_eq!(
            (picture.width(), picture.height()),
            (width, height),
            "a {kind:?} decoded to another size than its header says"
        );
    }
});
