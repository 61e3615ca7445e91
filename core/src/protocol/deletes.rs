//! Chunk deletes in anchor order (docs/FORMAT.md section 6, "Anchors"):
//! every item that is no anchor first; the anchors only once all of those
//! were answered; and no anchor at all when one of those failed. A crash
//! or a failure never leaves a chunk whose anchor is gone, so `gc` reading
//! the anchors index alone finds everything left behind.

use alloc::vec::Vec;

use super::flights::{Flights, Resend};
use super::request::{ObjectRequest, Request, RequestId};
use crate::layout::{is_anchor, parse_chunk_key};
use crate::plan::{BatchWrite, pack_batch_writes};
use crate::table::Table;

/// Deletes waiting to go, in anchor order, with the purpose each batch is
/// sent for.
pub(crate) struct Deletes<P> {
    /// Batches without anchors: sent first, in any order.
    rest: Vec<(BatchWrite, P)>,
    /// Batches of anchors: sent once `rest` is empty and answered.
    anchors: Vec<(BatchWrite, P)>,
    /// The batches of `rest` out.
    out: Vec<RequestId>,
    /// A batch of `rest` failed: the anchors stay.
    held: bool,
    /// Deletes of S3 objects (and aborts of their uploads): sent first,
    /// each on its own, nothing waits for them.
    objects: Vec<(ObjectRequest, P)>,
}

impl<P> Default for Deletes<P> {
    fn default() -> Self {
        Self {
            rest: Vec::new(),
            anchors: Vec::new(),
            out: Vec::new(),
            held: false,
            objects: Vec::new(),
        }
    }
}

impl<P> Deletes<P> {
    /// Queues `batches` of deletes of `table`'s chunk items, repacked so no
    /// batch mixes anchors with the rest; `purpose` names a batch of so
    /// many requests. A key that does not parse as a chunk key goes with
    /// the anchors (last).
    pub(crate) fn add(
        &mut self,
        table: &Table,
        batches: Vec<BatchWrite>,
        purpose: impl Fn(usize) -> P,
    ) {
        let (mut rest, mut anchors) = (Vec::new(), Vec::new());
        for request in batches.into_iter().flat_map(|b| b.requests) {
            let (crate::plan::WriteRequest::Delete(key) | crate::plan::WriteRequest::Put(key)) =
                &request.1;
            match parse_chunk_key(&table.key, &table.layout, key) {
                Ok(chunk) if !is_anchor(chunk.seq) => rest.push(request),
                _ => anchors.push(request),
            }
        }
        let tagged = |batch: BatchWrite| {
            let count = batch.requests.len();
            (batch, purpose(count))
        };
        self.rest
            .extend(pack_batch_writes(rest.drain(..)).into_iter().map(tagged));
        self.anchors
            .extend(pack_batch_writes(anchors.drain(..)).into_iter().map(tagged));
    }

    /// Queues an S3 delete (or abort), sent for `purpose`.
    pub(crate) fn add_object(&mut self, request: ObjectRequest, purpose: P) {
        self.objects.push((request, purpose));
    }

    /// Sends what may go while the pace has room; true when it sent any.
    pub(crate) fn send(&mut self, flights: &mut Flights<P>) -> bool {
        let mut sent = false;
        while flights.room() {
            if let Some((request, purpose)) = self.objects.pop() {
                flights.send(Request::Object(request), purpose, Resend::Transient);
            } else if let Some((batch, purpose)) = self.rest.pop() {
                let id = flights.send(Request::BatchWrite(batch), purpose, Resend::Transient);
                self.out.push(id);
            } else if self.out.is_empty()
                && !self.held
                && let Some((batch, purpose)) = self.anchors.pop()
            {
                flights.send(Request::BatchWrite(batch), purpose, Resend::Transient);
            } else {
                break;
            }
            sent = true;
        }
        sent
    }

    /// Request `id` settled (`ok`: answered whole); ids not of a batch
    /// without anchors are ignored.
    pub(crate) fn settled(&mut self, id: RequestId, ok: bool) {
        if let Some(at) = self.out.iter().position(|i| *i == id) {
            self.out.swap_remove(at);
            self.held |= !ok;
        }
    }

    /// True while a batch may still go: nothing is left but held anchors.
    pub(crate) fn waiting(&self) -> bool {
        !self.objects.is_empty()
            || !self.rest.is_empty()
            || (!self.held && !self.anchors.is_empty())
    }

    /// Drops every batch not sent (held anchors included) and counts their
    /// deletes: what a machine that stops, or whose deletes failed, leaves
    /// to `gc`.
    pub(crate) fn take_left(&mut self) -> usize {
        let left = |batches: &mut Vec<(BatchWrite, P)>| -> usize {
            batches.drain(..).map(|(b, _)| b.requests.len()).sum()
        };
        let objects = self.objects.drain(..).count();
        left(&mut self.rest) + left(&mut self.anchors) + objects
    }
}
