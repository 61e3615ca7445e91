//! Garbage collection: core's [`GcMachine`] (chunks no parent refers to,
//! older than a grace period by the store's clock, a page at a time),
//! driven by the executor.

use aws_sdk_dynamodb::Client;
use dynaslice_core::protocol::{GcMachine, RetryPolicy};

use crate::error::HostError;
use crate::executor::{Driver, env};
use crate::table::TableConfig;

pub use dynaslice_core::protocol::{GcOptions, GcReport};

/// Finds and deletes unreferenced chunks of `table`.
pub async fn gc(
    client: &Client,
    table: &TableConfig,
    options: &GcOptions,
) -> Result<GcReport, HostError> {
    let mut machine = GcMachine::new(table.core(), options.clone(), RetryPolicy::default(), env());
    Driver::new(client, &()).finish(&mut machine).await
}
