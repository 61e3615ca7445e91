//! A streamed read holds a bounded amount of memory whatever the
//! attribute's size: measured with a counting allocator while an 80 MB
//! attribute (beyond the 64 MiB whole-item limit) streams out of its chunks.
//! One test in its own binary, so no other test's allocations are counted.

mod common;

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::generate;
use dynaslice_core::codec::Codec;
use dynaslice_core::digest::Digester;
use dynaslice_core::{
    AttributeValue, ChunkReader, CodecChoice, Compression, Item, KeySchema, KeyType, Layout,
    ReassembleOptions, SplitOptions, VersionId, split_item,
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

const LEN: usize = 80 << 20;

#[test]
fn an_80_mb_attribute_streams_in_under_2_mib() {
    let schema = KeySchema::partition("pk", KeyType::S);
    let layout = Layout::default();
    for (codec, compressible) in [
        (Codec::None, false),
        (Codec::Deflate, true),
        (Codec::Zstd, true),
    ] {
        let data = generate::bulk(1, LEN, compressible);
        let expected = {
            let mut digester = Digester::new();
            digester.update(&data);
            digester.finish()
        };
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("big".into()));
        item.insert("data".into(), AttributeValue::B(data));
        let mut options = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 1));
        options.compression = CodecChoice::Fixed(Compression::new(codec));
        options.max_raw_bytes = 128 << 20;
        let split = split_item(&item, &options).unwrap();
        drop(item);
        assert!(split.chunks.len() > 20, "{codec}");

        let before = CURRENT.load(Ordering::SeqCst);
        PEAK.store(before, Ordering::SeqCst);
        let read = ReassembleOptions::new(&schema, &layout);
        let mut reader = ChunkReader::new(&split.parent, "data", &read).unwrap();
        let mut digester = Digester::new();
        let mut len = 0;
        for seq in 0..reader.chunk_count() {
            reader.push(&split.chunks[seq as usize]).unwrap();
            loop {
                let piece = reader.read().unwrap();
                if piece.is_empty() {
                    break;
                }
                len += piece.len();
                digester.update(piece);
            }
        }
        reader.finish().unwrap();
        let held = PEAK.load(Ordering::SeqCst) - before;
        assert_eq!((len, digester.finish()), (LEN, expected), "{codec}");
        assert!(held < 2 << 20, "{codec}: {held} bytes held");
        eprintln!("{codec}: {held} bytes held at most");
    }
}
