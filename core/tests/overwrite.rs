//! Last writer wins and optimistic locking in plans: which commit is
//! unconditional, what a precondition admits, and what an unconditional
//! commit replaced, read from the old parent its answer returned.

use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::plan::{
    self, Commit, Precondition, WriteRequest, plan_replaced, plan_streamed_commit_as, plan_write_as,
};
use dynaslice_core::plan::{Expect, Target, WriteMode, WriteSteps};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, SplitItem, SplitOptions, VersionId,
    split_item,
};

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S)
}

fn options(version: u128) -> SplitOptions {
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, version));
    options.compression = CodecChoice::Fixed(Compression::NONE);
    options.layout = Layout::default();
    options
}

/// A split of `len` bytes of incompressible-looking data as `version`.
fn split(len: usize, version: u128) -> SplitItem {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("k".into()));
    let body: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    item.insert("body".into(), AttributeValue::B(body));
    split_item(&item, &options(version)).unwrap()
}

fn target(options: &SplitOptions) -> Target<'_> {
    Target::new("docs", "docs_chunks", &options.key, &options.layout)
}

fn deleted_keys(batches: &[plan::BatchWrite]) -> Vec<Item> {
    batches
        .iter()
        .flat_map(|b| b.requests.iter())
        .map(|(table, request)| {
            assert_eq!(table, "docs_chunks");
            match request {
                WriteRequest::Delete(key) => key.clone(),
                WriteRequest::Put(_) => panic!("a cleanup only deletes"),
            }
        })
        .collect()
}

fn chunk_keys(split: &SplitItem) -> Vec<Item> {
    split
        .chunks
        .iter()
        .map(|c| {
            c.iter()
                .filter(|(name, _)| name.as_str() == "pk")
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect()
        })
        .collect()
}

#[test]
fn overwrite_batch_commit_is_unconditional_and_returns_the_old_parent() {
    let (old, new) = (split(1_500_000, 1), split(1_200_000, 2));
    let options = options(2);
    let target = target(&options);
    let expect = Expect::from_stored_at(Some(&old.parent), &target).unwrap();
    let plan = plan_write_as(&new, &target, &expect, WriteMode::Batch, Commit::Overwrite).unwrap();
    let WriteSteps::Batch {
        overwrite, commit, ..
    } = &plan.steps
    else {
        panic!("batch mode")
    };
    let overwrite = overwrite
        .as_ref()
        .expect("last writer wins has an overwrite");
    assert_eq!(overwrite.condition, None);
    assert!(overwrite.return_old);
    assert_eq!(overwrite.item, new.parent);
    // The fallback commit stays pinned to the parent read before the write.
    assert_eq!(commit.condition, expect.condition(&options.key));
    assert!(!commit.return_old);

    let locked =
        plan_write_as(&new, &target, &expect, WriteMode::Batch, Commit::IfExpected).unwrap();
    let WriteSteps::Batch { overwrite, .. } = &locked.steps else {
        panic!("batch mode")
    };
    assert_eq!(*overwrite, None, "optimistic locking never overwrites");
}

#[test]
fn overwrite_single_put_is_unconditional_and_atomic_stays_conditional() {
    let options = options(3);
    let target = target(&options);
    let small = split(2_000, 3);
    let plan = plan_write_as(
        &small,
        &target,
        &Expect::Absent,
        WriteMode::Batch,
        Commit::Overwrite,
    )
    .unwrap();
    let WriteSteps::Single(put) = &plan.steps else {
        panic!("one put")
    };
    assert_eq!((put.condition.is_none(), put.return_old), (true, true));
    assert!(plan.cleanup.is_empty(), "learned from the answer instead");

    let old = split(900_000, 1);
    let expect = Expect::from_stored_at(Some(&old.parent), &target).unwrap();
    let big = split(1_000_000, 3);
    let plan = plan_write_as(&big, &target, &expect, WriteMode::Atomic, Commit::Overwrite).unwrap();
    let WriteSteps::Atomic(transaction) = &plan.steps else {
        panic!("atomic")
    };
    let Some(plan::TransactAction::Put(parent)) = transaction.actions.last() else {
        panic!("the parent last")
    };
    assert_eq!(parent.condition, expect.condition(&options.key));
    assert!(!parent.return_old, "a transaction cannot return values");
    assert_eq!(deleted_keys(&plan.cleanup), chunk_keys(&old));
}

#[test]
fn streamed_commit_follows_the_policy() {
    let options = options(4);
    let target = target(&options);
    let new = split(800_000, 4);
    let plan = plan_streamed_commit_as(&new, &target, &Expect::Absent, Commit::Overwrite).unwrap();
    let WriteSteps::Batch {
        chunks, overwrite, ..
    } = &plan.steps
    else {
        panic!("batch")
    };
    assert!(chunks.is_empty());
    assert!(overwrite.as_ref().is_some_and(|p| p.return_old));
}

#[test]
fn replaced_names_the_old_version_and_deletes_exactly_its_chunks() {
    let options = options(6);
    let target = target(&options);
    let (old, new) = (split(1_700_000, 5), split(600_000, 6));
    let replaced = plan_replaced(Some(&old.parent), &new.parent, &target);
    assert_eq!(replaced.version, old.manifest.as_ref().map(|m| m.version));
    assert_eq!(deleted_keys(&replaced.cleanup), chunk_keys(&old));
    assert_eq!(replaced.left_for_gc, None);

    // Nothing stored, or a plain item: nothing to clean up.
    for stored in [None, Some(&split(100, 9).parent)] {
        let replaced = plan_replaced(stored, &new.parent, &target);
        assert_eq!((replaced.version, replaced.cleanup.len()), (None, 0));
    }
}

#[test]
fn replaced_never_deletes_the_writers_own_chunks() {
    // A resent unsplit commit may return this write's own parent.
    let options = options(7);
    let target = target(&options);
    let ours = split(1_000_000, 7);
    let replaced = plan_replaced(Some(&ours.parent), &ours.parent, &target);
    assert_eq!(replaced.version, None);
    assert!(replaced.cleanup.is_empty());
}

#[test]
fn replaced_leaves_an_unreadable_or_oversized_manifest_to_gc() {
    let options = options(8);
    let target = target(&options);
    let new = split(500_000, 8);
    let mut damaged = split(900_000, 2).parent;
    damaged.insert("_ds".into(), AttributeValue::S("not a manifest".into()));
    let replaced = plan_replaced(Some(&damaged), &new.parent, &target);
    assert!(replaced.cleanup.is_empty());
    assert!(replaced.left_for_gc.is_some());

    let big = split(2_000_000, 3);
    let mut small_limit = target;
    small_limit.max_raw_bytes = 1_000_000;
    let replaced = plan_replaced(Some(&big.parent), &new.parent, &small_limit);
    assert_eq!(replaced.version, big.manifest.as_ref().map(|m| m.version));
    assert!(
        replaced.cleanup.is_empty(),
        "no key built per claimed chunk"
    );
    assert!(matches!(
        replaced.left_for_gc,
        Some(plan::PlanError::OverLimit { .. })
    ));
}

#[test]
fn preconditions_admit_only_what_they_name() {
    let v = VersionId::new(5, 5);
    let version = Expect::Version {
        version: v,
        chunk_count: 3,
        groups: vec![],
        updated: None,
    };
    let other = Expect::Version {
        version: VersionId::new(5, 6),
        chunk_count: 3,
        groups: vec![],
        updated: None,
    };
    assert!(Precondition::Absent.holds(&Expect::Absent));
    assert!(!Precondition::Absent.holds(&version));
    assert!(!Precondition::Absent.holds(&Expect::Plain));
    assert!(Precondition::Version(v).holds(&version));
    assert!(!Precondition::Version(v).holds(&other));
    assert!(!Precondition::Version(v).holds(&Expect::Absent));
    assert!(!Precondition::Version(v).holds(&Expect::Plain));
}
