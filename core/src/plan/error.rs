//! Plan errors.

use crate::code::Code;
use core::fmt;

use crate::layout::ChunkKeyError;
use crate::manifest::ManifestError;

/// Why a plan could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// Atomic mode was required but the write does not fit one transaction.
    AtomicTooLarge {
        /// Actions needed.
        actions: usize,
        /// Bytes needed.
        bytes: usize,
    },
    /// The stored item's chunks were written with another layout than the
    /// target's: planning with the target's would miss them.
    LayoutMismatch {
        /// The layout the manifest records.
        stored: alloc::string::String,
    },
    /// The new write reuses the version id of the item it replaces; its
    /// cleanup would delete its own chunks.
    VersionReused,
    /// A stored parent's manifest is unreadable.
    Manifest(ManifestError),
    /// A stored manifest describes an item larger than the caller's limit;
    /// nothing was planned for it.
    OverLimit {
        /// The raw length the manifest records.
        raw_len: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// A stored manifest claims more chunks than the caller builds keys
    /// for; nothing was planned for it.
    TooManyChunks {
        /// The chunk count the manifest records.
        chunk_count: u32,
        /// The caller's limit.
        limit: u32,
    },
    /// A chunk key could not be made.
    ChunkKey(ChunkKeyError),
}

impl PlanError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::AtomicTooLarge { .. } => Code::AtomicTooLarge,
            Self::LayoutMismatch { .. } => Code::LayoutMismatch,
            Self::VersionReused => Code::VersionReused,
            Self::Manifest(e) => e.code(),
            Self::OverLimit { .. } | Self::TooManyChunks { .. } => Code::DecompressLimit,
            Self::ChunkKey(e) => e.code(),
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AtomicTooLarge { actions, bytes } => write!(
                f,
                "write needs {actions} actions and {bytes} bytes, a transaction allows 100 and 4194304"
            ),
            Self::LayoutMismatch { stored } => {
                write!(f, "item was stored with the {stored} layout")
            }
            Self::VersionReused => {
                f.write_str("the new version id equals the replaced one; make a fresh id per write")
            }
            Self::Manifest(e) => e.fmt(f),
            Self::OverLimit { raw_len, limit } => write!(
                f,
                "stored item is {raw_len} bytes, over this reader's limit of {limit}"
            ),
            Self::TooManyChunks { chunk_count, limit } => write!(
                f,
                "stored item claims {chunk_count} chunks, more than the {limit} whose keys \
                 are built at once"
            ),
            Self::ChunkKey(e) => e.fmt(f),
        }
    }
}

impl From<ManifestError> for PlanError {
    fn from(e: ManifestError) -> Self {
        Self::Manifest(e)
    }
}

impl From<ChunkKeyError> for PlanError {
    fn from(e: ChunkKeyError) -> Self {
        Self::ChunkKey(e)
    }
}
