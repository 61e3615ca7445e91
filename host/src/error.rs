//! The host's one error type: every failure has a stable `code()`, a
//! lowercase message with the numbers, and never hides what was stored.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use dynaslice_core::codec::CodecError;
use dynaslice_core::history::HistoryError;
use dynaslice_core::plan::PlanError;
use dynaslice_core::protocol::ProtocolError;
use dynaslice_core::upload::UploadError;
use dynaslice_core::{Code, ReassembleError, SplitError, Violation};

/// Why a host operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The item could not be split (invalid, too large, bad options).
    #[error(transparent)]
    Split(#[from] SplitError),
    /// The requests could not be planned (unreadable stored manifest, layout mismatch).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The stored chunks do not rebuild the item: nothing is returned.
    #[error("stored item is damaged: {0}")]
    Reassemble(#[from] ReassembleError),
    /// A stored frame could not be decoded.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A key given by the caller does not match the table's key schema.
    #[error("key is invalid: {}", join(.0))]
    Key(Vec<Violation>),
    /// Another writer committed first; this write's chunks were deleted and
    /// the stored item is the other writer's.
    #[error("item {key} was changed by another writer; nothing of this write was kept")]
    Conflict {
        /// The item's key, as text.
        key: String,
    },
    /// The table does not exist on the server.
    #[error("table {table} does not exist")]
    TableNotFound {
        /// The table's name.
        table: String,
    },
    /// The table cannot hold virtual items as configured.
    #[error("table {table} cannot hold virtual items: {reason}")]
    TableUnsupported {
        /// The table's name.
        table: String,
        /// What about its key schema or its chunk table does not fit.
        reason: String,
    },
    /// Another writer replaced the item under each read of it.
    #[error(
        "item {key} was replaced by another writer under each of {attempts} reads; read it again later"
    )]
    ChunksVanished {
        /// The item's key, as text.
        key: String,
        /// Parent reads made.
        attempts: u32,
    },
    /// A protocol machine's failure with no variant of its own here (an
    /// expired item): core's message and code.
    #[error(transparent)]
    Protocol(ProtocolError),
    /// DynamoDB refused a request, or kept failing it until retries ran out.
    #[error("{operation} failed after {attempts} attempt{}: {message}", if *.attempts == 1 { "" } else { "s" })]
    Dynamo {
        /// The API operation.
        operation: &'static str,
        /// DynamoDB's error code (`ValidationException`), or the transport's failure kind.
        aws_code: String,
        /// What it said.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// This machine's clock and the store's differ by more than can be
    /// trusted (chunk ages are judged by the store's clock).
    #[error(
        "this machine's clock is {offset_ms} ms off the store's (limit {limit_ms} ms); fix the clock"
    )]
    ClockSkew {
        /// Store time minus local time.
        offset_ms: i64,
        /// The largest offset corrected.
        limit_ms: u64,
    },
    /// An upload could not be stamped in the store's time.
    #[error(transparent)]
    Upload(#[from] UploadError),
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The local file's path, as given.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The embedded store could not start.
    #[error("embedded store: {0}")]
    Embedded(String),
    /// S3 refused a request outside the protocols (making a bucket).
    #[error("S3: {0}")]
    S3(String),
    /// Input the caller gave is not usable (bad JSON, bad option).
    #[error("{0}")]
    Input(String),
    /// An invariant of dynaslice itself failed (a bug): the SDK refused a
    /// request the host built, or a plan broke its own rules.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<HistoryError> for HostError {
    fn from(error: HistoryError) -> Self {
        Self::Protocol(ProtocolError::History(error))
    }
}

impl From<ProtocolError> for HostError {
    fn from(error: ProtocolError) -> Self {
        match error {
            ProtocolError::Split(e) => Self::Split(e),
            ProtocolError::Plan(e) => Self::Plan(e),
            ProtocolError::Reassemble(e) => Self::Reassemble(e),
            ProtocolError::Key(v) => Self::Key(v),
            ProtocolError::Upload(e) => Self::Upload(e),
            ProtocolError::Request {
                operation,
                failure,
                attempts,
            } => Self::Dynamo {
                operation: operation.name(),
                message: format!("{}: {}", failure.code, failure.message),
                aws_code: failure.code,
                attempts,
            },
            ProtocolError::Unprocessed {
                operation,
                left,
                rounds,
            } => Self::Dynamo {
                operation: operation.name(),
                aws_code: "Unprocessed".into(),
                message: format!("{left} requests still unprocessed"),
                attempts: rounds,
            },
            ProtocolError::Conflict { key } => Self::Conflict { key },
            ProtocolError::ChunksVanished { key, attempts } => {
                Self::ChunksVanished { key, attempts }
            }
            ProtocolError::ClockSkew {
                offset_ms,
                limit_ms,
            } => Self::ClockSkew {
                offset_ms,
                limit_ms,
            },
            other => Self::Protocol(other),
        }
    }
}

fn join(violations: &[Violation]) -> String {
    let texts: Vec<String> = violations.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

impl HostError {
    /// The stable error code (the core's codes pass through unchanged).
    pub fn code(&self) -> Code {
        match self {
            Self::Split(e) => e.code(),
            Self::Plan(e) => e.code(),
            Self::Reassemble(e) => e.code(),
            Self::Codec(e) => e.code(),
            Self::Key(v) => v.first().map_or(Code::KeyInvalid, Violation::code),
            Self::Conflict { .. } => Code::Conflict,
            Self::TableNotFound { .. } => Code::TableNotFound,
            Self::TableUnsupported { .. } => Code::TableUnsupported,
            Self::ChunksVanished { .. } => Code::ChunksVanished,
            Self::Protocol(e) => e.code(),
            Self::Dynamo { aws_code, .. } => match aws_code.as_str() {
                "ResourceNotFoundException" => Code::TableNotFound,
                "ValidationException" => Code::DynamodbValidation,
                "DispatchFailure" | "TimeoutError" | "ResponseError" => Code::ConnectionFailed,
                _ => Code::DynamodbError,
            },
            Self::ClockSkew { .. } => Code::ClockSkew,
            Self::Upload(e) => e.code(),
            Self::Io { .. } => Code::IoError,
            Self::Embedded(_) => Code::EmbeddedStore,
            Self::S3(_) => Code::S3Error,
            Self::Input(_) => Code::InputInvalid,
            Self::Internal(_) => Code::Internal,
        }
    }

    /// Wraps a failed SDK call.
    pub(crate) fn dynamo<E, R>(
        operation: &'static str,
        error: SdkError<E, R>,
        attempts: u32,
    ) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
        R: std::fmt::Debug,
    {
        let (aws_code, message) = describe(&error);
        Self::Dynamo {
            operation,
            aws_code,
            message,
            attempts,
        }
    }

    /// An I/O failure on `path`.
    pub fn io(path: impl std::fmt::Display, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_string(),
            source,
        }
    }
}

/// The error code and message of an SDK failure, with the transport's
/// underlying cause (the SDK's own Display says only "dispatch failure").
pub(crate) fn describe<E, R>(error: &SdkError<E, R>) -> (String, String)
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    match error {
        SdkError::ServiceError(service) => {
            let e = service.err();
            let code = e.code().unwrap_or("UnknownError").to_string();
            let message = e.message().unwrap_or("no message").to_string();
            (code.clone(), format!("{code}: {message}"))
        }
        other => {
            let kind = match other {
                SdkError::TimeoutError(_) => "TimeoutError",
                SdkError::DispatchFailure(_) => "DispatchFailure",
                SdkError::ResponseError(_) => "ResponseError",
                _ => "ConstructionFailure",
            };
            let mut message = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            (kind.to_string(), message)
        }
    }
}
