//! What a write costs in each mode, side by side, so a caller can see the
//! price of asking for a transaction before choosing it.

use alloc::vec;
use alloc::vec::Vec;

use super::{MAX_TRANSACT_ACTIONS, MAX_TRANSACT_BYTES, PlanError, Target, WriteMode};
use crate::capacity::write_units;
use crate::layout::{chunk_key, is_anchor};
use crate::manifest::{ANCHOR_ATTRIBUTE, CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE};
use crate::size::item_size;
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::split::SplitItem;

/// Write capacity units of one split item, in batch mode and in atomic
/// mode (cleanup of a replaced version not included: it is the same in
/// both, and billed by sizes the plan does not know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteCosts {
    /// Chunks by BatchWriteItem, then the parent by PutItem.
    pub batch: u64,
    /// Chunks and parent in one TransactWriteItems, where every write is
    /// billed twice; `None` when the item does not fit one transaction
    /// (100 actions, 4 MB). An item stored whole costs the same in both.
    pub atomic: Option<u64>,
}

impl WriteCosts {
    /// Each mode's cost, named by its mode (`None`: the mode cannot write
    /// the item): how results report them.
    pub fn by_mode(&self) -> [(WriteMode, Option<u64>); 2] {
        [
            (WriteMode::Batch, Some(self.batch)),
            (WriteMode::Atomic, self.atomic),
        ]
    }
}

/// The write units `item`'s entry in the anchors index costs when it is
/// written: one for an anchor (two in a transaction) on a table with the
/// index (`anchors_indexed`), else none.
pub fn index_entry_units(item: &Item, anchors_indexed: bool, transactional: bool) -> u64 {
    match anchors_indexed && item.contains_key(ANCHOR_ATTRIBUTE) {
        true => 1 + u64::from(transactional),
        false => 0,
    }
}

/// [`index_entry_units`] of all `split`'s chunks.
pub(super) fn index_units(split: &SplitItem, anchors_indexed: bool, transactional: bool) -> u64 {
    let units = |c| index_entry_units(c, anchors_indexed, transactional);
    split.chunks.iter().map(units).sum()
}

/// The costs of writing `split` (what [`super::plan_write`]'s plan in each
/// mode reports as its `write_units`) to a table without the anchors index.
pub fn write_costs(split: &SplitItem) -> WriteCosts {
    write_costs_to(split, false)
}

/// [`write_costs`] to a table with the anchors index when `anchors_indexed`
/// ([`Target::anchors_indexed`]): each anchor's entry costs one more unit,
/// two in a transaction.
pub fn write_costs_to(split: &SplitItem, anchors_indexed: bool) -> WriteCosts {
    let parent = item_size(&split.parent);
    if split.chunks.is_empty() {
        let units = write_units(parent, false);
        return WriteCosts {
            batch: units,
            atomic: Some(units),
        };
    }
    let sizes = || split.chunks.iter().map(item_size).chain([parent]);
    let units = |transactional| {
        let entries = index_units(split, anchors_indexed, transactional);
        sizes().map(|s| write_units(s, transactional)).sum::<u64>() + entries
    };
    let fits =
        split.chunks.len() < MAX_TRANSACT_ACTIONS && sizes().sum::<usize>() <= MAX_TRANSACT_BYTES;
    WriteCosts {
        batch: units(false),
        atomic: fits.then(|| units(true)),
    }
}

/// The write units an overwrite of `stored` (the parent as read, `None`
/// when nothing is stored) costs on top of writing a new item whose parent
/// is `new_parent` bytes: DynamoDB bills the commit (a PutItem, or a
/// transaction's put when `transactional`) by the larger of the old and the
/// new parent, and each delete of a replaced chunk (after the commit, by
/// BatchWriteItem in every mode) by that chunk's size: its key, digest,
/// data, an anchor's mark and, with `ttl`, the TTL attribute it carries;
/// an anchor's delete also costs its entry in the anchors index when the
/// target has one (an older writer's anchor, unmarked, costs less: this
/// errs high). Writes to the table's own secondary indexes are not
/// counted. A stored manifest beyond `target`'s limits costs no cleanup:
/// the write leaves those chunks to `gc`.
pub fn replace_write_units(
    stored: Option<&Item>,
    new_parent: usize,
    target: &Target<'_>,
    ttl: Option<&str>,
    transactional: bool,
) -> Result<u64, PlanError> {
    replace_write_units_sparing(stored, new_parent, target, ttl, transactional, &[])
}

/// [`replace_write_units`] for a new version that reuses the frames
/// `spared` (groups an update carries): their chunks are not deleted.
pub(crate) fn replace_write_units_sparing(
    stored: Option<&Item>,
    new_parent: usize,
    target: &Target<'_>,
    ttl: Option<&str>,
    transactional: bool,
    spared: &[VersionId],
) -> Result<u64, PlanError> {
    let Some(stored) = stored else {
        return Ok(0);
    };
    let old_parent = item_size(stored);
    let parent = write_units(old_parent.max(new_parent), transactional)
        - write_units(new_parent, transactional);
    let manifest = match target.read_manifest(stored) {
        Ok(Some(manifest)) if manifest.total_chunks() > 0 => manifest,
        Ok(_) | Err(PlanError::OverLimit { .. } | PlanError::TooManyChunks { .. }) => {
            return Ok(parent);
        }
        Err(e) => return Err(e),
    };
    // Chunk keys have fixed-width sequence numbers: one size for all.
    let mut empty = chunk_key(target.key, target.layout, stored, manifest.version, 0)?;
    empty.insert(CHUNK_DIGEST_ATTRIBUTE.into(), AttributeValue::B(vec![0; 8]));
    empty.insert(CHUNK_DATA_ATTRIBUTE.into(), AttributeValue::B(Vec::new()));
    if let Some(name) = ttl
        && let Some(value @ AttributeValue::N(_)) = stored.get(name)
    {
        empty.insert(name.into(), value.clone());
    }
    let overhead = item_size(&empty) as u64;
    let mark = (ANCHOR_ATTRIBUTE.len() + 8) as u64;
    let delete = |seq: u32, len: u64| match is_anchor(seq) {
        true => {
            write_units((overhead + mark + len) as usize, false) + u64::from(target.anchors_indexed)
        }
        false => write_units((overhead + len) as usize, false),
    };
    // Every frame's chunks: a group's id is as long as a version's.
    let cleanup: u64 = manifest
        .frames()
        .filter(|f| !spared.contains(&f.version))
        .flat_map(|f| (0..f.chunk_count).map(move |seq| (seq, f.chunk_len(seq))))
        .map(|(seq, len)| delete(seq, len))
        .sum();
    Ok(parent + cleanup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::plan::{Expect, Target, WriteMode, plan_write};
    use crate::{AttributeValue, Item, KeySchema, KeyType, SplitOptions, VersionId};
    use crate::{CodecChoice, split_item};
    use alloc::vec::Vec;

    fn split(len: usize) -> SplitItem {
        let key = KeySchema::partition("pk", KeyType::S);
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("a".into()));
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7919 % 251) as u8).collect();
        item.insert("data".into(), AttributeValue::B(bytes));
        let mut options = SplitOptions::new(key, VersionId::new(1_763_683_200_000, 7));
        options.compression = CodecChoice::Fixed(crate::codec::Compression::NONE);
        split_item(&item, &options).unwrap()
    }

    /// Each mode's cost is what that mode's plan reports, and a transaction
    /// bills every write twice.
    #[test]
    fn equal_to_each_plans_units() {
        let key = KeySchema::partition("pk", KeyType::S);
        let layout = Layout::default();
        let target = Target::new("t", "t-chunks", &key, &layout);
        for len in [10, 300_000, 1_000_000, 3_000_000, 5_000_000] {
            let split = split(len);
            let costs = write_costs(&split);
            let batch = plan_write(&split, &target, &Expect::Absent, WriteMode::Batch).unwrap();
            assert_eq!(costs.batch, batch.write_units(), "{len} bytes");
            match plan_write(&split, &target, &Expect::Absent, WriteMode::Atomic) {
                Ok(atomic) => assert_eq!(costs.atomic, Some(atomic.write_units()), "{len} bytes"),
                Err(_) => assert_eq!(costs.atomic, None, "{len} bytes"),
            }
            if !split.chunks.is_empty() && costs.atomic.is_some() {
                assert_eq!(costs.atomic, Some(2 * costs.batch));
            }
        }
        // 1 MB of incompressible bytes: three chunks and a parent, about
        // 1,000 KB of writes in all (each item rounded up to 1 KB).
        let costs = write_costs(&split(1_000_000));
        assert!((977..=990).contains(&costs.batch), "{costs:?}");
        // 5 MB does not fit a 4 MB transaction.
        assert_eq!(write_costs(&split(5_000_000)).atomic, None);
    }
}
