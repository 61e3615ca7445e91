//! Where a write's chunks come from: the item split whole and planned, an
//! in-memory item cut as it is compressed, or a stream's pieces cut as
//! they arrive; and the chunk batches going out as the pace allows.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::uploads::{chunk_items, put_bytes};
use super::{Commit, Cutter, Phase, Purpose, PutMachine, PutOutcome, PutSource};
use crate::capacity::write_units;
use crate::plan::{WriteKind, WriteMode, WriteSteps, plan_streamed_commit_as, plan_write_as};
use crate::protocol::error::ProtocolError;
use crate::protocol::flights::Resend;
use crate::protocol::policy::{HOLD_BYTES, INPUT_BYTES, WORK_BYTES};
use crate::protocol::request::{ObjectKey, Request};
use crate::protocol::{Progress, Step};
use crate::size::item_size;
use crate::upload::{UploadRules, restamp};
use crate::value::Item;
use crate::write::item_stream::{ItemSplit, split_item_streamed};
use crate::write::split::{SplitError, SplitItem, split_item};
use crate::write::stream_split::{StreamSplit, stream_compression};

impl PutMachine<'_> {
    /// Takes the next piece of a [`PutSource::Stream`]'s payload, when
    /// polled for [`Step::Input`] (compressing it: CPU-heavy).
    pub fn input(&mut self, bytes: &[u8]) {
        // An empty piece is no piece (a source may yield one): only
        // `end_input` ends the payload.
        if bytes.is_empty() || !matches!(self.phase, Phase::Chunks) {
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
                Cutter::Stream(stream) => self.stream_ended(stream.finish()?),
                Cutter::Object(stream) => self.object_ended(stream),
                _ => Err(ProtocolError::Cancelled),
            }
        });
        if let Err(error) = ended {
            self.fail(error);
        }
    }

    pub(super) fn push_input(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        let Some(limit) = self.hold_limit() else {
            return self.cut_input(bytes);
        };
        let mut held = match core::mem::replace(&mut self.cutter, Cutter::Idle) {
            Cutter::Holding(held) => held,
            _ => Vec::new(),
        };
        held.extend_from_slice(bytes);
        if !bytes.is_empty() && held.len() < limit {
            self.payload_bytes = held.len() as u64;
            self.progress.bytes_done = self.payload_bytes;
            self.cutter = Cutter::Holding(held);
            return Ok(());
        }
        if bytes.is_empty()
            && let PutSource::Stream { len, .. } = &mut self.source
        {
            // It ended short of the threshold: a stream of that length.
            *len = Some(held.len() as u64);
        }
        self.cut_input(&held)
    }

    /// How much of a stream of unknown length is held before its place is
    /// chosen, while it is (`None` once it is, or when its length is known
    /// or the table keeps no payload in S3): the S3 threshold, at most
    /// [`HOLD_BYTES`], and one byte past `max_stream_bytes` (the cutter
    /// then refuses it). A stream that ends before it is written as one of
    /// its length (in chunks); one that reaches it goes to S3.
    fn hold_limit(&self) -> Option<usize> {
        let store = self.table.objects.as_ref()?;
        let waiting = matches!(self.cutter, Cutter::Idle | Cutter::Holding(_));
        let unknown = matches!(self.source, PutSource::Stream { len: None, .. });
        let bound = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let past_max = self
            .options
            .max_stream_bytes
            .map_or(usize::MAX, |max| bound(max).saturating_add(1));
        (waiting && unknown).then(|| bound(store.threshold).min(HOLD_BYTES).min(past_max))
    }

    /// Cuts a stream's piece (starting the cutter with the first).
    fn cut_input(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        if matches!(self.cutter, Cutter::Idle)
            && let PutSource::Stream {
                parent,
                attribute,
                len,
            } = &self.source
        {
            let compression = stream_compression(self.options.compression, bytes);
            let mut split_options = self.split_options_now();
            split_options.max_raw_bytes = self
                .options
                .max_stream_bytes
                .map_or(usize::MAX, |max| usize::try_from(max).unwrap_or(usize::MAX));
            let (parent, attribute, len) = (parent.clone(), attribute.clone(), *len);
            self.object = self.object_for_stream();
            self.cutter = match &self.object {
                Some(upload) => Cutter::Object(Box::new(StreamSplit::object(
                    parent,
                    attribute,
                    len,
                    compression,
                    &split_options,
                    upload.part_bytes,
                )?)),
                None => Cutter::Stream(Box::new(StreamSplit::new(
                    parent,
                    attribute,
                    len,
                    compression,
                    &split_options,
                )?)),
            };
        }
        if bytes.is_empty() {
            return Ok(());
        }
        if let Cutter::Object(stream) = &mut self.cutter {
            let parts = stream.push_parts(bytes)?;
            self.payload_bytes = stream.received();
            self.progress.bytes_done = self.payload_bytes;
            self.queue_parts(parts);
            return Ok(());
        }
        let Cutter::Stream(stream) = &mut self.cutter else {
            return Ok(());
        };
        let chunks = stream.push(bytes)?;
        self.payload_bytes = stream.received();
        self.progress.bytes_done = self.payload_bytes;
        self.queue(chunks);
        Ok(())
    }

    /// Splits the item (the first time with the executor's clock, again in
    /// the store's time), or stamps an upload in the store's time.
    pub(super) fn split_now(&mut self) -> Result<(), ProtocolError> {
        let mut split_options = self.split_options_now();
        // An item that may go to S3 is split whole into one frame, then
        // cut into parts ([`PutMachine::offload`]).
        let to_s3 = self.may_offload();
        if to_s3 {
            split_options.group_bytes = usize::MAX;
        }
        match &mut self.source {
            PutSource::Item(item) if self.options.mode == WriteMode::Batch && !to_s3 => {
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
                if let Some(manifest) = split.manifest.as_ref().filter(|m| m.object.is_some()) {
                    // An object a client stored straight (a presigned
                    // PUT): its key names its version, which stays.
                    if !split.chunks.is_empty() {
                        return Err(SplitError::BadOptions {
                            reason: "an upload stored in S3 has no chunks",
                        }
                        .into());
                    }
                    self.version = manifest.version;
                    self.uploaded = manifest.object.as_ref().map(|o| ObjectKey {
                        bucket: o.bucket.clone(),
                        key: o.key.clone(),
                    });
                } else if let Some(mut manifest) = split.manifest.take() {
                    let rules = UploadRules::of(&self.table, self.options.max_item_bytes as u64);
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

    /// Plans a whole split: one PutItem, one transaction, or every chunk
    /// then the commit.
    pub(super) fn plan_whole(&mut self, split: SplitItem) -> Result<(), ProtocolError> {
        // An object's commit puts the note and the history on its parent.
        let Some(mut split) = self.offload(split) else {
            return Ok(());
        };
        let kept = self.keep_history(&mut split.parent)?;
        // The record goes out with the chunks, before the commit.
        if let Some(record) = kept.as_ref().and_then(|k| k.record.clone()) {
            split.chunks.push(record);
        }
        let target = self.table.keys_target();
        let plan = plan_write_as(
            &split,
            &target,
            &self.expect,
            self.options.mode,
            self.commit_as(),
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
        self.cleanup = match kept {
            Some(kept) => kept.releases,
            None => plan.cleanup,
        };
        self.mode = plan.steps.kind();
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
    pub(super) fn queue(&mut self, chunks: Vec<Item>) {
        if !chunks.is_empty() {
            self.released = true;
        }
        self.uploads.add(chunks);
        self.progress.chunks_total = self.uploads.queued;
    }

    /// Cuts the next piece of an in-memory item.
    pub(super) fn cut(&mut self) -> Result<(), ProtocolError> {
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
    pub(super) fn stream_ended(&mut self, split: SplitItem) -> Result<(), ProtocolError> {
        self.cutter = Cutter::Ended;
        if !self.released && matches!(self.source, PutSource::Item(_)) {
            return self.plan_whole(split);
        }
        let mut split = split;
        let kept = self.keep_history(&mut split.parent)?;
        let mut last = core::mem::take(&mut split.chunks);
        last.extend(kept.as_ref().and_then(|k| k.record.clone()));
        self.queue(last);
        // A stream of unknown length learns its total now.
        self.progress.bytes_total = self.progress.bytes_total.max(self.payload_bytes);
        self.progress.bytes_done = self.progress.bytes_total;
        let target = self.table.keys_target();
        let plan = plan_streamed_commit_as(&split, &target, &self.expect, self.commit_as())?;
        self.planned_units = self.uploads.units + write_units(item_size(&split.parent), false);
        self.cleanup = match kept {
            Some(kept) => kept.releases,
            None => plan.cleanup,
        };
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

    /// The next step while chunks go out; `None` when the phase moved on.
    pub(super) fn poll_chunks(&mut self) -> Option<Step<PutOutcome>> {
        let ended = matches!(self.cutter, Cutter::Ended);
        if self.flights.room()
            && let Some((batch, anchor)) = self.uploads.next_batch(ended)
        {
            let purpose = Purpose::Chunks(put_bytes(&batch), batch.requests.len() as u32);
            let id = self
                .flights
                .send(Request::BatchWrite(batch), purpose, Resend::Transient);
            self.uploads.sent(id, anchor);
            return None;
        }
        let hungry = self.uploads.hungry();
        match &self.cutter {
            Cutter::Items(_) if hungry => Some(Step::Work),
            Cutter::Idle | Cutter::Holding(_) | Cutter::Stream(_) if hungry => {
                Some(Step::Input(INPUT_BYTES))
            }
            Cutter::Ended if self.uploads.is_empty() && self.flights.open() == 0 => {
                self.send_commit();
                None
            }
            _ => Some(self.flights.idle()),
        }
    }
}
