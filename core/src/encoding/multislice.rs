//! Reading a byte stream that arrives as several slices (the chunks of a
//! virtual item) without first joining them.

use alloc::vec::Vec;

/// A cursor over a sequence of slices, read as one contiguous stream.
#[derive(Clone, Debug)]
pub struct MultiSlice<'a> {
    parts: Vec<&'a [u8]>,
    /// Index of the current part.
    part: usize,
    /// Offset in the current part.
    offset: usize,
    /// Bytes left in the whole stream.
    remaining: usize,
    /// Bytes consumed so far.
    position: usize,
}

impl<'a> MultiSlice<'a> {
    /// A cursor over `parts`, in order.
    pub fn new(parts: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let parts: Vec<&[u8]> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        let remaining = parts.iter().map(|p| p.len()).sum();
        Self {
            parts,
            part: 0,
            offset: 0,
            remaining,
            position: 0,
        }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Reads one byte.
    pub fn read_u8(&mut self) -> Option<u8> {
        let part = self.parts.get(self.part)?;
        let b = part[self.offset];
        self.advance(1);
        Some(b)
    }

    /// Copies the next `len` bytes onto `out`; `None` (and nothing read) if
    /// fewer remain.
    pub fn read_into(&mut self, len: usize, out: &mut Vec<u8>) -> Option<()> {
        if len > self.remaining {
            return None;
        }
        out.reserve(len);
        let mut left = len;
        while left > 0 {
            let part = self.parts[self.part];
            let take = left.min(part.len() - self.offset);
            out.extend_from_slice(&part[self.offset..self.offset + take]);
            self.advance(take);
            left -= take;
        }
        Some(())
    }

    /// Skips `len` bytes; `None` (and nothing skipped) if fewer remain.
    pub fn skip(&mut self, len: usize) -> Option<()> {
        if len > self.remaining {
            return None;
        }
        let mut left = len;
        while left > 0 {
            let take = left.min(self.parts[self.part].len() - self.offset);
            self.advance(take);
            left -= take;
        }
        Some(())
    }

    /// Moves forward within the current part, stepping to the next part at its end.
    fn advance(&mut self, n: usize) {
        self.offset += n;
        self.remaining -= n;
        self.position += n;
        if self.offset == self.parts[self.part].len() {
            self.part += 1;
            self.offset = 0;
        }
    }
}
