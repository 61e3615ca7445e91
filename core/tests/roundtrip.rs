//! `reassemble(split(x)) == x` for generated items of every type and shape,
//! every codec and both layouts, with every chunk and parent within the
//! DynamoDB item limit by the exact rule.

mod common;

use common::generate;
use dynaslice_core::codec::Codec;
use dynaslice_core::codec::Compression;
use dynaslice_core::layout::{Layout, parse_chunk_key};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, MAX_ITEM_BYTES, ReassembleOptions,
    SplitItem, SplitOptions, VersionId, item_size, reassemble, split_item,
};
use proptest::prelude::*;

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S)
}

fn codec_choice() -> impl Strategy<Value = CodecChoice> {
    prop_oneof![
        Just(CodecChoice::Auto),
        proptest::sample::select(Codec::ALL.to_vec())
            .prop_map(|codec| CodecChoice::Fixed(Compression::new(codec))),
        (0u8..=10).prop_map(|l| CodecChoice::Fixed(Compression {
            codec: Codec::Zlib,
            level: Some(l)
        })),
    ]
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::default()),
        Just(Layout::ChunkTable {
            key_name: "chunk".into()
        }),
        Just(Layout::ItemCollection),
    ]
}

fn options() -> impl Strategy<Value = SplitOptions> {
    (
        codec_choice(),
        layout(),
        prop_oneof![Just(MAX_ITEM_BYTES), 2048usize..MAX_ITEM_BYTES],
        prop_oneof![Just(4096usize), 0usize..20_000],
        any::<bool>(),
        any::<u64>(),
        prop_oneof![Just(409_600usize), 1usize..100_000, Just(usize::MAX)],
    )
        .prop_map(
            |(
                compression,
                layout,
                chunk_item_bytes,
                parent_budget,
                inline,
                random,
                group_bytes,
            )| {
                let mut options =
                    SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, random.into()));
                options.compression = compression;
                options.layout = layout;
                options.chunk_item_bytes = chunk_item_bytes;
                options.parent_budget = parent_budget;
                options.inline = inline;
                options.group_bytes = group_bytes;
                options
            },
        )
}

/// Checks every limit a split must respect, then reassembles it from the
/// chunks in the order `order` gives and compares with the original.
fn check_split(
    item: &Item,
    split: &SplitItem,
    options: &SplitOptions,
    order: &[usize],
) -> Result<(), TestCaseError> {
    prop_assert!(
        item_size(&split.parent) <= MAX_ITEM_BYTES,
        "parent too large"
    );
    // Every chunk but the last of its frame is full.
    let last_of_frame = |chunk: &Item| {
        let key = parse_chunk_key(&options.key, &options.layout, chunk).unwrap();
        let manifest = split.manifest.as_ref().unwrap();
        let frame = manifest
            .frames()
            .find(|f| f.version == key.version)
            .unwrap();
        key.seq + 1 == frame.chunk_count
    };
    let sizes: Vec<usize> = split.chunks.iter().map(item_size).collect();
    for (i, &size) in sizes.iter().enumerate() {
        prop_assert!(
            size <= options.chunk_item_bytes,
            "chunk {i} is {size} bytes"
        );
        if !last_of_frame(&split.chunks[i]) {
            prop_assert!(
                size + 64 >= options.chunk_item_bytes,
                "chunk {i} is {size} bytes, more than 64 under {}",
                options.chunk_item_bytes
            );
        }
    }
    if item_size(item) <= options.item_limit {
        prop_assert_eq!(&split.parent, item, "an item that fits stays whole");
        prop_assert!(split.chunks.is_empty());
    } else {
        prop_assert!(split.manifest.is_some());
    }
    let mut chunks: Vec<Item> = split.chunks.clone();
    if !chunks.is_empty() {
        let n = chunks.len();
        for (i, &j) in order.iter().enumerate() {
            chunks.swap(i % n, j % n);
        }
    }
    let read = ReassembleOptions::new(&options.key, &options.layout);
    let back = reassemble(&split.parent, &chunks, &read)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(back == *item, "reassembled item differs");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn split_then_reassemble_returns_the_item(
        item in generate::item(),
        options in options(),
        order in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let split = split_item(&item, &options).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_split(&item, &split, &options, &order)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Every spelling of every type survives exactly: number text, set order,
    /// empty strings and binaries, deep nesting.
    #[test]
    fn small_values_survive_exactly(
        values in proptest::collection::btree_map("[a-z]{1,6}", generate::value(), 1..12),
        seed in any::<u64>(),
        codec in proptest::sample::select(Codec::ALL.to_vec()),
    ) {
        let mut item: Item = values;
        item.remove("pk");
        item.remove("sk");
        item.remove("_ds");
        item.insert("pk".into(), AttributeValue::S("p".into()));
        item.insert("sk".into(), AttributeValue::S("s".into()));
        // A bulky attribute forces a split; the small ones travel with it
        // because the parent budget is zero.
        item.insert("bulk".into(), generate::big_value(seed, 450_000, 0));
        let mut options = SplitOptions::new(schema(), VersionId::new(1, u128::from(seed)));
        options.compression = CodecChoice::Fixed(Compression::new(codec));
        options.parent_budget = 0;
        let split = split_item(&item, &options).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(split.parent.len(), 3, "only the keys and the manifest stay");
        check_split(&item, &split, &options, &[])?;
    }
}

/// A handful of items up to 50 MB, through every layout and several codecs.
#[test]
fn items_up_to_fifty_megabytes_round_trip() {
    let cases: [(usize, u8, Codec, Layout); 4] = [
        (50 << 20, 0, Codec::None, Layout::default()),
        (50 << 20, 2, Codec::Zstd, Layout::ItemCollection),
        (30 << 20, 1, Codec::Deflate, Layout::default()),
        (20 << 20, 1, Codec::Snappy, Layout::ItemCollection),
    ];
    for (i, (len, kind, codec, layout)) in cases.into_iter().enumerate() {
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S(format!("large-{i}")));
        item.insert("sk".into(), AttributeValue::S("v".into()));
        item.insert("title".into(), AttributeValue::S("a large document".into()));
        item.insert("body".into(), generate::big_value(i as u64, len, kind));
        let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, i as u128));
        options.compression = CodecChoice::Fixed(Compression::new(codec));
        options.layout = layout;
        let split = split_item(&item, &options).unwrap();
        assert_eq!(
            split.parent.get("title"),
            item.get("title"),
            "small attributes stay on the parent"
        );
        check_split(&item, &split, &options, &[3, 1, 4, 1, 5, 9, 2, 6]).unwrap();
    }
}
