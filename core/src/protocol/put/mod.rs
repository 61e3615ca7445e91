//! Writing a virtual item: the commit protocol of docs/FORMAT.md,
//! "Writing", as a machine. Read the stored parent (which also tells the
//! store's time, the version's stamp), write the chunks (all at once, or
//! as they are cut while the payload is compressed or read), commit the
//! parent, then delete the replaced version's chunks; on a failure before
//! the commit, delete this write's own.

mod commit;
mod options;
mod uploads;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use self::commit::{Check, Commit, Committed, is_ours};
use self::uploads::{Uploads, chunk_items, put_bytes};
use super::clock::StoreClock;
use super::error::ProtocolError;
use super::flights::{Consumed, Failed, Flights, Resend, Settled, item, old};
use super::pace::Pace;
use super::policy::{
    INITIAL_WRITE_LIMIT, INPUT_BYTES, MAX_REPLANS, RESTAMP_TOLERANCE_MS, WORK_BYTES,
};
use super::request::{Answer, Request, RequestId, Response};
use super::{Env, Machine, Progress, Step};
use crate::capacity::write_units;
use crate::codec::{Codec, Compression, choose_compression};
use crate::layout::chunk_key;
use crate::plan::{
    BatchWrite, Commit as CommitPolicy, Expect, WriteKind, WriteMode, WriteRequest, WriteSteps,
    pack_batch_writes, parent_get, plan_replaced, plan_streamed_commit_as, plan_write_as,
};
use crate::size::item_size;
use crate::table::Table;
use crate::upload::{UploadRules, restamp};
use crate::value::Item;
use crate::version::VersionId;
use crate::write::item_stream::{ItemSplit, ItemStream, split_item_streamed};
use crate::write::split::{CodecChoice, SplitItem, split_item};
use crate::write::stream_split::StreamSplit;

pub use self::options::{PutOptions, PutOutcome};

/// What a write writes.
pub enum PutSource<'a> {
    /// An item the caller holds. In batch mode its chunks are written
    /// while the rest of it is still being compressed.
    Item(&'a Item),
    /// An item the machine holds, split whole before anything is written.
    Owned(Item),
    /// An item split and verified elsewhere (an upload): stamped again in
    /// the store's time before it is written, so the uploader's clock
    /// never decides how old its chunks look to `gc`.
    Upload(SplitItem),
    /// The item `parent` with one more binary attribute, `attribute`, of
    /// exactly `len` bytes that arrive through [`PutMachine::input`]. Its
    /// codec (`auto`: deflate or none, chosen on the first piece) must
    /// stream. Written in batch mode.
    Stream {
        /// The key and the other attributes.
        parent: Item,
        /// The streamed attribute's name.
        attribute: String,
        /// Its length in bytes.
        len: u64,
    },
}

/// Where the chunks come from once the write is under way.
enum Cutter<'a> {
    /// Not started (a stream waits for its first piece).
    Idle,
    /// An in-memory item cut as it is compressed.
    Items(Box<ItemStream<'a>>),
    /// A stream's pieces cut as they arrive.
    Stream(Box<StreamSplit>),
    /// Every chunk is queued.
    Ended,
}

/// Why a request was sent.
#[derive(Clone, Debug)]
enum Purpose {
    /// The stored parent, read before anything is written.
    Parent,
    /// A batch of chunk puts: its item bytes and chunk count.
    Chunks(u64, u32),
    /// The commit request out (see [`Commit`]).
    Commit,
    /// The parent read again after a commit attempt.
    Check(Check),
    /// The parent read after an atomic round's pause, to plan again.
    Replan,
    /// Deletes of the replaced version's chunks: their count.
    Cleanup(usize),
    /// Deletes of this write's own chunks.
    Abort,
}

enum Phase {
    /// The first split, stamped by the executor's clock, before any request.
    Split,
    /// The stored parent is being read.
    Parent,
    /// Splitting again, in the store's time.
    Restamp,
    /// Chunks going out.
    Chunks,
    /// The commit (and the reads that settle it) is out.
    Commit,
    /// Deleting the replaced version's chunks.
    Cleanup,
    /// A failure before the commit: waiting for requests out, then deleting
    /// this write's chunks (`sent` once they go), then finishing with `then`.
    Abort {
        then: Option<Result<PutOutcome, ProtocolError>>,
        sent: bool,
    },
    /// Finished.
    Done(Option<Result<PutOutcome, ProtocolError>>),
}

/// A write of one virtual item (see the module's documentation).
pub struct PutMachine<'a> {
    table: Table,
    options: PutOptions,
    flights: Flights<Purpose>,
    source: PutSource<'a>,
    cutter: Cutter<'a>,
    phase: Phase,
    /// The version this write stamps (the executor's clock's until the
    /// parent read tells the store's).
    version: VersionId,
    /// The stored parent, as read.
    expect: Expect,
    stored: bool,
    /// The split being written: whole, or a stream's once it ended.
    split: Option<SplitItem>,
    uploads: Uploads,
    /// True once a cut item released chunks: it is not stored inline.
    released: bool,
    commit: Option<Commit>,
    /// Deletes of the expected version's chunks, after a conditional commit.
    cleanup: Vec<BatchWrite>,
    /// Deletes of this write's own chunks.
    abort: Vec<BatchWrite>,
    /// Deletes waiting for room.
    deletes: Vec<(BatchWrite, Purpose)>,
    mode: WriteKind,
    planned_units: u64,
    committed: Option<Committed>,
    cleanup_left: usize,
    payload_bytes: u64,
    progress: Progress,
    /// Times the write started again as a new version.
    rewrites: u32,
}

impl<'a> PutMachine<'a> {
    /// A write of `source` to `table`.
    pub fn new(source: PutSource<'a>, table: Table, options: PutOptions, env: Env) -> Self {
        let pace = Pace::new(INITIAL_WRITE_LIMIT, options.concurrency);
        let mut flights =
            Flights::new(options.retry, pace, StoreClock::new(env.local_ms), env.seed);
        let version = VersionId::new(env.local_ms, flights.random());
        let uploads = Uploads::new(&table.chunk_table, options.batch_items);
        let phase = match source {
            PutSource::Item(_) | PutSource::Owned(_) => Phase::Split,
            PutSource::Upload(_) | PutSource::Stream { .. } => Phase::Parent,
        };
        let mut machine = Self {
            table,
            options,
            flights,
            source,
            cutter: Cutter::Idle,
            phase,
            version,
            expect: Expect::Absent,
            stored: false,
            split: None,
            uploads,
            released: false,
            commit: None,
            cleanup: Vec::new(),
            abort: Vec::new(),
            deletes: Vec::new(),
            mode: WriteKind::Batch,
            planned_units: 0,
            committed: None,
            cleanup_left: 0,
            payload_bytes: 0,
            progress: Progress::default(),
            rewrites: 0,
        };
        if let PutSource::Stream { len, .. } = &machine.source {
            if machine.options.mode == WriteMode::Atomic {
                let error = crate::write::split::SplitError::BadOptions {
                    reason: "a streamed put is written in batch mode; use put for one transaction",
                };
                machine.finish(Err(error.into()));
                return machine;
            }
            machine.progress.bytes_total = *len;
        }
        if matches!(machine.phase, Phase::Parent) {
            machine.read_parent();
        }
        machine
    }

    /// Takes the next piece of a [`PutSource::Stream`]'s payload, when
    /// polled for [`Step::Input`] (compressing it: CPU-heavy).
    pub fn input(&mut self, bytes: &[u8]) {
        if !matches!(self.phase, Phase::Chunks) {
            return;
        }
        if let Err(error) = self.push_input(bytes) {
            self.fail(error);
        }
    }

    /// Ends a [`PutSource::Stream`]'s payload (compressing what is left).
    pub fn end_input(&mut self) {
        if !matches!(self.phase, Phase::Chunks) {
            return;
        }
        let ended = self.push_input(&[]).and_then(|()| {
            match core::mem::replace(&mut self.cutter, Cutter::Ended) {
                Cutter::Stream(stream) => Ok(stream.finish()?),
                _ => Err(ProtocolError::Cancelled),
            }
        });
        if let Err(error) = ended.and_then(|split| self.stream_ended(split)) {
            self.fail(error);
        }
    }

    fn push_input(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        if matches!(self.cutter, Cutter::Idle)
            && let PutSource::Stream {
                parent,
                attribute,
                len,
            } = &self.source
        {
            let compression = stream_compression(self.options.compression, bytes);
            let split_options = self.options.split_options(&self.table, self.version);
            let stream = StreamSplit::new(
                parent.clone(),
                attribute.clone(),
                *len,
                compression,
                &split_options,
            )?;
            self.cutter = Cutter::Stream(Box::new(stream));
        }
        let Cutter::Stream(stream) = &mut self.cutter else {
            return Ok(());
        };
        if bytes.is_empty() {
            return Ok(());
        }
        let chunks = stream.push(bytes)?;
        self.payload_bytes = stream.received();
        self.progress.bytes_done = self.payload_bytes;
        self.queue(chunks);
        Ok(())
    }

    fn conflict(&self) -> ProtocolError {
        let key = match &self.split {
            Some(split) => Some(&split.parent),
            None => self.key_item(),
        };
        ProtocolError::Conflict {
            key: key.map(|k| self.table.key.key_text(k)).unwrap_or_default(),
        }
    }

    /// The item whose key the parent reads use.
    fn key_item(&self) -> Option<&Item> {
        match &self.source {
            PutSource::Item(item) => Some(*item),
            PutSource::Owned(item) => Some(item),
            PutSource::Upload(split) => Some(&split.parent),
            PutSource::Stream { parent, .. } => Some(parent),
        }
    }

    fn read_parent(&mut self) {
        let target = self.table.target(self.options.max_item_bytes as u64);
        let Some(key) = self.key_item() else { return };
        let get = parent_get(&target, key);
        self.flights
            .send(Request::Get(get), Purpose::Parent, Resend::Transient);
        self.phase = Phase::Parent;
    }

    fn read_parent_for(&mut self, purpose: Purpose, delay: Duration) {
        let target = self.table.target(self.options.max_item_bytes as u64);
        let Some(split) = &self.split else { return };
        let get = parent_get(&target, &split.parent);
        self.flights
            .send_after(Request::Get(get), purpose, Resend::Transient, delay);
    }

    /// Splits the item (the first time with the executor's clock, again in
    /// the store's time), or stamps an upload in the store's time.
    fn split_now(&mut self) -> Result<(), ProtocolError> {
        let split_options = self.options.split_options(&self.table, self.version);
        match &mut self.source {
            PutSource::Item(item) if self.options.mode == WriteMode::Batch => {
                match split_item_streamed(item, &split_options)? {
                    ItemSplit::Whole(split) => self.split = Some(split),
                    ItemSplit::Streaming(stream) => {
                        self.progress.bytes_total = stream.raw_len();
                        self.cutter = Cutter::Items(stream);
                    }
                }
            }
            PutSource::Item(item) => self.split = Some(split_item(item, &split_options)?),
            PutSource::Owned(item) => self.split = Some(split_item(item, &split_options)?),
            PutSource::Upload(upload) => {
                let parent = upload.parent.clone();
                let placeholder = SplitItem {
                    parent,
                    chunks: Vec::new(),
                    manifest: None,
                };
                let mut split = core::mem::replace(upload, placeholder);
                if let Some(mut manifest) = split.manifest.take() {
                    let rules = UploadRules {
                        key: &self.table.key,
                        layout: &self.table.layout,
                        max_raw_bytes: self.options.max_item_bytes as u64,
                    };
                    let chunks = core::mem::take(&mut split.chunks);
                    split.chunks = restamp(
                        &mut split.parent,
                        &mut manifest,
                        chunks,
                        self.version,
                        &rules,
                    )
                    .map_err(ProtocolError::Upload)?;
                    split.manifest = Some(manifest);
                }
                self.split = Some(split);
            }
            PutSource::Stream { .. } => {}
        }
        Ok(())
    }

    /// The stored parent is read: check it, stamp the version in the
    /// store's time, and go on.
    fn parent_read(&mut self, stored: Option<Item>) -> Result<(), ProtocolError> {
        self.stored = stored.is_some();
        let target = self.table.target(self.options.max_item_bytes as u64);
        self.expect = Expect::from_stored_at(stored.as_ref(), &target)?;
        if let Some(precondition) = &self.options.precondition
            && !precondition.holds(&self.expect)
        {
            return Err(self.conflict());
        }
        let now = self.flights.clock.now_ms()?;
        let keep = match &self.source {
            // Stamped anew whatever the first guess: nothing was split yet,
            // or an upload came stamped by the uploader's clock.
            PutSource::Stream { .. } | PutSource::Upload(_) => false,
            // An item stored whole carries no version.
            _ if self.split.as_ref().is_some_and(|s| s.manifest.is_none()) => true,
            _ => self.version.unix_ms().abs_diff(now) <= RESTAMP_TOLERANCE_MS,
        };
        if keep {
            return self.start_writing();
        }
        self.version = VersionId::new(now, self.flights.random());
        self.phase = match self.source {
            PutSource::Stream { .. } => Phase::Chunks,
            _ => Phase::Restamp,
        };
        Ok(())
    }

    /// Plans the split now whole, or starts cutting.
    fn start_writing(&mut self) -> Result<(), ProtocolError> {
        match self.split.take() {
            Some(split) => self.plan_whole(split),
            None => {
                self.phase = Phase::Chunks;
                Ok(())
            }
        }
    }

    /// Plans a whole split: one PutItem, one transaction, or every chunk
    /// then the commit.
    fn plan_whole(&mut self, split: SplitItem) -> Result<(), ProtocolError> {
        let target = self.table.target(self.options.max_item_bytes as u64);
        let plan = plan_write_as(
            &split,
            &target,
            &self.expect,
            self.options.mode,
            self.options.commit(),
        )?;
        self.planned_units = plan.write_units();
        self.progress = Progress {
            bytes_done: 0,
            bytes_total: (item_size(&split.parent)
                + split.chunks.iter().map(item_size).sum::<usize>())
                as u64,
            chunks_done: 0,
            chunks_total: split.chunks.len() as u32,
        };
        self.cleanup = plan.cleanup;
        self.mode = plan.steps.kind();
        let mut split = split;
        self.commit = Some(match plan.steps {
            WriteSteps::Single(put) => Commit::Single(put),
            WriteSteps::Atomic(transaction) => Commit::Atomic {
                transaction,
                round: 1,
            },
            WriteSteps::Batch {
                chunks,
                overwrite,
                commit,
                abort,
            } => {
                split.chunks = Vec::new();
                self.uploads.add(chunk_items(chunks));
                self.abort = abort;
                Commit::Batch {
                    overwrite,
                    pinned: commit,
                    pinned_out: false,
                }
            }
        });
        let batch = matches!(self.commit, Some(Commit::Batch { .. }));
        self.split = Some(split);
        self.cutter = Cutter::Ended;
        if batch {
            self.phase = Phase::Chunks;
        } else {
            self.send_commit();
        }
        Ok(())
    }

    /// Queues chunks cut from the payload.
    fn queue(&mut self, chunks: Vec<Item>) {
        if !chunks.is_empty() {
            self.released = true;
        }
        self.uploads.add(chunks);
        self.progress.chunks_total = self.uploads.queued;
    }

    /// Cuts the next piece of an in-memory item.
    fn cut(&mut self) -> Result<(), ProtocolError> {
        let Cutter::Items(stream) = &mut self.cutter else {
            return Ok(());
        };
        match stream.next_chunks(WORK_BYTES)? {
            Some(chunks) => {
                // Nothing counts before the first chunk goes out: a payload
                // that ends up inline reports its write as any other.
                if !chunks.is_empty() || self.released {
                    self.progress.bytes_done = stream.received();
                }
                self.queue(chunks);
            }
            None => {
                let Cutter::Items(stream) = core::mem::replace(&mut self.cutter, Cutter::Ended)
                else {
                    return Ok(());
                };
                self.stream_ended(stream.finish()?)?;
            }
        }
        Ok(())
    }

    /// A cut payload ended: its last chunks and its commit; or, if none of
    /// its chunks went out (it is stored inline, or only just too long
    /// for that), the whole split as any other.
    fn stream_ended(&mut self, split: SplitItem) -> Result<(), ProtocolError> {
        self.cutter = Cutter::Ended;
        if !self.released && matches!(self.source, PutSource::Item(_)) {
            return self.plan_whole(split);
        }
        let mut split = split;
        let last = core::mem::take(&mut split.chunks);
        self.queue(last);
        self.progress.bytes_done = self.progress.bytes_total;
        let target = self.table.target(self.options.max_item_bytes as u64);
        let plan = plan_streamed_commit_as(&split, &target, &self.expect, self.options.commit())?;
        self.planned_units = self.uploads.units + write_units(item_size(&split.parent), false);
        self.cleanup = plan.cleanup;
        self.mode = WriteKind::Batch;
        if let WriteSteps::Batch {
            overwrite,
            commit,
            abort,
            ..
        } = plan.steps
        {
            self.abort = abort;
            self.commit = Some(Commit::Batch {
                overwrite,
                pinned: commit,
                pinned_out: false,
            });
        }
        self.split = Some(split);
        Ok(())
    }

    /// Sends the commit request the plan is at.
    fn send_commit(&mut self) {
        self.phase = Phase::Commit;
        let (request, resend) = match &mut self.commit {
            // A single item under last writer wins is resent on any
            // transient failure: it carries no chunks of its own, so a late
            // copy tears nothing.
            Some(Commit::Single(put)) => (Request::Put(put.clone()), Resend::Transient),
            Some(Commit::Atomic { transaction, round }) => (
                Request::Transact {
                    transaction: transaction.clone(),
                    token: Commit::token(self.version, *round),
                },
                Resend::Transaction,
            ),
            Some(Commit::Batch {
                overwrite,
                pinned,
                pinned_out,
            }) => match overwrite.take() {
                // Resent only after throttling: after an ambiguous failure
                // a late second copy could re-point the parent at chunks a
                // later writer already deleted.
                Some(put) => (Request::Put(put), Resend::Throttled),
                None => {
                    *pinned_out = true;
                    let resend = match self.expect.pins_one_parent() {
                        true => Resend::Transient,
                        false => Resend::Throttled,
                    };
                    (Request::Put(pinned.clone()), resend)
                }
            },
            None => return,
        };
        self.flights.send(request, Purpose::Commit, resend);
    }

    /// The commit applied: the outcome's facts, then the cleanup.
    fn commit_done(&mut self, committed: Committed) {
        self.progress.bytes_done = self.progress.bytes_total;
        self.progress.chunks_done = self.progress.chunks_total;
        for batch in &committed.cleanup {
            let count = batch.requests.len();
            self.deletes.push((batch.clone(), Purpose::Cleanup(count)));
        }
        self.committed = Some(committed);
        self.phase = Phase::Cleanup;
    }

    /// A commit conditional on the parent read applied.
    fn expected(&self) -> Committed {
        Committed::expected(&self.expect, self.stored, self.cleanup.clone())
    }

    /// What an unconditional commit replaced, from the old parent its
    /// answer returned.
    fn replaced_by_commit(&self, old: Option<Item>) -> Committed {
        let target = self.table.target(self.options.max_item_bytes as u64);
        match &self.split {
            Some(split) => Committed::replaced(
                old.is_some(),
                plan_replaced(old.as_ref(), &split.parent, &target),
            ),
            None => Committed::unknown(old.is_some()),
        }
    }

    fn answered(&mut self, purpose: Purpose, answer: Answer) {
        let result = match purpose {
            Purpose::Parent => self.parent_read(item(answer)),
            Purpose::Chunks(bytes, chunks) => {
                if !self.streamed_progress() {
                    self.progress.bytes_done += bytes;
                }
                self.progress.chunks_done += chunks;
                Ok(())
            }
            Purpose::Commit => {
                let committed = match &self.commit {
                    Some(Commit::Single(put)) if put.return_old => {
                        self.replaced_by_commit(old(answer))
                    }
                    Some(Commit::Batch {
                        pinned_out: false, ..
                    }) => self.replaced_by_commit(old(answer)),
                    _ => self.expected(),
                };
                self.commit_done(committed);
                Ok(())
            }
            Purpose::Check(check) => {
                self.checked(check, item(answer));
                Ok(())
            }
            Purpose::Replan => self.replan(item(answer)),
            Purpose::Cleanup(_) | Purpose::Abort => Ok(()),
        };
        if let Err(error) = result {
            self.fail(error);
        }
    }

    /// True when progress counts the payload's bytes (a cut or streamed
    /// payload), not the items'.
    fn streamed_progress(&self) -> bool {
        self.released || matches!(self.source, PutSource::Stream { .. })
    }

    fn failed(&mut self, purpose: Purpose, failed: Failed) {
        match purpose {
            Purpose::Parent | Purpose::Chunks(..) => self.fail(failed.error),
            Purpose::Commit => self.commit_failed(failed),
            // The parent could not be read to settle a commit whose
            // outcome is unknown: it may still be applied, so this
            // write's chunks stay (for gc), and the error is the one that
            // left it unknown when there was one.
            Purpose::Check(
                Check::Single(error) | Check::PinnedUnknown(error) | Check::Overwrite(error),
            ) => self.finish(Err(error)),
            Purpose::Check(_) | Purpose::Replan => self.finish(Err(failed.error)),
            Purpose::Cleanup(count) => self.cleanup_left += count,
            Purpose::Abort => {}
        }
    }

    fn commit_failed(&mut self, failed: Failed) {
        let check = match &self.commit {
            Some(Commit::Single(put)) if put.return_old => Check::Single(failed.error),
            Some(Commit::Single(_)) if failed.condition_failed() => Check::Condition,
            Some(Commit::Atomic { .. }) if failed.condition_failed() => Check::Atomic,
            Some(Commit::Batch {
                pinned_out: false, ..
            }) => {
                if !failed.maybe_applied() {
                    return self.abort_with(Err(failed.error));
                }
                if self.expect.pins_one_parent() {
                    // Maybe applied: the pinned commit goes instead.
                    return self.send_commit();
                }
                // Maybe applied, over a state that comes back (see
                // `Expect::pins_one_parent`): only the parent can tell.
                Check::Overwrite(failed.error)
            }
            Some(Commit::Batch { .. }) if failed.condition_failed() => Check::Pinned,
            Some(Commit::Batch { .. }) => Check::PinnedUnknown(failed.error),
            _ => return self.finish(Err(failed.error)),
        };
        self.read_parent_for(Purpose::Check(check), Duration::ZERO);
    }

    /// The parent as read after a commit attempt settles the commit.
    fn checked(&mut self, check: Check, stored: Option<Item>) {
        let Some(split) = &self.split else { return };
        let ours = is_ours(stored.as_ref(), split);
        let last_writer_wins = self.options.commit() == CommitPolicy::Overwrite;
        match check {
            Check::Single(_) | Check::Overwrite(_) if ours => {
                self.commit_done(Committed::unknown(self.stored))
            }
            Check::Single(error) => self.finish(Err(error)),
            // Not applied, or applied and then replaced or deleted (its
            // chunks with it): committing this version again could point a
            // parent at chunks that are gone, so the write starts again as
            // a new version. Its first chunks stay for gc: the lost commit
            // may still land, and needs them then.
            Check::Overwrite(error) => {
                if let Err(error) = self.write_again(stored, error) {
                    self.finish(Err(error));
                }
            }
            Check::Condition | Check::Atomic if ours => self.commit_done(self.expected()),
            Check::Condition => self.finish(Err(self.conflict())),
            Check::Atomic => {
                let round = match &self.commit {
                    Some(Commit::Atomic { round, .. }) => *round,
                    _ => MAX_REPLANS,
                };
                if !last_writer_wins || round >= MAX_REPLANS {
                    return self.finish(Err(self.conflict()));
                }
                // A pause with jitter, so writers racing on one key stop
                // colliding; then the parent stored now, to plan against.
                let pause = self.options.retry.backoff(round - 1, self.flights.jitter());
                self.read_parent_for(Purpose::Replan, pause);
            }
            // This write's parent is stored: under last writer wins the
            // unconditional attempt may be what applied, replacing who
            // knows what.
            Check::Pinned | Check::PinnedUnknown(_) if ours => {
                let committed = match last_writer_wins {
                    true => Committed::unknown(self.stored),
                    false => self.expected(),
                };
                self.commit_done(committed);
            }
            // Another writer's commit came after this one (or instead of
            // it): this write's chunks go, and under last writer wins the
            // write still succeeded, superseded.
            Check::Pinned => {
                let then = match last_writer_wins {
                    true => Ok(self.outcome_with(Committed::superseded())),
                    false => Err(self.conflict()),
                };
                self.abort_with(then);
            }
            Check::PinnedUnknown(error) => self.finish(Err(error)),
        }
    }

    /// Starts the write again as a new version over the parent `stored`,
    /// if its source can be split again (an item, not a stream already
    /// read) and it did not start again too often already; else fails with
    /// `error`.
    fn write_again(
        &mut self,
        stored: Option<Item>,
        error: ProtocolError,
    ) -> Result<(), ProtocolError> {
        self.rewrites += 1;
        let again = matches!(self.source, PutSource::Item(_) | PutSource::Owned(_));
        if !again || self.rewrites > MAX_REPLANS {
            return Err(error);
        }
        let target = self.table.target(self.options.max_item_bytes as u64);
        self.stored = stored.is_some();
        self.expect = Expect::from_stored_at(stored.as_ref(), &target)?;
        self.version = VersionId::new(self.flights.clock.now_ms()?, self.flights.random());
        self.uploads = Uploads::new(&self.table.chunk_table, self.options.batch_items);
        self.released = false;
        self.commit = None;
        self.cleanup = Vec::new();
        self.abort = Vec::new();
        self.split = None;
        self.cutter = Cutter::Idle;
        self.phase = Phase::Restamp;
        Ok(())
    }

    /// An atomic round lost to another writer's commit: plan again against
    /// the parent stored now, and send the next round.
    fn replan(&mut self, stored: Option<Item>) -> Result<(), ProtocolError> {
        let target = self.table.target(self.options.max_item_bytes as u64);
        self.stored = stored.is_some();
        self.expect = Expect::from_stored_at(stored.as_ref(), &target)?;
        let Some(split) = &self.split else {
            return Ok(());
        };
        let plan = plan_write_as(
            split,
            &target,
            &self.expect,
            WriteMode::Atomic,
            CommitPolicy::Overwrite,
        )?;
        let round = match &self.commit {
            Some(Commit::Atomic { round, .. }) => round + 1,
            _ => 1,
        };
        if let WriteSteps::Atomic(transaction) = plan.steps {
            self.cleanup = plan.cleanup;
            self.commit = Some(Commit::Atomic { transaction, round });
            self.send_commit();
        }
        Ok(())
    }

    /// A failure: before any chunk may have been written, the end; after,
    /// this write's chunks are deleted first.
    fn fail(&mut self, error: ProtocolError) {
        match self.phase {
            Phase::Chunks if self.uploads.queued > 0 => self.abort_with(Err(error)),
            _ => self.finish(Err(error)),
        }
    }

    /// Stops writing chunks; once the requests out have settled, deletes
    /// every chunk this write may have stored, then finishes with `then`.
    fn abort_with(&mut self, then: Result<PutOutcome, ProtocolError>) {
        self.flights.stop();
        self.cutter = Cutter::Ended;
        let abort = match core::mem::take(&mut self.abort) {
            abort if !abort.is_empty() => abort,
            _ => self.own_chunk_deletes(),
        };
        self.deletes = abort.into_iter().map(|b| (b, Purpose::Abort)).collect();
        self.phase = Phase::Abort {
            then: Some(then),
            sent: false,
        };
    }

    /// Deletes of chunks `0..queued` of this write's version.
    fn own_chunk_deletes(&self) -> Vec<BatchWrite> {
        let Some(key) = self.key_item() else {
            return Vec::new();
        };
        let keys = (0..self.uploads.queued)
            .filter_map(|seq| {
                chunk_key(&self.table.key, &self.table.layout, key, self.version, seq).ok()
            })
            .map(|key| (self.table.chunk_table.clone(), WriteRequest::Delete(key)));
        pack_batch_writes(keys)
    }

    fn finish(&mut self, result: Result<PutOutcome, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(result));
    }

    /// The outcome, once committed as `committed` says.
    fn outcome_with(&self, committed: Committed) -> PutOutcome {
        let parent = self.split.as_ref().map_or(0, |s| item_size(&s.parent)) as u64;
        let bytes_written = match self.mode {
            WriteKind::Batch => parent + self.uploads.bytes,
            _ => self.progress.bytes_total,
        };
        PutOutcome {
            mode: self.mode,
            manifest: self.split.as_ref().and_then(|s| s.manifest.clone()),
            replaced: committed.replaced,
            replaced_item: committed.replaced_item,
            superseded: committed.superseded,
            bytes_written,
            payload_bytes: self.payload_bytes,
            planned_write_units: self.planned_units,
            cleanup_left: self.cleanup_left,
            consumed_write_units: self.flights.consumed.write,
            consumed_read_units: self.flights.consumed.read,
        }
    }

    /// Sends waiting deletes as the pace allows; true when it sent any.
    fn send_deletes(&mut self) -> bool {
        let mut sent = false;
        while self.flights.room()
            && let Some((batch, purpose)) = self.deletes.pop()
        {
            self.flights
                .send(Request::BatchWrite(batch), purpose, Resend::Transient);
            sent = true;
        }
        sent
    }

    /// The next step while chunks go out; `None` when the phase moved on.
    fn poll_chunks(&mut self) -> Option<Step<PutOutcome>> {
        let ended = matches!(self.cutter, Cutter::Ended);
        if self.flights.room()
            && let Some(batch) = self.uploads.next_batch(ended)
        {
            let purpose = Purpose::Chunks(put_bytes(&batch), batch.requests.len() as u32);
            self.flights
                .send(Request::BatchWrite(batch), purpose, Resend::Transient);
            return None;
        }
        let hungry = self.uploads.hungry();
        match &self.cutter {
            Cutter::Items(_) if hungry => Some(Step::Work),
            Cutter::Idle | Cutter::Stream(_) if hungry => Some(Step::Input(INPUT_BYTES)),
            Cutter::Ended if self.uploads.is_empty() && self.flights.open() == 0 => {
                self.send_commit();
                None
            }
            _ => Some(Step::Wait),
        }
    }
}

impl Machine for PutMachine<'_> {
    type Output = PutOutcome;

    fn poll(&mut self) -> Step<PutOutcome> {
        loop {
            if let Some(send) = self.flights.next_send() {
                return Step::Send(send);
            }
            match &mut self.phase {
                Phase::Split | Phase::Restamp => return Step::Work,
                Phase::Parent | Phase::Commit => return Step::Wait,
                Phase::Chunks => {
                    if let Some(step) = self.poll_chunks() {
                        return step;
                    }
                }
                Phase::Cleanup => {
                    if self.send_deletes() {
                        continue;
                    }
                    if self.flights.open() > 0 {
                        return Step::Wait;
                    }
                    let committed = self
                        .committed
                        .take()
                        .unwrap_or_else(|| Committed::unknown(self.stored));
                    let outcome = self.outcome_with(committed);
                    self.finish(Ok(outcome));
                }
                Phase::Abort { sent, .. } => {
                    // Chunk writes still out settle first: a delete sent
                    // before its put lands would leave that chunk behind.
                    if !*sent {
                        if self.flights.open() > 0 {
                            return Step::Wait;
                        }
                        *sent = true;
                    }
                    if self.send_deletes() {
                        continue;
                    }
                    if self.flights.open() > 0 {
                        return Step::Wait;
                    }
                    let then = match &mut self.phase {
                        Phase::Abort { then, .. } => then.take(),
                        _ => None,
                    };
                    self.finish(then.unwrap_or(Err(ProtocolError::Cancelled)));
                }
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
        match self.flights.land(id, response) {
            Some(Settled::Answer(purpose, answer)) if self.live(&purpose) => {
                self.answered(purpose, answer);
            }
            Some(Settled::Failed(purpose, failed)) if self.live(&purpose) => {
                self.failed(purpose, failed);
            }
            _ => {}
        }
    }

    fn work(&mut self) {
        let result = match self.phase {
            Phase::Split => self.split_now().map(|()| self.read_parent()),
            Phase::Restamp => {
                self.split = None;
                self.cutter = Cutter::Idle;
                self.split_now().and_then(|()| self.start_writing())
            }
            Phase::Chunks => self.cut(),
            _ => Ok(()),
        };
        if let Err(error) = result {
            self.fail(error);
        }
    }

    fn cancel(&mut self) {
        match self.phase {
            Phase::Chunks if self.uploads.queued > 0 => {
                self.abort_with(Err(ProtocolError::Cancelled))
            }
            Phase::Abort { .. } | Phase::Done(_) => {}
            Phase::Cleanup => {
                self.flights.stop();
                self.cleanup_left += self
                    .deletes
                    .drain(..)
                    .map(|(b, _)| b.requests.len())
                    .sum::<usize>();
            }
            _ => self.finish(Err(ProtocolError::Cancelled)),
        }
    }

    fn progress(&self) -> Progress {
        self.progress
    }

    fn consumed(&self) -> Consumed {
        self.flights.consumed
    }
}

impl PutMachine<'_> {
    /// True when an answer for `purpose` still matters in this phase: once
    /// aborting or done, only the deletes' settle.
    fn live(&self, purpose: &Purpose) -> bool {
        match self.phase {
            Phase::Abort { .. } => false,
            Phase::Done(_) => false,
            _ => !matches!(purpose, Purpose::Abort),
        }
    }
}

/// The codec of a streamed payload: `auto` decides on the first piece
/// (the whole payload is never in memory to decide on); streams support
/// `none` and the deflate family only.
fn stream_compression(choice: CodecChoice, sample: &[u8]) -> Compression {
    match choice {
        CodecChoice::Fixed(c) => c,
        CodecChoice::Auto => match choose_compression(sample).codec {
            Codec::None => Compression::NONE,
            _ => Compression::new(Codec::Deflate),
        },
    }
}
