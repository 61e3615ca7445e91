//! Integrity digests: XXH3-64, fast enough to run over every byte written and
//! read (tens of GB/s) while catching any corruption or mix-up of chunks.
//!
//! These detect accidents and tampering that does not also rewrite the
//! digest; they are not a signature.

use xxhash_rust::xxh3::{Xxh3, xxh3_64, xxh3_64_with_seed};

/// The digest of a whole byte string.
pub fn digest(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// The digest of one chunk's stored bytes, seeded by the chunk's version and
/// position so a chunk moved to another version or position never verifies.
pub fn chunk_digest(bytes: &[u8], version: &str, seq: u32) -> u64 {
    xxh3_64_with_seed(bytes, xxh3_64(version.as_bytes()) ^ u64::from(seq))
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
