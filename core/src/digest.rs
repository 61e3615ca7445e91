//! Integrity digests: XXH3-64, fast enough to run over every byte written and
//! read (tens of GB/s) while catching any corruption or mix-up of chunks.
//!
//! These detect accidents and tampering that does not also rewrite the
//! digest; they are not a signature.

use xxhash_rust::xxh3::Xxh3;

// Every digest goes through the streaming hasher, which gives the same
// XXH3-64 as the one-shot functions (tested below): one implementation in
// the WebAssembly module instead of two (about 4 KB before compression).

/// The digest of a whole byte string.
pub fn digest(bytes: &[u8]) -> u64 {
    seeded(bytes, 0)
}

/// The digest of one chunk's stored bytes, seeded by the chunk's version and
/// position so a chunk moved to another version or position never verifies.
pub fn chunk_digest(bytes: &[u8], version: &str, seq: u32) -> u64 {
    seeded(bytes, digest(version.as_bytes()) ^ u64::from(seq))
}

fn seeded(bytes: &[u8], seed: u64) -> u64 {
    let mut hasher = Xxh3::with_seed(seed);
    hasher.update(bytes);
    hasher.digest()
}

/// A digest computed over bytes that arrive in pieces.
#[derive(Clone, Default)]
pub struct Digester(Xxh3);

impl Digester {
    /// A digester that has seen nothing.
    pub fn new() -> Self {
        Self(Xxh3::new())
    }

    /// Adds the next piece.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything added; equal to [`digest`] of the concatenation.
    pub fn finish(&self) -> u64 {
        self.0.digest()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

    /// The crate's one-shot functions are the reference; lengths cover
    /// every code path of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, long,
    /// and past one 1 KiB block).
    #[test]
    fn equal_to_the_one_shot_functions() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
        for len in [
            0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 4999,
        ] {
            let piece = &bytes[..len];
            assert_eq!(digest(piece), xxh3_64(piece), "length {len}");
            let version = "01HF7YAT00000000000000001A";
            let seed = xxh3_64(version.as_bytes()) ^ 3;
            assert_eq!(
                chunk_digest(piece, version, 3),
                xxh3_64_with_seed(piece, seed),
                "length {len}"
            );
        }
    }
}
