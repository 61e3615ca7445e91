//! Splitting an item that is too large into a parent and chunks.

use crate::code::Code;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::codec::{CodecError, Compression};
use crate::key::{IndexKey, KeySchema};
use crate::layout::{ChunkKeyError, Layout, MAX_CHUNKS, chunk_key, is_anchor};
use crate::manifest::{
    ANCHOR_ATTRIBUTE, CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE, Manifest,
};
use crate::size::{MAX_ITEM_BYTES, item_size};
use crate::validate::Violation;
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::group::{self, DEFAULT_GROUP_BYTES};
use crate::write::payload::Payload;
use crate::write::spill::{Prepared, Spill, prepare};

/// Default size the parent is trimmed to by spilling attributes.
pub const DEFAULT_PARENT_BUDGET: usize = 4096;
/// Default largest raw payload a virtual item may hold (64 MiB).
pub const DEFAULT_MAX_RAW_BYTES: usize = 64 << 20;
/// The most chunks of one virtual item that operations building every
/// chunk's key accept (delete, the cleanup after an overwrite, inspect),
/// and the most a streamed write cuts: a forged manifest costs them at most
/// what the 64 MiB default limit of the 1 KiB-chunk worst case did (65,536
/// keys), while a payload of full 400 KB chunks may be 25 GiB.
pub const DEFAULT_MAX_CHUNK_KEYS: u32 = 65_536;
/// Smallest chunk payload accepted: below it, chunk keys would outweigh data.
pub const MIN_CHUNK_DATA_BYTES: usize = 1024;

/// How to compress the spilled attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CodecChoice {
    /// Choose by [`codec::choose_compression`]'s policy.
    #[default]
    Auto,
    /// Always this codec and level.
    Fixed(Compression),
}

/// How to split an item.
#[derive(Clone, Debug)]
pub struct SplitOptions {
    /// The parent table's key schema.
    pub key: KeySchema,
    /// Where chunks live.
    pub layout: Layout,
    /// How the spilled attributes are compressed: a fixed codec and level,
    /// or `auto`.
    pub compression: CodecChoice,
    /// The version id of this write attempt: fresh and unique for each.
    pub version: VersionId,
    /// Largest chunk item, exact by [`item_size`] (default and maximum 409,600).
    pub chunk_item_bytes: usize,
    /// Items this size or smaller are not split (default and maximum 409,600).
    pub item_limit: usize,
    /// Attributes are spilled, largest first, until the parent is this small.
    pub parent_budget: usize,
    /// Largest encoded payload accepted (`usize::MAX`: none but the
    /// chunk limit, for a stream).
    pub max_raw_bytes: usize,
    /// Keep a compressed payload on the parent when it fits there.
    pub inline: bool,
    /// Attributes that always stay on the parent, for the caller's own
    /// reasons (projections, filters).
    pub keep: Vec<String>,
    /// The table's index keys (global and local secondary indexes): always
    /// kept on the parent, and checked as DynamoDB checks them.
    pub index_keys: Vec<IndexKey>,
    /// The table's TTL attribute: kept on the parent, and copied to every
    /// chunk (when the item has a Number there), so chunks expire with it.
    pub ttl: Option<String>,
    /// Split an item even when it fits whole (its largest attributes
    /// spilled, inline when they fit there): version history keeps its list
    /// in the manifest, so an item that keeps history always has one.
    pub always_split: bool,
    /// A chunked item's spilled attributes at least this large (name and
    /// value) are each stored as a group of their own, whose chunks an
    /// update of other attributes reuses (default 409,600;
    /// `usize::MAX`: one frame for all).
    pub group_bytes: usize,
    /// Groups a new version reuses from the version it replaces (an
    /// update that does not change them): the item holds none of their
    /// attributes, and the new manifest lists them after its own frames.
    /// The payload is then never inline (a manifest with groups is
    /// chunked), and an item that fits whole gets an empty frame.
    pub carried: Vec<Manifest>,
}

impl SplitOptions {
    /// Defaults: chunk-table layout, `auto` codec, full-size chunks.
    pub fn new(key: KeySchema, version: VersionId) -> Self {
        Self {
            key,
            layout: Layout::default(),
            compression: CodecChoice::Auto,
            version,
            chunk_item_bytes: MAX_ITEM_BYTES,
            item_limit: MAX_ITEM_BYTES,
            parent_budget: DEFAULT_PARENT_BUDGET,
            max_raw_bytes: DEFAULT_MAX_RAW_BYTES,
            inline: true,
            keep: Vec::new(),
            index_keys: Vec::new(),
            ttl: None,
            always_split: false,
            group_bytes: DEFAULT_GROUP_BYTES,
            carried: Vec::new(),
        }
    }

    /// True when `name` must stay on the parent: a key, an index key, the
    /// TTL attribute, or one the caller keeps.
    pub fn kept(&self, name: &str) -> bool {
        self.key.is_key(name)
            || self.keep.iter().any(|k| k == name)
            || self.index_keys.iter().any(|k| k.name == name)
            || self.ttl.as_deref() == Some(name)
    }
}

/// An item ready to write: the parent and its chunks.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitItem {
    /// The parent: key, small attributes and, if split, the manifest.
    pub parent: Item,
    /// Chunk items in sequence order (empty when the item was not split or
    /// its payload is inline).
    pub chunks: Vec<Item>,
    /// The manifest, when the item was split.
    pub manifest: Option<Manifest>,
}

/// Why an item could not be split.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitError {
    /// The item breaks DynamoDB's rules (every violation listed).
    Invalid {
        /// What is wrong, with paths.
        violations: Vec<Violation>,
    },
    /// The item uses an attribute name the stored format reserves
    /// ([`crate::manifest::RESERVED_ATTRIBUTES`]).
    ReservedAttribute {
        /// The reserved attribute name the item uses.
        name: &'static str,
    },
    /// The encoded payload exceeds the configured maximum.
    TooLarge {
        /// The value stream's length, in bytes.
        size: usize,
        /// The largest accepted ([`SplitOptions::max_raw_bytes`]), in bytes.
        limit: usize,
    },
    /// The parent (keys, kept attributes, manifest) cannot fit the item limit.
    ParentTooLarge {
        /// The parent's exact size with its manifest, in bytes.
        size: usize,
        /// The item limit ([`SplitOptions::item_limit`]), in bytes.
        limit: usize,
    },
    /// Options that cannot work.
    BadOptions {
        /// Which and why.
        reason: &'static str,
    },
    /// A chunk key could not be made.
    ChunkKey(ChunkKeyError),
    /// Compression failed.
    Codec(CodecError),
    /// A streamed payload's length differs from the length declared.
    StreamLength {
        /// Bytes declared when the stream began.
        declared: u64,
        /// Bytes received (at least this many, when too many).
        received: u64,
    },
}

impl SplitError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::Invalid { violations } => violations
                .first()
                .map_or(Code::ItemInvalid, Violation::code),
            Self::ReservedAttribute { .. } => Code::AttributeReserved,
            Self::TooLarge { .. } => Code::VirtualItemTooLarge,
            Self::ParentTooLarge { .. } => Code::ParentTooLarge,
            Self::BadOptions { .. } => Code::OptionsInvalid,
            Self::ChunkKey(e) => e.code(),
            Self::Codec(e) => e.code(),
            Self::StreamLength { .. } => Code::StreamLengthMismatch,
        }
    }
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { violations } => {
                f.write_str("item is invalid")?;
                for (i, v) in violations.iter().enumerate() {
                    f.write_str(if i == 0 { ": " } else { "; " })?;
                    v.fmt(f)?;
                }
                Ok(())
            }
            Self::ReservedAttribute { name } => {
                write!(
                    f,
                    "attribute name {name} is reserved by dynaslice's stored format"
                )
            }
            Self::TooLarge { size, limit } => {
                write!(f, "payload is {size} bytes, limit {limit}")
            }
            Self::ParentTooLarge { size, limit } => {
                write!(f, "parent item is {size} bytes, limit {limit}")
            }
            Self::BadOptions { reason } => write!(f, "invalid split options: {reason}"),
            Self::ChunkKey(e) => e.fmt(f),
            Self::Codec(e) => e.fmt(f),
            Self::StreamLength { declared, received } => {
                write!(f, "stream declared {declared} bytes, received {received}")
            }
        }
    }
}

impl From<ChunkKeyError> for SplitError {
    fn from(e: ChunkKeyError) -> Self {
        Self::ChunkKey(e)
    }
}

impl From<CodecError> for SplitError {
    fn from(e: CodecError) -> Self {
        Self::Codec(e)
    }
}

/// Splits `item` into a parent and chunks, or returns it whole when it fits.
///
/// Keys and small attributes stay on the parent; the largest attributes are
/// spilled, biggest first, until the parent fits its budget. Spilled
/// attributes are encoded, compressed, framed, and cut into chunks whose items
/// are exactly `chunk_item_bytes` (the last may be smaller).
///
/// ```
/// use dynaslice_core::*;
/// use dynaslice_core::codec::Compression;
/// let schema = KeySchema::partition("pk", KeyType::S);
/// let mut item = Item::new();
/// item.insert("pk".into(), AttributeValue::S("doc".into()));
/// item.insert("body".into(), AttributeValue::B((0..1_000_000u32).map(|i| (i % 251) as u8).collect()));
/// let mut options = SplitOptions::new(schema.clone(), VersionId::new(1_700_000_000_000, 42));
/// options.compression = CodecChoice::Fixed(Compression::NONE);
/// let split = split_item(&item, &options).unwrap();
/// assert_eq!(split.chunks.len(), 3);
/// assert!(split.chunks.iter().all(|c| item_size(c) <= MAX_ITEM_BYTES));
/// let back = reassemble(&split.parent, &split.chunks, &ReassembleOptions::new(&schema, &options.layout)).unwrap();
/// assert_eq!(back, item);
/// ```
pub fn split_item(item: &Item, options: &SplitOptions) -> Result<SplitItem, SplitError> {
    if !options.carried.is_empty() {
        return group::split_carrying(item, options);
    }
    match prepare(item, options)? {
        Prepared::Fits => Ok(unsplit(item)),
        Prepared::Spill(spill) => split_prepared(item, spill, options),
    }
}

/// Splits what [`prepare`] spilled: in groups when its large attributes
/// make more than one ([`group::grouping`]), as one frame otherwise.
pub(crate) fn split_prepared(
    item: &Item,
    spill: Spill<'_>,
    options: &SplitOptions,
) -> Result<SplitItem, SplitError> {
    if let Some(groups) = group::grouping(item, &spill.kept, &spill.names, options) {
        let grouped = group::split_groups(item, &spill.kept, &groups, options)?;
        // Stored so small that the whole payload might fit on the parent:
        // one frame inline beats chunks of any kind.
        let small = grouped
            .manifest
            .as_ref()
            .is_some_and(|m| m.total_stored_len() < options.item_limit as u64);
        if !(options.inline && small) {
            return Ok(grouped);
        }
        let compression = spill.compression(options.compression);
        let whole = split_spill(item, spill, compression, options)?;
        let inline = whole.manifest.as_ref().is_some_and(|m| m.inline.is_some());
        return Ok(if inline { whole } else { grouped });
    }
    let compression = spill.compression(options.compression);
    split_spill(item, spill, compression, options)
}

/// An item that fits, as its own split.
pub(crate) fn unsplit(item: &Item) -> SplitItem {
    SplitItem {
        parent: item.clone(),
        chunks: Vec::new(),
        manifest: None,
    }
}

/// Splits what [`prepare`] spilled, compressed with `compression`.
pub(crate) fn split_spill(
    item: &Item,
    spill: Spill<'_>,
    compression: Compression,
    options: &SplitOptions,
) -> Result<SplitItem, SplitError> {
    let Spill {
        kept,
        names,
        stream,
    } = spill;
    let payload = Payload::new(&stream, compression)?;
    let mut manifest = Manifest {
        version: options.version,
        layout: options.layout.name().into(),
        codec: payload.codec(),
        chunk_count: 0,
        chunk_bytes: 0,
        stored_len: payload.len() as u64,
        raw_len: stream.len() as u64,
        digest: 0,
        spilled: names,
        inline: None,
        updated: None,
        groups: Vec::new(),
        object: None,
    };
    let parent_of = |manifest: &Manifest| {
        let mut parent = kept.clone();
        parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
        parent
    };
    if may_be_inline(payload.len() as u64, options) {
        let (frame, digest) = payload.to_frame();
        let inline = Manifest {
            digest,
            ..manifest.clone()
        };
        if let Some(split) = inline_split(&kept, inline, frame, options) {
            return Ok(split);
        }
    }

    let base = ChunkBase::of(item, options);
    let data_bytes = chunk_data_bytes(&base, options)?;
    let chunk_count = payload.len().div_ceil(data_bytes);
    if chunk_count > MAX_CHUNKS as usize {
        return Err(SplitError::TooLarge {
            size: payload.len(),
            limit: MAX_CHUNKS as usize * data_bytes,
        });
    }
    manifest.chunk_count = chunk_count as u32;
    manifest.chunk_bytes = data_bytes as u32;
    // The digest's value does not change the parent's size: check it first.
    let parent_size = item_size(&parent_of(&manifest));
    if parent_size > options.item_limit {
        return Err(SplitError::ParentTooLarge {
            size: parent_size,
            limit: options.item_limit,
        });
    }
    let (pieces, digest) = payload.cut(data_bytes, options.version.to_text());
    manifest.digest = digest;
    let chunks = pieces
        .into_iter()
        .enumerate()
        .map(|(seq, (data, digest))| chunk_item(&base, options, seq as u32, data, digest))
        .collect::<Result<_, _>>()?;
    Ok(SplitItem {
        parent: parent_of(&manifest),
        chunks,
        manifest: Some(manifest),
    })
}

/// Puts `manifest` on `parent`, which must then fit the item limit
/// (`PARENT_TOO_LARGE`).
pub(crate) fn put_manifest(
    parent: &mut Item,
    manifest: &Manifest,
    options: &SplitOptions,
) -> Result<(), SplitError> {
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    let size = item_size(parent);
    if size > options.item_limit {
        return Err(SplitError::ParentTooLarge {
            size,
            limit: options.item_limit,
        });
    }
    Ok(())
}

/// True when a payload of `stored_len` framed bytes may be stored inline on
/// the parent: inline payloads are allowed and it is shorter than the item
/// limit. Whether it is also depends on the parent's size beside it
/// ([`inline_split`]).
pub(crate) fn may_be_inline(stored_len: u64, options: &SplitOptions) -> bool {
    options.inline && stored_len < options.item_limit as u64
}

/// The split storing `frame` inline on the parent `kept` with `manifest`
/// (no chunks), if the parent then fits the item limit. The one rule for a
/// payload split whole and for one cut as it was compressed.
pub(crate) fn inline_split(
    kept: &Item,
    manifest: Manifest,
    frame: Vec<u8>,
    options: &SplitOptions,
) -> Option<SplitItem> {
    if !may_be_inline(frame.len() as u64, options) {
        return None;
    }
    let manifest = Manifest {
        chunk_count: 0,
        chunk_bytes: 0,
        inline: Some(frame),
        updated: None,
        ..manifest
    };
    let mut parent = kept.clone();
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    (item_size(&parent) <= options.item_limit).then(|| SplitItem {
        parent,
        chunks: Vec::new(),
        manifest: Some(manifest),
    })
}

pub(crate) fn check_options(options: &SplitOptions) -> Result<(), SplitError> {
    let bad = |reason| Err(SplitError::BadOptions { reason });
    if options.chunk_item_bytes > MAX_ITEM_BYTES || options.item_limit > MAX_ITEM_BYTES {
        return bad("chunk_item_bytes and item_limit may not exceed 409600");
    }
    if options.chunk_item_bytes < 2 * MIN_CHUNK_DATA_BYTES {
        return bad("chunk_item_bytes must be at least 2048");
    }
    if let CodecChoice::Fixed(c) = options.compression {
        c.codec.check_level(c.level)?;
    }
    Ok(())
}

/// Frame bytes that fit in one chunk item: the item limit less the chunk's
/// key and attribute names, the digest and the anchor mark, computed from a
/// real chunk key (chunk 0, an anchor: every chunk has the same room).
pub(crate) fn chunk_data_bytes(
    base: &ChunkBase,
    options: &SplitOptions,
) -> Result<usize, SplitError> {
    let empty = chunk_item(base, options, 0, Vec::new(), 0)?;
    let overhead = item_size(&empty);
    let data = options.chunk_item_bytes.saturating_sub(overhead);
    if data < MIN_CHUNK_DATA_BYTES {
        return Err(SplitError::BadOptions {
            reason: "chunk_item_bytes leaves too little room for data after the chunk key",
        });
    }
    Ok(data)
}

/// What every chunk of an item carries besides its data: the parent's key
/// (its chunk keys are made from it) and, when the table has a TTL
/// attribute and the parent a Number there, that attribute, so DynamoDB's
/// TTL deletes the chunks with their parent.
pub(crate) struct ChunkBase {
    key: Item,
    ttl: Option<(String, AttributeValue)>,
}

impl ChunkBase {
    /// The base of `parent`'s chunks.
    pub(crate) fn of(parent: &Item, options: &SplitOptions) -> Self {
        let ttl = options
            .ttl
            .as_ref()
            .and_then(|name| match parent.get(name) {
                Some(value @ AttributeValue::N(_)) => Some((name.clone(), value.clone())),
                _ => None,
            });
        Self {
            key: options.key.key_of(parent),
            ttl,
        }
    }
}

/// A chunk item: its key, its digest (computed when it was cut), its data
/// and its parent's TTL.
pub(crate) fn chunk_item(
    base: &ChunkBase,
    options: &SplitOptions,
    seq: u32,
    data: Vec<u8>,
    digest: u64,
) -> Result<Item, SplitError> {
    let (schema, layout) = (&options.key, &options.layout);
    let mut chunk = chunk_item_of(
        schema,
        layout,
        &base.key,
        options.version,
        seq,
        data,
        digest,
    )?;
    if let Some((name, value)) = &base.ttl {
        chunk.insert(name.clone(), value.clone());
    }
    Ok(chunk)
}

/// Chunk `seq` of version `version` of the item keyed like `key`: its key,
/// `_h` holding `digest`, `_d` holding `data` and, on an anchor, `_da`
/// holding `digest` too. The one place a chunk item is put together (a
/// split, a streamed split, an upload checked by a host).
pub(crate) fn chunk_item_of(
    schema: &KeySchema,
    layout: &Layout,
    key: &Item,
    version: VersionId,
    seq: u32,
    data: Vec<u8>,
    digest: u64,
) -> Result<Item, ChunkKeyError> {
    let mut chunk = chunk_key(schema, layout, key, version, seq)?;
    let digest = digest.to_be_bytes().to_vec();
    if is_anchor(seq) {
        chunk.insert(ANCHOR_ATTRIBUTE.into(), AttributeValue::B(digest.clone()));
    }
    chunk.insert(CHUNK_DIGEST_ATTRIBUTE.into(), AttributeValue::B(digest));
    chunk.insert(CHUNK_DATA_ATTRIBUTE.into(), AttributeValue::B(data));
    Ok(chunk)
}
