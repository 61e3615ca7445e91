//! A streamed read holds a bounded amount of memory whatever the
//! attribute's size: measured with a counting allocator while an 80 MB
//! attribute (beyond the 64 MiB whole-item limit) streams out of its chunks.
//! One test in its own binary, so no other test's allocations are counted.

mod common;

#[path = "common/counting_allocator.rs"]
mod counting_allocator;

use common::generate;
use common::stored::split_binary;
use counting_allocator::peak_of;
use dynaslice_core::codec::Codec;
use dynaslice_core::digest::Digester;
use dynaslice_core::layout::Layout;
use dynaslice_core::{ChunkReader, KeySchema, KeyType, ReassembleOptions};

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
        let (item, split) = split_binary(&schema, data, codec);
        drop(item);
        assert!(split.chunks.len() > 20, "{codec}");

        let read = ReassembleOptions::new(&schema, &layout);
        let ((len, digest), held) = peak_of(|| {
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
            (len, digester.finish())
        });
        assert_eq!((len, digest), (LEN, expected), "{codec}");
        assert!(held < 2 << 20, "{codec}: {held} bytes held");
        eprintln!("{codec}: {held} bytes held at most");
    }
}
