//! Bulk loads and exports. Loads: many items written at once, each by its own
//! [`PutMachine`](dynaslice_core::protocol::PutMachine) (the same commit
//! protocol as [`put()`]), so the chunk writes of different items, under
//! different partition keys, interleave, and each adapts to throttling as
//! a single write does. One item that cannot be stored is reported and the
//! rest go in. Memory: at most [`ManyOptions::in_flight`] items at once.
//! Exports: every item of a table whole, as JSON Lines.

use std::path::Path;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::item_size;
use dynaslice_core::protocol::rate_pause;
use dynaslice_core::protocol::{Machine, QueryMachine};
use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};

use crate::error::HostError;
use crate::executor::{Driver, Stop, env};
use crate::json::item_to_json;
use crate::out_file::OutFile;
use crate::progress::Progress;
use crate::put::{PutOptions, PutOutcome, put};
use crate::query::{Position, Query, QueryOptions, QueryOutcome};
use crate::table::TableConfig;

/// Items written at once by default: enough that small items, each two
/// round trips (the parent read, the commit), keep a table busy.
pub const DEFAULT_IN_FLIGHT: usize = 32;

/// Bytes of items held in flight at once by default.
pub const DEFAULT_IN_FLIGHT_BYTES: usize = 64 << 20;

/// How a bulk load writes.
#[derive(Clone, Debug, PartialEq)]
pub struct ManyOptions {
    /// How each item is written.
    pub put: PutOptions,
    /// Items written at once (default [`DEFAULT_IN_FLIGHT`]).
    pub in_flight: usize,
    /// Bytes of items (their DynamoDB size) held at once (default
    /// [`DEFAULT_IN_FLIGHT_BYTES`]): large items go fewer at a time, so
    /// memory stays bounded whatever the mix. One item is always let in,
    /// however large.
    pub in_flight_bytes: usize,
    /// The most capacity units (write and read) per second, on average:
    /// each item starts only once the units the finished ones spent fit
    /// the rate, so a load leaves the table's capacity to the application.
    pub max_units_per_second: Option<u32>,
}

impl Default for ManyOptions {
    fn default() -> Self {
        Self {
            put: PutOptions::default(),
            in_flight: DEFAULT_IN_FLIGHT,
            in_flight_bytes: DEFAULT_IN_FLIGHT_BYTES,
            max_units_per_second: None,
        }
    }
}

/// What a bulk load did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ManyReport {
    /// Items stored.
    pub written: u64,
    /// Items that could not be stored (each reported to the caller).
    pub failed: u64,
    /// Bytes of the parent and chunk items written.
    pub bytes_written: u64,
    /// Write capacity units the store reported consuming.
    pub consumed_write_units: f64,
}

/// Writes every item `items` yields, each tagged by the caller (a line
/// number), [`ManyOptions::in_flight`] at once within
/// [`ManyOptions::in_flight_bytes`], at most
/// [`ManyOptions::max_units_per_second`] on average. `done` hears each item's
/// outcome with its tag, in the order they finish; an input the caller
/// could not turn into an item (`Err`) is handed back the same way and
/// counts as failed. Never fails as a whole: every failure is an item's.
pub async fn put_many<T, S>(
    client: &Client,
    table: &TableConfig,
    items: S,
    options: &ManyOptions,
    mut done: impl FnMut(T, Result<&PutOutcome, &HostError>),
) -> ManyReport
where
    S: Stream<Item = (T, Result<Item, HostError>)>,
{
    let mut report = ManyReport::default();
    let write = |tag: T, item: Result<Item, HostError>| async move {
        let outcome = match item {
            Ok(item) => put(client, table, &item, &options.put, &()).await,
            Err(error) => Err(error),
        };
        (tag, outcome)
    };
    let max_items = options.in_flight.max(1);
    let mut writes = FuturesUnordered::new();
    let mut bytes = 0usize;
    // The next input, held back until the bytes in flight leave it room.
    let mut waiting: Option<(T, Result<Item, HostError>, usize)> = None;
    let mut more = true;
    let began = tokio::time::Instant::now();
    let mut spent = 0.0;
    futures::pin_mut!(items);
    loop {
        let elapsed_ms = began.elapsed().as_millis() as u64;
        let pause = rate_pause(options.max_units_per_second, spent, elapsed_ms);
        if !pause.is_zero() && !writes.is_empty() {
            // Wait for the rate, or for a write to finish (and free room).
            tokio::select! {
                () = tokio::time::sleep(pause) => continue,
                Some(((tag, outcome), size)) = writes.next() => {
                    bytes -= size;
                    spent += settle(&mut report, &outcome);
                    done(tag, outcome.as_ref());
                    continue;
                }
            }
        } else if !pause.is_zero() && (more || waiting.is_some()) {
            tokio::time::sleep(pause).await;
        }
        while (more || waiting.is_some()) && writes.len() < max_items {
            if waiting.is_none() {
                match items.next().await {
                    Some((tag, item)) => {
                        let size = item.as_ref().map_or(0, item_size);
                        waiting = Some((tag, item, size));
                    }
                    None => more = false,
                }
            }
            match waiting.take() {
                Some((tag, item, size))
                    if writes.is_empty() || bytes + size <= options.in_flight_bytes =>
                {
                    bytes += size;
                    writes.push(async move { (write(tag, item).await, size) });
                }
                held => {
                    waiting = held;
                    break;
                }
            }
        }
        let Some(((tag, outcome), size)) = writes.next().await else {
            return report;
        };
        bytes -= size;
        spent += settle(&mut report, &outcome);
        done(tag, outcome.as_ref());
    }
}

/// Counts a finished write in `report`; the units it spent.
fn settle(report: &mut ManyReport, outcome: &Result<PutOutcome, HostError>) -> f64 {
    match outcome {
        Ok(put) => {
            report.written += 1;
            report.bytes_written += put.bytes_written;
            report.consumed_write_units += put.consumed_write_units;
            put.consumed_write_units + put.consumed_read_units
        }
        Err(_) => {
            report.failed += 1;
            0.0
        }
    }
}

/// Writes every item of `table` whole to `out` as JSON Lines (one
/// DynamoDB JSON item per line), from a consistent Scan read by the query
/// machine: virtual items read whole and checked, plain items as stored,
/// chunk items never. `out` is written as `get --out` writes: a regular
/// file appears whole once the export ends (written beside it, then
/// renamed; on an error an existing file is left as it was), `-`, a FIFO
/// or a device is written as items come. `progress` counts the bytes
/// written. Memory: at most [`QueryOptions::concurrency`] items.
pub async fn export(
    client: &Client,
    table: &TableConfig,
    out: &Path,
    options: &QueryOptions,
    progress: &dyn Progress,
) -> Result<QueryOutcome, HostError> {
    let file = OutFile::create(out).await?;
    export_into(client, table, file, options, None, |_| Ok(()), progress).await
}

/// Where an export got to: the bytes of its output that hold whole items,
/// and the Scan start of the items after them.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportMark {
    /// Bytes of whole lines written.
    pub bytes: u64,
    /// Where the Scan starts again (`None`: the table's beginning).
    pub start: Option<Item>,
}

/// [`export`] that a later run can continue after a failure or a crash: a
/// regular file is written under a fixed temporary name beside it
/// (`.NAME.dynaslice-resumable`), kept when the run fails; `mark` hears
/// where the export got to after each page (to save it), and a run given
/// `from` (the last mark heard) continues the temporary file from there,
/// with no item twice. `-`, a FIFO or a device cannot be continued.
pub async fn export_resumable(
    client: &Client,
    table: &TableConfig,
    out: &Path,
    options: &QueryOptions,
    from: Option<ExportMark>,
    mark: impl FnMut(&ExportMark) -> Result<(), HostError>,
    progress: &dyn Progress,
) -> Result<QueryOutcome, HostError> {
    let file = OutFile::resumable(out, from.as_ref().map(|m| m.bytes)).await?;
    export_into(client, table, file, options, from, mark, progress).await
}

async fn export_into(
    client: &Client,
    table: &TableConfig,
    mut file: OutFile,
    options: &QueryOptions,
    from: Option<ExportMark>,
    mut mark: impl FnMut(&ExportMark) -> Result<(), HostError>,
    progress: &dyn Progress,
) -> Result<QueryOutcome, HostError> {
    let mut written = from.as_ref().map_or(0, |m| m.bytes);
    let scan = Query {
        table: table.table.clone(),
        consistent: true,
        start: from.and_then(|m| m.start),
        ..Query::default()
    };
    let options = QueryOptions {
        lazy: false,
        report_damaged: false,
        ..options.clone()
    };
    let mut machine = QueryMachine::new(table.core(), scan, options, env());
    let mut driver = Driver::for_table(client, table, &());
    progress.start(0);
    progress.advance(written);
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => {
                let outcome = result?;
                file.commit().await?;
                return Ok(outcome);
            }
            Stop::Output => {
                let mut lines = Vec::new();
                for item in machine.take() {
                    lines.extend_from_slice(item_to_json(&item).to_string().as_bytes());
                    lines.push(b'\n');
                }
                let mut wrote = file.write(&lines).await;
                written += lines.len() as u64;
                if let (Ok(()), Position::At(start)) = (&wrote, machine.position()) {
                    let at = ExportMark {
                        bytes: written,
                        start: start.cloned(),
                    };
                    wrote = match file.flush().await {
                        Ok(()) => mark(&at),
                        Err(error) => Err(error),
                    };
                }
                if let Err(error) = wrote {
                    machine.cancel();
                    let _ = driver.run(&mut machine).await;
                    return Err(error);
                }
                progress.advance(lines.len() as u64);
            }
            Stop::Input(_) | Stop::Restart => {
                return Err(HostError::Internal("an export asked to move bytes".into()));
            }
        }
    }
}
