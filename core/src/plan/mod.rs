//! Plans: the exact DynamoDB requests that write, read or delete a virtual
//! item, grouped so that every request respects DynamoDB's limits. Core
//! decides; a host sends (and retries) them.

mod delete;
mod error;
mod ops;
mod read;
mod write;

pub use delete::{DeletePlan, plan_delete};
pub use error::PlanError;
pub use ops::*;
pub use read::{ReadPlan, parent_get, plan_read};
pub use write::{
    Expect, WriteMode, WritePlan, WriteSteps, interleave_chunk_writes, plan_streamed_commit,
    plan_write,
};

use crate::key::KeySchema;
use crate::layout::Layout;
use crate::manifest::Manifest;

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
}

impl Target<'_> {
    /// Checks a stored manifest's chunks live where this target says.
    fn check_layout(&self, manifest: &Manifest) -> Result<(), PlanError> {
        if manifest.chunk_count > 0 && manifest.layout != self.layout.name() {
            return Err(PlanError::LayoutMismatch {
                stored: manifest.layout.clone(),
            });
        }
        Ok(())
    }
}
