//! Codec errors.

use crate::code::Code;
use core::fmt;

use super::Codec;

/// Why compression or decompression failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecError {
    /// The codec's feature is not enabled in this build.
    Disabled {
        /// The codec asked for, whose cargo feature this build lacks.
        codec: Codec,
    },
    /// A frame names a codec id this crate does not know.
    CodecUnknown {
        /// The frame's codec id byte.
        id: u8,
    },
    /// The codec does not offer that level.
    LevelUnsupported {
        /// The codec asked to compress.
        codec: Codec,
        /// The level asked for.
        level: u8,
    },
    /// Too short to be a frame.
    FrameTruncated {
        /// Bytes given, fewer than a frame's header and trailer.
        len: usize,
    },
    /// The bytes do not start with `DSZ`.
    FrameBadMagic,
    /// A frame format version this crate does not read.
    FrameUnsupportedVersion {
        /// The frame format version byte found.
        got: u8,
        /// The version this crate reads.
        supported: u8,
    },
    /// The frame's raw length exceeds the caller's limit (a zip bomb is refused here).
    TooLarge {
        /// The raw length the frame records, in bytes.
        raw: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// The input is larger than the codec can take.
    InputTooLarge {
        /// The codec asked to compress it.
        codec: Codec,
        /// Input length, in bytes.
        len: u64,
    },
    /// The body is not valid for its codec.
    Corrupt {
        /// The frame's codec, whose decoder refused the body.
        codec: Codec,
    },
    /// The body decodes to a different length than recorded.
    LengthMismatch {
        /// The raw length the frame records, in bytes.
        expected: u64,
        /// The length found (or a lower bound when it was longer).
        got: u64,
    },
    /// The raw bytes do not match the recorded digest.
    DigestMismatch {
        /// The XXH3-64 digest the frame records.
        expected: u64,
        /// The XXH3-64 digest of the bytes decoded.
        got: u64,
    },
}

impl CodecError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::Disabled { .. } => Code::CodecDisabled,
            Self::CodecUnknown { .. } => Code::CodecUnknown,
            Self::LevelUnsupported { .. } => Code::CodecLevelUnsupported,
            Self::FrameTruncated { .. } => Code::FrameTruncated,
            Self::FrameBadMagic => Code::FrameBadMagic,
            Self::FrameUnsupportedVersion { .. } => Code::FrameUnsupportedVersion,
            Self::TooLarge { .. } => Code::DecompressLimit,
            Self::InputTooLarge { .. } => Code::CodecInputTooLarge,
            Self::Corrupt { .. } => Code::CodecCorrupt,
            Self::LengthMismatch { .. } => Code::LengthMismatch,
            Self::DigestMismatch { .. } => Code::DigestMismatch,
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disabled { codec } => write!(f, "codec {codec} is not enabled in this build"),
            Self::CodecUnknown { id } => write!(f, "unknown codec id {id}"),
            Self::LevelUnsupported { codec, level } => {
                write!(f, "codec {codec} does not support level {level}")
            }
            Self::FrameTruncated { len } => write!(f, "frame is {len} bytes, too short"),
            Self::FrameBadMagic => f.write_str("frame does not start with DSZ"),
            Self::FrameUnsupportedVersion { got, supported } => {
                write!(f, "frame version {got}, this build reads {supported}")
            }
            Self::TooLarge { raw, limit } => {
                write!(f, "decompressed size is {raw} bytes, limit {limit}")
            }
            Self::InputTooLarge { codec, len } => {
                write!(f, "input of {len} bytes is too large for {codec}")
            }
            Self::Corrupt { codec } => write!(f, "{codec} data is corrupt"),
            Self::LengthMismatch { expected, got } => {
                write!(f, "decompressed to {got} bytes, recorded {expected}")
            }
            Self::DigestMismatch { expected, got } => {
                write!(
                    f,
                    "digest {got:016x} does not match recorded {expected:016x}"
                )
            }
        }
    }
}
