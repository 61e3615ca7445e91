//! Write plans: the commit protocol of `docs/FORMAT.md`, "Writing".

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::ops::*;
use super::overwrite::Commit;
use super::{PlanError, Target};
use crate::capacity::write_units;
use crate::key::KeySchema;
use crate::layout::{chunk_key, parse_chunk_key};
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest, UPDATED_FIELD};
use crate::size::item_size;
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::split::SplitItem;

/// What the write expects to replace; the commit is conditional on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// No item with this key exists.
    Absent,
    /// The stored item is a virtual item of this version, with this many
    /// chunks (deleted once the new version is committed; 0 when its
    /// manifest is beyond the target's limit, whose chunks are left to `gc`).
    Version {
        /// The stored parent's version id.
        version: VersionId,
        /// Its chunk count.
        chunk_count: u32,
        /// Its groups' ids and chunk counts ([`Manifest::groups`]).
        groups: Vec<(VersionId, u32)>,
        /// Its last in-place update ([`Manifest::updated`]).
        updated: Option<VersionId>,
    },
    /// The stored item is a plain, unsplit item.
    Plain,
    /// No condition: whatever is stored is overwritten, and the chunks of a
    /// replaced version are left for `gc`.
    Any,
}

impl Expect {
    /// What to expect given the parent currently stored (`None`: no item).
    /// Use [`Expect::from_stored_at`] when planning a write, so a stored item
    /// of another layout is refused rather than its chunks missed.
    pub fn from_stored(stored: Option<&Item>) -> Result<Self, PlanError> {
        Self::read(stored, None)
    }

    /// What to expect given the parent currently stored at `target`,
    /// checking its chunks live where the target says.
    pub fn from_stored_at(stored: Option<&Item>, target: &Target<'_>) -> Result<Self, PlanError> {
        Self::read(stored, Some(target))
    }

    fn read(stored: Option<&Item>, target: Option<&Target<'_>>) -> Result<Self, PlanError> {
        let Some(parent) = stored else {
            return Ok(Self::Absent);
        };
        let Some(value) = parent.get(MANIFEST_ATTRIBUTE) else {
            return Ok(Self::Plain);
        };
        let manifest = Manifest::from_value(value)?;
        let mut expect = Self::of(&manifest);
        if let Some(target) = target {
            target.check_layout(&manifest)?;
            // Beyond the writer's limit: the write still replaces it, but
            // leaves its chunks to `gc` (which reads only chunks that exist)
            // instead of building a key for each chunk the manifest claims.
            if target.check_limits(&manifest).is_err()
                && let Self::Version {
                    chunk_count,
                    groups,
                    ..
                } = &mut expect
            {
                *chunk_count = 0;
                groups.clear();
            }
        }
        Ok(expect)
    }

    /// What to expect of a stored parent with `manifest`.
    pub fn of(manifest: &Manifest) -> Self {
        Self::Version {
            version: manifest.version,
            chunk_count: manifest.chunk_count,
            groups: manifest
                .groups
                .iter()
                .map(|g| (g.version, g.chunk_count))
                .collect(),
            updated: manifest.updated,
        }
    }

    /// The frames of the stored version (its own, then its groups'), as
    /// ids and chunk counts; none for anything but a virtual item.
    pub fn frames(&self) -> Vec<(VersionId, u32)> {
        match self {
            Self::Version {
                version,
                chunk_count,
                groups,
                ..
            } => core::iter::once((*version, *chunk_count))
                .chain(groups.iter().copied())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// True when the condition names one stored parent only: a version id
    /// is unique to one write, so a parent of that version, once replaced,
    /// never comes back. A commit conditional on it may be sent again
    /// after a failure that may have been applied. `Absent` and `Plain`
    /// name a state that comes back (the item deleted, or a plain item
    /// written again): a second copy of a commit conditional on them could
    /// apply after a later writer replaced this write's parent and deleted
    /// its chunks, and point the parent at chunks that are gone.
    pub fn pins_one_parent(&self) -> bool {
        matches!(self, Self::Version { .. })
    }

    /// The condition expressing this expectation.
    pub fn condition(&self, key: &KeySchema) -> Option<Condition> {
        let mut condition = Condition::default();
        let mut name = |placeholder: &str, attribute: &str| {
            condition
                .names
                .insert(placeholder.to_string(), attribute.to_string());
        };
        let expression = match self {
            Self::Any => return None,
            Self::Absent => {
                name("#k", &key.partition.name);
                "attribute_not_exists(#k)"
            }
            Self::Plain => {
                name("#k", &key.partition.name);
                name("#m", MANIFEST_ATTRIBUTE);
                "attribute_exists(#k) AND attribute_not_exists(#m)"
            }
            Self::Version {
                version, updated, ..
            } => {
                name("#m", MANIFEST_ATTRIBUTE);
                name("#v", "v");
                name("#u", UPDATED_FIELD);
                let mut value = |placeholder: &str, id: &VersionId| {
                    condition
                        .values
                        .insert(placeholder.to_string(), AttributeValue::S(id.to_text()));
                };
                value(":v", version);
                match updated {
                    Some(updated) => {
                        value(":u", updated);
                        "#m.#v = :v AND #m.#u = :u"
                    }
                    None => "#m.#v = :v AND attribute_not_exists(#m.#u)",
                }
            }
        };
        condition.expression = expression.to_string();
        Some(condition)
    }
}

/// How to write chunks.
///
/// Batch is the default: DynamoDB bills every write in a transaction twice,
/// so an atomic write costs about twice the write units of the same chunks
/// by batch. Readers get the same guarantee either way (the commit is one
/// PutItem of the parent: the old item or the new one, never a mix); a
/// batch write's only price is orphan chunks after a crash, which `gc`
/// removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// Atomic when the write fits one transaction, batch otherwise.
    Auto,
    /// One TransactWriteItems, or an error if it does not fit.
    Atomic,
    /// BatchWriteItem for chunks, then the parent's commit (the default).
    #[default]
    Batch,
}

impl WriteMode {
    /// Every mode, in the order of [`WriteMode::name`]'s documentation.
    pub const ALL: [Self; 3] = [Self::Auto, Self::Atomic, Self::Batch];

    /// The mode's name in options (`auto`, `atomic`, `batch`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Atomic => "atomic",
            Self::Batch => "batch",
        }
    }

    /// The mode named `name` (see [`WriteMode::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// How a write went in: what [`WriteSteps`] it was planned as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteKind {
    /// One PutItem.
    Single,
    /// One TransactWriteItems.
    Atomic,
    /// Chunk batches, then the commit.
    Batch,
}

impl WriteKind {
    /// The kind's name in results (`single`, `atomic`, `batch`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Atomic => "atomic",
            Self::Batch => "batch",
        }
    }
}

impl core::fmt::Display for WriteKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// The requests of a write, in the order they must be sent.
#[derive(Clone, Debug, PartialEq)]
pub enum WriteSteps {
    /// One conditional PutItem: the item fits (or its payload is inline).
    Single(Put),
    /// One TransactWriteItems: chunks and the conditional parent together.
    Atomic(Transaction),
    /// Chunk batches (any order, in parallel), then the commit: one
    /// PutItem of the parent.
    ///
    /// Last writer wins ([`Commit::Overwrite`]): send `overwrite` first,
    /// resending it only after an answer that proves it was not applied
    /// (throttling). Its answer returns the replaced parent, whose chunks
    /// [`plan_replaced`](super::plan_replaced) deletes. After an ambiguous
    /// failure (a 500, a lost connection) never send `overwrite` again: a
    /// late second copy could re-point the parent at chunks a later writer
    /// already deleted. Send `commit` instead, which is pinned to the
    /// parent read before the write; if its condition fails and the stored
    /// parent is not this write's version, another writer's commit came
    /// after this one (or instead of it): send `abort`, and the write
    /// still succeeded, superseded.
    ///
    /// Optimistic locking ([`Commit::IfExpected`]): `overwrite` is `None`;
    /// send `commit`. If its condition fails and the stored parent is not
    /// this write's version, the write lost a race: send `abort` to delete
    /// its own chunks.
    Batch {
        /// Chunk puts.
        chunks: Vec<BatchWrite>,
        /// The unconditional, last-writer-wins commit (returning the
        /// replaced parent); `None` under optimistic locking.
        overwrite: Option<Put>,
        /// The commit conditional on the stored parent the plan expects.
        commit: Put,
        /// Deletes of this write's chunks, for a failure before the commit or
        /// a lost race. A failed condition on a retried commit may mean the
        /// first attempt succeeded unseen: read the parent (consistently)
        /// and abort only if it does not carry this write's version.
        abort: Vec<BatchWrite>,
    },
}

/// A whole write: its steps, then the cleanup of the replaced version.
#[derive(Clone, Debug, PartialEq)]
pub struct WritePlan {
    /// What to send.
    pub steps: WriteSteps,
    /// After a commit conditional on the expected parent (`commit`, a
    /// transaction, or a conditional single put) applied: deletes of the
    /// expected version's chunks. An unconditional commit learns what it
    /// replaced from its answer instead ([`super::plan_replaced`]).
    pub cleanup: Vec<BatchWrite>,
    /// Write units of the anchors index's entries the chunk puts add: one
    /// per anchor, on a table with the index ([`Target::anchors_indexed`]),
    /// two in a transaction.
    pub index_units: u64,
}

impl WriteSteps {
    /// The kind of write these steps make.
    pub fn kind(&self) -> WriteKind {
        match self {
            Self::Single(_) => WriteKind::Single,
            Self::Atomic(_) => WriteKind::Atomic,
            Self::Batch { .. } => WriteKind::Batch,
        }
    }
}

impl WritePlan {
    /// Write capacity units the steps consume (transactions at double rate).
    /// Cleanup deletes are billed by the deleted chunks' sizes, which the
    /// plan does not know; each costs at most 400.
    pub fn write_units(&self) -> u64 {
        match &self.steps {
            WriteSteps::Single(put) => write_units(item_size(&put.item), false),
            WriteSteps::Atomic(t) => t
                .actions
                .iter()
                .map(|a| match a {
                    TransactAction::Put(p) => write_units(item_size(&p.item), true),
                    TransactAction::Delete(d) => write_units(item_size(&d.key), true),
                })
                .sum(),
            WriteSteps::Batch { chunks, commit, .. } => {
                chunks.iter().map(BatchWrite::write_units).sum::<u64>()
                    + write_units(item_size(&commit.item), false)
            }
        }
        .saturating_add(self.index_units)
    }
}

/// Plans the write of a split item over whatever `expect` describes, with
/// optimistic locking: [`plan_write_as`] with [`Commit::IfExpected`].
pub fn plan_write(
    split: &SplitItem,
    target: &Target<'_>,
    expect: &Expect,
    mode: WriteMode,
) -> Result<WritePlan, PlanError> {
    plan_write_as(split, target, expect, mode, Commit::IfExpected)
}

/// Plans the write of a split item; `expect` is the stored parent read
/// before the write, `commit` how the commit treats a concurrent writer.
///
/// Under [`Commit::Overwrite`], a single item is one unconditional PutItem
/// returning what it replaced (a resend is harmless: the item carries no
/// chunks of its own), a batch write gets its `overwrite` commit, and a
/// transaction stays conditional on `expect` (TransactWriteItems returns
/// nothing): on a failed condition the caller reads the parent again and
/// plans again against it.
pub fn plan_write_as(
    split: &SplitItem,
    target: &Target<'_>,
    expect: &Expect,
    mode: WriteMode,
    commit_as: Commit,
) -> Result<WritePlan, PlanError> {
    let commit = commit_put(split, target, expect);
    let cleanup = replaced_chunks(split, target, expect)?;
    if split.chunks.is_empty() {
        return Ok(match commit_as {
            Commit::IfExpected => WritePlan {
                steps: WriteSteps::Single(commit),
                cleanup,
                index_units: 0,
            },
            Commit::Overwrite => WritePlan {
                steps: WriteSteps::Single(overwrite_put(split, target)),
                cleanup: Vec::new(),
                index_units: 0,
            },
        });
    }
    let actions = split.chunks.len() + 1;
    let bytes = split.chunks.iter().map(item_size).sum::<usize>() + item_size(&split.parent);
    let fits = actions <= MAX_TRANSACT_ACTIONS && bytes <= MAX_TRANSACT_BYTES;
    let steps = match (mode, fits) {
        (WriteMode::Atomic, false) => return Err(PlanError::AtomicTooLarge { actions, bytes }),
        (WriteMode::Atomic | WriteMode::Auto, true) => {
            let mut actions: Vec<_> = split
                .chunks
                .iter()
                .map(|chunk| {
                    TransactAction::Put(Put {
                        table: target.chunk_table.to_string(),
                        item: chunk.clone(),
                        condition: None,
                        return_old: false,
                    })
                })
                .collect();
            actions.push(TransactAction::Put(commit));
            WriteSteps::Atomic(Transaction { actions, bytes })
        }
        (WriteMode::Batch | WriteMode::Auto, _) => {
            let puts = split
                .chunks
                .iter()
                .map(|c| (target.chunk_table.to_string(), WriteRequest::Put(c.clone())));
            let abort = written_chunk_deletes(target, split)?;
            WriteSteps::Batch {
                chunks: pack_batch_writes(puts),
                overwrite: commit_as.overwrite(split, target),
                commit,
                abort,
            }
        }
    };
    let atomic = matches!(steps, WriteSteps::Atomic(_));
    let index_units = super::cost::index_units(split, target.anchors_indexed, atomic);
    Ok(WritePlan {
        steps,
        cleanup,
        index_units,
    })
}

/// The deletes of the chunks of the version `expect` replaces, after
/// checking the new write does not reuse its version id.
fn replaced_chunks(
    split: &SplitItem,
    target: &Target<'_>,
    expect: &Expect,
) -> Result<Vec<BatchWrite>, PlanError> {
    let Expect::Version { version, .. } = expect else {
        return Ok(Vec::new());
    };
    if split.manifest.as_ref().map(|m| m.version) == Some(*version) {
        return Err(PlanError::VersionReused);
    }
    frame_deletes(
        target,
        &split.parent,
        expect.frames(),
        split.manifest.as_ref(),
    )
}

/// Plans the rest of a streamed write ([`crate::StreamSplit`]), whose chunks
/// the caller wrote as they came, with optimistic locking:
/// [`plan_streamed_commit_as`] with [`Commit::IfExpected`].
pub fn plan_streamed_commit(
    split: &SplitItem,
    target: &Target<'_>,
    expect: &Expect,
) -> Result<WritePlan, PlanError> {
    plan_streamed_commit_as(split, target, expect, Commit::IfExpected)
}

/// Plans the rest of a streamed write: the commit (as `commit_as` says),
/// the abort (deletes of all of this write's chunks) and the cleanup of the
/// expected version. Its batch step has no chunk writes left.
pub fn plan_streamed_commit_as(
    split: &SplitItem,
    target: &Target<'_>,
    expect: &Expect,
    commit_as: Commit,
) -> Result<WritePlan, PlanError> {
    let cleanup = replaced_chunks(split, target, expect)?;
    // A streamed write has one frame, its own.
    let abort = match &split.manifest {
        Some(m) => frame_deletes(
            target,
            &split.parent,
            m.frames().map(|f| (f.version, f.chunk_count)).collect(),
            None,
        )?,
        None => Vec::new(),
    };
    Ok(WritePlan {
        index_units: 0,
        steps: WriteSteps::Batch {
            chunks: Vec::new(),
            overwrite: commit_as.overwrite(split, target),
            commit: commit_put(split, target, expect),
            abort,
        },
        cleanup,
    })
}

/// The parent's PutItem conditional on `expect`.
fn commit_put(split: &SplitItem, target: &Target<'_>, expect: &Expect) -> Put {
    Put {
        table: target.table.to_string(),
        item: split.parent.clone(),
        condition: expect.condition(target.key),
        return_old: false,
    }
}

/// The parent's unconditional PutItem, returning the item it replaces.
pub(super) fn overwrite_put(split: &SplitItem, target: &Target<'_>) -> Put {
    Put {
        table: target.table.to_string(),
        item: split.parent.clone(),
        condition: None,
        return_old: true,
    }
}

/// Batches deleting the chunks of `frames` (ids and chunk counts) of the
/// item keyed by `parent`, but for the frames `kept_by` (a new version's
/// manifest) still holds: the groups an update reuses.
pub(super) fn frame_deletes(
    target: &Target<'_>,
    parent: &Item,
    frames: Vec<(VersionId, u32)>,
    kept_by: Option<&Manifest>,
) -> Result<Vec<BatchWrite>, PlanError> {
    let reused = |id: VersionId| kept_by.is_some_and(|m| m.frames().any(|f| f.version == id));
    let keys = frames
        .into_iter()
        .filter(|&(id, _)| !reused(id))
        .flat_map(|(id, count)| (0..count).map(move |seq| (id, seq)))
        .map(|(id, seq)| chunk_key(target.key, target.layout, parent, id, seq))
        .map(|key| Ok((target.chunk_table.to_string(), WriteRequest::Delete(key?))))
        .collect::<Result<Vec<_>, PlanError>>()?;
    Ok(pack_batch_writes(keys))
}

/// Batches deleting the chunks `split` writes of its own frames, by their
/// exact keys: not the groups it reuses (it writes none of theirs), nor a
/// version record beside them (another writer may write the same one).
fn written_chunk_deletes(
    target: &Target<'_>,
    split: &SplitItem,
) -> Result<Vec<BatchWrite>, PlanError> {
    let Some(manifest) = &split.manifest else {
        return Ok(Vec::new());
    };
    let keys = split
        .chunks
        .iter()
        .map(|chunk| parse_chunk_key(target.key, target.layout, chunk))
        .filter(|parsed| match parsed {
            Ok(p) => manifest
                .frames()
                .any(|f| f.version == p.version && p.seq < f.chunk_count),
            Err(_) => true,
        })
        .map(|parsed| {
            let parsed = parsed?;
            chunk_key(
                target.key,
                target.layout,
                &split.parent,
                parsed.version,
                parsed.seq,
            )
        })
        .map(|key| Ok((target.chunk_table.to_string(), WriteRequest::Delete(key?))))
        .collect::<Result<Vec<_>, PlanError>>()?;
    Ok(pack_batch_writes(keys))
}

/// The chunk puts of several batch-mode plans, interleaved round-robin across
/// items and packed into batches, so concurrent uploads spread their writes
/// over many partition keys (the AWS tables guide: distribute upload work).
/// Send these instead of each plan's own chunk batches, then each commit.
pub fn interleave_chunk_writes(plans: &[WritePlan]) -> Vec<BatchWrite> {
    let mut queues: Vec<_> = plans
        .iter()
        .filter_map(|p| match &p.steps {
            WriteSteps::Batch { chunks, .. } => Some(chunks.iter().flat_map(|b| b.requests.iter())),
            _ => None,
        })
        .collect();
    let mut order: Vec<(String, WriteRequest)> = Vec::new();
    loop {
        let before = order.len();
        for queue in &mut queues {
            order.extend(queue.next().cloned());
        }
        if order.len() == before {
            break;
        }
    }
    pack_batch_writes(order)
}
