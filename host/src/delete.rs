//! Deleting virtual items: core's [`DeleteMachine`] (the parent first, the
//! commit point, conditional on the version read; then its chunks).

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::protocol::DeleteMachine;

use crate::error::HostError;
use crate::executor::{Driver, env};
use crate::put::PutOptions;
use crate::table::TableConfig;

pub use dynaslice_core::protocol::DeleteOutcome;

/// Deletes the item with `key`. A concurrent overwrite between the read and
/// the delete makes this `CONFLICT`, leaving the new version whole. Any
/// size is deleted (the payload is never read); a manifest claiming more
/// than [`dynaslice_core::DEFAULT_MAX_CHUNK_KEYS`] chunks is refused
/// (nothing deleted) before a key is built for any of them.
pub async fn delete(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    options: &PutOptions,
) -> Result<DeleteOutcome, HostError> {
    let mut machine = DeleteMachine::new(key, table.core(), options.retry, env());
    Driver::for_table(client, table, &())
        .finish(&mut machine)
        .await
}
