//! The chunk items a write has to send, packed into BatchWriteItems as
//! they come: all at once for an item split whole, a few at a time for
//! one cut while it is compressed or read.

use alloc::string::String;
use alloc::vec::Vec;

use crate::capacity::write_units;
use crate::plan::{BatchWrite, WriteRequest, pack_batch_writes_by};
use crate::size::item_size;
use crate::value::Item;

/// Chunks waiting for a batch, and what was queued in all.
pub(super) struct Uploads {
    chunk_table: String,
    batch_items: usize,
    ready: Vec<Item>,
    /// Chunks queued in all: a write that fails deletes chunks `0..queued`.
    pub(super) queued: u32,
    /// Exact bytes of the chunk items queued.
    pub(super) bytes: u64,
    /// Write units of the chunk items queued.
    pub(super) units: u64,
}

impl Uploads {
    pub(super) fn new(chunk_table: &str, batch_items: usize) -> Self {
        Self {
            chunk_table: chunk_table.into(),
            batch_items: batch_items.clamp(1, crate::plan::MAX_BATCH_WRITE_ITEMS),
            ready: Vec::new(),
            queued: 0,
            bytes: 0,
            units: 0,
        }
    }

    /// Queues chunk items, in sequence order.
    pub(super) fn add(&mut self, chunks: Vec<Item>) {
        for chunk in chunks {
            let size = item_size(&chunk);
            self.bytes += size as u64;
            self.units += write_units(size, false);
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

    /// The next batch to send: a full one, or what is left once `last`.
    pub(super) fn next_batch(&mut self, last: bool) -> Option<BatchWrite> {
        if self.ready.is_empty() || (!last && self.hungry()) {
            return None;
        }
        let take = self.ready.len().min(self.batch_items);
        let table = &self.chunk_table;
        let requests = self
            .ready
            .drain(..take)
            .map(|chunk| (table.clone(), WriteRequest::Put(chunk)));
        // One batch: `take` chunk items are at most 25 and 10 MB.
        pack_batch_writes_by(requests, self.batch_items).pop()
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
