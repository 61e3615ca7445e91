//! Reading a byte stream that arrives as several slices (the chunks of a
//! virtual item) without first joining them.

use alloc::vec::Vec;

/// A cursor over a sequence of slices, read as one contiguous stream.
#[derive(Clone, Debug)]
pub struct MultiSlice<'a> {
    parts: Vec<&'a [u8]>,
    /// The current part (empty at the end): reading a byte indexes a slice,
    /// which stays inline at every opt-level, not the `Vec` of parts.
    current: &'a [u8],
    /// Index of the current part in `parts`.
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
            current: parts.first().copied().unwrap_or_default(),
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
    #[inline(always)]
    pub fn read_u8(&mut self) -> Option<u8> {
        if self.offset >= self.current.len() {
            return None;
        }
        let b = self.current[self.offset];
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
            let take = left.min(self.current.len() - self.offset);
            out.extend_from_slice(&self.current[self.offset..self.offset + take]);
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
            let take = left.min(self.current.len() - self.offset);
            self.advance(take);
            left -= take;
        }
        Some(())
    }

    /// Moves forward within the current part, stepping to the next part at its end.
    #[inline(always)]
    fn advance(&mut self, n: usize) {
        self.offset += n;
        self.remaining -= n;
        self.position += n;
        if self.offset == self.current.len() {
            self.next_part();
        }
    }

    fn next_part(&mut self) {
        self.part += 1;
        self.offset = 0;
        self.current = self.parts.get(self.part).copied().unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// Every way of cutting 0..=9 into parts (empty parts included) reads
    /// as the one slice: bytes, skips and copies across part boundaries.
    #[test]
    fn parts_read_as_one_slice() {
        let whole: Vec<u8> = (0..10).collect();
        for cuts in 0u32..(1 << 9) {
            let mut parts: Vec<&[u8]> = vec![&[]];
            let mut start = 0;
            for at in 1..10 {
                if cuts & (1 << (at - 1)) != 0 {
                    parts.push(&whole[start..at]);
                    parts.push(&[]);
                    start = at;
                }
            }
            parts.push(&whole[start..]);
            let mut input = MultiSlice::new(parts.iter().copied());
            assert_eq!(input.read_u8(), Some(0));
            assert_eq!(input.skip(2), Some(()));
            let mut out = Vec::new();
            assert_eq!(input.read_into(4, &mut out), Some(()));
            assert_eq!(out, [3, 4, 5, 6]);
            assert_eq!((input.position(), input.remaining()), (7, 3));
            // Asking for more than remains reads nothing.
            assert_eq!(input.skip(4), None);
            assert_eq!(input.read_into(4, &mut out), None);
            assert_eq!(input.read_u8(), Some(7));
            assert_eq!(input.skip(1), Some(()));
            assert_eq!(input.read_u8(), Some(9));
            assert_eq!(input.read_u8(), None);
            assert_eq!((input.position(), input.remaining()), (10, 0));
        }
    }
}
