//! Reading a virtual item: the parent by a consistent GetItem, then its
//! chunks by exact keys, in sequence order a few small BatchGetItems
//! ahead, each decoded as its turn comes and dropped. A chunk missing
//! because a concurrent overwrite deleted it sends the read back to the
//! parent, a bounded number of times; the reader gets one complete version
//! some writer committed, or an error, never a mix.
//!
//! Two sinks: the whole item ([`Sink::Item`], which holds the raw payload
//! and, at the end, the item), or the bytes of one string or binary
//! attribute ([`Sink::Attribute`], in bounded memory whatever its size:
//! each chunk is checked whole before any of its bytes are released).

use alloc::boxed::Box;
use alloc::vec::Vec;

mod object;
mod options;

use self::object::ObjectRead;
pub use self::options::{GetOptions, ReadOutcome, Sink};

use super::clock::StoreClock;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled, batch_get, found, item};
use super::pace::Pace;
use super::policy::{CHUNKS_PER_READ, INITIAL_READ_LIMIT, READ_WINDOW};
use super::request::{Answer, ObjectAnswer, Request, RequestId, Response};
use super::{Env, Machine, Progress, Step};
use crate::history::{History, HistoryError, read_record, record_key};
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest, stored_version};
use crate::plan::{Get, parent_get};
use crate::read::chunk_reader::ChunkReader;
use crate::read::reassemble::{ReassembleError, ReassembleOptions};
use crate::read::reassembler::Reassembler;
use crate::table::Table;
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;

/// Why a request was sent.
#[derive(Clone, Copy, Debug)]
enum Purpose {
    /// The parent.
    Parent,
    /// Chunks `first..first + CHUNKS_PER_READ` of attempt `attempt`.
    Chunks { attempt: u32, first: u32 },
    /// The record of a kept version ([`GetOptions::version`]).
    Record(VersionId),
    /// The S3 object's bytes of chunks `first..` (as [`ObjectRead`] cuts
    /// it) of attempt `attempt`.
    Range { attempt: u32, first: u32 },
}

/// What decodes the chunks.
enum Decoder {
    None,
    Item(Reassembler),
    Attribute(ChunkReader),
}

enum Phase {
    /// The parent is being read (first, or again after a chunk vanished).
    Parent,
    /// Chunks are being read and decoded.
    Chunks,
    /// Finished.
    Done(Option<Box<Result<Option<ReadOutcome>, ProtocolError>>>),
}

/// A read of one virtual item (see the module's documentation).
pub struct ReadMachine {
    table: Table,
    options: GetOptions,
    sink: Sink,
    window: usize,
    key: Item,
    flights: Flights<Purpose>,
    phase: Phase,
    /// The parent this attempt reads, and its manifest.
    parent: Option<Item>,
    manifest: Option<Manifest>,
    decoder: Decoder,
    /// A chunk (or the object) that vanished in this attempt: the parent
    /// is read again to tell an overwrite from a loss.
    missing: Option<ProtocolError>,
    /// The S3 object this attempt reads, when the payload is in one.
    object: Option<ObjectRead>,
    attempt: u32,
    count: u32,
    /// Chunks asked for (`0..asked`) and decoded (`0..next`) this attempt.
    asked: u32,
    next: u32,
    /// Chunks arrived ahead of their turn (`None`: not found).
    arrived: Vec<(u32, Option<Item>)>,
    /// Output may be waiting ([`Sink::Attribute`]).
    undrained: bool,
    /// Bytes taken this attempt, and in all.
    taken: u64,
    restart: bool,
    /// The attribute's length, kept once the reader is done.
    size: Option<u64>,
    chunks_read: u32,
    parent_reads: u32,
    progress: Progress,
}

impl ReadMachine {
    /// A read of the item with `key` from `table` into `sink`, at most
    /// `window` chunk requests ahead of the one being decoded (at most
    /// [`READ_WINDOW`] when `None`).
    pub fn new(
        key: &Item,
        table: Table,
        sink: Sink,
        options: GetOptions,
        window: Option<usize>,
        env: Env,
    ) -> Self {
        let pace = Pace::new(INITIAL_READ_LIMIT, options.concurrency);
        let flights = Flights::new(options.retry, pace, StoreClock::new(env.local_ms), env.seed);
        let mut machine = Self {
            key: Item::new(),
            table,
            options,
            sink,
            window: window.unwrap_or(READ_WINDOW).max(1),
            flights,
            phase: Phase::Parent,
            parent: None,
            manifest: None,
            decoder: Decoder::None,
            missing: None,
            object: None,
            attempt: 0,
            count: 0,
            asked: 0,
            next: 0,
            arrived: Vec::new(),
            undrained: false,
            taken: 0,
            restart: false,
            size: None,
            chunks_read: 0,
            parent_reads: 0,
            progress: Progress::default(),
        };
        match machine.table.key.check_key(key) {
            Ok(key) => {
                machine.key = key;
                machine.read_parent();
            }
            Err(violations) => machine.finish(Err(ProtocolError::Key(violations))),
        }
        machine
    }

    /// The attribute's next bytes ([`Step::Output`]; decoding them is
    /// CPU-heavy): empty when none are ready.
    pub fn output(&mut self) -> &[u8] {
        let read = match &mut self.decoder {
            Decoder::Attribute(reader) => reader.read().map(<[u8]>::len),
            _ => Ok(0),
        };
        match read {
            Ok(0) => {
                self.undrained = false;
                &[]
            }
            Ok(len) => {
                self.taken += len as u64;
                match &self.decoder {
                    Decoder::Attribute(reader) => reader.last_read(),
                    _ => &[],
                }
            }
            Err(error) => {
                self.undrained = false;
                self.fail(error.into());
                &[]
            }
        }
    }

    /// The attribute's length once known ([`Sink::Attribute`]), until the
    /// end.
    pub fn size(&self) -> Option<u64> {
        match &self.decoder {
            Decoder::Attribute(reader) => reader.size(),
            _ => self.size,
        }
    }

    /// Parent reads made so far.
    pub fn parent_reads(&self) -> u32 {
        self.parent_reads
    }

    /// The manifest of the version being read, once the parent is read.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    fn read_parent(&mut self) {
        let target = self.table.target(self.options.max_item_bytes as u64);
        let get = parent_get(&target, &self.key);
        self.flights
            .send(Request::Get(get), Purpose::Parent, Resend::Transient);
        self.parent_reads += 1;
        self.phase = Phase::Parent;
    }

    fn options(&self) -> ReassembleOptions<'_> {
        let mut options = ReassembleOptions::new(&self.table.key, &self.table.layout);
        options.max_raw_bytes = self.options.max_item_bytes;
        options
    }

    /// The parent's TTL value when the table has a TTL attribute and it has
    /// passed by the store's clock (DynamoDB deletes such an item within a
    /// few days, its chunks with it).
    fn expired(&self, parent: &Item) -> Result<Option<u64>, ProtocolError> {
        let Some(AttributeValue::N(text)) = self.table.ttl.as_ref().and_then(|a| parent.get(a))
        else {
            return Ok(None);
        };
        // DynamoDB's TTL takes whole seconds; anything else never expires.
        let Ok(at) = text.parse::<u64>() else {
            return Ok(None);
        };
        let now_s = self.flights.clock.now_ms()? / 1000;
        Ok((at < now_s).then_some(at))
    }

    /// A parent was read: start (or start again) on its version.
    fn parent_read(&mut self, parent: Option<Item>) -> Result<(), ProtocolError> {
        let Some(parent) = parent else {
            return self.done(None);
        };
        if let Some(wanted) = self.options.version
            && stored_version(&parent).ok().flatten() != Some(wanted)
        {
            return self.read_record(&parent, wanted);
        }
        if let Some(missing) = self.missing.take() {
            // Deleted under us by an overwrite's cleanup? Only if the parent
            // moved on; if not, the store lost a chunk.
            let before = self
                .parent
                .as_ref()
                .map(|p| stored_version(p).ok().flatten());
            if before == Some(stored_version(&parent).ok().flatten()) {
                // TTL deletes a parent and its chunks in no set order.
                if let Some(expired_at) = self.expired(&parent)? {
                    return Err(ProtocolError::ItemExpired {
                        key: self.table.key.key_text(&self.key),
                        expired_at,
                    });
                }
                return Err(missing);
            }
            if self.taken > 0 {
                match &self.sink {
                    // Bytes of the old version are out: the read was
                    // overtaken, and cannot start again.
                    Sink::Attribute {
                        restartable: false, ..
                    } => {
                        return Err(ProtocolError::ChunksVanished {
                            key: self.table.key.key_text(&self.key),
                            attempts: self.parent_reads,
                        });
                    }
                    _ => self.restart = true,
                }
            }
        }
        self.start_on(parent)
    }

    /// The current parent does not carry the version asked for: read the
    /// record of it, if the parent's history keeps it.
    fn read_record(&mut self, parent: &Item, wanted: VersionId) -> Result<(), ProtocolError> {
        let now = self.flights.clock.now_ms()?;
        let kept = History::of_parent(parent)?.is_some_and(|h| h.find(wanted, now).is_some());
        if !kept {
            return Err(self.not_kept(wanted));
        }
        // A kept version lost a chunk: nothing overwrites a kept version.
        if let Some(missing) = self.missing.take() {
            return Err(missing);
        }
        let Some(key) = record_key(&self.table, parent, wanted) else {
            return Err(self.not_kept(wanted));
        };
        let get = Get {
            table: self.table.chunk_table.clone(),
            key,
            consistent: true,
        };
        self.flights.send(
            Request::Get(get),
            Purpose::Record(wanted),
            Resend::Transient,
        );
        Ok(())
    }

    fn not_kept(&self, version: VersionId) -> ProtocolError {
        ProtocolError::History(HistoryError::VersionNotFound {
            key: self.table.key.key_text(&self.key),
            version,
        })
    }

    /// A kept version's record was read: its parent is read as any other.
    fn record_read(
        &mut self,
        wanted: VersionId,
        record: Option<Item>,
    ) -> Result<(), ProtocolError> {
        // Released between the parent read and this one.
        let Some(record) = record else {
            return Err(self.not_kept(wanted));
        };
        let parent = read_record(&self.table, &self.key, wanted, &record)?;
        self.start_on(parent)
    }

    /// Starts (or starts again) on the version `parent` describes.
    fn start_on(&mut self, parent: Item) -> Result<(), ProtocolError> {
        // The whole item is refused over the limit before anything is
        // allocated; an attribute streams whatever the item's size.
        let limit = match self.sink {
            Sink::Item => self.options.max_item_bytes as u64,
            Sink::Attribute { .. } => u64::MAX,
        };
        self.manifest = self.table.target(limit).read_manifest(&parent)?;
        self.object = match &self.manifest {
            Some(manifest) => ObjectRead::of(&self.table, &parent, manifest)?,
            None => None,
        };
        // An object is read as chunks of its ranges: the decoders read the
        // parent with its manifest as if chunked.
        let read = match &self.object {
            Some(object) => Some(object.chunked_parent(&parent)),
            None => self.without_skipped(&parent),
        };
        let read = read.as_ref().unwrap_or(&parent);
        self.decoder = match &self.sink {
            Sink::Item => Decoder::Item(Reassembler::new(read, &self.options())?),
            Sink::Attribute { name, .. } => {
                Decoder::Attribute(ChunkReader::new(read, name, &self.options())?)
            }
        };
        self.count = match &self.decoder {
            Decoder::Item(r) => r.chunk_count(),
            Decoder::Attribute(r) => r.chunk_count(),
            Decoder::None => 0,
        };
        self.attempt += 1;
        self.asked = 0;
        self.next = 0;
        self.taken = 0;
        self.arrived.clear();
        self.undrained = true;
        self.progress = Progress {
            bytes_done: 0,
            bytes_total: match &self.manifest {
                Some(_) if self.count > 0 => (0..self.count).map(|seq| self.chunk_len(seq)).sum(),
                _ => 0,
            },
            chunks_done: 0,
            chunks_total: self.count,
        };
        self.parent = Some(parent);
        self.phase = Phase::Chunks;
        Ok(())
    }

    /// `parent` with the frames [`GetOptions::skip_frames`] names taken
    /// off its manifest, so they are not read (`None`: none to skip). The
    /// first frame left is the manifest's own; none left, no manifest.
    fn without_skipped(&self, parent: &Item) -> Option<Item> {
        let skip = &self.options.skip_frames;
        let manifest = self.manifest.as_ref()?;
        if !manifest.frames().any(|f| skip.contains(&f.version)) {
            return None;
        }
        let mut frames = manifest
            .frames()
            .filter(|f| !skip.contains(&f.version))
            .map(|f| Manifest {
                groups: Vec::new(),
                ..f.clone()
            });
        let mut parent = parent.clone();
        match frames.next() {
            Some(mut own) => {
                own.groups = frames.collect();
                parent.insert(MANIFEST_ATTRIBUTE.into(), own.to_value());
            }
            None => {
                parent.remove(MANIFEST_ATTRIBUTE);
            }
        }
        Some(parent)
    }

    /// Asks for the next chunks, as the window and the pace allow.
    fn ask(&mut self) -> Result<bool, ProtocolError> {
        let ahead = (self.asked - self.next) as usize;
        if let Some(object) = &self.object {
            if self.asked >= self.count || ahead >= object.window() {
                return Ok(false);
            }
            let (request, last) = object.range(self.asked);
            let purpose = Purpose::Range {
                attempt: self.attempt,
                first: self.asked,
            };
            self.flights.send(request, purpose, Resend::Transient);
            self.asked = last;
            return Ok(true);
        }
        if self.asked >= self.count || ahead >= self.window || !self.flights.room() {
            return Ok(false);
        }
        let first = self.asked;
        let last = first.saturating_add(CHUNKS_PER_READ).min(self.count);
        let keys = (first..last)
            .map(|seq| self.chunk_key(seq))
            .collect::<Result<Vec<_>, _>>()?;
        let request = batch_get(&self.table.chunk_table, keys, 0);
        let purpose = Purpose::Chunks {
            attempt: self.attempt,
            first,
        };
        self.flights.send(request, purpose, Resend::Transient);
        self.asked = last;
        Ok(true)
    }

    /// The bytes of chunk `seq` of those this read takes, as its decoder
    /// numbers them (every frame read, or the attribute's frame).
    fn chunk_len(&self, seq: u32) -> u64 {
        match &self.decoder {
            Decoder::Item(r) => r.chunk_len(seq),
            Decoder::Attribute(r) => r.chunk_len(seq),
            Decoder::None => 0,
        }
    }

    fn chunk_key(&self, seq: u32) -> Result<Item, ReassembleError> {
        match &self.decoder {
            Decoder::Item(r) => r.chunk_key(seq),
            Decoder::Attribute(r) => r.chunk_key(seq),
            Decoder::None => Err(ReassembleError::ChunkOutOfRange { seq, count: 0 }),
        }
    }

    /// Files the chunks a request found under their sequence numbers.
    fn arrived(&mut self, first: u32, mut items: Vec<Item>) -> Result<(), ProtocolError> {
        let last = first.saturating_add(CHUNKS_PER_READ).min(self.count);
        for seq in first..last {
            let key = self.chunk_key(seq)?;
            let at = items.iter().position(|item| {
                key.iter()
                    .all(|(name, value)| item.get(name) == Some(value))
            });
            let chunk = at.map(|at| items.swap_remove(at));
            self.chunks_read += u32::from(chunk.is_some());
            self.arrived.push((seq, chunk));
        }
        Ok(())
    }

    /// Files the pieces of an S3 object's range that arrived.
    fn range_arrived(&mut self, first: u32, answer: Answer) -> Result<(), ProtocolError> {
        let Some(object) = &self.object else {
            return Ok(());
        };
        let Answer::Object(ObjectAnswer::Bytes { bytes, etag }) = answer else {
            return Err(ProtocolError::UnexpectedAnswer {
                operation: crate::protocol::Operation::GetObject,
            });
        };
        // Another object under the key (a server that ignored `If-Match`):
        // as if the condition failed.
        if !object.same_etag(etag.as_deref()) {
            let gone = object.gone_error();
            return self.vanished(gone);
        }
        let pieces = object.pieces(&self.table, first, &bytes)?;
        self.chunks_read += pieces.len() as u32;
        self.arrived
            .extend(pieces.into_iter().map(|(seq, item)| (seq, Some(item))));
        Ok(())
    }

    /// Decodes the chunk whose turn it is.
    fn push_next(&mut self) -> Result<(), ProtocolError> {
        let seq = self.next;
        let Some(at) = self.arrived.iter().position(|(s, _)| *s == seq) else {
            return Ok(());
        };
        let (_, chunk) = self.arrived.swap_remove(at);
        let Some(chunk) = chunk else {
            let missing = ReassembleError::ChunkMissing {
                seq,
                count: self.count,
            };
            return self.vanished(missing.into());
        };
        match &mut self.decoder {
            Decoder::Item(r) => r.push(&chunk)?,
            Decoder::Attribute(r) => r.push(&chunk)?,
            Decoder::None => {}
        }
        self.progress.bytes_done += self.chunk_len(seq);
        self.progress.chunks_done += 1;
        self.next += 1;
        self.undrained = true;
        Ok(())
    }

    /// A chunk was not found: read the parent again, unless that happened
    /// too often already.
    fn vanished(&mut self, missing: ProtocolError) -> Result<(), ProtocolError> {
        if self.parent_reads > self.options.max_rereads {
            return Err(ProtocolError::ChunksVanished {
                key: self.table.key.key_text(&self.key),
                attempts: self.parent_reads,
            });
        }
        self.missing = Some(missing);
        self.arrived.clear();
        self.read_parent();
        Ok(())
    }

    /// Every chunk decoded: the item, or the attribute's last checks.
    fn complete(&mut self) -> Result<(), ProtocolError> {
        self.size = self.size();
        let decoder = core::mem::replace(&mut self.decoder, Decoder::None);
        let item = match decoder {
            Decoder::Item(r) => Some(r.finish()?),
            Decoder::Attribute(r) => {
                r.finish()?;
                None
            }
            Decoder::None => None,
        };
        let outcome = ReadOutcome {
            item,
            manifest: self.manifest.take(),
            bytes: self.taken,
            chunks_read: self.chunks_read,
            parent_reads: self.parent_reads,
            consumed_read_units: self.flights.consumed.read,
        };
        self.done(Some(outcome))
    }

    fn done(&mut self, outcome: Option<ReadOutcome>) -> Result<(), ProtocolError> {
        self.finish(Ok(outcome));
        Ok(())
    }

    fn fail(&mut self, error: ProtocolError) {
        self.finish(Err(error));
    }

    fn finish(&mut self, result: Result<Option<ReadOutcome>, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(Box::new(result)));
    }

    /// The next step while chunks are read; `None` when it changed state.
    fn poll_chunks(&mut self) -> Result<Option<Step<Option<ReadOutcome>>>, ProtocolError> {
        if self.restart {
            self.restart = false;
            return Ok(Some(Step::Restart));
        }
        if self.undrained && matches!(self.decoder, Decoder::Attribute(_)) {
            return Ok(Some(Step::Output));
        }
        if self.ask()? {
            return Ok(None);
        }
        if self.arrived.iter().any(|(s, _)| *s == self.next) || self.next == self.count {
            return Ok(Some(Step::Work));
        }
        Ok(Some(self.flights.idle()))
    }
}

impl Machine for ReadMachine {
    type Output = Option<ReadOutcome>;

    fn poll(&mut self) -> Step<Option<ReadOutcome>> {
        loop {
            if let Some(send) = self.flights.next_send() {
                return Step::Send(send);
            }
            match &mut self.phase {
                Phase::Parent => return self.flights.idle(),
                Phase::Chunks => match self.poll_chunks() {
                    Ok(Some(step)) => return step,
                    Ok(None) => {}
                    Err(error) => self.fail(error),
                },
                Phase::Done(result) => {
                    return match result.take() {
                        Some(result) => Step::Done(*result),
                        None => Step::Wait,
                    };
                }
            }
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        let result = match self.flights.land(id, response) {
            Some(Settled::Answer(Purpose::Parent, answer)) => self.parent_read(item(answer)),
            Some(Settled::Answer(Purpose::Record(version), answer)) => {
                self.record_read(version, item(answer))
            }
            Some(Settled::Answer(Purpose::Chunks { attempt, first }, answer)) => {
                if attempt == self.attempt && matches!(self.phase, Phase::Chunks) {
                    self.arrived(first, found(answer))
                } else {
                    Ok(())
                }
            }
            Some(Settled::Answer(Purpose::Range { attempt, first }, answer)) => {
                if attempt == self.attempt && matches!(self.phase, Phase::Chunks) {
                    self.range_arrived(first, answer)
                } else {
                    Ok(())
                }
            }
            Some(Settled::Failed(
                Purpose::Chunks { attempt, .. } | Purpose::Range { attempt, .. },
                _,
            )) if attempt != self.attempt => Ok(()),
            Some(Settled::Failed(Purpose::Range { .. }, failed))
                if ObjectRead::gone(&failed) && matches!(self.phase, Phase::Chunks) =>
            {
                // Deleted by an overwrite's cleanup, or overwritten: the
                // parent tells.
                let gone = self.object.as_ref().map(ObjectRead::gone_error);
                match gone {
                    Some(gone) => self.vanished(gone),
                    None => Err(failed.error),
                }
            }
            Some(Settled::Failed(_, failed)) => Err(failed.error),
            None => Ok(()),
        };
        if let Err(error) = result
            && !matches!(self.phase, Phase::Done(_))
        {
            self.fail(error);
        }
    }

    fn work(&mut self) {
        if !matches!(self.phase, Phase::Chunks) {
            return;
        }
        let result = if self.next == self.count {
            self.complete()
        } else {
            self.push_next()
        };
        if let Err(error) = result {
            self.fail(error);
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

    fn progress(&self) -> Progress {
        self.progress
    }

    fn consumed(&self) -> Consumed {
        self.flights.consumed
    }
}
