//! Splitting an in-memory item a piece at a time: the same virtual item
//! `split_item` makes (byte for byte, for every codec that streams), chunks
//! handed out before the payload is through, nothing handed out for a
//! payload that ends up inline, and split_item's answer where streaming
//! does not apply.

mod common;

use common::{generate, stored};
use dynaslice_core::codec::Codec;
use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, ItemSplit, SplitItem, SplitOptions, VersionId, split_item,
    split_item_streamed,
};
use proptest::prelude::*;

fn options(layout: Layout, compression: CodecChoice, inline: bool, chunk: usize) -> SplitOptions {
    let mut options = SplitOptions::new(stored::schema(), VersionId::new(1_763_683_200_000, 9));
    options.layout = layout;
    options.compression = compression;
    options.inline = inline;
    options.chunk_item_bytes = chunk;
    // One frame: what streams (an item in groups is split whole).
    options.group_bytes = usize::MAX;
    options
}

/// How a streamed split went: the split put together, whether it streamed,
/// the raw bytes pushed before the first chunk came out, and the chunks
/// that came out before `finish`.
struct Streamed {
    split: SplitItem,
    streamed: bool,
    first_chunk_at: Option<u64>,
    early: usize,
}

fn streamed(item: &Item, options: &SplitOptions, piece: usize) -> Streamed {
    let mut stream = match split_item_streamed(item, options).expect("starts") {
        ItemSplit::Whole(split) => {
            return Streamed {
                split,
                streamed: false,
                first_chunk_at: None,
                early: 0,
            };
        }
        ItemSplit::Streaming(stream) => stream,
    };
    let raw_len = stream.raw_len();
    let mut chunks = Vec::new();
    let mut first_chunk_at = None;
    while let Some(ready) = stream.next_chunks(piece).expect("next") {
        if !ready.is_empty() && first_chunk_at.is_none() {
            first_chunk_at = Some(stream.received());
        }
        chunks.extend(ready);
    }
    assert_eq!(stream.received(), raw_len, "the whole stream was pushed");
    let early = chunks.len();
    let mut split = stream.finish().expect("finish");
    if !chunks.is_empty() {
        chunks.append(&mut split.chunks);
        split.chunks = chunks;
    }
    Streamed {
        split,
        streamed: true,
        first_chunk_at,
        early,
    }
}

const STREAMING: [Codec; 4] = [Codec::None, Codec::Deflate, Codec::Zlib, Codec::Gzip];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn streamed_splits_equal_split_item(
        mut item in generate::item(),
        extra in proptest::option::weighted(0.75, (any::<u64>(), 300_000usize..2_500_000, any::<u8>())),
        codec in proptest::sample::select(Codec::ALL.to_vec()),
        auto in any::<bool>(),
        collection in any::<bool>(),
        inline in any::<bool>(),
        chunk in prop_oneof![Just(409_600usize), 4096usize..409_600],
        piece in 1usize..400_000,
    ) {
        if let Some((seed, len, kind)) = extra {
            item.insert("large".into(), generate::big_value(seed, len, kind));
        }
        let layout = if collection { Layout::ItemCollection } else { Layout::default() };
        let compression = if auto {
            CodecChoice::Auto
        } else {
            CodecChoice::Fixed(Compression::new(codec))
        };
        let options = options(layout, compression, inline, chunk);
        let whole = split_item(&item, &options);
        match whole {
            Ok(whole) => {
                let got = streamed(&item, &options, piece);
                prop_assert!(got.split == whole);
                let codec = whole.manifest.as_ref().map(|m| m.codec);
                if !auto && whole.manifest.as_ref().is_some_and(|m| m.inline.is_none()) {
                    prop_assert_eq!(got.streamed, STREAMING.contains(&codec.unwrap()));
                }
            }
            Err(e) => {
                let err = split_item_streamed(&item, &options).err();
                prop_assert_eq!(err.map(|e| e.code()), Some(e.code()));
            }
        }
    }
}

#[test]
fn chunks_come_out_while_the_payload_is_pushed() {
    for codec in STREAMING {
        for string in [false, true] {
            let item = stored::item("body", 6_000_000, string, 3);
            let compression = CodecChoice::Fixed(Compression::new(codec));
            let options = options(Layout::default(), compression, true, 409_600);
            let got = streamed(&item, &options, 256 << 10);
            assert!(got.streamed, "{codec:?} streams");
            assert_eq!(got.split, split_item(&item, &options).unwrap(), "{codec:?}");
            // Every chunk but the last two (what the compressor still
            // holds when the payload ends) came out while it was pushed,
            // the first as soon as the frame passed DynamoDB's item size.
            assert!(got.early + 2 >= got.split.chunks.len(), "{codec:?}");
            let at = got.first_chunk_at.expect("chunks came out early");
            let none = codec == Codec::None;
            assert!(
                !none || at < 409_600 + (256 << 10),
                "{codec:?}: first at {at}"
            );
        }
    }
}

#[test]
fn a_payload_that_ends_up_inline_hands_out_no_chunk() {
    // 3 MB of one repeated line deflates to a few kilobytes: stored inline.
    let mut item = stored::item("body", 0, true, 1);
    item.insert(
        "body".into(),
        AttributeValue::S("order,42,ok\n".repeat(250_000)),
    );
    let compression = CodecChoice::Fixed(Compression::new(Codec::Deflate));
    let options = options(Layout::default(), compression, true, 409_600);
    let got = streamed(&item, &options, 64 << 10);
    assert!(got.streamed);
    assert_eq!(got.first_chunk_at, None);
    let manifest = got.split.manifest.as_ref().expect("split");
    assert!(manifest.inline.is_some() && got.split.chunks.is_empty());
    assert_eq!(got.split, split_item(&item, &options).unwrap());
}

#[test]
fn what_does_not_stream_is_split_at_once() {
    let options = |codec| {
        options(
            Layout::default(),
            CodecChoice::Fixed(Compression::new(codec)),
            true,
            409_600,
        )
    };
    // An item that fits is its own parent.
    let small = stored::item("body", 10, false, 1);
    let ItemSplit::Whole(split) = split_item_streamed(&small, &options(Codec::None)).unwrap()
    else {
        panic!("an item that fits is not streamed");
    };
    assert_eq!((split.parent, split.manifest), (small, None));
    // Snappy and zstd need the whole payload.
    let large = stored::item("body", 2_000_000, false, 2);
    for codec in [Codec::Snappy, Codec::Zstd] {
        let ItemSplit::Whole(split) = split_item_streamed(&large, &options(codec)).unwrap() else {
            panic!("{codec:?} is not streamed");
        };
        assert_eq!(split, split_item(&large, &options(codec)).unwrap());
    }
}
