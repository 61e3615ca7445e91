//! Zstandard through ruzstd. Its encoder implements only the `Fastest` level
//! (the others panic), so this module never names another.

use alloc::vec;
use alloc::vec::Vec;

use ruzstd::decoding::StreamingDecoder;
use ruzstd::encoding::{CompressionLevel, compress_to_vec};
use ruzstd::io::Read;

use super::{Codec, CodecError};

/// Largest window a frame may ask for beyond its recorded raw length.
const MIN_WINDOW_LIMIT: u64 = 8 << 20;

pub(super) fn compress(raw: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&compress_to_vec(raw, CompressionLevel::Fastest));
}

pub(super) fn decompress(body: &[u8], raw_len: usize) -> Result<Vec<u8>, CodecError> {
    let corrupt = CodecError::Corrupt { codec: Codec::Zstd };
    // A frame needs no window larger than its content: bound what a hostile
    // header can make the decoder allocate.
    let window = (raw_len as u64).max(MIN_WINDOW_LIMIT);
    let mut source = body;
    let mut decoder = StreamingDecoder::new_with_max_window_size(&mut source, window)
        .map_err(|_| corrupt.clone())?;
    // Decode straight into the output, with room for one byte more than
    // recorded so a longer stream is detected rather than truncated.
    let mut out = vec![0u8; raw_len + 1];
    let mut filled = 0;
    loop {
        let n = decoder
            .read(&mut out[filled..])
            .map_err(|_| corrupt.clone())?;
        if n == 0 {
            break;
        }
        filled += n;
        if filled > raw_len {
            return Err(CodecError::LengthMismatch {
                expected: raw_len as u64,
                got: filled as u64,
            });
        }
    }
    out.truncate(filled);
    drop(decoder);
    if out.len() != raw_len {
        return Err(CodecError::LengthMismatch {
            expected: raw_len as u64,
            got: out.len() as u64,
        });
    }
    if !source.is_empty() {
        return Err(corrupt);
    }
    Ok(out)
}

/// Decodes up to `want` bytes from the start of a zstd `body` that may be
/// cut short; stops, without error, where the input ends or fails.
pub(super) fn decompress_prefix(body: &[u8], raw_len: u64, want: usize) -> Vec<u8> {
    let mut source = body;
    let Ok(mut decoder) =
        StreamingDecoder::new_with_max_window_size(&mut source, raw_len.max(MIN_WINDOW_LIMIT))
    else {
        return Vec::new();
    };
    let mut out = vec![0u8; want];
    let mut filled = 0;
    while filled < want {
        // Small reads: the decoder returns what it has decoded so far instead
        // of failing the whole read at a block cut short.
        let end = want.min(filled + (16 << 10));
        match decoder.read(&mut out[filled..end]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    out.truncate(filled);
    out
}
