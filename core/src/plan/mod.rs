//! Plans: the exact DynamoDB requests that write, read or delete a virtual
//! item, grouped so that every request respects DynamoDB's limits. Core
//! decides; a host sends (and retries) them.

mod changes;
mod cost;
mod delete;
mod error;
mod ops;
mod overwrite;
mod read;
mod update;
mod write;

pub use changes::changes_to;
pub use cost::{WriteCosts, index_entry_units, replace_write_units, write_costs, write_costs_to};
pub use delete::{DeletePlan, plan_delete};
pub use error::PlanError;
pub use ops::*;
pub use overwrite::{Commit, Precondition, Replaced, plan_replaced};
pub use read::{ReadPlan, parent_get, plan_read};
pub use update::{
    Changes, ChangesError, MAX_EXPRESSION_BYTES, Rewrite, UpdatePlan, UpdateSteps, plan_update,
};
pub use write::{
    Expect, WriteKind, WriteMode, WritePlan, WriteSteps, interleave_chunk_writes,
    plan_streamed_commit, plan_streamed_commit_as, plan_write, plan_write_as,
};

use crate::key::KeySchema;
use crate::layout::Layout;
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest};
use crate::value::Item;

/// Where an item lives: its table, its chunk table, its key and its layout.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The parent table.
    pub table: &'a str,
    /// The table chunks go to (the parent table for the item-collection layout).
    pub chunk_table: &'a str,
    /// The parent table's key schema.
    pub key: &'a KeySchema,
    /// Where chunks live.
    pub layout: &'a Layout,
    /// The largest item (raw payload bytes) a plan reads, deletes or
    /// replaces. A stored manifest may have been written by anyone: one
    /// claiming more is refused before a single chunk key is built, so a
    /// forged count of 999,999 chunks costs nothing.
    pub max_raw_bytes: u64,
    /// The most chunks of a stored manifest a plan builds keys for (the
    /// memory a forged manifest can cost). [`crate::layout::MAX_CHUNKS`]
    /// by default; [`crate::DEFAULT_MAX_CHUNK_KEYS`] for operations that
    /// never hold the payload (delete, the cleanup after an overwrite,
    /// inspect), whose `max_raw_bytes` is then unlimited.
    pub max_chunks: u32,
    /// The table chunks go to has the anchors index: writing or deleting an
    /// anchor costs one more write unit, its entry's (false by default).
    pub anchors_indexed: bool,
}

impl<'a> Target<'a> {
    /// A target with the default limit ([`crate::DEFAULT_MAX_RAW_BYTES`]).
    pub fn new(
        table: &'a str,
        chunk_table: &'a str,
        key: &'a KeySchema,
        layout: &'a Layout,
    ) -> Self {
        Self {
            table,
            chunk_table,
            key,
            layout,
            max_raw_bytes: crate::DEFAULT_MAX_RAW_BYTES as u64,
            max_chunks: crate::layout::MAX_CHUNKS,
            anchors_indexed: false,
        }
    }

    /// This target for an operation that builds chunk keys but never holds
    /// the payload: any size, up to [`crate::DEFAULT_MAX_CHUNK_KEYS`] chunks.
    pub fn keys_only(self) -> Self {
        Self {
            max_raw_bytes: u64::MAX,
            max_chunks: crate::DEFAULT_MAX_CHUNK_KEYS,
            ..self
        }
    }

    /// The manifest of a stored parent: `None` for a plain item, an error
    /// for one that is damaged, of an unknown format version, of another
    /// layout, or beyond [`Target::max_raw_bytes`]. Never a silent `None`:
    /// a manifest that cannot be read must stop the caller, not look like
    /// an item without chunks.
    pub fn read_manifest(&self, parent: &Item) -> Result<Option<Manifest>, PlanError> {
        let Some(value) = parent.get(MANIFEST_ATTRIBUTE) else {
            return Ok(None);
        };
        let manifest = Manifest::from_value(value)?;
        self.check_layout(&manifest)?;
        self.check_limits(&manifest)?;
        Ok(Some(manifest))
    }
}

impl Target<'_> {
    /// Checks a stored manifest is within this target's limits.
    pub(crate) fn check_limits(&self, manifest: &Manifest) -> Result<(), PlanError> {
        if manifest.total_raw_len() > self.max_raw_bytes {
            return Err(PlanError::OverLimit {
                raw_len: manifest.total_raw_len(),
                limit: self.max_raw_bytes,
            });
        }
        let chunks = manifest.total_chunks();
        if chunks > u64::from(self.max_chunks) {
            return Err(PlanError::TooManyChunks {
                chunk_count: u32::try_from(chunks).unwrap_or(u32::MAX),
                limit: self.max_chunks,
            });
        }
        Ok(())
    }

    /// Checks a stored manifest's chunks live where this target says.
    fn check_layout(&self, manifest: &Manifest) -> Result<(), PlanError> {
        if manifest.total_chunks() > 0 && manifest.layout != self.layout.name() {
            return Err(PlanError::LayoutMismatch {
                stored: manifest.layout.clone(),
            });
        }
        Ok(())
    }
}
