//! Decoding a frame that arrives in pieces (the chunks of a virtual item, a
//! network stream), releasing raw bytes as they are decoded: memory stays
//! within the pieces not yet decoded and the codec's own window, whatever the
//! frame's size. The checks are those of [`super::decompress`], made as the
//! bytes pass: never more bytes than the header's raw length, exactly that
//! many by the end, the body consumed entirely, and the trailer's digest.

use alloc::vec::Vec;

use super::{Codec, CodecError, FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES, FrameHeader};
use crate::digest::Digester;

/// Decodes a frame fed in pieces.
///
/// Feed the frame's bytes in order with [`FrameDecoder::feed`] (the last
/// piece marked), take raw bytes out with [`FrameDecoder::decode`] until it
/// returns 0, and end with [`FrameDecoder::finish`], which checks the length
/// and the digest. Bytes come out before the digest can be checked: a
/// caller that must not act on unverified bytes checks them by other means
/// (a virtual item's chunk digests) or waits for `finish`.
///
/// Memory: the bytes fed and not yet decoded (the last 8 are held back, as
/// they may be the trailer), plus the codec's state: deflate, zlib and gzip
/// ~43 KB; zstd its window (at most max(raw length, 8 MiB), and beyond
/// 8 MiB at most `buffer_limit`) and one block of input (≤ 128 KiB). Raw
/// snappy cannot be decoded in parts: its body is held until the last piece
/// and decoded whole, so its raw length must be within `buffer_limit`
/// (`DECOMPRESS_LIMIT`).
///
/// ```
/// use dynaslice_core::codec::{compress, Codec, Compression, FrameDecoder};
/// let raw = b"hello hello hello hello".repeat(1000);
/// let frame = compress(&raw, Compression::new(Codec::Deflate)).unwrap();
/// let mut decoder = FrameDecoder::new(1 << 20);
/// let (mut out, mut piece) = (Vec::new(), [0u8; 4096]);
/// for (i, part) in frame.chunks(100).enumerate() {
///     decoder.feed(part, (i + 1) * 100 >= frame.len()).unwrap();
///     loop {
///         let n = decoder.decode(&mut piece).unwrap();
///         if n == 0 { break }
///         out.extend_from_slice(&piece[..n]);
///     }
/// }
/// decoder.finish().unwrap();
/// assert_eq!(out, raw);
/// ```
pub struct FrameDecoder {
    /// Frame bytes fed and not yet decoded, from `at`.
    input: Vec<u8>,
    at: usize,
    /// Frame bytes fed in all.
    fed: u64,
    /// The last piece was fed.
    last: bool,
    header: Option<FrameHeader>,
    /// The codec's state, made when the first byte is decoded.
    body: Option<Body>,
    buffer_limit: usize,
    produced: u64,
    digest: Digester,
}

/// A codec's decoding state.
enum Body {
    Stored,
    #[cfg(feature = "deflate")]
    Inflate(super::deflate::InflateStream),
    #[cfg(feature = "zstd")]
    Zstd(super::zstd::ZstdStream),
    /// The whole raw output once the body is complete, and how much of it
    /// was given out.
    #[cfg(feature = "snappy")]
    Snappy(Option<(Vec<u8>, usize)>),
}

impl FrameDecoder {
    /// A decoder that holds at most `buffer_limit` bytes of raw output where
    /// a codec needs to hold any (see the type's documentation).
    pub fn new(buffer_limit: usize) -> Self {
        Self {
            input: Vec::new(),
            at: 0,
            fed: 0,
            last: false,
            header: None,
            body: None,
            buffer_limit,
            produced: 0,
            digest: Digester::new(),
        }
    }

    /// The frame's header, once its first 13 bytes were fed.
    pub fn header(&self) -> Option<FrameHeader> {
        self.header
    }

    /// Raw bytes decoded so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// Takes the next bytes of the frame; `last` when they are its end.
    /// Checks the header as soon as it is complete.
    pub fn feed(&mut self, bytes: &[u8], last: bool) -> Result<(), CodecError> {
        if self.last && !bytes.is_empty() {
            return Err(CodecError::Corrupt {
                codec: self.header.map_or(Codec::None, |h| h.codec),
            });
        }
        // Drop what was decoded: only a partial block (zstd) or the held-back
        // trailer remain from earlier pieces.
        self.input.drain(..self.at);
        self.at = 0;
        // Exactly: pieces of one size (chunks) then reuse the same buffer.
        self.input.reserve_exact(bytes.len());
        self.input.extend_from_slice(bytes);
        self.fed += bytes.len() as u64;
        self.last |= last;
        if self.header.is_none() && self.input.len() >= FRAME_HEADER_BYTES {
            self.header = Some(FrameHeader::parse_header(&self.input)?);
            self.at = FRAME_HEADER_BYTES;
        }
        let framing = (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64;
        if self.last && self.fed < framing {
            return Err(CodecError::FrameTruncated {
                len: self.fed as usize,
            });
        }
        if let Some(FrameHeader {
            codec: Codec::Snappy,
            raw_len,
        }) = self.header
        {
            // Held whole: no longer than snappy's bound for the raw length.
            let body = self.fed.saturating_sub(framing);
            if body > raw_len.saturating_add(raw_len / 6).saturating_add(32) {
                return Err(CodecError::Corrupt {
                    codec: Codec::Snappy,
                });
            }
        }
        Ok(())
    }

    /// Decodes the bytes fed so far into `out`; returns how many raw bytes
    /// it wrote, 0 when it needs more input (or the frame is done). Call
    /// until it returns 0 before feeding more, or memory holds every piece.
    pub fn decode(&mut self, out: &mut [u8]) -> Result<usize, CodecError> {
        let Some(header) = self.header else {
            return Ok(0);
        };
        let body = match &mut self.body {
            Some(body) => body,
            None => self.body.insert(Body::new(header, self.buffer_limit)?),
        };
        // One byte of room beyond the raw length, to see a longer body.
        let left = header.raw_len - self.produced;
        let room = usize::try_from(left.saturating_add(1)).map_or(out.len(), |r| r.min(out.len()));
        let out = &mut out[..room];
        let end = self.input.len().saturating_sub(FRAME_TRAILER_BYTES);
        let input = &self.input[self.at..end.max(self.at)];
        let (used, written) = match body {
            Body::Stored => {
                let n = input.len().min(out.len());
                out[..n].copy_from_slice(&input[..n]);
                (n, n)
            }
            #[cfg(feature = "deflate")]
            Body::Inflate(stream) => stream.decode(input, out)?,
            #[cfg(feature = "zstd")]
            Body::Zstd(stream) => stream.decode(input, out)?,
            #[cfg(feature = "snappy")]
            Body::Snappy(raw) => {
                let mut used = 0;
                if raw.is_none() && self.last {
                    *raw = Some((super::snappy::decompress(input, left as usize)?, 0));
                    used = input.len();
                }
                let written = raw.as_mut().map_or(0, |(raw, given)| {
                    let n = (raw.len() - *given).min(out.len());
                    out[..n].copy_from_slice(&raw[*given..*given + n]);
                    *given += n;
                    n
                });
                (used, written)
            }
        };
        self.at += used;
        let produced = self.produced + written as u64;
        if produced > header.raw_len {
            return Err(CodecError::LengthMismatch {
                expected: header.raw_len,
                got: produced,
            });
        }
        self.digest.update(&out[..written]);
        self.produced = produced;
        Ok(written)
    }

    /// Checks the frame is complete: the body ended and was consumed
    /// entirely, exactly the raw length was decoded, and its digest equals
    /// the trailer's. Returns that digest.
    pub fn finish(&self) -> Result<u64, CodecError> {
        let Some(header) = self.header else {
            return Err(CodecError::FrameTruncated {
                len: self.fed as usize,
            });
        };
        let framing = (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64;
        if self.fed < framing {
            return Err(CodecError::FrameTruncated {
                len: self.fed as usize,
            });
        }
        let corrupt = CodecError::Corrupt {
            codec: header.codec,
        };
        match &self.body {
            None | Some(Body::Stored) => {}
            #[cfg(feature = "deflate")]
            Some(Body::Inflate(stream)) => stream.finish()?,
            #[cfg(feature = "zstd")]
            Some(Body::Zstd(stream)) => stream.finish()?,
            #[cfg(feature = "snappy")]
            Some(Body::Snappy(raw)) => {
                if raw.as_ref().is_none_or(|(raw, given)| *given < raw.len()) {
                    return Err(corrupt);
                }
            }
        }
        if header.codec != Codec::None && self.input.len() - self.at != FRAME_TRAILER_BYTES {
            return Err(corrupt);
        }
        if self.produced != header.raw_len || self.input.len() - self.at != FRAME_TRAILER_BYTES {
            return Err(CodecError::LengthMismatch {
                expected: header.raw_len,
                got: self.produced,
            });
        }
        let trailer = FrameHeader::trailer_digest(&self.input[self.at..]);
        let got = self.digest.finish();
        if got != trailer {
            return Err(CodecError::DigestMismatch {
                expected: trailer,
                got,
            });
        }
        Ok(trailer)
    }
}

impl Body {
    /// The state for `header`'s codec, checking it is enabled and, for
    /// snappy, that its output fits `buffer_limit`.
    fn new(header: FrameHeader, buffer_limit: usize) -> Result<Self, CodecError> {
        let FrameHeader { codec, raw_len } = header;
        if !codec.is_enabled() {
            return Err(CodecError::Disabled { codec });
        }
        if codec == Codec::Snappy && raw_len > buffer_limit as u64 {
            return Err(CodecError::TooLarge {
                raw: raw_len,
                limit: buffer_limit as u64,
            });
        }
        Ok(match codec {
            #[cfg(feature = "deflate")]
            Codec::Deflate | Codec::Zlib | Codec::Gzip => {
                Self::Inflate(super::deflate::InflateStream::new(codec))
            }
            #[cfg(feature = "zstd")]
            Codec::Zstd => Self::Zstd(super::zstd::ZstdStream::new(raw_len, buffer_limit as u64)),
            #[cfg(feature = "snappy")]
            Codec::Snappy => Self::Snappy(None),
            // `none`: every codec not compiled in was refused above.
            _ => Self::Stored,
        })
    }
}
