//! Garbage collection: core's [`GcMachine`] (chunks no parent refers to,
//! older than a grace period by the store's clock, a page at a time, in
//! bounded memory), driven by the executor: one Scan segment after
//! another, or several at once, each resumable from the cursor it last
//! reported.

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::protocol::{GcMachine, ObjectGcMachine, RetryPolicy};
use futures::future::try_join_all;

use crate::error::HostError;
use crate::executor::{Driver, Stop, env};
use crate::table::TableConfig;

pub use dynaslice_core::protocol::{GcOptions, GcReport, ObjectGcReport};

/// Finds and deletes the S3 objects under `table`'s prefix that no parent
/// refers to, older than [`GcOptions::grace`] by S3's clock, and aborts
/// multipart uploads as old ([`ObjectGcMachine`]). A table with no object
/// store has none: an empty report. Only `grace` and `dry_run` apply.
pub async fn gc_objects(
    client: &Client,
    table: &TableConfig,
    options: &GcOptions,
) -> Result<ObjectGcReport, HostError> {
    let mut machine = ObjectGcMachine::new(table.core(), options.clone(), env());
    Driver::for_table(client, table, &())
        .finish(&mut machine)
        .await
}

/// Finds and deletes unreferenced chunks of `table`.
pub async fn gc(
    client: &Client,
    table: &TableConfig,
    options: &GcOptions,
) -> Result<GcReport, HostError> {
    gc_paged(client, table, options, |_| {}).await
}

/// A page of a collection is done.
#[derive(Debug)]
#[non_exhaustive]
pub struct GcPage<'a> {
    /// The Scan segment (`GcOptions::segment`'s first number; 0 for one).
    pub segment: u32,
    /// Where this segment starts again if the run stops now
    /// ([`GcOptions::start`]); `None` once it ended.
    pub cursor: Option<&'a Item>,
    /// This segment's counts so far.
    pub report: &'a GcReport,
}

/// [`gc()`], telling `page` after every page (its segment's cursor and
/// counts), for a progress display or a checkpoint that makes the run
/// resumable.
pub async fn gc_paged(
    client: &Client,
    table: &TableConfig,
    options: &GcOptions,
    mut page: impl FnMut(GcPage<'_>),
) -> Result<GcReport, HostError> {
    let segment = options.segment.map_or(0, |(s, _)| s);
    let mut machine = GcMachine::new(table.core(), options.clone(), RetryPolicy::default(), env());
    let mut driver = Driver::new(client, &());
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => {
                let report = result?;
                page(GcPage {
                    segment,
                    cursor: None,
                    report: &report,
                });
                return Ok(report);
            }
            Stop::Output => page(GcPage {
                segment,
                cursor: machine.cursor(),
                report: machine.report(),
            }),
            Stop::Input(_) | Stop::Restart => {
                return Err(HostError::Internal("gc asked to move bytes".into()));
            }
        }
    }
}

/// [`gc_paged`] over Scan segments at once: of `total` segments, those
/// `starts` names, each from its start (`None`: its beginning), the rate
/// limit shared between them; the reports summed. `page` hears each
/// segment's pages by its number.
pub async fn gc_segments(
    client: &Client,
    table: &TableConfig,
    options: &GcOptions,
    total: u32,
    starts: Vec<(u32, Option<Item>)>,
    page: impl FnMut(GcPage<'_>),
) -> Result<GcReport, HostError> {
    let running = u32::try_from(starts.len()).unwrap_or(u32::MAX).max(1);
    let page = std::cell::RefCell::new(page);
    let runs = starts.into_iter().map(|(segment, start)| {
        let options = GcOptions {
            start,
            ..options.for_segment(segment, total, running)
        };
        let page = &page;
        async move { gc_paged(client, table, &options, |p| (page.borrow_mut())(p)).await }
    });
    let mut sum = GcReport::default();
    for report in try_join_all(runs).await? {
        sum.add(report);
    }
    Ok(sum)
}
