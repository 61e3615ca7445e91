//! Cutting a frame, arriving in slices, into chunk payloads of a fixed size,
//! each digested as it is sealed (while its bytes are still in cache).

use alloc::string::String;
use alloc::vec::Vec;

use crate::digest::{Digester, chunk_digest};

/// Fills chunk buffers of a fixed size from a sequence of slices.
pub(crate) struct Cutter {
    size: usize,
    version: String,
    current: Vec<u8>,
    done: Vec<(Vec<u8>, u64)>,
    /// Chunks sealed so far, including those already taken.
    sealed: u32,
    /// Bytes written so far.
    written: u64,
    /// Bytes expected in all, when known (sizes the buffers).
    expected: Option<usize>,
}

impl Cutter {
    /// A cutter of `size`-byte chunks for `version`; `expected` is the whole
    /// frame's length when known.
    pub(crate) fn new(size: usize, version: String, expected: Option<usize>) -> Self {
        let first = expected.map_or(size, |total| size.min(total));
        Self {
            size,
            version,
            current: Vec::with_capacity(first),
            done: Vec::with_capacity(expected.map_or(1, |total| total.div_ceil(size))),
            sealed: 0,
            written: 0,
            expected,
        }
    }

    /// Bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Appends `slice`, feeding each copied piece to `digester` too.
    pub(crate) fn write(&mut self, mut slice: &[u8], mut digester: Option<&mut Digester>) {
        while !slice.is_empty() {
            let take = slice.len().min(self.size - self.current.len());
            let (piece, rest) = slice.split_at(take);
            self.current.extend_from_slice(piece);
            if let Some(d) = digester.as_deref_mut() {
                d.update(piece);
            }
            self.written += take as u64;
            slice = rest;
            if self.current.len() == self.size {
                self.seal();
            }
        }
    }

    /// Closes the current chunk, digesting it while it is in cache.
    fn seal(&mut self) {
        let left = self.expected.map_or(self.size, |total| {
            total.saturating_sub(self.written as usize)
        });
        let next = Vec::with_capacity(self.size.min(left));
        let data = core::mem::replace(&mut self.current, next);
        let digest = chunk_digest(&data, &self.version, self.sealed);
        self.sealed += 1;
        self.done.push((data, digest));
    }

    /// The chunks sealed since the last call, with the sequence number of the first.
    pub(crate) fn take_sealed(&mut self) -> (u32, Vec<(Vec<u8>, u64)>) {
        let first = self.sealed - self.done.len() as u32;
        (first, core::mem::take(&mut self.done))
    }

    /// Seals the last, short chunk and returns the chunks not yet taken,
    /// with the sequence number of the first.
    pub(crate) fn finish(mut self) -> (u32, Vec<(Vec<u8>, u64)>) {
        if !self.current.is_empty() {
            self.seal();
        }
        self.take_sealed()
    }
}
