//! Version history: a commit keeps the version it replaces as retention
//! says, each kept version reads back exactly as it was written, what
//! retention releases is deleted (by the commit, or by gc once it ages
//! out), and gc never deletes a kept version's chunks.

use dynaslice_core::history::{History, Retention};
use dynaslice_core::layout::parse_chunk_key;
use dynaslice_core::manifest::stored_version;
use dynaslice_core::plan::WriteMode;
use dynaslice_core::protocol::{
    GetOptions, Machine, ProtocolError, PutMachine, PutOptions, PutSource, ReadMachine, Request,
    Sink, Step,
};
use dynaslice_core::{AttributeValue, Code, Item, VersionId};

use crate::scripted::{collect, item, key, put_options, retry};
use crate::sim::{CHUNKS, Fault, Store, TABLE, clean, committed_versions_whole, finish, table};

const HOUR_MS: u64 = 3600 * 1000;

fn keeping(keep: u32, max_age_ms: Option<u64>) -> PutOptions {
    PutOptions {
        history: Some(Retention { keep, max_age_ms }),
        ..put_options(WriteMode::Batch)
    }
}

/// Writes `item`, a minute after the last write; its version id.
fn write(store: &mut Store, item: &Item, options: PutOptions) -> Option<VersionId> {
    store.now_ms += 60_000;
    let mut put = PutMachine::new(PutSource::Item(item), table(), options, store.env(3));
    finish(&mut put, store, &mut clean)
        .expect("a clean write")
        .manifest
        .map(|m| m.version)
}

fn read_version(store: &mut Store, version: VersionId) -> Result<Option<Item>, ProtocolError> {
    let options = GetOptions {
        retry: retry(),
        version: Some(version),
        ..GetOptions::default()
    };
    let mut read = ReadMachine::new(&key("k"), table(), Sink::Item, options, None, store.env(9));
    Ok(finish(&mut read, store, &mut clean)?.and_then(|o| o.item))
}

fn history(store: &Store) -> Option<History> {
    History::of_parent(store.get(TABLE, &key("k")).expect("a parent")).expect("a history")
}

fn kept_versions(store: &Store) -> Vec<VersionId> {
    history(store).map_or_else(Vec::new, |h| {
        h.kept(store.now_ms).map(|e| e.version).collect()
    })
}

/// The versions some chunk item (or record) in the chunk table belongs to.
fn stored_versions(store: &Store) -> Vec<VersionId> {
    let mut versions: Vec<VersionId> = store
        .items(CHUNKS)
        .iter()
        .map(|c| {
            parse_chunk_key(&table().key, &table().layout, c)
                .unwrap()
                .version
        })
        .collect();
    versions.sort();
    versions.dedup();
    versions
}

#[test]
fn keeping_three_lists_three_each_whole_and_releases_the_rest() {
    let mut store = Store::new();
    // Sizes that make every kind of version: chunks, an inline payload,
    // and an item that fits whole (split anyway: it keeps the list).
    let sizes = [700_000, 300_000, 200, 1_300_000, 5_000, 900_000];
    let items: Vec<Item> = (0..6).map(|n| item("k", sizes[n], n as u64)).collect();
    let versions: Vec<VersionId> = items
        .iter()
        .map(|item| write(&mut store, item, keeping(3, None)).expect("split: it keeps history"))
        .collect();
    // Five overwrites: the three newest replaced versions are kept.
    assert_eq!(
        kept_versions(&store),
        vec![versions[4], versions[3], versions[2]]
    );
    for n in [2, 3, 4] {
        assert_eq!(
            read_version(&mut store, versions[n]).unwrap().as_ref(),
            Some(&items[n])
        );
    }
    assert_eq!(
        read_version(&mut store, versions[5]).unwrap().as_ref(),
        Some(&items[5])
    );
    for n in [0, 1] {
        let error = read_version(&mut store, versions[n]).unwrap_err();
        assert_eq!(error.code(), Code::VersionNotFound, "{error}");
    }
    // The commit deleted what it released: chunks and records of 0 and 1.
    let mut live = versions[2..].to_vec();
    live.sort();
    assert_eq!(stored_versions(&store), live);
    committed_versions_whole(&store).unwrap();
    // gc keeps every kept version's chunks (collect asserts no orphan).
    let before = store.items(CHUNKS).len();
    collect(&mut store);
    assert_eq!(store.items(CHUNKS).len(), before);
    for n in [2, 3, 4] {
        assert_eq!(
            read_version(&mut store, versions[n]).unwrap().as_ref(),
            Some(&items[n])
        );
    }
}

#[test]
fn a_write_that_says_nothing_keeps_as_the_item_keeps_and_keep_zero_turns_it_off() {
    let mut store = Store::new();
    let a = item("k", 700_000, 1);
    let b = item("k", 700_000, 2);
    let c = item("k", 700_000, 3);
    let va = write(&mut store, &a, keeping(2, None)).unwrap();
    let vb = write(&mut store, &b, put_options(WriteMode::Batch)).unwrap();
    write(&mut store, &c, put_options(WriteMode::Auto)).unwrap();
    assert_eq!(kept_versions(&store), vec![vb, va]);
    assert_eq!(read_version(&mut store, va).unwrap(), Some(a.clone()));
    // Off: the commit releases every kept version and the one it replaces.
    let vd = write(&mut store, &item("k", 700_000, 4), keeping(0, None)).unwrap();
    assert!(history(&store).is_none());
    assert_eq!(stored_versions(&store), vec![vd]);
    // And the next write replaces as any other.
    let ve = write(
        &mut store,
        &item("k", 700_000, 5),
        put_options(WriteMode::Batch),
    )
    .unwrap();
    assert_eq!(stored_versions(&store), vec![ve]);
}

#[test]
fn versions_younger_than_the_age_are_kept_and_gc_deletes_them_once_they_age_out() {
    let mut store = Store::new();
    let options = keeping(0, Some(HOUR_MS));
    let versions: Vec<VersionId> = (0..3)
        .map(|n| write(&mut store, &item("k", 700_000, n), options.clone()).unwrap())
        .collect();
    assert_eq!(kept_versions(&store), vec![versions[1], versions[0]]);
    // Two hours on, nothing is kept any more; gc (which `collect` runs two
    // hours later still) deletes both versions' chunks and records.
    store.now_ms += HOUR_MS;
    collect(&mut store);
    assert!(kept_versions(&store).is_empty());
    assert_eq!(stored_versions(&store), vec![versions[2]]);
    let error = read_version(&mut store, versions[0]).unwrap_err();
    assert_eq!(error.code(), Code::VersionNotFound);
}

#[test]
fn a_write_racing_a_history_write_is_kept_and_the_history_write_wins() {
    let mut store = Store::new();
    let first = item("k", 700_000, 1);
    let v1 = write(&mut store, &first, keeping(5, None)).unwrap();
    let racer = item("k", 1_300_000, 2);
    let ours = item("k", 700_000, 3);
    let mut put = PutMachine::new(
        PutSource::Item(&ours),
        table(),
        put_options(WriteMode::Batch),
        store.env(4),
    );
    let mut racer_version = None;
    let outcome = loop {
        match put.poll() {
            Step::Send(send) => {
                // Just before the history write's commit, another writer
                // commits: the pinned commit fails, and the write starts
                // again over the newer parent.
                if let Request::Put(p) = &send.request
                    && p.table == TABLE
                    && racer_version.is_none()
                {
                    racer_version = write(&mut store, &racer, put_options(WriteMode::Batch));
                }
                let answer = store.send(&send.request, Fault::None);
                put.handle(send.id, answer);
            }
            Step::Work => put.work(),
            Step::Wait => store.now_ms += 5,
            Step::Done(result) => break result.unwrap(),
            other => panic!("unexpected {other:?}"),
        }
    };
    let racer_version = racer_version.expect("the racer wrote");
    let current = stored_version(store.get(TABLE, &key("k")).unwrap()).unwrap();
    assert_eq!(
        current,
        outcome.manifest.map(|m| m.version),
        "last writer wins"
    );
    assert_eq!(kept_versions(&store), vec![racer_version, v1]);
    assert_eq!(
        read_version(&mut store, racer_version).unwrap(),
        Some(racer)
    );
    assert_eq!(read_version(&mut store, v1).unwrap(), Some(first));
    committed_versions_whole(&store).unwrap();
    // The first attempt's chunks went with the cleanup: nothing is left
    // that no parent refers to or keeps.
    assert_eq!(crate::sim::orphans(&store), 0);
}

#[test]
fn a_damaged_record_is_refused_and_a_record_of_another_version_too() {
    let mut store = Store::new();
    let a = item("k", 700_000, 1);
    let b = item("k", 700_000, 2);
    let va = write(&mut store, &a, keeping(3, None)).unwrap();
    let vb = write(&mut store, &b, keeping(3, None)).unwrap();
    write(&mut store, &item("k", 700_000, 3), keeping(3, None)).unwrap();
    let record_of = |store: &Store, version| {
        let parent = store.get(TABLE, &key("k")).unwrap();
        let key = dynaslice_core::history::record_key(&table(), parent, version).unwrap();
        store.get(CHUNKS, &key).unwrap().clone()
    };
    // A flipped byte in a's record.
    let mut record = record_of(&store, va);
    if let Some(AttributeValue::B(data)) = record.get_mut("_d") {
        data[10] ^= 1;
    }
    store.put_raw(CHUNKS, record);
    let error = read_version(&mut store, va).unwrap_err();
    assert_eq!(error.code(), Code::HistoryRecordInvalid, "{error}");
    // b's record copied over a's key: its digest is seeded by b's version.
    let mut moved = record_of(&store, vb);
    let parent = store.get(TABLE, &key("k")).unwrap().clone();
    let key_a = dynaslice_core::history::record_key(&table(), &parent, va).unwrap();
    moved.extend(key_a);
    store.put_raw(CHUNKS, moved);
    let error = read_version(&mut store, va).unwrap_err();
    assert_eq!(error.code(), Code::HistoryRecordInvalid, "{error}");
    assert_eq!(read_version(&mut store, vb).unwrap(), Some(b));
}

#[test]
fn a_list_someone_else_wrote_claiming_huge_versions_costs_a_commit_nothing() {
    let mut store = Store::new();
    write(&mut store, &item("k", 700_000, 1), keeping(3, None)).unwrap();
    // A hundred entries, each claiming 60,000 chunks, planted on the parent.
    let mut parent = store.get(TABLE, &key("k")).unwrap().clone();
    let entries = (0..100u128)
        .map(|n| dynaslice_core::history::Entry {
            version: VersionId::new(store.now_ms - 1000, n),
            replaced_ms: store.now_ms - 1000,
            chunk_count: 60_000,
            bytes: 1,
            note: None,
            groups: Vec::new(),
        })
        .collect();
    let planted = History {
        retention: Retention {
            keep: 100,
            max_age_ms: None,
        },
        entries,
    };
    if let Some(AttributeValue::M(manifest)) = parent.get_mut("_ds") {
        manifest.insert("y".into(), planted.to_value());
    }
    store.put_raw(TABLE, parent);
    // Keeping one releases them all: the commit deletes none of their
    // 6 million claimed chunks (gc judges what exists), and is quick.
    let mut sent = 0;
    let next = item("k", 700_000, 2);
    store.now_ms += 60_000;
    let mut put = PutMachine::new(
        PutSource::Item(&next),
        table(),
        keeping(1, None),
        store.env(8),
    );
    finish(&mut put, &mut store, &mut |_, _| {
        sent += 1;
        Fault::None
    })
    .unwrap();
    assert!(sent < 20, "{sent} requests");
    assert_eq!(kept_versions(&store).len(), 1);
}

#[test]
fn an_upload_stored_whole_over_an_item_that_keeps_history_is_split_and_keeps_it() {
    let mut store = Store::new();
    let first = item("k", 700_000, 1);
    let v1 = write(&mut store, &first, keeping(2, None)).unwrap();
    // An upload of an item that fits whole (no manifest), as the page
    // posts one, from a writer that knows nothing of history.
    let small = item("k", 2_000, 2);
    let upload = dynaslice_core::SplitItem {
        parent: small.clone(),
        chunks: Vec::new(),
        manifest: None,
    };
    store.now_ms += 60_000;
    let mut put = PutMachine::new(
        PutSource::Upload(upload),
        table(),
        put_options(WriteMode::Batch),
        store.env(6),
    );
    let outcome = finish(&mut put, &mut store, &mut clean).unwrap();
    assert!(outcome.manifest.is_some(), "split, to carry the list");
    assert_eq!(kept_versions(&store), vec![v1]);
    assert_eq!(read_version(&mut store, v1).unwrap(), Some(first));
    assert_eq!(
        crate::scripted::read(&mut store, &key("k")).unwrap(),
        Some(small)
    );
}
