//! The streaming splitter: any piece sizes, bounded output as it goes, the
//! same stored format as `split_item`, and refusals of lying lengths.

mod common;

use common::generate;
use dynaslice_core::codec::Codec;
use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, ReassembleOptions, SplitOptions,
    StreamSplit, VersionId, item_size, reassemble, split_item,
};
use proptest::prelude::*;

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S)
}

fn parent() -> Item {
    let mut parent = Item::new();
    parent.insert("pk".into(), AttributeValue::S("upload#1".into()));
    parent.insert("sk".into(), AttributeValue::S("file".into()));
    parent.insert("name".into(), AttributeValue::S("report.json".into()));
    parent
}

fn options(layout: Layout, chunk_item_bytes: usize) -> SplitOptions {
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 77));
    options.layout = layout;
    options.chunk_item_bytes = chunk_item_bytes;
    options
}

/// Streams `payload` in pieces of the sizes `cuts` cycles through.
fn stream(
    payload: &[u8],
    cuts: &[usize],
    codec: Codec,
    options: &SplitOptions,
) -> (Item, Vec<Item>, usize) {
    let mut splitter = StreamSplit::new(
        parent(),
        "data".into(),
        payload.len() as u64,
        Compression::new(codec),
        options,
    )
    .expect("starts");
    let mut chunks = Vec::new();
    let mut most_held = 0;
    let mut rest = payload;
    for &cut in cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(cut.max(1).min(rest.len()));
        let ready = splitter.push(piece).expect("push");
        most_held = most_held.max(ready.len());
        chunks.extend(ready);
        rest = tail;
    }
    assert_eq!(splitter.received(), payload.len() as u64);
    let split = splitter.finish().expect("finish");
    chunks.extend(split.chunks);
    (split.parent, chunks, most_held)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn streamed_items_reassemble_exactly(
        len in 0usize..2_000_000,
        seed in any::<u64>(),
        compressible in any::<bool>(),
        cuts in proptest::collection::vec(1usize..300_000, 1..6),
        codec in proptest::sample::select(vec![Codec::None, Codec::Deflate, Codec::Zlib, Codec::Gzip]),
        collection in any::<bool>(),
        chunk_item_bytes in prop_oneof![Just(409_600usize), 4096usize..409_600],
    ) {
        let layout = if collection { Layout::ItemCollection } else { Layout::default() };
        let options = options(layout, chunk_item_bytes);
        let payload = generate::bulk(seed, len, compressible);
        let (parent, chunks, _) = stream(&payload, &cuts, codec, &options);
        prop_assert!(item_size(&parent) <= 409_600);
        for chunk in &chunks {
            prop_assert!(item_size(chunk) <= chunk_item_bytes);
        }
        let mut expected = self::parent();
        expected.insert("data".into(), AttributeValue::B(payload));
        let read = ReassembleOptions::new(&options.key, &options.layout);
        let back = reassemble(&parent, &chunks, &read).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(back == expected);
    }
}

#[test]
fn uncompressed_streams_store_exactly_what_split_item_stores() {
    let payload = generate::bulk(5, 3_000_000, false);
    let options = options(Layout::default(), 409_600);
    let (parent, chunks, most_held) = stream(&payload, &[65_536], Codec::None, &options);
    let mut item = self::parent();
    item.insert("data".into(), AttributeValue::B(payload));
    let mut whole = options.clone();
    whole.compression = CodecChoice::Fixed(Compression::NONE);
    let split = split_item(&item, &whole).unwrap();
    assert_eq!(parent, split.parent);
    assert_eq!(chunks, split.chunks);
    // 64 KiB pieces complete at most one 400 KB chunk at a time: the
    // splitter never holds more than the chunk it is filling.
    assert_eq!(most_held, 1);
}

#[test]
fn lengths_that_lie_and_unstreamable_codecs_are_refused() {
    let options = options(Layout::default(), 409_600);
    let mut splitter =
        StreamSplit::new(parent(), "data".into(), 10, Compression::NONE, &options).unwrap();
    assert_eq!(
        splitter.push(&[0; 11]).unwrap_err().code(),
        "STREAM_LENGTH_MISMATCH"
    );
    splitter.push(&[0; 4]).unwrap();
    assert_eq!(
        splitter.finish().unwrap_err().code(),
        "STREAM_LENGTH_MISMATCH"
    );

    for codec in [Codec::Snappy, Codec::Zstd] {
        let err = StreamSplit::new(
            parent(),
            "data".into(),
            10,
            Compression::new(codec),
            &options,
        )
        .err()
        .unwrap();
        assert_eq!(err.code(), "OPTIONS_INVALID");
    }
    let err = StreamSplit::new(parent(), "name".into(), 10, Compression::NONE, &options)
        .err()
        .unwrap();
    assert_eq!(
        err.code(),
        "OPTIONS_INVALID",
        "the attribute is already on the parent"
    );
    let mut keyless = parent();
    keyless.remove("pk");
    let err = StreamSplit::new(keyless, "data".into(), 10, Compression::NONE, &options)
        .err()
        .unwrap();
    assert_eq!(err.code(), "KEY_MISSING");
}

#[test]
fn a_streamed_write_commits_aborts_and_cleans_up_by_exact_keys() {
    use dynaslice_core::plan::Expect;
    use dynaslice_core::plan::{WriteRequest, plan_streamed_commit};
    let options = options(Layout::default(), 409_600);
    let payload = generate::bulk(9, 1_500_000, false);
    let mut splitter = StreamSplit::new(
        parent(),
        "data".into(),
        payload.len() as u64,
        Compression::NONE,
        &options,
    )
    .unwrap();
    let mut chunks = splitter.push(&payload).unwrap();
    let split = splitter.finish().unwrap();
    chunks.extend(split.chunks.iter().cloned());
    let target =
        dynaslice_core::plan::Target::new("files", "files_chunks", &options.key, &options.layout);
    let replaced = Expect::Version {
        version: VersionId::new(1, 1),
        chunk_count: 2,
    };
    let plan = plan_streamed_commit(&split, &target, &replaced).unwrap();
    let dynaslice_core::plan::WriteSteps::Batch {
        chunks: to_write,
        overwrite: None,
        commit,
        abort,
    } = &plan.steps
    else {
        panic!("a streamed write is a batch write")
    };
    assert!(to_write.is_empty(), "the chunks were written as they came");
    assert_eq!(commit.item, split.parent);
    assert_eq!(commit.condition.as_ref().unwrap().expression, "#m.#v = :v");
    let keys_of = |batches: &[dynaslice_core::plan::BatchWrite]| -> Vec<AttributeValue> {
        batches
            .iter()
            .flat_map(|b| &b.requests)
            .map(|(_, r)| match r {
                WriteRequest::Delete(key) => key["pk"].clone(),
                WriteRequest::Put(_) => panic!("only deletes"),
            })
            .collect()
    };
    let written: Vec<AttributeValue> = chunks.iter().map(|c| c["pk"].clone()).collect();
    assert_eq!(
        keys_of(abort),
        written,
        "abort deletes exactly this write's chunks"
    );
    assert_eq!(keys_of(&plan.cleanup).len(), 2);
    assert!(keys_of(&plan.cleanup).iter().all(|k| !written.contains(k)));
    let reused = Expect::Version {
        version: options.version,
        chunk_count: 1,
    };
    assert_eq!(
        plan_streamed_commit(&split, &target, &reused)
            .unwrap_err()
            .code(),
        "VERSION_REUSED"
    );
}
