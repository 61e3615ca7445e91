//! Decoding the start of a frame from its first bytes only: a preview of a
//! large item reads its first chunks, not all of them. The bytes returned
//! are not checked against the whole payload's digest (that needs every
//! byte); a reader checks each chunk's own digest instead.

use alloc::vec::Vec;

use super::{Codec, CodecError, FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES, FrameHeader};

/// Decodes up to `want` bytes of the raw payload from `frame`, the first
/// bytes of a stored frame (`complete`: the whole frame, trailer included).
/// Returns fewer bytes when the frame given is too short to decode more.
/// Raw snappy cannot be decoded in part and returns nothing until complete;
/// zstd (ruzstd) releases bytes only once they leave its window, so a frame
/// smaller than its window decodes only complete.
/// Never allocates more than `want` (nor more than the recorded raw length).
pub fn decompress_prefix(frame: &[u8], complete: bool, want: usize) -> Result<Vec<u8>, CodecError> {
    let header = FrameHeader::parse_header(frame)?;
    let want = want.min(usize::try_from(header.raw_len).unwrap_or(usize::MAX));
    let end = if complete {
        frame
            .len()
            .checked_sub(FRAME_TRAILER_BYTES)
            .filter(|&end| end >= FRAME_HEADER_BYTES)
            .ok_or(CodecError::FrameTruncated { len: frame.len() })?
    } else {
        frame.len()
    };
    let body = &frame[FRAME_HEADER_BYTES..end];
    match header.codec {
        Codec::None => Ok(body[..want.min(body.len())].to_vec()),
        #[cfg(feature = "deflate")]
        Codec::Deflate | Codec::Zlib | Codec::Gzip => {
            super::deflate::inflate_prefix(body, header.codec, want)
        }
        #[cfg(feature = "zstd")]
        Codec::Zstd => Ok(super::zstd::decompress_prefix(body, header.raw_len, want)),
        #[cfg(feature = "snappy")]
        Codec::Snappy if complete => {
            let raw_len = usize::try_from(header.raw_len).map_err(|_| CodecError::Corrupt {
                codec: Codec::Snappy,
            })?;
            let mut raw = super::snappy::decompress(body, raw_len)?;
            raw.truncate(want);
            Ok(raw)
        }
        #[cfg(feature = "snappy")]
        Codec::Snappy => Ok(Vec::new()),
        #[allow(unreachable_patterns)]
        codec => Err(CodecError::Disabled { codec }),
    }
}
