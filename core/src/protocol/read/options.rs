//! What a read is told, and what it delivers.

use alloc::string::String;
use alloc::vec::Vec;

use crate::manifest::Manifest;
use crate::protocol::policy::{DEFAULT_CONCURRENCY, MAX_REREADS, RetryPolicy};
use crate::value::Item;
use crate::version::VersionId;
use crate::write::split::DEFAULT_MAX_RAW_BYTES;

/// How to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetOptions {
    /// The largest raw payload read whole (default 64 MiB): a larger
    /// stored manifest is refused before anything is allocated. A read of
    /// one attribute ([`Sink::Attribute`]) streams it whatever its size;
    /// there it bounds only what must be held whole (a raw snappy payload,
    /// the attributes' names).
    pub max_item_bytes: usize,
    /// Times the parent is read again when chunks vanished under a
    /// concurrent overwrite (default 5).
    pub max_rereads: u32,
    /// Resends of each request.
    pub retry: RetryPolicy,
    /// The most BatchGetItem requests in flight at once (default 16; each
    /// of [`CHUNKS_PER_READ`](crate::protocol::policy::CHUNKS_PER_READ) chunks): a read starts with its window
    /// ([`READ_WINDOW`](crate::protocol::policy::READ_WINDOW)) in flight and adapts to throttling between 1 and
    /// this.
    pub concurrency: usize,
    /// A version the item's history keeps ([`crate::history`]) to read
    /// instead of the current one (`None`: the current one). The current
    /// version's id reads the current item.
    pub version: Option<VersionId>,
    /// Frames of the stored version not to read (its own or its groups',
    /// [`Manifest::frames`], by id): an update that reuses them reads only
    /// the rest. The item read lacks their attributes. Empty (the
    /// default): the whole item.
    pub skip_frames: Vec<VersionId>,
}

impl Default for GetOptions {
    fn default() -> Self {
        Self {
            max_item_bytes: DEFAULT_MAX_RAW_BYTES,
            max_rereads: MAX_REREADS,
            retry: RetryPolicy::default(),
            concurrency: DEFAULT_CONCURRENCY,
            version: None,
            skip_frames: Vec::new(),
        }
    }
}

/// What a read delivers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sink {
    /// The whole item.
    Item,
    /// The bytes of one `S` or `B` attribute (a string's as UTF-8), taken
    /// with [`ReadMachine::output`].
    Attribute {
        /// The `S` or `B` attribute whose bytes are read.
        name: String,
        /// Whether the executor can throw away what it took so far
        /// ([`Step::Restart`]), to start again from a newer version: a
        /// file can, a stream already handed to its reader cannot (a read
        /// whose version was replaced then fails with `CHUNKS_VANISHED`, a
        /// conflict).
        restartable: bool,
    },
}

/// A read's result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ReadOutcome {
    /// The item exactly as it was written ([`Sink::Item`]).
    pub item: Option<Item>,
    /// Its manifest, when it was split.
    pub manifest: Option<Manifest>,
    /// Bytes of the attribute taken ([`Sink::Attribute`]).
    pub bytes: u64,
    /// Chunk items read, over every attempt.
    pub chunks_read: u32,
    /// Parent reads it took (more than 1 when a concurrent overwrite
    /// replaced the item mid-read).
    pub parent_reads: u32,
    /// Read capacity units the store reported consuming.
    pub consumed_read_units: f64,
}
