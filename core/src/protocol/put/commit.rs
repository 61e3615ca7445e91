//! The commit point of a write, and what it means (docs/FORMAT.md,
//! "Writing"): last writer wins (an unconditional commit that learns what
//! it replaced, never resent after an ambiguous failure) or optimistic
//! locking (a commit conditional on the parent read, a lost race a
//! conflict).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::manifest::stored_version;
use crate::plan::{BatchWrite, Expect, Put, Replaced, Transaction};
use crate::protocol::ProtocolError;
use crate::value::{Item, same_item};
use crate::version::VersionId;
use crate::write::split::SplitItem;

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
