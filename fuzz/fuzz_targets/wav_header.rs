//! The audio tools' own WAV and FLAC header readers (`toolsmith_builtins::audio::wav`: `parse`,
//! `flac`, `sniff`), which `audio_info` and `split_audio` run on a workspace file before anything
//! else reads it: the input is the file's bytes.
//!
//! Asserts: no panic; a WAV read has sound of whole frames and a sane format (channels, rate and
//! frame size not 0; its duration finite); what `with_data` writes (`split_audio`'s parts) reads
//! back to the same format and sound, and a part cut at a whole frame reads back as that part.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith_builtins::audio::wav;

fuzz_target!(|data: &[u8]| {
    let _ = wav::sniff(data);
    let _ = wav::flac(data);
    let Ok(read) = wav::parse(data) else {
        return;
    };
    let frame = usize::from(read.block_align);
    assert!(
        read.channels > 0 && read.sample_rate > 0 && frame > 0,
        "{read:?}"
    );
    assert_eq!(read.data.len() % frame, 0, "whole frames: {read:?}");
    assert_eq!(
        read.frames() * u64::from(read.block_align),
        read.data.len() as u64
    );
    assert!(read.seconds().is_finite(), "{read:?}");
    let _ = read.encoding();

    // split_audio's parts: the same header, the sound cut at a whole frame.
    let whole = read.with_data(read.data);
    let again = wav::parse(&whole).unwrap_or_else(|e| panic!("with_data of {read:?}: {e}"));
    let same = |a: &wav::Wav<'_>, b: &wav::Wav<'_>| {
        (a.format, a.channels, a.sample_rate, a.bits, a.block_align)
            == (b.format, b.channels, b.sample_rate, b.bits, b.block_align)
    };
    assert!(same(&read, &again), "{read:?} written back as {again:?}");
    assert_eq!(again.data, read.data);
    let half = read.data.len() / frame / 2 * frame;
    if let Some(part) = read.data.get(..half) {
        let cut = read.with_data(part);
        let cut = wav::parse(&cut).unwrap_or_else(|e| panic!("a part of {read:?}: {e}"));
        assert!(same(&read, &cut));
        assert_eq!(cut.data, part);
    }
});
