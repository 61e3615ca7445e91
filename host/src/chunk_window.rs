//! Fetching a virtual item's chunks in sequence order, a few small
//! BatchGetItem requests ahead of the reader that consumes them: what a
//! streamed read (`get_file`) and a whole-item read (`get`) share, so that
//! neither holds more than the requests in flight beside what it builds.

use std::ops::Range;

use dynaslice_core::plan::BatchGet;
use dynaslice_core::{Item, ReassembleError};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesOrdered;

use crate::error::HostError;
use crate::progress::Progress;
use crate::send::Sender;

/// Chunks asked for in one BatchGetItem: with at most [`MAX_WINDOW`]
/// requests in flight, at most 6 chunks (~2.4 MB of chunk items) are
/// fetched ahead of the reader. One rather than two (or four): the first
/// chunks arrive sooner and the last request is short, so decoding
/// overlaps the fetching (bench:model, with reads starting at the whole
/// window: 10 MiB JSON get 57 % of the bound at two, 61-66 % at one). A
/// read plan's requests may carry 16 MB each (DynamoDB's bound), which
/// next to a 64 MiB item would be most of it, and one such request is one
/// long wait: small requests in flight together overlap their latency.
pub const CHUNKS_PER_REQUEST: u32 = 1;

/// The most requests ahead of the reader, whatever the sender's pace
/// allows (it adapts to throttling below this): a read's memory stays
/// bounded.
pub const MAX_WINDOW: usize = 6;

/// The chunk requests of one read, answered in sequence order.
pub(crate) struct ChunkWindow<'a> {
    sender: &'a Sender<'a>,
    chunk_table: &'a str,
    count: u32,
    /// Advanced by each chunk item's size as it arrives.
    progress: &'a dyn Progress,
    /// Chunks asked for so far (`0..asked`).
    asked: u32,
    /// Chunks handed out so far (`0..given`).
    given: u32,
    requests: FuturesOrdered<BoxFuture<'a, Result<Vec<Item>, HostError>>>,
}

/// The chunk items one request found (a BatchGetItem returns them in any
/// order, and leaves out keys with no item).
pub(crate) struct Found {
    /// The chunks asked for.
    pub seqs: Range<u32>,
    items: Vec<Item>,
}

impl Found {
    /// Takes the chunk item whose key attributes are `key`'s, if it was found.
    pub fn take(&mut self, key: &Item) -> Option<Item> {
        let at = self.items.iter().position(|item| {
            key.iter()
                .all(|(name, value)| item.get(name) == Some(value))
        })?;
        Some(self.items.swap_remove(at))
    }
}

impl<'a> ChunkWindow<'a> {
    /// A window over chunks `0..count` in `chunk_table`, keeping
    /// as many requests in flight as the sender's pace allows, at most
    /// [`MAX_WINDOW`].
    pub fn new(
        sender: &'a Sender<'a>,
        chunk_table: &'a str,
        count: u32,
        progress: &'a dyn Progress,
    ) -> Self {
        Self {
            sender,
            chunk_table,
            count,
            progress,
            asked: 0,
            given: 0,
            requests: FuturesOrdered::new(),
        }
    }

    /// The next request's chunks, in sequence order, once it is answered;
    /// `None` when every chunk was handed out. First sends requests for the
    /// chunks after it, up to the concurrency, keyed by `key_of(seq)`.
    pub async fn next(
        &mut self,
        key_of: impl Fn(u32) -> Result<Item, ReassembleError>,
    ) -> Result<Option<Found>, HostError> {
        if self.given >= self.count {
            return Ok(None);
        }
        while self.requests.len() < self.sender.pace.limit().min(MAX_WINDOW)
            && self.asked < self.count
        {
            let last = self
                .asked
                .saturating_add(CHUNKS_PER_REQUEST)
                .min(self.count);
            let keys = (self.asked..last)
                .map(&key_of)
                .collect::<Result<Vec<_>, _>>()?;
            let get = BatchGet {
                table: self.chunk_table.to_string(),
                keys,
                consistent: true,
                expected_bytes: 0,
                attributes: Vec::new(),
            };
            let (sender, progress) = (self.sender, self.progress);
            self.requests.push_back(Box::pin(
                async move { sender.batch_get(get, progress).await },
            ));
            self.asked = last;
        }
        let Some(items) = self.requests.next().await else {
            return Err(HostError::Internal(
                "no chunk request left to wait for".into(),
            ));
        };
        let first = self.given;
        self.given = first.saturating_add(CHUNKS_PER_REQUEST).min(self.count);
        Ok(Some(Found {
            seqs: first..self.given,
            items: items?,
        }))
    }
}
