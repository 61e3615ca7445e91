//! The commit point of a write, and what it means (docs/FORMAT.md,
//! "Writing"): last writer wins (an unconditional commit that learns what
//! it replaced, never resent after an ambiguous failure) or optimistic
//! locking (a commit conditional on the parent read, a lost race a
//! conflict).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::uploads::Uploads;
use super::{Cutter, Phase, Purpose, PutMachine, PutSource};
use crate::history::{History, keeps_history};
use crate::manifest::stored_version;
use crate::plan::{BatchWrite, Expect, Put, Replaced, Transaction};
use crate::plan::{Commit as CommitPolicy, WriteMode, WriteSteps, plan_replaced, plan_write_as};
use crate::protocol::ProtocolError;
use crate::protocol::flights::{Failed, Resend};
use crate::protocol::policy::MAX_REPLANS;
use crate::protocol::request::{ObjectKey, ObjectRequest, Request};
use crate::value::{Item, same_item};
use crate::version::VersionId;
use crate::write::split::SplitItem;
use core::time::Duration;

/// The commit requests a plan left to send, and which one is out.
pub(super) enum Commit {
    /// One PutItem: unconditional and returning what it replaced (last
    /// writer wins), or conditional on the parent read.
    Single(Put),
    /// One TransactWriteItems, conditional on the parent read; under last
    /// writer wins re-planned against a newer parent up to
    /// [`MAX_REPLANS`](crate::protocol::policy::MAX_REPLANS) rounds.
    Atomic {
        /// The transaction of this round.
        transaction: Transaction,
        /// Rounds sent, this one included.
        round: u32,
    },
    /// After the chunks: the unconditional commit (last writer wins) and
    /// the commit pinned to the parent read, sent instead after the
    /// unconditional one failed ambiguously (or alone, under optimistic
    /// locking).
    Batch {
        /// The unconditional commit, until it was sent.
        overwrite: Option<Put>,
        /// The commit conditional on the parent read before the write.
        pinned: Put,
        /// True once the pinned commit is the one out.
        pinned_out: bool,
    },
}

impl Commit {
    /// The transaction's idempotency token for this round: a token reused
    /// with other content is refused, so each re-plan gets its own.
    pub(super) fn token(version: VersionId, round: u32) -> String {
        match round {
            1 => version.to_text(),
            n => format!("{version}-{n}"),
        }
    }
}

/// Why the parent is read again after a commit attempt.
#[derive(Clone, Debug)]
pub(super) enum Check {
    /// A last-writer-wins PutItem failed for good (with this error): if its
    /// parent is stored, it was applied unseen (what it replaced is unknown).
    Single(ProtocolError),
    /// A conditional PutItem's condition failed: this write's parent
    /// stored means an earlier attempt was applied unseen; another's means
    /// a lost race.
    Condition,
    /// An atomic round's condition failed.
    Atomic,
    /// The pinned commit's condition failed after the chunks: this write's
    /// parent, or another writer's that came after (or instead of) it.
    Pinned,
    /// The pinned commit failed for good (with this error): applied
    /// unseen, or unknown.
    PinnedUnknown(ProtocolError),
    /// The unconditional commit failed (with this error) and may have been
    /// applied, over a parent no condition can pin
    /// (`Expect::pins_one_parent`): this write's parent, or a state that
    /// may have come back after it.
    Overwrite(ProtocolError),
}

/// What a commit did.
pub(super) struct Committed {
    /// The virtual item's version it replaced, when known.
    pub(super) replaced: Option<VersionId>,
    /// An item was stored before, as far as known.
    pub(super) replaced_item: bool,
    /// Deletes of the replaced version's chunks.
    pub(super) cleanup: Vec<BatchWrite>,
    /// Another writer's commit came after this one's.
    pub(super) superseded: bool,
    /// The replaced version's S3 object, deleted after the commit.
    pub(super) object: Option<ObjectKey>,
}

impl Committed {
    /// A commit conditional on `expect` applied: it replaced exactly that.
    pub(super) fn expected(expect: &Expect, stored: bool, cleanup: Vec<BatchWrite>) -> Self {
        let replaced = match expect {
            Expect::Version { version, .. } => Some(*version),
            _ => None,
        };
        Self {
            replaced,
            replaced_item: stored,
            cleanup,
            superseded: false,
            object: None,
        }
    }

    /// This write's parent is stored, but which version it replaced is
    /// unknown (an unconditional attempt may have been applied unseen):
    /// the replaced version's chunks are left to `gc`.
    pub(super) fn unknown(stored: bool) -> Self {
        Self {
            replaced: None,
            replaced_item: stored,
            cleanup: Vec::new(),
            superseded: false,
            object: None,
        }
    }

    /// What an unconditional commit replaced, from the old parent its
    /// answer returned.
    pub(super) fn replaced(old: bool, replaced: Replaced) -> Self {
        Self {
            replaced: replaced.version,
            replaced_item: old,
            cleanup: replaced.cleanup,
            superseded: false,
            object: None,
        }
    }

    /// Another writer's commit came after this one's (or instead of it):
    /// this write's chunks were deleted, and the write counts as done.
    pub(super) fn superseded() -> Self {
        Self {
            replaced: None,
            replaced_item: true,
            cleanup: Vec::new(),
            superseded: true,
            object: None,
        }
    }
}

/// True when `stored` is this write's parent: it carries this write's
/// version, or (an item stored whole) it equals the item written.
pub(super) fn is_ours(stored: Option<&Item>, split: &SplitItem) -> bool {
    let Some(stored) = stored else {
        return false;
    };
    match &split.manifest {
        Some(ours) => stored_version(stored).ok().flatten() == Some(ours.version),
        None => same_item(stored, &split.parent),
    }
}

impl PutMachine<'_> {
    /// Sends the commit request the plan is at.
    pub(super) fn send_commit(&mut self) {
        self.phase = Phase::Commit;
        let (request, resend) = match &mut self.commit {
            // A single item under last writer wins is resent on any
            // transient failure: it carries no chunks of its own, so a late
            // copy tears nothing.
            Some(Commit::Single(put)) => (Request::Put(put.clone()), Resend::Transient),
            Some(Commit::Atomic { transaction, round }) => (
                Request::Transact {
                    transaction: transaction.clone(),
                    token: Commit::token(self.version, *round),
                },
                Resend::Transaction,
            ),
            Some(Commit::Batch {
                overwrite,
                pinned,
                pinned_out,
            }) => match overwrite.take() {
                // Resent only after throttling: after an ambiguous failure
                // a late second copy could re-point the parent at chunks a
                // later writer already deleted.
                Some(put) => (Request::Put(put), Resend::Throttled),
                None => {
                    *pinned_out = true;
                    let resend = match self.expect.pins_one_parent() {
                        true => Resend::Transient,
                        false => Resend::Throttled,
                    };
                    (Request::Put(pinned.clone()), resend)
                }
            },
            None => return,
        };
        self.flights.send(request, Purpose::Commit, resend);
    }

    /// The commit applied: the outcome's facts, then the cleanup.
    pub(super) fn commit_done(&mut self, committed: Committed) {
        self.progress.bytes_done = self.progress.bytes_total;
        self.progress.chunks_done = self.progress.chunks_total;
        self.deletes
            .add(&self.table, committed.cleanup.clone(), Purpose::Cleanup);
        if let Some(object) = committed.object.clone() {
            let delete = ObjectRequest::Delete { object };
            self.deletes.add_object(delete, Purpose::Cleanup(1));
        }
        self.committed = Some(committed);
        self.phase = Phase::Cleanup;
    }

    /// A commit conditional on the parent read applied.
    pub(super) fn expected(&self) -> Committed {
        let mut committed = Committed::expected(&self.expect, self.stored(), self.cleanup.clone());
        committed.object = self.replaced_object(self.stored_parent.as_ref());
        committed
    }

    /// The S3 object of the replaced parent `old`, when this table's store
    /// owns it, it is not this write's own, and no history keeps it.
    fn replaced_object(&self, old: Option<&Item>) -> Option<ObjectKey> {
        if self.keeps {
            return None;
        }
        let object = self.table.owned_object(old?)?;
        let own = self.object.as_ref().map(|o| &o.object);
        (own.or(self.uploaded.as_ref()) != Some(&object)).then_some(object)
    }

    /// What an unconditional commit replaced, from the old parent its
    /// answer returned.
    pub(super) fn replaced_by_commit(&self, old: Option<Item>) -> Committed {
        let target = self.table.keys_target();
        match &self.split {
            Some(split) => {
                let mut committed = Committed::replaced(
                    old.is_some(),
                    plan_replaced(old.as_ref(), &split.parent, &target),
                );
                committed.object = self.replaced_object(old.as_ref());
                committed
            }
            None => Committed::unknown(old.is_some()),
        }
    }

    pub(super) fn commit_failed(&mut self, failed: Failed) {
        let check = match &self.commit {
            Some(Commit::Single(put)) if put.return_old => Check::Single(failed.error),
            Some(Commit::Single(_)) if failed.condition_failed() => Check::Condition,
            Some(Commit::Atomic { .. }) if failed.condition_failed() => Check::Atomic,
            Some(Commit::Batch {
                pinned_out: false, ..
            }) => {
                if !failed.maybe_applied() {
                    return self.abort_with(Err(failed.error));
                }
                if self.expect.pins_one_parent() {
                    // Maybe applied: the pinned commit goes instead.
                    return self.send_commit();
                }
                // Maybe applied, over a state that comes back (see
                // `Expect::pins_one_parent`): only the parent can tell.
                Check::Overwrite(failed.error)
            }
            Some(Commit::Batch { .. }) if failed.condition_failed() => Check::Pinned,
            Some(Commit::Batch { .. }) => Check::PinnedUnknown(failed.error),
            _ => return self.finish(Err(failed.error)),
        };
        self.read_parent_for(Purpose::Check(check), Duration::ZERO);
    }

    /// The parent as read after a commit attempt settles the commit.
    pub(super) fn checked(&mut self, check: Check, stored: Option<Item>) {
        let Some(split) = &self.split else { return };
        let ours = is_ours(stored.as_ref(), split);
        let last_writer_wins = self.commit_as() == CommitPolicy::Overwrite;
        // Applied unseen, then replaced by a writer that kept it (whether
        // or not this write keeps history): done, and its chunks are
        // history now, never this write's to delete.
        if !ours && self.kept_by(stored.as_ref()) {
            let outcome = self.outcome_with(Committed::superseded());
            return self.finish(Ok(outcome));
        }
        // A write that keeps history lost its pinned commit to another
        // writer: under last writer wins it starts again over the newer
        // parent (recording that one), as a new version.
        if self.keeps && !ours && matches!(check, Check::Condition | Check::Atomic | Check::Pinned)
        {
            let conflict = self.conflict();
            if self.options.precondition.is_some() {
                return self.abort_with(Err(conflict));
            }
            let own = match core::mem::take(&mut self.abort) {
                abort if !abort.is_empty() => abort,
                _ => self.own_chunk_deletes(),
            };
            match self.write_again(stored, conflict) {
                // This attempt's chunks go with the next attempt's cleanup.
                Ok(()) => self.deletes.add(&self.table, own, Purpose::Cleanup),
                Err(error) => {
                    self.abort = own;
                    self.abort_with(Err(error));
                }
            }
            return;
        }
        match check {
            Check::Single(_) | Check::Overwrite(_) if ours => {
                self.commit_done(Committed::unknown(self.stored()))
            }
            Check::Single(error) => self.finish(Err(error)),
            // Not applied, or applied and then replaced or deleted (its
            // chunks with it): committing this version again could point a
            // parent at chunks that are gone, so the write starts again as
            // a new version. Its first chunks stay for gc: the lost commit
            // may still land, and needs them then.
            Check::Overwrite(error) => {
                if let Err(error) = self.write_again(stored, error) {
                    self.finish(Err(error));
                }
            }
            Check::Condition | Check::Atomic if ours => self.commit_done(self.expected()),
            Check::Condition => self.finish(Err(self.conflict())),
            Check::Atomic => {
                let round = match &self.commit {
                    Some(Commit::Atomic { round, .. }) => *round,
                    _ => MAX_REPLANS,
                };
                if !last_writer_wins || round >= MAX_REPLANS {
                    return self.finish(Err(self.conflict()));
                }
                // A pause with jitter, so writers racing on one key stop
                // colliding; then the parent stored now, to plan against.
                let pause = self.options.retry.backoff(round - 1, self.flights.jitter());
                self.read_parent_for(Purpose::Replan, pause);
            }
            // This write's parent is stored: under last writer wins the
            // unconditional attempt may be what applied, replacing who
            // knows what.
            Check::Pinned | Check::PinnedUnknown(_) if ours => {
                let committed = match last_writer_wins {
                    true => Committed::unknown(self.stored()),
                    false => self.expected(),
                };
                self.commit_done(committed);
            }
            // Another writer's commit came after this one (or instead of
            // it): this write's chunks go, and under last writer wins the
            // write still succeeded, superseded.
            Check::Pinned => {
                let then = match last_writer_wins {
                    true => Ok(self.outcome_with(Committed::superseded())),
                    false => Err(self.conflict()),
                };
                self.abort_with(then);
            }
            Check::PinnedUnknown(error) => self.finish(Err(error)),
        }
    }

    /// True when `stored` keeps this write's version as history.
    fn kept_by(&self, stored: Option<&Item>) -> bool {
        let ours = self.split.as_ref().and_then(|s| s.manifest.as_ref());
        let (Some(stored), Some(ours)) = (stored, ours) else {
            return false;
        };
        History::of_parent(stored)
            .ok()
            .flatten()
            .is_some_and(|h| h.entries.iter().any(|e| e.version == ours.version))
    }

    /// Starts the write again as a new version over the parent `stored`,
    /// if its source can be split again (an item, not a stream already
    /// read) and it did not start again too often already; else fails with
    /// `error`.
    pub(super) fn write_again(
        &mut self,
        stored: Option<Item>,
        error: ProtocolError,
    ) -> Result<(), ProtocolError> {
        self.rewrites += 1;
        let again = matches!(self.source, PutSource::Item(_) | PutSource::Owned(_));
        if !again || self.rewrites > MAX_REPLANS {
            return Err(error);
        }
        self.read_stored(stored)?;
        self.keeps = keeps_history(self.stored_parent.as_ref(), self.options.history)?;
        self.version = VersionId::new(self.flights.clock.now_ms()?, self.flights.random());
        self.uploads = Uploads::new(&self.table, self.options.batch_items);
        self.released = false;
        self.commit = None;
        self.cleanup = Vec::new();
        self.abort = Vec::new();
        self.split = None;
        // An object this attempt stored stays for gc, as its chunks do.
        self.object = None;
        self.cutter = Cutter::Idle;
        self.phase = Phase::Restamp;
        Ok(())
    }

    /// An atomic round lost to another writer's commit: plan again against
    /// the parent stored now, and send the next round.
    pub(super) fn replan(&mut self, stored: Option<Item>) -> Result<(), ProtocolError> {
        self.read_stored(stored)?;
        let target = self.table.keys_target();
        let Some(split) = &self.split else {
            return Ok(());
        };
        let plan = plan_write_as(
            split,
            &target,
            &self.expect,
            WriteMode::Atomic,
            CommitPolicy::Overwrite,
        )?;
        let round = match &self.commit {
            Some(Commit::Atomic { round, .. }) => round + 1,
            _ => 1,
        };
        if let WriteSteps::Atomic(transaction) = plan.steps {
            self.cleanup = plan.cleanup;
            self.commit = Some(Commit::Atomic { transaction, round });
            self.send_commit();
        }
        Ok(())
    }
}
