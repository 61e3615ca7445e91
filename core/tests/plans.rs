//! Write, read and delete plans respect every DynamoDB limit and cover
//! exactly the chunks of the item.

mod common;

use std::collections::BTreeSet;

use common::generate;
use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::plan::{
    self, BatchWrite, MAX_BATCH_GET_BYTES, MAX_BATCH_GET_KEYS, MAX_BATCH_WRITE_BYTES,
    MAX_BATCH_WRITE_ITEMS, MAX_TRANSACT_ACTIONS, MAX_TRANSACT_BYTES, TransactAction, WriteRequest,
};
use dynaslice_core::plan::{Expect, Target, WriteMode, WriteSteps};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, MAX_ITEM_BYTES, SplitItem, SplitOptions,
    VersionId, item_size, split_item,
};
use proptest::prelude::*;

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S)
}

fn split(
    len: usize,
    chunk_item_bytes: usize,
    layout: Layout,
    version: u128,
) -> (SplitItem, SplitOptions) {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("user#1".into()));
    item.insert("sk".into(), AttributeValue::S("doc#7".into()));
    item.insert("body".into(), generate::big_value(version as u64, len, 0));
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, version));
    options.compression = CodecChoice::Fixed(Compression::NONE);
    options.chunk_item_bytes = chunk_item_bytes;
    options.layout = layout;
    (split_item(&item, &options).unwrap(), options)
}

fn target<'a>(options: &'a SplitOptions) -> Target<'a> {
    let chunk_table = match options.layout {
        Layout::ItemCollection => "docs",
        Layout::ChunkTable { .. } => "docs_chunks",
    };
    Target::new("docs", chunk_table, &options.key, &options.layout)
}

/// The key of every chunk, as `(table, key attributes)`.
fn chunk_keys(
    split: &SplitItem,
    target: &Target<'_>,
) -> BTreeSet<(String, Vec<(String, AttributeValue)>)> {
    let key_names: BTreeSet<&str> = match target.layout {
        Layout::ChunkTable { key_name } => [key_name.as_str()].into(),
        Layout::ItemCollection => ["pk", "sk"].into(),
    };
    split
        .chunks
        .iter()
        .map(|c| {
            let key = c.iter().filter(|(n, _)| key_names.contains(n.as_str()));
            (
                target.chunk_table.to_string(),
                key.map(|(n, v)| (n.clone(), v.clone())).collect(),
            )
        })
        .collect()
}

fn request_keys(
    batches: &[BatchWrite],
    target: &Target<'_>,
) -> Vec<(String, Vec<(String, AttributeValue)>)> {
    let key_names: BTreeSet<&str> = match target.layout {
        Layout::ChunkTable { key_name } => [key_name.as_str()].into(),
        Layout::ItemCollection => ["pk", "sk"].into(),
    };
    batches
        .iter()
        .flat_map(|b| &b.requests)
        .map(|(table, request)| {
            let (WriteRequest::Put(item) | WriteRequest::Delete(item)) = request;
            let key = item.iter().filter(|(n, _)| key_names.contains(n.as_str()));
            (
                table.clone(),
                key.map(|(n, v)| (n.clone(), v.clone())).collect(),
            )
        })
        .collect()
}

fn check_batches(batches: &[BatchWrite]) -> Result<(), TestCaseError> {
    for batch in batches {
        prop_assert!(!batch.requests.is_empty());
        prop_assert!(
            batch.requests.len() <= MAX_BATCH_WRITE_ITEMS,
            "{} requests",
            batch.requests.len()
        );
        let bytes: usize = batch.requests.iter().map(|(_, r)| r.size()).sum();
        prop_assert_eq!(bytes, batch.bytes);
        prop_assert!(bytes <= MAX_BATCH_WRITE_BYTES);
    }
    Ok(())
}

fn wcu(size: usize) -> u64 {
    size.div_ceil(1024).max(1) as u64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn write_plans_respect_every_limit(
        len in 420_000usize..6_000_000,
        chunk_item_bytes in prop_oneof![Just(MAX_ITEM_BYTES), 2048usize..MAX_ITEM_BYTES],
        collection in any::<bool>(),
        mode in proptest::sample::select(vec![WriteMode::Auto, WriteMode::Batch, WriteMode::Atomic]),
    ) {
        let layout = if collection { Layout::ItemCollection } else { Layout::default() };
        let (split, options) = split(len, chunk_item_bytes, layout, 1);
        let target = target(&options);
        let previous = Expect::Version { version: VersionId::new(1_763_600_000_000, 99), chunk_count: 7, groups: vec![], updated: None };
        let n = split.chunks.len();
        let bytes: usize = split.chunks.iter().map(item_size).sum::<usize>() + item_size(&split.parent);
        let fits = n < MAX_TRANSACT_ACTIONS && bytes <= MAX_TRANSACT_BYTES;
        let planned = plan::plan_write(&split, &target, &previous, mode);
        if mode == WriteMode::Atomic && !fits {
            prop_assert_eq!(planned.unwrap_err().code(), "ATOMIC_TOO_LARGE");
            return Ok(());
        }
        let plan = planned.unwrap();
        let expected_keys = chunk_keys(&split, &target);
        match &plan.steps {
            WriteSteps::Atomic(transaction) => {
                prop_assert!(fits && mode != WriteMode::Batch);
                prop_assert!(transaction.actions.len() <= MAX_TRANSACT_ACTIONS);
                prop_assert!(transaction.bytes <= MAX_TRANSACT_BYTES);
                let mut seen = BTreeSet::new();
                let mut units = 0;
                for action in &transaction.actions {
                    let TransactAction::Put(put) = action else { panic!("only puts") };
                    prop_assert!(seen.insert((put.table.clone(), put.item.clone())), "two actions on one item");
                    units += 2 * wcu(item_size(&put.item));
                }
                prop_assert_eq!(seen.len(), n + 1);
                prop_assert_eq!(plan.write_units(), units);
            }
            WriteSteps::Batch { chunks, overwrite, commit, abort } => {
                prop_assert!(overwrite.is_none(), "plan_write locks: no unconditional commit");
                prop_assert!(mode == WriteMode::Batch || !fits);
                check_batches(chunks)?;
                check_batches(abort)?;
                let written = request_keys(chunks, &target);
                prop_assert_eq!(written.len(), n, "every chunk written once");
                prop_assert_eq!(written.into_iter().collect::<BTreeSet<_>>(), expected_keys.clone());
                prop_assert_eq!(request_keys(abort, &target).into_iter().collect::<BTreeSet<_>>(), expected_keys.clone());
                prop_assert_eq!(&commit.item, &split.parent);
                let condition = commit.condition.as_ref().unwrap();
                prop_assert_eq!(condition.expression.as_str(), "#m.#v = :v AND attribute_not_exists(#m.#u)");
                let units: u64 = split.chunks.iter().map(|c| wcu(item_size(c))).sum::<u64>() + wcu(item_size(&split.parent));
                prop_assert_eq!(plan.write_units(), units);
            }
            WriteSteps::Single(_) => prop_assert!(false, "a split item is never a single put"),
        }
        // Cleanup deletes exactly the seven chunks of the replaced version.
        check_batches(&plan.cleanup)?;
        let cleanup = request_keys(&plan.cleanup, &target);
        prop_assert_eq!(cleanup.len(), 7);
        prop_assert!(cleanup.iter().all(|k| !expected_keys.contains(k)), "cleanup never deletes new chunks");
    }

    #[test]
    fn read_and_delete_plans_cover_exactly_the_chunks(
        len in 420_000usize..20_000_000,
        chunk_item_bytes in prop_oneof![Just(MAX_ITEM_BYTES), 2048usize..MAX_ITEM_BYTES],
        collection in any::<bool>(),
    ) {
        let layout = if collection { Layout::ItemCollection } else { Layout::default() };
        let (split, options) = split(len, chunk_item_bytes, layout, 2);
        let target = target(&options);
        let expected_keys = chunk_keys(&split, &target);
        let read = plan::plan_read(&split.parent, &target, true).unwrap();
        let mut keys = BTreeSet::new();
        let mut expected_half_units = 0;
        let sizes: std::collections::BTreeMap<_, _> = split.chunks.iter().map(|c| {
            let key: Vec<_> = c.iter().filter(|(n, _)| !n.starts_with('_')).map(|(n, v)| (n.clone(), v.clone())).collect();
            (key, item_size(c))
        }).collect();
        for batch in &read.batches {
            prop_assert!(batch.consistent);
            prop_assert!(batch.keys.len() <= MAX_BATCH_GET_KEYS);
            prop_assert!(batch.expected_bytes <= MAX_BATCH_GET_BYTES);
            let mut bytes = 0;
            for key in &batch.keys {
                let key: Vec<_> = key.iter().map(|(n, v)| (n.clone(), v.clone())).collect();
                let size = sizes[&key];
                bytes += size;
                expected_half_units += 2 * size.div_ceil(4096) as u64;
                prop_assert!(keys.insert((batch.table.clone(), key)), "a key read twice");
            }
            prop_assert_eq!(bytes, batch.expected_bytes, "expected bytes are exact");
        }
        prop_assert_eq!(&keys, &expected_keys);
        prop_assert_eq!(read.read_units(), expected_half_units as f64 / 2.0);

        let delete = plan::plan_delete(&split.parent, &target).unwrap();
        prop_assert_eq!(delete.parent.table.as_str(), "docs");
        prop_assert_eq!(delete.parent.key.len(), 2);
        prop_assert_eq!(delete.parent.condition.as_ref().unwrap().expression.as_str(), "#m.#v = :v AND attribute_not_exists(#m.#u)");
        check_batches(&delete.chunks)?;
        let deleted = request_keys(&delete.chunks, &target);
        prop_assert_eq!(deleted.len(), split.chunks.len());
        prop_assert_eq!(deleted.into_iter().collect::<BTreeSet<_>>(), expected_keys);
    }
}

#[test]
fn full_chunks_are_read_forty_to_a_request() {
    // 16 MiB / 409,600 bytes = 40.96: a BatchGetItem of full chunks holds 40.
    let (split, options) = split(20_000_000, MAX_ITEM_BYTES, Layout::default(), 3);
    let target = target(&options);
    let read = plan::plan_read(&split.parent, &target, false).unwrap();
    let counts: Vec<usize> = read.batches.iter().map(|b| b.keys.len()).collect();
    assert_eq!(split.chunks.len(), 49);
    assert_eq!(counts, [40, 9]);
}

#[test]
fn conditions_name_the_expected_state() {
    let schema = schema();
    let absent = Expect::Absent.condition(&schema).unwrap();
    assert_eq!(absent.expression, "attribute_not_exists(#k)");
    assert_eq!(absent.names["#k"], "pk");
    let plain = Expect::Plain.condition(&schema).unwrap();
    assert_eq!(
        plain.expression,
        "attribute_exists(#k) AND attribute_not_exists(#m)"
    );
    assert_eq!(plain.names["#m"], "_ds");
    let version = VersionId::new(1_763_683_200_000, 5);
    let versioned = Expect::Version {
        version,
        chunk_count: 1,
        groups: vec![],
        updated: None,
    }
    .condition(&schema)
    .unwrap();
    assert_eq!(versioned.names["#m"], "_ds");
    assert_eq!(versioned.names["#v"], "v");
    assert_eq!(versioned.values[":v"], AttributeValue::S(version.to_text()));
    assert!(Expect::Any.condition(&schema).is_none());

    let (split, options) = split(1_000_000, MAX_ITEM_BYTES, Layout::default(), 4);
    assert_eq!(Expect::from_stored(None).unwrap(), Expect::Absent);
    let stored = Expect::from_stored(Some(&split.parent)).unwrap();
    assert_eq!(
        stored,
        Expect::Version {
            version: options.version,
            chunk_count: split.chunks.len() as u32,
            groups: vec![],
            updated: None,
        }
    );
    let plain_item: Item = options.key.key_of(&split.parent);
    assert_eq!(
        Expect::from_stored(Some(&plain_item)).unwrap(),
        Expect::Plain
    );
}

#[test]
fn small_items_are_one_conditional_put() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("a".into()));
    item.insert("sk".into(), AttributeValue::S("b".into()));
    item.insert("n".into(), AttributeValue::N("1.5".into()));
    let options = SplitOptions::new(schema(), VersionId::new(1, 1));
    let split = split_item(&item, &options).unwrap();
    let plan =
        plan::plan_write(&split, &target(&options), &Expect::Absent, WriteMode::Auto).unwrap();
    let WriteSteps::Single(put) = &plan.steps else {
        panic!("expected a single put")
    };
    assert_eq!(put.item, item);
    assert_eq!(put.table, "docs");
    assert_eq!(plan.write_units(), 1);
}

#[test]
fn smaller_batches_keep_order_and_every_limit() {
    let (split, options) = split(3_000_000, 50_000, Layout::default(), 77);
    let plan =
        plan::plan_write(&split, &target(&options), &Expect::Absent, WriteMode::Batch).unwrap();
    let WriteSteps::Batch { chunks, .. } = plan.steps else {
        panic!("batch mode")
    };
    let requests: Vec<_> = chunks.into_iter().flat_map(|b| b.requests).collect();
    for max in [0, 1, 5, 7, 25, 1000] {
        let batches = plan::pack_batch_writes_by(requests.clone(), max);
        check_batches(&batches).unwrap();
        let cap = max.clamp(1, MAX_BATCH_WRITE_ITEMS);
        assert!(batches.iter().all(|b| b.requests.len() <= cap), "max {max}");
        // Full batches before the last one: nothing is split needlessly.
        assert!(
            batches[..batches.len() - 1]
                .iter()
                .all(|b| b.requests.len() == cap)
        );
        let again: Vec<_> = batches.into_iter().flat_map(|b| b.requests).collect();
        assert_eq!(again, requests, "max {max}: order and content kept");
    }
}

#[test]
fn interleaving_alternates_between_items() {
    let plans: Vec<_> = (0..3)
        .map(|i| {
            let (split, options) = split(
                2_000_000 + i * 400_000,
                20_000,
                Layout::default(),
                10 + i as u128,
            );
            plan::plan_write(&split, &target(&options), &Expect::Absent, WriteMode::Batch).unwrap()
        })
        .collect();
    let batches = plan::interleave_chunk_writes(&plans);
    check_batches(&batches).unwrap();
    let owner = |request: &WriteRequest| match request {
        WriteRequest::Put(item) => match &item["pk"] {
            AttributeValue::S(key) => key.rsplit('#').nth(1).unwrap().to_string(),
            _ => unreachable!(),
        },
        WriteRequest::Delete(_) => unreachable!(),
    };
    let order: Vec<String> = batches
        .iter()
        .flat_map(|b| b.requests.iter().map(|(_, r)| owner(r)))
        .collect();
    let total: usize = plans
        .iter()
        .map(|p| match &p.steps {
            WriteSteps::Batch { chunks, .. } => {
                chunks.iter().map(|b| b.requests.len()).sum::<usize>()
            }
            _ => 0,
        })
        .sum();
    assert_eq!(order.len(), total);
    // While all three items have chunks left, consecutive writes never hit the same item.
    let shortest = 2_000_000 / 20_000;
    assert!(order[..3 * shortest].windows(2).all(|w| w[0] != w[1]));
}

#[test]
fn plans_refuse_a_stored_item_of_another_layout_or_a_reused_version() {
    let (split, options) = split(1_000_000, MAX_ITEM_BYTES, Layout::default(), 20);
    let collection = Layout::ItemCollection;
    let elsewhere = Target {
        layout: &collection,
        ..target(&options)
    };
    assert_eq!(
        plan::plan_read(&split.parent, &elsewhere, true)
            .unwrap_err()
            .code(),
        "LAYOUT_MISMATCH"
    );
    assert_eq!(
        plan::plan_delete(&split.parent, &elsewhere)
            .unwrap_err()
            .code(),
        "LAYOUT_MISMATCH"
    );
    assert_eq!(
        Expect::from_stored_at(Some(&split.parent), &elsewhere)
            .unwrap_err()
            .code(),
        "LAYOUT_MISMATCH"
    );

    let same = Expect::Version {
        version: options.version,
        chunk_count: split.chunks.len() as u32,
        groups: vec![],
        updated: None,
    };
    let err = plan::plan_write(&split, &target(&options), &same, WriteMode::Auto).unwrap_err();
    assert_eq!(err.code(), "VERSION_REUSED");
}
