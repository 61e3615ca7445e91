//! Whole items from a caller's own Query or Scan: core's [`QueryMachine`]
//! (pages in order, chunk items skipped, each virtual item read whole and
//! checked), driven by the executor; each item goes to the caller as it is
//! ready.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::protocol::{Machine, QueryMachine};

use crate::error::HostError;
use crate::executor::{Driver, Stop, env};
use crate::table::TableConfig;

pub use dynaslice_core::plan::Query;
pub use dynaslice_core::protocol::{QueryOptions, QueryOutcome};

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
    mut each: impl FnMut(Item) -> Result<(), HostError>,
) -> Result<QueryOutcome, HostError> {
    let mut machine = QueryMachine::new(table.core(), query, options.clone(), env());
    let mut driver = Driver::new(client, &());
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => return result,
            Stop::Output => {
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
