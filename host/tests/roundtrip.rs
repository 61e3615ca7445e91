//! Items from 1 byte to 50 MB, every codec, both layouts, both modes, read
//! back equal to what was written, through a real server.

mod common;

use std::collections::BTreeMap;

use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::plan::{WriteKind, WriteMode};
use dynaslice_core::{AttributeValue, CodecChoice, Item, item_size};
use dynaslice_host::{ByteCounter, GetOptions, LayoutKind, PutOptions, TableConfig};

use common::{client, fresh_table, key, noise, order_history, same_item};

const LAYOUTS: [LayoutKind; 2] = [LayoutKind::ChunkTable, LayoutKind::ItemCollection];

/// An item of every attribute type around a payload of `len` bytes: half a
/// compressible document, half noise.
fn item(layout: LayoutKind, id: &str, len: usize, seed: u64) -> Item {
    let mut item = key(layout, id);
    item.insert(
        "doc".into(),
        AttributeValue::S(order_history(seed, len / 2)),
    );
    item.insert("blob".into(), AttributeValue::B(noise(seed, len - len / 2)));
    item.insert(
        "n".into(),
        AttributeValue::N("-0.000123456789012345678901234567890123E-90".into()),
    );
    item.insert(
        "flags".into(),
        AttributeValue::L(vec![AttributeValue::Bool(true), AttributeValue::Null]),
    );
    item.insert(
        "meta".into(),
        AttributeValue::M(BTreeMap::from([
            (
                "tags".into(),
                AttributeValue::Ss(vec!["b".into(), "a".into()]),
            ),
            (
                "ns".into(),
                AttributeValue::Ns(vec!["10".into(), "1.5E1".into(), "2".into()]),
            ),
            ("bs".into(), AttributeValue::Bs(vec![vec![1], vec![0, 255]])),
        ])),
    );
    item
}

async fn round_trip(
    table: &TableConfig,
    item: &Item,
    options: &PutOptions,
) -> dynaslice_host::PutOutcome {
    let client = client();
    let written = ByteCounter::default();
    let outcome = dynaslice_host::put(&client, table, item, options, &written)
        .await
        .unwrap_or_else(|e| panic!("put of {} bytes failed: {e}", item_size(item)));
    // The progress a put reports ends at exactly its total: the bytes it
    // wrote, or for chunks streamed as they are compressed (batch mode,
    // a codec that streams) the bytes of the value stream it split.
    let done = |c: &ByteCounter| {
        let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        (load(&c.done), load(&c.total))
    };
    let streams = [Codec::None, Codec::Deflate, Codec::Zlib, Codec::Gzip];
    let total = match &outcome.manifest {
        Some(m)
            if outcome.mode == WriteKind::Batch
                && m.inline.is_none()
                && m.groups.is_empty()
                && streams.contains(&m.codec) =>
        {
            m.raw_len
        }
        _ => outcome.bytes_written,
    };
    assert_eq!(done(&written), (total, total), "put progress");
    let progress = ByteCounter::default();
    let fetched = dynaslice_host::get(&client, table, item, &GetOptions::default(), &progress)
        .await
        .expect("get succeeds")
        .expect("item found");
    let (read, total) = done(&progress);
    assert_eq!(read, total, "get progress");
    let spilled = outcome
        .manifest
        .as_ref()
        .map_or(Vec::new(), |m| m.all_spilled());
    assert!(
        same_item(&fetched.item, item, &spilled),
        "item of {} bytes read back different",
        item_size(item)
    );
    assert_eq!(
        fetched.chunks_read as u64,
        outcome.manifest.as_ref().map_or(0, |m| m.total_chunks())
    );
    outcome
}

#[tokio::test(flavor = "multi_thread")]
async fn sizes_from_one_byte_to_ten_megabytes_in_both_layouts() {
    let client = client();
    for layout in LAYOUTS {
        let table = fresh_table(&client, "sizes", layout).await;
        // One byte of payload: a plain single PutItem.
        let mut tiny = key(layout, "tiny");
        tiny.insert("b".into(), AttributeValue::B(vec![42]));
        let outcome = round_trip(&table, &tiny, &PutOptions::default()).await;
        assert_eq!((outcome.mode.name(), outcome.manifest), ("single", None));
        for (i, len) in [
            1_000, 100_000, 409_000, 409_700, 1_000_000, 3_000_000, 10_000_000,
        ]
        .into_iter()
        .enumerate()
        {
            let item = item(layout, &format!("s{i}"), len, i as u64);
            let outcome = round_trip(&table, &item, &PutOptions::default()).await;
            if item_size(&item) <= 409_600 {
                assert_eq!(outcome.mode.name(), "single", "{len}");
            } else {
                assert!(outcome.manifest.is_some(), "{len} bytes must be split");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_codec_in_both_modes_and_both_layouts() {
    let client = client();
    for layout in LAYOUTS {
        let table = fresh_table(&client, "codecs", layout).await;
        for (i, codec) in Codec::ALL.into_iter().enumerate() {
            for mode in [WriteMode::Atomic, WriteMode::Batch] {
                let options = PutOptions {
                    compression: CodecChoice::Fixed(Compression::new(codec)),
                    mode,
                    ..PutOptions::default()
                };
                let item = item(
                    layout,
                    &format!("{}-{mode:?}", codec.name()),
                    1_500_000,
                    i as u64,
                );
                let outcome = round_trip(&table, &item, &options).await;
                let manifest = outcome.manifest.expect("split");
                assert_eq!(manifest.codec, codec);
                let expected_mode = if mode == WriteMode::Atomic {
                    "atomic"
                } else {
                    "batch"
                };
                assert_eq!(outcome.mode.name(), expected_mode);
                // The server's own count of what the write consumed (DynamoDB
                // Local misreports multi-action transactions: batches only).
                if mode == WriteMode::Batch {
                    let planned = outcome.planned_write_units as f64;
                    let consumed = outcome.consumed_write_units;
                    assert!(
                        (consumed - planned).abs() <= planned * 0.01,
                        "consumed {consumed} WCU, planned {planned}"
                    );
                }
                // Overwrite in the other mode: the new version replaces the old whole.
                let mut changed = item.clone();
                changed.insert(
                    "blob".into(),
                    AttributeValue::B(noise(99 + i as u64, 700_000)),
                );
                let again = round_trip(&table, &changed, &options).await;
                assert_eq!(again.replaced, Some(manifest.version));
                assert_eq!(again.cleanup_left, 0);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_megabytes_in_both_layouts() {
    let client = client();
    for layout in LAYOUTS {
        let table = fresh_table(&client, "fifty", layout).await;
        let mut item = key(layout, "big");
        item.insert("data".into(), AttributeValue::B(noise(50, 50 << 20)));
        let outcome = round_trip(&table, &item, &PutOptions::default()).await;
        let manifest = outcome.manifest.expect("split");
        assert_eq!(outcome.mode.name(), "batch");
        assert!(
            manifest.chunk_count >= 128,
            "{} chunks",
            manifest.chunk_count
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_files_in_both_layouts() {
    let client = client();
    for layout in LAYOUTS {
        let table = fresh_table(&client, "stream", layout).await;
        for (i, (compression, bytes)) in [
            (CodecChoice::Auto, noise(7, 12_000_000)),
            (CodecChoice::Auto, order_history(8, 6_000_000).into_bytes()),
            (
                CodecChoice::Fixed(Compression::new(Codec::Gzip)),
                order_history(9, 3_000_000).into_bytes(),
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let options = PutOptions {
                compression,
                ..PutOptions::default()
            };
            let parent = key(layout, &format!("file{i}"));
            let progress = ByteCounter::default();
            let outcome = dynaslice_host::put_reader(
                &client,
                &table,
                parent.clone(),
                "data",
                &bytes[..],
                Some(bytes.len() as u64),
                &options,
                &progress,
            )
            .await
            .expect("streamed put");
            let manifest = outcome.manifest.expect("split");
            if i == 0 {
                assert_eq!(manifest.codec, Codec::None, "noise is stored as is");
            } else {
                assert!(
                    manifest.stored_len * 3 < manifest.raw_len,
                    "a JSON document compresses"
                );
            }
            assert_eq!(
                progress.done.load(std::sync::atomic::Ordering::Relaxed),
                bytes.len() as u64
            );
            let fetched =
                dynaslice_host::get(&client, &table, &parent, &GetOptions::default(), &())
                    .await
                    .expect("get")
                    .expect("found");
            let mut expected = parent.clone();
            expected.insert("data".into(), AttributeValue::B(bytes));
            assert!(fetched.item == expected, "file {i} read back different");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_short_stream_aborts_and_leaves_the_old_version() {
    let client = client();
    let table = fresh_table(&client, "short", LayoutKind::ChunkTable).await;
    let mut old = key(LayoutKind::ChunkTable, "f");
    old.insert("data".into(), AttributeValue::B(noise(1, 900_000)));
    round_trip(&table, &old, &PutOptions::default()).await;
    let bytes = noise(2, 2_000_000);
    let error = dynaslice_host::put_reader(
        &client,
        &table,
        key(LayoutKind::ChunkTable, "f"),
        "data",
        &bytes[..1_500_000],
        Some(bytes.len() as u64),
        &PutOptions::default(),
        &(),
    )
    .await
    .expect_err("a stream shorter than declared fails");
    assert_eq!(error.code(), "STREAM_LENGTH_MISMATCH");
    let fetched = dynaslice_host::get(&client, &table, &old, &GetOptions::default(), &())
        .await
        .expect("get")
        .expect("found");
    assert!(fetched.item == old);
    // Its chunks were deleted: only the old version's remain.
    let report = dynaslice_host::gc(
        &client,
        &table,
        &dynaslice_host::GcOptions {
            grace: std::time::Duration::ZERO,
            dry_run: true,
            ..dynaslice_host::GcOptions::default()
        },
    )
    .await
    .expect("gc");
    assert_eq!(
        report.deleted, 0,
        "the aborted write left chunks: {report:?}"
    );
}
