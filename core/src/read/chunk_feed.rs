//! The chunks of a stored payload taken one by one in sequence order and fed
//! to a [`FrameDecoder`]: what [`crate::ChunkReader`] (one attribute,
//! streamed) and [`crate::Reassembler`] (the whole item) share.

use alloc::string::String;

use crate::codec::{FRAME_HEADER_BYTES, FrameDecoder};
use crate::digest::chunk_digest;
use crate::key::KeySchema;
use crate::layout::Layout;
use crate::manifest::Manifest;
use crate::read::reassemble::{ReassembleError, ReassembleOptions, check_chunk};
use crate::value::Item;

/// A payload's chunks, checked and fed in order.
pub(crate) struct ChunkFeed {
    pub manifest: Manifest,
    /// The next chunk expected.
    pub next: u32,
    pub frame: FrameDecoder,
    /// The manifest's version as text, which seeds every chunk digest.
    version: String,
}

/// A chunk that passed [`ChunkFeed::take`]: the next in order, its key and
/// length right; its bytes not yet fed.
pub(crate) struct Taken<'c> {
    pub seq: u32,
    data: &'c [u8],
    /// Its bytes match its recorded digest.
    pub intact: bool,
}

impl ChunkFeed {
    /// A feed of `manifest`'s chunks into a decoder holding at most
    /// `max_raw_bytes` where a codec must hold output.
    pub fn new(manifest: Manifest, max_raw_bytes: usize) -> Self {
        Self {
            version: manifest.version.to_text(),
            manifest,
            next: 0,
            frame: FrameDecoder::new(max_raw_bytes),
        }
    }

    /// Checks `chunk` on its own (key, version, position, length, `_d` and
    /// `_h`) and that it is the next one, and whether its bytes match its
    /// digest: the caller decides when a damaged chunk fails.
    pub fn take<'c>(
        &self,
        key: &KeySchema,
        layout: &Layout,
        parent_key: &Item,
        chunk: &'c Item,
    ) -> Result<Taken<'c>, ReassembleError> {
        let options = ReassembleOptions::new(key, layout);
        let index = self.next as usize;
        let (seq, (data, digest)) =
            check_chunk(parent_key, chunk, index, &self.manifest, &options)?;
        if seq < self.next {
            return Err(ReassembleError::ChunkDuplicate { seq });
        }
        if seq > self.next {
            return Err(ReassembleError::ChunkMissing {
                seq: self.next,
                count: self.manifest.chunk_count,
            });
        }
        let intact = chunk_digest(data, &self.version, seq) == digest;
        Ok(Taken { seq, data, intact })
    }

    /// Feeds a taken chunk's bytes to the decoder, checking the frame's
    /// header against the manifest once the first chunk is in.
    pub fn feed(&mut self, taken: Taken<'_>) -> Result<(), ReassembleError> {
        let Taken { seq, data, .. } = taken;
        if seq == 0 && data.len() < FRAME_HEADER_BYTES {
            return Err(ReassembleError::FrameMismatch);
        }
        self.frame
            .feed(data, seq + 1 == self.manifest.chunk_count)?;
        if seq == 0 {
            let header = self.frame.header().ok_or(ReassembleError::FrameMismatch)?;
            if header.codec != self.manifest.codec || header.raw_len != self.manifest.raw_len {
                return Err(ReassembleError::FrameMismatch);
            }
        }
        self.next += 1;
        Ok(())
    }

    /// `ChunkMissing` naming the first chunk not taken, if any is left.
    pub fn check_complete(&self) -> Result<(), ReassembleError> {
        if self.next < self.manifest.chunk_count {
            return Err(ReassembleError::ChunkMissing {
                seq: self.next,
                count: self.manifest.chunk_count,
            });
        }
        Ok(())
    }
}
