//! Zstandard through ruzstd. Its encoder implements only the `Fastest` level
//! (the others panic), so this module never names another.

use alloc::vec;
use alloc::vec::Vec;

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use ruzstd::encoding::{CompressionLevel, compress_to_vec};
use ruzstd::io::Read;

use super::{Codec, CodecError};

/// Largest window a frame may ask for beyond its recorded raw length.
const MIN_WINDOW_LIMIT: u64 = 8 << 20;

/// The largest window accepted for `raw_len` bytes: a frame needs no window
/// larger than its content, so this bounds what a hostile header can make
/// the decoder allocate.
fn window_limit(raw_len: u64) -> u64 {
    raw_len.max(MIN_WINDOW_LIMIT)
}

pub(super) fn compress(raw: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&compress_to_vec(raw, CompressionLevel::Fastest));
}

pub(super) fn decompress(body: &[u8], raw_len: usize) -> Result<Vec<u8>, CodecError> {
    let mut stream = ZstdStream::new(raw_len as u64, u64::MAX);
    // Decode straight into the output, with room for one byte more than
    // recorded so a longer stream is detected rather than truncated.
    let mut out = vec![0u8; raw_len + 1];
    let (used, written) = stream.decode(body, &mut out)?;
    if written > raw_len {
        return Err(CodecError::LengthMismatch {
            expected: raw_len as u64,
            got: written as u64,
        });
    }
    stream.finish()?;
    if written != raw_len {
        return Err(CodecError::LengthMismatch {
            expected: raw_len as u64,
            got: written as u64,
        });
    }
    if used != body.len() {
        return Err(CodecError::Corrupt { codec: Codec::Zstd });
    }
    out.truncate(written);
    Ok(out)
}

/// Decodes up to `want` bytes from the start of a zstd `body` that may be
/// cut short; stops, without error, where the input ends or fails.
pub(super) fn decompress_prefix(body: &[u8], raw_len: u64, want: usize) -> Vec<u8> {
    let mut stream = ZstdStream::new(raw_len, u64::MAX);
    let mut out = vec![0u8; want];
    let (mut used, mut filled) = (0, 0);
    while filled < want {
        // Small steps: what was decoded before a damaged block is kept.
        let end = want.min(filled + (16 << 10));
        match stream.decode(&body[used..], &mut out[filled..end]) {
            Ok((0, 0)) | Err(_) => break,
            Ok((u, w)) => {
                used += u;
                filled += w;
            }
        }
    }
    out.truncate(filled);
    out
}

/// A Zstandard body decoded as its bytes arrive, for a frame read in
/// pieces. ruzstd's frame decoder cannot resume inside a block, so it is
/// given one whole block at a time (a block holds at most 128 KiB): the
/// caller keeps at most one block of input, the decoder its window.
pub(super) struct ZstdStream {
    decoder: alloc::boxed::Box<FrameDecoder>,
    started: bool,
    /// The frame ends with a 4-byte content checksum (not verified: the
    /// frame's XXH3 trailer covers the output).
    checksum: bool,
}

/// Most bytes a block's content may hold (RFC 8878, Block_Maximum_Size).
const MAX_BLOCK_BYTES: usize = 128 << 10;
/// A Zstandard frame's magic number, little-endian.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

impl ZstdStream {
    /// A decoder for a frame of `raw_len` bytes, accepting windows up to
    /// what a whole decode accepts but never more than `max_window` bytes
    /// beyond the 8 MiB any frame may use.
    pub(super) fn new(raw_len: u64, max_window: u64) -> Self {
        let mut decoder = alloc::boxed::Box::new(FrameDecoder::new());
        decoder.set_max_window_size(window_limit(raw_len.min(max_window)));
        Self {
            decoder,
            started: false,
            checksum: false,
        }
    }

    /// Decodes from `input` into `out`, whole blocks only; returns the bytes
    /// consumed and written. Input after the frame's end is left unconsumed.
    pub(super) fn decode(
        &mut self,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<(usize, usize), CodecError> {
        let corrupt = || CodecError::Corrupt { codec: Codec::Zstd };
        let mut used = 0;
        if !self.started {
            if input.len() >= 4 && input[..4] != ZSTD_MAGIC {
                return Err(corrupt());
            }
            match frame_header_len(input) {
                Some(len) if len <= input.len() => {
                    let mut header = &input[..len];
                    self.decoder.init(&mut header).map_err(|_| corrupt())?;
                    self.checksum = input[4] & 0x04 != 0;
                    self.started = true;
                    used = len;
                }
                _ => return Ok((0, 0)),
            }
        }
        let mut written = 0;
        loop {
            written += self
                .decoder
                .read(&mut out[written..])
                .map_err(|_| corrupt())?;
            if written == out.len() || self.decoder.is_finished() {
                break;
            }
            let Some(len) = block_len(&input[used..], self.checksum).ok_or_else(corrupt)? else {
                break;
            };
            let mut block = &input[used..used + len];
            self.decoder
                .decode_blocks(&mut block, BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|_| corrupt())?;
            used += len;
        }
        Ok((used, written))
    }

    /// Checks the frame ended and every byte of it was read out.
    pub(super) fn finish(&self) -> Result<(), CodecError> {
        if self.started && self.decoder.is_finished() && self.decoder.can_collect() == 0 {
            Ok(())
        } else {
            Err(CodecError::Corrupt { codec: Codec::Zstd })
        }
    }
}

/// The length of the frame header `input` starts with (RFC 8878 3.1.1.1),
/// once its descriptor byte is there.
fn frame_header_len(input: &[u8]) -> Option<usize> {
    let descriptor = *input.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    let dictionary_id = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    Some(5 + usize::from(!single_segment) + dictionary_id + content_size)
}

/// The length of the block `input` starts with (header, content and, after
/// the last block, the checksum) if `input` holds all of it; `Ok(None)` if
/// it does not yet; `None` for a reserved block type or an oversized block.
fn block_len(input: &[u8], checksum: bool) -> Option<Option<usize>> {
    let Some(&[b0, b1, b2]) = input.get(..3) else {
        return Some(None);
    };
    let header = u32::from_le_bytes([b0, b1, b2, 0]);
    let size = (header >> 3) as usize;
    let content = match (header >> 1) & 3 {
        _ if size > MAX_BLOCK_BYTES => return None,
        0 | 2 => size,
        1 => 1,
        _ => return None,
    };
    let last = header & 1 != 0;
    let len = 3 + content + if last && checksum { 4 } else { 0 };
    Some((input.len() >= len).then_some(len))
}
