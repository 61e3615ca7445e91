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
    let mut header = GzipHeader::new();
    let used = header.read(body)?;
    header.is_done().then_some(used)
}

/// The optional gzip header fields, in the order RFC 1952 stores them.
const GZIP_FIELDS: [u8; 4] = [FEXTRA, FNAME, FCOMMENT, FHCRC];

/// Where a gzip header being read stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GzipField {
    /// The fixed ten bytes, this many read.
    Fixed(u8),
    /// FEXTRA's length (XLEN), its low byte if read.
    ExtraLen(Option<u8>),
    /// FEXTRA's bytes, this many left.
    Extra(usize),
    /// FNAME, up to its zero byte.
    Name,
    /// FCOMMENT, up to its zero byte.
    Comment,
    /// FHCRC, this many bytes left (not verified).
    HeaderCrc(u8),
    /// The deflate data follows.
    Done,
}

/// A gzip member's header (RFC 1952) read as its bytes arrive, so a frame
/// read in pieces needs no header held whole (FNAME has no length limit).
struct GzipHeader {
    field: GzipField,
    flags: u8,
    /// Index in [`GZIP_FIELDS`] of the next optional field to consider.
    next: usize,
}

impl GzipHeader {
    fn new() -> Self {
        Self {
            field: GzipField::Fixed(0),
            flags: 0,
            next: 0,
        }
    }

    fn is_done(&self) -> bool {
        self.field == GzipField::Done
    }

    /// Reads header bytes from `input`; returns how many belong to the
    /// header (all of `input` unless the header ends within it), or `None`
    /// for a header this crate does not accept.
    fn read(&mut self, input: &[u8]) -> Option<usize> {
        use GzipField::*;
        let mut used = 0;
        while let (Some(&byte), false) = (input.get(used), self.is_done()) {
            used += 1;
            self.field = match self.field {
                Fixed(n) => {
                    let n = usize::from(n);
                    if (n < 3 && byte != GZIP_HEADER[n])
                        || (n == 3 && byte & !FTEXT_FHCRC_FEXTRA_FNAME_FCOMMENT != 0)
                    {
                        return None;
                    }
                    if n == 3 {
                        self.flags = byte;
                    }
                    if n == 9 {
                        self.next_field()
                    } else {
                        Fixed(n as u8 + 1)
                    }
                }
                ExtraLen(None) => ExtraLen(Some(byte)),
                ExtraLen(Some(low)) => match u16::from_le_bytes([low, byte]) {
                    0 => self.next_field(),
                    len => Extra(usize::from(len)),
                },
                Extra(left) => {
                    // This byte and as many more as the field holds and input has.
                    let skip = (left - 1).min(input.len() - used);
                    used += skip;
                    match left - 1 - skip {
                        0 => self.next_field(),
                        left => Extra(left),
                    }
                }
                Name | Comment if byte != 0 => self.field,
                Name | Comment | HeaderCrc(1) => self.next_field(),
                HeaderCrc(_) => HeaderCrc(1),
                Done => Done,
            };
        }
        Some(used)
    }

    /// The next optional field the flags name, or the end of the header.
    fn next_field(&mut self) -> GzipField {
        while let Some(&flag) = GZIP_FIELDS.get(self.next) {
            self.next += 1;
            if self.flags & flag != 0 {
                return match flag {
                    FEXTRA => GzipField::ExtraLen(None),
                    FNAME => GzipField::Name,
                    FCOMMENT => GzipField::Comment,
                    _ => GzipField::HeaderCrc(2),
                };
            }
        }
        GzipField::Done
    }
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

/// A deflate, zlib or gzip body decoded as its bytes arrive, for a frame
/// read in pieces: miniz_oxide's decompressor over a 32 KiB window of the
/// output (~43 KB in all), and for gzip the header, CRC-32 and ISIZE around
/// the deflate data, read without holding any of them whole.
pub(super) struct InflateStream {
    decompressor: alloc::boxed::Box<DecompressorOxide>,
    /// The output's last 32 KiB, which back-references read: the
    /// decompressor writes into it in place, wrapping at its end.
    window: Vec<u8>,
    /// Where the decompressor writes next.
    at: usize,
    /// Bytes just before `at` not yet given out.
    pending: usize,
    /// The window was filled once. Until then the decompressor is told its
    /// output starts at the window's start, so a distance reaching before
    /// the first byte is refused as the one-shot decoder refuses it (in a
    /// wrapping window it would read zeros).
    wrapped: bool,
    codec: Codec,
    gzip: Option<alloc::boxed::Box<GzipMember>>,
    /// The deflate data has ended (zlib: its Adler-32 checked).
    ended: bool,
}

/// What surrounds gzip's deflate data.
struct GzipMember {
    header: GzipHeader,
    crc: Crc32,
    len: u32,
    trailer: [u8; 8],
    trailer_read: usize,
}

impl InflateStream {
    pub(super) fn new(codec: Codec) -> Self {
        let gzip = (codec == Codec::Gzip).then(|| {
            alloc::boxed::Box::new(GzipMember {
                header: GzipHeader::new(),
                crc: Crc32::new(),
                len: 0,
                trailer: [0; 8],
                trailer_read: 0,
            })
        });
        Self {
            decompressor: alloc::boxed::Box::default(),
            window: vec![0; miniz_oxide::inflate::core::TINFL_LZ_DICT_SIZE],
            at: 0,
            pending: 0,
            wrapped: false,
            codec,
            gzip,
            ended: false,
        }
    }

    /// Decodes from `input` into `out` until either runs out; returns the
    /// bytes consumed and written. Input after the end is `CODEC_CORRUPT`.
    pub(super) fn decode(
        &mut self,
        mut input: &[u8],
        out: &mut [u8],
    ) -> Result<(usize, usize), CodecError> {
        let corrupt = CodecError::Corrupt { codec: self.codec };
        let given = input.len();
        let mut in_header = false;
        if let Some(gzip) = &mut self.gzip {
            let used = gzip.header.read(input).ok_or(corrupt.clone())?;
            input = &input[used..];
            in_header = !gzip.header.is_done();
        }
        let mut flags = inflate_flags::TINFL_FLAG_HAS_MORE_INPUT;
        if self.codec == Codec::Zlib {
            flags |= inflate_flags::TINFL_FLAG_PARSE_ZLIB_HEADER
                | inflate_flags::TINFL_FLAG_COMPUTE_ADLER32;
        }
        if !self.wrapped {
            flags |= inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
        }
        let mut written = 0;
        loop {
            let n = self.pending.min(out.len() - written);
            let start = self.at - self.pending;
            out[written..written + n].copy_from_slice(&self.window[start..start + n]);
            self.pending -= n;
            written += n;
            if in_header || self.ended || written == out.len() {
                break;
            }
            if self.at == self.window.len() {
                self.at = 0;
                self.wrapped = true;
                flags &= !inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
            }
            let (status, used, n) = inflate(
                &mut self.decompressor,
                input,
                &mut self.window,
                self.at,
                flags,
            );
            input = &input[used..];
            self.at += n;
            self.pending = n;
            match status {
                _ if (status as i32) < 0 => return Err(corrupt),
                TINFLStatus::Done => self.ended = true,
                _ if used + n > 0 => {}
                // No progress: the input ran out.
                _ => break,
            }
        }
        if let Some(gzip) = &mut self.gzip {
            gzip.crc.update(&out[..written]);
            gzip.len = gzip.len.wrapping_add(written as u32);
            if self.ended {
                let take = (8 - gzip.trailer_read).min(input.len());
                gzip.trailer[gzip.trailer_read..][..take].copy_from_slice(&input[..take]);
                gzip.trailer_read += take;
                input = &input[take..];
            }
        }
        if self.ended && !input.is_empty() {
            return Err(corrupt);
        }
        Ok((given - input.len(), written))
    }

    /// Checks the body ended: the deflate data complete and given out, and
    /// for gzip its CRC-32 and ISIZE (the length modulo 2^32) those of the
    /// output.
    pub(super) fn finish(&self) -> Result<(), CodecError> {
        let trailer_ok = self.gzip.as_ref().is_none_or(|gzip| {
            let [c0, c1, c2, c3, l0, l1, l2, l3] = gzip.trailer;
            gzip.trailer_read == 8
                && u32::from_le_bytes([c0, c1, c2, c3]) == gzip.crc.sum()
                && u32::from_le_bytes([l0, l1, l2, l3]) == gzip.len
        });
        if self.ended && self.pending == 0 && trailer_ok {
            Ok(())
        } else {
            Err(CodecError::Corrupt { codec: self.codec })
        }
    }
}
