//! Eight writers overwrite one item fifty times each while four readers read
//! it continuously: every read is one complete version some writer wrote,
//! every write commits or gets the conflict error, and after the final `gc`
//! no chunk is left that the parent does not reference.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use dynaslice_core::{AttributeValue, Codec, CodecChoice, Compression, Item};
use dynaslice_host::{GetOptions, LayoutKind, PutOptions, TableConfig};

use common::{client, fresh_table, key, noise};

const WRITERS: u64 = 8;
const WRITES: u64 = 50;
const READERS: usize = 4;

/// The version writer `w` writes in its `n`th write: sizes vary so some
/// writes are one transaction and some are batches.
fn version(layout: LayoutKind, w: u64, n: u64) -> Item {
    let seed = w * 1000 + n;
    let len = 300_000 + (seed as usize * 7_919) % 1_700_000;
    let mut item = key(layout, "contended");
    item.insert("writer".into(), AttributeValue::N(w.to_string()));
    item.insert("n".into(), AttributeValue::N(n.to_string()));
    item.insert("data".into(), AttributeValue::B(noise(seed, len)));
    item
}

fn writer_of(item: &Item) -> (u64, u64) {
    let number = |name: &str| match &item[name] {
        AttributeValue::N(n) => n.parse::<u64>().expect("a number"),
        other => panic!("{name} is {other:?}"),
    };
    (number("writer"), number("n"))
}

async fn contend(layout: LayoutKind) {
    let client = client();
    let table: Arc<TableConfig> = Arc::new(fresh_table(&client, "race", layout).await);
    let options = PutOptions {
        compression: CodecChoice::Fixed(Compression::new(Codec::None)),
        concurrency: 2,
        ..PutOptions::default()
    };
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let mut readers = Vec::new();
    for _ in 0..READERS {
        let (client, table, done, reads) =
            (client.clone(), table.clone(), done.clone(), reads.clone());
        readers.push(tokio::spawn(async move {
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
                        let (w, n) = writer_of(&fetched.item);
                        assert!(
                            fetched.item == version(layout, w, n),
                            "read a version writer {w} never wrote as #{n}"
                        );
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("a read failed: {e} [{}]", e.code()),
                }
            }
        }));
    }
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (client, table, options) = (client.clone(), table.clone(), options.clone());
        writers.push(tokio::spawn(async move {
            let (mut committed, mut conflicts) = (0, 0);
            for n in 0..WRITES {
                match dynaslice_host::put(&client, &table, &version(layout, w, n), &options, &())
                    .await
                {
                    Ok(_) => committed += 1,
                    Err(e) if e.code() == "CONFLICT" => conflicts += 1,
                    Err(e) => panic!("writer {w} write {n}: {e} [{}]", e.code()),
                }
            }
            (committed, conflicts)
        }));
    }
    let mut committed = 0;
    for writer in writers {
        let (c, conflicts) = writer.await.expect("writer finished");
        assert_eq!(c + conflicts, WRITES);
        committed += c;
    }
    done.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader finished");
    }
    assert!(committed > 0, "no write committed");
    assert!(reads.load(Ordering::Relaxed) > 0, "no read completed");

    // The survivor is some writer's complete version.
    let last = dynaslice_host::get(
        &client,
        &table,
        &key(layout, "contended"),
        &GetOptions::default(),
        &(),
    )
    .await
    .expect("get")
    .expect("found");
    let (w, n) = writer_of(&last.item);
    assert!(last.item == version(layout, w, n));

    let (report, live) = common::collect_all_orphans(&client, &table).await;
    let expected = last.manifest.as_ref().map_or(0, |m| m.chunk_count as usize);
    assert_eq!(
        live, expected,
        "the live version's chunks are all that remain"
    );
    eprintln!(
        "{layout:?}: {committed} of {} writes committed, {} reads, gc removed {}",
        WRITERS * WRITES,
        reads.load(Ordering::Relaxed),
        report.deleted
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_and_readers_chunk_table() {
    contend(LayoutKind::ChunkTable).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_and_readers_item_collection() {
    contend(LayoutKind::ItemCollection).await;
}
