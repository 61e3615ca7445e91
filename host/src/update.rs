//! Updating virtual items: core's [`UpdateMachine`] (one UpdateItem of the
//! parent when the changes live there, a rewrite as a new version when they
//! do not), driven by the executor.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::protocol::UpdateMachine;

use crate::error::HostError;
use crate::executor::{Driver, env};
use crate::progress::Progress;
use crate::table::TableConfig;

pub use dynaslice_core::plan::{Changes, Rewrite, UpdatePlan, UpdateSteps};
pub use dynaslice_core::protocol::{UpdateOptions, UpdateOutcome};

/// Sets and removes top-level attributes of the item with `key`, as
/// UpdateItem does (an absent item is created). Attributes the parent
/// holds change with one UpdateItem conditional on the stored version, no
/// chunk touched; a change to the payload, to the TTL of an item with
/// chunks, or one that no longer fits the parent rewrites the item as a
/// new version. Either way a concurrent overwrite makes this `CONFLICT`
/// and leaves the other writer's item whole. `progress` counts a
/// rewrite's bytes.
pub async fn update(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    changes: Changes,
    options: &UpdateOptions,
    progress: &dyn Progress,
) -> Result<UpdateOutcome, HostError> {
    let mut machine = UpdateMachine::new(key, changes, table.core(), options.clone(), env());
    Driver::new(client, progress).finish(&mut machine).await
}
