//! Read plans: the parent by a consistent GetItem, then the chunks by exact
//! keys in BatchGetItem groups (never a Query, whose pages vary by server).

use alloc::string::ToString;
use alloc::vec::Vec;

use super::ops::{BatchGet, Get, MAX_BATCH_GET_BYTES, MAX_BATCH_GET_KEYS};
use super::{PlanError, Target};
use crate::capacity::{ReadConsistency, read_half_units};
use crate::layout::{chunk_key, is_anchor};
use crate::manifest::{ANCHOR_ATTRIBUTE, CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, Manifest};
use crate::size::{attribute_size, item_size};
use crate::value::{AttributeValue, Item};

/// The first read of any item: its parent, strongly consistent, so a reader
/// never sees a parent older than a committed write.
pub fn parent_get(target: &Target<'_>, key: &Item) -> Get {
    Get {
        table: target.table.to_string(),
        key: target.key.key_of(key),
        consistent: true,
    }
}

/// The chunk reads of a virtual item.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadPlan {
    /// The parent's manifest, if it has one.
    pub manifest: Option<Manifest>,
    /// BatchGetItem requests for every chunk (any order, in parallel).
    pub batches: Vec<BatchGet>,
    /// Read capacity of the chunk reads, in half units.
    half_units: u64,
    /// Read capacity of the parent's read ([`parent_get`]: strongly
    /// consistent), in half units.
    parent_half_units: u64,
}

impl ReadPlan {
    /// Read capacity units the chunk reads consume.
    pub fn read_units(&self) -> f64 {
        self.half_units as f64 / 2.0
    }

    /// Read capacity units the parent's read consumes.
    pub fn parent_read_units(&self) -> f64 {
        self.parent_half_units as f64 / 2.0
    }

    /// Read capacity units of reading the item whole: the parent, then
    /// every chunk.
    pub fn whole_read_units(&self) -> f64 {
        (self.parent_half_units + self.half_units) as f64 / 2.0
    }
}

/// Plans reading the chunks of `parent` (as returned by [`parent_get`]).
/// A plain or inline parent needs no chunk reads.
pub fn plan_read(
    parent: &Item,
    target: &Target<'_>,
    consistent: bool,
) -> Result<ReadPlan, PlanError> {
    let parent_half_units = read_half_units(item_size(parent), ReadConsistency::Strong);
    let Some(manifest) = target.read_manifest(parent)? else {
        return Ok(ReadPlan {
            manifest: None,
            batches: Vec::new(),
            half_units: 0,
            parent_half_units,
        });
    };
    let consistency = if consistent {
        ReadConsistency::Strong
    } else {
        ReadConsistency::Eventual
    };
    let mut batches: Vec<BatchGet> = Vec::new();
    let mut half_units = 0;
    let chunks = manifest
        .frames()
        .flat_map(|f| (0..f.chunk_count).map(move |seq| (f, seq)));
    for (frame, seq) in chunks {
        let key = chunk_key(target.key, target.layout, parent, frame.version, seq)?;
        let size = chunk_size(&key, seq, frame.chunk_len(seq) as usize);
        half_units += read_half_units(size, consistency);
        let fits = batches.last().is_some_and(|b| {
            b.keys.len() < MAX_BATCH_GET_KEYS && b.expected_bytes + size <= MAX_BATCH_GET_BYTES
        });
        if !fits {
            batches.push(BatchGet {
                table: target.chunk_table.to_string(),
                keys: Vec::new(),
                consistent,
                expected_bytes: 0,
                attributes: Vec::new(),
            });
        }
        let batch = batches.last_mut().expect("a batch was just ensured");
        batch.expected_bytes += size;
        batch.keys.push(key);
    }
    Ok(ReadPlan {
        manifest: Some(manifest),
        batches,
        half_units,
        parent_half_units,
    })
}

/// The exact size of chunk `seq` with this key and `data_len` bytes (an
/// anchor's mark included; 11 bytes high for an anchor written before
/// anchors were, which only errs toward smaller batches).
fn chunk_size(key: &Item, seq: u32, data_len: usize) -> usize {
    let digest = attribute_size(
        CHUNK_DIGEST_ATTRIBUTE,
        &AttributeValue::B(Vec::from([0; 8])),
    );
    let anchor = match is_anchor(seq) {
        true => ANCHOR_ATTRIBUTE.len() + 8,
        false => 0,
    };
    item_size(key) + digest + anchor + CHUNK_DATA_ATTRIBUTE.len() + data_len
}
