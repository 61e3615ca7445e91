//! Raw snappy through snap.

use alloc::vec;
use alloc::vec::Vec;

use super::{Codec, CodecError};

pub(super) fn compress(raw: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
    let too_large = CodecError::InputTooLarge {
        codec: Codec::Snappy,
        len: raw.len() as u64,
    };
    let start = out.len();
    out.resize(start + snap::raw::max_compress_len(raw.len()), 0);
    if out.len() == start && !raw.is_empty() {
        return Err(too_large);
    }
    let written = snap::raw::Encoder::new()
        .compress(raw, &mut out[start..])
        .map_err(|_| too_large)?;
    out.truncate(start + written);
    Ok(())
}

pub(super) fn decompress(body: &[u8], raw_len: usize) -> Result<Vec<u8>, CodecError> {
    let corrupt = CodecError::Corrupt {
        codec: Codec::Snappy,
    };
    // The stream states its length first: check it before allocating.
    let len = snap::raw::decompress_len(body).map_err(|_| corrupt.clone())?;
    if len != raw_len {
        return Err(CodecError::LengthMismatch {
            expected: raw_len as u64,
            got: len as u64,
        });
    }
    let mut out = vec![0u8; raw_len];
    snap::raw::Decoder::new()
        .decompress(body, &mut out)
        .map_err(|_| corrupt)?;
    Ok(out)
}
