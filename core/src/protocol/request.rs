//! What a machine asks its executor to send, and what the executor feeds
//! back: the request, then the answer or the failure, each described by
//! facts an executor can read off any SDK (an error code, an HTTP status),
//! never by a decision. Whether a failure is worth a resend, may have been
//! applied, or means a condition failed is decided here, once.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::time::Duration;

use crate::plan::{
    BatchGet, BatchWrite, Delete, Get, Put, Query, Scan, Transaction, Update, WriteRequest,
};
use crate::value::Item;

/// Identifies one request a machine handed out, until its answer is fed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// The DynamoDB API operations the protocols use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// GetItem.
    GetItem,
    /// PutItem.
    PutItem,
    /// DeleteItem.
    DeleteItem,
    /// UpdateItem.
    UpdateItem,
    /// TransactWriteItems.
    TransactWriteItems,
    /// BatchWriteItem.
    BatchWriteItem,
    /// BatchGetItem.
    BatchGetItem,
    /// Scan.
    Scan,
    /// Query.
    Query,
    /// S3 PutObject.
    PutObject,
    /// S3 CreateMultipartUpload.
    CreateMultipartUpload,
    /// S3 UploadPart.
    UploadPart,
    /// S3 CompleteMultipartUpload.
    CompleteMultipartUpload,
    /// S3 AbortMultipartUpload.
    AbortMultipartUpload,
    /// S3 HeadObject.
    HeadObject,
    /// S3 GetObject.
    GetObject,
    /// S3 DeleteObject.
    DeleteObject,
    /// S3 ListObjectsV2.
    ListObjectsV2,
    /// S3 ListMultipartUploads.
    ListMultipartUploads,
}

impl Operation {
    /// The operation's name in DynamoDB's API (`BatchWriteItem`).
    pub fn name(self) -> &'static str {
        match self {
            Self::GetItem => "GetItem",
            Self::PutItem => "PutItem",
            Self::DeleteItem => "DeleteItem",
            Self::UpdateItem => "UpdateItem",
            Self::TransactWriteItems => "TransactWriteItems",
            Self::BatchWriteItem => "BatchWriteItem",
            Self::BatchGetItem => "BatchGetItem",
            Self::Scan => "Scan",
            Self::Query => "Query",
            Self::PutObject => "PutObject",
            Self::CreateMultipartUpload => "CreateMultipartUpload",
            Self::UploadPart => "UploadPart",
            Self::CompleteMultipartUpload => "CompleteMultipartUpload",
            Self::AbortMultipartUpload => "AbortMultipartUpload",
            Self::HeadObject => "HeadObject",
            Self::GetObject => "GetObject",
            Self::DeleteObject => "DeleteObject",
            Self::ListObjectsV2 => "ListObjectsV2",
            Self::ListMultipartUploads => "ListMultipartUploads",
        }
    }

    /// True for S3's operations.
    pub fn s3(self) -> bool {
        matches!(
            self,
            Self::PutObject
                | Self::CreateMultipartUpload
                | Self::UploadPart
                | Self::CompleteMultipartUpload
                | Self::AbortMultipartUpload
                | Self::HeadObject
                | Self::GetObject
                | Self::DeleteObject
                | Self::ListObjectsV2
                | Self::ListMultipartUploads
        )
    }

    /// True for reads, whose capacity is counted in read units.
    pub fn reads(self) -> bool {
        matches!(
            self,
            Self::GetItem
                | Self::BatchGetItem
                | Self::Scan
                | Self::Query
                | Self::HeadObject
                | Self::GetObject
        )
    }
}

/// One DynamoDB request, with everything the executor must send.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// A GetItem: a parent read.
    Get(Get),
    /// A PutItem: a commit.
    Put(Put),
    /// A DeleteItem: a delete's commit.
    Delete(Delete),
    /// An UpdateItem: an update of a parent's own attributes.
    Update(Update),
    /// A TransactWriteItems with its idempotency token
    /// (`ClientRequestToken`: a resend within ten minutes is not applied
    /// twice).
    Transact {
        /// The actions, all applied or none.
        transaction: Transaction,
        /// The idempotency token: the write's version id, with the round
        /// number after the first.
        token: String,
    },
    /// A BatchWriteItem: chunk puts, or deletes.
    BatchWrite(BatchWrite),
    /// A BatchGetItem: chunks, or `gc`'s parents.
    BatchGet(BatchGet),
    /// One page of a Scan.
    Scan(Scan),
    /// One page of a caller's Query (a Scan when it has no key condition).
    Query(Query),
    /// An S3 request for a payload's object.
    Object(ObjectRequest),
}

/// An object in S3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectKey {
    /// The bucket.
    pub bucket: String,
    /// The key.
    pub key: String,
}

/// A part of a multipart upload S3 has taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartDone {
    /// Its number, from 1.
    pub number: u32,
    /// The ETag S3 gave it.
    pub etag: String,
    /// Its CRC-32 (as S3's `ChecksumCRC32`, big-endian).
    pub crc32: u32,
}

/// One S3 request. Every write of an object is conditional on no object
/// having its key (`If-None-Match: *`), and carries the body's CRC-32
/// (`x-amz-checksum-crc32`), which S3 checks before it stores a byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectRequest {
    /// PutObject of a whole object.
    Put {
        /// Where.
        object: ObjectKey,
        /// The bytes.
        body: Arc<[u8]>,
        /// Their CRC-32.
        crc32: u32,
    },
    /// CreateMultipartUpload (with the CRC-32 checksum algorithm).
    StartUpload {
        /// Where.
        object: ObjectKey,
    },
    /// UploadPart.
    UploadPart {
        /// Where.
        object: ObjectKey,
        /// The upload.
        upload_id: String,
        /// The part's number, from 1.
        number: u32,
        /// The bytes.
        body: Arc<[u8]>,
        /// Their CRC-32.
        crc32: u32,
    },
    /// CompleteMultipartUpload of these parts, in order.
    CompleteUpload {
        /// Where.
        object: ObjectKey,
        /// The upload.
        upload_id: String,
        /// Its parts.
        parts: Vec<PartDone>,
    },
    /// AbortMultipartUpload (`NoSuchUpload` counts as done).
    AbortUpload {
        /// Where.
        object: ObjectKey,
        /// The upload.
        upload_id: String,
    },
    /// HeadObject: its ETag and length.
    Head {
        /// Which.
        object: ObjectKey,
    },
    /// GetObject of bytes `range` (`Range: bytes=start-(end-1)`), only if
    /// its ETag is still `etag` (`If-Match`).
    Get {
        /// Which.
        object: ObjectKey,
        /// The ETag it must have.
        etag: String,
        /// The bytes.
        range: core::ops::Range<u64>,
    },
    /// DeleteObject (a missing object counts as deleted).
    Delete {
        /// Which.
        object: ObjectKey,
    },
    /// A page of ListObjectsV2 under `prefix`.
    List {
        /// The bucket.
        bucket: String,
        /// The prefix.
        prefix: String,
        /// The continuation token of the page before.
        after: Option<String>,
    },
    /// A page of ListMultipartUploads under `prefix`.
    ListUploads {
        /// The bucket.
        bucket: String,
        /// The prefix.
        prefix: String,
        /// The key and upload id markers of the page before.
        after: Option<(String, String)>,
    },
}

/// An object a listing named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Its key.
    pub key: String,
    /// Its `LastModified`, in Unix milliseconds by S3's clock.
    pub modified_ms: Option<u64>,
}

/// A multipart upload a listing named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upload {
    /// Its key.
    pub key: String,
    /// Its id.
    pub upload_id: String,
    /// When it started, in Unix milliseconds by S3's clock.
    pub initiated_ms: Option<u64>,
}

impl ObjectRequest {
    /// The S3 operation this request is.
    pub fn operation(&self) -> Operation {
        match self {
            Self::Put { .. } => Operation::PutObject,
            Self::StartUpload { .. } => Operation::CreateMultipartUpload,
            Self::UploadPart { .. } => Operation::UploadPart,
            Self::CompleteUpload { .. } => Operation::CompleteMultipartUpload,
            Self::AbortUpload { .. } => Operation::AbortMultipartUpload,
            Self::Head { .. } => Operation::HeadObject,
            Self::Get { .. } => Operation::GetObject,
            Self::Delete { .. } => Operation::DeleteObject,
            Self::List { .. } => Operation::ListObjectsV2,
            Self::ListUploads { .. } => Operation::ListMultipartUploads,
        }
    }
}

/// What an S3 request answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectAnswer {
    /// A PutObject or CompleteMultipartUpload stored the object.
    Written {
        /// Its ETag.
        etag: String,
    },
    /// A multipart upload started.
    Started {
        /// Its id.
        upload_id: String,
    },
    /// A part was stored.
    Part {
        /// Its ETag.
        etag: String,
    },
    /// HeadObject's answer.
    Head {
        /// The object's ETag.
        etag: String,
        /// Its length.
        len: u64,
    },
    /// GetObject's bytes, and the ETag the answer gave (a server that
    /// ignores `If-Match` still tells which object it read).
    Bytes {
        /// The bytes.
        bytes: Vec<u8>,
        /// The object's ETag, when the answer had one.
        etag: Option<String>,
    },
    /// A delete or an abort was done.
    Done,
    /// A page of ListObjectsV2.
    Listed {
        /// Its objects.
        objects: Vec<Listed>,
        /// The continuation token of the next page (`None`: the last).
        next: Option<String>,
        /// The answer's `Date`, in Unix milliseconds: S3's clock now.
        now_ms: Option<u64>,
    },
    /// A page of ListMultipartUploads.
    Uploads {
        /// Its uploads.
        uploads: Vec<Upload>,
        /// The markers of the next page (`None`: the last).
        next: Option<(String, String)>,
        /// The answer's `Date`, in Unix milliseconds: S3's clock now.
        now_ms: Option<u64>,
    },
}

impl Request {
    /// The operation this request is.
    pub fn operation(&self) -> Operation {
        match self {
            Self::Get(_) => Operation::GetItem,
            Self::Put(_) => Operation::PutItem,
            Self::Delete(_) => Operation::DeleteItem,
            Self::Update(_) => Operation::UpdateItem,
            Self::Transact { .. } => Operation::TransactWriteItems,
            Self::BatchWrite(_) => Operation::BatchWriteItem,
            Self::BatchGet(_) => Operation::BatchGetItem,
            Self::Scan(_) => Operation::Scan,
            Self::Query(q) if q.key_condition.is_none() => Operation::Scan,
            Self::Query(_) => Operation::Query,
            Self::Object(request) => request.operation(),
        }
    }
}

/// A request to send now or after a pause, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Send {
    /// Feed the answer back with this id.
    pub id: RequestId,
    /// What to send.
    pub request: Request,
    /// Wait this long first (a retry's backoff, or a pause between rounds).
    pub delay: Duration,
    /// False when this request must reach the service at most once per
    /// `Send`: an SDK's own retries (which resend after a lost answer) must
    /// be off for it. The machine resends it itself when that is safe.
    pub resendable: bool,
}

/// What an answer said, when the service carried the request out.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A GetItem's item (`None`: no item has the key).
    Item(Option<Item>),
    /// A PutItem, DeleteItem, UpdateItem or TransactWriteItems was applied; `old` is
    /// the item a PutItem replaced, when it asked for it
    /// (`ReturnValues: ALL_OLD`; `None` when nothing was there).
    Applied {
        /// The item the PutItem replaced, whole.
        old: Option<Item>,
    },
    /// A BatchWriteItem's answer: the requests it left unprocessed
    /// (`UnprocessedItems`), with their tables.
    BatchWrite {
        /// Unprocessed requests.
        unprocessed: Vec<(String, WriteRequest)>,
    },
    /// A BatchGetItem's answer: the items found (keys with no item are
    /// simply absent) and the keys left unprocessed (`UnprocessedKeys`).
    BatchGet {
        /// Items found.
        items: Vec<Item>,
        /// Keys unprocessed.
        unprocessed: Vec<Item>,
    },
    /// A Scan or Query page: its items and where the next page starts
    /// (`None`: the last page).
    Scan {
        /// The page's items.
        items: Vec<Item>,
        /// `LastEvaluatedKey`.
        next: Option<Item>,
    },
    /// An S3 request's answer.
    Object(ObjectAnswer),
}

/// How a request failed, as far as the executor could see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The service answered with this HTTP status and an error.
    Answered {
        /// The HTTP status (400, 500, …; a 2xx whose answer could not be
        /// read means the request was applied).
        status: u16,
    },
    /// No answer came (a refused, reset or timed-out connection) or it
    /// could not be read: the request may have been applied.
    NoAnswer,
    /// The request was never sent (it could not be built).
    NotSent,
}

/// A failed request, as facts: the executor reports what happened, core
/// decides what it means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Whether and how the service answered.
    pub kind: FailureKind,
    /// DynamoDB's error code (`ProvisionedThroughputExceededException`),
    /// or the transport's name for what went wrong (`TimeoutError`).
    pub code: String,
    /// What it said.
    pub message: String,
    /// A cancelled transaction's reason for each action, in order
    /// (`ConditionalCheckFailed`, `None`, …); empty otherwise.
    pub reasons: Vec<String>,
}

/// DynamoDB error codes of a request refused before it was carried out
/// because a table or partition is over its rate: a resend cannot apply
/// it twice.
pub const THROTTLING_CODES: [&str; 4] = [
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    // S3's answer to a prefix over its request rate.
    "SlowDown",
];

/// DynamoDB error codes that mean "try again later" (besides any 5xx).
pub const TRANSIENT_CODES: [&str; 10] = [
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
    // S3: over the rate, a stalled body, and two conditional writes of one
    // key at once (the loser's resend then fails its condition).
    "SlowDown",
    "RequestTimeout",
    "ConditionalRequestConflict",
    "InternalError",
];

/// Transaction cancellation reasons a resend may clear.
const TRANSIENT_CANCEL_REASONS: [&str; 3] = [
    "TransactionConflict",
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
];

/// The error code of a failed condition.
const CONDITION_FAILED: &str = "ConditionalCheckFailedException";
/// S3's error code of a failed `If-None-Match` or `If-Match`.
const PRECONDITION_FAILED: &str = "PreconditionFailed";
/// A transaction's cancellation reason for a failed condition.
const CONDITION_FAILED_REASON: &str = "ConditionalCheckFailed";

impl Failure {
    /// A failure reported with no answer from the service.
    pub fn no_answer(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: FailureKind::NoAnswer,
            code: code.into(),
            message: message.into(),
            reasons: Vec::new(),
        }
    }

    /// A failure the service answered with `status` and `code`.
    pub fn answered(status: u16, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: FailureKind::Answered { status },
            code: code.into(),
            message: message.into(),
            reasons: Vec::new(),
        }
    }

    /// True when DynamoDB refused the request for throughput: it was not
    /// carried out. These get the retry policy's throttled attempts, halve
    /// the pace, and are the only failures that may resend a commit that
    /// must not be applied twice.
    pub fn throttled(&self) -> bool {
        matches!(self.kind, FailureKind::Answered { .. })
            && THROTTLING_CODES.contains(&self.code.as_str())
    }

    /// True for throttling, server errors and a missing answer: the same
    /// request may be sent again. (A write that may have been applied is
    /// still safe to resend when it is idempotent or conditional; the
    /// machines decide which may be.)
    pub fn transient(&self) -> bool {
        match self.kind {
            FailureKind::NoAnswer => true,
            FailureKind::NotSent => false,
            FailureKind::Answered { status } => {
                status >= 500 || TRANSIENT_CODES.contains(&self.code.as_str())
            }
        }
    }

    /// True unless the failure proves the request was not applied: a
    /// missing answer or a server error may come after the write was
    /// carried out, and a success whose answer could not be read was.
    pub fn maybe_applied(&self) -> bool {
        match self.kind {
            FailureKind::Answered { status } if (200..300).contains(&status) => true,
            _ => self.transient() && !self.throttled(),
        }
    }

    /// True when the request's condition failed (a conditional write's,
    /// or one action's of a transaction).
    pub fn condition_failed(&self) -> bool {
        self.code == CONDITION_FAILED
            || self.code == PRECONDITION_FAILED
            || self.reasons.iter().any(|r| r == CONDITION_FAILED_REASON)
    }

    /// True for a transaction cancelled only by conflicts with other
    /// transactions or by throttling: a resend may go through.
    pub fn transaction_retryable(&self) -> bool {
        !self.reasons.is_empty()
            && self
                .reasons
                .iter()
                .all(|r| r == "None" || TRANSIENT_CANCEL_REASONS.contains(&r.as_str()))
            && self.reasons.iter().any(|r| r != "None")
    }
}

/// The store's time as an answer's `Date` header gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreDate {
    /// The header's time in Unix milliseconds (whole seconds).
    pub unix_ms: u64,
}

/// What the executor feeds back for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The answer, or the failure.
    pub result: Result<Answer, Failure>,
    /// Capacity units the answer reported consuming (`ConsumedCapacity`,
    /// summed over its tables).
    pub consumed: f64,
    /// The answer's `Date` header, when it had one.
    pub date: Option<StoreDate>,
    /// The executor's own clock when the answer arrived, in Unix
    /// milliseconds: with `date`, how far that clock is from the store's.
    pub local_ms: u64,
}

impl Response {
    /// An answer with no capacity and no `Date`, received at `local_ms`.
    pub fn answer(answer: Answer, local_ms: u64) -> Self {
        Self {
            result: Ok(answer),
            consumed: 0.0,
            date: None,
            local_ms,
        }
    }

    /// A failure, received at `local_ms`.
    pub fn failure(failure: Failure, local_ms: u64) -> Self {
        Self {
            result: Err(failure),
            consumed: 0.0,
            date: None,
            local_ms,
        }
    }
}
