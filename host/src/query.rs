//! Whole items from a caller's own Query or Scan: core's [`QueryMachine`]
//! (pages in order, chunk items skipped, each virtual item read whole and
//! checked), driven by the executor; each item goes to the caller as it is
//! ready. `verify` is the same machine over a Scan of the table, reporting
//! the items that do not read back instead of stopping at the first.

use std::cell::RefCell;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::protocol::{Machine, QueryMachine};
use futures::future::try_join_all;

use crate::error::HostError;
use crate::executor::{Driver, Stop, env};
use crate::table::TableConfig;

pub use dynaslice_core::plan::Query;
pub use dynaslice_core::protocol::{Damaged, Position, QueryOptions, QueryOutcome};

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
    run(client, table, query, options, each, |_| {}, |_, _| {}).await
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
    verify_segments(client, table, options, Segments::whole(), each, |_| {}).await
}

/// Which Scan segments a [`verify_segments`] run reads, from where, in
/// pages of what size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Segments {
    /// Segments of the parallel Scan (1: a plain Scan).
    pub total: u32,
    /// The segments to run, each from its start (`None`: its beginning; a
    /// start a [`VerifyPage`] reported: where it got to).
    pub starts: Vec<(u32, Option<Item>)>,
    /// The most items a page evaluates (`Limit`; the server's 1 MB page
    /// when `None`): smaller pages save finer positions.
    pub page_size: Option<u32>,
}

impl Segments {
    /// The whole table in one segment, from its beginning.
    pub fn whole() -> Self {
        Self {
            total: 1,
            starts: vec![(0, None)],
            page_size: None,
        }
    }

    /// All `total` segments from their beginnings.
    pub fn all(total: u32) -> Self {
        Self {
            total,
            starts: (0..total.max(1)).map(|s| (s, None)).collect(),
            page_size: None,
        }
    }
}

/// A page of a [`verify_segments`] segment is done.
#[derive(Debug)]
#[non_exhaustive]
pub struct VerifyPage<'a> {
    /// The Scan segment (0 for one).
    pub segment: u32,
    /// Where the segment stands: between pages (a start it resumes from),
    /// or at its end.
    pub position: Position<'a>,
    /// Virtual and plain items checked so far in this segment.
    pub items: u64,
    /// Damaged items found so far in this segment: with `position`, what a
    /// checkpoint records, so a run resumed from it counts none twice.
    pub damaged: u64,
}

/// [`verify`] over Scan segments at once (those `segments` names, each
/// from its start), the rate limit
/// ([`QueryOptions::max_units_per_second`]) shared between them; the
/// outcomes summed. `page` hears each segment between two pages and at
/// its end (for a progress display, or a cursor that makes the run
/// resumable: a run from a reported start reports no item twice).
pub async fn verify_segments(
    client: &Client,
    table: &TableConfig,
    options: &QueryOptions,
    segments: Segments,
    each: impl FnMut(Damaged),
    page: impl FnMut(VerifyPage<'_>),
) -> Result<QueryOutcome, HostError> {
    let Segments {
        total,
        starts,
        page_size,
    } = segments;
    let running = u32::try_from(starts.len()).unwrap_or(u32::MAX).max(1);
    let options = QueryOptions {
        report_damaged: true,
        lazy: false,
        max_units_per_second: options
            .max_units_per_second
            .map(|rate| (rate / running).max(1)),
        ..options.clone()
    };
    let each = RefCell::new(each);
    let page = RefCell::new(page);
    let runs = starts.into_iter().map(|(segment, start)| {
        let scan = Query {
            table: table.table.clone(),
            start,
            segment: (total > 1).then_some((segment, total)),
            limit: page_size,
            ..Query::default()
        };
        let (each, page, options) = (&each, &page, &options);
        async move {
            let found = std::cell::Cell::new(0u64);
            let damaged = |d| {
                found.set(found.get() + 1);
                (each.borrow_mut())(d)
            };
            let at = |position: Position<'_>, items| {
                (page.borrow_mut())(VerifyPage {
                    segment,
                    position,
                    items,
                    damaged: found.get(),
                })
            };
            run(client, table, scan, options, |_| Ok(()), damaged, at).await
        }
    });
    let mut sum = QueryOutcome::default();
    for outcome in try_join_all(runs).await? {
        sum.add(&outcome);
    }
    Ok(sum)
}

async fn run(
    client: &Client,
    table: &TableConfig,
    query: Query,
    options: &QueryOptions,
    mut each: impl FnMut(Item) -> Result<(), HostError>,
    mut damaged: impl FnMut(Damaged),
    mut at: impl FnMut(Position<'_>, u64),
) -> Result<QueryOutcome, HostError> {
    let mut machine = QueryMachine::new(table.core(), query, options.clone(), env());
    let mut driver = Driver::for_table(client, table, &());
    let mut checked = 0;
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => {
                let outcome = result?;
                at(Position::End, outcome.items + outcome.damaged);
                return Ok(outcome);
            }
            Stop::Output => {
                let found = machine.take_damaged();
                checked += found.len() as u64;
                found.into_iter().for_each(&mut damaged);
                for item in machine.take() {
                    checked += 1;
                    if let Err(error) = each(item) {
                        machine.cancel();
                        let _ = driver.run(&mut machine).await;
                        return Err(error);
                    }
                }
                if let position @ Position::At(_) = machine.position() {
                    at(position, checked);
                }
            }
            Stop::Input(_) | Stop::Restart => {
                return Err(HostError::Internal("a query asked to move bytes".into()));
            }
        }
    }
}
