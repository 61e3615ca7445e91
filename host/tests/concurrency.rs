//! Concurrent writers of one item, with readers reading it continuously.
//!
//! Last writer wins (the default): writers overwrite the item in rounds,
//! all of them at once in each round. Every write succeeds (in atomic mode
//! too: a transaction that lost a race is planned again, and a writer meets
//! at most five other commits in a round), every read is one complete
//! version some writer wrote, the survivor is one writer's version, and the
//! chunks of every replaced version were deleted by the write that replaced
//! it: before any `gc`, the chunk table holds exactly the survivor's chunks.
//! Batch and atomic mode, both layouts.
//!
//! Optimistic locking (`PutOptions::precondition`): writers increment a
//! counter stored in the item, each write conditional on the version it
//! read. Losers get CONFLICT and keep nothing; no increment is lost (the
//! final count is the number of writes that succeeded, which last writer
//! wins would not give), and again only the survivor's chunks remain.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::plan::{Precondition, WriteMode};
use dynaslice_core::{AttributeValue, CodecChoice, Item};
use dynaslice_host::{GcOptions, GetOptions, LayoutKind, PutOptions, TableConfig};

use common::{client, fresh_table, key, noise};

const WRITERS: u64 = 6;
const WRITES: u64 = 20;
const READERS: usize = 3;

/// The version writer `w` writes in its `n`th write: from 300 KB to 2 MB
/// (split into up to seven chunks over 400 KB, whole under it), and every
/// fifth is 2 KB: single PutItems replacing virtual items and replaced by
/// them.
fn version(layout: LayoutKind, w: u64, n: u64) -> Item {
    let seed = w * 1000 + n;
    let len = match seed % 5 {
        0 => 2_000,
        _ => 300_000 + (seed as usize * 7_919) % 1_700_000,
    };
    let mut item = key(layout, "contended");
    item.insert("writer".into(), AttributeValue::N(w.to_string()));
    item.insert("n".into(), AttributeValue::N(n.to_string()));
    item.insert("data".into(), AttributeValue::B(noise(seed, len)));
    item
}

fn number(item: &Item, name: &str) -> u64 {
    match &item[name] {
        AttributeValue::N(n) => n.parse::<u64>().expect("a number"),
        other => panic!("{name} is {other:?}"),
    }
}

fn writer_of(item: &Item) -> (u64, u64) {
    (number(item, "writer"), number(item, "n"))
}

fn options(mode: WriteMode) -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::new(Codec::None)),
        concurrency: 2,
        mode,
        ..PutOptions::default()
    }
}

/// Readers that read the contended item until `done`, checking each read
/// with `check`; the handle counts reads that found an item.
fn start_readers(
    client: &Client,
    table: &Arc<TableConfig>,
    layout: LayoutKind,
    done: &Arc<AtomicBool>,
    check: fn(LayoutKind, &Item),
) -> (Vec<tokio::task::JoinHandle<()>>, Arc<AtomicUsize>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let readers = (0..READERS)
        .map(|_| {
            let (client, table, done, reads) =
                (client.clone(), table.clone(), done.clone(), reads.clone());
            tokio::spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    let got = dynaslice_host::get(
                        &client,
                        &table,
                        &key(layout, "contended"),
                        &GetOptions::default(),
                        &(),
                    )
                    .await;
                    match got {
                        Ok(None) => tokio::time::sleep(Duration::from_millis(5)).await,
                        Ok(Some(fetched)) => {
                            check(layout, &fetched.item);
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("a read failed: {e} [{}]", e.code()),
                    }
                }
            })
        })
        .collect();
    (readers, reads)
}

/// Every read is one whole version some writer wrote.
fn whole_version(layout: LayoutKind, item: &Item) {
    let (w, n) = writer_of(item);
    assert!(
        *item == version(layout, w, n),
        "read a version writer {w} never wrote as #{n}"
    );
}

/// The stored item, and the chunks in the chunk table: how many there are
/// and how many the stored parent references (a dry-run `gc`, deleting
/// nothing).
async fn stored_and_chunks(
    client: &Client,
    table: &TableConfig,
    layout: LayoutKind,
) -> (dynaslice_host::Fetched, u64, u64) {
    let last = dynaslice_host::get(
        client,
        table,
        &key(layout, "contended"),
        &GetOptions::default(),
        &(),
    )
    .await
    .expect("get")
    .expect("found");
    let census = dynaslice_host::gc(
        client,
        table,
        // Every chunk item, counted (not the anchors index).
        &GcOptions {
            grace: Duration::ZERO,
            dry_run: true,
            every_chunk: true,
            ..GcOptions::default()
        },
    )
    .await
    .expect("gc dry run");
    (last, census.chunks as u64, census.referenced as u64)
}

async fn last_writer_wins(layout: LayoutKind, mode: WriteMode) {
    let client = client();
    let table: Arc<TableConfig> = Arc::new(fresh_table(&client, "lww", layout).await);
    let options = options(mode);
    let done = Arc::new(AtomicBool::new(false));
    let (readers, reads) = start_readers(&client, &table, layout, &done, whole_version);
    let round = Arc::new(tokio::sync::Barrier::new(WRITERS as usize));
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (client, table, options, round) = (
            client.clone(),
            table.clone(),
            options.clone(),
            round.clone(),
        );
        writers.push(tokio::spawn(async move {
            let mut superseded = 0;
            for n in 0..WRITES {
                round.wait().await;
                let item = version(layout, w, n);
                match dynaslice_host::put(&client, &table, &item, &options, &()).await {
                    Ok(outcome) => superseded += u64::from(outcome.superseded),
                    Err(e) => panic!("writer {w} write {n}: {e} [{}]", e.code()),
                }
            }
            superseded
        }));
    }
    let mut superseded = 0;
    for writer in writers {
        superseded += writer.await.expect("every write succeeds");
    }
    done.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader finished");
    }
    assert!(reads.load(Ordering::Relaxed) > 0, "no read completed");
    // Superseded writes come only after a commit failed ambiguously.
    assert_eq!(superseded, 0, "no fault, no superseded write");

    let (last, chunks, referenced) = stored_and_chunks(&client, &table, layout).await;
    whole_version(layout, &last.item);
    let live = last.manifest.as_ref().map_or(0, |m| m.chunk_count as u64);
    assert_eq!(
        (chunks, referenced),
        (live, live),
        "every replaced version's chunks were deleted by the write that replaced it"
    );
    eprintln!(
        "{layout:?} {mode:?}: {} writes, {} reads, {live} live chunks",
        WRITERS * WRITES,
        reads.load(Ordering::Relaxed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn last_writer_wins_batch_chunk_table() {
    last_writer_wins(LayoutKind::ChunkTable, WriteMode::Batch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn last_writer_wins_batch_item_collection() {
    last_writer_wins(LayoutKind::ItemCollection, WriteMode::Batch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn last_writer_wins_atomic_chunk_table() {
    last_writer_wins(LayoutKind::ChunkTable, WriteMode::Atomic).await;
}

/// The counter item: `count` increments so far, written by `w`, with a
/// payload large enough to be split (an item that fits is stored whole, and
/// has no version to expect).
fn counter(layout: LayoutKind, w: u64, count: u64) -> Item {
    let mut item = key(layout, "contended");
    item.insert("writer".into(), AttributeValue::N(w.to_string()));
    item.insert("count".into(), AttributeValue::N(count.to_string()));
    let len = 450_000 + (count as usize * 104_729) % 900_000;
    item.insert("data".into(), AttributeValue::B(noise(count, len)));
    item
}

/// A counter read whole: its payload is the one its count implies.
fn whole_counter(layout: LayoutKind, item: &Item) {
    let (w, count) = (number(item, "writer"), number(item, "count"));
    assert!(
        *item == counter(layout, w, count),
        "read a torn counter {count}"
    );
}

async fn optimistic_locking(layout: LayoutKind, mode: WriteMode) {
    const INCREMENTS: u64 = 6;
    let client = client();
    let table: Arc<TableConfig> = Arc::new(fresh_table(&client, "locked", layout).await);
    let done = Arc::new(AtomicBool::new(false));
    let (readers, _) = start_readers(&client, &table, layout, &done, whole_counter);
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (client, table) = (client.clone(), table.clone());
        writers.push(tokio::spawn(async move {
            let (mut made, mut conflicts) = (0, 0);
            while made < INCREMENTS {
                let stored = dynaslice_host::get(
                    &client,
                    &table,
                    &key(layout, "contended"),
                    &GetOptions::default(),
                    &(),
                )
                .await
                .expect("read");
                let (count, precondition) = match &stored {
                    None => (0, Precondition::Absent),
                    Some(f) => (
                        number(&f.item, "count"),
                        Precondition::Version(f.manifest.as_ref().expect("split").version),
                    ),
                };
                let options = PutOptions {
                    precondition: Some(precondition),
                    ..options(mode)
                };
                let item = counter(layout, w, count + 1);
                match dynaslice_host::put(&client, &table, &item, &options, &()).await {
                    Ok(outcome) => {
                        assert!(!outcome.superseded, "locking never supersedes");
                        made += 1;
                    }
                    Err(e) if e.code() == "CONFLICT" => conflicts += 1,
                    Err(e) => panic!("writer {w}: {e} [{}]", e.code()),
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for writer in writers {
        conflicts += writer.await.expect("writer finished");
    }
    done.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader finished");
    }
    let (last, chunks, referenced) = stored_and_chunks(&client, &table, layout).await;
    whole_counter(layout, &last.item);
    assert_eq!(
        number(&last.item, "count"),
        WRITERS * INCREMENTS,
        "every successful write incremented the count it read: none was lost"
    );
    assert!(conflicts > 0, "{WRITERS} writers never raced");
    let live = last.manifest.as_ref().map_or(0, |m| m.chunk_count as u64);
    assert_eq!(
        (chunks, referenced),
        (live, live),
        "losers deleted their chunks, winners the replaced version's"
    );
    eprintln!("{layout:?} {mode:?}: {conflicts} conflicts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn optimistic_locking_batch_chunk_table() {
    optimistic_locking(LayoutKind::ChunkTable, WriteMode::Batch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn optimistic_locking_atomic_item_collection() {
    optimistic_locking(LayoutKind::ItemCollection, WriteMode::Atomic).await;
}
