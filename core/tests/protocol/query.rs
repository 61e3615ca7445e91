//! Whole items from a Query or Scan: every item yielded whole and in the
//! pages' order, no chunk item, with faults at any request, a parent
//! deleted under the query skipped, and lazy parents as stored.

use dynaslice_core::manifest::MANIFEST_ATTRIBUTE;
use dynaslice_core::plan::{Query, WriteMode};
use dynaslice_core::protocol::{
    GetOptions, Machine, Position, ProtocolError, PutMachine, PutSource, QueryMachine,
    QueryOptions, QueryOutcome, Step,
};
use dynaslice_core::{AttributeValue, Item};

use crate::scripted::{item, key, put_options, retry};
use crate::sim::{CHUNKS, Fault, Store, TABLE, clean, finish, table};

/// Four virtual items and four plain ones (no codec: up to 409,600 bytes
/// an item is stored whole), in key order.
fn stored() -> (Store, Vec<Item>) {
    let lens = [700_000, 200, 1_300_000, 300_000, 90, 500_000, 800_000, 100];
    store_of(
        lens.iter()
            .enumerate()
            .map(|(i, &len)| (format!("k{i}"), len)),
    )
}

/// A store of items of these keys and lengths, each written whole, in
/// key order.
fn store_of(items: impl Iterator<Item = (String, usize)>) -> (Store, Vec<Item>) {
    let mut store = Store::new();
    let mut written = Vec::new();
    for (i, (key, len)) in items.enumerate() {
        let item = item(&key, len, i as u64);
        let env = store.env(i as u64);
        let mut put = PutMachine::new(
            PutSource::Item(&item),
            table(),
            put_options(WriteMode::Batch),
            env,
        );
        finish(&mut put, &mut store, &mut clean).expect("a write");
        written.push(item);
    }
    (store, written)
}

fn options(concurrency: usize, lazy: bool) -> QueryOptions {
    QueryOptions {
        get: GetOptions {
            retry: retry(),
            ..GetOptions::default()
        },
        concurrency,
        lazy,
        ..QueryOptions::default()
    }
}

fn scan() -> Query {
    Query {
        table: TABLE.into(),
        limit: Some(3),
        ..Query::default()
    }
}

/// Runs a query to its end, taking items as they are ready; `fault`
/// decides each request's fate, and `before(n, store)` runs before the
/// n-th answer is delivered.
fn run(
    store: &mut Store,
    query: Query,
    options: QueryOptions,
    fault: &mut dyn FnMut(usize) -> Fault,
    before: &mut dyn FnMut(usize, &mut Store),
) -> (Result<QueryOutcome, ProtocolError>, Vec<Item>) {
    let mut machine = QueryMachine::new(table(), query, options, store.env(9));
    let mut items = Vec::new();
    let mut out = Vec::new();
    let mut n = 0;
    loop {
        match machine.poll() {
            Step::Send(send) => out.push(send),
            Step::Work => machine.work(),
            Step::Output => items.extend(machine.take()),
            Step::Done(result) => return (result, items),
            Step::Sleep(pause) if out.is_empty() => {
                store.now_ms += pause.as_millis() as u64;
                machine.wake(store.now_ms);
            }
            Step::Wait | Step::Sleep(_) => {
                assert!(!out.is_empty(), "a query waits with nothing out");
                let send = out.remove(0);
                assert!(send.id.0 < 1 << 53);
                before(n, store);
                store.now_ms += 1 + send.delay.as_millis() as u64;
                let response = store.send(&send.request, fault(n));
                n += 1;
                machine.handle(send.id, response);
            }
            other => panic!("a query asked for {other:?}"),
        }
    }
}

#[test]
fn a_scan_yields_every_item_whole_in_order_whatever_one_request_meets() {
    let (store, written) = stored();
    // Requests of a clean run.
    let mut clean_store = store_clone(&store);
    let mut requests = 0;
    let (outcome, items) = run(
        &mut clean_store,
        scan(),
        options(2, false),
        &mut |_| {
            requests += 1;
            Fault::None
        },
        &mut |_, _| {},
    );
    let outcome = outcome.unwrap();
    assert_eq!(items, written);
    assert_eq!((outcome.items, outcome.virtual_items), (8, 4));
    assert_eq!(outcome.pages, 3);
    for at in 0..requests {
        for fault in [
            Fault::Throttle,
            Fault::ServerError,
            Fault::LostAnswer,
            Fault::Partial,
        ] {
            let mut store = store_clone(&store);
            let (outcome, items) = run(
                &mut store,
                scan(),
                options(3, false),
                &mut |n| if n == at { fault } else { Fault::None },
                &mut |_, _| {},
            );
            outcome.unwrap_or_else(|e| panic!("{fault:?} at request {at}: {e}"));
            assert_eq!(items, written, "{fault:?} at request {at}");
        }
    }
}

#[test]
fn chunk_items_are_never_yielded_and_a_deleted_parent_is_skipped() {
    let (mut store, written) = stored();
    // Scanning the chunk table itself (as a raw Scan of an item collection
    // would meet them): nothing but chunks, none yielded.
    let chunks = Query {
        table: CHUNKS.into(),
        ..Query::default()
    };
    let (outcome, items) = run(
        &mut store,
        chunks,
        options(2, false),
        &mut |_| Fault::None,
        &mut |_, _| {},
    );
    let outcome = outcome.unwrap();
    assert!(items.is_empty());
    assert_eq!(outcome.chunks_skipped as usize, store.items(CHUNKS).len());

    // k2's parent is deleted after the first page named it.
    let (outcome, items) = run(
        &mut store,
        scan(),
        options(1, false),
        &mut |_| Fault::None,
        &mut |n, store| {
            if n == 1 {
                store.remove_raw(TABLE, &key("k2"));
            }
        },
    );
    assert_eq!(outcome.unwrap().vanished, 1);
    let expected: Vec<Item> = written
        .into_iter()
        .filter(|i| i["pk"] != AttributeValue::S("k2".into()))
        .collect();
    assert_eq!(items, expected);
}

#[test]
fn a_query_of_one_key_and_a_lazy_scan_read_no_chunk() {
    let (mut store, written) = stored();
    let one = Query {
        table: TABLE.into(),
        key_condition: Some("#p = :p".into()),
        names: [("#p".to_string(), "pk".to_string())].into(),
        values: [(":p".to_string(), AttributeValue::S("k6".into()))].into(),
        ..Query::default()
    };
    let (outcome, items) = run(
        &mut store,
        one,
        options(4, false),
        &mut |_| Fault::None,
        &mut |_, _| {},
    );
    assert_eq!(outcome.unwrap().items, 1);
    assert_eq!(items, vec![written[6].clone()]);

    let mut sent = Vec::new();
    let (outcome, items) = run(
        &mut store,
        scan(),
        options(4, true),
        &mut |_| Fault::None,
        &mut |n, _| sent.push(n),
    );
    assert_eq!(outcome.unwrap().pages as usize, sent.len(), "pages only");
    assert_eq!(items.len(), 8);
    let parents = items
        .iter()
        .filter(|i| i.contains_key(MANIFEST_ATTRIBUTE))
        .count();
    assert_eq!(parents, 4, "virtual items come as their parents");
}

fn store_clone(store: &Store) -> Store {
    let mut copy = Store::new();
    copy.now_ms = store.now_ms;
    for name in [TABLE, CHUNKS] {
        for item in store.items(name) {
            copy.put_raw(name, item);
        }
    }
    copy
}

#[test]
fn a_damaged_item_ends_a_query_and_is_reported_by_a_verifying_one() {
    let (mut store, written) = stored();
    // A flipped byte in one chunk of k6 (a virtual item).
    let mut chunk = store
        .items(CHUNKS)
        .into_iter()
        .find(|c| matches!(&c["pk"], AttributeValue::S(k) if k.starts_with("k6#")))
        .expect("a chunk of k6");
    if let Some(AttributeValue::B(data)) =
        chunk.get_mut(dynaslice_core::manifest::CHUNK_DATA_ATTRIBUTE)
    {
        data[5] ^= 1;
    }
    store.put_raw(CHUNKS, chunk);

    let (outcome, _) = run(
        &mut store,
        scan(),
        options(2, false),
        &mut |_| Fault::None,
        &mut |_, _| {},
    );
    assert_eq!(
        outcome.unwrap_err().code(),
        dynaslice_core::Code::ChunkDigestMismatch
    );

    let verifying = QueryOptions {
        report_damaged: true,
        ..options(2, false)
    };
    let mut machine = QueryMachine::new(table(), scan(), verifying, store.env(3));
    let (mut items, mut damaged) = (Vec::new(), Vec::new());
    let outcome = loop {
        match machine.poll() {
            Step::Send(send) => {
                let response = store.send(&send.request, Fault::None);
                machine.handle(send.id, response);
            }
            Step::Work => machine.work(),
            Step::Output => {
                items.extend(machine.take());
                damaged.extend(machine.take_damaged());
            }
            Step::Done(result) => break result.unwrap(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(damaged.len(), 1);
    assert_eq!(damaged[0].key, key("k6"));
    assert_eq!(
        damaged[0].error.code(),
        dynaslice_core::Code::ChunkDigestMismatch
    );
    let whole: Vec<Item> = written
        .into_iter()
        .filter(|i| i["pk"] != AttributeValue::S("k6".into()))
        .collect();
    assert_eq!(items, whole, "every other item, whole");
    assert_eq!(outcome.damaged, 1);
}

/// Runs `query` until its position is between pages for the `stop`-th
/// time, or to its end: the items taken, and the start a new query
/// resumes from (`None` once it ended).
fn run_until(
    store: &mut Store,
    query: Query,
    options: QueryOptions,
    stop: usize,
) -> (Vec<Item>, Option<Option<Item>>) {
    let mut machine = QueryMachine::new(table(), query, options, store.env(9));
    let mut items = Vec::new();
    let mut between = 0;
    loop {
        match machine.poll() {
            Step::Send(send) => {
                store.now_ms += 1 + send.delay.as_millis() as u64;
                let response = store.send(&send.request, Fault::None);
                machine.handle(send.id, response);
            }
            Step::Work => machine.work(),
            Step::Output => {
                items.extend(machine.take());
                match machine.position() {
                    Position::At(start) => {
                        between += 1;
                        if between == stop {
                            return (items, Some(start.cloned()));
                        }
                    }
                    Position::End => return (items, None),
                    Position::Within => {}
                }
            }
            Step::Done(result) => {
                result.expect("a clean run");
                return (items, None);
            }
            Step::Sleep(pause) => {
                store.now_ms += pause.as_millis() as u64;
                machine.wake(store.now_ms);
            }
            other => panic!("a query asked for {other:?}"),
        }
    }
}

#[test]
fn a_query_resumed_from_any_position_between_pages_yields_exactly_the_rest() {
    let (store, written) = stored();
    // Pages of 3 (a page may hold only chunk items, so fewer stops than pages).
    let mut stops = 0;
    for stop in 1.. {
        let mut first = store_clone(&store);
        let (taken, start) = run_until(&mut first, scan(), options(2, false), stop);
        let Some(start) = start else {
            assert_eq!(taken, written, "a run to the end");
            break;
        };
        stops += 1;
        let resumed = Query { start, ..scan() };
        let mut second = store_clone(&store);
        let (rest, end) = run_until(&mut second, resumed, options(3, false), usize::MAX);
        assert_eq!(end, None);
        let mut all = taken.clone();
        all.extend(rest);
        assert_eq!(all, written, "stopped between pages for the {stop}th time");
    }
    assert!(stops >= 2, "only {stops} stops between pages");
}

#[test]
fn parallel_segments_together_yield_every_item_once() {
    let (store, written) = stored();
    let mut all = Vec::new();
    let mut sizes = Vec::new();
    for segment in 0..3 {
        let query = Query {
            segment: Some((segment, 3)),
            ..scan()
        };
        let mut store = store_clone(&store);
        let (items, end) = run_until(&mut store, query, options(2, false), usize::MAX);
        assert_eq!(end, None);
        sizes.push(items.len());
        all.extend(items);
    }
    assert!(
        sizes.iter().filter(|&&n| n > 0).count() >= 2,
        "segments {sizes:?}"
    );
    all.sort_by_key(|item| format!("{:?}", item.get("pk")));
    let mut expected = written.clone();
    expected.sort_by_key(|item| format!("{:?}", item.get("pk")));
    assert_eq!(all, expected);
}

#[test]
fn a_rate_limit_holds_the_units_per_second_of_a_verifying_scan() {
    // 40 virtual items of 2 chunks: a read of each costs a few requests.
    let (mut store, written) = store_of((0..40).map(|i| (format!("r{i:02}"), 500_000)));
    let rate = 4;
    let limited = QueryOptions {
        max_units_per_second: Some(rate),
        ..options(2, false)
    };
    let began = store.now_ms;
    let mut machine = QueryMachine::new(table(), scan(), limited, store.env(9));
    let mut items = Vec::new();
    let outcome = loop {
        match machine.poll() {
            Step::Send(send) => {
                store.now_ms += 1 + send.delay.as_millis() as u64;
                let response = store.send(&send.request, Fault::None);
                machine.handle(send.id, response);
            }
            Step::Work => machine.work(),
            Step::Output => items.extend(machine.take()),
            Step::Done(result) => break result.expect("a clean run"),
            Step::Sleep(pause) => {
                store.now_ms += pause.as_millis() as u64;
                machine.wake(store.now_ms);
            }
            other => panic!("a query asked for {other:?}"),
        }
    };
    assert_eq!(items, written);
    // One unit per request in the simulation; the last reads are not
    // waited after, so the rate over the run is a little over.
    let units = outcome.consumed.read;
    let seconds = (store.now_ms - began) as f64 / 1000.0;
    let per_second = units / seconds;
    assert!(units >= 100.0, "{units} units");
    assert!(
        per_second <= f64::from(rate) * 1.1 && per_second >= f64::from(rate) * 0.8,
        "{units} units in {seconds} s: {per_second}/s at a limit of {rate}"
    );
}
