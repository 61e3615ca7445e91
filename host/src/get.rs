//! Reading virtual items: a consistent parent read, then the exact chunk
//! keys by BatchGetItem, every byte checked by core's `Reassembler`. A chunk
//! missing because a concurrent overwrite deleted it sends the reader back
//! to the parent, a bounded number of times.
//!
//! Chunks are fetched in sequence order a few small requests ahead (see
//! [`crate::CHUNKS_PER_REQUEST`]) and each is decoded into the payload and
//! dropped as its turn comes: the read holds the raw payload, the requests
//! in flight and, at the end, the decoded item; about twice the item, not
//! every chunk beside the payload and the item.

use aws_sdk_dynamodb::Client;
use dynaslice_core::plan::{Target, parent_get, plan_read};
use dynaslice_core::{
    DEFAULT_MAX_RAW_BYTES, Item, Manifest, ReassembleError, ReassembleOptions, Reassembler,
};

use crate::chunk_window::ChunkWindow;
use crate::error::HostError;
use crate::progress::Progress;
use crate::retry::RetryPolicy;
use crate::send::Sender;
use crate::table::TableConfig;

/// How to read.
#[derive(Clone, Debug)]
pub struct GetOptions {
    /// The largest raw payload accepted (default 64 MiB): a larger stored
    /// manifest is refused before anything is allocated. [`crate::get_file`]
    /// streams its attribute whatever its size; there it bounds only what
    /// must be held whole (a raw snappy payload, the attributes' names).
    pub max_item_bytes: usize,
    /// Times the parent is re-read when chunks vanished under a concurrent
    /// overwrite (default 5).
    pub max_rereads: u32,
    /// Retries of each request.
    pub retry: RetryPolicy,
    /// The most BatchGetItem requests in flight at once (default 16; each
    /// of at most [`crate::CHUNKS_PER_REQUEST`] chunks): the host starts at
    /// 6 (the read window) and adapts to throttling between 1 and this.
    pub concurrency: usize,
}

impl Default for GetOptions {
    fn default() -> Self {
        Self {
            max_item_bytes: DEFAULT_MAX_RAW_BYTES,
            max_rereads: 5,
            retry: RetryPolicy::default(),
            concurrency: crate::send::DEFAULT_CONCURRENCY,
        }
    }
}

/// An item read back whole.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Fetched {
    /// The item exactly as it was written.
    pub item: Item,
    /// Its manifest, when it was split.
    pub manifest: Option<Manifest>,
    /// Chunk items read.
    pub chunks_read: usize,
    /// Parent reads it took (more than 1 when a concurrent overwrite
    /// replaced the item mid-read).
    pub parent_reads: u32,
    /// Read capacity units the server reported consuming.
    pub consumed_read_units: f64,
}

/// The key attributes of `key`, checked against the table's key schema.
pub fn check_key(table: &TableConfig, key: &Item) -> Result<Item, HostError> {
    table.key.check_key(key).map_err(HostError::Key)
}

/// The version a parent carries, if it is split and its manifest readable
/// (the caller's next plan reports an unreadable one).
fn version_of(target: &Target<'_>, parent: &Item) -> Option<dynaslice_core::VersionId> {
    Some(target.read_manifest(parent).ok()??.version)
}

/// Reads the item with `key` from `table`; `None` when there is none. The
/// result is one complete version some writer committed, or an error.
pub async fn get(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    options: &GetOptions,
    progress: &dyn Progress,
) -> Result<Option<Fetched>, HostError> {
    let key = check_key(table, key)?;
    let sender = Sender::for_reads(client, options.retry, options.concurrency);
    let target = table.target_within(options.max_item_bytes);
    let mut reassemble_options = ReassembleOptions::new(&table.key, &table.layout);
    reassemble_options.max_raw_bytes = options.max_item_bytes;
    let mut parent_reads = 0;
    loop {
        parent_reads += 1;
        let Some(parent) = sender.get(parent_get(&target, &key)).await? else {
            return Ok(None);
        };
        // An oversized or damaged manifest is refused before any chunk key
        // is built.
        let plan = plan_read(&parent, &target, true)?;
        // Chunk items' exact sizes: what batch_get reports as they arrive.
        progress.start(plan.batches.iter().map(|b| b.expected_bytes as u64).sum());
        let mut reassembler = Reassembler::new(&parent, &reassemble_options)?;
        let mut chunks_read = 0;
        let fetched =
            fetch_chunks(&sender, table, &mut reassembler, &mut chunks_read, progress).await;
        let item = fetched.and_then(|()| Ok(crate::cpu::heavy(|| reassembler.finish())?));
        match item {
            Ok(item) => {
                return Ok(Some(Fetched {
                    item,
                    manifest: plan.manifest,
                    chunks_read,
                    parent_reads,
                    consumed_read_units: sender.consumed.read_units(),
                }));
            }
            Err(HostError::Reassemble(missing @ ReassembleError::ChunkMissing { .. }))
                if parent_reads <= options.max_rereads =>
            {
                // Deleted under us by an overwrite's cleanup? Only if the
                // parent moved on; if not, the store lost a chunk.
                let now = sender.get(parent_get(&target, &key)).await?;
                let version = |p: &Item| version_of(&target, p);
                if now.as_ref().and_then(version) == version(&parent) {
                    return Err(missing.into());
                }
            }
            Err(HostError::Reassemble(ReassembleError::ChunkMissing { .. })) => {
                return Err(HostError::ChunksVanished {
                    key: crate::json::key_text(&table.key, &key),
                    attempts: parent_reads,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

/// Fetches the chunks `reassembler` needs, in order, pushing each as its
/// turn comes and dropping it; counts them in `pushed`.
async fn fetch_chunks(
    sender: &Sender<'_>,
    table: &TableConfig,
    reassembler: &mut Reassembler,
    pushed: &mut usize,
    progress: &dyn Progress,
) -> Result<(), HostError> {
    let count = reassembler.chunk_count();
    let mut window = ChunkWindow::new(sender, &table.chunk_table, count, progress);
    while let Some(mut found) = window.next(|seq| reassembler.chunk_key(seq)).await? {
        for seq in found.seqs.clone() {
            let chunk = found
                .take(&reassembler.chunk_key(seq)?)
                .ok_or(ReassembleError::ChunkMissing { seq, count })?;
            crate::cpu::heavy(|| reassembler.push(&chunk))?;
            *pushed += 1;
        }
    }
    Ok(())
}
