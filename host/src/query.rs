//! Whole items from a caller's own Query or Scan: core's [`QueryMachine`]
//! (pages in order, chunk items skipped, each virtual item read whole and
//! checked), driven by the executor; each item goes to the caller as it is
//! ready. `verify` is the same machine over a Scan of the table, reporting
//! the items that do not read back instead of stopping at the first.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::protocol::{Machine, QueryMachine};

use crate::error::HostError;
use crate::executor::{Driver, Stop, env};
use crate::table::TableConfig;

pub use dynaslice_core::plan::Query;
pub use dynaslice_core::protocol::{Damaged, QueryOptions, QueryOutcome};

/// Runs `query` (the caller's own Query, or a Scan when it has no key
/// condition, on `table` or one of its indexes) and hands `each` every
/// item whole, in the pages' order: a virtual item read and checked (its
/// parent read again, consistently, so it may be newer than the page),
/// a plain item as the page gave it, chunk items never. A virtual item
/// deleted or expired in between is skipped; a damaged one ends the query
/// with its error. With [`QueryOptions::lazy`] parents come as stored. An
/// error from `each` stops the query and is returned.
pub async fn query(
    client: &Client,
    table: &TableConfig,
    query: Query,
    options: &QueryOptions,
    each: impl FnMut(Item) -> Result<(), HostError>,
) -> Result<QueryOutcome, HostError> {
    run(client, table, query, options, each, |_| {}).await
}

/// Reads every virtual item of `table` whole, a Scan page at a time, and
/// checks every chunk's digest and the whole item's: `each` gets every
/// item that does not read back (a changed byte, a missing chunk, a chunk
/// of another version, an unreadable manifest), with its key and error.
/// Memory stays within [`QueryOptions::concurrency`] items. Errors that
/// are not about the stored data (the store refusing or failing requests)
/// end it.
pub async fn verify(
    client: &Client,
    table: &TableConfig,
    options: &QueryOptions,
    each: impl FnMut(Damaged),
) -> Result<QueryOutcome, HostError> {
    let scan = Query {
        table: table.table.clone(),
        ..Query::default()
    };
    let options = QueryOptions {
        report_damaged: true,
        lazy: false,
        ..options.clone()
    };
    run(client, table, scan, &options, |_| Ok(()), each).await
}

async fn run(
    client: &Client,
    table: &TableConfig,
    query: Query,
    options: &QueryOptions,
    mut each: impl FnMut(Item) -> Result<(), HostError>,
    mut damaged: impl FnMut(Damaged),
) -> Result<QueryOutcome, HostError> {
    let mut machine = QueryMachine::new(table.core(), query, options.clone(), env());
    let mut driver = Driver::new(client, &());
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => return result,
            Stop::Output => {
                machine.take_damaged().into_iter().for_each(&mut damaged);
                for item in machine.take() {
                    if let Err(error) = each(item) {
                        machine.cancel();
                        let _ = driver.run(&mut machine).await;
                        return Err(error);
                    }
                }
            }
            Stop::Input(_) | Stop::Restart => {
                return Err(HostError::Internal("a query asked to move bytes".into()));
            }
        }
    }
}
