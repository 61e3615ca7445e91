//! Previews: a byte range of a stored item's content, reading only the
//! chunks that hold it (the first chunks, for compressed payloads), each
//! checked against its own digest.
//!
//! The content is the value of the item's one string or binary attribute
//! when that is what was stored (a file or a document), else the item's
//! encoded value stream.

use std::ops::Range;

use aws_sdk_dynamodb::Client;
use dynaslice_core::codec::{Codec, FRAME_HEADER_BYTES, FrameHeader, decompress_prefix};
use dynaslice_core::encoding::single_blob_span;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::object::{ObjectRef, ObjectStore};
use dynaslice_core::plan::{
    BatchGet, MAX_BATCH_GET_BYTES, MAX_BATCH_GET_KEYS, PlanError, parent_get,
};
use dynaslice_core::protocol::{Answer, ObjectAnswer, ObjectKey, ObjectRequest, ProtocolError};
use dynaslice_core::{
    AttributeValue, Item, MAX_ITEM_BYTES, ReassembleError, ReassembleOptions, reassemble,
    verify_chunk,
};

use crate::error::HostError;
use crate::executor::{batch_get_all, get_item};
use crate::get::{GetOptions, check_key};
use crate::table::TableConfig;

/// Chunks fetched in the first round after the first chunk while decoding a
/// compressed payload's start; each later round doubles it, so a preview
/// decodes its prefix O(log n) times, never once per chunk.
const FIRST_ROUND_CHUNKS: u32 = 2;

/// Part of a stored item's content.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Preview {
    /// The manifest, when the item was split.
    pub manifest: Option<Manifest>,
    /// The attribute the content is the value of (`None`: the encoded
    /// value stream of a split item, or the DynamoDB JSON of a plain one).
    pub attribute: Option<String>,
    /// The content's whole length.
    pub total: u64,
    /// Where `bytes` starts in the content.
    pub offset: u64,
    /// The bytes asked for (fewer at the end of the content).
    pub bytes: Vec<u8>,
    /// Chunk items read.
    pub chunks_read: u32,
}

/// Bytes `range` of the content of the item with `key`; `None` when there is
/// no such item. Reads only the chunks the range needs.
pub async fn preview(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    range: Range<u64>,
    options: &GetOptions,
) -> Result<Option<Preview>, HostError> {
    let key = check_key(table, key)?;
    let target = table.target_within(options.max_item_bytes);
    let Some(parent) = get_item(client, parent_get(&target, &key), options.retry).await? else {
        return Ok(None);
    };
    // The manifest only: the chunks a preview reads are chosen below.
    let manifest = match target.read_manifest(&parent)? {
        // Of an item in groups, the largest frame: a large attribute's own.
        Some(m) if m.inline.is_none() => m
            .frames()
            .max_by_key(|f| f.raw_len)
            .map(|f| Manifest {
                groups: Vec::new(),
                ..f.clone()
            })
            .unwrap_or(m),
        manifest => {
            // Plain or inline: small, read whole.
            let options = ReassembleOptions::new(&table.key, &table.layout);
            let item = reassemble(&parent, &[], &options)?;
            return Ok(Some(whole_item_preview(table, &item, manifest, range)));
        }
    };
    // A payload in S3 is read as chunks of OBJECT_PIECE_BYTES: ranges of
    // its object, conditional on the ETag the manifest recorded.
    let object = ObjectStore::owned(
        table.objects.as_ref().map(|o| &o.store),
        &table.key,
        &parent,
        &manifest,
    )
    .map_err(|e| HostError::Protocol(e.into()))?
    .cloned()
    .zip(table.objects.as_ref().map(|o| o.client.clone()));
    let manifest = match &object {
        Some(_) => Manifest {
            object: None,
            chunk_count: u32::try_from(manifest.stored_len.div_ceil(OBJECT_PIECE_BYTES))
                .unwrap_or(u32::MAX),
            chunk_bytes: OBJECT_PIECE_BYTES as u32,
            ..manifest
        },
        None => manifest,
    };
    let mut reader = ChunkReader {
        client,
        retry: options.retry,
        table,
        parent: &parent,
        manifest: &manifest,
        frame: Vec::new(),
        next: 0,
        object,
    };
    if manifest.codec == Codec::None {
        return Ok(Some(stored_range(&mut reader, range).await?));
    }
    let last_chunk = manifest.chunk_count.saturating_sub(1);
    // The first round reads one chunk: most previews need no more.
    reader.frame = reader.read(0, 0).await?;
    reader.next = 1;
    check_frame_header(&reader.frame, &manifest)?;
    let mut round = FIRST_ROUND_CHUNKS;
    let raw = loop {
        let complete = reader.complete();
        let want = usize::try_from(range.end.saturating_add(4096)).unwrap_or(usize::MAX);
        let frame = &reader.frame;
        let raw = crate::cpu::heavy(|| decompress_prefix(frame, complete, want))?;
        let enough = single_blob_span(&raw, manifest.raw_len)
            .map_or(range.end, |s| s.start as u64 + range.end);
        if complete || raw.len() as u64 >= enough.min(manifest.raw_len) {
            break raw;
        }
        let through = reader.next.saturating_add(round - 1).min(last_chunk);
        let bytes = reader.read(reader.next, through).await?;
        reader.frame.extend_from_slice(&bytes);
        reader.next = through + 1;
        round = round.saturating_mul(2);
    };
    let (attribute, start, total) = match single_blob_span(&raw, manifest.raw_len) {
        Some(span) => (Some(span.name), span.start as u64, span.len),
        None => (None, 0, manifest.raw_len),
    };
    let from = (start + range.start.min(total)) as usize;
    let to = ((start + range.end.min(total)) as usize).min(raw.len());
    Ok(Some(Preview {
        bytes: raw.get(from..to).unwrap_or_default().to_vec(),
        offset: range.start.min(total),
        total,
        attribute,
        chunks_read: reader.next,
        manifest: Some(manifest),
    }))
}

/// A range of an uncompressed payload: chunk 0 for the stream's head, then
/// exactly the chunks holding the range.
async fn stored_range(
    reader: &mut ChunkReader<'_>,
    range: Range<u64>,
) -> Result<Preview, HostError> {
    let manifest = reader.manifest;
    let first_chunk = reader.read(0, 0).await?;
    check_frame_header(&first_chunk, manifest)?;
    let head = decompress_prefix(&first_chunk, manifest.chunk_count == 1, 1024)?;
    let span = single_blob_span(&head, manifest.raw_len);
    let (start, total) = span
        .as_ref()
        .map_or((0, manifest.raw_len), |s| (s.start as u64, s.len));
    let header = FRAME_HEADER_BYTES as u64 + start;
    let (from, to) = (
        range.start.min(total),
        range.end.min(total).max(range.start.min(total)),
    );
    let chunk_bytes = u64::from(manifest.chunk_bytes.max(1));
    let (first, last) = manifest.chunks_holding(header + from..header + to);
    let mut bytes = match first {
        0 if last == 0 => first_chunk,
        0 => [first_chunk, reader.read(1, last).await?].concat(),
        _ => reader.read(first, last).await?,
    };
    let base = u64::from(first) * chunk_bytes;
    let cut = |offset: u64| {
        usize::try_from(offset.saturating_sub(base))
            .unwrap_or(usize::MAX)
            .min(bytes.len())
    };
    let (a, b) = (cut(header + from), cut(header + to));
    bytes.truncate(b);
    bytes.drain(..a);
    Ok(Preview {
        manifest: Some(manifest.clone()),
        attribute: span.map(|s| s.name),
        total,
        offset: from,
        bytes,
        chunks_read: if first == 0 {
            1 + last
        } else {
            2 + last - first
        },
    })
}

/// Refuses a stored frame whose header disagrees with the manifest (which
/// was checked against the reader's limit): a decoder must never size a
/// buffer by a header nobody checked.
fn check_frame_header(frame: &[u8], manifest: &Manifest) -> Result<(), HostError> {
    let header = FrameHeader::parse_header(frame)?;
    if header.codec != manifest.codec || header.raw_len != manifest.raw_len {
        return Err(ReassembleError::FrameMismatch.into());
    }
    Ok(())
}

/// The preview of an item that is not split or whose payload is inline.
fn whole_item_preview(
    table: &TableConfig,
    item: &Item,
    manifest: Option<Manifest>,
    range: Range<u64>,
) -> Preview {
    let mut values = item.iter().filter(|(name, _)| !table.key.is_key(name));
    let single = match (values.next(), values.next()) {
        (Some((name, AttributeValue::B(bytes))), None) => Some((name.clone(), bytes.clone())),
        (Some((name, AttributeValue::S(text))), None) => {
            Some((name.clone(), text.clone().into_bytes()))
        }
        _ => None,
    };
    let (attribute, content) = match single {
        Some((name, bytes)) => (Some(name), bytes),
        None => (
            None,
            crate::json::item_to_json(item).to_string().into_bytes(),
        ),
    };
    let total = content.len() as u64;
    let from = range.start.min(total) as usize;
    let to = range.end.min(total).max(from as u64) as usize;
    Preview {
        manifest,
        attribute,
        total,
        offset: from as u64,
        bytes: content[from..to].to_vec(),
        chunks_read: 0,
    }
}

/// Reads chunks in order, checking each, appending their bytes to `frame`.
struct ChunkReader<'a> {
    client: &'a Client,
    retry: dynaslice_core::protocol::RetryPolicy,
    table: &'a TableConfig,
    parent: &'a Item,
    manifest: &'a Manifest,
    frame: Vec<u8>,
    next: u32,
    /// The S3 object holding the frame, and the client that reaches it.
    object: Option<(ObjectRef, aws_sdk_s3::Client)>,
}

/// The pieces a payload in S3 is read in, as if they were chunks.
const OBJECT_PIECE_BYTES: u64 = 256 << 10;

impl ChunkReader<'_> {
    fn complete(&self) -> bool {
        self.next >= self.manifest.chunk_count
    }

    /// Reads chunks `first..=last`, checked, and returns their bytes in order.
    async fn read(&self, first: u32, last: u32) -> Result<Vec<u8>, HostError> {
        if let Some((object, client)) = &self.object {
            return self.read_object(object, client, first, last).await;
        }
        let seqs: Vec<u32> = (first..=last).collect();
        let keys = seqs
            .iter()
            .map(|&seq| {
                chunk_key(
                    &self.table.key,
                    &self.table.layout,
                    self.parent,
                    self.manifest.version,
                    seq,
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(PlanError::from)?;
        // BatchGetItem takes at most 100 keys (and 16 MB) a request.
        let per_request = MAX_BATCH_GET_KEYS.min(MAX_BATCH_GET_BYTES / MAX_ITEM_BYTES);
        let gets = keys
            .chunks(per_request)
            .map(|keys| BatchGet {
                table: self.table.chunk_table.clone(),
                keys: keys.to_vec(),
                consistent: true,
                expected_bytes: 0,
                attributes: Vec::new(),
            })
            .collect();
        let found = batch_get_all(self.client, gets, self.retry).await?;
        let options = ReassembleOptions::new(&self.table.key, &self.table.layout);
        let mut bytes = Vec::new();
        for &seq in &seqs {
            bytes.extend_from_slice(verify_chunk(
                self.parent,
                self.manifest,
                seq,
                &found,
                &options,
            )?);
        }
        Ok(bytes)
    }

    /// The bytes of pieces `first..=last` of the object: one ranged GET,
    /// only if the object still has its recorded ETag, exactly as long as
    /// asked (the frame's header and codec check the rest).
    async fn read_object(
        &self,
        object: &ObjectRef,
        client: &aws_sdk_s3::Client,
        first: u32,
        last: u32,
    ) -> Result<Vec<u8>, HostError> {
        let stored = self.manifest.stored_len;
        let start = (u64::from(first) * OBJECT_PIECE_BYTES).min(stored);
        let end = ((u64::from(last) + 1) * OBJECT_PIECE_BYTES).min(stored);
        let described = || format!("s3://{}/{}", object.bucket, object.key);
        let key = ObjectKey {
            bucket: object.bucket.clone(),
            key: object.key.clone(),
        };
        let request = ObjectRequest::Get {
            object: key.clone(),
            etag: object.etag.clone(),
            range: start..end,
        };
        let answer = crate::objects::send_object(client, request).await;
        match answer {
            Ok(Answer::Object(ObjectAnswer::Bytes { bytes, etag }))
                if etag.as_ref().is_none_or(|e| *e == object.etag) =>
            {
                if bytes.len() as u64 != end - start {
                    return Err(HostError::Protocol(ProtocolError::ObjectLength {
                        object: described(),
                        expected: stored,
                        found: start + bytes.len() as u64,
                    }));
                }
                Ok(bytes)
            }
            Ok(_) => Err(HostError::Protocol(ProtocolError::ObjectMissing {
                object: described(),
            })),
            Err(f) => Err(crate::objects::object_error(&f, &key)),
        }
    }
}
