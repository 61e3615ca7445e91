//! Why a protocol machine stopped.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::request::{Failure, FailureKind, Operation};
use crate::code::Code;
use crate::history::HistoryError;
use crate::object::ObjectError;
use crate::plan::{ChangesError, PlanError};
use crate::read::reassemble::ReassembleError;
use crate::upload::UploadError;
use crate::validate::Violation;
use crate::write::split::SplitError;

/// Why an operation failed. Whatever the variant, what is stored was left
/// whole: the old item or the new one, and at most chunks no parent
/// refers to (which `gc` removes).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The item could not be split (invalid, too large, bad options).
    Split(SplitError),
    /// The requests could not be planned (an unreadable stored manifest, a
    /// layout mismatch).
    Plan(PlanError),
    /// The stored item does not rebuild: nothing of it is returned.
    Reassemble(ReassembleError),
    /// A key given by the caller does not match the table's key schema.
    Key(Vec<Violation>),
    /// An update's changes cannot be made.
    Changes(ChangesError),
    /// An upload could not be stamped in the store's time.
    Upload(UploadError),
    /// Version history could not be kept or read.
    History(HistoryError),
    /// DynamoDB refused a request, or kept failing it until retries ran out.
    Request {
        /// The operation that failed.
        operation: Operation,
        /// The last failure.
        failure: Failure,
        /// Attempts made.
        attempts: u32,
    },
    /// A batch request kept leaving part of itself unprocessed, round
    /// after round, until the retry policy's patience ran out.
    Unprocessed {
        /// The batch operation.
        operation: Operation,
        /// Requests (or keys) still unprocessed.
        left: usize,
        /// Rounds in a row that made no progress.
        rounds: u32,
    },
    /// Another writer changed the item first (or the stored item fails the
    /// write's precondition); nothing of this write was kept.
    Conflict {
        /// The item's key, as text (`pk=a sk=b`).
        key: String,
    },
    /// Another writer replaced the item under each read of it: every time
    /// the parent was read again it named a newer version, whose chunks a
    /// later overwrite deleted in turn. (Chunks missing under a parent
    /// that stays are [`ReassembleError::ChunkMissing`].)
    ChunksVanished {
        /// The item's key, as text.
        key: String,
        /// Parent reads made.
        attempts: u32,
    },
    /// The item's TTL attribute has passed (by the store's clock) and some
    /// of its chunks are gone: DynamoDB's TTL is deleting it.
    ItemExpired {
        /// The item's key, as text.
        key: String,
        /// The TTL attribute's value, seconds since the epoch.
        expired_at: u64,
    },
    /// The executor's clock and the store's differ by more than can be
    /// trusted (chunk ages are judged by the store's clock).
    ClockSkew {
        /// Store time minus local time.
        offset_ms: i64,
        /// The largest offset corrected.
        limit_ms: u64,
    },
    /// A manifest's S3 object is not this version's own, or no store is
    /// configured for it.
    Object(ObjectError),
    /// The S3 object a committed parent names is gone or changed (its
    /// ETag differs), and the parent still names it after every re-read.
    ObjectMissing {
        /// The object, as `s3://bucket/key`.
        object: String,
    },
    /// An S3 object holds another number of bytes than its manifest says.
    ObjectLength {
        /// The object, as `s3://bucket/key`.
        object: String,
        /// The length the manifest gives.
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// An answer of another kind than its request's (an executor's bug).
    UnexpectedAnswer {
        /// The request's operation.
        operation: Operation,
    },
    /// The executor stopped the operation (its caller cancelled, or its
    /// own input failed); what could be cleaned up was.
    Cancelled,
}

impl ProtocolError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::Split(e) => e.code(),
            Self::Plan(e) => e.code(),
            Self::Reassemble(e) => e.code(),
            Self::Key(v) => v.first().map_or(Code::KeyInvalid, Violation::code),
            Self::Changes(e) => e.code(),
            Self::Upload(e) => e.code(),
            Self::History(e) => e.code(),
            Self::Request {
                failure, operation, ..
            } => match (failure.kind, failure.code.as_str()) {
                (FailureKind::NoAnswer, _) => Code::ConnectionFailed,
                _ if operation.s3() => Code::S3Error,
                (_, "ResourceNotFoundException") => Code::TableNotFound,
                (_, "ValidationException") => Code::DynamodbValidation,
                _ => Code::DynamodbError,
            },
            Self::Unprocessed { .. } => Code::DynamodbError,
            Self::Conflict { .. } => Code::Conflict,
            Self::ChunksVanished { .. } => Code::ChunksVanished,
            Self::ItemExpired { .. } => Code::ItemExpired,
            Self::ClockSkew { .. } => Code::ClockSkew,
            Self::Object(e) => e.code(),
            Self::ObjectMissing { .. } => Code::ObjectMissing,
            Self::ObjectLength { .. } => Code::ObjectLengthMismatch,
            Self::UnexpectedAnswer { .. } => Code::Internal,
            Self::Cancelled => Code::Internal,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Split(e) => e.fmt(f),
            Self::Plan(e) => e.fmt(f),
            Self::Reassemble(e) => write!(f, "stored item is damaged: {e}"),
            Self::Upload(e) => e.fmt(f),
            Self::History(e) => e.fmt(f),
            Self::Changes(e) => write!(f, "update is invalid: {e}"),
            Self::Key(violations) => {
                f.write_str("key is invalid: ")?;
                for (i, v) in violations.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    v.fmt(f)?;
                }
                Ok(())
            }
            Self::Request {
                operation,
                failure,
                attempts,
            } => write!(
                f,
                "{} failed after {attempts} attempt{}: {}: {}",
                operation.name(),
                if *attempts == 1 { "" } else { "s" },
                failure.code,
                failure.message
            ),
            Self::Unprocessed {
                operation,
                left,
                rounds,
            } => write!(
                f,
                "{} left {left} requests unprocessed in {rounds} rounds in a row",
                operation.name()
            ),
            Self::Conflict { key } => write!(
                f,
                "item {key} was changed by another writer; nothing of this write was kept"
            ),
            Self::ChunksVanished { key, attempts } => write!(
                f,
                "item {key} was replaced by another writer under each of {attempts} reads; read it again later"
            ),
            Self::ItemExpired { key, expired_at } => write!(
                f,
                "item {key} expired (its TTL, {expired_at}, has passed) and is being deleted: \
                 some of its chunks are gone"
            ),
            Self::ClockSkew {
                offset_ms,
                limit_ms,
            } => write!(
                f,
                "this machine's clock is {offset_ms} ms off the store's (limit {limit_ms} ms); fix the clock"
            ),
            Self::Object(e) => e.fmt(f),
            Self::ObjectMissing { object } => write!(
                f,
                "{object} is gone or changed, and the item's parent still names it: the \
                 object was deleted or overwritten outside dynaslice"
            ),
            Self::ObjectLength {
                object,
                expected,
                found,
            } => write!(
                f,
                "{object} holds {found} bytes, its manifest {expected}: it was changed \
                 outside dynaslice"
            ),
            Self::UnexpectedAnswer { operation } => write!(
                f,
                "{} got an answer of another kind (an executor's bug)",
                operation.name()
            ),
            Self::Cancelled => f.write_str("the operation was cancelled"),
        }
    }
}

impl From<ObjectError> for ProtocolError {
    fn from(e: ObjectError) -> Self {
        Self::Object(e)
    }
}

impl From<SplitError> for ProtocolError {
    fn from(e: SplitError) -> Self {
        Self::Split(e)
    }
}

impl From<ChangesError> for ProtocolError {
    fn from(e: ChangesError) -> Self {
        Self::Changes(e)
    }
}

impl From<PlanError> for ProtocolError {
    fn from(e: PlanError) -> Self {
        Self::Plan(e)
    }
}

impl From<ReassembleError> for ProtocolError {
    fn from(e: ReassembleError) -> Self {
        Self::Reassemble(e)
    }
}

impl From<HistoryError> for ProtocolError {
    fn from(e: HistoryError) -> Self {
        Self::History(e)
    }
}
