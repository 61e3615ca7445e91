//! How a write ends: its outcome, the deletes of a failed write's own
//! chunks (once the requests out have settled), and the deletes after a
//! commit, sent as the pace allows.

use alloc::vec::Vec;

use super::commit::Committed;
use super::{Cutter, Deletes, Phase, Purpose, PutMachine, PutOutcome};
use crate::layout::chunk_key;
use crate::plan::{BatchWrite, WriteKind, WriteRequest, pack_batch_writes};
use crate::protocol::error::ProtocolError;
use crate::size::item_size;

impl PutMachine<'_> {
    /// A failure: before any chunk may have been written, the end; after,
    /// this write's chunks are deleted first.
    pub(super) fn fail(&mut self, error: ProtocolError) {
        match self.phase {
            Phase::Chunks if self.uploads.queued > 0 || self.object_started() => {
                self.abort_with(Err(error))
            }
            _ => self.finish(Err(error)),
        }
    }

    /// Stops writing chunks; once the requests out have settled, deletes
    /// every chunk this write may have stored, then finishes with `then`.
    pub(super) fn abort_with(&mut self, then: Result<PutOutcome, ProtocolError>) {
        self.flights.stop();
        self.cutter = Cutter::Ended;
        let abort = match core::mem::take(&mut self.abort) {
            abort if !abort.is_empty() => abort,
            _ => self.own_chunk_deletes(),
        };
        self.deletes = Deletes::default();
        self.deletes.add(&self.table, abort, |_| Purpose::Abort);
        self.phase = Phase::Abort {
            then: Some(then),
            sent: false,
        };
    }

    /// Deletes of chunks `0..queued` of this write's version.
    pub(super) fn own_chunk_deletes(&self) -> Vec<BatchWrite> {
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

    pub(super) fn finish(&mut self, result: Result<PutOutcome, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(result));
    }

    /// The outcome, once committed as `committed` says.
    pub(super) fn outcome_with(&self, committed: Committed) -> PutOutcome {
        let parent = self.split.as_ref().map_or(0, |s| item_size(&s.parent)) as u64;
        let bytes_written = match self.mode {
            WriteKind::Batch => {
                parent + self.uploads.bytes + self.object.as_ref().map_or(0, |o| o.bytes)
            }
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
    pub(super) fn send_deletes(&mut self) -> bool {
        self.deletes.send(&mut self.flights)
    }
}
