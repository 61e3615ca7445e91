//! What a write is told, and what it reports.

use alloc::string::String;
use alloc::vec::Vec;

use crate::history::Retention;
use crate::manifest::Manifest;
use crate::plan::{Commit, Precondition, WriteKind, WriteMode};
use crate::protocol::policy::{DEFAULT_BATCH_ITEMS, DEFAULT_CONCURRENCY, RetryPolicy};
use crate::size::MAX_ITEM_BYTES;
use crate::table::Table;
use crate::version::VersionId;
use crate::write::split::{
    CodecChoice, DEFAULT_MAX_RAW_BYTES, DEFAULT_PARENT_BUDGET, SplitOptions,
};

/// How to write.
#[derive(Clone, Debug, PartialEq)]
pub struct PutOptions {
    /// The codec (default: `auto`, the core's policy).
    pub compression: CodecChoice,
    /// Batch (the default: half the write units of a transaction), atomic
    /// (one transaction), or atomic when it fits.
    pub mode: WriteMode,
    /// Attributes are spilled, largest first, until the parent is this
    /// many bytes or fewer.
    pub parent_budget: usize,
    /// Attributes that always stay on the parent (index keys).
    pub keep: Vec<String>,
    /// The largest item held in memory (an item or an upload) accepted, in
    /// raw payload bytes (default 64 MiB).
    pub max_item_bytes: usize,
    /// The largest streamed payload accepted, in bytes ([`PutSource::Stream`](super::PutSource::Stream)):
    /// `None` (the default) for no limit but [`crate::DEFAULT_MAX_CHUNK_KEYS`]
    /// chunks, since a stream is never held whole. A stream of unknown
    /// length is cut off when it passes either, and nothing is committed.
    pub max_stream_bytes: Option<u64>,
    /// Resends of each request.
    pub retry: RetryPolicy,
    /// The most batch requests in flight at once (default 16): a write
    /// starts at 4 and adapts to throttling between 1 and this.
    pub concurrency: usize,
    /// Chunks per BatchWriteItem (1..=25): smaller batches keep more
    /// requests in flight for one item.
    pub batch_items: usize,
    /// What the stored item must be for the write to go in (optimistic
    /// locking: a failed precondition, or a concurrent writer committing
    /// first, is a conflict). `None` (the default): the last writer wins,
    /// as with PutItem.
    pub precondition: Option<Precondition>,
    /// The largest chunk item, exact (default and maximum 409,600).
    pub chunk_item_bytes: usize,
    /// Items this size or smaller are not split, and the parent must fit
    /// it (default and maximum 409,600).
    pub item_limit: usize,
    /// Keep a compressed payload on the parent when it fits there
    /// (default true).
    pub inline: bool,
    /// Version history ([`crate::history`]): how many replaced versions
    /// to keep, and for how long. `None` (the default): as the stored item
    /// keeps (nothing, unless an earlier write turned history on).
    pub history: Option<Retention>,
    /// The writer's note on this version (who changed it, and why), at
    /// most [`crate::history::MAX_NOTE_BYTES`]: listed with the version
    /// once it is kept.
    pub note: Option<String>,
    /// Groups of the stored version this write reuses ([`SplitOptions::carried`]):
    /// set by an update that does not change them, whose item then lacks
    /// their attributes. Empty (the default) for any other write.
    pub carried: Vec<Manifest>,
}

impl Default for PutOptions {
    fn default() -> Self {
        Self {
            compression: CodecChoice::Auto,
            mode: WriteMode::Batch,
            parent_budget: DEFAULT_PARENT_BUDGET,
            keep: Vec::new(),
            max_item_bytes: DEFAULT_MAX_RAW_BYTES,
            max_stream_bytes: None,
            retry: RetryPolicy::default(),
            concurrency: DEFAULT_CONCURRENCY,
            batch_items: DEFAULT_BATCH_ITEMS,
            precondition: None,
            chunk_item_bytes: MAX_ITEM_BYTES,
            item_limit: MAX_ITEM_BYTES,
            inline: true,
            history: None,
            note: None,
            carried: Vec::new(),
        }
    }
}

impl PutOptions {
    /// How the commit treats a concurrent writer: optimistic locking when
    /// there is a precondition, last writer wins otherwise.
    pub fn commit(&self) -> Commit {
        match self.precondition {
            Some(_) => Commit::IfExpected,
            None => Commit::Overwrite,
        }
    }

    /// The split options of a write to `table` as `version`.
    pub fn split_options(&self, table: &Table, version: VersionId) -> SplitOptions {
        let mut options = SplitOptions::new(table.key.clone(), version);
        options.layout = table.layout.clone();
        options.compression = self.compression;
        options.parent_budget = self.parent_budget;
        options.keep = self.keep.clone();
        options.index_keys = table.index_keys.clone();
        options.ttl = table.ttl.clone();
        options.max_raw_bytes = self.max_item_bytes;
        options.chunk_item_bytes = self.chunk_item_bytes;
        options.item_limit = self.item_limit;
        options.inline = self.inline;
        options.carried = self.carried.clone();
        options
    }
}

/// How a write went in.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PutOutcome {
    /// How it was written: one PutItem, one transaction, or batches and a
    /// commit.
    pub mode: WriteKind,
    /// The new version, when the item was split.
    pub manifest: Option<Manifest>,
    /// The virtual item's version it replaced, when it replaced one and
    /// knows which (after an ambiguous failure it may not: the replaced
    /// version's chunks are then left to `gc`).
    pub replaced: Option<VersionId>,
    /// An item (virtual or plain) was stored under the key before, as far
    /// as the write knows.
    pub replaced_item: bool,
    /// Another writer's commit replaced this write's right after it (or
    /// raced it after a failure left this write's own commit in doubt):
    /// the write succeeded, as a PutItem overwritten at once does, and its
    /// chunks were deleted. Only under last writer wins.
    pub superseded: bool,
    /// Bytes of the parent and chunk items written.
    pub bytes_written: u64,
    /// Bytes of the payload a streamed write took in (0 otherwise).
    pub payload_bytes: u64,
    /// Write capacity units the plan costs (before cleanup).
    pub planned_write_units: u64,
    /// Deletes of the replaced version's chunks that failed (left to `gc`).
    pub cleanup_left: usize,
    /// Write capacity units the store reported consuming (cleanup included).
    pub consumed_write_units: f64,
    /// Read capacity units of the parent reads the protocol made.
    pub consumed_read_units: f64,
}
