//! gc a page at a time: a run stopped after any page and started again
//! from the cursor it reported ends exactly where an uninterrupted run
//! does, and a rate limit holds the units it spends per second.

use dynaslice_core::plan::WriteMode;
use dynaslice_core::protocol::{GcMachine, GcOptions, PutMachine, PutSource};
use dynaslice_core::{Item, VersionId};

use crate::scripted::{item, put_options, retry};
use crate::sim::{CHUNKS, Fault, Halt, Out, Store, clean, finish, run, table};

/// Live items, and the chunks of crashed writes (orphans) under live and
/// missing parents, hours old.
fn littered(orphans: u64) -> Store {
    let mut store = Store::new();
    for n in 0..6u64 {
        let live = item(&format!("live{n}"), 500_000, n);
        let mut put = PutMachine::new(
            PutSource::Item(&live),
            table(),
            put_options(WriteMode::Batch),
            store.env(n),
        );
        finish(&mut put, &mut store, &mut clean).unwrap();
    }
    for n in 0..orphans {
        let stamp = VersionId::new(store.now_ms - 3 * 3600 * 1000, u128::from(n));
        let parent = match n % 3 {
            0 => format!("live{}", n % 6),
            _ => format!("gone{n}"),
        };
        let orphan = item(&parent, 500_000, 100 + n);
        let options = put_options(WriteMode::Batch).split_options(&table(), stamp);
        for chunk in dynaslice_core::split_item(&orphan, &options)
            .unwrap()
            .chunks
        {
            store.put_raw(CHUNKS, chunk);
        }
    }
    store
}

fn copy(store: &Store) -> Store {
    let mut copy = Store::new();
    copy.now_ms = store.now_ms;
    for name in [crate::sim::TABLE, CHUNKS] {
        for item in store.items(name) {
            copy.put_raw(name, item);
        }
    }
    copy
}

/// Over every chunk: many pages.
fn options(start: Option<Item>) -> GcOptions {
    GcOptions {
        start,
        every_chunk: true,
        ..GcOptions::default()
    }
}

#[test]
fn a_run_stopped_after_any_page_resumes_from_its_cursor_and_ends_the_same() {
    let store = littered(30);
    let mut whole = copy(&store);
    let mut gc = GcMachine::new(table(), options(None), retry(), whole.env(1));
    let reference = finish(&mut gc, &mut whole, &mut clean).unwrap();
    // 30 orphan writes of 2 chunks, all deleted; chunk 1 of a write on a
    // later page than its chunk 0 went with its anchor's span, unseen.
    assert_eq!(crate::sim::orphans(&whole), 0);
    assert_eq!(whole.items(CHUNKS).len(), store.items(CHUNKS).len() - 60);
    assert!((30..=60).contains(&reference.deleted), "{reference:?}");
    for stop_after in 1..6 {
        let mut store = copy(&store);
        let mut gc = GcMachine::new(table(), options(None), retry(), store.env(2));
        let mut out = Out::default();
        let mut deleted = 0;
        let mut pages = 0;
        let cursor = loop {
            match run(&mut gc, &mut store, &mut out, &mut clean) {
                Halt::Output => {
                    pages += 1;
                    if pages == stop_after {
                        deleted += gc.report().deleted;
                        break gc.cursor().cloned();
                    }
                }
                other => panic!("a page first: {}", matches!(other, Halt::Done(_))),
            }
        };
        // Killed here; the next run starts at the cursor.
        assert!(cursor.is_some());
        let mut again = GcMachine::new(table(), options(cursor), retry(), store.env(3));
        let rest = finish(&mut again, &mut store, &mut clean).unwrap();
        deleted += rest.deleted;
        assert_eq!(
            deleted, reference.deleted,
            "stopped after page {stop_after}"
        );
        assert_eq!(
            store.items(CHUNKS),
            whole.items(CHUNKS),
            "stopped after page {stop_after}"
        );
    }
}

#[test]
fn a_rate_limit_holds_the_units_spent_per_second() {
    // Enough pages (7 chunks each in the simulated store) that the last
    // one, which nothing follows to wait for, weighs little in the average.
    let mut store = littered(150);
    let started = store.now_ms;
    let rate = 3;
    let limited = GcOptions {
        max_units_per_second: Some(rate),
        every_chunk: true,
        ..GcOptions::default()
    };
    let mut gc = GcMachine::new(table(), limited, retry(), store.env(4));
    let report = finish(&mut gc, &mut store, &mut clean).unwrap();
    let units = report.consumed.read + report.consumed.write;
    let seconds = (store.now_ms - started) as f64 / 1000.0;
    let held = units / seconds;
    println!("{units} units in {seconds:.1} s: {held:.2} units/s at a limit of {rate}");
    assert!(
        (f64::from(rate) * 0.9..=f64::from(rate) * 1.1).contains(&held),
        "{held:.2} units/s at a limit of {rate}"
    );
}

/// The chunks (of 4 KB) of a write of `len` bytes under `parent` that
/// crashed three hours ago.
fn crashed_chunks(store: &Store, parent: &str, len: usize, seed: u64) -> Vec<Item> {
    let stamp = VersionId::new(store.now_ms - 3 * 3600 * 1000, u128::from(seed));
    let mut options = put_options(WriteMode::Batch).split_options(&table(), stamp);
    options.chunk_item_bytes = 4096;
    options.item_limit = 4096;
    dynaslice_core::split_item(&item(parent, len, seed), &options)
        .unwrap()
        .chunks
}

/// Stores the chunks of a crashed write ([`crashed_chunks`]), only the
/// first `stored` of them when given; how many it stored.
fn crashed(store: &mut Store, parent: &str, len: usize, seed: u64, stored: Option<usize>) -> usize {
    let chunks = crashed_chunks(store, parent, len, seed);
    let stored = stored.unwrap_or(chunks.len());
    for chunk in chunks.into_iter().take(stored) {
        store.put_raw(CHUNKS, chunk);
    }
    stored
}

#[test]
fn gc_over_the_anchors_index_reads_one_entry_per_64_chunks_and_leaves_no_orphan() {
    let mut store = littered(0);
    let live_chunks = store.items(CHUNKS).len();
    // Crashed writes: one of 70 chunks (anchors 0 and 64), one that stored
    // only its first 5 chunks (as the anchor rule lets a crash leave
    // them), one under a live parent; and one young (kept).
    let mut orphaned = crashed(&mut store, "gone-a", 280_000, 1, None);
    assert!(orphaned > 64, "{orphaned} chunks");
    orphaned += crashed(&mut store, "gone-b", 100_000, 2, Some(5));
    orphaned += crashed(&mut store, "live0", 50_000, 3, None);
    let young = item("gone-c", 500_000, 4);
    let stamp = VersionId::new(store.now_ms - 60_000, 4);
    let options = put_options(WriteMode::Batch).split_options(&table(), stamp);
    let young_chunks = dynaslice_core::split_item(&young, &options).unwrap().chunks;
    let young_count = young_chunks.len();
    for chunk in young_chunks {
        store.put_raw(CHUNKS, chunk);
    }
    crate::sim::anchors_cover_every_chunk(&store).unwrap();

    let mut gc = GcMachine::new(table(), GcOptions::default(), retry(), store.env(5));
    let mut scanned = 0;
    let report = finish(&mut gc, &mut store, &mut |_, request| {
        if let dynaslice_core::protocol::Request::Scan(scan) = request {
            assert_eq!(scan.index.as_deref(), Some("dynaslice-anchors"));
            assert!(!scan.consistent, "an index is read eventually consistent");
            assert_eq!(scan.table, CHUNKS);
            scanned += 1;
        }
        Fault::None
    })
    .unwrap();
    assert!(scanned > 0);
    // Anchors seen: the 6 live items' (one each), 2 + 1 + 1 of the crashed
    // writes, 1 of the young one. Only anchors count.
    assert_eq!(report.chunks, 6 + 4 + 1, "{report:?}");
    assert_eq!((report.referenced, report.young, report.deleted), (6, 1, 4));
    assert_eq!(
        store.items(CHUNKS).len(),
        live_chunks + young_count,
        "every crashed chunk ({orphaned}) gone, no other"
    );
    crate::sim::anchors_cover_every_chunk(&store).unwrap();
}

#[test]
fn chunks_an_older_writer_left_without_anchors_need_a_run_over_every_chunk() {
    let mut store = littered(0);
    let live_chunks = store.items(CHUNKS).len();
    // Written before anchors: no `_da`.
    for mut chunk in crashed_chunks(&store, "gone-old", 20_000, 1) {
        chunk.remove(dynaslice_core::manifest::ANCHOR_ATTRIBUTE);
        store.put_raw(CHUNKS, chunk);
    }
    let mut gc = GcMachine::new(table(), GcOptions::default(), retry(), store.env(5));
    let report = finish(&mut gc, &mut store, &mut clean).unwrap();
    assert_eq!(report.deleted, 0, "invisible to the index");
    assert!(store.items(CHUNKS).len() > live_chunks);
    let every_chunk = GcOptions {
        every_chunk: true,
        ..GcOptions::default()
    };
    let mut gc = GcMachine::new(table(), every_chunk, retry(), store.env(6));
    let report = finish(&mut gc, &mut store, &mut clean).unwrap();
    assert!(report.deleted > 0);
    assert_eq!(store.items(CHUNKS).len(), live_chunks);
}
