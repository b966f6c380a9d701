//! What `audio_info` and `split_audio` read: WAV (RIFF/WAVE: its `fmt ` and `data` chunks,
//! checked against each other and against the file's length, so a truncated or lying file is
//! named as such) and FLAC's STREAMINFO block. Other kinds are recognized by their first bytes
//! only, to say what they are.

/// A WAV file's parts.
#[derive(Debug)]
pub struct Wav<'a> {
    /// The `fmt ` chunk's body, as it is (written again into each part).
    pub fmt: &'a [u8],
    /// The format code (1 PCM, 3 IEEE float, 6 A-law, 7 µ-law; WAVE_FORMAT_EXTENSIBLE's
    /// sub-format).
    pub format: u16,
    pub channels: u16,
    pub sample_rate: u32,
    pub bits: u16,
    /// Bytes of one frame (a sample of every channel).
    pub block_align: u16,
    /// The sound: whole frames only.
    pub data: &'a [u8],
}

impl Wav<'_> {
    pub fn frames(&self) -> u64 {
        self.data.len() as u64 / u64::from(self.block_align)
    }

    pub fn seconds(&self) -> f64 {
        self.frames() as f64 / f64::from(self.sample_rate)
    }

    pub fn encoding(&self) -> &'static str {
        match self.format {
            1 => "pcm",
            3 => "float",
            6 => "alaw",
            7 => "mulaw",
            _ => "other",
        }
    }

    /// A WAV file of the same format holding `data` (whole frames).
    pub fn with_data(&self, data: &[u8]) -> Vec<u8> {
        let fmt_chunk = 8 + self.fmt.len() + self.fmt.len() % 2;
        let riff = 4 + fmt_chunk + 8 + data.len() + data.len() % 2;
        let mut out = Vec::with_capacity(8 + riff);
        out.extend_from_slice(b"RIFF");
        out.extend_from_slice(&u32::try_from(riff).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(b"WAVEfmt ");
        out.extend_from_slice(&u32::try_from(self.fmt.len()).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(self.fmt);
        if self.fmt.len() % 2 == 1 {
            out.push(0);
        }
        out.extend_from_slice(b"data");
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(0);
        }
        out
    }
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// `bytes` read as WAV; the error says what is wrong with the file.
pub fn parse(bytes: &[u8]) -> Result<Wav<'_>, String> {
    if bytes.get(..4) != Some(b"RIFF") || bytes.get(8..12) != Some(b"WAVE") {
        return Err("it is not a WAV file (no RIFF/WAVE header)".to_owned());
    }
    let mut at = 12;
    let mut fmt: Option<&[u8]> = None;
    while at + 8 <= bytes.len() {
        let id = bytes.get(at..at + 4).unwrap_or_default();
        let size = u32_at(bytes, at + 4).unwrap_or(0) as usize;
        let body_at = at + 8;
        let end = body_at.saturating_add(size);
        if end > bytes.len() {
            return Err(format!(
                "it is truncated: its '{}' chunk says {size} bytes but only {} follow",
                String::from_utf8_lossy(id),
                bytes.len() - body_at
            ));
        }
        let body = bytes.get(body_at..end).unwrap_or_default();
        match id {
            b"fmt " => fmt = Some(body),
            b"data" => {
                let fmt = fmt.ok_or("its data chunk comes before any fmt chunk")?;
                return read(fmt, body);
            }
            _ => {}
        }
        at = end + size % 2;
    }
    Err("it is truncated: it has no data chunk".to_owned())
}

fn read<'a>(fmt: &'a [u8], data: &'a [u8]) -> Result<Wav<'a>, String> {
    let short = || "its fmt chunk is shorter than 16 bytes".to_owned();
    let mut format = u16_at(fmt, 0).ok_or_else(short)?;
    let channels = u16_at(fmt, 2).ok_or_else(short)?;
    let sample_rate = u32_at(fmt, 4).ok_or_else(short)?;
    let block_align = u16_at(fmt, 12).ok_or_else(short)?;
    let bits = u16_at(fmt, 14).ok_or_else(short)?;
    if format == 0xFFFE {
        // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the format code.
        format = u16_at(fmt, 24).ok_or("its extensible fmt chunk is shorter than 26 bytes")?;
    }
    if channels == 0 || sample_rate == 0 || block_align == 0 {
        return Err(format!(
            "its fmt chunk says {channels} channels, {sample_rate} Hz and {block_align}-byte \
             frames, which no sound has"
        ));
    }
    if !data.len().is_multiple_of(usize::from(block_align)) {
        return Err(format!(
            "it is truncated: its sound is {} bytes, not a whole number of {block_align}-byte \
             frames",
            data.len()
        ));
    }
    Ok(Wav {
        fmt,
        format,
        channels,
        sample_rate,
        bits,
        block_align,
        data,
    })
}

/// FLAC's STREAMINFO: `(sample rate, channels, bits per sample, total frames)`.
pub fn flac(bytes: &[u8]) -> Result<(u32, u8, u8, u64), String> {
    let info = bytes
        .get(8..8 + 34)
        .filter(|_| bytes.get(4).is_some_and(|b| b & 0x7F == 0))
        .ok_or("it is a FLAC file without a whole STREAMINFO block (truncated)")?;
    let bits = |i: usize| info.get(i).copied().map_or(0, u64::from);
    // Bytes 10..18: 20 bits rate, 3 bits channels - 1, 5 bits depth - 1, 36 bits frames.
    let packed = (10..18).fold(0u64, |acc, i| (acc << 8) | bits(i));
    let rate = u32::try_from(packed >> 44).unwrap_or(0);
    let channels = u8::try_from(((packed >> 41) & 0x7) + 1).unwrap_or(0);
    let depth = u8::try_from(((packed >> 36) & 0x1F) + 1).unwrap_or(0);
    let frames = packed & 0xF_FFFF_FFFF;
    if rate == 0 {
        return Err("its STREAMINFO says 0 Hz".to_owned());
    }
    Ok((rate, channels, depth, frames))
}

/// An audio file's kind by its first bytes: `(name, extension, MIME type)`.
pub fn sniff(bytes: &[u8]) -> Option<(&'static str, &'static str, &'static str)> {
    match bytes {
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'A',
            b'V',
            b'E',
            ..,
        ] => Some(("wav", "wav", "audio/wav")),
        [b'f', b'L', b'a', b'C', ..] => Some(("flac", "flac", "audio/flac")),
        [b'O', b'g', b'g', b'S', ..] => Some(("ogg", "ogg", "audio/ogg")),
        [b'I', b'D', b'3', ..] => Some(("mp3", "mp3", "audio/mpeg")),
        [0xFF, second, ..] if second & 0xE0 == 0xE0 && second & 0x06 != 0 => {
            Some(("mp3", "mp3", "audio/mpeg"))
        }
        [_, _, _, _, b'f', b't', b'y', b'p', ..] => Some(("m4a", "m4a", "audio/mp4")),
        [0x1A, 0x45, 0xDF, 0xA3, ..] => Some(("webm", "webm", "audio/webm")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(frames: usize) -> Vec<u8> {
        let fmt = [
            1u16.to_le_bytes().as_slice(),
            &1u16.to_le_bytes(),
            &8000u32.to_le_bytes(),
            &16000u32.to_le_bytes(),
            &2u16.to_le_bytes(),
            &16u16.to_le_bytes(),
        ]
        .concat();
        let wav = Wav {
            fmt: &fmt,
            format: 1,
            channels: 1,
            sample_rate: 8000,
            bits: 16,
            block_align: 2,
            data: &[],
        };
        wav.with_data(&vec![0x11; frames * 2])
    }

    #[test]
    fn a_wav_round_trips_and_a_cut_one_is_named_truncated() {
        let bytes = tone(8000);
        let wav = parse(&bytes).unwrap();
        assert_eq!((wav.frames(), wav.seconds()), (8000, 1.0));
        assert_eq!(wav.with_data(wav.data), bytes);
        let err = parse(&bytes[..1000]).unwrap_err();
        assert!(
            err.contains("truncated") && err.contains("'data' chunk"),
            "{err}"
        );
        assert!(
            parse(b"RIFF\0\0\0\0WAVE")
                .unwrap_err()
                .contains("no data chunk")
        );
        assert!(parse(b"ID3junk").unwrap_err().contains("not a WAV"));
        assert_eq!(sniff(&bytes).unwrap().0, "wav");
    }

    #[test]
    fn flac_streaminfo_is_read() {
        let mut bytes = b"fLaC\x00\x00\x00\x22".to_vec();
        let mut info = vec![0u8; 34];
        // 44100 Hz, 2 channels, 16 bits, 441000 frames.
        let packed: u64 = (44100u64 << 44) | (1 << 41) | (15 << 36) | 441_000;
        info[10..18].copy_from_slice(&packed.to_be_bytes());
        bytes.extend_from_slice(&info);
        assert_eq!(flac(&bytes).unwrap(), (44100, 2, 16, 441_000));
    }
}
