//! Where chunks live and what their keys are.
//!
//! Chunk keys carry the parent's key, the version id and a zero-padded
//! sequence number: `<parent key>#<version>#<seq>`. Key parts are escaped
//! (`\` becomes `\\`, `#` becomes `\#`), so a `#` inside a user's key can never
//! make two chunk keys collide, and every chunk key parses back into its
//! parent's key, version and position (which is what `gc` needs).

use crate::code::Code;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::key::{KeySchema, KeyType};
use crate::number::Decimal;
use crate::value::{AttributeValue, Item};
use crate::version::{VERSION_ID_LEN, VersionId};

/// Digits of a chunk's sequence number; chunk keys sort in sequence order.
pub const SEQ_DIGITS: usize = 6;
/// Most chunks one virtual item may have (`999999`, six digits).
pub const MAX_CHUNKS: u32 = 999_999;
/// Chunks an anchor covers: itself and the next 63 of its frame
/// (docs/FORMAT.md section 6, "Anchors").
pub const ANCHOR_SPAN: u32 = 64;

/// True when the item at position `seq` of a frame is an anchor: every
/// 64th chunk (0, 64, 128, ...) and a version record (position 999,999).
/// An anchor is written before the chunks it covers and deleted after
/// them, so `gc` finds every chunk from the anchors alone.
pub const fn is_anchor(seq: u32) -> bool {
    seq.is_multiple_of(ANCHOR_SPAN) || seq == MAX_CHUNKS
}

/// The positions an anchor at `seq` covers besides itself: the rest of its
/// span (never the record's position), or nothing for a record.
pub fn anchored(seq: u32) -> core::ops::Range<u32> {
    match seq {
        MAX_CHUNKS => 0..0,
        _ => seq + 1..seq.saturating_add(ANCHOR_SPAN).min(MAX_CHUNKS),
    }
}

/// Where a virtual item's chunks are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Layout {
    /// A second table with a simple string partition key named `key_name`
    /// (the AWS guide's `ReplyChunks`): chunks spread over partitions.
    ChunkTable {
        /// The chunk table's partition key attribute name.
        key_name: String,
    },
    /// The parent's own item collection: same partition key, sort key
    /// `<parent sort key>#<version>#<seq>`. Needs a string sort key.
    ItemCollection,
}

/// The chunk table's partition key attribute by default.
pub const DEFAULT_CHUNK_KEY_NAME: &str = "pk";
/// The anchors index (docs/FORMAT.md section 6, "Anchors"): a global
/// secondary index of the table chunks live in, partition key `_da`
/// (binary), keys only.
pub const ANCHORS_INDEX: &str = "dynaslice-anchors";

/// The chunk table of `table` by default: `<table>_chunks`.
pub fn default_chunk_table(table: &str) -> String {
    let mut name = String::with_capacity(table.len() + 7);
    name.push_str(table);
    name.push_str("_chunks");
    name
}

impl Default for Layout {
    fn default() -> Self {
        Self::ChunkTable {
            key_name: DEFAULT_CHUNK_KEY_NAME.to_string(),
        }
    }
}

impl Layout {
    /// The short name stored in the manifest: `table` or `collection`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ChunkTable { .. } => "table",
            Self::ItemCollection => "collection",
        }
    }
}

/// Why a chunk key could not be made or read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkKeyError {
    /// The parent item lacks a key attribute or has the wrong type.
    ParentKey {
        /// The name of the key attribute missing or of the wrong type.
        name: String,
    },
    /// The item-collection layout needs a string sort key.
    LayoutUnsupported,
    /// A chunk key would exceed DynamoDB's key length limit.
    TooLarge {
        /// The chunk key's length in UTF-8 bytes.
        size: usize,
        /// DynamoDB's limit for that key, in bytes (2,048 partition, 1,024 sort).
        limit: usize,
    },
    /// A stored key is not a chunk key of this layout.
    Malformed,
}

impl ChunkKeyError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::ParentKey { .. } => Code::ParentKeyInvalid,
            Self::LayoutUnsupported => Code::LayoutUnsupported,
            Self::TooLarge { .. } => Code::ChunkKeyTooLarge,
            Self::Malformed => Code::ChunkKeyMalformed,
        }
    }
}

impl fmt::Display for ChunkKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ParentKey { name } => {
                write!(f, "parent key attribute {name} is missing or mistyped")
            }
            Self::LayoutUnsupported => {
                f.write_str("the item-collection layout needs a table with a string sort key")
            }
            Self::TooLarge { size, limit } => {
                write!(f, "chunk key is {size} bytes, limit {limit}")
            }
            Self::Malformed => f.write_str("not a chunk key of this layout"),
        }
    }
}

/// A chunk's identity: whose chunk, which version, which position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkKey {
    /// The parent's key attributes.
    pub parent_key: Item,
    /// The write attempt the chunk belongs to.
    pub version: VersionId,
    /// Position, from 0.
    pub seq: u32,
}

/// Escapes a string key part.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        if c == '\\' || c == '#' {
            out.push('\\');
        }
        out.push(c);
    }
}

/// Splits escaped text on unescaped `#`, unescaping each part.
fn split_escaped(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            // Only `\\` and `\#` are escapes: one text, one meaning.
            '\\' => current.push(chars.next().filter(|c| *c == '\\' || *c == '#')?),
            '#' => parts.push(core::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    Some(parts)
}

/// A key value as chunk-key text: strings escaped, numbers canonical (so
/// `1.50` and `1.5` name the same parent), binary as base64.
///
/// Numbers must be within DynamoDB's limits, here and in [`key_value`]: the
/// canonical text has a character for every power of ten, so an exponent
/// like `1E4000000000` in a hostile key would take gigabytes to write out.
fn key_part(value: &AttributeValue, key_type: KeyType) -> Option<String> {
    let mut out = String::new();
    match (key_type, value) {
        (KeyType::S, AttributeValue::S(s)) => escape_into(&mut out, s),
        (KeyType::N, AttributeValue::N(n)) => out = Decimal::parse_valid(n).ok()?.canonical(),
        (KeyType::B, AttributeValue::B(b)) => out = crate::base64::encode(b),
        _ => return None,
    }
    Some(out)
}

/// The key attributes of `item` by `schema` as chunk keys name a parent:
/// numbers in canonical text (`1.50` is `1.5`), as [`parse_chunk_key`]
/// gives them. `None` when a key attribute is missing or of another type.
pub(crate) fn canonical_key(schema: &KeySchema, item: &Item) -> Option<Item> {
    let mut key = Item::new();
    for attribute in schema.attributes() {
        let value = item.get(&attribute.name)?;
        let text = key_part(value, attribute.key_type)?;
        let value = match attribute.key_type {
            KeyType::N => AttributeValue::N(text),
            _ => value.clone(),
        };
        key.insert(attribute.name.clone(), value);
    }
    Some(key)
}

/// The value of chunk-key text for a key of type `key_type`.
fn key_value(text: String, key_type: KeyType) -> Option<AttributeValue> {
    Some(match key_type {
        KeyType::S => AttributeValue::S(text),
        KeyType::N => AttributeValue::N(Decimal::parse_valid(&text).ok()?.canonical()),
        KeyType::B => AttributeValue::B(crate::base64::decode(&text)?),
    })
}

fn suffix(version: VersionId, seq: u32) -> String {
    use core::fmt::Write;
    let mut out = String::with_capacity(2 + VERSION_ID_LEN + SEQ_DIGITS);
    let _ = write!(out, "#{version}#{seq:0width$}", width = SEQ_DIGITS);
    out
}

/// The key attributes of chunk `seq` of `version` of the item whose key
/// attributes are in `parent`.
pub fn chunk_key(
    schema: &KeySchema,
    layout: &Layout,
    parent: &Item,
    version: VersionId,
    seq: u32,
) -> Result<Item, ChunkKeyError> {
    let mut key = Item::new();
    match layout {
        Layout::ChunkTable { key_name } => {
            let mut text = parent_key_text(schema, parent)?;
            text.push_str(&suffix(version, seq));
            check_len(&text, crate::key::MAX_PARTITION_KEY_BYTES)?;
            key.insert(key_name.clone(), AttributeValue::S(text));
        }
        Layout::ItemCollection => {
            let sort = schema.sort.as_ref().filter(|s| s.key_type == KeyType::S);
            let sort = sort.ok_or(ChunkKeyError::LayoutUnsupported)?;
            let pk = &schema.partition;
            let pk_value = parent.get(&pk.name).filter(|v| pk.key_type.matches(v));
            let pk_value = pk_value.ok_or_else(|| ChunkKeyError::ParentKey {
                name: pk.name.clone(),
            })?;
            let mut text = parent_part(parent, sort)?;
            text.push_str(&suffix(version, seq));
            check_len(&text, crate::key::MAX_SORT_KEY_BYTES)?;
            key.insert(pk.name.clone(), pk_value.clone());
            key.insert(sort.name.clone(), AttributeValue::S(text));
        }
    }
    Ok(key)
}

/// The parent's key as chunk-key text: its partition key part, then `#`
/// and its sort key part when it has one, each escaped.
pub(crate) fn parent_key_text(schema: &KeySchema, parent: &Item) -> Result<String, ChunkKeyError> {
    let mut text = parent_part(parent, &schema.partition)?;
    if let Some(sort) = &schema.sort {
        text.push('#');
        text.push_str(&parent_part(parent, sort)?);
    }
    Ok(text)
}

/// Key attribute `key` of `parent` as chunk-key text.
fn parent_part(parent: &Item, key: &crate::key::KeyAttribute) -> Result<String, ChunkKeyError> {
    parent
        .get(&key.name)
        .and_then(|v| key_part(v, key.key_type))
        .ok_or_else(|| ChunkKeyError::ParentKey {
            name: key.name.clone(),
        })
}

/// Reads text of [`parent_key_text`] followed by `#` and a version id
/// back into the parent's key attributes and the version.
pub(crate) fn parse_versioned_key_text(
    schema: &KeySchema,
    text: &str,
) -> Option<(Item, VersionId)> {
    let mut parts = split_escaped(text)?;
    let version = VersionId::parse(&parts.pop()?).ok()?;
    let keys: Vec<_> = schema.attributes().collect();
    if parts.len() != keys.len() {
        return None;
    }
    let mut parent = Item::new();
    for (key, text) in keys.into_iter().zip(parts) {
        parent.insert(key.name.clone(), key_value(text, key.key_type)?);
    }
    Some((parent, version))
}

fn check_len(text: &str, limit: usize) -> Result<(), ChunkKeyError> {
    if text.len() > limit {
        return Err(ChunkKeyError::TooLarge {
            size: text.len(),
            limit,
        });
    }
    Ok(())
}

/// Reads a chunk's key attributes back into its parent key, version and seq.
pub fn parse_chunk_key(
    schema: &KeySchema,
    layout: &Layout,
    chunk: &Item,
) -> Result<ChunkKey, ChunkKeyError> {
    let malformed = ChunkKeyError::Malformed;
    let text_of = |name: &str| match chunk.get(name) {
        Some(AttributeValue::S(s)) => Ok(s.as_str()),
        _ => Err(ChunkKeyError::Malformed),
    };
    let (text, mut parent_key) = match layout {
        Layout::ChunkTable { key_name } => (text_of(key_name)?, Item::new()),
        Layout::ItemCollection => {
            let sort = schema
                .sort
                .as_ref()
                .ok_or(ChunkKeyError::LayoutUnsupported)?;
            let pk = &schema.partition;
            let pk_value = chunk.get(&pk.name).filter(|v| pk.key_type.matches(v));
            let mut parent = Item::new();
            parent.insert(pk.name.clone(), pk_value.ok_or(malformed.clone())?.clone());
            (text_of(&sort.name)?, parent)
        }
    };
    let mut parts = split_escaped(text).ok_or(malformed.clone())?;
    let seq_text = parts.pop().ok_or(malformed.clone())?;
    let version_text = parts.pop().ok_or(malformed.clone())?;
    if seq_text.len() != SEQ_DIGITS || !seq_text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed);
    }
    let seq = seq_text.parse().map_err(|_| malformed.clone())?;
    let version = VersionId::parse(&version_text).map_err(|_| malformed.clone())?;
    let keys: Vec<_> = match layout {
        Layout::ChunkTable { .. } => schema.attributes().collect(),
        Layout::ItemCollection => schema.sort.iter().collect(),
    };
    if parts.len() != keys.len() {
        return Err(malformed);
    }
    for (key, text) in keys.into_iter().zip(parts) {
        let value = key_value(text, key.key_type).ok_or(malformed.clone())?;
        parent_key.insert(key.name.clone(), value);
    }
    Ok(ChunkKey {
        parent_key,
        version,
        seq,
    })
}
