//! deflate, zlib and gzip through miniz_oxide. miniz_oxide has no gzip
//! wrapper, so this module writes and parses the RFC 1952 header and trailer.

use alloc::vec;
use alloc::vec::Vec;

use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress as deflate,
    create_comp_flags_from_zip_params,
};
use miniz_oxide::deflate::{compress_to_vec, compress_to_vec_zlib};
use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{DecompressorOxide, decompress as inflate, inflate_flags};

use super::crc32::Crc32;
use super::{Codec, CodecError};

/// gzip header fields: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
const FTEXT_FHCRC_FEXTRA_FNAME_FCOMMENT: u8 = 0x1f;
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

pub(super) fn compress(codec: Codec, raw: &[u8], level: u8, out: &mut Vec<u8>) {
    match codec {
        Codec::Zlib => out.extend_from_slice(&compress_to_vec_zlib(raw, level)),
        Codec::Gzip => {
            out.extend_from_slice(&GZIP_HEADER);
            out.extend_from_slice(&compress_to_vec(raw, level));
            out.extend_from_slice(&Crc32::of(raw).to_le_bytes());
            // ISIZE is the length modulo 2^32 (RFC 1952).
            out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        }
        _ => out.extend_from_slice(&compress_to_vec(raw, level)),
    }
}

pub(super) fn decompress(codec: Codec, body: &[u8], raw_len: usize) -> Result<Vec<u8>, CodecError> {
    let corrupt = CodecError::Corrupt { codec };
    match codec {
        Codec::Zlib => inflate_exact(
            body,
            raw_len,
            inflate_flags::TINFL_FLAG_PARSE_ZLIB_HEADER,
            codec,
        ),
        Codec::Gzip => {
            let start = gzip_body_start(body).ok_or(corrupt.clone())?;
            let deflated = body
                .len()
                .checked_sub(8)
                .filter(|&end| end >= start)
                .ok_or(corrupt.clone())?;
            let raw = inflate_exact(&body[start..deflated], raw_len, 0, codec)?;
            let trailer = &body[deflated..];
            let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
            let isize = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
            if crc != Crc32::of(&raw) || isize != raw.len() as u32 {
                return Err(corrupt);
            }
            Ok(raw)
        }
        _ => inflate_exact(body, raw_len, 0, codec),
    }
}

/// Inflates `input` into exactly `raw_len` bytes, consuming all of it.
fn inflate_exact(
    input: &[u8],
    raw_len: usize,
    flags: u32,
    codec: Codec,
) -> Result<Vec<u8>, CodecError> {
    let mut out = vec![0u8; raw_len];
    let mut state = DecompressorOxide::new();
    let flags = flags | inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let (status, consumed, written) = inflate(&mut state, input, &mut out, 0, flags);
    match status {
        TINFLStatus::Done if written == raw_len && consumed == input.len() => Ok(out),
        TINFLStatus::Done if written != raw_len => Err(CodecError::LengthMismatch {
            expected: raw_len as u64,
            got: written as u64,
        }),
        // The output buffer is full yet the stream goes on: longer than recorded.
        TINFLStatus::HasMoreOutput => Err(CodecError::LengthMismatch {
            expected: raw_len as u64,
            got: raw_len as u64 + 1,
        }),
        _ => Err(CodecError::Corrupt { codec }),
    }
}

/// Offset of the deflate data after a gzip header, honouring its optional fields.
fn gzip_body_start(body: &[u8]) -> Option<usize> {
    let header = body.get(..10)?;
    if header[..3] != GZIP_HEADER[..3] || header[3] & !FTEXT_FHCRC_FEXTRA_FNAME_FCOMMENT != 0 {
        return None;
    }
    let flags = header[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = body.get(at..at + 2)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for field in [FNAME, FCOMMENT] {
        if flags & field != 0 {
            at += body.get(at..)?.iter().position(|&b| b == 0)? + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    (at <= body.len()).then_some(at)
}

/// A deflate, zlib or gzip encoder fed in pieces, for the streaming splitter:
/// its output goes to a sink as it is produced, so memory stays bounded.
pub(crate) struct DeflateStream {
    compressor: alloc::boxed::Box<CompressorOxide>,
    codec: Codec,
    crc: Crc32,
    len: u64,
    out: Vec<u8>,
}

impl DeflateStream {
    /// An encoder for `codec` (deflate, zlib or gzip) at `level`.
    pub(crate) fn new(codec: Codec, level: u8, sink: &mut dyn FnMut(&[u8])) -> Self {
        // Positive window bits ask miniz for the zlib wrapper (and its Adler-32).
        let window_bits = if codec == Codec::Zlib { 15 } else { -15 };
        let flags = create_comp_flags_from_zip_params(level.into(), window_bits, 0);
        if codec == Codec::Gzip {
            sink(&GZIP_HEADER);
        }
        Self {
            compressor: alloc::boxed::Box::new(CompressorOxide::new(flags)),
            codec,
            crc: Crc32::new(),
            len: 0,
            out: vec![0; 64 * 1024],
        }
    }

    /// Compresses the next piece of raw bytes.
    pub(crate) fn write(&mut self, mut input: &[u8], sink: &mut dyn FnMut(&[u8])) {
        self.crc.update(input);
        self.len += input.len() as u64;
        while !input.is_empty() {
            let (_, consumed, produced) =
                deflate(&mut self.compressor, input, &mut self.out, TDEFLFlush::None);
            sink(&self.out[..produced]);
            input = &input[consumed..];
        }
    }

    /// Ends the stream (and writes gzip's trailer).
    pub(crate) fn finish(mut self, sink: &mut dyn FnMut(&[u8])) {
        loop {
            let (status, _, produced) =
                deflate(&mut self.compressor, &[], &mut self.out, TDEFLFlush::Finish);
            sink(&self.out[..produced]);
            if status != TDEFLStatus::Okay {
                break;
            }
        }
        if self.codec == Codec::Gzip {
            sink(&self.crc.sum().to_le_bytes());
            sink(&(self.len as u32).to_le_bytes());
        }
    }
}

/// Inflates up to `want` bytes from the start of a deflate, zlib or gzip
/// `body` that may be cut short; stops early, without error, where the
/// input ends.
pub(super) fn inflate_prefix(
    body: &[u8],
    codec: Codec,
    want: usize,
) -> Result<Vec<u8>, CodecError> {
    use miniz_oxide::inflate::stream::{InflateState, inflate as inflate_stream};
    use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
    let (input, format) = match codec {
        Codec::Zlib => (body, DataFormat::Zlib),
        Codec::Gzip => match gzip_body_start(body) {
            Some(start) => (&body[start..], DataFormat::Raw),
            None if body.len() < 10 => return Ok(Vec::new()),
            None => return Err(CodecError::Corrupt { codec }),
        },
        _ => (body, DataFormat::Raw),
    };
    let mut state = InflateState::new_boxed(format);
    let mut out = vec![0u8; want];
    let (mut read, mut written) = (0, 0);
    while written < want {
        let result = inflate_stream(
            &mut state,
            &input[read..],
            &mut out[written..],
            MZFlush::None,
        );
        read += result.bytes_consumed;
        written += result.bytes_written;
        match result.status {
            Ok(MZStatus::StreamEnd) => break,
            Ok(_) if result.bytes_consumed + result.bytes_written > 0 => {}
            // No progress, or the input ran out: this is all it holds.
            Ok(_) | Err(MZError::Buf) => break,
            Err(_) => return Err(CodecError::Corrupt { codec }),
        }
    }
    out.truncate(written);
    Ok(out)
}
