//! The `auto` policy: which codec to use for a payload.
//!
//! What DynamoDB bills is bytes written (one WCU per KB), so `auto` aims for
//! the smallest stored size, and among codecs within a few percent of the
//! smallest it takes the fastest. It judges by compressing a sample (three
//! 32 KB slices: start, middle, end) with each enabled codec at its default
//! level, so its cost is bounded whatever the payload's size:
//!
//! 1. Payloads under 1 KB, or whose best sample ratio is under 1.05, are
//!    stored uncompressed: compression would not save a write unit.
//! 2. Otherwise the codec with the smallest sample output wins, except that
//!    a faster codec within 5 % of it is preferred. Speed order, fastest
//!    first: snappy, zstd, zlib-family (deflate).

use alloc::vec::Vec;

use super::{Codec, Compression, compress};

/// Bytes taken from each of the three sample positions.
const SAMPLE_SLICE: usize = 32 * 1024;
/// Below this, compression cannot save a write unit worth the CPU.
const MIN_COMPRESS_BYTES: usize = 1024;
/// A codec must shrink the sample at least this much (as 1/100) to be used.
const MIN_RATIO_PERCENT: usize = 105;
/// A faster codec within this many percent of the smallest is preferred.
const TIE_PERCENT: usize = 5;

/// Enabled codecs `auto` considers, fastest first. Deflate stands for the
/// zlib family: raw deflate is the smallest of the three framings.
const CANDIDATES: [Codec; 3] = [Codec::Snappy, Codec::Zstd, Codec::Deflate];

/// Chooses a compression for `raw` by the policy above.
pub fn choose_compression(raw: &[u8]) -> Compression {
    if raw.len() < MIN_COMPRESS_BYTES {
        return Compression::NONE;
    }
    let sample = sample(raw);
    let sizes: Vec<(Codec, usize)> = CANDIDATES
        .into_iter()
        .filter(|c| c.is_enabled())
        .filter_map(|c| Some((c, compress(&sample, Compression::new(c)).ok()?.len())))
        .collect();
    let Some(smallest) = sizes.iter().map(|&(_, size)| size).min() else {
        return Compression::NONE;
    };
    if smallest * MIN_RATIO_PERCENT > sample.len() * 100 {
        return Compression::NONE;
    }
    let within = smallest * (100 + TIE_PERCENT) / 100;
    let codec = sizes
        .iter()
        .find(|&&(_, size)| size <= within)
        .map_or(Codec::None, |&(codec, _)| codec);
    Compression::new(codec)
}

/// The start, middle and end of `raw`, or all of it when small.
fn sample(raw: &[u8]) -> Vec<u8> {
    if raw.len() <= 3 * SAMPLE_SLICE {
        return raw.to_vec();
    }
    let middle = raw.len() / 2 - SAMPLE_SLICE / 2;
    let end = raw.len() - SAMPLE_SLICE;
    [0, middle, end]
        .iter()
        .flat_map(|&at| &raw[at..at + SAMPLE_SLICE])
        .copied()
        .collect()
}
