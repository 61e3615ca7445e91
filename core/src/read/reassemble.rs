//! Rebuilding an item from its parent and chunks, trusting none of them.

use crate::code::Code;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::codec::{self, Codec, CodecError, FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES, FrameHeader};
use crate::digest::{Digester, chunk_digest};
use crate::encoding::{DecodeError, MultiSlice, decode_attributes, decode_attributes_from};
use crate::key::KeySchema;
use crate::layout::{ChunkKeyError, Layout, chunk_key, parse_chunk_key};
use crate::manifest::{
    CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE, Manifest, ManifestError,
};
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::split::DEFAULT_MAX_RAW_BYTES;

/// How to reassemble.
#[derive(Clone, Debug)]
pub struct ReassembleOptions<'a> {
    /// The parent table's key schema.
    pub key: &'a KeySchema,
    /// Where the chunks were stored.
    pub layout: &'a Layout,
    /// Largest raw payload accepted; larger manifests or frames are refused
    /// before anything is allocated.
    pub max_raw_bytes: usize,
}

impl<'a> ReassembleOptions<'a> {
    /// Options with the default payload limit (64 MiB).
    pub fn new(key: &'a KeySchema, layout: &'a Layout) -> Self {
        Self {
            key,
            layout,
            max_raw_bytes: DEFAULT_MAX_RAW_BYTES,
        }
    }
}

/// Why an item could not be reassembled. No variant ever comes with data:
/// a reader gets the whole item or an error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReassembleError {
    /// The parent's manifest is unreadable.
    Manifest(ManifestError),
    /// The manifest was written for another layout.
    LayoutMismatch {
        /// The manifest's layout.
        stored: String,
    },
    /// Chunks were given for an item that has none.
    UnexpectedChunks {
        /// Chunks given.
        count: usize,
    },
    /// A chunk's key is not a chunk key of this layout.
    ChunkMalformed {
        /// Index in the input.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A chunk belongs to another parent.
    ChunkForeignParent {
        /// Index in the input.
        index: usize,
    },
    /// A chunk belongs to another version of this item.
    ChunkForeignVersion {
        /// The version id in the chunk's key.
        version: VersionId,
        /// The parent's version.
        expected: VersionId,
    },
    /// A chunk's position is beyond the manifest's count.
    ChunkOutOfRange {
        /// Its position.
        seq: u32,
        /// The manifest's count.
        count: u32,
    },
    /// The same chunk twice.
    ChunkDuplicate {
        /// Its position.
        seq: u32,
    },
    /// A chunk is absent.
    ChunkMissing {
        /// The first absent position.
        seq: u32,
        /// The manifest's count.
        count: u32,
    },
    /// A chunk is shorter than the manifest says.
    ChunkTruncated {
        /// Its position.
        seq: u32,
        /// Bytes expected.
        expected: u64,
        /// Bytes found.
        got: u64,
    },
    /// A chunk is longer than the manifest says.
    ChunkOversized {
        /// Its position.
        seq: u32,
        /// Bytes expected.
        expected: u64,
        /// Bytes found.
        got: u64,
    },
    /// A chunk's bytes do not match its digest.
    ChunkDigestMismatch {
        /// Its position.
        seq: u32,
    },
    /// The frame's header disagrees with the manifest.
    FrameMismatch,
    /// The payload could not be decompressed or failed its digest.
    Codec(CodecError),
    /// The payload could not be decoded.
    Decode(DecodeError),
    /// A decoded attribute is also on the parent.
    AttributeConflict {
        /// The attribute both the payload and the parent hold.
        name: String,
    },
    /// The item has no attribute of the name asked for ([`crate::ChunkReader`]).
    AttributeNotFound {
        /// The attribute asked for.
        name: String,
    },
    /// The attribute asked for holds neither a string nor binary
    /// ([`crate::ChunkReader`]).
    AttributeNotBlob {
        /// The attribute asked for.
        name: String,
        /// Its type descriptor (`"N"`, `"M"`, …).
        found: &'static str,
    },
    /// A [`crate::ChunkReader`] was finished with attribute bytes not yet read.
    Unread,
    /// A [`crate::ChunkReader`] or [`crate::Reassembler`] was used after it
    /// failed.
    ReaderFailed {
        /// The code of the error it failed with.
        code: Code,
    },
}

impl ReassembleError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::Manifest(e) => e.code(),
            Self::LayoutMismatch { .. } => Code::LayoutMismatch,
            Self::UnexpectedChunks { .. } => Code::ChunksUnexpected,
            Self::ChunkMalformed { .. } => Code::ChunkMalformed,
            Self::ChunkForeignParent { .. } => Code::ChunkForeignParent,
            Self::ChunkForeignVersion { .. } => Code::ChunkForeignVersion,
            Self::ChunkOutOfRange { .. } => Code::ChunkOutOfRange,
            Self::ChunkDuplicate { .. } => Code::ChunkDuplicate,
            Self::ChunkMissing { .. } => Code::ChunkMissing,
            Self::ChunkTruncated { .. } => Code::ChunkTruncated,
            Self::ChunkOversized { .. } => Code::ChunkOversized,
            Self::ChunkDigestMismatch { .. } => Code::ChunkDigestMismatch,
            Self::FrameMismatch => Code::FrameMismatch,
            Self::Codec(e) => e.code(),
            Self::Decode(e) => e.code(),
            Self::AttributeConflict { .. } => Code::AttributeConflict,
            Self::AttributeNotFound { .. } => Code::AttributeNotFound,
            Self::AttributeNotBlob { .. } => Code::AttributeNotBlob,
            Self::Unread => Code::ReaderNotDrained,
            Self::ReaderFailed { .. } => Code::ReaderFinished,
        }
    }
}

impl fmt::Display for ReassembleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Manifest(e) => e.fmt(f),
            Self::LayoutMismatch { stored } => {
                write!(f, "item was stored with the {stored} layout")
            }
            Self::UnexpectedChunks { count } => {
                write!(f, "{count} chunks given for an item with none")
            }
            Self::ChunkMalformed { index, reason } => {
                write!(f, "chunk {index} is malformed: {reason}")
            }
            Self::ChunkForeignParent { index } => {
                write!(f, "chunk {index} belongs to another item")
            }
            Self::ChunkForeignVersion { version, expected } => {
                write!(
                    f,
                    "chunk of version {version}, parent is version {expected}"
                )
            }
            Self::ChunkOutOfRange { seq, count } => {
                write!(f, "chunk {seq} is beyond the count {count}")
            }
            Self::ChunkDuplicate { seq } => write!(f, "chunk {seq} given twice"),
            Self::ChunkMissing { seq, count } => write!(f, "chunk {seq} of {count} is missing"),
            Self::ChunkTruncated { seq, expected, got } => {
                write!(f, "chunk {seq} is {got} bytes, expected {expected}")
            }
            Self::ChunkOversized { seq, expected, got } => {
                write!(f, "chunk {seq} is {got} bytes, expected {expected}")
            }
            Self::ChunkDigestMismatch { seq } => write!(f, "chunk {seq} fails its digest"),
            Self::FrameMismatch => f.write_str("payload frame disagrees with the manifest"),
            Self::Codec(e) => e.fmt(f),
            Self::Decode(e) => e.fmt(f),
            Self::AttributeConflict { name } => {
                write!(
                    f,
                    "attribute {name} is both on the parent and in the chunks"
                )
            }
            Self::AttributeNotFound { name } => write!(f, "the item has no attribute {name}"),
            Self::AttributeNotBlob { name, found } => {
                write!(f, "attribute {name} is of type {found}, not S or B")
            }
            Self::Unread => f.write_str("finished with bytes of the attribute not yet read"),
            Self::ReaderFailed { code } => {
                write!(f, "the reader stopped at an earlier error, {code}")
            }
        }
    }
}

impl From<CodecError> for ReassembleError {
    fn from(e: CodecError) -> Self {
        Self::Codec(e)
    }
}

impl From<DecodeError> for ReassembleError {
    fn from(e: DecodeError) -> Self {
        Self::Decode(e)
    }
}

/// Rebuilds the original item from its parent and its chunks, given in any
/// order. Checks the manifest, every chunk's key, version, position, length
/// and digest, the frame, the whole payload's digest, and decodes within the
/// caller's size limit. Returns the item exactly as it was split.
pub fn reassemble(
    parent: &Item,
    chunks: &[Item],
    options: &ReassembleOptions<'_>,
) -> Result<Item, ReassembleError> {
    let Some(manifest_value) = parent.get(MANIFEST_ATTRIBUTE) else {
        if !chunks.is_empty() {
            return Err(ReassembleError::UnexpectedChunks {
                count: chunks.len(),
            });
        }
        return Ok(parent.clone());
    };
    let manifest = manifest_within_limit(manifest_value, options.max_raw_bytes)?;
    let spilled = match &manifest.inline {
        Some(frame) => {
            if !chunks.is_empty() {
                return Err(ReassembleError::UnexpectedChunks {
                    count: chunks.len(),
                });
            }
            decode_inline(frame, &manifest, options.max_raw_bytes)?
        }
        None => {
            check_layout(&manifest, options.layout)?;
            let mut spilled = Item::new();
            for (frame, chunks) in manifest.frames().zip(by_frame(chunks, &manifest, options)?) {
                let ordered = order_chunks(parent, &chunks, frame, options)?;
                let data: Vec<&[u8]> = ordered.iter().map(|&(data, _)| data).collect();
                // The whole payload's digest covers every byte: each is
                // hashed once on success, and chunk digests are checked only
                // to name the damaged chunk when something fails.
                let decoded = decode_chunks(&data, frame, options.max_raw_bytes)
                    .map_err(|e| blame(&ordered, frame, e))?;
                spilled = merge(spilled, decoded)?;
            }
            spilled
        }
    };
    merge(without_manifest(parent), spilled)
}

/// `chunks` sorted by the frame whose id their key holds, in the order of
/// [`Manifest::frames`]; a chunk of no frame is refused as another
/// version's. A manifest of one frame takes every chunk as it is, checked
/// with that frame.
fn by_frame<'c>(
    chunks: &'c [Item],
    manifest: &Manifest,
    options: &ReassembleOptions<'_>,
) -> Result<Vec<Vec<&'c Item>>, ReassembleError> {
    if manifest.groups.is_empty() {
        return Ok(alloc::vec![chunks.iter().collect()]);
    }
    let mut frames: Vec<Vec<&Item>> = manifest.frames().map(|_| Vec::new()).collect();
    for (index, chunk) in chunks.iter().enumerate() {
        let parsed = parse_chunk_key(options.key, options.layout, chunk).map_err(|_| {
            ReassembleError::ChunkMalformed {
                index,
                reason: "key is not a chunk key",
            }
        })?;
        let frame = manifest
            .frames()
            .position(|f| f.version == parsed.version)
            .ok_or(ReassembleError::ChunkForeignVersion {
                version: parsed.version,
                expected: manifest.version,
            })?;
        frames[frame].push(chunk);
    }
    Ok(frames)
}

/// The parent's manifest, refused if it records more raw bytes than the
/// caller allows: a whole-item read checks this before any chunk.
pub(crate) fn manifest_within_limit(
    value: &AttributeValue,
    max_raw_bytes: usize,
) -> Result<Manifest, ReassembleError> {
    let manifest = Manifest::from_value(value).map_err(ReassembleError::Manifest)?;
    if manifest.total_raw_len() > max_raw_bytes as u64 {
        return Err(CodecError::TooLarge {
            raw: manifest.total_raw_len(),
            limit: max_raw_bytes as u64,
        }
        .into());
    }
    Ok(manifest)
}

/// Refuses chunks stored in another layout than the reader's: their keys
/// would not be found, or would be another item's.
pub(crate) fn check_layout(manifest: &Manifest, layout: &Layout) -> Result<(), ReassembleError> {
    if manifest.layout != layout.name() {
        return Err(ReassembleError::LayoutMismatch {
            stored: manifest.layout.clone(),
        });
    }
    Ok(())
}

/// The parent's attributes but its manifest (never cloning an inline
/// payload): the attributes the item kept on its parent.
pub(crate) fn without_manifest(parent: &Item) -> Item {
    // Inserted one by one: `collect()` into a map sorts first, with a sort
    // instantiated per element type (kilobytes of WebAssembly).
    let mut item = Item::new();
    for (name, value) in parent {
        if name != MANIFEST_ATTRIBUTE {
            item.insert(name.clone(), value.clone());
        }
    }
    item
}

/// The item: the attributes kept on the parent and the spilled ones,
/// refusing a name found in both (or a spilled manifest).
pub(crate) fn merge(mut item: Item, spilled: Item) -> Result<Item, ReassembleError> {
    for (name, value) in spilled {
        if item.contains_key(&name) || name == MANIFEST_ATTRIBUTE {
            return Err(ReassembleError::AttributeConflict { name });
        }
        item.insert(name, value);
    }
    Ok(item)
}

/// The spilled attributes of an inline payload, its frame checked against
/// the manifest.
pub(crate) fn decode_inline(
    frame: &[u8],
    manifest: &Manifest,
    max_raw_bytes: usize,
) -> Result<Item, ReassembleError> {
    check_header(frame, manifest)?;
    if FrameHeader::trailer_digest(frame) != manifest.digest {
        return Err(ReassembleError::FrameMismatch);
    }
    let raw = codec::decompress(frame, max_raw_bytes)?;
    Ok(decode_attributes(&raw)?)
}

/// A chunk's bytes and its recorded digest.
pub(crate) type ChunkData<'c> = (&'c [u8], u64);

/// The first chunk whose bytes fail their digest, if any, else `error`.
fn blame(chunks: &[ChunkData<'_>], manifest: &Manifest, error: ReassembleError) -> ReassembleError {
    let version = manifest.version.to_text();
    chunks
        .iter()
        .zip(0u32..)
        .find(|((data, digest), seq)| chunk_digest(data, &version, *seq) != *digest)
        .map_or(error, |(_, seq)| ReassembleError::ChunkDigestMismatch {
            seq,
        })
}

/// Checks each chunk's key, position and length, and returns the chunks
/// in sequence order.
fn order_chunks<'c>(
    parent: &Item,
    chunks: &[&'c Item],
    manifest: &Manifest,
    options: &ReassembleOptions<'_>,
) -> Result<Vec<ChunkData<'c>>, ReassembleError> {
    let count = manifest.chunk_count;
    let mut ordered: Vec<Option<ChunkData<'c>>> = alloc::vec![None; count as usize];
    for (index, &chunk) in chunks.iter().enumerate() {
        let (seq, data) = check_chunk(parent, chunk, index, manifest, options)?;
        let slot = &mut ordered[seq as usize];
        if slot.is_some() {
            return Err(ReassembleError::ChunkDuplicate { seq });
        }
        *slot = Some(data);
    }
    ordered
        .into_iter()
        .enumerate()
        .map(|(seq, data)| {
            data.ok_or(ReassembleError::ChunkMissing {
                seq: seq as u32,
                count,
            })
        })
        .collect()
}

/// Checks one chunk item on its own (§8, steps 5 to 9 and 11): its key is a
/// chunk key of the layout, of the manifest's version, within its count, and
/// exactly the key the parent's key makes for its seq; its `_d` and `_h` are
/// well-formed and its length the manifest's. Returns its seq, its bytes and
/// its recorded digest (not yet checked); `index` is its place in the input.
pub(crate) fn check_chunk<'c>(
    parent: &Item,
    chunk: &'c Item,
    index: usize,
    manifest: &Manifest,
    options: &ReassembleOptions<'_>,
) -> Result<(u32, ChunkData<'c>), ReassembleError> {
    let count = manifest.chunk_count;
    let malformed = |reason| ReassembleError::ChunkMalformed { index, reason };
    let parsed = parse_chunk_key(options.key, options.layout, chunk).map_err(|e| match e {
        ChunkKeyError::LayoutUnsupported => malformed("layout needs a string sort key"),
        _ => malformed("key is not a chunk key"),
    })?;
    if parsed.version != manifest.version {
        return Err(ReassembleError::ChunkForeignVersion {
            version: parsed.version,
            expected: manifest.version,
        });
    }
    let seq = parsed.seq;
    if seq >= count {
        return Err(ReassembleError::ChunkOutOfRange { seq, count });
    }
    // The chunk's key must be exactly the one this parent's key makes.
    let expected = chunk_key(options.key, options.layout, parent, manifest.version, seq)
        .map_err(|_| malformed("parent key cannot make chunk keys"))?;
    if !has_key(chunk, &expected) {
        return Err(ReassembleError::ChunkForeignParent { index });
    }
    Ok((seq, chunk_parts(chunk, index, manifest, seq)?))
}

/// True when `chunk` carries exactly the attributes of `key`.
fn has_key(chunk: &Item, key: &Item) -> bool {
    key.iter()
        .all(|(name, value)| chunk.get(name) == Some(value))
}

/// A chunk item's bytes and recorded digest, its length checked against
/// the manifest's for `seq` (`index`: its place among the items given).
fn chunk_parts<'c>(
    chunk: &'c Item,
    index: usize,
    manifest: &Manifest,
    seq: u32,
) -> Result<ChunkData<'c>, ReassembleError> {
    let malformed = |reason| ReassembleError::ChunkMalformed { index, reason };
    let Some(AttributeValue::B(data)) = chunk.get(CHUNK_DATA_ATTRIBUTE) else {
        return Err(malformed("no binary _d attribute"));
    };
    let digest = match chunk.get(CHUNK_DIGEST_ATTRIBUTE) {
        Some(AttributeValue::B(d)) if d.len() == 8 => {
            u64::from_be_bytes(d.as_slice().try_into().unwrap_or_default())
        }
        _ => return Err(malformed("no 8-byte binary _h attribute")),
    };
    let expected = manifest.chunk_len(seq);
    let got = data.len() as u64;
    if got < expected {
        return Err(ReassembleError::ChunkTruncated { seq, expected, got });
    }
    if got > expected {
        return Err(ReassembleError::ChunkOversized { seq, expected, got });
    }
    Ok((data.as_slice(), digest))
}

/// Finds chunk `seq` of `parent` among `chunks` (as a BatchGetItem returns
/// them, in any order) and checks it alone: its key is exactly the one the
/// parent's key and the manifest's version make, its `_d` and `_h` are
/// well-formed, its length is the manifest's, and its bytes match their
/// digest. Returns its bytes. For reading part of an item (a preview, a
/// stream) without the rest of its chunks.
pub fn verify_chunk<'c>(
    parent: &Item,
    manifest: &Manifest,
    seq: u32,
    chunks: &'c [Item],
    options: &ReassembleOptions<'_>,
) -> Result<&'c [u8], ReassembleError> {
    let count = manifest.chunk_count;
    if seq >= count {
        return Err(ReassembleError::ChunkOutOfRange { seq, count });
    }
    let key =
        chunk_key(options.key, options.layout, parent, manifest.version, seq).map_err(|_| {
            ReassembleError::ChunkMalformed {
                index: 0,
                reason: "parent key cannot make chunk keys",
            }
        })?;
    let (index, chunk) = chunks
        .iter()
        .enumerate()
        .find(|(_, chunk)| has_key(chunk, &key))
        .ok_or(ReassembleError::ChunkMissing { seq, count })?;
    let (data, digest) = chunk_parts(chunk, index, manifest, seq)?;
    if chunk_digest(data, &manifest.version.to_text(), seq) != digest {
        return Err(ReassembleError::ChunkDigestMismatch { seq });
    }
    Ok(data)
}

/// Checks a frame's header (in its first bytes) against the manifest.
pub(crate) fn check_header(frame_start: &[u8], manifest: &Manifest) -> Result<(), ReassembleError> {
    let header = FrameHeader::parse_header(frame_start)?;
    if header.codec != manifest.codec || header.raw_len != manifest.raw_len {
        return Err(ReassembleError::FrameMismatch);
    }
    Ok(())
}

/// Decodes the frame held by `chunks` (in order, each already verified).
fn decode_chunks(
    chunks: &[&[u8]],
    manifest: &Manifest,
    max_raw_bytes: usize,
) -> Result<Item, ReassembleError> {
    let mut input = MultiSlice::new(chunks.iter().copied());
    let mut header = Vec::with_capacity(FRAME_HEADER_BYTES);
    input
        .read_into(FRAME_HEADER_BYTES, &mut header)
        .ok_or(ReassembleError::FrameMismatch)?;
    check_header(&header, manifest)?;
    if manifest.codec != Codec::None {
        let mut frame = Vec::with_capacity(manifest.stored_len as usize);
        chunks.iter().for_each(|c| frame.extend_from_slice(c));
        let raw = codec::decompress(&frame, max_raw_bytes)?;
        if FrameHeader::trailer_digest(&frame) != manifest.digest {
            return Err(ReassembleError::FrameMismatch);
        }
        return Ok(decode_attributes(&raw)?);
    }
    // Uncompressed: check the digest over the body as it lies in the
    // chunks, then decode straight from them, copying each value once.
    let framing = (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64;
    if manifest.stored_len.checked_sub(framing) != Some(manifest.raw_len) {
        return Err(ReassembleError::FrameMismatch);
    }
    let body_len = manifest.raw_len as usize;
    let body = body_slices(chunks, FRAME_HEADER_BYTES, body_len);
    let mut digester = Digester::new();
    body.iter().for_each(|s| digester.update(s));
    let got = digester.finish();
    let mut trailer = Vec::with_capacity(FRAME_TRAILER_BYTES);
    input.skip(body_len).ok_or(ReassembleError::FrameMismatch)?;
    input
        .read_into(FRAME_TRAILER_BYTES, &mut trailer)
        .ok_or(ReassembleError::FrameMismatch)?;
    let recorded = u64::from_le_bytes(trailer.as_slice().try_into().unwrap_or_default());
    if recorded != manifest.digest {
        return Err(ReassembleError::FrameMismatch);
    }
    if got != manifest.digest {
        return Err(CodecError::DigestMismatch {
            expected: manifest.digest,
            got,
        }
        .into());
    }
    Ok(decode_attributes_from(MultiSlice::new(body))?)
}

/// The slices of `parts` covering `len` bytes from offset `start`.
fn body_slices<'a>(parts: &[&'a [u8]], mut start: usize, mut len: usize) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    for part in parts {
        if start >= part.len() {
            start -= part.len();
            continue;
        }
        let take = (part.len() - start).min(len);
        out.push(&part[start..start + take]);
        start = 0;
        len -= take;
        if len == 0 {
            break;
        }
    }
    out
}
