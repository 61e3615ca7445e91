//! The trust boundary: an upload split elsewhere is checked completely
//! before anything is written, and read in bounded memory and time.
//!
//! The body is `DSU1`, the header's length (u32 LE), the header JSON
//! (`{"parent": <DynamoDB JSON>, "chunks": [<length>, …]}`), then each
//! chunk's bytes. The header is checked against the parent's manifest
//! (core's `check_upload_header`: count, every length, the size limit)
//! before a byte of chunk data is read; chunk data is then read exactly as
//! declared, never more than the body limit, with an idle and a total
//! timeout; the host makes every chunk key and digest itself, and the item
//! must rebuild (core's `verify_upload`) before the commit protocol runs.
//!
//! [`upload_router`] is this as an axum `Router` a backend mounts behind
//! its own authentication, with a [`KeyScope`] per request; `dynaslice
//! serve` mounts it at `/api/upload`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use axum::body::{Body, Bytes};
use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::response::Json;
use axum::routing::post;
use axum::{Extension, Router};
use dynaslice_core::upload::{
    UploadError, UploadRules, check_upload_header, upload_chunk_item, verify_upload,
};
use dynaslice_core::{Category, Code, Item, SplitItem};
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::{ApiError, check_scope};
use crate::json::OutcomeJson;
use crate::json::item_from_json;
use crate::put::{PutOptions, PutOutcome};
use crate::table::TableConfig;

/// First bytes of an upload body.
pub const UPLOAD_MAGIC: &[u8; 4] = b"DSU1";
/// Largest header: a parent of up to 409,600 bytes in base64 JSON, with room.
const MAX_HEADER_BYTES: usize = 2 << 20;

/// Which partition keys a caller may write. A backend that mounts
/// [`upload_router`] inserts one per request (an axum `Extension`) after
/// authenticating the caller; a request without one is refused (500
/// `KEY_SCOPE_MISSING`): forgetting the scope never opens every key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyScope {
    /// Any key.
    Any,
    /// String partition keys starting with this.
    Prefix(String),
}

impl KeyScope {
    /// True when an item whose partition key is `pk` (`None`: not a string)
    /// may be written.
    pub fn allows(&self, pk: Option<&str>) -> bool {
        match self {
            Self::Any => true,
            Self::Prefix(prefix) => pk.is_some_and(|pk| pk.starts_with(prefix.as_str())),
        }
    }
}

/// What an upload endpoint accepts.
#[derive(Clone, Debug)]
pub struct UploadConfig {
    /// The tables uploads may go to, by name (the `table` query parameter).
    pub tables: BTreeMap<String, TableConfig>,
    /// The largest item accepted, in raw payload bytes.
    pub max_item_bytes: usize,
    /// Longest pause while the body is sent.
    pub body_idle_timeout: Duration,
    /// Longest the whole body may take.
    pub body_timeout: Duration,
}

impl UploadConfig {
    /// The largest body: the item, its chunk overhead and a header.
    pub fn max_body_bytes(&self) -> usize {
        self.max_item_bytes
            .saturating_add(self.max_item_bytes / 64)
            .saturating_add(MAX_HEADER_BYTES + 8)
    }
}

/// The upload endpoint as a router: `POST /?table=NAME` with an
/// `application/octet-stream` body; at most `max_uploads` at once (503
/// beyond). Each request needs a [`KeyScope`] extension. Answers the
/// outcome as JSON, or `{ "error": { code, message } }`.
pub fn upload_router<S: Clone + Send + Sync + 'static>(
    client: Client,
    config: UploadConfig,
    max_uploads: usize,
) -> Router<S> {
    let state = Arc::new(Uploads {
        client,
        config,
        permits: Arc::new(Semaphore::new(max_uploads.max(1))),
        grants: Default::default(),
    });
    Router::new()
        .route("/", post(upload))
        .route(
            "/object",
            post(super::object_upload::grant).layer(super::object_upload::body_limit()),
        )
        .route(
            "/object/commit",
            post(super::object_upload::commit).layer(super::object_upload::body_limit()),
        )
        .with_state(state)
}

/// The upload endpoint's state: where to write, its rules, its permits,
/// and the presigned PUTs waiting for their commit.
pub(super) struct Uploads {
    pub(super) client: Client,
    pub(super) config: UploadConfig,
    pub(super) permits: Arc<Semaphore>,
    pub(super) grants: super::object_upload::Grants,
}

async fn upload(
    State(uploads): State<Arc<Uploads>>,
    Query(params): Query<BTreeMap<String, String>>,
    scope: Option<Extension<KeyScope>>,
    request: Request,
) -> Result<Json<Value>, ApiError> {
    let Some(Extension(scope)) = scope else {
        return Err(ApiError::new(
            Code::KeyScopeMissing,
            "the server mounts the upload router without a key scope for this request",
        ));
    };
    let config = &uploads.config;
    let limit = config.max_body_bytes();
    let (parts, body) = request.into_parts();
    // A declared length over the limit is refused unread: a client that
    // sent `Expect: 100-continue` never sends the body at all.
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::too_large(limit));
    }
    let mut body = BodyReader::new(body, limit, config);
    // Other refusals before reading drain the body (bounded), so the client
    // reads the answer instead of a reset connection. A busy server sheds
    // the body unread: waiting for it is the load it refuses.
    let table = match admit(config, &params, &parts.headers) {
        Ok(table) => table,
        Err(e) => {
            body.drain().await;
            return Err(e);
        }
    };
    let _permit = Arc::clone(&uploads.permits)
        .try_acquire_owned()
        .map_err(|_| ApiError::busy("uploads"))?;
    let received = match receive(&mut body, table, &scope, config).await {
        Ok(received) => received,
        Err(e) => {
            // A stalled body is not waited for again.
            if e.code() != Code::BodyTimeout {
                body.drain().await;
            }
            return Err(e);
        }
    };
    let key = table.key.key_of(&received.parent);
    let outcome = commit(&uploads.client, table, config, received).await?;
    Ok(Json(outcome.to_json(&key)))
}

/// The checks made before a byte of the body is read: its type, its table.
fn admit<'c>(
    config: &'c UploadConfig,
    params: &BTreeMap<String, String>,
    headers: &axum::http::HeaderMap,
) -> Result<&'c TableConfig, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/octet-stream"))
    {
        return Err(ApiError::new(
            Code::ContentTypeUnsupported,
            "an upload is sent as application/octet-stream",
        ));
    }
    admit_table(config, params).map(|(_, table)| table)
}

/// The table the `table` query parameter names, when it is allowed.
pub(super) fn admit_table<'c, 'p>(
    config: &'c UploadConfig,
    params: &'p BTreeMap<String, String>,
) -> Result<(&'p str, &'c TableConfig), ApiError> {
    let name = params.get("table").ok_or_else(|| {
        ApiError::new(Code::ParameterMissing, "query parameter table is required")
    })?;
    let table = config.tables.get(name).ok_or_else(|| {
        ApiError::new(
            Code::TableNotAllowed,
            format!("table {name} is not on this server's allow-list"),
        )
    })?;
    Ok((name, table))
}

/// An upload read and checked: the parent, and its chunk items as stored.
struct Received {
    parent: Item,
    chunks: Vec<Item>,
    manifest: Option<dynaslice_core::manifest::Manifest>,
}

/// An upload that fails the checks: whatever the code's category, the
/// uploaded bytes are the uploader's fault (400), or over a limit (413).
fn refused(e: UploadError) -> ApiError {
    let error = ApiError::new(e.code(), e.to_string());
    if error.code().category() == Category::TooLarge {
        error
    } else {
        error.with_status(StatusCode::BAD_REQUEST)
    }
}

/// Reads the header, checks it, then reads exactly the chunk data declared.
async fn receive(
    body: &mut BodyReader,
    table: &TableConfig,
    scope: &KeyScope,
    config: &UploadConfig,
) -> Result<Received, ApiError> {
    let head = body.take(8).await?;
    if head[..4] != UPLOAD_MAGIC[..] {
        return Err(ApiError::new(
            Code::UploadMalformed,
            "upload body does not start with DSU1",
        ));
    }
    let header_len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if header_len > MAX_HEADER_BYTES {
        return Err(ApiError::new(
            Code::UploadMalformed,
            format!("upload header is {header_len} bytes, limit {MAX_HEADER_BYTES}"),
        ));
    }
    #[derive(serde::Deserialize)]
    struct Header {
        parent: Value,
        chunks: Vec<u64>,
    }
    let header: Header = serde_json::from_slice(&body.take(header_len).await?).map_err(|e| {
        ApiError::new(
            Code::UploadMalformed,
            format!("upload header is not {{\"parent\": item, \"chunks\": [lengths]}}: {e}"),
        )
    })?;
    let parent = item_from_json(&header.parent).map_err(ApiError::from)?;
    drop(header.parent);
    check_scope(scope, table, &parent)?;
    let rules = rules(table, config);
    let manifest = check_upload_header(&parent, &header.chunks, &rules).map_err(refused)?;
    // The declared total fits the body limit: checked before reading on.
    let declared = header
        .chunks
        .iter()
        .try_fold(8 + header_len as u64, |sum, n| sum.checked_add(*n));
    if declared.is_none_or(|total| total > body.limit as u64) {
        return Err(ApiError::too_large(body.limit));
    }
    let mut chunks = Vec::with_capacity(header.chunks.len());
    if let Some(manifest) = &manifest {
        for (seq, &len) in (0u32..).zip(&header.chunks) {
            // The length is the manifest's, so at most one item's worth.
            let data = body.take(len as usize).await?;
            chunks.push(upload_chunk_item(&parent, manifest, seq, data, &rules).map_err(refused)?);
        }
    }
    body.at_end().await?;
    Ok(Received {
        parent,
        chunks,
        manifest,
    })
}

fn rules<'a>(table: &'a TableConfig, config: &UploadConfig) -> UploadRules<'a> {
    table.upload_rules(config.max_item_bytes as u64)
}

/// Verifies the whole item, then writes it with the commit protocol.
async fn commit(
    client: &Client,
    table: &TableConfig,
    config: &UploadConfig,
    received: Received,
) -> Result<PutOutcome, ApiError> {
    let Received {
        parent,
        chunks,
        manifest,
    } = received;
    let options = PutOptions {
        max_item_bytes: config.max_item_bytes,
        ..PutOptions::default()
    };
    let Some(manifest) = manifest else {
        // Not split: an ordinary item, validated and written by put().
        return Ok(crate::put::put(client, table, &parent, &options, &()).await?);
    };
    let rules = rules(table, config);
    let item = crate::cpu::heavy(|| verify_upload(&parent, &chunks, &rules)).map_err(refused)?;
    drop(item);
    // The write stamps it anew in the store's time: the client's clock
    // never decides how old these chunks look to gc.
    let split = SplitItem {
        parent,
        chunks,
        manifest: Some(manifest),
    };
    Ok(crate::put::put_upload(client, table, split, &options).await?)
}

/// Reads exactly the bytes of an upload body, refusing more than `limit`,
/// a pause longer than the idle timeout and a body slower than the total.
/// Frames are kept as received and sliced, never shifted: a body of many
/// tiny chunks costs no more than one of a few large ones.
struct BodyReader {
    stream: std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, axum::Error>> + Send>>,
    frame: Bytes,
    read: usize,
    limit: usize,
    idle: Duration,
    deadline: Instant,
}

impl BodyReader {
    fn new(body: Body, limit: usize, config: &UploadConfig) -> Self {
        Self {
            stream: Box::pin(body.into_data_stream()),
            frame: Bytes::new(),
            read: 0,
            limit,
            idle: config.body_idle_timeout,
            deadline: Instant::now() + config.body_timeout,
        }
    }

    /// The next frame of the body, `None` at its end.
    async fn next_frame(&mut self) -> Result<Option<Bytes>, ApiError> {
        let wait = self
            .idle
            .min(self.deadline.saturating_duration_since(Instant::now()));
        match tokio::time::timeout(wait, self.stream.next()).await {
            Err(_) => Err(ApiError::new(
                Code::BodyTimeout,
                format!(
                    "the upload body stalled or ran out of time after {} bytes (a pause may last {} s)",
                    self.read,
                    self.idle.as_secs(),
                ),
            )),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(ApiError::new(
                Code::BodyIncomplete,
                format!("upload body failed: {e}"),
            )),
            Ok(Some(Ok(bytes))) => {
                self.read += bytes.len();
                if self.read > self.limit {
                    return Err(ApiError::too_large(self.limit));
                }
                Ok(Some(bytes))
            }
        }
    }

    /// Exactly `n` more bytes of the body.
    async fn take(&mut self, n: usize) -> Result<Vec<u8>, ApiError> {
        let mut out = Vec::with_capacity(n.min(self.limit));
        while out.len() < n {
            if self.frame.is_empty() {
                self.frame = self.next_frame().await?.ok_or_else(|| {
                    ApiError::new(
                        Code::BodyIncomplete,
                        format!(
                            "upload body ended after {} bytes, more were declared",
                            self.read
                        ),
                    )
                })?;
            }
            let part = self.frame.split_to((n - out.len()).min(self.frame.len()));
            out.extend_from_slice(&part);
        }
        Ok(out)
    }

    /// Refuses bytes beyond what the header declared.
    async fn at_end(&mut self) -> Result<(), ApiError> {
        while self.frame.is_empty() {
            match self.next_frame().await? {
                None => return Ok(()),
                Some(frame) => self.frame = frame,
            }
        }
        Err(ApiError::new(
            Code::BodyTrailing,
            "upload body is longer than its header declares",
        ))
    }

    /// Reads and discards what is left of a refused body, up to twice the
    /// limit and 30 seconds, so the client reads the refusal instead of a
    /// reset connection (closing a socket with unread data resets it).
    async fn drain(&mut self) {
        let cap = self.limit.saturating_mul(2);
        let idle = self.idle;
        let discard = async {
            while let Ok(Some(Ok(bytes))) = tokio::time::timeout(idle, self.stream.next()).await {
                self.read += bytes.len();
                if self.read > cap {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(30), discard).await;
    }
}
