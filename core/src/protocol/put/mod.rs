//! Writing a virtual item: the commit protocol of docs/FORMAT.md,
//! "Writing", as a machine. Read the stored parent (which also tells the
//! store's time, the version's stamp), write the chunks (all at once, or
//! as they are cut while the payload is compressed or read), commit the
//! parent, then delete the replaced version's chunks; on a failure before
//! the commit, delete this write's own.

mod commit;
mod end;
mod kept;
mod object;
mod options;
mod source;
mod uploads;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use self::commit::{Check, Commit, Committed};
use self::object::ObjectUpload;
use self::uploads::Uploads;
use super::clock::StoreClock;
use super::deletes::Deletes;
use super::error::ProtocolError;
use super::flights::{Consumed, Failed, Flights, Resend, Settled, item, old};
use super::pace::Pace;
use super::policy::{INITIAL_WRITE_LIMIT, RESTAMP_TOLERANCE_MS};
use super::request::{Answer, ObjectKey, ObjectRequest, Request, RequestId, Response};
use super::{Env, Machine, Progress, Step};
use crate::history::keeps_history;
use crate::plan::{BatchWrite, Expect, WriteKind, WriteMode, parent_get};
use crate::table::Table;
use crate::value::Item;
use crate::version::VersionId;
use crate::write::item_stream::ItemStream;
use crate::write::split::SplitItem;
use crate::write::stream_split::StreamSplit;

pub use self::options::{PutOptions, PutOutcome};

/// What a write writes.
#[expect(
    clippy::large_enum_variant,
    reason = "one per write, moved once into its machine: boxing an upload would change the API for nothing measurable"
)]
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
    /// The item `parent` with one more binary attribute, `attribute`, whose
    /// bytes arrive through [`PutMachine::input`]: exactly `len` of them
    /// when given (else `STREAM_LENGTH_MISMATCH`), or as many as come
    /// before [`PutMachine::end_input`] (up to
    /// [`PutOptions::max_stream_bytes`]). Its codec (`auto`: deflate or
    /// none, chosen on the first piece) must stream. Written in batch mode.
    Stream {
        /// The key and the other attributes.
        parent: Item,
        /// The streamed attribute's name.
        attribute: String,
        /// Its length in bytes, when known before it starts.
        len: Option<u64>,
    },
}

/// Where the chunks come from once the write is under way.
enum Cutter<'a> {
    /// Not started (a stream waits for its first piece).
    Idle,
    /// A stream of unknown length's first pieces, held until its place
    /// (chunks or S3) is known.
    Holding(Vec<u8>),
    /// An in-memory item cut as it is compressed.
    Items(Box<ItemStream<'a>>),
    /// A stream's pieces cut as they arrive.
    Stream(Box<StreamSplit>),
    /// A stream's pieces cut into the parts of one S3 object.
    Object(Box<StreamSplit>),
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
    /// The start of the object's multipart upload.
    ObjectStart,
    /// A part of the object.
    ObjectPart {
        /// Its number.
        number: u32,
        /// Its CRC-32.
        crc32: u32,
        /// Its length.
        bytes: u64,
    },
    /// The object's PutObject or CompleteMultipartUpload.
    ObjectWrite,
    /// The object's ETag, after its write failed as if already done.
    ObjectHead,
    /// The record of the version an object's commit replaces (history).
    ObjectRecord,
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
    deletes: Deletes<Purpose>,
    mode: WriteKind,
    planned_units: u64,
    committed: Option<Committed>,
    cleanup_left: usize,
    payload_bytes: u64,
    progress: Progress,
    /// Times the write started again as a new version.
    rewrites: u32,
    /// The stored parent, as read (what a write that keeps history
    /// records; `expect` describes it).
    stored_parent: Option<Item>,
    /// This write keeps history ([`crate::history`]).
    keeps: bool,
    /// The S3 object a stream's payload goes to, when it goes to one.
    object: Option<ObjectUpload>,
    /// The object of an upload a client stored straight in S3 (a
    /// [`PutSource::Upload`] whose manifest names one): committed by this
    /// write, or deleted when it fails.
    uploaded: Option<ObjectKey>,
}

impl<'a> PutMachine<'a> {
    /// A write of `source` to `table`.
    pub fn new(source: PutSource<'a>, table: Table, options: PutOptions, env: Env) -> Self {
        let pace = Pace::new(INITIAL_WRITE_LIMIT, options.concurrency);
        let mut flights =
            Flights::new(options.retry, pace, StoreClock::new(env.local_ms), env.seed);
        let version = VersionId::new(env.local_ms, flights.random());
        let uploads = Uploads::new(&table, options.batch_items);
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
            split: None,
            uploads,
            released: false,
            commit: None,
            cleanup: Vec::new(),
            abort: Vec::new(),
            deletes: Deletes::default(),
            mode: WriteKind::Batch,
            planned_units: 0,
            committed: None,
            cleanup_left: 0,
            payload_bytes: 0,
            progress: Progress::default(),
            rewrites: 0,
            stored_parent: None,
            keeps: false,
            object: None,
            uploaded: None,
        };
        if let PutSource::Stream { len, .. } = &machine.source {
            if machine.options.mode == WriteMode::Atomic {
                let error = crate::write::split::SplitError::BadOptions {
                    reason: "a streamed put is written in batch mode; use put for one transaction",
                };
                machine.finish(Err(error.into()));
                return machine;
            }
            machine.progress.bytes_total = len.unwrap_or(0);
        }
        if matches!(machine.phase, Phase::Parent) {
            machine.read_parent();
        }
        machine
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

    /// The stored parent was read: what the commit expects of it.
    fn read_stored(&mut self, stored: Option<Item>) -> Result<(), ProtocolError> {
        let target = self.table.keys_target();
        self.expect = Expect::from_stored_at(stored.as_ref(), &target)?;
        self.stored_parent = stored;
        Ok(())
    }

    /// True when an item was stored when the parent was last read.
    fn stored(&self) -> bool {
        self.stored_parent.is_some()
    }

    fn read_parent(&mut self) {
        let target = self.table.keys_target();
        let Some(key) = self.key_item() else { return };
        let get = parent_get(&target, key);
        self.flights
            .send(Request::Get(get), Purpose::Parent, Resend::Transient);
        self.phase = Phase::Parent;
    }

    fn read_parent_for(&mut self, purpose: Purpose, delay: Duration) {
        let target = self.table.keys_target();
        let Some(split) = &self.split else { return };
        let get = parent_get(&target, &split.parent);
        self.flights
            .send_after(Request::Get(get), purpose, Resend::Transient, delay);
    }

    /// The stored parent is read: check it, stamp the version in the
    /// store's time, and go on.
    fn parent_read(&mut self, stored: Option<Item>) -> Result<(), ProtocolError> {
        self.read_stored(stored)?;
        if let Some(precondition) = &self.options.precondition
            && !precondition.holds(&self.expect)
        {
            return Err(self.conflict());
        }
        self.keeps = keeps_history(self.stored_parent.as_ref(), self.options.history)?;
        self.split_uploads_whole();
        let now = self.flights.clock.now_ms()?;
        let keep = match &self.source {
            // Stamped anew whatever the first guess: nothing was split yet,
            // or an upload came stamped by the uploader's clock.
            PutSource::Stream { .. } | PutSource::Upload(_) => false,
            // An upload stored whole, to be split as an item (it keeps
            // history): nothing was split yet.
            PutSource::Owned(_) if self.split.is_none() => false,
            // An item that keeps history is split even when it fits whole.
            _ if self.keeps && self.split.as_ref().is_some_and(|s| s.manifest.is_none()) => false,
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
            Purpose::ObjectRecord => {
                self.send_commit();
                Ok(())
            }
            Purpose::ObjectStart
            | Purpose::ObjectPart { .. }
            | Purpose::ObjectWrite
            | Purpose::ObjectHead => match answer {
                Answer::Object(answer) => self.object_answered(purpose, answer),
                _ => Err(ProtocolError::UnexpectedAnswer {
                    operation: crate::protocol::Operation::PutObject,
                }),
            },
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
            Purpose::Parent | Purpose::Chunks(..) | Purpose::ObjectRecord => {
                self.fail(failed.error)
            }
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
            Purpose::ObjectStart
            | Purpose::ObjectPart { .. }
            | Purpose::ObjectWrite
            | Purpose::ObjectHead => self.object_failed(purpose, failed),
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
                Phase::Parent | Phase::Commit => return self.flights.idle(),
                Phase::Chunks => {
                    let step = match self.object.is_some() {
                        true => self.poll_object(),
                        false => self.poll_chunks(),
                    };
                    if let Some(step) = step {
                        return step;
                    }
                }
                Phase::Cleanup => {
                    if self.send_deletes() {
                        continue;
                    }
                    if self.flights.open() > 0 {
                        return self.flights.idle();
                    }
                    // Anchors held back by a failed delete stay for gc.
                    self.cleanup_left += self.deletes.take_left();
                    let committed = self
                        .committed
                        .take()
                        .unwrap_or_else(|| Committed::unknown(self.stored()));
                    let outcome = self.outcome_with(committed);
                    self.finish(Ok(outcome));
                }
                Phase::Abort { sent, .. } => {
                    // Chunk writes still out settle first: a delete sent
                    // before its put lands would leave that chunk behind.
                    if !*sent {
                        if self.flights.open() > 0 {
                            return self.flights.idle();
                        }
                        *sent = true;
                        // The object's upload as it stands once every
                        // request settled (a start answered meanwhile).
                        for undo in self.object.iter().flat_map(|o| o.undo()) {
                            self.deletes.add_object(undo, Purpose::Abort);
                        }
                        // A client's object this write would have committed.
                        if let Some(object) = self.uploaded.clone() {
                            let delete = ObjectRequest::Delete { object };
                            self.deletes.add_object(delete, Purpose::Abort);
                        }
                    }
                    if self.send_deletes() {
                        continue;
                    }
                    if self.flights.open() > 0 {
                        return self.flights.idle();
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
        let settled = self.flights.land(id, response);
        if let Some(settled) = &settled {
            self.deletes
                .settled(id, matches!(settled, Settled::Answer(..)));
            self.uploads.settled(id);
        }
        match settled {
            // An upload started while the write fails is still aborted.
            Some(Settled::Answer(Purpose::ObjectStart, Answer::Object(answer)))
                if !self.live(&Purpose::ObjectStart) =>
            {
                let _ = self.object_answered(Purpose::ObjectStart, answer);
            }
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

    fn wake(&mut self, local_ms: u64) {
        self.flights.wake(local_ms);
    }

    fn cancel(&mut self) {
        match self.phase {
            Phase::Chunks if self.uploads.queued > 0 || self.object_started() => {
                self.abort_with(Err(ProtocolError::Cancelled))
            }
            Phase::Abort { .. } | Phase::Done(_) => {}
            Phase::Cleanup => {
                // Deletes resting before a resend are dropped too.
                let dropped = self
                    .flights
                    .stop()
                    .into_iter()
                    .map(|purpose| match purpose {
                        Purpose::Cleanup(count) => count,
                        _ => 0,
                    });
                self.cleanup_left += dropped.sum::<usize>() + self.deletes.take_left();
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
