//! Whole items from a caller's own Query or Scan (docs/FORMAT.md, "Queries"):
//! pages of the caller's request, in order; the chunk items an
//! item-collection layout returns beside the items never yielded; each
//! parent of a virtual item read whole ([`ReadMachine`]: a consistent
//! parent read, every chunk's digest and the whole item's checked), a few
//! at a time; plain items yielded as the page gave them. Items come out in
//! the order of the pages, with [`Step::Output`] and
//! [`QueryMachine::take`].

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::clock::StoreClock;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled};
use super::pace::{Pace, rate_pause};
use super::policy::{DEFAULT_CONCURRENCY, INITIAL_READ_LIMIT};
use super::read::{GetOptions, ReadMachine, Sink};
use super::request::{Answer, Request, RequestId, Response};
use super::{Env, Machine, Step};
use crate::code::Category;
use crate::manifest::MANIFEST_ATTRIBUTE;
use crate::plan::Query;
use crate::table::Table;
use crate::value::Item;

/// How to query.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryOptions {
    /// How each virtual item is read (its size limit, retries).
    pub get: GetOptions,
    /// Virtual items read at once (default 4): what the query holds in
    /// memory is at most this many items.
    pub concurrency: usize,
    /// Yield the parents of virtual items as the pages gave them (with
    /// their manifest, `_ds`), reading no chunk: the caller loads the ones
    /// it wants.
    pub lazy: bool,
    /// Report a virtual item that does not read back (a damaged or
    /// missing chunk, an unreadable manifest: an error of the stored-data
    /// category) with [`QueryMachine::take_damaged`] and go on, instead of
    /// ending with its error: what `verify` does.
    pub report_damaged: bool,
    /// The most capacity units per second, on average: each page, and each
    /// item's read, starts only once the units spent so far fit the rate,
    /// so a scan of a whole table (`verify`, `export`) leaves the table's
    /// capacity to the application. An item's read itself is not slowed:
    /// a large one spends its units at once and the next waits for them.
    pub max_units_per_second: Option<u32>,
}

/// Where a query stands, for a run that resumes it
/// ([`QueryMachine::position`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Position<'a> {
    /// Between two pages: the items taken so far are exactly those before
    /// this start (the next page's `ExclusiveStartKey`; `None`: the
    /// query's beginning), so a query from it yields every other item.
    At(Option<&'a Item>),
    /// Within a page: some of its items were taken, some not.
    Within,
    /// Every page was read and every item taken.
    End,
}

/// A virtual item that does not read back, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Damaged {
    /// Its key.
    pub key: Item,
    /// What reading it found.
    pub error: ProtocolError,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            get: GetOptions::default(),
            concurrency: 4,
            lazy: false,
            report_damaged: false,
            max_units_per_second: None,
        }
    }
}

/// What a query did.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct QueryOutcome {
    /// Items yielded.
    pub items: u64,
    /// Of them, virtual items read whole.
    pub virtual_items: u64,
    /// Chunk items the pages held, not yielded.
    pub chunks_skipped: u64,
    /// Parents the pages held that were deleted (or had expired) before
    /// they were read (not yielded).
    pub vanished: u64,
    /// Virtual items that did not read back ([`QueryOptions::report_damaged`]).
    pub damaged: u64,
    /// Pages read.
    pub pages: u32,
    /// Capacity units the store reported consuming, reads of items included.
    pub consumed: Consumed,
}

impl QueryOutcome {
    /// Adds `other`'s counts (another segment's) to these.
    pub fn add(&mut self, other: &QueryOutcome) {
        self.items += other.items;
        self.virtual_items += other.virtual_items;
        self.chunks_skipped += other.chunks_skipped;
        self.vanished += other.vanished;
        self.damaged += other.damaged;
        self.pages += other.pages;
        self.consumed.read += other.consumed.read;
        self.consumed.write += other.consumed.write;
    }
}

/// A page's item, in order.
enum Slot {
    /// Ready to yield.
    Ready(Item),
    /// A parent to read whole, not started.
    Parent(Item),
    /// Being read by the read of this serial.
    Reading(u64),
    /// Its read found no item: skipped.
    Gone,
    /// It did not read back: reported in its turn.
    Broken(Damaged),
}

/// How a read ended.
enum Ended {
    Item(Item),
    /// No item (deleted, or expired).
    Vanished,
    /// It did not read back.
    Damaged(Damaged),
}

/// Ids of page requests carry this tag; a read's are its serial (from 1)
/// shifted by [`READ_SHIFT`], plus its own. All below 2^53: a JavaScript
/// executor holds ids as numbers.
const PAGE_TAG: u64 = 1 << 52;
const READ_SHIFT: u32 = 20;

/// Whole items from a Query or Scan (see the module's documentation).
pub struct QueryMachine {
    table: Table,
    query: Query,
    options: QueryOptions,
    flights: Flights<()>,
    /// A page is out, or another is to be read.
    page_out: bool,
    more: bool,
    slots: VecDeque<Slot>,
    /// Reads out: serial, the item's key, the read.
    reads: Vec<(u64, Item, Box<ReadMachine>)>,
    serial: u64,
    /// The read that asked for work.
    working: Option<u64>,
    ready: Vec<Item>,
    damaged: Vec<Damaged>,
    outcome: QueryOutcome,
    done: Option<Result<(), ProtocolError>>,
    /// The end was reported.
    over: bool,
    local_ms: u64,
    /// When the query began, by the executor's clock (for the rate).
    started_ms: u64,
    /// Slots released (yielded or skipped) since the query began.
    released: u64,
    /// The pages not yet released whole: the count of slots released once
    /// each is, and the start of the page after it (`None`: the last).
    bounds: VecDeque<(u64, Option<Item>)>,
    /// The start of the first page not released whole (the query's own
    /// start until one is), and the count of slots released before it.
    cursor: (Option<Item>, u64),
    /// The last page was released whole.
    ended: bool,
}

impl QueryMachine {
    /// Whole items of `table` from the pages of `query` (whose table or
    /// index is the caller's; a query of an index must project `_ds` for
    /// its virtual items to be told from plain ones).
    pub fn new(table: Table, query: Query, options: QueryOptions, env: Env) -> Self {
        let pace = Pace::new(INITIAL_READ_LIMIT, DEFAULT_CONCURRENCY);
        let retry = options.get.retry;
        let flights = Flights::new(retry, pace, StoreClock::new(env.local_ms), env.seed);
        let cursor = (query.start.clone(), 0);
        let mut machine = Self {
            table,
            query,
            options,
            flights,
            page_out: false,
            more: true,
            slots: VecDeque::new(),
            reads: Vec::new(),
            serial: 0,
            working: None,
            ready: Vec::new(),
            damaged: Vec::new(),
            outcome: QueryOutcome::default(),
            done: None,
            over: false,
            local_ms: env.local_ms,
            started_ms: env.local_ms,
            released: 0,
            bounds: VecDeque::new(),
            cursor,
            ended: false,
        };
        machine.options.concurrency = machine.options.concurrency.max(1);
        machine.next_page();
        machine
    }

    /// The items ready ([`Step::Output`]), in order.
    pub fn take(&mut self) -> Vec<Item> {
        self.outcome.items += self.ready.len() as u64;
        core::mem::take(&mut self.ready)
    }

    /// The damaged items found since the last call
    /// ([`QueryOptions::report_damaged`]; also at [`Step::Output`]).
    pub fn take_damaged(&mut self) -> Vec<Damaged> {
        core::mem::take(&mut self.damaged)
    }

    /// Where the query stands: between two pages (a start a new query
    /// resumes from, yielding exactly the items not taken yet), within a
    /// page, or at its end. It is between pages whenever a page's last
    /// item was just taken: the items of the next page are never made
    /// ready in the same [`Step::Output`].
    pub fn position(&self) -> Position<'_> {
        let taken = self.released - (self.ready.len() + self.damaged.len()) as u64;
        match (self.ended, taken == self.cursor.1) {
            (true, _) if taken == self.released => Position::End,
            (false, true) => Position::At(self.cursor.0.as_ref()),
            _ => Position::Within,
        }
    }

    /// How long the next page or read waits for the rate.
    fn pause(&self) -> core::time::Duration {
        let consumed = self.consumed();
        let elapsed_ms = self
            .flights
            .clock
            .local_ms()
            .saturating_sub(self.started_ms);
        rate_pause(
            self.options.max_units_per_second,
            consumed.read + consumed.write,
            elapsed_ms,
        )
    }

    fn next_page(&mut self) {
        let pause = self.pause();
        self.flights.send_after(
            Request::Query(self.query.clone()),
            (),
            Resend::Transient,
            pause,
        );
        self.page_out = true;
    }

    fn page(&mut self, items: Vec<Item>, next: Option<Item>) {
        self.outcome.pages += 1;
        self.page_out = false;
        self.more = next.is_some();
        self.query.start = next;
        for item in items {
            let slot = if self.table.is_chunk(&item) {
                self.outcome.chunks_skipped += 1;
                continue;
            } else if !self.options.lazy && item.contains_key(MANIFEST_ATTRIBUTE) {
                Slot::Parent(item)
            } else {
                Slot::Ready(item)
            };
            self.slots.push_back(slot);
        }
        let end = self.released + self.slots.len() as u64;
        self.bounds.push_back((end, self.query.start.clone()));
    }

    /// Starts reads of parents, up to the concurrency; true when it
    /// started any.
    fn start_reads(&mut self) -> bool {
        let mut started = false;
        if !self.pause().is_zero() {
            return false;
        }
        for slot in self.slots.iter_mut() {
            if self.reads.len() >= self.options.concurrency {
                break;
            }
            let Slot::Parent(parent) = slot else { continue };
            let key = self.table.key.key_of(parent);
            self.serial += 1;
            let env = Env {
                local_ms: self.local_ms,
                seed: self.flights.random() as u64,
            };
            let read = ReadMachine::new(
                &key,
                self.table.clone(),
                Sink::Item,
                self.options.get.clone(),
                None,
                env,
            );
            self.reads.push((self.serial, key, Box::new(read)));
            *slot = Slot::Reading(self.serial);
            started = true;
        }
        started
    }

    /// Moves the items ready (and the damaged ones) at the head of the
    /// order out, stopping at the end of a page when any are, so that a
    /// caller sees the query between pages ([`QueryMachine::position`]).
    fn release(&mut self) {
        loop {
            while let Some((end, _)) = self.bounds.front()
                && *end <= self.released
            {
                if let Some((end, next)) = self.bounds.pop_front() {
                    self.ended = next.is_none();
                    self.cursor = (next, end);
                }
                if !(self.ready.is_empty() && self.damaged.is_empty()) {
                    return;
                }
            }
            match self.slots.front() {
                Some(Slot::Ready(_) | Slot::Gone | Slot::Broken(_)) => match self.slots.pop_front()
                {
                    Some(Slot::Ready(item)) => self.ready.push(item),
                    Some(Slot::Broken(damaged)) => self.damaged.push(damaged),
                    _ => {}
                },
                Some(Slot::Parent(_) | Slot::Reading(_)) | None => return,
            }
            self.released += 1;
        }
    }

    /// The read of `serial` ended: its slot gets the item, or is skipped.
    fn read_done(&mut self, serial: u64, ended: Ended) {
        let consumed = self
            .reads
            .iter()
            .find(|(s, _, _)| *s == serial)
            .map(|(_, _, read)| read.consumed())
            .unwrap_or_default();
        self.outcome.consumed.read += consumed.read;
        self.reads.retain(|(s, _, _)| *s != serial);
        let slot = self
            .slots
            .iter_mut()
            .find(|slot| matches!(slot, Slot::Reading(s) if *s == serial));
        let Some(slot) = slot else { return };
        *slot = match ended {
            Ended::Item(item) => {
                self.outcome.virtual_items += 1;
                Slot::Ready(item)
            }
            Ended::Vanished => {
                self.outcome.vanished += 1;
                Slot::Gone
            }
            Ended::Damaged(damaged) => {
                self.outcome.damaged += 1;
                Slot::Broken(damaged)
            }
        };
    }

    fn finish(&mut self, result: Result<(), ProtocolError>) {
        self.flights.stop();
        for (_, _, read) in &mut self.reads {
            read.cancel();
        }
        self.reads.clear();
        self.done = Some(result);
    }

    /// Polls the reads: a step one of them needs, if any.
    fn poll_reads(&mut self) -> Option<Step<QueryOutcome>> {
        let mut sleep: Option<core::time::Duration> = None;
        let mut at = 0;
        while at < self.reads.len() {
            let (serial, _, read) = &mut self.reads[at];
            let serial = *serial;
            match read.poll() {
                Step::Send(mut send) => {
                    send.id = RequestId(serial << READ_SHIFT | send.id.0);
                    return Some(Step::Send(send));
                }
                Step::Work => {
                    self.working = Some(serial);
                    return Some(Step::Work);
                }
                Step::Done(Ok(outcome)) => {
                    let ended = match outcome.and_then(|o| o.item) {
                        Some(item) => Ended::Item(item),
                        None => Ended::Vanished,
                    };
                    self.read_done(serial, ended);
                    continue;
                }
                // Expired: DynamoDB's TTL is deleting it, as if it were gone.
                Step::Done(Err(ProtocolError::ItemExpired { .. })) => {
                    self.read_done(serial, Ended::Vanished);
                    continue;
                }
                Step::Done(Err(error))
                    if self.options.report_damaged
                        && error.code().category() == Category::Stored =>
                {
                    let key = self.reads[at].1.clone();
                    self.read_done(serial, Ended::Damaged(Damaged { key, error }));
                    continue;
                }
                Step::Done(Err(error)) => {
                    self.finish(Err(error));
                    return None;
                }
                Step::Sleep(pause) => {
                    sleep = Some(sleep.map_or(pause, |s| s.min(pause)));
                }
                // A whole-item read moves no bytes.
                Step::Wait | Step::Input(_) | Step::Output | Step::Restart => {}
            }
            at += 1;
        }
        sleep.map(Step::Sleep)
    }
}

impl Machine for QueryMachine {
    type Output = QueryOutcome;

    fn poll(&mut self) -> Step<QueryOutcome> {
        loop {
            if self.over {
                return Step::Done(Err(ProtocolError::Cancelled));
            }
            if let Some(result) = &self.done {
                // Items ready go out before the end.
                if result.is_ok() && !(self.ready.is_empty() && self.damaged.is_empty()) {
                    return Step::Output;
                }
                self.over = true;
                let mut outcome = self.outcome.clone();
                outcome.consumed.read += self.flights.consumed.read;
                return match self.done.take() {
                    Some(Err(error)) => Step::Done(Err(error)),
                    _ => Step::Done(Ok(outcome)),
                };
            }
            if let Some(send) = self.flights.next_send() {
                let mut send = send;
                send.id = RequestId(PAGE_TAG | send.id.0);
                return Step::Send(send);
            }
            let sleep = self.poll_reads();
            if self.done.is_some() {
                continue;
            }
            if let Some(step @ (Step::Send(_) | Step::Work)) = sleep {
                return step;
            }
            self.release();
            if !self.ready.is_empty() || !self.damaged.is_empty() {
                return Step::Output;
            }
            if self.start_reads() {
                continue;
            }
            let waiting = self.slots.iter().any(|s| matches!(s, Slot::Parent(_)));
            let sleep = match (sleep, waiting) {
                (None, true) if self.reads.is_empty() => Some(Step::Sleep(self.pause())),
                (sleep, _) => sleep,
            };
            // The next page once this one's items are under way: at most
            // a page and the reads in memory.
            if self.more && !self.page_out && self.slots.len() <= self.options.concurrency {
                self.next_page();
                continue;
            }
            if !self.more && !self.page_out && self.slots.is_empty() && self.reads.is_empty() {
                self.done = Some(Ok(()));
                continue;
            }
            return match (sleep, self.flights.idle()) {
                (Some(Step::Sleep(a)), Step::Sleep(b)) => Step::Sleep(a.min(b)),
                (Some(step), _) => step,
                (None, idle) => idle,
            };
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        if id.0 & PAGE_TAG != 0 {
            let result = match self.flights.land(RequestId(id.0 & !PAGE_TAG), response) {
                Some(Settled::Answer((), Answer::Scan { items, next })) => {
                    self.page(items, next);
                    Ok(())
                }
                Some(Settled::Answer((), _)) => Ok(()),
                Some(Settled::Failed((), failed)) => Err(failed.error),
                None => Ok(()),
            };
            if let Err(error) = result {
                self.finish(Err(error));
            }
            return;
        }
        let serial = id.0 >> READ_SHIFT;
        let inner = RequestId(id.0 & ((1 << READ_SHIFT) - 1));
        if let Some((_, _, read)) = self.reads.iter_mut().find(|(s, _, _)| *s == serial) {
            read.handle(inner, response);
        }
    }

    fn work(&mut self) {
        let working = self.working.take();
        if let Some((_, _, read)) = self.reads.iter_mut().find(|(s, _, _)| Some(*s) == working) {
            read.work();
        }
    }

    fn wake(&mut self, local_ms: u64) {
        self.local_ms = self.local_ms.max(local_ms);
        self.flights.wake(local_ms);
        for (_, _, read) in &mut self.reads {
            read.wake(local_ms);
        }
    }

    fn cancel(&mut self) {
        if self.done.is_none() && !self.over {
            self.finish(Err(ProtocolError::Cancelled));
        }
    }

    fn consumed(&self) -> Consumed {
        let mut consumed = self.outcome.consumed;
        consumed.read += self.flights.consumed.read;
        for (_, _, read) in &self.reads {
            consumed.read += read.consumed().read;
        }
        consumed
    }
}
