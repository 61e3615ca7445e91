//! The payload of a split: the spilled attributes' value stream, framed and
//! maybe compressed, as it is cut into chunks or stored inline.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::{
    self, Codec, CodecError, Compression, FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES, FrameHeader,
};
use crate::digest::Digester;
use crate::encoding::EncodedStream;
use crate::write::cutter::Cutter;

/// The stored frame: uncompressed, cut straight from the encoded stream's
/// pieces (the payload is copied once, into the chunks), or compressed.
pub(crate) enum Payload<'a> {
    Stored {
        header: [u8; FRAME_HEADER_BYTES],
        stream: &'a EncodedStream<'a>,
    },
    Compressed {
        codec: Codec,
        frame: Vec<u8>,
        digest: u64,
    },
}

impl<'a> Payload<'a> {
    /// Frames `stream`, compressed with `compression`.
    pub(crate) fn new(
        stream: &'a EncodedStream<'a>,
        compression: Compression,
    ) -> Result<Self, CodecError> {
        if compression.codec == Codec::None {
            let header = FrameHeader {
                codec: Codec::None,
                raw_len: stream.len() as u64,
            };
            return Ok(Self::Stored {
                header: header.to_bytes(),
                stream,
            });
        }
        let raw = stream.to_vec();
        Ok(Self::Compressed {
            codec: compression.codec,
            frame: codec::compress(&raw, compression)?,
            digest: crate::digest::digest(&raw),
        })
    }

    pub(crate) fn codec(&self) -> Codec {
        match self {
            Self::Stored { .. } => Codec::None,
            Self::Compressed { codec, .. } => *codec,
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Stored { stream, .. } => FRAME_HEADER_BYTES + stream.len() + FRAME_TRAILER_BYTES,
            Self::Compressed { frame, .. } => frame.len(),
        }
    }

    /// The whole frame in one buffer, and the raw stream's digest.
    pub(crate) fn to_frame(&self) -> (Vec<u8>, u64) {
        let mut cutter = Cutter::new(self.len(), String::new(), Some(self.len()));
        let digest = self.write(&mut cutter);
        let (_, mut frames) = cutter.finish();
        (
            frames.pop().map(|(frame, _)| frame).unwrap_or_default(),
            digest,
        )
    }

    /// The frame cut into pieces of `size` bytes (the last may be shorter),
    /// each with its chunk digest, and the raw stream's digest. Each byte is
    /// copied once and hashed right after, while it is still in cache.
    pub(crate) fn cut(&self, size: usize, version: String) -> (Vec<(Vec<u8>, u64)>, u64) {
        let mut cutter = Cutter::new(size, version, Some(self.len()));
        let digest = self.write(&mut cutter);
        (cutter.finish().1, digest)
    }

    fn write(&self, cutter: &mut Cutter) -> u64 {
        match self {
            Self::Stored { header, stream } => {
                cutter.write(header, None);
                let mut digester = Digester::new();
                stream
                    .slices()
                    .for_each(|s| cutter.write(s, Some(&mut digester)));
                let digest = digester.finish();
                cutter.write(&digest.to_le_bytes(), None);
                digest
            }
            Self::Compressed { frame, digest, .. } => {
                cutter.write(frame, None);
                *digest
            }
        }
    }
}
