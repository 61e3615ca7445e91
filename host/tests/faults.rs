//! Faults at 30 % of requests (throttling, partial batches, 500s and dropped
//! connections, before and after the server carried the request out),
//! injected by a loopback proxy in front of the real server: every put and
//! get completes correctly, or ends in a clear error with the previous
//! version intact; nothing is lost, and `gc` leaves only live chunks.
//! Concurrent last-writer-wins writers of one item under the same faults
//! never leave a torn item: every read, and the survivor, is one whole
//! version some writer wrote.

mod common;
use dynaslice_testing::fault_proxy;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::{AttributeValue, CodecChoice, Item};
use dynaslice_host::{GetOptions, LayoutKind, PutOptions, RetryPolicy, TableConfig, local_client};
use fault_proxy::{FaultKind, Faults};

use common::{client, endpoint, fresh_table, key, noise, order_history, same_item};

fn upstream() -> SocketAddr {
    endpoint()
        .trim_start_matches("http://")
        .parse()
        .expect("an http://ip:port endpoint")
}

/// Round `n`'s version of item `k`: single items, one-transaction items and
/// batch items, compressible or not.
fn version(layout: LayoutKind, k: usize, n: u64) -> Item {
    let mut item = key(layout, &format!("item{k}"));
    let len = [150_000, 1_500_000, 6_000_000][(n as usize + k) % 3];
    if n.is_multiple_of(2) {
        item.insert(
            "data".into(),
            AttributeValue::B(noise(n * 31 + k as u64, len)),
        );
    } else {
        item.insert(
            "doc".into(),
            AttributeValue::S(order_history(n * 31 + k as u64, len)),
        );
    }
    item.insert("round".into(), AttributeValue::N(n.to_string()));
    item
}

const SPILLED: [&str; 2] = ["data", "doc"];

fn spilled() -> Vec<String> {
    SPILLED.iter().map(|s| s.to_string()).collect()
}

/// Codes a failed operation may end with under faults: the server's
/// failures after retries ran out. Anything else is a bug.
const CLEAR_ERRORS: [&str; 2] = ["DYNAMODB_ERROR", "CONNECTION_FAILED"];

async fn run(
    layout: LayoutKind,
    retry: RetryPolicy,
    rounds: u64,
) -> (usize, usize, fault_proxy::Counts) {
    let direct = client();
    let table: TableConfig = fresh_table(&direct, "faults", layout).await;
    let proxy = fault_proxy::start(
        upstream(),
        Faults {
            rate: 0.3,
            seed: 7 + layout as u64,
        },
    )
    .await;
    let faulty = local_client(&proxy.endpoint());
    let options = PutOptions {
        retry,
        compression: CodecChoice::Auto,
        ..PutOptions::default()
    };
    let reads = GetOptions {
        retry,
        ..GetOptions::default()
    };
    let mut stored: BTreeMap<usize, Item> = BTreeMap::new();
    let (mut failed_puts, mut failed_gets) = (0, 0);
    for n in 0..rounds {
        let k = (n % 4) as usize;
        let new = version(layout, k, n);
        match dynaslice_host::put(&faulty, &table, &new, &options, &()).await {
            Ok(_) => {
                stored.insert(k, new);
            }
            Err(e) => {
                assert!(
                    CLEAR_ERRORS.contains(&e.code().as_str()),
                    "put {n}: unexpected {e} [{}]",
                    e.code()
                );
                eprintln!("put {n} failed: {e}");
                failed_puts += 1;
                // The previous version is intact, unless this one committed
                // and only the answer was lost.
                let now = dynaslice_host::get(&direct, &table, &new, &GetOptions::default(), &())
                    .await
                    .expect("direct read")
                    .map(|f| f.item);
                match (&now, stored.get(&k)) {
                    (Some(item), _) if same_item(item, &new, &spilled()) => {
                        stored.insert(k, new);
                    }
                    (Some(item), Some(old)) => assert!(
                        same_item(item, old, &spilled()),
                        "put {n} failed and damaged the old version"
                    ),
                    (None, None) => {}
                    (now, old) => panic!(
                        "put {n}: stored {:?} / expected {:?}",
                        now.is_some(),
                        old.is_some()
                    ),
                }
            }
        }
        let probe = (n as usize * 3) % 4;
        match dynaslice_host::get(
            &faulty,
            &table,
            &key(layout, &format!("item{probe}")),
            &reads,
            &(),
        )
        .await
        {
            Ok(found) => match (found, stored.get(&probe)) {
                (Some(f), Some(expected)) => assert!(
                    same_item(&f.item, expected, &spilled()),
                    "get {n} read a wrong version"
                ),
                (None, None) => {}
                (f, e) => panic!(
                    "get {n}: found {:?}, expected {:?}",
                    f.is_some(),
                    e.is_some()
                ),
            },
            Err(e) => {
                assert!(
                    CLEAR_ERRORS.contains(&e.code().as_str()),
                    "get {n}: unexpected {e} [{}]",
                    e.code()
                );
                eprintln!("get {n} failed: {e}");
                failed_gets += 1;
            }
        }
    }
    let counts = proxy.counts();
    proxy.set_enabled(false);
    // Nothing lost: every item reads as the last version that committed.
    for (k, expected) in &stored {
        let found = dynaslice_host::get(&direct, &table, expected, &GetOptions::default(), &())
            .await
            .expect("direct read")
            .expect("stored");
        assert!(
            same_item(&found.item, expected, &spilled()),
            "item{k} lost its last version"
        );
    }
    // Orphans from failed writes are collected; live chunks stay.
    common::collect_all_orphans(&direct, &table).await;
    (failed_puts, failed_gets, counts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_percent_faults_with_default_retries_lose_nothing() {
    let mut seen = [0u64; 6];
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let (failed_puts, failed_gets, counts) = run(layout, RetryPolicy::default(), 24).await;
        eprintln!("{layout:?}: {counts:?}");
        let kinds = [
            counts.throttled,
            counts.internal_errors_before,
            counts.internal_errors_after,
            counts.dropped_before,
            counts.dropped_after,
            counts.partial_batches,
        ];
        for (total, n) in seen.iter_mut().zip(kinds) {
            *total += n;
        }
        assert_eq!(
            (failed_puts, failed_gets),
            (0, 0),
            "10 attempts survive 30 % faults"
        );
    }
    // Every kind of fault was met (summed over both runs: the rarer kinds
    // come a few times per run).
    let names = [
        "throttled",
        "500 before",
        "500 after",
        "dropped before",
        "dropped after",
        "partial batches",
    ];
    for (name, n) in names.iter().zip(seen) {
        assert!(n > 0, "{name}: never injected ({seen:?})");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operations_that_run_out_of_retries_fail_clearly_and_keep_the_old_version() {
    let impatient = RetryPolicy {
        max_attempts: 2,
        max_throttled_attempts: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    };
    let (failed_puts, failed_gets, _) = run(LayoutKind::ChunkTable, impatient, 32).await;
    assert!(
        failed_puts > 0 && failed_gets > 0,
        "two attempts must sometimes fail ({failed_puts} puts, {failed_gets} gets)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn only_partial_batches_still_converge() {
    let direct = client();
    let table = fresh_table(&direct, "partial", LayoutKind::ChunkTable).await;
    let proxy = fault_proxy::start(upstream(), Faults { rate: 1.0, seed: 3 }).await;
    proxy.set_kinds(&[FaultKind::PartialBatch]);
    let faulty = local_client(&proxy.endpoint());
    let item = version(LayoutKind::ChunkTable, 0, 2); // 6 MB of noise: batch mode
    let options = PutOptions {
        compression: CodecChoice::Fixed(Compression::new(Codec::None)),
        batch_items: 25,
        ..PutOptions::default()
    };
    let outcome = dynaslice_host::put(&faulty, &table, &item, &options, &())
        .await
        .expect("put converges");
    assert_eq!(outcome.mode.name(), "batch");
    let fetched = dynaslice_host::get(&faulty, &table, &item, &GetOptions::default(), &())
        .await
        .expect("get")
        .expect("found");
    assert!(same_item(&fetched.item, &item, &spilled()));
    assert!(proxy.counts().partial_batches >= 2, "{:?}", proxy.counts());
}

/// Writer `w`'s `n`th version of the contended item: 300 KB to 1.5 MB of
/// noise, split into one to five chunks.
fn racer(w: u64, n: u64) -> Item {
    let seed = 7_000 + w * 100 + n;
    let mut item = key(LayoutKind::ChunkTable, "contended");
    item.insert("writer".into(), AttributeValue::N(w.to_string()));
    item.insert("n".into(), AttributeValue::N(n.to_string()));
    let len = 300_000 + (seed as usize * 7_919) % 1_200_000;
    item.insert("data".into(), AttributeValue::B(noise(seed, len)));
    item
}

/// A read of the contended item is one whole version some writer wrote.
fn whole_racer(item: &Item) {
    let number = |name: &str| match &item[name] {
        AttributeValue::N(n) => n.parse::<u64>().expect("a number"),
        other => panic!("{name} is {other:?}"),
    };
    let (w, n) = (number("writer"), number("n"));
    assert!(
        *item == racer(w, n),
        "read a version writer {w} never wrote as #{n}"
    );
}

/// Last writer wins under 30 % faults, four writers racing on one item
/// while three readers read it: a commit whose answer was lost is never sent
/// again unconditionally (a late copy would point the parent at chunks the
/// next writer already deleted), so no read ever finds chunks missing
/// under a parent that stays, the survivor is one writer's whole version,
/// and after `gc` only its chunks remain. Backoffs are long so a racing
/// writer often commits and cleans up between two attempts of another's.
/// The writers commit every few tens of milliseconds, so a read whose
/// every attempt is overtaken by a commit may end `CHUNKS_VANISHED` (a
/// conflict: read again later); it never ends `CHUNK_MISSING`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_last_writer_wins_under_faults_never_tears() {
    const WRITERS: u64 = 4;
    const WRITES: u64 = 16;
    const READERS: usize = 3;
    let direct = client();
    let table = Arc::new(fresh_table(&direct, "lwwfaults", LayoutKind::ChunkTable).await);
    let proxy = fault_proxy::start(
        upstream(),
        Faults {
            rate: 0.3,
            seed: 29,
        },
    )
    .await;
    let faulty = local_client(&proxy.endpoint());
    let retry = RetryPolicy {
        max_attempts: 10,
        base_delay: Duration::from_millis(60),
        max_delay: Duration::from_millis(600),
        ..RetryPolicy::default()
    };
    let options = PutOptions {
        retry,
        compression: CodecChoice::Fixed(Compression::new(Codec::None)),
        ..PutOptions::default()
    };
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let overtaken = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (faulty, table, done, reads, overtaken) = (
                faulty.clone(),
                table.clone(),
                done.clone(),
                reads.clone(),
                overtaken.clone(),
            );
            tokio::spawn(async move {
                let options = GetOptions {
                    retry,
                    ..GetOptions::default()
                };
                while !done.load(Ordering::Relaxed) {
                    let contended = key(LayoutKind::ChunkTable, "contended");
                    match dynaslice_host::get(&faulty, &table, &contended, &options, &()).await {
                        Ok(Some(fetched)) => {
                            whole_racer(&fetched.item);
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(None) => tokio::time::sleep(Duration::from_millis(5)).await,
                        Err(e) if e.code() == "CHUNKS_VANISHED" => {
                            overtaken.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => assert!(
                            CLEAR_ERRORS.contains(&e.code().as_str()),
                            "a read failed: {e} [{}]",
                            e.code()
                        ),
                    }
                }
            })
        })
        .collect();
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (faulty, table, options) = (faulty.clone(), table.clone(), options.clone());
        writers.push(tokio::spawn(async move {
            let (mut ok, mut superseded) = (0, 0);
            for n in 0..WRITES {
                match dynaslice_host::put(&faulty, &table, &racer(w, n), &options, &()).await {
                    Ok(outcome) => {
                        ok += 1;
                        superseded += u64::from(outcome.superseded);
                    }
                    Err(e) => assert!(
                        CLEAR_ERRORS.contains(&e.code().as_str()),
                        "writer {w} write {n}: {e} [{}]",
                        e.code()
                    ),
                }
            }
            (ok, superseded)
        }));
    }
    let (mut ok, mut superseded) = (0, 0);
    for writer in writers {
        let (o, s) = writer.await.expect("writer finished");
        ok += o;
        superseded += s;
    }
    done.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader finished");
    }
    let counts = proxy.counts();
    proxy.set_enabled(false);
    assert!(ok > 0 && reads.load(Ordering::Relaxed) > 0);
    assert!(
        counts.internal_errors_after + counts.dropped_after > 0,
        "some answers were lost after the write: {counts:?}"
    );
    let contended = key(LayoutKind::ChunkTable, "contended");
    let last = dynaslice_host::get(&direct, &table, &contended, &GetOptions::default(), &())
        .await
        .expect("the survivor reads whole")
        .expect("stored");
    whole_racer(&last.item);
    let (_, live) = common::collect_all_orphans(&direct, &table).await;
    assert_eq!(
        live,
        last.manifest.as_ref().map_or(0, |m| m.chunk_count as usize)
    );
    eprintln!(
        "{ok} of {} writes succeeded ({superseded} superseded), {} reads ({} overtaken), {counts:?}",
        WRITERS * WRITES,
        reads.load(Ordering::Relaxed),
        overtaken.load(Ordering::Relaxed)
    );
}
