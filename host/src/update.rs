//! Updating virtual items: core's [`UpdateMachine`] (one UpdateItem of the
//! parent when the changes live there, a rewrite as a new version when they
//! do not), driven by the executor.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::manifest::{MANIFEST_ATTRIBUTE, Manifest};
use dynaslice_core::protocol::{Consumed, UpdateMachine};

use crate::error::HostError;
use crate::executor::{Driver, env};
use crate::progress::Progress;
use crate::query::{Query, QueryOptions, query};
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
    Driver::for_table(client, table, progress)
        .finish(&mut machine)
        .await
}

/// What [`reindex`] did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ReindexReport {
    /// Items the Scan found.
    pub items: u64,
    /// Virtual items whose payload holds an attribute the table keeps on
    /// the parent (an index key, the TTL attribute).
    pub misplaced: u64,
    /// Of them, rewritten (none on a dry run).
    pub rewritten: u64,
    /// Of them, written by another writer first (`CONFLICT`): that write
    /// already followed the table's keys.
    pub conflicts: u64,
    /// Capacity units consumed, the Scan's included.
    pub consumed: Consumed,
}

/// Moves index keys and the TTL attribute back onto the parents of
/// `table` that hold them in their payload (items written before an index
/// or TTL was added, or with another configuration): finds them with a
/// Scan of the parents (no chunk read), then rewrites each as a new
/// version ([`UpdateOptions::rewrite`]), conditional on the parent read,
/// so a concurrent write is never undone. `options.dry_run` only counts.
/// The keys of the items to rewrite are held until the Scan ends.
pub async fn reindex(
    client: &Client,
    table: &TableConfig,
    options: &UpdateOptions,
) -> Result<ReindexReport, HostError> {
    let scan = Query {
        table: table.table.clone(),
        ..Query::default()
    };
    let lazy = QueryOptions {
        lazy: true,
        ..QueryOptions::default()
    };
    let core = table.core();
    let mut keys = Vec::new();
    let scanned = query(client, table, scan, &lazy, |parent| {
        let misplaced = parent
            .get(MANIFEST_ATTRIBUTE)
            .and_then(|m| Manifest::from_value(m).ok())
            .is_some_and(|m| core.misplaced(&m).is_some());
        if misplaced {
            keys.push(table.key.key_of(&parent));
        }
        Ok(())
    })
    .await?;
    let mut report = ReindexReport {
        items: scanned.items,
        misplaced: keys.len() as u64,
        consumed: scanned.consumed,
        ..ReindexReport::default()
    };
    if options.dry_run {
        return Ok(report);
    }
    let rewrite = UpdateOptions {
        rewrite: true,
        ..options.clone()
    };
    for key in keys {
        match update(client, table, &key, Changes::default(), &rewrite, &()).await {
            Ok(outcome) => {
                report.rewritten += u64::from(outcome.applied);
                report.consumed.read += outcome.consumed.read;
                report.consumed.write += outcome.consumed.write;
            }
            Err(HostError::Conflict { .. }) => report.conflicts += 1,
            Err(error) => return Err(error),
        }
    }
    Ok(report)
}
