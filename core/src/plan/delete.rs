//! Delete plans: the parent first (the commit point), then its chunks.

use alloc::string::ToString;
use alloc::vec::Vec;

use super::ops::{BatchWrite, Delete};
use super::write::{Expect, frame_deletes};
use super::{PlanError, Target};
use crate::value::Item;

/// The requests deleting a stored item.
#[derive(Clone, Debug, PartialEq)]
pub struct DeletePlan {
    /// The conditional delete of the parent: once it succeeds the item is gone.
    pub parent: Delete,
    /// Deletes of the parent's chunks, after the parent.
    pub chunks: Vec<BatchWrite>,
}

/// Plans deleting `stored`, the parent as read: the delete is conditional on
/// that same version still being there, so a concurrent overwrite is never
/// half-deleted.
pub fn plan_delete(stored: &Item, target: &Target<'_>) -> Result<DeletePlan, PlanError> {
    // Refuses a damaged manifest, or one beyond the target's limit, before
    // a key is built for any chunk it claims.
    let (expect, chunks) = match target.read_manifest(stored)? {
        Some(m) => {
            let expect = Expect::of(&m);
            let chunks = frame_deletes(target, stored, expect.frames(), None)?;
            (expect, chunks)
        }
        None => (Expect::Plain, Vec::new()),
    };
    Ok(DeletePlan {
        parent: Delete {
            table: target.table.to_string(),
            key: target.key.key_of(stored),
            condition: expect.condition(target.key),
        },
        chunks,
    })
}
