//! Version history ([`dynaslice_core::history`]): what an item keeps, and
//! a kept version made current again. A version is read with
//! [`GetOptions::version`](crate::GetOptions) through [`get()`](crate::get);
//! history is turned on by a write's [`PutOptions::history`].

use aws_sdk_dynamodb::Client;
use dynaslice_core::history::{HistoryError, listing};
use dynaslice_core::{Item, VersionId};

use crate::error::HostError;
use crate::executor::local_ms;
use crate::get::{GetOptions, get};
use crate::inspect::stored_parent;
use crate::progress::Progress;
use crate::put::{PutOptions, PutOutcome, put};
use crate::table::TableConfig;

pub use dynaslice_core::history::{Listed, Listing};

/// The versions of the item with `key`: the current one and those its
/// history keeps now (by this machine's clock; `gc` judges by the store's).
/// `None` when no item has the key. One consistent GetItem.
pub async fn versions(
    client: &Client,
    table: &TableConfig,
    key: &Item,
) -> Result<Option<Listing>, HostError> {
    let Some(parent) = stored_parent(client, table, key).await? else {
        return Ok(None);
    };
    Ok(Some(listing(&parent, local_ms())?))
}

/// Makes the kept version `version` of the item with `key` current again:
/// reads it whole (every digest checked) and writes it as a new version
/// with `options` (its note, unless given, says what was restored). The
/// version replaced is kept as the item's history says, so a restore
/// loses nothing. `VERSION_NOT_FOUND` when the item keeps no such version.
pub async fn restore(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    version: VersionId,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let get_options = GetOptions {
        version: Some(version),
        max_item_bytes: options.max_item_bytes,
        ..GetOptions::default()
    };
    let Some(fetched) = get(client, table, key, &get_options, progress).await? else {
        let key = table.key.key_text(key);
        return Err(HistoryError::VersionNotFound { key, version }.into());
    };
    let mut options = options.clone();
    if options.note.is_none() {
        options.note = Some(format!("restored {version}"));
    }
    put(client, table, &fetched.item, &options, progress).await
}
