//! Reading virtual items: core's [`ReadMachine`] (a consistent parent
//! read, then the exact chunk keys a few small BatchGetItems ahead, every
//! byte checked, back to the parent when a concurrent overwrite deleted a
//! chunk), driven by the executor. The read holds the raw payload, the
//! requests in flight and, at the end, the decoded item.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::protocol::{ReadMachine, Sink};

use crate::error::HostError;
use crate::executor::{Driver, env};
use crate::progress::Progress;
use crate::table::TableConfig;

pub use dynaslice_core::protocol::GetOptions;

/// An item read back whole.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Fetched {
    /// The item exactly as it was written.
    pub item: Item,
    /// Its manifest, when it was split.
    pub manifest: Option<Manifest>,
    /// Chunk items read.
    pub chunks_read: usize,
    /// Parent reads it took (more than 1 when a concurrent overwrite
    /// replaced the item mid-read).
    pub parent_reads: u32,
    /// Read capacity units the store reported consuming.
    pub consumed_read_units: f64,
}

/// The key attributes of `key`, checked against the table's key schema.
pub fn check_key(table: &TableConfig, key: &Item) -> Result<Item, HostError> {
    table.key.check_key(key).map_err(HostError::Key)
}

/// Reads the item with `key` from `table`; `None` when there is none. The
/// result is one complete version some writer committed, or an error.
pub async fn get(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    options: &GetOptions,
    progress: &dyn Progress,
) -> Result<Option<Fetched>, HostError> {
    let mut machine = ReadMachine::new(key, table.core(), Sink::Item, options.clone(), None, env());
    let Some(read) = Driver::for_table(client, table, progress)
        .finish(&mut machine)
        .await?
    else {
        return Ok(None);
    };
    let item = read
        .item
        .ok_or_else(|| HostError::Internal("a whole read ended without its item".into()))?;
    Ok(Some(Fetched {
        item,
        manifest: read.manifest,
        chunks_read: read.chunks_read as usize,
        parent_reads: read.parent_reads,
        consumed_read_units: read.consumed_read_units,
    }))
}
