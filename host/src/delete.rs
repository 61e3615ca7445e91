//! Deleting virtual items: the parent first (the commit point, conditional
//! on the version read), then its chunks.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::plan::{parent_get, plan_delete};

use crate::error::HostError;
use crate::get::check_key;
use crate::put::{PutOptions, clean_up};
use crate::send::Written;
use crate::table::TableConfig;

/// What a delete did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteOutcome {
    /// An item was there and is gone.
    pub existed: bool,
    /// Chunks deleted after the parent.
    pub chunks_deleted: usize,
    /// Chunk deletes that failed (unreferenced now; `gc` removes them).
    pub chunks_left: usize,
}

impl DeleteOutcome {
    /// The outcome as JSON, as the CLI (`rm --json`) and the server answer it.
    pub fn to_json(&self, key: &Item) -> serde_json::Value {
        serde_json::json!({
            "key": crate::json::item_to_json(key),
            "deleted": self.existed,
            "chunksDeleted": self.chunks_deleted,
            "chunksLeft": self.chunks_left,
        })
    }
}

/// Deletes the item with `key`. A concurrent overwrite between the read and
/// the delete makes this a [`HostError::Conflict`], leaving the new version
/// whole. A stored item larger than `options.max_item_bytes` is refused
/// (nothing deleted) before a key is built for any of its chunks.
pub async fn delete(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    options: &PutOptions,
) -> Result<DeleteOutcome, HostError> {
    let key = check_key(table, key)?;
    let sender = options.sender(client);
    let target = table.target_within(options.max_item_bytes);
    let Some(stored) = sender.get(parent_get(&target, &key)).await? else {
        return Ok(DeleteOutcome {
            existed: false,
            chunks_deleted: 0,
            chunks_left: 0,
        });
    };
    let plan = plan_delete(&stored, &target)?;
    if sender.delete(plan.parent).await? == Written::ConditionFailed {
        // Gone now: an earlier attempt of this delete, or another deleter,
        // removed it, and either way its chunks are to be deleted. Changed:
        // someone wrote a new version, which must stay whole.
        if sender.get(parent_get(&target, &key)).await?.is_some() {
            return Err(HostError::Conflict {
                key: crate::json::key_text(&table.key, &key),
            });
        }
    }
    let chunks: usize = plan.chunks.iter().map(|b| b.requests.len()).sum();
    let chunks_left = clean_up(&sender, plan.chunks).await;
    Ok(DeleteOutcome {
        existed: true,
        chunks_deleted: chunks - chunks_left,
        chunks_left,
    })
}
