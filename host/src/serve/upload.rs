//! The trust boundary: an upload the browser split is checked completely
//! before anything is written. The host makes every chunk key itself,
//! recomputes every size and digest by reassembling the item, and checks
//! the item, the table, the key scope and the size limits.

use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use std::time::Duration;

use axum::body::BodyDataStream;
use dynaslice_core::digest::chunk_digest;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::plan::{PlanError, WriteMode, plan_write};
use dynaslice_core::{
    AttributeValue, Item, MAX_ITEM_BYTES, Manifest, ReassembleOptions, SplitItem, ValidateOptions,
    ViolationKind, item_size, reassemble, validate_item,
};
use futures::StreamExt;

use super::{ApiError, ServeConfig};
use crate::error::HostError;
use crate::json::item_from_json;
use crate::put::{PutOptions, PutOutcome, execute, read_expect};
use crate::table::TableConfig;

/// First bytes of an upload body.
pub const UPLOAD_MAGIC: &[u8; 4] = b"DSU1";
/// Largest header: a parent of up to 409,600 bytes in base64 JSON, with room.
const MAX_HEADER_BYTES: usize = 2 << 20;
/// A version id older or newer than this is refused: `gc` judges chunks by
/// the time in their version id, so a forged time could expose them early.
const MAX_VERSION_SKEW_MS: u64 = 10 * 60 * 1000;

/// Reads exactly the bytes of an upload body, refusing more than `limit`.
struct BodyReader<'s> {
    stream: &'s mut BodyDataStream,
    buffered: Vec<u8>,
    read: usize,
    limit: usize,
}

impl BodyReader<'_> {
    async fn take(&mut self, n: usize) -> Result<Vec<u8>, ApiError> {
        while self.buffered.len() < n {
            match self.stream.next().await {
                Some(Ok(bytes)) => {
                    self.read += bytes.len();
                    if self.read > self.limit {
                        return Err(ApiError::too_large(self.limit));
                    }
                    self.buffered.extend_from_slice(&bytes);
                }
                Some(Err(e)) => {
                    return Err(ApiError::bad(
                        "BODY_INCOMPLETE",
                        format!("upload body failed: {e}"),
                    ));
                }
                None => {
                    return Err(ApiError::bad(
                        "BODY_INCOMPLETE",
                        format!(
                            "upload body ended after {} bytes, more were declared",
                            self.read
                        ),
                    ));
                }
            }
        }
        let rest = self.buffered.split_off(n);
        Ok(std::mem::replace(&mut self.buffered, rest))
    }

    async fn at_end(&mut self) -> Result<(), ApiError> {
        if !self.buffered.is_empty() {
            return Err(ApiError::bad(
                "BODY_TRAILING",
                "upload body is longer than its header declares",
            ));
        }
        match self.stream.next().await {
            None => Ok(()),
            Some(Ok(b)) if b.is_empty() => Ok(()),
            Some(_) => Err(ApiError::bad(
                "BODY_TRAILING",
                "upload body is longer than its header declares",
            )),
        }
    }
}

/// The parent and the chunk data an upload body holds.
pub struct Upload {
    /// The parent item as sent.
    pub parent: Item,
    /// Each chunk's data, in sequence order.
    pub chunks: Vec<Vec<u8>>,
}

/// Reads an upload body: `DSU1`, the header length (u32 LE), the header
/// JSON, then each chunk's data. Nothing beyond `limit` bytes is read.
pub async fn read_upload(stream: &mut BodyDataStream, limit: usize) -> Result<Upload, ApiError> {
    let mut reader = BodyReader {
        stream,
        buffered: Vec::new(),
        read: 0,
        limit,
    };
    let head = reader.take(8).await?;
    if &head[..4] != UPLOAD_MAGIC {
        return Err(ApiError::bad(
            "UPLOAD_MALFORMED",
            "upload body does not start with DSU1",
        ));
    }
    let header_len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if header_len > MAX_HEADER_BYTES {
        return Err(ApiError::bad(
            "UPLOAD_MALFORMED",
            format!("upload header is {header_len} bytes, limit {MAX_HEADER_BYTES}"),
        ));
    }
    let header: serde_json::Value = serde_json::from_slice(&reader.take(header_len).await?)
        .map_err(|e| {
            ApiError::bad(
                "UPLOAD_MALFORMED",
                format!("upload header is not JSON: {e}"),
            )
        })?;
    let parent = item_from_json(&header["parent"]).map_err(ApiError::from)?;
    let lengths = header["chunks"]
        .as_array()
        .ok_or_else(|| {
            ApiError::bad(
                "UPLOAD_MALFORMED",
                "upload header needs a chunks array of lengths",
            )
        })?
        .iter()
        .map(|n| n.as_u64().and_then(|n| usize::try_from(n).ok()))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| ApiError::bad("UPLOAD_MALFORMED", "chunk lengths must be whole numbers"))?;
    let declared = lengths
        .iter()
        .try_fold(8 + header_len, |sum, n| sum.checked_add(*n));
    if declared.is_none_or(|total| total > limit) {
        return Err(ApiError::too_large(limit));
    }
    let mut chunks = Vec::with_capacity(lengths.len());
    for len in lengths {
        chunks.push(reader.take(len).await?);
    }
    reader.at_end().await?;
    Ok(Upload { parent, chunks })
}

/// Reads and discards what is left of a refused body, up to `cap` bytes
/// and 30 seconds, so the client reads the refusal instead of a reset
/// connection (closing a socket with unread data resets it).
pub async fn drain(stream: &mut BodyDataStream, cap: usize) {
    let discard = async {
        let mut read = 0;
        while let Some(Ok(bytes)) = stream.next().await {
            read += bytes.len();
            if read > cap {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(30), discard).await;
}

/// Checks an upload completely, then writes it with the commit protocol.
pub async fn commit_upload(
    client: &Client,
    table: &TableConfig,
    config: &ServeConfig,
    upload: Upload,
) -> Result<PutOutcome, ApiError> {
    let Upload { parent, chunks } = upload;
    config.check_scope(table, &parent)?;
    let options = PutOptions {
        max_item_bytes: config.max_item_bytes,
        ..PutOptions::default()
    };
    let Some(manifest_value) = parent.get(MANIFEST_ATTRIBUTE) else {
        if !chunks.is_empty() {
            return Err(ApiError::bad(
                "CHUNKS_UNEXPECTED",
                format!("{} chunks sent for an item that is not split", chunks.len()),
            ));
        }
        // Not split: an ordinary item, validated and written by put().
        return Ok(crate::put::put(client, table, &parent, &options, &()).await?);
    };
    let manifest =
        Manifest::from_value(manifest_value).map_err(|e| HostError::from(PlanError::from(e)))?;
    if manifest.raw_len > config.max_item_bytes as u64 {
        return Err(ApiError {
            status: axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            code: "VIRTUAL_ITEM_TOO_LARGE",
            message: format!(
                "the item is {} bytes, this server's limit is {}",
                manifest.raw_len, config.max_item_bytes
            ),
        });
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    if manifest.version.unix_ms().abs_diff(now) > MAX_VERSION_SKEW_MS {
        return Err(ApiError::bad(
            "VERSION_STALE",
            "the upload's version id is not from the last 10 minutes; split it again",
        ));
    }
    // The parent as it will be stored must be a valid DynamoDB item.
    let parent_rules = ValidateOptions {
        key: Some(&table.key),
        max_item_bytes: MAX_ITEM_BYTES,
    };
    let violations = validate_item(&parent, &parent_rules);
    if !violations.is_empty() {
        return Err(HostError::Split(dynaslice_core::SplitError::Invalid { violations }).into());
    }
    // Chunk items made here: keys from the parent and the version, digests
    // of the bytes received.
    let version = manifest.version.to_text();
    let mut items = Vec::with_capacity(chunks.len());
    for (seq, data) in (0u32..).zip(chunks) {
        let mut chunk = chunk_key(&table.key, &table.layout, &parent, manifest.version, seq)
            .map_err(PlanError::from)
            .map_err(HostError::from)?;
        let digest = chunk_digest(&data, &version, seq);
        chunk.insert(
            CHUNK_DIGEST_ATTRIBUTE.into(),
            AttributeValue::B(digest.to_be_bytes().to_vec()),
        );
        chunk.insert(CHUNK_DATA_ATTRIBUTE.into(), AttributeValue::B(data));
        let size = item_size(&chunk);
        if size > MAX_ITEM_BYTES {
            return Err(ApiError::bad(
                "CHUNK_TOO_LARGE",
                format!("chunk {seq} is {size} bytes, limit {MAX_ITEM_BYTES}"),
            ));
        }
        items.push(chunk);
    }
    // Every length and digest, the frame and the payload: the item must
    // rebuild exactly, within the size limit, before anything is written.
    let mut rebuild = ReassembleOptions::new(&table.key, &table.layout);
    rebuild.max_raw_bytes = config.max_item_bytes;
    let item =
        crate::cpu::heavy(|| reassemble(&parent, &items, &rebuild)).map_err(|e| ApiError {
            status: if e.code() == "DECOMPRESS_LIMIT" {
                axum::http::StatusCode::PAYLOAD_TOO_LARGE
            } else {
                axum::http::StatusCode::BAD_REQUEST
            },
            code: e.code(),
            message: format!("the upload does not check out: {e}"),
        })?;
    let whole_rules = ValidateOptions {
        key: Some(&table.key),
        max_item_bytes: usize::MAX,
    };
    let violations: Vec<_> = validate_item(&item, &whole_rules)
        .into_iter()
        .filter(|v| !matches!(v.kind, ViolationKind::ItemTooLarge { .. }))
        .collect();
    if !violations.is_empty() {
        return Err(HostError::Split(dynaslice_core::SplitError::Invalid { violations }).into());
    }
    drop(item);
    let split = SplitItem {
        parent,
        chunks: items,
        manifest: Some(manifest),
    };
    let sender = options.sender(client);
    let expect = read_expect(&sender, table, &split.parent).await?;
    let plan =
        plan_write(&split, &table.target(), &expect, WriteMode::Auto).map_err(HostError::from)?;
    Ok(execute(&sender, table, plan, &split, &expect, &options, &()).await?)
}
