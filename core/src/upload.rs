//! Verifying an item split somewhere else (a browser, a backend's client):
//! pure checks over the parent, the chunk lengths it declares and the chunk
//! bytes, so a host can stream an upload and check its shape before reading
//! a byte of chunk data, and the WebAssembly build can run the same checks
//! before sending.
//!
//! Nothing of what is received is trusted: the parent is validated as a
//! DynamoDB item, the declared lengths must be exactly the manifest's, the
//! chunk keys and digests are made here, and the item must rebuild (every
//! length, digest and the frame's checksum) within the caller's size limit.

use crate::code::Code;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::digest::chunk_digest;
use crate::key::{IndexKey, KeySchema};
use crate::layout::Layout;
use crate::manifest::{CHUNK_DATA_ATTRIBUTE, MANIFEST_ATTRIBUTE, Manifest, reserved_attribute};
use crate::plan::{PlanError, Target};
use crate::read::reassemble::{ReassembleError, ReassembleOptions, reassemble};
use crate::size::{MAX_ITEM_BYTES, item_size};
use crate::table::Table;
use crate::validate::{ValidateOptions, ViolationKind, validate_item};
use crate::value::{AttributeValue, Item};
use crate::write::split::{SplitError, chunk_item_of};

/// Where an upload goes and how large it may be.
#[derive(Clone, Copy, Debug)]
pub struct UploadRules<'a> {
    /// The table's key schema.
    pub key: &'a KeySchema,
    /// The table's layout.
    pub layout: &'a Layout,
    /// The largest item accepted, in raw payload bytes.
    pub max_raw_bytes: u64,
    /// The table's index keys: an upload must keep them on the parent,
    /// of their index's type.
    pub index_keys: &'a [IndexKey],
    /// The table's TTL attribute: an upload must keep it on the parent,
    /// and every chunk stored carries its value.
    pub ttl: Option<&'a str>,
}

impl<'a> UploadRules<'a> {
    /// The rules of an upload to `table` of at most `max_raw_bytes`.
    pub fn of(table: &'a Table, max_raw_bytes: u64) -> Self {
        Self {
            key: &table.key,
            layout: &table.layout,
            max_raw_bytes,
            index_keys: &table.index_keys,
            ttl: table.ttl.as_deref(),
        }
    }
}

/// Why an upload was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UploadError {
    /// Chunks were sent for a parent that has no manifest.
    ChunksUnexpected {
        /// Chunks declared.
        count: usize,
    },
    /// The number of chunks declared is not the manifest's.
    ChunkCount {
        /// Chunks declared.
        declared: usize,
        /// Chunks the manifest records.
        expected: u32,
    },
    /// A chunk's declared length is not the manifest's.
    ChunkLength {
        /// The chunk's position, from 0.
        seq: u32,
        /// Bytes declared.
        declared: u64,
        /// Bytes the manifest records.
        expected: u64,
    },
    /// The item is larger than the caller accepts.
    TooLarge {
        /// The raw length the manifest records.
        raw_len: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// The parent or the rebuilt item breaks DynamoDB's or the format's rules.
    Item(SplitError),
    /// The manifest cannot be read, records another layout, or a chunk key
    /// cannot be made.
    Plan(PlanError),
    /// The chunks do not rebuild the item the manifest describes.
    Reassemble(ReassembleError),
    /// The payload holds an attribute the table keeps on the parent (an
    /// index key, the TTL attribute): split with the table's `indexKeys`
    /// and `ttl`.
    Misplaced {
        /// The attribute.
        name: String,
    },
    /// A chunk item, with the parent's TTL value added, is over the item
    /// size limit: split with the table's `ttl`, whose chunks leave room
    /// for it.
    ChunkTooLarge {
        /// The chunk's position, from 0.
        seq: u32,
        /// The chunk item's exact size.
        size: usize,
    },
    /// The manifest lists groups ([`Manifest::groups`]): an upload is one
    /// frame (split it with `group_bytes` off, as the WebAssembly `split`
    /// does), whose chunks and version the host stamps itself.
    Grouped {
        /// Groups listed.
        groups: usize,
    },
    /// The manifest names an S3 object: an upload of chunks never does (a
    /// payload in S3 comes through a granted PUT and [`object_upload`]).
    ObjectNamed,
    /// An object's frame holds something else than exactly the one string
    /// or binary attribute it was granted for, or is not a frame that
    /// streams (snappy is decoded whole).
    ObjectPayload {
        /// The attribute granted.
        attribute: String,
    },
}

impl UploadError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::ChunksUnexpected { .. } => Code::ChunksUnexpected,
            Self::ChunkCount { .. } => Code::ChunkCountMismatch,
            Self::ChunkLength { .. } => Code::ChunkLengthMismatch,
            Self::TooLarge { .. } => Code::VirtualItemTooLarge,
            Self::Item(e) => e.code(),
            Self::Plan(e) => e.code(),
            Self::Reassemble(e) => e.code(),
            Self::Misplaced { .. } => Code::AttributeMisplaced,
            Self::ChunkTooLarge { .. } => Code::ItemTooLarge,
            Self::Grouped { .. } | Self::ObjectNamed => Code::ManifestInvalid,
            Self::ObjectPayload { .. } => Code::UploadMalformed,
        }
    }
}

impl fmt::Display for UploadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChunksUnexpected { count } => {
                write!(f, "{count} chunks sent for an item that is not split")
            }
            Self::ChunkCount { declared, expected } => {
                write!(
                    f,
                    "{declared} chunks declared, the manifest records {expected}"
                )
            }
            Self::ChunkLength {
                seq,
                declared,
                expected,
            } => write!(
                f,
                "chunk {seq} is declared {declared} bytes, the manifest records {expected}"
            ),
            Self::TooLarge { raw_len, limit } => {
                write!(f, "the item is {raw_len} bytes, the limit is {limit}")
            }
            Self::Item(e) => e.fmt(f),
            Self::Plan(e) => e.fmt(f),
            Self::Reassemble(e) => write!(f, "the upload does not check out: {e}"),
            Self::Misplaced { name } => write!(
                f,
                "{name} is in the payload, but the table keeps it on the parent (an index key or \
                 the TTL attribute): split with the table's indexKeys and ttl"
            ),
            Self::Grouped { groups } => write!(
                f,
                "the manifest lists {groups} groups; an upload is one frame (split without groups)"
            ),
            Self::ObjectPayload { attribute } => write!(
                f,
                "the object's frame must hold exactly one attribute, {attribute}, a string or a \
                 binary, compressed with none, deflate, zlib, gzip or zstd"
            ),
            Self::ObjectNamed => write!(
                f,
                "the manifest names an S3 object; an upload is chunks (a payload in S3 comes \
                 through a granted PUT)"
            ),
            Self::ChunkTooLarge { seq, size } => write!(
                f,
                "chunk {seq} is {size} bytes with the parent's TTL value, limit {MAX_ITEM_BYTES}: \
                 split with the table's ttl"
            ),
        }
    }
}

/// Checks an upload's parent and the chunk lengths it declares, before any
/// chunk byte is read: the parent is a valid item of the table using no
/// reserved name but the manifest; its manifest is readable, of the table's
/// layout and within the limit; and the lengths are exactly the manifest's.
/// Returns the manifest (`None`: a plain item, which has no chunks).
pub fn check_upload_header(
    parent: &Item,
    lengths: &[u64],
    rules: &UploadRules<'_>,
) -> Result<Option<Manifest>, UploadError> {
    let names = parent.keys().map(String::as_str);
    check_parent(parent, names.filter(|n| *n != MANIFEST_ATTRIBUTE), rules)?;
    let target = Target {
        max_raw_bytes: u64::MAX,
        ..Target::new("", "", rules.key, rules.layout)
    };
    let Some(manifest) = target.read_manifest(parent).map_err(UploadError::Plan)? else {
        if !lengths.is_empty() {
            return Err(UploadError::ChunksUnexpected {
                count: lengths.len(),
            });
        }
        return Ok(None);
    };
    if !manifest.groups.is_empty() {
        return Err(UploadError::Grouped {
            groups: manifest.groups.len(),
        });
    }
    if manifest.object.is_some() {
        return Err(UploadError::ObjectNamed);
    }
    if let Some(name) = misplaced(&manifest, rules.index_keys, rules.ttl) {
        return Err(UploadError::Misplaced { name: name.into() });
    }
    if manifest.raw_len > rules.max_raw_bytes {
        return Err(UploadError::TooLarge {
            raw_len: manifest.raw_len,
            limit: rules.max_raw_bytes,
        });
    }
    if lengths.len() != manifest.chunk_count as usize {
        return Err(UploadError::ChunkCount {
            declared: lengths.len(),
            expected: manifest.chunk_count,
        });
    }
    for (seq, &declared) in (0u32..).zip(lengths) {
        let expected = manifest.chunk_len(seq);
        if declared != expected {
            return Err(UploadError::ChunkLength {
                seq,
                declared,
                expected,
            });
        }
    }
    Ok(Some(manifest))
}

/// Refuses a reserved name among `names` (the parent's, and what it will
/// hold), and a parent that breaks DynamoDB's rules or the table's key.
fn check_parent<'n>(
    parent: &Item,
    names: impl Iterator<Item = &'n str>,
    rules: &UploadRules<'_>,
) -> Result<(), UploadError> {
    if let Some(name) = reserved_attribute(names) {
        return Err(UploadError::Item(SplitError::ReservedAttribute { name }));
    }
    let violations = validate_item(
        parent,
        &ValidateOptions {
            key: Some(rules.key),
            max_item_bytes: MAX_ITEM_BYTES,
            index_keys: rules.index_keys,
        },
    );
    match violations.is_empty() {
        true => Ok(()),
        false => Err(UploadError::Item(SplitError::Invalid { violations })),
    }
}

/// The chunk item to store for chunk `seq` of an upload, received as `data`:
/// its key made from the parent and the manifest's version, its digest of
/// the bytes received (the manifest's frame checksum is what ties them to
/// the item, checked by [`verify_upload`]).
pub fn upload_chunk_item(
    parent: &Item,
    manifest: &Manifest,
    seq: u32,
    data: Vec<u8>,
    rules: &UploadRules<'_>,
) -> Result<Item, UploadError> {
    let expected = manifest.chunk_len(seq);
    if data.len() as u64 != expected || seq >= manifest.chunk_count {
        return Err(UploadError::ChunkLength {
            seq,
            declared: data.len() as u64,
            expected,
        });
    }
    let digest = chunk_digest(&data, &manifest.version.to_text(), seq);
    let (key, layout, version) = (rules.key, rules.layout, manifest.version);
    let mut chunk = chunk_item_of(key, layout, parent, version, seq, data, digest)
        .map_err(|e| UploadError::Plan(e.into()))?;
    if let Some(name) = rules.ttl
        && let Some(value @ AttributeValue::N(_)) = parent.get(name)
    {
        chunk.insert(name.into(), value.clone());
    }
    let size = item_size(&chunk);
    if size > MAX_ITEM_BYTES {
        return Err(UploadError::ChunkTooLarge { seq, size });
    }
    Ok(chunk)
}

/// The first attribute `manifest` spilled that a table with `index_keys`
/// and `ttl` keeps on the parent.
pub fn misplaced<'m>(
    manifest: &'m Manifest,
    index_keys: &[IndexKey],
    ttl: Option<&str>,
) -> Option<&'m str> {
    manifest
        .frames()
        .flat_map(|f| f.spilled.iter())
        .map(String::as_str)
        .find(|name| index_keys.iter().any(|k| k.name == *name) || ttl == Some(*name))
}

/// The item an upload holds, rebuilt from its parent and chunk items and
/// checked completely: every chunk's length and digest, the frame, the
/// payload, within the limit; then the whole item against DynamoDB's rules
/// (all but the size limit: a virtual item may be any size).
pub fn verify_upload(
    parent: &Item,
    chunks: &[Item],
    rules: &UploadRules<'_>,
) -> Result<Item, UploadError> {
    let mut options = ReassembleOptions::new(rules.key, rules.layout);
    options.max_raw_bytes = usize::try_from(rules.max_raw_bytes).unwrap_or(usize::MAX);
    let item = reassemble(parent, chunks, &options).map_err(UploadError::Reassemble)?;
    let violations: Vec<_> = validate_item(
        &item,
        &ValidateOptions {
            key: Some(rules.key),
            max_item_bytes: usize::MAX,
            index_keys: rules.index_keys,
        },
    )
    .into_iter()
    .filter(|v| !matches!(v.kind, ViolationKind::ItemTooLarge { .. }))
    .collect();
    if !violations.is_empty() {
        return Err(UploadError::Item(SplitError::Invalid { violations }));
    }
    if let Some(name) = reserved_attribute(item.keys().map(String::as_str)) {
        return Err(UploadError::Item(SplitError::ReservedAttribute { name }));
    }
    Ok(item)
}

/// An upload stamped with `version` instead of the version it was split
/// with: its manifest and the parent's `_ds` carry the new one, and each
/// chunk item is made anew (key and digest) around the same bytes, given in
/// sequence order. The payload and its digest do not depend on the version,
/// so the item is unchanged. A host stamps every upload in its store's time
/// this way: the uploading client's clock never decides a chunk's age.
pub fn restamp(
    parent: &mut Item,
    manifest: &mut Manifest,
    chunks: Vec<Item>,
    version: crate::VersionId,
    rules: &UploadRules<'_>,
) -> Result<Vec<Item>, UploadError> {
    manifest.version = version;
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    (0u32..)
        .zip(chunks)
        .map(|(seq, mut chunk)| {
            let data = match chunk.remove(CHUNK_DATA_ATTRIBUTE) {
                Some(AttributeValue::B(data)) => data,
                _ => Vec::new(),
            };
            upload_chunk_item(parent, manifest, seq, data, rules)
        })
        .collect()
}

/// Checks the parent of a payload a client will store straight in S3 (a
/// presigned PUT), before any URL is handed out: a valid item of the table
/// with no reserved attribute, not holding `attribute` (the binary
/// attribute the object's frame holds), which must not be one the table
/// keeps on the parent (an index key, the TTL attribute) or a reserved name.
pub fn check_object_parent(
    parent: &Item,
    attribute: &str,
    rules: &UploadRules<'_>,
) -> Result<(), UploadError> {
    let names = parent.keys().map(String::as_str).chain([attribute]);
    check_parent(parent, names, rules)?;
    if parent.contains_key(attribute) || attribute.is_empty() {
        return Err(UploadError::Item(SplitError::BadOptions {
            reason: "the payload's attribute must be named, and not be on the parent too",
        }));
    }
    let kept_on_parent =
        rules.index_keys.iter().any(|k| k.name == attribute) || rules.ttl == Some(attribute);
    if kept_on_parent {
        return Err(UploadError::Misplaced {
            name: attribute.into(),
        });
    }
    Ok(())
}

/// The bytes of an object's start [`object_upload`] needs: enough of the
/// frame to decode the value stream's head (the attribute's name and
/// length) from any codec that streams.
pub const OBJECT_HEAD_BYTES: usize = 64 << 10;

/// What a client stored straight in S3 holds, as [`object_upload`] reads it.
#[derive(Clone, Debug)]
pub struct StoredObject<'a> {
    /// Where it is, and its ETag.
    pub object: crate::object::ObjectRef,
    /// Its length in bytes.
    pub len: u64,
    /// Its first [`OBJECT_HEAD_BYTES`] bytes (all of it when shorter).
    pub head: &'a [u8],
    /// Its last [`crate::codec::FRAME_TRAILER_BYTES`] bytes.
    pub tail: &'a [u8],
}

/// The split that commits an object a client stored straight in S3 as
/// `version` of the item `parent` (checked with [`check_object_parent`]):
/// the manifest (format 3) records the codec and raw length its frame's
/// header gives, the digest its trailer gives, its length, and `attribute`
/// as the one attribute it holds. Refused when the header is not a frame's,
/// the raw length is over the limit, or the stream's head shows anything
/// but that one string or binary attribute. This only describes the object:
/// its bytes must then be read through once (every length and the digest
/// checked, as any read of it does) before the split is committed.
pub fn object_upload(
    mut parent: Item,
    attribute: &str,
    version: crate::VersionId,
    stored: StoredObject<'_>,
    rules: &UploadRules<'_>,
) -> Result<crate::SplitItem, UploadError> {
    use crate::codec::{FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES, FrameHeader};
    check_object_parent(&parent, attribute, rules)?;
    let too_short = stored.len < (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64
        || stored.tail.len() != FRAME_TRAILER_BYTES;
    if too_short {
        let len = usize::try_from(stored.len).unwrap_or(usize::MAX);
        let error = crate::codec::CodecError::FrameTruncated { len };
        return Err(UploadError::Item(SplitError::Codec(error)));
    }
    let header = FrameHeader::parse_header(stored.head)
        .map_err(|e| UploadError::Item(SplitError::Codec(e)))?;
    if header.raw_len > rules.max_raw_bytes {
        return Err(UploadError::TooLarge {
            raw_len: header.raw_len,
            limit: rules.max_raw_bytes,
        });
    }
    // Exactly one attribute, the one granted, filling the whole stream: a
    // frame holding an index key, the TTL attribute or a key attribute
    // beside it would reach readers unchecked. (The read-through that
    // follows checks every byte against the digest.)
    let payload = || UploadError::ObjectPayload {
        attribute: attribute.into(),
    };
    if header.codec == crate::codec::Codec::Snappy {
        return Err(payload());
    }
    let complete = stored.head.len() as u64 == stored.len;
    let raw = crate::codec::decompress_prefix(stored.head, complete, 1024)
        .map_err(|e| UploadError::Item(SplitError::Codec(e)))?;
    let span = crate::encoding::single_blob_span(&raw, header.raw_len).ok_or_else(payload)?;
    if span.name != attribute || span.start as u64 + span.len != header.raw_len {
        return Err(payload());
    }
    let manifest = Manifest {
        version,
        layout: rules.layout.name().into(),
        codec: header.codec,
        chunk_count: 0,
        chunk_bytes: 0,
        stored_len: stored.len,
        raw_len: header.raw_len,
        digest: FrameHeader::trailer_digest(stored.tail),
        spilled: alloc::vec![attribute.into()],
        inline: None,
        updated: None,
        groups: Vec::new(),
        object: Some(stored.object),
    };
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    let size = item_size(&parent);
    if size > MAX_ITEM_BYTES {
        let limit = MAX_ITEM_BYTES;
        return Err(UploadError::Item(SplitError::ParentTooLarge {
            size,
            limit,
        }));
    }
    Ok(crate::SplitItem {
        parent,
        chunks: Vec::new(),
        manifest: Some(manifest),
    })
}
