//! The chunk items a write has to send, packed into BatchWriteItems as
//! they come: all at once for an item split whole, a few at a time for
//! one cut while it is compressed or read. An anchor goes alone, and the
//! chunks after it only once it is stored (docs/FORMAT.md section 6,
//! "Anchors"): no crash leaves a chunk without its anchor.

use alloc::string::String;
use alloc::vec::Vec;

use crate::capacity::write_units;
use crate::manifest::ANCHOR_ATTRIBUTE;
use crate::plan::{BatchWrite, WriteRequest, index_entry_units, pack_batch_writes_by};
use crate::protocol::request::RequestId;
use crate::size::item_size;
use crate::table::Table;
use crate::value::Item;

/// Chunks waiting for a batch, and what was queued in all.
pub(super) struct Uploads {
    chunk_table: String,
    /// The chunk table has the anchors index: an anchor costs its entry.
    indexed: bool,
    batch_items: usize,
    ready: Vec<Item>,
    /// Chunks queued in all: a write that fails deletes chunks `0..queued`.
    pub(super) queued: u32,
    /// Exact bytes of the chunk items queued.
    pub(super) bytes: u64,
    /// Write units of the chunk items queued.
    pub(super) units: u64,
    /// The request writing an anchor, while it is out: nothing else goes.
    anchor_out: Option<RequestId>,
}

impl Uploads {
    pub(super) fn new(table: &Table, batch_items: usize) -> Self {
        Self {
            chunk_table: table.chunk_table.clone(),
            indexed: table.anchors.is_some(),
            batch_items: batch_items.clamp(1, crate::plan::MAX_BATCH_WRITE_ITEMS),
            ready: Vec::new(),
            queued: 0,
            bytes: 0,
            units: 0,
            anchor_out: None,
        }
    }

    /// Queues chunk items, in sequence order.
    pub(super) fn add(&mut self, chunks: Vec<Item>) {
        for chunk in chunks {
            let size = item_size(&chunk);
            self.bytes += size as u64;
            let entry = index_entry_units(&chunk, self.indexed, false);
            self.units += write_units(size, false) + entry;
            self.queued += 1;
            self.ready.push(chunk);
        }
    }

    /// True while fewer chunks wait than fill a batch: worth cutting more.
    pub(super) fn hungry(&self) -> bool {
        self.ready.len() < self.batch_items
    }

    /// True when nothing waits.
    pub(super) fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }

    /// The next batch to send (and whether it is an anchor's): an anchor
    /// alone once the chunks before it are out, a full batch, the chunks
    /// up to the next anchor, or what is left once `last`. None while an
    /// anchor is out.
    pub(super) fn next_batch(&mut self, last: bool) -> Option<(BatchWrite, bool)> {
        if self.anchor_out.is_some() || self.ready.is_empty() {
            return None;
        }
        let anchor = |chunk: &Item| chunk.contains_key(ANCHOR_ATTRIBUTE);
        let take = match self.ready.iter().position(anchor) {
            Some(0) => 1,
            Some(at) => at.min(self.batch_items),
            None if !last && self.hungry() => return None,
            None => self.ready.len().min(self.batch_items),
        };
        let is_anchor = anchor(&self.ready[0]);
        let table = &self.chunk_table;
        let requests = self
            .ready
            .drain(..take)
            .map(|chunk| (table.clone(), WriteRequest::Put(chunk)));
        // One batch: `take` chunk items are at most 25 and 10 MB.
        let batch = pack_batch_writes_by(requests, self.batch_items).pop()?;
        Some((batch, is_anchor))
    }

    /// A batch from [`Uploads::next_batch`] went out as request `id`.
    pub(super) fn sent(&mut self, id: RequestId, anchor: bool) {
        if anchor {
            self.anchor_out = Some(id);
        }
    }

    /// Request `id` settled: if it wrote the anchor out, the chunks it
    /// covers may go.
    pub(super) fn settled(&mut self, id: RequestId) {
        if self.anchor_out == Some(id) {
            self.anchor_out = None;
        }
    }
}

/// Exact bytes of the items a batch puts.
pub(super) fn put_bytes(batch: &BatchWrite) -> u64 {
    batch
        .requests
        .iter()
        .filter(|(_, r)| matches!(r, WriteRequest::Put(_)))
        .map(|(_, r)| r.size() as u64)
        .sum()
}

/// The chunk items of planned chunk batches, in order.
pub(super) fn chunk_items(batches: Vec<BatchWrite>) -> Vec<Item> {
    batches
        .into_iter()
        .flat_map(|b| b.requests)
        .filter_map(|(_, r)| match r {
            WriteRequest::Put(item) => Some(item),
            WriteRequest::Delete(_) => None,
        })
        .collect()
}
