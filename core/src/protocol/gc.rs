//! Garbage collection: deleting chunks no parent refers to, once they are
//! older than a grace period, a page of the chunk table at a time. Chunks
//! become unreferenced when a writer crashed before its commit, lost a race
//! and could not abort, or could not finish deleting a replaced version.
//!
//! The grace period protects writes in progress: their chunks are written
//! before their commit makes them referenced, and the version id in every
//! chunk key records when the write began, in the store's time (writers
//! stamp it and `gc` judges it by the clock of the store's answers, never
//! by a clock of their own alone).
//!
//! Memory stays within one page: a Scan page of chunk keys, grouped by
//! parent; the parents read with consistent BatchGetItems (their keys and
//! manifests only); the page's verdicts sent as deletes; then the next
//! page. Nothing is kept from a page but counters.
//!
//! What it scans: the anchors index when the table has one
//! ([`Table::anchors`]: one small entry per 64 chunks, never a chunk's
//! bytes; an unreferenced anchor's whole span is deleted, the anchor last),
//! else (or with [`GcOptions::every_chunk`]) every chunk item. Either Scan is eventually consistent, which is
//! safe: it only proposes candidates. A verdict rests on a strongly
//! consistent read of the parent and on the version's age, so a stale page
//! can only propose a chunk already deleted (deleting it again changes
//! nothing) or miss one written a moment ago (within the grace period, so
//! kept anyway; the next run sees it).
//!
//! A parent whose manifest cannot be read (damaged, or written by a newer
//! format version) keeps every chunk of its key: not understanding the
//! data is a reason to stop, never to delete it. The manifest is read with
//! no size limit: `gc` builds no chunk key from it, it only compares
//! versions.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use super::clock::StoreClock;
use super::deletes::Deletes;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled, found};
use super::pace::{Pace, rate_pause};
use super::policy::{DEFAULT_CONCURRENCY, DEFAULT_GRACE, INITIAL_WRITE_LIMIT, RetryPolicy};
use super::request::{Answer, Request, RequestId, Response};
use super::{Env, Machine, Step};
use crate::history::{History, HistoryError};
use crate::layout::{Layout, anchored, canonical_key, chunk_key, is_anchor, parse_chunk_key};
use crate::manifest::{
    ANCHOR_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE, Manifest, ManifestError,
};
use crate::plan::{BatchGet, MAX_BATCH_GET_KEYS, Scan, WriteRequest, pack_batch_writes};
use crate::table::Table;
use crate::value::Item;
use crate::version::VersionId;

/// The most anchors a page of the anchors index holds (its Scan's `Limit`).
pub const ANCHORS_PER_PAGE: u32 = 1_000;

/// How to collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcOptions {
    /// Unreferenced chunks younger than this are kept (default 1 hour): a
    /// write that takes longer than this while `gc` runs could lose chunks.
    pub grace: Duration,
    /// Report only; delete nothing.
    pub dry_run: bool,
    /// One segment of a parallel Scan, `(segment, total)`: run `total`
    /// machines, one per segment, to collect at once (default: the whole
    /// table, one page after another).
    pub segment: Option<(u32, u32)>,
    /// Where to start: the cursor an interrupted run last reported
    /// ([`GcMachine::cursor`]) for the same segment. `None`: the start.
    pub start: Option<Item>,
    /// The most capacity units (read and write) per second, on average:
    /// each page starts only once the units spent so far fit the rate, so
    /// maintenance leaves the table's capacity to the application.
    pub max_units_per_second: Option<u32>,
    /// Scan every chunk item even when the table has an anchors index
    /// ([`Table::anchors`], docs/FORMAT.md section 6, "Anchors"), which a
    /// run reads otherwise: reads then grow with stored bytes, not
    /// versions, but the run also finds chunks written before anchors.
    pub every_chunk: bool,
}

impl Default for GcOptions {
    fn default() -> Self {
        Self {
            grace: DEFAULT_GRACE,
            dry_run: false,
            segment: None,
            start: None,
            max_units_per_second: None,
            every_chunk: false,
        }
    }
}

/// What `gc` found and did: counts of chunk items, or of anchors in a run
/// over the anchors index (each stands for up to 64 chunks).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct GcReport {
    /// Chunk items (or anchors) seen.
    pub chunks: usize,
    /// Chunks their parent references.
    pub referenced: usize,
    /// Chunks (and version records) of versions their parent's history
    /// keeps.
    pub kept: usize,
    /// Unreferenced chunks kept because they are within the grace period.
    pub young: usize,
    /// Unreferenced chunks deleted (or that would be, in a dry run).
    pub deleted: usize,
    /// Chunks kept because their parent's manifest cannot be read.
    pub unreadable: usize,
    /// Those parents' keys, with why each could not be read and the code
    /// (`manifest is not a map [MANIFEST_INVALID]`).
    pub unreadable_parents: Vec<(Item, String)>,
    /// Capacity units the store reported consuming.
    pub consumed: Consumed,
}

impl GcOptions {
    /// These options for segment `segment` of a Scan in `total` segments,
    /// run beside others (`running` in all, each with its share of the
    /// rate limit, at least one unit per second). A Scan of one segment
    /// is a plain Scan.
    pub fn for_segment(&self, segment: u32, total: u32, running: u32) -> Self {
        Self {
            segment: (total > 1).then_some((segment, total)),
            max_units_per_second: self
                .max_units_per_second
                .map(|rate| (rate / running.max(1)).max(1)),
            ..self.clone()
        }
    }
}

impl GcReport {
    /// Adds `other`'s counts (another segment's) to these.
    pub fn add(&mut self, other: GcReport) {
        self.chunks += other.chunks;
        self.referenced += other.referenced;
        self.kept += other.kept;
        self.young += other.young;
        self.deleted += other.deleted;
        self.unreadable += other.unreadable;
        self.unreadable_parents.extend(other.unreadable_parents);
        self.consumed.read += other.consumed.read;
        self.consumed.write += other.consumed.write;
    }
}

/// What a stored parent refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Referenced {
    /// No chunks: no parent, or an item stored whole.
    Nothing,
    /// The chunks of this version's frames (its own id, then its
    /// groups'), and of the versions its history lists.
    Version(Vec<VersionId>, Option<History>),
    /// Unknown: its manifest cannot be read, so none of its chunks may go.
    Unknown,
}

/// One page's chunks of one parent, by version.
struct Parent {
    key: Item,
    versions: Vec<(VersionId, Vec<Item>)>,
    referenced: Referenced,
}

#[derive(Clone, Copy, Debug)]
enum Purpose {
    /// A Scan page.
    Page,
    /// Parents of the page.
    Parents,
    /// Deletes of this many chunks.
    Deletes,
}

enum Phase {
    /// A page is being scanned.
    Scanning,
    /// The page's parents are being read.
    Parents,
    /// The page's deletes are going out.
    Deleting,
    /// A page is done ([`Step::Output`]): the next one starts when polled.
    Paged,
    Done(Option<Result<GcReport, ProtocolError>>),
}

/// A collection of one table's unreferenced chunks (see the module's
/// documentation).
pub struct GcMachine {
    table: Table,
    options: GcOptions,
    flights: Flights<Purpose>,
    phase: Phase,
    /// Where the next page starts; `None` after the last.
    next: Option<Item>,
    last_page: bool,
    /// The page's chunks, by parent.
    page: Vec<Parent>,
    /// Deletes to send, anchors last.
    deletes: Deletes<Purpose>,
    report: GcReport,
    /// When the collection began, by the executor's clock (for the rate).
    started_ms: u64,
}

impl GcMachine {
    /// A collection of `table`'s chunk table, each request resent as
    /// `retry` says.
    pub fn new(table: Table, options: GcOptions, retry: RetryPolicy, env: Env) -> Self {
        let pace = Pace::new(INITIAL_WRITE_LIMIT, DEFAULT_CONCURRENCY);
        let flights = Flights::new(retry, pace, StoreClock::new(env.local_ms), env.seed);
        let mut machine = Self {
            table,
            options,
            flights,
            phase: Phase::Scanning,
            next: None,
            last_page: false,
            page: Vec::new(),
            deletes: Deletes::default(),
            report: GcReport::default(),
            started_ms: env.local_ms,
        };
        machine.next = machine.options.start.take();
        machine.scan();
        machine
    }

    /// Where a run interrupted now would start again
    /// ([`GcOptions::start`]): the first key of the page after the last one
    /// finished (`None` before the first page finished, or after the last).
    /// Read it when the machine yields [`Step::Output`], once a page's
    /// deletes are done.
    pub fn cursor(&self) -> Option<&Item> {
        self.next.as_ref()
    }

    /// What the collection found and did so far.
    pub fn report(&self) -> &GcReport {
        &self.report
    }

    /// How long the next page waits for the rate: until the units spent so
    /// far, at the rate, have had their time.
    fn pause(&self) -> Duration {
        let spent = self.flights.consumed.read + self.flights.consumed.write;
        let elapsed_ms = self
            .flights
            .clock
            .local_ms()
            .saturating_sub(self.started_ms);
        rate_pause(self.options.max_units_per_second, spent, elapsed_ms)
    }

    /// The anchors index this run reads, if any.
    fn anchors(&self) -> Option<String> {
        self.table
            .anchors
            .clone()
            .filter(|_| !self.options.every_chunk)
    }

    /// The attribute every item the Scan proposes holds: `_da` in the
    /// anchors index, `_h` (in an item collection, what tells a chunk from
    /// the user's own items) in the chunk table.
    fn mark(&self) -> &'static str {
        match self.anchors() {
            Some(_) => ANCHOR_ATTRIBUTE,
            None => CHUNK_DIGEST_ATTRIBUTE,
        }
    }

    /// The chunk table's key attributes and the mark: enough to tell a
    /// chunk (or an anchor) and to name it.
    fn scan(&mut self) {
        let mut attributes: Vec<String> = match &self.table.layout {
            Layout::ChunkTable { key_name } => Vec::from([key_name.clone()]),
            Layout::ItemCollection => self
                .table
                .key
                .attributes()
                .map(|k| k.name.clone())
                .collect(),
        };
        attributes.push(self.mark().into());
        let scan = Scan {
            table: self.table.chunk_table.clone(),
            attributes,
            consistent: false,
            start: self.next.take(),
            // An index page of at most so many anchors: each unreferenced
            // one is deleted with its span's 64 keys, so what a page holds
            // stays a few megabytes (a 1 MB page could hold 10,000 anchors,
            // 640,000 keys to delete).
            limit: self.anchors().map(|_| ANCHORS_PER_PAGE),
            segment: self.options.segment,
            index: self.anchors(),
        };
        let pause = self.pause();
        self.flights
            .send_after(Request::Scan(scan), Purpose::Page, Resend::Transient, pause);
        self.phase = Phase::Scanning;
    }

    /// Groups a page's chunks by parent and version, and reads the parents.
    fn paged(&mut self, items: Vec<Item>, next: Option<Item>) {
        self.last_page = next.is_none();
        self.next = next;
        // The page's chunks by parent and version: sorted, then grouped.
        let mut chunks = Vec::new();
        let anchors = self.anchors().is_some();
        for mut item in items {
            // A chunk carries its digest; in an item collection, items
            // without one are the user's own.
            if item.remove(self.mark()).is_none() {
                continue;
            }
            let Ok(chunk) = parse_chunk_key(&self.table.key, &self.table.layout, &item) else {
                continue;
            };
            // A mark where no anchor can be stands for nothing.
            if anchors && !is_anchor(chunk.seq) {
                continue;
            }
            self.report.chunks += 1;
            chunks.push((chunk.parent_key, chunk.version, item));
        }
        chunks.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let mut page: Vec<Parent> = Vec::new();
        for (parent_key, version, item) in chunks {
            match page.last_mut() {
                Some(parent) if parent.key == parent_key => match parent.versions.last_mut() {
                    Some((v, keys)) if *v == version => keys.push(item),
                    _ => parent.versions.push((version, Vec::from([item]))),
                },
                _ => page.push(Parent {
                    key: parent_key,
                    versions: Vec::from([(version, Vec::from([item]))]),
                    referenced: Referenced::Nothing,
                }),
            }
        }
        let attributes: Vec<String> = self
            .table
            .key
            .attributes()
            .map(|k| k.name.clone())
            .chain([String::from(MANIFEST_ATTRIBUTE)])
            .collect();
        for keys in page.chunks(MAX_BATCH_GET_KEYS) {
            let get = BatchGet {
                table: self.table.table.clone(),
                keys: keys.iter().map(|p| p.key.clone()).collect(),
                consistent: true,
                expected_bytes: 0,
                attributes: attributes.clone(),
            };
            self.flights
                .send(Request::BatchGet(get), Purpose::Parents, Resend::Transient);
        }
        self.page = page;
        self.phase = Phase::Parents;
    }

    /// Records what each parent read refers to.
    fn parents_read(&mut self, parents: Vec<Item>) {
        for stored in parents {
            // The page is sorted by parent key, as chunk keys name them.
            let Some(key) = canonical_key(&self.table.key, &stored) else {
                continue;
            };
            let Ok(at) = self.page.binary_search_by(|p| p.key.cmp(&key)) else {
                continue;
            };
            let parent = &mut self.page[at];
            let frames = stored
                .get(MANIFEST_ATTRIBUTE)
                .map(Manifest::from_value)
                .transpose()
                .map(|m| m.map(|m| m.frames().map(|f| f.version).collect::<Vec<_>>()));
            let read = frames.and_then(|version| {
                let history = History::of_parent(&stored).map_err(|e| match e {
                    HistoryError::Manifest(e) => e,
                    _ => ManifestError::InvalidField { field: "y" },
                })?;
                Ok((version, history))
            });
            parent.referenced = match read {
                Ok((Some(version), history)) => Referenced::Version(version, history),
                Ok((None, _)) => Referenced::Nothing,
                Err(e) => {
                    // Reported once, though its chunks may span pages.
                    let listed = &mut self.report.unreadable_parents;
                    if !listed.iter().any(|(key, _)| *key == parent.key) {
                        listed.push((parent.key.clone(), format!("{e} [{}]", e.code())));
                    }
                    Referenced::Unknown
                }
            };
        }
    }

    /// The page's verdicts, once every parent is read: deletes out.
    fn judge(&mut self) -> Result<(), ProtocolError> {
        let now_ms = self.flights.clock.now_ms()?;
        let grace_ms = u64::try_from(self.options.grace.as_millis()).unwrap_or(u64::MAX);
        let mut doomed = Vec::new();
        for parent in core::mem::take(&mut self.page) {
            for (version, keys) in parent.versions {
                let count = keys.len();
                let kept = |history: &Option<History>| {
                    history
                        .as_ref()
                        .is_some_and(|h| h.kept(now_ms).any(|e| e.holds(version)))
                };
                if matches!(&parent.referenced, Referenced::Version(v, _) if v.contains(&version)) {
                    self.report.referenced += count;
                } else if matches!(&parent.referenced, Referenced::Version(_, h) if kept(h)) {
                    self.report.kept += count;
                } else if parent.referenced == Referenced::Unknown {
                    self.report.unreadable += count;
                } else if version.unix_ms().saturating_add(grace_ms) > now_ms {
                    self.report.young += count;
                } else {
                    self.report.deleted += count;
                    doomed.extend(keys);
                }
            }
        }
        if !self.options.dry_run {
            // An anchor goes with its whole span, even from a Scan of every
            // chunk: its span's chunks on later pages must not outlive it.
            let doomed = self.spans(doomed);
            let table = &self.table.chunk_table;
            let deletes = doomed
                .into_iter()
                .map(|key| (table.clone(), WriteRequest::Delete(key)));
            self.deletes
                .add(&self.table, pack_batch_writes(deletes), |_| {
                    Purpose::Deletes
                });
        }
        self.phase = Phase::Deleting;
        Ok(())
    }

    /// The keys of what unreferenced anchors cover: each anchor and the
    /// rest of its span (most of them may not exist: a frame of 3 chunks
    /// has one anchor covering 64 positions; a delete of nothing costs a
    /// write unit and changes nothing).
    fn spans(&self, anchors: Vec<Item>) -> Vec<Item> {
        let (schema, layout) = (&self.table.key, &self.table.layout);
        let mut keys = Vec::new();
        for anchor in anchors {
            if let Ok(chunk) = parse_chunk_key(schema, layout, &anchor) {
                keys.extend(anchored(chunk.seq).filter_map(|seq| {
                    chunk_key(schema, layout, &chunk.parent_key, chunk.version, seq).ok()
                }));
            }
            keys.push(anchor);
        }
        // A span's chunks may be on the page too (a Scan of every chunk):
        // a batch may not name one key twice.
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn finish(&mut self, result: Result<GcReport, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(result));
    }
}

impl Machine for GcMachine {
    type Output = GcReport;

    fn poll(&mut self) -> Step<GcReport> {
        loop {
            if let Some(send) = self.flights.next_send() {
                return Step::Send(send);
            }
            match &mut self.phase {
                Phase::Scanning => return self.flights.idle(),
                Phase::Parents if self.flights.open() > 0 => return self.flights.idle(),
                Phase::Parents => {
                    if let Err(error) = self.judge() {
                        self.finish(Err(error));
                    }
                }
                Phase::Deleting => {
                    if self.deletes.send(&mut self.flights) {
                        continue;
                    }
                    if self.deletes.waiting() || self.flights.open() > 0 {
                        return self.flights.idle();
                    }
                    if self.last_page {
                        let mut report = core::mem::take(&mut self.report);
                        report.consumed = self.flights.consumed;
                        self.finish(Ok(report));
                    } else {
                        self.report.consumed = self.flights.consumed;
                        self.phase = Phase::Paged;
                        return Step::Output;
                    }
                }
                Phase::Paged => self.scan(),
                Phase::Done(result) => {
                    return match result.take() {
                        Some(result) => Step::Done(result),
                        None => Step::Wait,
                    };
                }
            }
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        let settled = self.flights.land(id, response);
        if let Some(settled) = &settled {
            self.deletes
                .settled(id, matches!(settled, Settled::Answer(..)));
        }
        match settled {
            Some(Settled::Answer(Purpose::Page, Answer::Scan { items, next })) => {
                self.paged(items, next)
            }
            Some(Settled::Answer(Purpose::Parents, answer)) => self.parents_read(found(answer)),
            Some(Settled::Answer(..)) | None => {}
            Some(Settled::Failed(_, failed)) => self.finish(Err(failed.error)),
        }
    }

    fn wake(&mut self, local_ms: u64) {
        self.flights.wake(local_ms);
    }

    fn cancel(&mut self) {
        if !matches!(self.phase, Phase::Done(_)) {
            self.finish(Err(ProtocolError::Cancelled));
        }
    }

    fn consumed(&self) -> Consumed {
        self.flights.consumed
    }
}
