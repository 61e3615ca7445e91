//! The commit point of a write, and what it means: last writer wins (an
//! unconditional commit that learns what it replaced, never resent after an
//! ambiguous failure) or optimistic locking (a commit conditional on the
//! parent read, a lost race a conflict). docs/FORMAT.md §9.

use dynaslice_core::manifest::MANIFEST_ATTRIBUTE;
use dynaslice_core::plan::{
    BatchWrite, Commit, Expect, Put, Replaced, Transaction, WriteMode, WriteSteps, parent_get,
    plan_replaced, plan_write_as,
};
use dynaslice_core::{Item, Manifest, SplitItem, VersionId};

use crate::error::HostError;
use crate::json::key_text;
use crate::put::{PutOptions, fresh_version, replaced};
use crate::send::{Resend, Sender, Unsent, Written};
use crate::table::TableConfig;

/// Rounds an atomic write under last-writer-wins makes: after a concurrent
/// commit changed the parent, it pauses (the retry policy's backoff, with
/// full jitter), reads the parent again and re-plans, before giving up with
/// a conflict. Each failed round is one transaction that wrote nothing, and
/// means another writer committed meanwhile: a write succeeds whenever
/// fewer than 8 other commits land while it tries (with the default backoff
/// the pauses add up to at most 3.2 s). Writers that overwrite one key
/// without pause starve each other in atomic mode; batch mode does not.
const MAX_REPLANS: u32 = 8;

/// What a commit did: what it replaced, the deletes of the replaced
/// version's chunks, and whether another writer's commit superseded it.
#[derive(Debug)]
pub(crate) struct Committed {
    pub replaced: Option<VersionId>,
    pub cleanup: Vec<BatchWrite>,
    pub superseded: bool,
}

impl Committed {
    /// A commit conditional on `expect` applied: it replaced exactly that.
    fn expected(expect: &Expect, cleanup: Vec<BatchWrite>) -> Self {
        Self {
            replaced: replaced(expect),
            cleanup,
            superseded: false,
        }
    }

    /// This write's parent is stored, but which version it replaced is
    /// unknown (an unconditional attempt may have been applied unseen): the
    /// replaced version's chunks are left to `gc`.
    fn unknown() -> Self {
        Self {
            replaced: None,
            cleanup: Vec::new(),
            superseded: false,
        }
    }

    /// Another writer's commit came after this one's (or instead of it):
    /// this write's chunks were deleted, and the write counts as done.
    fn superseded() -> Self {
        Self {
            replaced: None,
            cleanup: Vec::new(),
            superseded: true,
        }
    }
}

impl From<Replaced> for Committed {
    fn from(replaced: Replaced) -> Self {
        Self {
            replaced: replaced.version,
            cleanup: replaced.cleanup,
            superseded: false,
        }
    }
}

/// One PutItem. Last writer wins: unconditional, resent on any transient
/// failure (the item carries no chunks of its own, so a late copy tears
/// nothing), and its answer names what it replaced. Optimistic locking:
/// conditional, a lost race is a conflict.
pub(crate) async fn commit_single(
    sender: &Sender<'_>,
    table: &TableConfig,
    split: &SplitItem,
    put: Put,
    expect: &Expect,
    cleanup: Vec<BatchWrite>,
    options: &PutOptions,
) -> Result<Committed, HostError> {
    if put.return_old {
        return match sender.put_returning_old(put, Resend::Transient).await {
            Ok(old) => Ok(plan_replaced(
                old.as_ref(),
                &split.parent,
                &table.target_within(options.max_item_bytes),
            )
            .into()),
            Err(Unsent { error, .. }) => match committed(sender, table, split).await {
                Ok(true) => Ok(Committed::unknown()),
                _ => Err(error),
            },
        };
    }
    if sender.put(put).await? == Written::ConditionFailed
        && !committed(sender, table, split).await?
    {
        return Err(conflict(table, split));
    }
    Ok(Committed::expected(expect, cleanup))
}

/// One TransactWriteItems, conditional on the parent read before the
/// write (TransactWriteItems cannot return what it replaced). When another
/// writer committed in between, the failed transaction wrote nothing:
/// last writer wins re-plans against the parent stored now and sends it
/// again (a new token each time: a token reused with other content is
/// refused), after a pause with jitter, up to [`MAX_REPLANS`] rounds;
/// optimistic locking is a conflict.
pub(crate) async fn commit_atomic(
    sender: &Sender<'_>,
    table: &TableConfig,
    split: &SplitItem,
    mut transaction: Transaction,
    expect: &Expect,
    mut cleanup: Vec<BatchWrite>,
    options: &PutOptions,
) -> Result<Committed, HostError> {
    let base = split
        .manifest
        .as_ref()
        .map_or_else(|| fresh_version().to_text(), |m| m.version.to_text());
    let mut expect = expect.clone();
    for round in 1..=MAX_REPLANS {
        let token = match round {
            1 => base.clone(),
            n => format!("{base}-{n}"),
        };
        if sender.transact(transaction, &token).await? == Written::Yes {
            return Ok(Committed::expected(&expect, cleanup));
        }
        let stored = read_parent(sender, table, split).await?;
        if is_ours(stored.as_ref(), split) {
            // This round's transaction was applied unseen; it replaced `expect`.
            return Ok(Committed::expected(&expect, cleanup));
        }
        if options.commit() == Commit::IfExpected || round == MAX_REPLANS {
            break;
        }
        // A pause with jitter, so writers racing on one key stop colliding.
        tokio::time::sleep(sender.retry.backoff(round - 1)).await;
        let stored = read_parent(sender, table, split).await?;
        expect = Expect::from_stored_at(
            stored.as_ref(),
            &table.target_within(options.max_item_bytes),
        )?;
        let plan = plan_write_as(
            split,
            &table.target(),
            &expect,
            WriteMode::Atomic,
            Commit::Overwrite,
        )?;
        let WriteSteps::Atomic(next) = plan.steps else {
            return Err(HostError::Internal(
                "an atomic write re-planned as another kind".into(),
            ));
        };
        transaction = next;
        cleanup = plan.cleanup;
    }
    Err(conflict(table, split))
}

/// A batch write's commit requests (from its plan's [`WriteSteps::Batch`]).
pub(crate) struct BatchCommit {
    pub overwrite: Option<Put>,
    pub commit: Put,
    pub abort: Vec<BatchWrite>,
    pub cleanup: Vec<BatchWrite>,
}

/// The commit point of a batch write, its chunks written.
///
/// Last writer wins: the unconditional commit, resent only after
/// throttling. Its answer returns the replaced parent, whose chunks are
/// deleted. After an ambiguous failure it is never sent again (a late copy
/// could land after a later writer deleted this write's chunks, and point
/// the parent at them): the commit pinned to the parent read before the
/// write goes instead. If that one's condition fails and the stored parent
/// is not this write's, a concurrent writer committed after it: this
/// write's chunks are deleted and it succeeds, superseded.
///
/// Optimistic locking: the pinned commit alone; a failed condition is a
/// lost race (a conflict, this write's chunks deleted) unless the stored
/// parent carries this write's version (an earlier attempt of the commit
/// was applied unseen).
///
/// Either way, a commit whose outcome stays unknown (retries ran out) is
/// not aborted, since it may still be applied; its chunks are left for `gc`.
pub(crate) async fn commit_batch(
    sender: &Sender<'_>,
    table: &TableConfig,
    split: &SplitItem,
    steps: BatchCommit,
    expect: &Expect,
    options: &PutOptions,
) -> Result<Committed, HostError> {
    let BatchCommit {
        overwrite,
        commit,
        abort,
        cleanup,
    } = steps;
    let last_writer_wins = overwrite.is_some();
    if let Some(overwrite) = overwrite {
        match sender
            .put_returning_old(overwrite, Resend::OnlyUnapplied)
            .await
        {
            Ok(old) => {
                let target = table.target_within(options.max_item_bytes);
                return Ok(plan_replaced(old.as_ref(), &split.parent, &target).into());
            }
            Err(Unsent {
                maybe_applied: false,
                error,
            }) => {
                let _ = sender.batch_writes(abort, &()).await;
                return Err(error);
            }
            // Maybe applied: fall back to the pinned commit below.
            Err(Unsent { .. }) => {}
        }
    }
    // This write's parent found stored after the pinned commit failed: under
    // last writer wins the unconditional attempt may be what applied.
    let ours = |cleanup| match last_writer_wins {
        true => Committed::unknown(),
        false => Committed::expected(expect, cleanup),
    };
    match sender.put(commit).await {
        Ok(Written::Yes) => Ok(Committed::expected(expect, cleanup)),
        Ok(Written::ConditionFailed) => {
            if committed(sender, table, split).await? {
                return Ok(ours(cleanup));
            }
            let _ = sender.batch_writes(abort, &()).await;
            match last_writer_wins {
                true => Ok(Committed::superseded()),
                false => Err(conflict(table, split)),
            }
        }
        Err(e) => match committed(sender, table, split).await {
            Ok(true) => Ok(ours(cleanup)),
            _ => Err(e),
        },
    }
}

fn conflict(table: &TableConfig, split: &SplitItem) -> HostError {
    HostError::Conflict {
        key: key_text(&table.key, &split.parent),
    }
}

/// The parent stored now under `split`'s key, read consistently.
async fn read_parent(
    sender: &Sender<'_>,
    table: &TableConfig,
    split: &SplitItem,
) -> Result<Option<Item>, HostError> {
    sender.get(parent_get(&table.target(), &split.parent)).await
}

/// True when `stored` is this write's parent: it carries this write's
/// version, or (an unsplit item) it equals the item written.
fn is_ours(stored: Option<&Item>, split: &SplitItem) -> bool {
    let Some(stored) = stored else {
        return false;
    };
    match &split.manifest {
        Some(ours) => stored
            .get(MANIFEST_ATTRIBUTE)
            .and_then(|m| Manifest::from_value(m).ok())
            .is_some_and(|m| m.version == ours.version),
        None => *stored == split.parent,
    }
}

/// True when the stored parent is this write's (see [`is_ours`]).
async fn committed(
    sender: &Sender<'_>,
    table: &TableConfig,
    split: &SplitItem,
) -> Result<bool, HostError> {
    Ok(is_ours(
        read_parent(sender, table, split).await?.as_ref(),
        split,
    ))
}
