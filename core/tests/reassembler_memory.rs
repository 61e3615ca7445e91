//! A whole-item read from chunks pushed one by one and dropped holds about
//! twice the item: the raw payload and the decoded item, not the chunks
//! beside them. Measured with a counting allocator while a 48 MiB item is
//! rebuilt. One test in its own binary, so no other test's allocations are
//! counted. Prints the figures:
//!
//! ```text
//! cargo test -p dynaslice-core --test reassembler_memory -- --nocapture
//! ```

mod common;

#[path = "common/counting_allocator.rs"]
mod counting_allocator;

use common::generate;
use common::stored::split_binary;
use counting_allocator::peak_of;
use dynaslice_core::codec::Codec;
use dynaslice_core::layout::Layout;
use dynaslice_core::manifest::CHUNK_DATA_ATTRIBUTE;
use dynaslice_core::{
    AttributeValue, KeySchema, KeyType, ReassembleOptions, Reassembler, reassemble,
};

/// The item's payload: within the default 64 MiB whole-item limit.
const LEN: usize = 48 << 20;
/// What may be held beyond the payload and the item: the parent, a chunk
/// being decoded, the codec's state.
const SLACK: usize = 2 << 20;

#[test]
fn a_48_mib_item_pushed_chunk_by_chunk_peaks_at_twice_its_size() {
    let schema = KeySchema::partition("pk", KeyType::S);
    let layout = Layout::default();
    let read = ReassembleOptions::new(&schema, &layout);
    for (codec, compressible) in [
        (Codec::None, false),
        (Codec::Deflate, true),
        (Codec::Zstd, true),
        (Codec::Snappy, true),
    ] {
        let (item, mut split) = split_binary(&schema, generate::bulk(1, LEN, compressible), codec);
        assert!(split.chunks.len() > 3, "{codec}");
        let stored: usize = split
            .chunks
            .iter()
            .map(|c| match c.get(CHUNK_DATA_ATTRIBUTE) {
                Some(AttributeValue::B(data)) => data.len(),
                _ => panic!("a chunk holds data"),
            })
            .sum();

        // `reassemble` with every chunk at hand: what it adds to them.
        let (whole, whole_peak) =
            peak_of(|| reassemble(&split.parent, &split.chunks, &read).unwrap());
        assert!(whole == item, "{codec}");
        drop(whole);

        // The reassembler, each chunk dropped once pushed: the chunks count
        // too, as they are freed one by one.
        let (parent, read) = (split.parent.clone(), &read);
        let mut chunks = std::mem::take(&mut split.chunks);
        chunks.reverse();
        let (got, peak) = peak_of(move || {
            let mut reassembler = Reassembler::new(&parent, read).unwrap();
            while let Some(chunk) = chunks.pop() {
                reassembler.push(&chunk).unwrap();
            }
            reassembler.finish().unwrap()
        });
        assert!(got == item, "{codec}");
        // The chunks were held before and freed during the read: the peak
        // above what was held before is at most twice the item, less them.
        let held = peak + stored;
        eprintln!(
            "{codec}: item {LEN}, stored {stored}; reassembler peak {held} ({:.2}x, chunks included), reassemble adds {whole_peak} to the chunks ({:.2}x with them)",
            held as f64 / LEN as f64,
            (whole_peak + stored) as f64 / LEN as f64
        );
        // Raw snappy decodes whole at the last chunk: its compressed body
        // and its output are held then, beside the payload being filled.
        let body = if codec == Codec::Snappy { stored } else { 0 };
        assert!(held <= 2 * LEN + body + SLACK, "{codec}: {held} bytes held");
    }
}
