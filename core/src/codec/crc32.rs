//! gzip's CRC-32 (ISO-HDLC) through the `crc` crate, slice-by-16 for speed,
//! with its 16 KiB table computed when a hasher is made rather than stored in
//! the binary: random-looking bytes no compression shrinks, and 16 KB of a
//! WebAssembly module that must stay small. Making one costs ~30 µs, once
//! per gzip frame or stream.

use alloc::boxed::Box;
use crc::{CRC_32_ISO_HDLC, Crc, Table};

/// A running CRC-32 (ISO-HDLC): gzip's, and S3's `ChecksumCRC32`.
pub struct Crc32 {
    table: Box<Crc<u32, Table<16>>>,
    /// The checksum of the bytes so far.
    sum: u32,
}

impl Default for Crc32 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32 {
    /// A CRC-32 of no bytes yet.
    pub fn new() -> Self {
        Self {
            table: Box::new(Crc::<u32, Table<16>>::new(&CRC_32_ISO_HDLC)),
            sum: 0,
        }
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        // Continue from the checksum so far: the digest takes an initial
        // value as the algorithm states it (before reflection), and the
        // register is the checksum with the final XOR undone.
        let register = self.sum ^ CRC_32_ISO_HDLC.xorout;
        let mut digest = self.table.digest_with_initial(register.reverse_bits());
        digest.update(bytes);
        self.sum = digest.finalize();
    }

    /// The checksum of everything added.
    pub fn sum(&self) -> u32 {
        self.sum
    }

    /// The checksum of `bytes`.
    pub fn of(bytes: &[u8]) -> u32 {
        let mut crc = Self::new();
        crc.update(bytes);
        crc.sum()
    }
}

#[cfg(test)]
mod tests {
    use super::Crc32;

    #[test]
    fn the_check_value_and_any_split_agree() {
        // The catalogue's check value for CRC-32/ISO-HDLC.
        assert_eq!(Crc32::of(b"123456789"), 0xCBF4_3926);
        assert_eq!(Crc32::of(b""), 0);
        let data: alloc::vec::Vec<u8> = (0..10_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let whole = Crc32::of(&data);
        for cut in [0, 1, 15, 16, 17, 4_999, 9_999, 10_000] {
            let mut crc = Crc32::new();
            crc.update(&data[..cut]);
            crc.update(&data[cut..]);
            assert_eq!(crc.sum(), whole, "cut at {cut}");
        }
    }
}
