//! The `auto` policy: which codec to use for a payload.
//!
//! What DynamoDB bills is bytes written (one WCU per KB), so `auto` aims for
//! the smallest stored size, and among codecs within a few percent of the
//! smallest it takes the fastest. It judges by compressing a sample (three
//! 32 KB slices: start, middle, end) with each enabled codec at its default
//! level, so its cost is bounded whatever the payload's size:
//!
//! 1. Payloads under 1 KB are stored uncompressed: compression would not
//!    save a write unit. So are samples whose byte histogram is nearly
//!    uniform (a chi-squared statistic under 512, where uniform random bytes
//!    give about 255 and text tens of thousands): random, encrypted or
//!    already-compressed data, judged in microseconds without trying codecs.
//!    So, finally, are payloads whose best sample ratio is under 1.05.
//! 2. Otherwise the codec with the smallest sample output wins, except that
//!    a faster codec within 5 % of it is preferred. Speed order, fastest
//!    first: snappy, zstd, zlib-family (deflate).

use alloc::vec::Vec;
use core::ops::Range;

use super::{Codec, Compression, compress};
use crate::encoding::{EncodedStream, MultiSlice};

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

/// Below this chi-squared statistic a sample's bytes count as uniform.
const UNIFORM_CHI_SQUARED: u64 = 512;

/// Chooses a compression for `raw` by the policy above.
pub fn choose_compression(raw: &[u8]) -> Compression {
    let sample: Vec<u8> = sample_ranges(raw.len())
        .into_iter()
        .flat_map(|r| raw[r].iter().copied())
        .collect();
    choose_for_sample(raw.len(), &sample)
}

/// The sample of an encoded stream, copied from its pieces without joining them.
pub(crate) fn sample_of(stream: &EncodedStream<'_>) -> Vec<u8> {
    let mut sample = Vec::new();
    for range in sample_ranges(stream.len()) {
        let mut reader = MultiSlice::new(stream.slices());
        // The ranges lie inside the stream, so both always succeed.
        let _ = reader.skip(range.start);
        let _ = reader.read_into(range.len(), &mut sample);
    }
    sample
}

/// Chooses a compression for a payload of `len` bytes from its sample.
pub(crate) fn choose_for_sample(len: usize, sample: &[u8]) -> Compression {
    if len < MIN_COMPRESS_BYTES || looks_uniform(sample) {
        return Compression::NONE;
    }
    let sizes: Vec<(Codec, usize)> = CANDIDATES
        .into_iter()
        .filter(|c| c.is_enabled())
        .filter_map(|c| Some((c, compress(sample, Compression::new(c)).ok()?.len())))
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

/// True when the sample's byte histogram is close to uniform: Pearson's
/// chi-squared against 256 equally likely values, in integers (no floats
/// in `no_std`), times the sample length to stay exact.
fn looks_uniform(sample: &[u8]) -> bool {
    if sample.len() < 4096 {
        return false;
    }
    let mut counts = [0u64; 256];
    sample.iter().for_each(|&b| counts[usize::from(b)] += 1);
    let n = sample.len() as u64;
    // chi² = Σ (c − n/256)² / (n/256) = (256 Σ c² − n²) / n
    let sum_squares: u64 = counts.iter().map(|c| c * c).sum();
    let chi_squared = (256 * sum_squares).saturating_sub(n * n) / n;
    chi_squared < UNIFORM_CHI_SQUARED
}

/// Where the sample comes from: all of a small payload, else its start,
/// middle and end.
fn sample_ranges(len: usize) -> Vec<Range<usize>> {
    if len <= 3 * SAMPLE_SLICE {
        return alloc::vec![0..len];
    }
    let middle = len / 2 - SAMPLE_SLICE / 2;
    let end = len - SAMPLE_SLICE;
    [0, middle, end]
        .iter()
        .map(|&at| at..at + SAMPLE_SLICE)
        .collect()
}
