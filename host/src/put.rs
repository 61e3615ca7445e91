//! Writing virtual items: the commit protocol of `docs/FORMAT.md` §9.
//! Core plans; this module reads what is stored, sends the chunks, hands the
//! commit to [`crate::commit`] and cleans up after it.

use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use dynaslice_core::plan::{
    BatchWrite, Commit, Expect, Precondition, WriteKind, WriteMode, WritePlan, WriteSteps,
    pack_batch_writes_by, parent_get, plan_write_as,
};
use dynaslice_core::{
    CodecChoice, DEFAULT_PARENT_BUDGET, Item, ItemSplit, Manifest, SplitError, SplitItem,
    SplitOptions, VersionId, item_size, split_item, split_item_streamed,
};

use crate::commit::{BatchCommit, commit_atomic, commit_batch, commit_single};
use crate::error::HostError;
use crate::json::{item_to_json, key_text, manifest_to_json};
use crate::progress::Progress;
use crate::retry::RetryPolicy;
use crate::send::{DEFAULT_CONCURRENCY, Sender};
use crate::table::TableConfig;

/// How to write.
#[derive(Clone, Debug)]
pub struct PutOptions {
    /// The codec (default: `auto`, the core's policy).
    pub compression: CodecChoice,
    /// Batch (the default: half the write units of a transaction), atomic
    /// (one transaction), or atomic when it fits.
    pub mode: WriteMode,
    /// Attributes are spilled, largest first, until the parent is this small.
    pub parent_budget: usize,
    /// Attributes that always stay on the parent (index keys).
    pub keep: Vec<String>,
    /// The largest item accepted, in raw payload bytes (default 64 MiB).
    pub max_item_bytes: usize,
    /// Retries of each request.
    pub retry: RetryPolicy,
    /// The most batch requests in flight at once (default 16): the host
    /// starts at 4 and adapts to throttling between 1 and this.
    pub concurrency: usize,
    /// Chunks per BatchWriteItem (1..=25): smaller batches keep more requests
    /// in flight for one item.
    pub batch_items: usize,
    /// What the stored item must be for the write to go in (optimistic
    /// locking: a failed precondition, or a concurrent writer committing
    /// first, is [`HostError::Conflict`]). `None` (the default): last
    /// writer wins, as PutItem does.
    pub precondition: Option<Precondition>,
}

impl Default for PutOptions {
    fn default() -> Self {
        Self {
            compression: CodecChoice::Auto,
            mode: WriteMode::Batch,
            parent_budget: DEFAULT_PARENT_BUDGET,
            keep: Vec::new(),
            max_item_bytes: dynaslice_core::DEFAULT_MAX_RAW_BYTES,
            retry: RetryPolicy::default(),
            concurrency: DEFAULT_CONCURRENCY,
            batch_items: 5,
            precondition: None,
        }
    }
}

impl PutOptions {
    pub(crate) fn sender<'a>(&self, client: &'a Client) -> Sender<'a> {
        Sender::new(client, self.retry, self.concurrency)
    }

    /// How the commit treats a concurrent writer: optimistic locking when
    /// there is a precondition, last writer wins otherwise.
    pub fn commit(&self) -> Commit {
        match self.precondition {
            Some(_) => Commit::IfExpected,
            None => Commit::Overwrite,
        }
    }

    /// Core's split options for a write to `table` as `version`.
    pub fn split_options(&self, table: &TableConfig, version: VersionId) -> SplitOptions {
        let mut options = SplitOptions::new(table.key.clone(), version);
        options.layout = table.layout.clone();
        options.compression = self.compression;
        options.parent_budget = self.parent_budget;
        options.keep = self.keep.clone();
        options.max_raw_bytes = self.max_item_bytes;
        options
    }
}

/// How a write went in.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PutOutcome {
    /// How it was written: one PutItem, one transaction, or batches and a commit.
    pub mode: WriteKind,
    /// The new version, when the item was split.
    pub manifest: Option<Manifest>,
    /// The version it replaced, if it replaced a virtual item and the
    /// commit's answer said which (after an ambiguous failure it may not
    /// know: the replaced version's chunks are then left to `gc`).
    pub replaced: Option<VersionId>,
    /// Another writer's commit replaced this write's right after it (or
    /// raced it after a failure left this write's own commit in doubt):
    /// the write succeeded, as a PutItem overwritten at once does, and
    /// its chunks were deleted. Only under last writer wins.
    pub superseded: bool,
    /// Bytes of the parent and chunk items written.
    pub bytes_written: u64,
    /// Write capacity units the plan costs (before cleanup).
    pub planned_write_units: u64,
    /// Deletes of the replaced version's chunks that failed (left for `gc`).
    pub cleanup_left: usize,
    /// Write capacity units the server reported consuming (cleanup included).
    pub consumed_write_units: f64,
    /// Read capacity units of the parent reads the protocol made.
    pub consumed_read_units: f64,
}

impl PutOutcome {
    /// The outcome as JSON, as the CLI (`put --json`) and the server's
    /// upload answer it.
    pub fn to_json(&self, key: &Item) -> serde_json::Value {
        serde_json::json!({
            "key": item_to_json(key),
            "mode": self.mode.name(),
            "manifest": self.manifest.as_ref().map(manifest_to_json),
            "replaced": self.replaced.map(|v| v.to_text()),
            "superseded": self.superseded,
            "bytesWritten": self.bytes_written,
            "writeUnits": self.planned_write_units,
            "consumedWriteUnits": self.consumed_write_units,
            "consumedReadUnits": self.consumed_read_units,
            "cleanupLeft": self.cleanup_left,
        })
    }
}

/// A fresh version id by this machine's clock, and 80 random bits. Writes
/// stamp theirs with the store's clock instead (see `clock.rs`); this is for
/// splits that are only estimated, never written.
pub fn fresh_version() -> VersionId {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    VersionId::new(now, fastrand::u128(..))
}

/// Writes `item` to `table`: validates and splits it, reads the stored
/// parent, writes the chunks and commits the parent. By default the last
/// writer wins, as with PutItem, and the replaced version's chunks are
/// deleted. With [`PutOptions::precondition`] the commit is conditional
/// on the parent read: a stored item that fails the precondition, or a
/// concurrent writer that committed first, makes this return
/// [`HostError::Conflict`], with this write's chunks deleted.
///
/// In batch mode (the default) chunks are written while the rest of the
/// payload is still being compressed, and `progress` counts the bytes of
/// the spilled attributes' value stream; otherwise the whole split comes
/// first and `progress` counts the bytes written.
pub async fn put(
    client: &Client,
    table: &TableConfig,
    item: &Item,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let version = fresh_version();
    let split_options = options.split_options(table, version);
    let mut split = crate::cpu::heavy(|| start_split(item, &split_options, options.mode))?;
    let sender = options.sender(client);
    let expect = read_expect(&sender, table, item, options.max_item_bytes).await?;
    check_precondition(table, item, &expect, options)?;
    // The parent read's answer carries the store's time: a version this
    // machine's clock stamped far from it is stamped again (rare, and only
    // for a machine whose clock is off).
    if let Some(version) = sender.clock.restamp(version)? {
        let split_options = options.split_options(table, version);
        split = crate::cpu::heavy(|| start_split(item, &split_options, options.mode))?;
    }
    match split {
        ItemSplit::Whole(split) => {
            put_split(&sender, table, &split, &expect, options, progress).await
        }
        ItemSplit::Streaming(stream) => {
            crate::stream::put_item_stream(&sender, table, item, stream, &expect, options, progress)
                .await
        }
    }
}

/// Splits `item` for a write in `mode`: batch mode writes chunks as they
/// are compressed (see [`split_item_streamed`]); a transaction needs the
/// whole split to plan.
fn start_split<'a>(
    item: &'a Item,
    options: &SplitOptions,
    mode: WriteMode,
) -> Result<ItemSplit<'a>, SplitError> {
    match mode {
        WriteMode::Batch => split_item_streamed(item, options),
        _ => split_item(item, options).map(ItemSplit::Whole),
    }
}

/// Plans and writes a whole split.
pub(crate) async fn put_split(
    sender: &Sender<'_>,
    table: &TableConfig,
    split: &SplitItem,
    expect: &Expect,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let plan = plan_write_as(
        split,
        &table.target(),
        expect,
        options.mode,
        options.commit(),
    )?;
    execute(sender, table, plan, split, expect, options, progress).await
}

/// What the write replaces: the parent stored now under `item`'s key, read
/// consistently (a replaced item over `max_item_bytes` keeps its chunks
/// for gc rather than have a key built for each).
pub(crate) async fn read_expect(
    sender: &Sender<'_>,
    table: &TableConfig,
    item: &Item,
    max_item_bytes: usize,
) -> Result<Expect, HostError> {
    let stored = sender.get(parent_get(&table.target(), item)).await?;
    Ok(Expect::from_stored_at(
        stored.as_ref(),
        &table.target_within(max_item_bytes),
    )?)
}

pub(crate) fn replaced(expect: &Expect) -> Option<VersionId> {
    match expect {
        Expect::Version { version, .. } => Some(*version),
        _ => None,
    }
}

/// Refuses, before anything is written, a write whose precondition the
/// stored parent already fails.
pub(crate) fn check_precondition(
    table: &TableConfig,
    parent: &Item,
    expect: &Expect,
    options: &PutOptions,
) -> Result<(), HostError> {
    match &options.precondition {
        Some(precondition) if !precondition.holds(expect) => Err(HostError::Conflict {
            key: key_text(&table.key, parent),
        }),
        _ => Ok(()),
    }
}

/// Runs a planned write.
async fn execute(
    sender: &Sender<'_>,
    table: &TableConfig,
    plan: WritePlan,
    split: &SplitItem,
    expect: &Expect,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let bytes_written =
        (item_size(&split.parent) + split.chunks.iter().map(item_size).sum::<usize>()) as u64;
    let planned_write_units = plan.write_units();
    progress.start(bytes_written);
    let WritePlan { steps, cleanup } = plan;
    let (mode, committed) = match steps {
        WriteSteps::Single(put) => (
            WriteKind::Single,
            commit_single(sender, table, split, put, expect, cleanup, options).await?,
        ),
        WriteSteps::Atomic(transaction) => (
            WriteKind::Atomic,
            commit_atomic(sender, table, split, transaction, expect, cleanup, options).await?,
        ),
        WriteSteps::Batch {
            chunks,
            overwrite,
            commit,
            abort,
        } => {
            let requests = chunks.into_iter().flat_map(|b| b.requests);
            let batches = pack_batch_writes_by(requests, options.batch_items);
            if let Err(e) = sender.batch_writes(batches, progress).await {
                // Nothing refers to these chunks yet: delete what can be deleted.
                let _ = sender.batch_writes(abort, &()).await;
                return Err(e);
            }
            let steps = BatchCommit {
                overwrite,
                commit,
                abort,
                cleanup,
            };
            (
                WriteKind::Batch,
                commit_batch(sender, table, split, steps, expect, options).await?,
            )
        }
    };
    // Batches reported their chunks as they went; the rest arrives at once.
    progress.advance(match mode {
        WriteKind::Batch => item_size(&split.parent) as u64,
        WriteKind::Single | WriteKind::Atomic => bytes_written,
    });
    let cleanup_left = clean_up(sender, committed.cleanup).await;
    Ok(PutOutcome {
        mode,
        manifest: split.manifest.clone(),
        replaced: committed.replaced,
        superseded: committed.superseded,
        bytes_written,
        planned_write_units,
        cleanup_left,
        consumed_write_units: sender.consumed.write_units(),
        consumed_read_units: sender.consumed.read_units(),
    })
}

/// Sends chunk deletes (a replaced version's, or a deleted item's) after
/// the commit; returns how many failed (unreferenced now: `gc` removes them).
pub(crate) async fn clean_up(sender: &Sender<'_>, cleanup: Vec<BatchWrite>) -> usize {
    let mut left = 0;
    for batch in cleanup {
        let count = batch.requests.len();
        if sender.batch_write(batch, &()).await.is_err() {
            left += count;
        }
    }
    left
}
