//! `resize_image`: resizing and format conversion of a workspace picture, done here with the
//! `image` crate (PNG, JPEG, WebP and GIF codecs only). A picture is hostile input: its kind
//! is read from its first bytes, its size from its header, and a header asking for more than
//! [`MAX_PIXELS`] pixels or a side over [`MAX_SIDE`] is refused before any pixel is decoded
//! (a decompression bomb is a few kilobytes that say 50,000 x 50,000); the decoder's own
//! memory limit ([`MAX_DECODE_BYTES`]) stands behind that check.

use std::io::Cursor;

use ::image::codecs::jpeg::JpegEncoder;
use ::image::imageops::FilterType;
use ::image::{DynamicImage, ImageFormat, ImageReader, Limits};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use crate::media::{self, Reply};
use crate::web::ToolError;
use crate::workspace::Workspace;

/// Most pixels of a picture decoded or made (about 40 megapixels: 160 MB as RGBA).
pub const MAX_PIXELS: u64 = 40_000_000;
/// Longest side of a picture decoded or made.
pub const MAX_SIDE: u32 = 16_384;
/// Most memory the decoder may allocate for one picture.
pub const MAX_DECODE_BYTES: u64 = 512 * 1024 * 1024;
/// JPEG quality when none is given.
const DEFAULT_QUALITY: u8 = 85;

/// A picture's kind, known by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Png,
    Jpeg,
    Webp,
    Gif,
}

impl Kind {
    /// The kind of `bytes`, or an error naming `what` and the kinds read.
    pub fn sniff(bytes: &[u8], what: &str) -> Result<Kind, ToolError> {
        match bytes {
            [0x89, b'P', b'N', b'G', ..] => Ok(Kind::Png),
            [0xFF, 0xD8, 0xFF, ..] => Ok(Kind::Jpeg),
            [b'G', b'I', b'F', b'8', ..] => Ok(Kind::Gif),
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
                b'E',
                b'B',
                b'P',
                ..,
            ] => Ok(Kind::Webp),
            _ => Err(ToolError::Args(format!(
                "{what} is not a PNG, JPEG, WebP or GIF picture (its first bytes say so): \
                 these are the kinds the image tools read"
            ))),
        }
    }

    /// The kind named by a `format` argument or a file extension.
    pub fn named(name: &str) -> Option<Kind> {
        match name.to_ascii_lowercase().as_str() {
            "png" => Some(Kind::Png),
            "jpeg" | "jpg" => Some(Kind::Jpeg),
            "webp" => Some(Kind::Webp),
            "gif" => Some(Kind::Gif),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Png => "png",
            Kind::Jpeg => "jpeg",
            Kind::Webp => "webp",
            Kind::Gif => "gif",
        }
    }

    pub fn ext(self) -> &'static str {
        match self {
            Kind::Jpeg => "jpg",
            other => other.name(),
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
            Kind::Webp => "image/webp",
            Kind::Gif => "image/gif",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            Kind::Png => ImageFormat::Png,
            Kind::Jpeg => ImageFormat::Jpeg,
            Kind::Webp => ImageFormat::WebP,
            Kind::Gif => ImageFormat::Gif,
        }
    }
}

fn damaged(kind: Kind, e: &::image::ImageError) -> ToolError {
    ToolError::Args(format!(
        "the picture could not be read as {} ({e}): the file is damaged, cut short or not \
         really a {0}; open it again from its source",
        kind.name().to_uppercase()
    ))
}

/// The width and height `bytes` say they have, refused past [`MAX_PIXELS`] or [`MAX_SIDE`]
/// (only the header is read).
pub fn dimensions(bytes: &[u8], kind: Kind) -> Result<(u32, u32), ToolError> {
    let (width, height) = ImageReader::with_format(Cursor::new(bytes), kind.format())
        .into_dimensions()
        .map_err(|e| damaged(kind, &e))?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS || width > MAX_SIDE || height > MAX_SIDE {
        return Err(ToolError::Args(format!(
            "the picture says it is {width} x {height} pixels, more than the {MAX_PIXELS} \
             pixels (and {MAX_SIDE} per side) the image tools decode: it was refused unread, \
             as a picture that size (or a file that only claims it) would take gigabytes of \
             memory; use a smaller picture"
        )));
    }
    Ok((width, height))
}

/// The decoded picture, after [`dimensions`] accepted it, under the decoder's memory limit.
pub fn decode(bytes: &[u8], kind: Kind) -> Result<DynamicImage, ToolError> {
    dimensions(bytes, kind)?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), kind.format());
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    reader.decode().map_err(|e| damaged(kind, &e))
}

/// `picture` written as `kind` (`quality` for JPEG).
pub fn encode(picture: &DynamicImage, kind: Kind, quality: u8) -> Result<Vec<u8>, ToolError> {
    let mut out = Cursor::new(Vec::new());
    let failed = |e: ::image::ImageError| {
        ToolError::Provider(format!(
            "the picture could not be written as {}: {e}",
            kind.name()
        ))
    };
    match kind {
        Kind::Jpeg => picture
            .to_rgb8()
            .write_with_encoder(JpegEncoder::new_with_quality(&mut out, quality))
            .map_err(failed)?,
        Kind::Png => picture
            .write_to(&mut out, ImageFormat::Png)
            .map_err(failed)?,
        Kind::Webp | Kind::Gif => DynamicImage::ImageRgba8(picture.to_rgba8())
            .write_to(&mut out, kind.format())
            .map_err(failed)?,
    }
    Ok(out.into_inner())
}

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "resize_image",
        "Resize a picture in your workspace, or convert it to another format (PNG, JPEG, \
         WebP, GIF), locally (no service needed): make a picture smaller or larger, a \
         thumbnail, a JPEG from a PNG. The result is saved beside it (or at 'output') and shown.",
        json!({
            "type": "object",
            "properties": {
                "image": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The picture: a path in your workspace (PNG, JPEG, WebP or GIF, at most 20 MB and 40 megapixels)."},
                "width": {"type": "integer", "minimum": 1, "maximum": MAX_SIDE, "description": "The new width in pixels. With only width or height, the other keeps the proportions."},
                "height": {"type": "integer", "minimum": 1, "maximum": MAX_SIDE, "description": "The new height in pixels."},
                "fit": {"type": "string", "enum": ["contain", "cover", "fill"], "default": "contain", "description": "With both width and height: contain (keep the proportions, fit inside the box), cover (keep the proportions, fill the box, crop what sticks out), fill (stretch to exactly that size)."},
                "format": {"type": "string", "enum": ["png", "jpeg", "webp", "gif"], "description": "Convert to this format: png, jpeg (no transparency; see quality), webp (lossless) or gif. Default: the output path's extension, else the picture's own format."},
                "quality": {"type": "integer", "minimum": 1, "maximum": 100, "default": DEFAULT_QUALITY, "description": "JPEG quality, 1-100."},
                "output": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Where to save the result in your workspace. Default: beside the picture, as <name>-<width>x<height>.<ext>."},
                "overwrite": {"type": "boolean", "default": false, "description": "Replace a file already at output (otherwise the call is refused)."},
                "show": {"type": "boolean", "default": true, "description": "Also return the result as image content (when it is at most 512 KB), for clients that show pictures."}
            },
            "required": ["image"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "resize image",
        "make this picture smaller",
        "shrink photo",
        "thumbnail",
        "scale",
        "convert image",
        "png to jpeg",
        "jpg",
        "webp",
        "picture",
        "photo",
    ])
}

/// The size the picture takes: from `width`/`height` (one keeps the proportions) and `fit`.
fn target(
    (width, height): (u32, u32),
    args: &Value,
) -> Result<Option<(u32, u32, &'static str)>, ToolError> {
    let dim = |key: &str| {
        args.get(key)
            .and_then(Value::as_u64)
            .map(|v| u32::try_from(v).unwrap_or(u32::MAX).clamp(1, MAX_SIDE))
    };
    let scaled = |num: u32, by: u32, of: u32| {
        let v = (u64::from(num) * u64::from(by) + u64::from(of) / 2) / u64::from(of.max(1));
        u32::try_from(v).unwrap_or(u32::MAX).clamp(1, MAX_SIDE)
    };
    let fit = match args.get("fit").and_then(Value::as_str) {
        Some("cover") => "cover",
        Some("fill") => "fill",
        _ => "contain",
    };
    let size = match (dim("width"), dim("height")) {
        (None, None) => return Ok(None),
        (Some(w), None) => (w, scaled(height, w, width), "fill"),
        (None, Some(h)) => (scaled(width, h, height), h, "fill"),
        (Some(w), Some(h)) => (w, h, fit),
    };
    if u64::from(size.0) * u64::from(size.1) > MAX_PIXELS {
        return Err(ToolError::Args(format!(
            "{} x {} pixels is more than the {MAX_PIXELS} pixels a picture may have here: ask \
             for a smaller size",
            size.0, size.1
        )));
    }
    Ok(Some(size))
}

/// `resize_image`'s work.
pub fn resize(workspace: &Workspace, args: &Value) -> Result<Reply, ToolError> {
    let raw = args
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let output = args.get("output").and_then(Value::as_str);
    let format = args.get("format").and_then(Value::as_str);
    if args.get("width").is_none() && args.get("height").is_none() && format.is_none() {
        return Err(ToolError::Args(
            "nothing to do: give width and/or height to resize, or format to convert".to_owned(),
        ));
    }
    let (path, bytes) = media::read(workspace, raw, super::MAX_INPUT_BYTES)?;
    let kind = Kind::sniff(&bytes, &format!("'{path}'"))?;
    let picture = decode(&bytes, kind)?;
    let source = (picture.width(), picture.height());
    let out_kind = format
        .and_then(Kind::named)
        .or_else(|| {
            output
                .and_then(|o| o.rsplit_once('.'))
                .and_then(|(_, ext)| Kind::named(ext))
        })
        .unwrap_or(kind);
    let resized = match target(source, args)? {
        None => picture,
        Some((w, h, "cover")) => picture.resize_to_fill(w, h, FilterType::Lanczos3),
        Some((w, h, "fill")) => picture.resize_exact(w, h, FilterType::Lanczos3),
        Some((w, h, _)) => picture.resize(w, h, FilterType::Lanczos3),
    };
    let quality = args
        .get("quality")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_QUALITY, |q| {
            u8::try_from(q.clamp(1, 100)).unwrap_or(DEFAULT_QUALITY)
        });
    let encoded = encode(&resized, out_kind, quality)?;
    let (width, height) = (resized.width(), resized.height());
    let target_path = match output {
        Some(output) => output.to_owned(),
        None => {
            let stem = path.rsplit_once('.').map_or(path.as_str(), |(s, _)| s);
            format!("{stem}-{width}x{height}.{}", out_kind.ext())
        }
    };
    let mut file = media::write(workspace, &target_path, &encoded, media::overwrite(args))?;
    toolsmith_core::object::set(&mut file, "format", json!(out_kind.name()));
    toolsmith_core::object::set(&mut file, "mimeType", json!(out_kind.mime()));
    toolsmith_core::object::set(&mut file, "width", json!(width));
    toolsmith_core::object::set(&mut file, "height", json!(height));
    toolsmith_core::object::set(
        &mut file,
        "source",
        json!({"path": path, "format": kind.name(), "width": source.0, "height": source.1, "bytes": bytes.len()}),
    );
    let mut reply = Reply::json(file);
    if args.get("show").and_then(Value::as_bool) != Some(false) {
        reply
            .media
            .push(("image", out_kind.mime().to_owned(), encoded));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let picture = DynamicImage::new_rgba8(width, height);
        encode(&picture, Kind::Png, 85).unwrap()
    }

    /// PNG's chunk checksum (CRC-32, ISO 3309).
    fn crc32(data: &[u8]) -> u32 {
        let mut c = u32::MAX;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn a_header_claiming_a_huge_picture_is_refused_before_decoding() {
        // A real 1 x 1 PNG whose header is rewritten to say 50,000 x 50,000.
        let mut bomb = png(1, 1);
        bomb[16..20].copy_from_slice(&50_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&50_000u32.to_be_bytes());
        let crc = crc32(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.to_be_bytes());
        let err = decode(&bomb, Kind::Png).unwrap_err().to_string();
        assert!(
            err.contains("50000 x 50000") && err.contains("refused unread"),
            "{err}"
        );
    }

    #[test]
    fn sizes_keep_the_proportions_when_one_side_is_given() {
        let args = json!({"width": 100});
        assert_eq!(target((400, 300), &args).unwrap(), Some((100, 75, "fill")));
        let args = json!({"height": 30, "fit": "cover"});
        assert_eq!(target((400, 300), &args).unwrap(), Some((40, 30, "fill")));
        let args = json!({"width": 10, "height": 10, "fit": "cover"});
        assert_eq!(target((400, 300), &args).unwrap(), Some((10, 10, "cover")));
        assert!(target((400, 300), &json!({"width": 16384, "height": 16384})).is_err());
    }

    #[test]
    fn every_format_round_trips() {
        let picture = DynamicImage::new_rgba8(8, 6);
        for kind in [Kind::Png, Kind::Jpeg, Kind::Webp, Kind::Gif] {
            let bytes = encode(&picture, kind, 80).unwrap();
            assert_eq!(Kind::sniff(&bytes, "x").unwrap(), kind);
            assert_eq!(dimensions(&bytes, kind).unwrap(), (8, 6));
        }
        let truncated = &png(20, 20)[..40];
        assert!(
            decode(truncated, Kind::Png)
                .unwrap_err()
                .to_string()
                .contains("damaged")
        );
    }
}
