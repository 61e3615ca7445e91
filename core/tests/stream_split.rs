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

/// Streams `payload` in pieces of the sizes `cuts` cycles through, its
/// length declared first or not.
fn stream(
    payload: &[u8],
    cuts: &[usize],
    codec: Codec,
    options: &SplitOptions,
    declared: bool,
) -> (Item, Vec<Item>, usize) {
    let mut splitter = StreamSplit::new(
        parent(),
        "data".into(),
        declared.then_some(payload.len() as u64),
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
        declared in any::<bool>(),
    ) {
        let layout = if collection { Layout::ItemCollection } else { Layout::default() };
        let options = options(layout, chunk_item_bytes);
        let payload = generate::bulk(seed, len, compressible);
        let (parent, chunks, _) = stream(&payload, &cuts, codec, &options, declared);
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
    let (parent, chunks, most_held) = stream(&payload, &[65_536], Codec::None, &options, true);
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
    let mut splitter = StreamSplit::new(
        parent(),
        "data".into(),
        Some(10),
        Compression::NONE,
        &options,
    )
    .unwrap();
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
            Some(10),
            Compression::new(codec),
            &options,
        )
        .err()
        .unwrap();
        assert_eq!(err.code(), "OPTIONS_INVALID");
    }
    let err = StreamSplit::new(
        parent(),
        "name".into(),
        Some(10),
        Compression::NONE,
        &options,
    )
    .err()
    .unwrap();
    assert_eq!(
        err.code(),
        "OPTIONS_INVALID",
        "the attribute is already on the parent"
    );
    let mut keyless = parent();
    keyless.remove("pk");
    let err = StreamSplit::new(
        keyless,
        "data".into(),
        Some(10),
        Compression::NONE,
        &options,
    )
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
        Some(payload.len() as u64),
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
        groups: vec![],
        updated: None,
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
    assert_eq!(
        commit.condition.as_ref().unwrap().expression,
        "#m.#v = :v AND attribute_not_exists(#m.#u)"
    );
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
        groups: vec![],
        updated: None,
    };
    assert_eq!(
        plan_streamed_commit(&split, &target, &reused)
            .unwrap_err()
            .code(),
        "VERSION_REUSED"
    );
}

/// The chunk data of `chunk`.
fn data(chunk: &Item) -> &[u8] {
    match &chunk[dynaslice_core::manifest::CHUNK_DATA_ATTRIBUTE] {
        AttributeValue::B(bytes) => bytes,
        other => panic!("chunk data is {other:?}"),
    }
}

/// The sequence number a chunk key ends with (`…#<seq>`).
fn seq(chunk: &Item) -> u32 {
    let AttributeValue::S(key) = &chunk["pk"] else {
        panic!("a string key")
    };
    key.rsplit('#').next().unwrap().parse().unwrap()
}

#[test]
fn a_stream_of_unknown_length_records_its_length_in_chunk_zero_sent_last() {
    let options = options(Layout::default(), 409_600);
    let payload = generate::bulk(3, 1_000_000, false);
    let mut splitter =
        StreamSplit::new(parent(), "data".into(), None, Compression::NONE, &options).unwrap();
    let mut early = Vec::new();
    for piece in payload.chunks(100_000) {
        early.extend(splitter.push(piece).unwrap());
    }
    let split = splitter.finish().unwrap();
    // Chunk 0 holds the frame's raw length: it is held back to the end.
    assert!(!early.is_empty());
    assert!(
        early.iter().all(|chunk| seq(chunk) != 0),
        "chunk 0 held back"
    );
    assert_eq!(seq(&split.chunks[0]), 0, "chunk 0 comes out with the last");
    // docs/FORMAT.md: frame "DSZ" 01 codec 0 (none), then the raw length
    // (LE), then the value stream "DSV" 02, one attribute, its name, tag 0x0C
    // and the bytes to the end.
    let zero = data(&split.chunks[0]);
    let prefix = b"DSV\x02\x01\x04data\x0c";
    assert_eq!(&zero[..5], b"DSZ\x01\x00");
    let raw_len = (prefix.len() + payload.len()) as u64;
    assert_eq!(zero[5..13], raw_len.to_le_bytes());
    assert_eq!(&zero[13..13 + prefix.len()], prefix);
    assert_eq!(split.manifest.as_ref().unwrap().raw_len, raw_len);
    // Every chunk's digest matches its (patched) bytes: reassemble checks.
    let mut chunks = early;
    chunks.extend(split.chunks);
    let read = ReassembleOptions::new(&options.key, &options.layout);
    let back = reassemble(&split.parent, &chunks, &read).unwrap();
    // Streamed back, one attribute, as `get --out` reads it.
    let mut reader = dynaslice_core::ChunkReader::new(&split.parent, "data", &read).unwrap();
    let mut streamed = Vec::new();
    for seq in 0..reader.chunk_count() {
        let key = reader.chunk_key(seq).unwrap();
        let chunk = chunks.iter().find(|c| c["pk"] == key["pk"]).unwrap();
        reader.push(chunk).unwrap();
        loop {
            let piece = reader.read().unwrap();
            if piece.is_empty() {
                break;
            }
            streamed.extend_from_slice(piece);
        }
    }
    reader.finish().unwrap();
    assert_eq!(streamed, payload);
    assert_eq!(back["data"], AttributeValue::B(payload));
}

#[test]
fn a_stream_of_unknown_length_is_cut_off_when_it_passes_the_limit() {
    let mut options = options(Layout::default(), 409_600);
    options.max_raw_bytes = 1_000_000;
    let mut splitter =
        StreamSplit::new(parent(), "data".into(), None, Compression::NONE, &options).unwrap();
    // 11 bytes of prefix, then 999,989 of payload fit exactly.
    splitter.push(&vec![7; 999_989]).unwrap();
    let error = splitter.push(&[7]).unwrap_err();
    assert_eq!(error.code(), "VIRTUAL_ITEM_TOO_LARGE");
    assert!(error.to_string().contains("1000001"), "{error}");
    // A declared length over the limit is refused before a byte is taken.
    let error = StreamSplit::new(
        parent(),
        "data".into(),
        Some(1_000_000),
        Compression::NONE,
        &options,
    )
    .err()
    .unwrap();
    assert_eq!(error.code(), "VIRTUAL_ITEM_TOO_LARGE");
}
