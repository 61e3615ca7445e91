//! Last writer wins and optimistic locking: how a commit treats a
//! concurrent writer, what a caller may require of the stored item, and
//! what an unconditional commit replaced (read from the old parent its
//! answer returns, so the host and the driver never read a manifest).

use alloc::vec::Vec;

use super::ops::{BatchWrite, Put};
use super::write::{Expect, frame_deletes, overwrite_put};
use super::{PlanError, Target};
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest, stored_version};
use crate::value::Item;
use crate::version::VersionId;
use crate::write::split::SplitItem;

/// How a write's commit treats a writer that committed since the stored
/// parent was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Commit {
    /// Last writer wins, as PutItem does (the default): the commit replaces
    /// whatever is stored and learns from its answer what it replaced.
    #[default]
    Overwrite,
    /// Optimistic locking: the commit holds only while the stored parent is
    /// still the one [`Expect`] describes; a lost race is a conflict.
    IfExpected,
}

impl Commit {
    /// The unconditional commit of a batch write under this policy.
    pub(super) fn overwrite(self, split: &SplitItem, target: &Target<'_>) -> Option<Put> {
        match self {
            Self::Overwrite => Some(overwrite_put(split, target)),
            Self::IfExpected => None,
        }
    }
}

/// What a caller requires of the stored item before a write replaces it
/// (`--if-absent`, `--if-version`; the driver's `expect`). A write with a
/// precondition commits with [`Commit::IfExpected`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// No item with the key is stored.
    Absent,
    /// The stored item is a virtual item of this version.
    Version(VersionId),
    /// The stored item is exactly as an earlier read found it: absent, a
    /// plain item, or a virtual item of this version and last in-place
    /// update. An update that rewrites its item commits on it, so no
    /// change made since its read is lost.
    Stored(Expect),
}

impl Precondition {
    /// True when the stored parent, as `expect` describes it, meets the
    /// precondition.
    pub fn holds(&self, expect: &Expect) -> bool {
        match (self, expect) {
            (Self::Absent, Expect::Absent) => true,
            (Self::Version(wanted), Expect::Version { version, .. }) => wanted == version,
            (
                Self::Stored(Expect::Version {
                    version: wanted,
                    updated: wanted_update,
                    ..
                }),
                Expect::Version {
                    version, updated, ..
                },
            ) => wanted == version && wanted_update == updated,
            (Self::Stored(wanted), stored) => wanted == stored,
            _ => false,
        }
    }
}

/// What an unconditional commit replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Replaced {
    /// The replaced virtual item's version (`None`: nothing was stored, a
    /// plain item was, or its manifest could not be read).
    pub version: Option<VersionId>,
    /// Deletes of the replaced version's chunks.
    pub cleanup: Vec<BatchWrite>,
    /// Why the replaced version's chunks are left to `gc`: its manifest is
    /// damaged, of another layout, or beyond the target's limit. The commit
    /// stands all the same; only the cleanup is skipped.
    pub left_for_gc: Option<PlanError>,
}

/// What the commit of the parent `new` replaced, from the old parent its
/// answer returned (`ReturnValues: ALL_OLD`; `None` when nothing was
/// stored). A resent commit may return this write's own parent: it
/// replaced nothing then, and this write's chunks are never deleted.
pub fn plan_replaced(old: Option<&Item>, new: &Item, target: &Target<'_>) -> Replaced {
    let unknown = |error| Replaced {
        version: None,
        cleanup: Vec::new(),
        left_for_gc: Some(error),
    };
    let expect = match Expect::from_stored_at(old, target) {
        Ok(expect) => expect,
        Err(error) => return unknown(error),
    };
    let Expect::Version { version, .. } = expect else {
        return Replaced {
            version: None,
            cleanup: Vec::new(),
            left_for_gc: None,
        };
    };
    if stored_version(new).ok().flatten() == Some(version) {
        return Replaced {
            version: None,
            cleanup: Vec::new(),
            left_for_gc: None,
        };
    }
    let over_limit = old
        .and_then(|p| target.read_manifest(p).err())
        .filter(|e| matches!(e, PlanError::OverLimit { .. }));
    let new_manifest = new
        .get(MANIFEST_ATTRIBUTE)
        .and_then(|v| Manifest::from_value(v).ok());
    match frame_deletes(target, new, expect.frames(), new_manifest.as_ref()) {
        Ok(cleanup) => Replaced {
            version: Some(version),
            cleanup,
            left_for_gc: over_limit,
        },
        Err(error) => Replaced {
            version: Some(version),
            ..unknown(error)
        },
    }
}
