//! gc a page at a time: a run stopped after any page and started again
//! from the cursor it reported ends exactly where an uninterrupted run
//! does, and a rate limit holds the units it spends per second.

use dynaslice_core::plan::WriteMode;
use dynaslice_core::protocol::{GcMachine, GcOptions, PutMachine, PutSource};
use dynaslice_core::{Item, VersionId};

use crate::scripted::{item, put_options, retry};
use crate::sim::{CHUNKS, Halt, Out, Store, clean, finish, run, table};

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

fn options(start: Option<Item>) -> GcOptions {
    GcOptions {
        start,
        ..GcOptions::default()
    }
}

#[test]
fn a_run_stopped_after_any_page_resumes_from_its_cursor_and_ends_the_same() {
    let store = littered(30);
    let mut whole = copy(&store);
    let mut gc = GcMachine::new(table(), options(None), retry(), whole.env(1));
    let reference = finish(&mut gc, &mut whole, &mut clean).unwrap();
    assert_eq!(reference.deleted, 60, "30 orphan writes of 2 chunks");
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
