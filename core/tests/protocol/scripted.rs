//! Each protocol with one fault at each of its requests in turn.

use std::collections::BTreeMap;
use std::time::Duration;

use dynaslice_core::codec::Compression;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::manifest::stored_version;
use dynaslice_core::plan::{Precondition, WriteKind, WriteMode, WriteRequest};
use dynaslice_core::protocol::{
    DeleteMachine, GcMachine, GcOptions, GetOptions, Machine, ProtocolError, PutMachine,
    PutOptions, PutSource, ReadMachine, Request, RetryPolicy, Sink,
};
use dynaslice_core::{AttributeValue, Code, CodecChoice, Item, VersionId};

use crate::sim::{
    CHUNKS, Fault, Halt, Out, Store, TABLE, clean, committed_versions_whole, finish, orphans, run,
    table,
};

/// An item of `len` incompressible bytes: chunk counts do not depend on a
/// codec.
pub fn item(key: &str, len: usize, seed: u64) -> Item {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S(key.into()));
    item.insert("writer".into(), AttributeValue::N(seed.to_string()));
    item.insert(
        "data".into(),
        AttributeValue::B((0..len).map(|_| rng.u8(..)).collect()),
    );
    item
}

pub fn key(key: &str) -> Item {
    Item::from([("pk".into(), AttributeValue::S(key.into()))])
}

/// Quick retries: the simulated store answers at once.
pub fn retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        max_throttled_attempts: 6,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
    }
}

pub fn put_options(mode: WriteMode) -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        mode,
        retry: retry(),
        batch_items: 2,
        ..PutOptions::default()
    }
}

/// Writes `item` with no fault.
fn write(store: &mut Store, item: &Item, options: PutOptions, seed: u64) -> VersionId {
    let env = store.env(seed);
    let mut put = PutMachine::new(PutSource::Item(item), table(), options, env);
    let outcome = finish(&mut put, store, &mut clean).expect("a clean write");
    outcome.manifest.expect("split").version
}

/// Reads the item with `key` whole.
pub fn read(store: &mut Store, key: &Item) -> Result<Option<Item>, ProtocolError> {
    let env = store.env(99);
    let options = GetOptions {
        retry: retry(),
        ..GetOptions::default()
    };
    let mut read = ReadMachine::new(key, table(), Sink::Item, options, None, env);
    Ok(finish(&mut read, store, &mut clean)?.and_then(|o| o.item))
}

/// gc, two hours later: every unreferenced chunk is past the grace.
/// Two hours later, a `gc` over the anchors index alone leaves no
/// unreferenced chunk.
pub fn collect(store: &mut Store) {
    store.now_ms += 2 * 3600 * 1000;
    let env = store.env(98);
    let mut gc = GcMachine::new(table(), GcOptions::default(), retry(), env);
    finish(&mut gc, store, &mut clean).expect("gc");
    assert_eq!(orphans(store), 0, "gc left unreferenced chunks");
}

/// The version stored under `key`.
fn stored(store: &Store, key: &Item) -> Option<VersionId> {
    store
        .get(TABLE, key)
        .and_then(|p| stored_version(p).ok().flatten())
}

/// What is stored before a write.
#[derive(Clone, Copy, Debug)]
enum Before {
    /// A 1 MB virtual item (3 chunks, batches of 2).
    Virtual,
    /// A small item stored whole.
    Plain,
    /// Nothing.
    Absent,
}

/// Writes a 1.2 MB item over what `before` says is stored, with `fault`
/// at request `at`, as `options` say; checks what must hold whatever
/// happened, and returns the result.
fn overwrite_with_fault(
    before: Before,
    options: &PutOptions,
    at: usize,
    fault: Fault,
) -> (
    Result<dynaslice_core::protocol::PutOutcome, ProtocolError>,
    Store,
    usize,
) {
    let mut store = Store::new();
    let old = match before {
        Before::Virtual => Some(item("a", 1_000_000, 1)),
        Before::Plain => Some(item("a", 100, 1)),
        Before::Absent => None,
    };
    let old_version = old.as_ref().map(|old| {
        let env = store.env(1);
        let mut put = PutMachine::new(
            PutSource::Item(old),
            table(),
            put_options(WriteMode::Batch),
            env,
        );
        finish(&mut put, &mut store, &mut clean).expect("a clean write");
        stored(&store, &key("a"))
    });
    let old_version = old_version.flatten().unwrap_or(VersionId::new(0, 0));
    let new = item("a", 1_200_000, 2);
    let mut options = options.clone();
    if options.precondition.is_some() {
        options.precondition = Some(Precondition::Version(old_version));
    }
    let env = store.env(2);
    let mut put = PutMachine::new(PutSource::Item(&new), table(), options, env);
    let mut out = Out::default();
    let result = match run(&mut put, &mut store, &mut out, &mut |n, _| {
        if n == at { fault } else { Fault::None }
    }) {
        Halt::Done(result) => result,
        _ => panic!("a put of an item moves no bytes"),
    };
    committed_versions_whole(&store).unwrap();
    crate::sim::anchors_cover_every_chunk(&store).unwrap();
    // The stored item is the old one or the new one, whole.
    let back = read(&mut store, &key("a")).expect("read");
    if back.as_ref() != Some(&new) {
        assert_eq!(back, old, "{before:?}, {fault:?} at {at}: neither version");
        assert!(
            result.is_err(),
            "{before:?}, {fault:?} at {at}: a write that succeeded is not stored"
        );
    }
    (result, store, out.sent)
}

/// Every request of an overwrite, each fault in turn: the result is a
/// success or a typed error, the stored item is whole and one of the two,
/// and gc leaves nothing behind.
fn every_request_every_way(before: Before, options: PutOptions) {
    let (result, _, requests) = overwrite_with_fault(before, &options, usize::MAX, Fault::None);
    result.expect("a clean overwrite");
    assert!(requests >= 3, "{requests} requests");
    let mut kinds = BTreeMap::new();
    for at in 0..requests {
        for fault in Fault::ALL {
            let (result, mut store, _) = overwrite_with_fault(before, &options, at, fault);
            match &result {
                Ok(outcome) => assert!(!outcome.superseded),
                Err(e) => assert!(
                    matches!(e.code(), Code::DynamodbError | Code::ConnectionFailed),
                    "{fault:?} at {at}: {e}"
                ),
            }
            *kinds.entry(result.is_ok()).or_insert(0) += 1;
            collect(&mut store);
        }
    }
    // One fault at a time is retried away, but for the commits that must
    // not be resent.
    assert!(kinds[&true] > kinds.get(&false).copied().unwrap_or(0));
}

#[test]
fn a_batch_write_survives_any_one_fault_at_any_request() {
    every_request_every_way(Before::Virtual, put_options(WriteMode::Batch));
}

#[test]
fn a_write_over_a_plain_or_absent_item_survives_any_one_fault_as_a_new_version() {
    // An unconditional commit that failed ambiguously over a state that
    // comes back is never followed by a commit of the same version (which
    // could land over a later writer's state, its chunks deleted): the
    // write starts again as a new version, and still succeeds.
    for before in [Before::Plain, Before::Absent] {
        let options = put_options(WriteMode::Batch);
        let (_, _, requests) = overwrite_with_fault(before, &options, usize::MAX, Fault::None);
        for at in 0..requests {
            for fault in Fault::ALL {
                let (result, mut store, _) = overwrite_with_fault(before, &options, at, fault);
                result.unwrap_or_else(|e| panic!("{before:?}, {fault:?} at {at}: {e}"));
                collect(&mut store);
            }
        }
    }
}

#[test]
fn an_atomic_write_survives_any_one_fault_at_any_request() {
    let mut options = put_options(WriteMode::Atomic);
    options.retry.max_attempts = 2;
    every_request_every_way(Before::Virtual, options);
}

#[test]
fn an_optimistic_write_survives_any_one_fault_at_any_request() {
    let mut options = put_options(WriteMode::Batch);
    options.precondition = Some(Precondition::Version(VersionId::new(0, 0)));
    every_request_every_way(Before::Virtual, options);
}

#[test]
fn an_overwrite_commit_that_fails_ambiguously_is_not_resent() {
    // Request 0 reads the parent, 1 and 2 write the chunks, 3 is the
    // unconditional commit: a 500 may have been applied, so the pinned
    // commit goes instead, never the unconditional one again.
    let mut store = Store::new();
    write(
        &mut store,
        &item("a", 1_000_000, 1),
        put_options(WriteMode::Batch),
        1,
    );
    let new = item("a", 900_000, 2);
    let mut put = PutMachine::new(
        PutSource::Item(&new),
        table(),
        put_options(WriteMode::Batch),
        store.env(2),
    );
    let mut seen = Vec::new();
    let mut out = Out::default();
    let Halt::Done(result) = run(&mut put, &mut store, &mut out, &mut |n, request| {
        seen.push(request.clone());
        if n == 3 {
            Fault::ServerError
        } else {
            Fault::None
        }
    }) else {
        panic!()
    };
    let outcome = result.expect("the pinned commit applies");
    let puts: Vec<_> = seen
        .iter()
        .filter_map(|r| match r {
            Request::Put(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(
        puts.len(),
        2,
        "the unconditional commit once, then the pinned one"
    );
    assert!(puts[0].condition.is_none() && puts[0].return_old);
    assert!(puts[1].condition.is_some() && !puts[1].return_old);
    assert_eq!(outcome.mode, WriteKind::Batch);
    assert!(
        outcome.replaced.is_some(),
        "the pinned commit knows what it replaced"
    );
    assert_eq!(
        orphans(&store),
        0,
        "the replaced version's chunks were deleted"
    );
}

#[test]
fn a_failed_precondition_writes_nothing() {
    let mut store = Store::new();
    write(
        &mut store,
        &item("a", 1_000_000, 1),
        put_options(WriteMode::Batch),
        1,
    );
    let mut options = put_options(WriteMode::Batch);
    options.precondition = Some(Precondition::Absent);
    let new = item("a", 900_000, 2);
    let mut put = PutMachine::new(PutSource::Item(&new), table(), options, store.env(2));
    let error = finish(&mut put, &mut store, &mut clean).unwrap_err();
    assert_eq!(error.code(), Code::Conflict);
    assert_eq!(
        store.items(CHUNKS).len(),
        3,
        "only the stored version's chunks"
    );
}

#[test]
fn a_stream_that_fails_midway_leaves_no_chunk() {
    // The host and the driver both delete every chunk a failed stream may
    // have written (the driver used to delete only those whose write it
    // saw succeed).
    for (at, fault) in [
        (2, Fault::ServerError),
        (3, Fault::LostAnswer),
        (usize::MAX, Fault::None),
    ] {
        let mut store = Store::new();
        let mut options = put_options(WriteMode::Batch);
        options.retry.max_attempts = 1;
        let source = PutSource::Stream {
            parent: key("s"),
            attribute: "data".into(),
            len: Some(3_000_000),
        };
        let mut put = PutMachine::new(source, table(), options, store.env(3));
        let mut out = Out::default();
        let mut given = 0;
        let result = loop {
            match run(&mut put, &mut store, &mut out, &mut |n, _| {
                if n == at { fault } else { Fault::None }
            }) {
                Halt::Done(result) => break result,
                Halt::Input(max) => {
                    // The source fails after 2 MB: the executor cancels.
                    if given >= 2_000_000 && at == usize::MAX {
                        put.cancel();
                    } else if given == 3_000_000 {
                        put.end_input();
                    } else {
                        let n = max.min(3_000_000 - given);
                        given += n;
                        put.input(&vec![7; n]);
                    }
                }
                _ => panic!("a put takes no output"),
            }
        };
        let error = result.expect_err("the stream failed");
        assert!(
            matches!(
                error,
                ProtocolError::Request { .. } | ProtocolError::Cancelled
            ),
            "{error}"
        );
        assert_eq!(
            store.items(CHUNKS),
            Vec::<Item>::new(),
            "{fault:?} at {at}: chunks left"
        );
        assert!(store.items(TABLE).is_empty());
    }
}

#[test]
fn a_stream_of_unknown_length_goes_to_s3_only_once_it_reaches_the_threshold() {
    // The table keeps payloads of 64 KiB or more in S3. The stream's
    // pieces are held until they reach it (then S3) or the stream ends
    // short of it (then it is written here, as a stream of that length).
    let mut in_s3 = table();
    let mut objects = dynaslice_core::object::ObjectStore::new("media", "dynaslice/docs/");
    objects.threshold = 64 << 10;
    in_s3.objects = Some(objects);
    for (len, to_s3) in [
        (0, false),
        (40_000, false),
        ((64 << 10) - 1, false),
        (64 << 10, true),
        (200_000, true),
    ] {
        let mut store = Store::new();
        let source = PutSource::Stream {
            parent: key("s"),
            attribute: "data".into(),
            len: None,
        };
        let options = put_options(WriteMode::Batch);
        let mut put = PutMachine::new(source, in_s3.clone(), options, store.env(3));
        let mut out = Out::default();
        let mut given = 0;
        let mut s3_requests = 0;
        // An empty piece first: no piece, not the end.
        put.input(&[]);
        let result = loop {
            let mut watch = |_: usize, request: &Request| {
                if matches!(request, Request::Object(_)) {
                    s3_requests += 1;
                }
                Fault::None
            };
            match run(&mut put, &mut store, &mut out, &mut watch) {
                Halt::Done(result) => break result,
                // In pieces of 10,000 bytes: held across several inputs.
                Halt::Input(max) if given < len => {
                    let n = max.min(len - given).min(10_000);
                    given += n;
                    put.input(&vec![7; n]);
                }
                Halt::Input(_) => put.end_input(),
                _ => panic!("a put takes no output"),
            }
        };
        if to_s3 {
            // This store has no S3: the put tried it, and failed on it.
            assert!(s3_requests > 0, "{len}: no S3 request");
            assert!(result.is_err(), "{len}");
            continue;
        }
        assert_eq!(s3_requests, 0, "{len}: S3 asked");
        result.unwrap_or_else(|e| panic!("{len}: {e}"));
        let back = read(&mut store, &key("s")).unwrap().expect("stored");
        assert_eq!(
            back.get("data"),
            Some(&AttributeValue::B(vec![7; len])),
            "{len}"
        );
    }
    // A cap under the threshold is kept while holding: the put fails one
    // piece past it, and never holds the threshold's worth.
    let mut store = Store::new();
    let source = PutSource::Stream {
        parent: key("capped"),
        attribute: "data".into(),
        len: None,
    };
    let mut options = put_options(WriteMode::Batch);
    options.max_stream_bytes = Some(20_000);
    let mut put = PutMachine::new(source, in_s3.clone(), options, store.env(4));
    let mut out = Out::default();
    let mut given = 0;
    let result = loop {
        match run(&mut put, &mut store, &mut out, &mut clean) {
            Halt::Done(result) => break result,
            Halt::Input(max) if given < 60_000 => {
                let n = max.min(10_000);
                given += n;
                put.input(&vec![7; n]);
            }
            Halt::Input(_) => put.end_input(),
            _ => panic!("a put takes no output"),
        }
    };
    assert!(result.is_err(), "over the cap");
    assert!(given <= 30_000, "took {given} bytes past a cap of 20,000");
    assert!(store.items(TABLE).is_empty());
}

#[test]
fn a_read_goes_back_to_the_parent_only_when_it_moved() {
    let mut store = Store::new();
    let first = item("r", 1_000_000, 1);
    let v1 = write(&mut store, &first, put_options(WriteMode::Batch), 1);
    // A chunk lost while the parent still names its version: CHUNK_MISSING.
    let parent = store.get(TABLE, &key("r")).unwrap().clone();
    let lost =
        dynaslice_core::layout::chunk_key(&table().key, &table().layout, &parent, v1, 1).unwrap();
    store.remove_raw(CHUNKS, &lost);
    assert_eq!(
        read(&mut store, &key("r")).unwrap_err().code(),
        Code::ChunkMissing
    );
}

#[test]
fn a_read_racing_an_overwrite_returns_one_version_whole() {
    let mut store = Store::new();
    let first = item("r", 1_000_000, 1);
    write(&mut store, &first, put_options(WriteMode::Batch), 1);
    let second = item("r", 800_000, 2);
    let mut reader = ReadMachine::new(
        &key("r"),
        table(),
        Sink::Item,
        GetOptions::default(),
        None,
        store.env(5),
    );
    // Step the reader by hand: after its parent read, overwrite the item
    // (its cleanup deletes the chunks the reader is about to ask for).
    let mut pending = Vec::new();
    let mut overwritten = false;
    let result = loop {
        match reader.poll() {
            dynaslice_core::protocol::Step::Send(send) => pending.push(send),
            dynaslice_core::protocol::Step::Work => reader.work(),
            dynaslice_core::protocol::Step::Wait | dynaslice_core::protocol::Step::Sleep(_) => {
                let send = pending.remove(0);
                if matches!(send.request, Request::BatchGet(_)) && !overwritten {
                    overwritten = true;
                    write(&mut store, &second, put_options(WriteMode::Batch), 2);
                }
                let response = store.send(&send.request, Fault::None);
                reader.handle(send.id, response);
            }
            dynaslice_core::protocol::Step::Done(result) => break result,
            _ => panic!("a whole read moves no bytes"),
        }
    };
    let outcome = result.unwrap().unwrap();
    assert_eq!(outcome.item.unwrap(), second);
    assert_eq!(outcome.parent_reads, 2);
}

#[test]
fn a_stream_that_cannot_restart_is_a_conflict_when_overtaken() {
    // Bytes of the first version are out when an overwrite deletes its
    // chunks: the stream cannot start again, and says another writer
    // replaced the item (not that the store lost a chunk).
    use dynaslice_core::protocol::Step;
    let mut store = Store::new();
    write(
        &mut store,
        &item("r", 1_000_000, 1),
        put_options(WriteMode::Batch),
        1,
    );
    let sink = Sink::Attribute {
        name: "data".into(),
        restartable: false,
    };
    let options = GetOptions::default();
    let mut reader = ReadMachine::new(&key("r"), table(), sink, options, Some(1), store.env(5));
    let (mut pending, mut taken, mut overwritten) = (Vec::new(), 0, false);
    let result = loop {
        match reader.poll() {
            Step::Send(send) => pending.push(send),
            Step::Work => reader.work(),
            Step::Output => taken += reader.output().len(),
            Step::Wait | Step::Sleep(_) => {
                let send = pending.remove(0);
                if taken > 0 && !overwritten {
                    overwritten = true;
                    let next = item("r", 1_000_000, 2);
                    write(&mut store, &next, put_options(WriteMode::Batch), 2);
                }
                let response = store.send(&send.request, Fault::None);
                reader.handle(send.id, response);
            }
            Step::Done(result) => break result,
            Step::Restart | Step::Input(_) => panic!("this stream neither restarts nor reads"),
        }
    };
    assert!(overwritten, "the overwrite came after bytes went out");
    assert_eq!(result.unwrap_err().code(), Code::ChunksVanished);
}

#[test]
fn a_delete_survives_any_one_fault_and_a_lost_answer_is_no_conflict() {
    for at in 0..6 {
        for fault in Fault::ALL {
            let mut store = Store::new();
            write(
                &mut store,
                &item("d", 1_000_000, 1),
                put_options(WriteMode::Batch),
                1,
            );
            let mut delete = DeleteMachine::new(&key("d"), table(), retry(), store.env(4));
            let result = finish(&mut delete, &mut store, &mut |n, _| {
                if n == at { fault } else { Fault::None }
            });
            let outcome = result.unwrap_or_else(|e| panic!("{fault:?} at {at}: {e}"));
            assert!(outcome.existed);
            assert!(store.get(TABLE, &key("d")).is_none());
            assert_eq!(outcome.chunks_deleted + outcome.chunks_left, 3);
            collect(&mut store);
        }
    }
}

#[test]
fn gc_deletes_only_old_orphans_and_keeps_what_it_cannot_read() {
    let mut store = Store::new();
    let live = write(
        &mut store,
        &item("live", 1_000_000, 1),
        put_options(WriteMode::Batch),
        1,
    );
    // Orphans: a crashed write's chunks under a live parent and under a
    // missing one, written by a version stamped now.
    for (parent, seed) in [("live", 5u64), ("gone", 6)] {
        let orphan = item(parent, 500_000, seed);
        let env = store.env(seed);
        let options = put_options(WriteMode::Batch);
        let split = dynaslice_core::split_item(
            &orphan,
            &options.split_options(&table(), VersionId::new(env.local_ms, seed as u128)),
        )
        .unwrap();
        for chunk in split.chunks {
            store.put_raw(CHUNKS, chunk);
        }
    }
    // A parent whose manifest cannot be read keeps its chunks.
    let mut damaged = item("bad", 500_000, 7);
    let split = dynaslice_core::split_item(
        &damaged,
        &put_options(WriteMode::Batch)
            .split_options(&table(), VersionId::new(store.now_ms - 10 * 3600 * 1000, 7)),
    )
    .unwrap();
    for chunk in &split.chunks {
        store.put_raw(CHUNKS, chunk.clone());
    }
    damaged = key("bad");
    damaged.insert("_ds".into(), AttributeValue::S("not a manifest".into()));
    store.put_raw(TABLE, damaged);
    // A parent whose manifest claims far more than any reader's limit
    // still protects its chunks: gc reads only its version.
    let huge = item("huge", 500_000, 8);
    let v = write(&mut store, &huge, put_options(WriteMode::Batch), 8);
    let mut parent = store.get(TABLE, &key("huge")).unwrap().clone();
    let mut manifest = Manifest::from_value(&parent["_ds"]).unwrap();
    manifest.codec = dynaslice_core::codec::Codec::Deflate;
    manifest.raw_len = 100 << 30;
    parent.insert("_ds".into(), manifest.to_value());
    store.put_raw(TABLE, parent);
    let orphan_of_huge = dynaslice_core::split_item(
        &item("huge", 500_000, 9),
        &put_options(WriteMode::Batch)
            .split_options(&table(), VersionId::new(store.now_ms - 10 * 3600 * 1000, 9)),
    )
    .unwrap();
    for chunk in orphan_of_huge.chunks {
        store.put_raw(CHUNKS, chunk);
    }
    let _ = v;

    let total = store.items(CHUNKS).len();
    // One item a page: every parent's chunks span pages, and each is read
    // (and an unreadable one reported) once a page.
    store.scan_page = 1;
    let gc = |store: &mut Store, dry_run| {
        let options = GcOptions {
            dry_run,
            every_chunk: true,
            ..GcOptions::default()
        };
        let mut gc = GcMachine::new(table(), options, retry(), store.env(11));
        finish(&mut gc, store, &mut clean).unwrap()
    };
    // Young orphans stay; the old one under "huge" goes: chunk 0, an
    // anchor, with its span, so chunk 1 (on a later page) goes unseen.
    let report = gc(&mut store, false);
    assert_eq!(report.chunks, total - 1);
    assert_eq!(report.unreadable, 2, "{report:?}");
    assert_eq!(report.unreadable_parents.len(), 1);
    assert!(
        report.unreadable_parents[0]
            .1
            .ends_with("[MANIFEST_INVALID]")
    );
    assert_eq!(report.deleted, 1, "{report:?}");
    assert_eq!(store.items(CHUNKS).len(), total - 2);
    assert_eq!(report.young, 4);
    assert_eq!(report.referenced, 3 + 2);
    // Two hours later the young ones go too, and a dry run deletes nothing.
    store.now_ms += 2 * 3600 * 1000;
    let before = store.items(CHUNKS).len();
    let dry = gc(&mut store, true);
    assert_eq!(dry.deleted, 4);
    assert_eq!(store.items(CHUNKS).len(), before);
    let report = gc(&mut store, false);
    assert_eq!(report.deleted, 2, "each chunk 0 with its span");
    assert_eq!(store.items(CHUNKS).len(), before - 4);
    assert_eq!(stored(&store, &key("live")), Some(live));
    committed_versions_whole(&store).unwrap();
}

/// Polls `machine` until it waits, doing its work; returns what it sent.
fn sends_until_wait<M: dynaslice_core::protocol::Machine>(
    machine: &mut M,
) -> Vec<dynaslice_core::protocol::Send> {
    sends_until_idle(machine).0
}

/// Polls `machine` until it waits or sleeps, doing its work; returns what
/// it sent, and the pause it asked for if it sleeps.
fn sends_until_idle<M: dynaslice_core::protocol::Machine>(
    machine: &mut M,
) -> (Vec<dynaslice_core::protocol::Send>, Option<Duration>) {
    let mut sent = Vec::new();
    loop {
        match machine.poll() {
            dynaslice_core::protocol::Step::Send(send) => sent.push(send),
            dynaslice_core::protocol::Step::Work => machine.work(),
            dynaslice_core::protocol::Step::Wait => return (sent, None),
            dynaslice_core::protocol::Step::Sleep(pause) => return (sent, Some(pause)),
            _ => panic!("no bytes move and nothing ends here"),
        }
    }
}

#[test]
fn batch_requests_out_never_pass_the_pace() {
    // 6 MB of chunks, one chunk a batch: 15 batches to send. A write
    // starts with 4 out; each clean answer lets one more (slow start).
    let mut store = Store::new();
    let big = item("p", 6_000_000, 1);
    let mut options = put_options(WriteMode::Batch);
    options.batch_items = 1;
    let mut put = PutMachine::new(PutSource::Item(&big), table(), options, store.env(1));
    let parent = sends_until_wait(&mut put);
    assert_eq!(parent.len(), 1, "the parent read first");
    put.handle(parent[0].id, store.send(&parent[0].request, Fault::None));
    // Chunk 0, an anchor, goes alone: the chunks it covers wait for it.
    let anchor = sends_until_wait(&mut put);
    assert_eq!(anchor.len(), 1, "the anchor alone first");
    put.handle(anchor[0].id, store.send(&anchor[0].request, Fault::None));
    // Its clean answer raised the limit from 4 to 5.
    let mut out = sends_until_wait(&mut put);
    assert_eq!(
        out.len(),
        dynaslice_core::protocol::policy::INITIAL_WRITE_LIMIT + 1
    );
    // One clean answer: the limit grows to 6, so two go out for the one in.
    let first = out.remove(0);
    put.handle(first.id, store.send(&first.request, Fault::None));
    out.extend(sends_until_wait(&mut put));
    assert_eq!(out.len(), 6);
    // A throttle halves it (to 3): nothing goes out while 5 are, and
    // the throttled batch rests, out of the count, for its pause.
    let throttled = out.remove(0);
    put.handle(
        throttled.id,
        store.send(&throttled.request, Fault::Throttle),
    );
    let (resent, pause) = sends_until_idle(&mut put);
    assert!(resent.is_empty(), "nothing while 5 are out");
    let pause = pause.expect("a sleep while the throttled batch rests");
    assert!(pause > Duration::ZERO);
    // The 5 others answer (the limit grows by 1/limit each: 3.33, 3.63,
    // 3.91, 4.16, 4.40; out 4, 3, 2, 2, 3 as each lands): new batches fill
    // its places while it rests, 0, 0, 1, 2 and 1 of them.
    let mut new = Vec::new();
    for send in out.drain(..) {
        put.handle(send.id, store.send(&send.request, Fault::None));
        new.extend(sends_until_wait(&mut put));
    }
    assert_eq!(new.len(), 4);
    assert!(new.iter().all(|s| s.id != throttled.id));
    // Its pause over, it waits for a place, and takes the first one (the
    // limit grows to 4.63: no place after it).
    put.wake(store.now_ms + pause.as_millis() as u64 + 1);
    let (none, pause) = sends_until_idle(&mut put);
    assert!(none.is_empty() && pause.is_none(), "no place yet");
    let first = new.remove(0);
    put.handle(first.id, store.send(&first.request, Fault::None));
    let after = sends_until_wait(&mut put);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, throttled.id);
    assert_eq!(after[0].delay, Duration::ZERO);

    // A read starts with its whole window out: six chunk requests.
    let mut store = Store::new();
    write(&mut store, &big, put_options(WriteMode::Batch), 1);
    let mut read = ReadMachine::new(
        &key("p"),
        table(),
        Sink::Item,
        GetOptions::default(),
        None,
        store.env(2),
    );
    let parent = sends_until_wait(&mut read);
    read.handle(parent[0].id, store.send(&parent[0].request, Fault::None));
    let window = sends_until_wait(&mut read);
    assert_eq!(window.len(), dynaslice_core::protocol::policy::READ_WINDOW);
    assert!(
        window
            .iter()
            .all(|s| matches!(&s.request, Request::BatchGet(g) if g.keys.len() == 1))
    );
}

/// Answers what `machine` sends, cleanly, until a batch of deletes goes
/// out; that one is throttled. Returns it.
fn throttle_first_delete_batch<M: dynaslice_core::protocol::Machine>(
    machine: &mut M,
    store: &mut Store,
) -> dynaslice_core::protocol::Send {
    loop {
        let (sent, _) = sends_until_idle(machine);
        assert!(!sent.is_empty(), "no delete batch went out");
        for send in sent {
            let deletes = matches!(&send.request, Request::BatchWrite(b)
                if b.requests.iter().all(|(_, r)| matches!(r, WriteRequest::Delete(_))));
            if deletes {
                machine.handle(send.id, store.send(&send.request, Fault::Throttle));
                return send;
            }
            machine.handle(send.id, store.send(&send.request, Fault::None));
        }
    }
}

#[test]
fn cancelled_while_deletes_rest_the_chunks_are_reported_left() {
    // A delete whose chunk deletes were throttled and rest before their
    // resend: cancelled then, it reports them left for gc.
    let mut store = Store::new();
    write(
        &mut store,
        &item("d", 1_000_000, 1),
        put_options(WriteMode::Batch),
        1,
    );
    let mut delete = DeleteMachine::new(&key("d"), table(), retry(), store.env(4));
    let throttled = throttle_first_delete_batch(&mut delete, &mut store);
    let (sent, pause) = sends_until_idle(&mut delete);
    assert!(sent.is_empty() && pause.is_some(), "the batch rests");
    delete.cancel();
    let outcome = finish(&mut delete, &mut store, &mut clean).expect("the parent was deleted");
    let Request::BatchWrite(batch) = &throttled.request else {
        unreachable!()
    };
    // The throttled batch held chunks 1 and 2; chunk 0, their anchor,
    // waited for them and is left too.
    assert_eq!(outcome.chunks_deleted, 0);
    assert_eq!(batch.requests.len(), 2);
    assert_eq!(outcome.chunks_left, 3);

    // An overwrite cancelled while its cleanup of the replaced version
    // rests: committed, with the replaced chunks reported left.
    let mut store = Store::new();
    write(
        &mut store,
        &item("p", 1_000_000, 1),
        put_options(WriteMode::Batch),
        1,
    );
    let next = item("p", 1_000_000, 2);
    let mut put = PutMachine::new(
        PutSource::Item(&next),
        table(),
        put_options(WriteMode::Batch),
        store.env(5),
    );
    throttle_first_delete_batch(&mut put, &mut store);
    put.cancel();
    let outcome = finish(&mut put, &mut store, &mut clean).expect("committed");
    assert!(outcome.replaced.is_some());
    assert_eq!(outcome.cleanup_left, 3, "{outcome:?}");
}

#[test]
fn a_read_survives_any_one_fault_at_any_request() {
    // A 2 MB item: the parent, then 5 chunk requests; each answered every
    // way in turn. Every read returns the item whole, or (the one retry
    // policy ran out) a request error; never damaged or wrong bytes.
    let mut store = Store::new();
    let stored = item("r", 2_000_000, 3);
    write(&mut store, &stored, put_options(WriteMode::Batch), 3);
    for sink in [
        Sink::Item,
        Sink::Attribute {
            name: "data".into(),
            restartable: true,
        },
    ] {
        for at in 0..7 {
            for fault in Fault::ALL {
                let options = GetOptions {
                    retry: retry(),
                    ..GetOptions::default()
                };
                let env = store.env(9);
                let mut read =
                    ReadMachine::new(&key("r"), table(), sink.clone(), options, None, env);
                let mut out = Out::default();
                let mut bytes = Vec::new();
                let result = loop {
                    match run(&mut read, &mut store, &mut out, &mut |n, _| {
                        if n == at { fault } else { Fault::None }
                    }) {
                        Halt::Done(result) => break result,
                        Halt::Output => bytes.extend_from_slice(read.output()),
                        Halt::Restart => bytes.clear(),
                        Halt::Input(_) => panic!("a read takes no input"),
                    }
                };
                let outcome = result
                    .unwrap_or_else(|e| panic!("{sink:?}, {fault:?} at {at}: {e}"))
                    .expect("stored");
                match &sink {
                    Sink::Item => assert_eq!(outcome.item.as_ref(), Some(&stored)),
                    Sink::Attribute { .. } => {
                        assert_eq!(Some(&AttributeValue::B(bytes)), stored.get("data"))
                    }
                }
            }
        }
    }
}
