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

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::generate;
use dynaslice_core::codec::Codec;
use dynaslice_core::manifest::CHUNK_DATA_ATTRIBUTE;
use dynaslice_core::{
    AttributeValue, CodecChoice, Compression, Item, KeySchema, KeyType, Layout, ReassembleOptions,
    Reassembler, SplitOptions, VersionId, reassemble, split_item,
};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let now = CURRENT.fetch_add(size, Ordering::SeqCst) + size;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

// SAFETY: every call is passed to the system allocator unchanged; only the
// sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: AllocLayout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        grew(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The item's payload: within the default 64 MiB whole-item limit.
const LEN: usize = 48 << 20;
/// What may be held beyond the payload and the item: the parent, a chunk
/// being decoded, the codec's state.
const SLACK: usize = 2 << 20;

/// Bytes held at the peak of `work`, above what was held before it.
fn peak_of<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let before = CURRENT.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let out = work();
    (out, PEAK.load(Ordering::SeqCst) - before)
}

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
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("big".into()));
        item.insert(
            "data".into(),
            AttributeValue::B(generate::bulk(1, LEN, compressible)),
        );
        let mut options = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 1));
        options.compression = CodecChoice::Fixed(Compression::new(codec));
        let mut split = split_item(&item, &options).unwrap();
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
