//! Codecs and the self-describing frame every compressed payload is stored in.
//!
//! A frame is `DSZ`, a format version, a codec id, the raw length (u64 LE),
//! the codec's body, and an XXH3-64 digest of the raw bytes (u64 LE). Any
//! reader decodes a frame without configuration, and decompression is bounded
//! by the recorded raw length and the caller's limit before any allocation,
//! so a crafted frame (a zip bomb) is refused rather than inflated.

mod auto;
mod crc32;
#[cfg(feature = "deflate")]
mod deflate;
mod error;
mod frame_decoder;
mod prefix;
#[cfg(feature = "snappy")]
mod snappy;
#[cfg(feature = "zstd")]
mod zstd;

use alloc::vec::Vec;
use core::fmt;

pub use auto::choose_compression;
pub(crate) use auto::{choose_for_sample, sample_of};
pub use crc32::Crc32;
#[cfg(feature = "deflate")]
pub(crate) use deflate::DeflateStream;
pub use error::CodecError;

/// The CRC-32 (ISO-HDLC, as gzip and S3's `ChecksumCRC32` use) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32::Crc32::of(bytes)
}
pub use frame_decoder::FrameDecoder;
pub use prefix::decompress_prefix;

use crate::digest::digest;

/// First bytes of every frame.
pub const FRAME_MAGIC: &[u8; 3] = b"DSZ";
/// The frame format version this crate writes and reads.
pub const FRAME_VERSION: u8 = 1;
/// Bytes before the body: magic, version, codec id, raw length.
pub const FRAME_HEADER_BYTES: usize = 13;
/// Bytes after the body: the raw digest.
pub const FRAME_TRAILER_BYTES: usize = 8;

/// A compression codec.
///
/// Every variant exists in every build so any frame can be described; a codec
/// whose feature is off gives [`CodecError::Disabled`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Codec {
    /// Stored as is.
    None,
    /// Raw deflate (RFC 1951), miniz_oxide.
    Deflate,
    /// zlib (RFC 1950), miniz_oxide.
    Zlib,
    /// gzip (RFC 1952), miniz_oxide with a gzip wrapper.
    Gzip,
    /// Raw snappy, snap.
    Snappy,
    /// Zstandard, ruzstd, encoder at its `Fastest` level.
    Zstd,
}

impl Codec {
    /// Every codec, in frame id order.
    pub const ALL: [Codec; 6] = [
        Self::None,
        Self::Deflate,
        Self::Zlib,
        Self::Gzip,
        Self::Snappy,
        Self::Zstd,
    ];

    /// The lower-case name (`"none"`, `"deflate"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Deflate => "deflate",
            Self::Zlib => "zlib",
            Self::Gzip => "gzip",
            Self::Snappy => "snappy",
            Self::Zstd => "zstd",
        }
    }

    /// The codec of a name given by [`Codec::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The id stored in frames.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The codec of a frame id.
    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.get(usize::from(id)).copied()
    }

    /// True when this build can compress and decompress with the codec.
    pub fn is_enabled(self) -> bool {
        match self {
            Self::None => true,
            Self::Deflate | Self::Zlib | Self::Gzip => cfg!(feature = "deflate"),
            Self::Snappy => cfg!(feature = "snappy"),
            Self::Zstd => cfg!(feature = "zstd"),
        }
    }

    /// Checks the codec is enabled and `level` is one it supports: deflate,
    /// zlib and gzip take 0 to 10 (default 6); zstd only 1, its fastest level
    /// (the only level ruzstd implements); none and snappy take no level.
    pub fn check_level(self, level: Option<u8>) -> Result<(), CodecError> {
        if !self.is_enabled() {
            return Err(CodecError::Disabled { codec: self });
        }
        let ok = match (self, level) {
            (_, None) => true,
            (Self::Deflate | Self::Zlib | Self::Gzip, Some(l)) => l <= 10,
            (Self::Zstd, Some(l)) => l == 1,
            (Self::None | Self::Snappy, Some(_)) => false,
        };
        if ok {
            Ok(())
        } else {
            Err(CodecError::LevelUnsupported {
                codec: self,
                level: level.unwrap_or(0),
            })
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A codec and its level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Compression {
    /// The codec: how the frame's body is compressed.
    pub codec: Codec,
    /// The level, or the codec's default.
    pub level: Option<u8>,
}

impl Compression {
    /// A codec at its default level.
    pub const fn new(codec: Codec) -> Self {
        Self { codec, level: None }
    }

    /// No compression.
    pub const NONE: Self = Self::new(Codec::None);
}

/// What a frame's header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// The codec of the body.
    pub codec: Codec,
    /// Length of the raw (decompressed) bytes.
    pub raw_len: u64,
}

impl FrameHeader {
    /// The header's bytes.
    pub fn to_bytes(&self) -> [u8; FRAME_HEADER_BYTES] {
        let mut out = [0u8; FRAME_HEADER_BYTES];
        out[..3].copy_from_slice(FRAME_MAGIC);
        out[3] = FRAME_VERSION;
        out[4] = self.codec.id();
        out[5..].copy_from_slice(&self.raw_len.to_le_bytes());
        out
    }

    /// Parses a whole frame's header, checking the frame is long enough to
    /// hold a header and a trailer.
    pub fn parse(frame: &[u8]) -> Result<Self, CodecError> {
        if frame.len() < FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES {
            return Err(CodecError::FrameTruncated { len: frame.len() });
        }
        Self::parse_header(frame)
    }

    /// Parses the first [`FRAME_HEADER_BYTES`] of a frame.
    pub fn parse_header(bytes: &[u8]) -> Result<Self, CodecError> {
        if bytes.len() < FRAME_HEADER_BYTES {
            return Err(CodecError::FrameTruncated { len: bytes.len() });
        }
        if &bytes[..3] != FRAME_MAGIC {
            return Err(CodecError::FrameBadMagic);
        }
        if bytes[3] != FRAME_VERSION {
            return Err(CodecError::FrameUnsupportedVersion {
                got: bytes[3],
                supported: FRAME_VERSION,
            });
        }
        let codec = Codec::from_id(bytes[4]).ok_or(CodecError::CodecUnknown { id: bytes[4] })?;
        let mut raw_len = [0u8; 8];
        raw_len.copy_from_slice(&bytes[5..13]);
        Ok(Self {
            codec,
            raw_len: u64::from_le_bytes(raw_len),
        })
    }

    /// The raw digest recorded in a frame's trailer (the frame must be at
    /// least [`FRAME_TRAILER_BYTES`] long; shorter gives 0).
    pub fn trailer_digest(frame: &[u8]) -> u64 {
        let Some(at) = frame.len().checked_sub(FRAME_TRAILER_BYTES) else {
            return 0;
        };
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&frame[at..]);
        u64::from_le_bytes(bytes)
    }
}

/// Compresses `raw` into a frame.
///
/// ```
/// use dynaslice_core::codec::{compress, decompress, Codec, Compression};
/// let raw = b"hello hello hello hello".repeat(100);
/// let frame = compress(&raw, Compression::new(Codec::Zstd)).unwrap();
/// assert!(frame.len() < raw.len());
/// assert_eq!(decompress(&frame, 1 << 20).unwrap(), raw);
/// ```
pub fn compress(raw: &[u8], compression: Compression) -> Result<Vec<u8>, CodecError> {
    let Compression { codec, level } = compression;
    codec.check_level(level)?;
    let header = FrameHeader {
        codec,
        raw_len: raw.len() as u64,
    };
    let mut frame = Vec::from(header.to_bytes());
    match codec {
        Codec::None => frame.extend_from_slice(raw),
        #[cfg(feature = "deflate")]
        Codec::Deflate | Codec::Zlib | Codec::Gzip => {
            deflate::compress(codec, raw, level.unwrap_or(6), &mut frame)
        }
        #[cfg(feature = "snappy")]
        Codec::Snappy => snappy::compress(raw, &mut frame)?,
        #[cfg(feature = "zstd")]
        Codec::Zstd => zstd::compress(raw, &mut frame),
        #[allow(unreachable_patterns)]
        _ => return Err(CodecError::Disabled { codec }),
    }
    frame.extend_from_slice(&digest(raw).to_le_bytes());
    Ok(frame)
}

/// Decompresses a frame, refusing one whose raw length exceeds `max_bytes`
/// before allocating, and checking the raw length and digest.
pub fn decompress(frame: &[u8], max_bytes: usize) -> Result<Vec<u8>, CodecError> {
    let header = FrameHeader::parse(frame)?;
    if header.raw_len > max_bytes as u64 {
        return Err(CodecError::TooLarge {
            raw: header.raw_len,
            limit: max_bytes as u64,
        });
    }
    let raw_len = header.raw_len as usize;
    let body = &frame[FRAME_HEADER_BYTES..frame.len() - FRAME_TRAILER_BYTES];
    let raw = decompress_body(header.codec, body, raw_len)?;
    check_digest(&raw, FrameHeader::trailer_digest(frame))?;
    Ok(raw)
}

/// Decompresses a body to exactly `raw_len` bytes.
fn decompress_body(codec: Codec, body: &[u8], raw_len: usize) -> Result<Vec<u8>, CodecError> {
    match codec {
        Codec::None => {
            if body.len() != raw_len {
                return Err(CodecError::LengthMismatch {
                    expected: raw_len as u64,
                    got: body.len() as u64,
                });
            }
            Ok(body.to_vec())
        }
        #[cfg(feature = "deflate")]
        Codec::Deflate | Codec::Zlib | Codec::Gzip => deflate::decompress(codec, body, raw_len),
        #[cfg(feature = "snappy")]
        Codec::Snappy => snappy::decompress(body, raw_len),
        #[cfg(feature = "zstd")]
        Codec::Zstd => zstd::decompress(body, raw_len),
        #[allow(unreachable_patterns)]
        _ => Err(CodecError::Disabled { codec }),
    }
}

/// Checks raw bytes against a recorded digest.
pub fn check_digest(raw: &[u8], expected: u64) -> Result<(), CodecError> {
    let got = digest(raw);
    if got == expected {
        Ok(())
    } else {
        Err(CodecError::DigestMismatch { expected, got })
    }
}
