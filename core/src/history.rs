//! Version history (docs/FORMAT.md §10), opt-in: a commit keeps the version
//! it replaces instead of deleting its chunks, and records it.
//!
//! What is kept is listed on the parent, in its manifest's field `y`, so
//! the commit that replaces a version and the list that retains it are one
//! write: no reader or `gc` can see a retained version that is not listed,
//! or a listed one whose chunks a commit already deleted. Each entry names
//! the version, when it was replaced (the store's clock), its chunk count
//! and its writer's note. The replaced parent itself (its small attributes
//! and manifest) is kept in a *version record*: an item in the chunk space
//! at the key of chunk 999,999 of that version (no chunk of a version has
//! that position), holding the parent encoded as a value stream (`_d`)
//! and its digest seeded like a chunk's (`_h`), so listings and queries
//! hide it as they hide chunks, and `gc` judges it with its version.
//!
//! Retention (S3's rule for noncurrent versions): the newest `keep`
//! replaced versions are kept, and any younger than `max_age`; at most
//! [`MAX_HISTORY`] in all. A commit applies it (deleting what it releases
//! after the commit), and `gc` applies it by the store's clock to versions
//! that aged out between commits. A write that says nothing inherits the
//! stored item's retention; `keep` 0 with no age turns history off.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::code::Code;
use crate::digest::chunk_digest;
use crate::encoding::{decode_attributes, encode_item};
use crate::layout::{MAX_CHUNKS, chunk_key};
use crate::manifest::{
    ANCHOR_ATTRIBUTE, CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE, MAX_GROUPS,
    Manifest, ManifestError, stored_version,
};
use crate::plan::{BatchWrite, WriteRequest, pack_batch_writes};
use crate::size::{MAX_ITEM_BYTES, item_size};
use crate::table::Table;
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::split::DEFAULT_MAX_CHUNK_KEYS;

/// The manifest field listing the kept versions.
pub const HISTORY_FIELD: &str = "y";
/// The manifest field holding the writer's note on its version.
pub const NOTE_FIELD: &str = "w";
/// Most replaced versions one item keeps, whatever its retention says.
pub const MAX_HISTORY: usize = 100;
/// Longest note, in UTF-8 bytes.
pub const MAX_NOTE_BYTES: usize = 256;
/// The chunk position of a version's record: past every chunk's.
pub const RECORD_SEQ: u32 = MAX_CHUNKS;

/// How many replaced versions an item keeps, and for how long.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Retention {
    /// The newest this many replaced versions are kept (at most
    /// [`MAX_HISTORY`]).
    pub keep: u32,
    /// Replaced versions younger than this many milliseconds are kept too.
    pub max_age_ms: Option<u64>,
}

impl Retention {
    /// True when it keeps anything: history is on.
    pub fn is_on(&self) -> bool {
        self.keep > 0 || self.max_age_ms.is_some_and(|age| age > 0)
    }

    /// True when the replaced version at `index` (0: the newest), replaced
    /// at `replaced_ms`, is kept at `now_ms`.
    pub fn keeps(&self, index: usize, replaced_ms: u64, now_ms: u64) -> bool {
        index < MAX_HISTORY
            && (index < self.keep as usize
                || self
                    .max_age_ms
                    .is_some_and(|age| now_ms.saturating_sub(replaced_ms) < age))
    }

    /// Checks the bounds of a retention a caller gave.
    pub fn check(&self) -> Result<(), HistoryError> {
        match self.keep as usize > MAX_HISTORY {
            true => Err(HistoryError::KeepTooLarge { keep: self.keep }),
            false => Ok(()),
        }
    }
}

/// One replaced version an item keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Entry {
    /// Its version id (an item that was stored whole gets one when it is
    /// replaced).
    pub version: VersionId,
    /// When a commit replaced it, in the store's time (ms since the epoch).
    pub replaced_ms: u64,
    /// Its chunk count (0: inline, or an item stored whole).
    pub chunk_count: u32,
    /// Its size: the parent's bytes and the payload's raw length.
    pub bytes: u64,
    /// Its writer's note.
    pub note: Option<String>,
    /// Its groups' ids and chunk counts ([`Manifest::groups`]): frames it
    /// holds under other ids, kept with it.
    pub groups: Vec<(VersionId, u32)>,
}

impl Entry {
    /// True when this kept version holds the chunks of frame `id`: its
    /// own, or one of its groups'.
    pub fn holds(&self, id: VersionId) -> bool {
        self.version == id || self.groups.iter().any(|&(g, _)| g == id)
    }
}

/// The kept versions of an item, newest first, and its retention.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// What is kept.
    pub retention: Retention,
    /// The replaced versions listed, newest first.
    pub entries: Vec<Entry>,
}

/// Why history could not be kept, listed or read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryError {
    /// The item lists no kept version of this id (never kept, or released).
    VersionNotFound {
        /// The item's key, as text.
        key: String,
        /// The version asked for.
        version: VersionId,
    },
    /// A version record does not read back (damaged, or not this
    /// version's parent).
    RecordInvalid {
        /// What is wrong.
        reason: &'static str,
    },
    /// The replaced parent is too large to keep in a record.
    RecordTooLarge {
        /// The record's size in bytes.
        size: usize,
    },
    /// A retention keeps more than [`MAX_HISTORY`] versions.
    KeepTooLarge {
        /// The number asked for.
        keep: u32,
    },
    /// A note longer than [`MAX_NOTE_BYTES`].
    NoteTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The stored history cannot be read.
    Manifest(ManifestError),
}

impl HistoryError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::VersionNotFound { .. } => Code::VersionNotFound,
            Self::RecordInvalid { .. } => Code::HistoryRecordInvalid,
            Self::RecordTooLarge { .. } => Code::HistoryRecordTooLarge,
            Self::KeepTooLarge { .. } | Self::NoteTooLong { .. } => Code::OptionsInvalid,
            Self::Manifest(e) => e.code(),
        }
    }
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::VersionNotFound { key, version } => {
                write!(f, "{key} keeps no version {version}")
            }
            Self::RecordInvalid { reason } => write!(f, "version record is damaged: {reason}"),
            Self::RecordTooLarge { size } => write!(
                f,
                "the replaced item's parent is too large to keep ({size} bytes in a record \
                 over {MAX_ITEM_BYTES})"
            ),
            Self::KeepTooLarge { keep } => {
                write!(
                    f,
                    "history keeps at most {MAX_HISTORY} versions, not {keep}"
                )
            }
            Self::NoteTooLong { len } => {
                write!(f, "a note is at most {MAX_NOTE_BYTES} bytes, not {len}")
            }
            Self::Manifest(e) => write!(f, "stored history cannot be read: {e}"),
        }
    }
}

impl From<ManifestError> for HistoryError {
    fn from(error: ManifestError) -> Self {
        Self::Manifest(error)
    }
}

fn manifest_map(parent: &Item) -> Option<&BTreeMap<String, AttributeValue>> {
    match parent.get(MANIFEST_ATTRIBUTE) {
        Some(AttributeValue::M(map)) => Some(map),
        _ => None,
    }
}

fn invalid(field: &'static str) -> HistoryError {
    HistoryError::Manifest(ManifestError::InvalidField { field })
}

fn number(value: &AttributeValue, field: &'static str) -> Result<u64, HistoryError> {
    match value {
        AttributeValue::N(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            n.parse().map_err(|_| invalid(field))
        }
        _ => Err(invalid(field)),
    }
}

fn note_value(value: Option<&AttributeValue>) -> Result<Option<String>, HistoryError> {
    match value {
        None => Ok(None),
        Some(AttributeValue::S(s)) if s.len() <= MAX_NOTE_BYTES => Ok(Some(s.clone())),
        Some(_) => Err(invalid(NOTE_FIELD)),
    }
}

/// The note the writer of a stored parent's version left, checked.
pub fn note_of(parent: &Item) -> Result<Option<String>, HistoryError> {
    note_value(manifest_map(parent).and_then(|m| m.get(NOTE_FIELD)))
}

impl History {
    /// The history a stored parent lists (`None`: it keeps none), every
    /// field checked: the parent may have been written by anyone.
    pub fn of_parent(parent: &Item) -> Result<Option<Self>, HistoryError> {
        match manifest_map(parent).and_then(|m| m.get(HISTORY_FIELD)) {
            None => Ok(None),
            Some(value) => Self::from_value(value).map(Some),
        }
    }

    /// Reads the value of the manifest field [`HISTORY_FIELD`].
    pub fn from_value(value: &AttributeValue) -> Result<Self, HistoryError> {
        let field = HISTORY_FIELD;
        let AttributeValue::M(map) = value else {
            return Err(invalid(field));
        };
        let keep = match map.get("k") {
            Some(value) => u32::try_from(number(value, field)?).map_err(|_| invalid(field))?,
            None => return Err(invalid(field)),
        };
        let max_age_ms = map.get("a").map(|v| number(v, field)).transpose()?;
        let retention = Retention { keep, max_age_ms };
        retention.check().map_err(|_| invalid(field))?;
        let list = match map.get("l") {
            Some(AttributeValue::L(list)) if list.len() <= MAX_HISTORY => list,
            _ => return Err(invalid(field)),
        };
        let mut entries = Vec::with_capacity(list.len());
        for value in list {
            let AttributeValue::M(entry) = value else {
                return Err(invalid(field));
            };
            let version = match entry.get("v") {
                Some(AttributeValue::S(text)) => {
                    VersionId::parse(text).map_err(|_| invalid(field))?
                }
                _ => return Err(invalid(field)),
            };
            let get = |name| entry.get(name).ok_or(invalid(field));
            let chunk_count = u32::try_from(number(get("n")?, field)?)
                .ok()
                .filter(|&n| n < RECORD_SEQ)
                .ok_or(invalid(field))?;
            let groups = match entry.get("g") {
                None => Vec::new(),
                Some(AttributeValue::L(groups)) if groups.len() <= MAX_GROUPS => groups
                    .iter()
                    .map(|group| group_ref(group).ok_or(invalid(field)))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(invalid(field)),
            };
            entries.push(Entry {
                version,
                replaced_ms: number(get("t")?, field)?,
                chunk_count,
                bytes: number(get("s")?, field)?,
                note: note_value(entry.get(NOTE_FIELD))?,
                groups,
            });
        }
        Ok(Self { retention, entries })
    }

    /// The value of the manifest field [`HISTORY_FIELD`].
    pub fn to_value(&self) -> AttributeValue {
        let n = |n: u64| AttributeValue::N(n.to_string());
        let mut map = BTreeMap::new();
        map.insert("k".to_string(), n(u64::from(self.retention.keep)));
        if let Some(age) = self.retention.max_age_ms {
            map.insert("a".to_string(), n(age));
        }
        let list = self
            .entries
            .iter()
            .map(|entry| {
                let mut m = BTreeMap::new();
                m.insert("v".to_string(), AttributeValue::S(entry.version.to_text()));
                m.insert("t".to_string(), n(entry.replaced_ms));
                m.insert("n".to_string(), n(u64::from(entry.chunk_count)));
                m.insert("s".to_string(), n(entry.bytes));
                if let Some(note) = &entry.note {
                    m.insert(NOTE_FIELD.to_string(), AttributeValue::S(note.clone()));
                }
                if !entry.groups.is_empty() {
                    let groups = entry.groups.iter().map(|&(id, count)| {
                        let mut g = BTreeMap::new();
                        g.insert("v".to_string(), AttributeValue::S(id.to_text()));
                        g.insert("n".to_string(), n(u64::from(count)));
                        AttributeValue::M(g)
                    });
                    m.insert("g".to_string(), AttributeValue::L(groups.collect()));
                }
                AttributeValue::M(m)
            })
            .collect();
        map.insert("l".to_string(), AttributeValue::L(list));
        AttributeValue::M(map)
    }

    /// The entries kept at `now_ms` (the store's time), newest first.
    pub fn kept(&self, now_ms: u64) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .enumerate()
            .filter(move |(i, e)| self.retention.keeps(*i, e.replaced_ms, now_ms))
            .map(|(_, e)| e)
    }

    /// The entry of `version` when it is kept at `now_ms`.
    pub fn find(&self, version: VersionId, now_ms: u64) -> Option<&Entry> {
        self.kept(now_ms).find(|e| e.version == version)
    }
}

/// A history entry's group: `{v: id, n: chunk count}`.
fn group_ref(value: &AttributeValue) -> Option<(VersionId, u32)> {
    let AttributeValue::M(map) = value else {
        return None;
    };
    let id = match map.get("v")? {
        AttributeValue::S(text) => VersionId::parse(text).ok()?,
        _ => return None,
    };
    let count = match map.get("n")? {
        AttributeValue::N(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            n.parse::<u32>().ok().filter(|&n| n > 0 && n < RECORD_SEQ)?
        }
        _ => return None,
    };
    Some((id, count))
}

/// The key of `version`'s record under the parent `parent`.
pub fn record_key(table: &Table, parent: &Item, version: VersionId) -> Option<Item> {
    chunk_key(&table.key, &table.layout, parent, version, RECORD_SEQ).ok()
}

/// The record keeping `parent` as version `version`, with the TTL of the
/// table copied from it (so it expires with the item).
pub fn record_item(table: &Table, parent: &Item, version: VersionId) -> Result<Item, HistoryError> {
    let mut record = record_key(table, parent, version).ok_or(HistoryError::RecordInvalid {
        reason: "the parent's key makes no chunk key",
    })?;
    let data = encode_item(parent).to_vec();
    let digest = chunk_digest(&data, &version.to_text(), RECORD_SEQ);
    record.insert(CHUNK_DATA_ATTRIBUTE.to_string(), AttributeValue::B(data));
    let digest = digest.to_be_bytes().to_vec();
    // A record anchors itself (FORMAT section 6, "Anchors").
    record.insert(
        ANCHOR_ATTRIBUTE.to_string(),
        AttributeValue::B(digest.clone()),
    );
    record.insert(
        CHUNK_DIGEST_ATTRIBUTE.to_string(),
        AttributeValue::B(digest),
    );
    if let Some(ttl) = &table.ttl
        && let Some(value @ AttributeValue::N(_)) = parent.get(ttl)
    {
        record.insert(ttl.clone(), value.clone());
    }
    match item_size(&record) {
        size if size > MAX_ITEM_BYTES => Err(HistoryError::RecordTooLarge { size }),
        _ => Ok(record),
    }
}

/// The parent a record keeps, checked: its digest, that it decodes, that
/// its key is `key`'s, and that it is `version` (a virtual item of that
/// version, or an item that was stored whole).
pub fn read_record(
    table: &Table,
    key: &Item,
    version: VersionId,
    record: &Item,
) -> Result<Item, HistoryError> {
    let bad = |reason| HistoryError::RecordInvalid { reason };
    let (Some(AttributeValue::B(data)), Some(AttributeValue::B(digest))) = (
        record.get(CHUNK_DATA_ATTRIBUTE),
        record.get(CHUNK_DIGEST_ATTRIBUTE),
    ) else {
        return Err(bad("no binary _d and _h"));
    };
    let expected = chunk_digest(data, &version.to_text(), RECORD_SEQ).to_be_bytes();
    if digest.as_slice() != expected {
        return Err(bad("its digest does not match"));
    }
    let parent = decode_attributes(data).map_err(|_| bad("it does not decode"))?;
    let same_key = table
        .key
        .attributes()
        .all(|k| parent.contains_key(&k.name) && parent.get(&k.name) == key.get(&k.name));
    if !same_key {
        return Err(bad("it keeps another item"));
    }
    match stored_version(&parent) {
        Ok(Some(v)) if v == version => Ok(parent),
        Ok(None) => Ok(parent),
        Ok(Some(_)) => Err(bad("it keeps another version")),
        Err(_) => Err(bad("its manifest cannot be read")),
    }
}

/// What a commit with history does besides writing the new version.
#[derive(Clone, Debug, PartialEq)]
pub struct Kept {
    /// The record of the version replaced, written before the commit
    /// (`None`: nothing was stored, or it is released at once).
    pub record: Option<Item>,
    /// Deletes of what the commit releases (chunks and records), sent after
    /// it: the replaced version's chunks when it is not kept, and versions
    /// retention no longer keeps.
    pub releases: Vec<BatchWrite>,
    /// The version replaced, as listed (`None`: nothing was stored).
    pub replaced: Option<VersionId>,
}

/// The retention a write over `stored` keeps, with the versions `stored`
/// lists (`None`: the write keeps no history): the write's own retention,
/// else the stored item's.
fn governing(
    stored: Option<&Item>,
    retention: Option<Retention>,
) -> Result<Option<(Retention, Vec<Entry>)>, HistoryError> {
    let history = match stored {
        Some(stored) => History::of_parent(stored)?,
        None => None,
    };
    let retention = match (retention, &history) {
        (Some(r), _) => r,
        (None, Some(h)) => h.retention,
        (None, None) => Retention::default(),
    };
    retention.check()?;
    let listed = history.map(|h| h.entries).unwrap_or_default();
    Ok((retention.is_on() || !listed.is_empty()).then_some((retention, listed)))
}

/// True when a write over `stored` with `retention` (`None`: the stored
/// item's) keeps history, so its commit must pin the parent it replaces.
pub fn keeps_history(
    stored: Option<&Item>,
    retention: Option<Retention>,
) -> Result<bool, HistoryError> {
    Ok(governing(stored, retention)?.is_some())
}

/// Plans a commit with history: whether it keeps history (`None`: it does
/// not, and the write is as any other), the new list written into the
/// manifest of `parent` (the new version's parent; with `note`), and the
/// record and deletes around the commit. `stored` is the parent the
/// commit replaces (as read), `retention` the write's own (`None`: the
/// stored item's), `now_ms` the store's time and `fresh` the id an item
/// stored whole gets when it is kept.
pub fn plan_kept(
    table: &Table,
    stored: Option<&Item>,
    retention: Option<Retention>,
    now_ms: u64,
    fresh: VersionId,
    parent: &mut Item,
) -> Result<Option<Kept>, HistoryError> {
    let Some((retention, listed)) = governing(stored, retention)? else {
        return Ok(None);
    };
    let mut entries = Vec::with_capacity(listed.len() + 1);
    let replaced = match stored {
        Some(stored) => {
            let manifest = match stored.get(MANIFEST_ATTRIBUTE) {
                Some(value) => Some(Manifest::from_value(value)?),
                None => None,
            };
            let entry = Entry {
                version: manifest.as_ref().map_or(fresh, |m| m.version),
                replaced_ms: now_ms,
                chunk_count: manifest.as_ref().map_or(0, |m| m.chunk_count),
                bytes: item_size(stored) as u64
                    + manifest.as_ref().map_or(0, Manifest::total_raw_len),
                note: note_of(stored)?,
                groups: manifest.as_ref().map_or(Vec::new(), |m| {
                    m.groups
                        .iter()
                        .map(|g| (g.version, g.chunk_count))
                        .collect()
                }),
            };
            entries.push(entry.clone());
            Some((stored, entry))
        }
        None => None,
    };
    entries.extend(listed);
    let (kept, released): (Vec<_>, Vec<_>) = entries
        .into_iter()
        .enumerate()
        .partition(|(i, e)| retention.keeps(*i, e.replaced_ms, now_ms));
    let kept: Vec<Entry> = kept.into_iter().map(|(_, e)| e).collect();
    let record = match &replaced {
        Some((stored, entry)) if kept.first() == Some(entry) => {
            Some(record_item(table, stored, entry.version)?)
        }
        _ => None,
    };
    let mut deletes = Vec::new();
    // A list someone else wrote may claim any chunk counts: past the bound
    // every operation that builds chunk keys keeps, the released versions
    // (no longer listed) are left to gc, which judges chunks a page at a
    // time.
    let keys: u64 = released
        .iter()
        .map(|(_, e)| {
            let groups: u64 = e.groups.iter().map(|&(_, n)| u64::from(n)).sum();
            u64::from(e.chunk_count) + 1 + groups
        })
        .sum();
    let released = match keys > u64::from(DEFAULT_MAX_CHUNK_KEYS) {
        true => Vec::new(),
        false => released,
    };
    // A frame a released version shares with one still kept, or with the
    // new version (an update reuses frames), stays.
    let current = parent
        .get(MANIFEST_ATTRIBUTE)
        .and_then(|v| Manifest::from_value(v).ok());
    let held = |id: VersionId| {
        kept.iter().any(|e| e.holds(id))
            || current
                .as_ref()
                .is_some_and(|m| m.frames().any(|f| f.version == id))
    };
    for (_, entry) in &released {
        // Its record goes; its own chunks too, unless a later version
        // reuses its frame.
        let chunks = if held(entry.version) {
            0
        } else {
            entry.chunk_count
        };
        let own = (0..chunks)
            .chain([RECORD_SEQ])
            .map(|seq| (entry.version, seq));
        let groups = entry
            .groups
            .iter()
            .filter(|&&(id, _)| !held(id))
            .flat_map(|&(id, count)| (0..count).map(move |seq| (id, seq)));
        for (id, seq) in own.chain(groups) {
            if let Ok(key) = chunk_key(&table.key, &table.layout, parent, id, seq) {
                deletes.push((table.chunk_table.clone(), WriteRequest::Delete(key)));
            }
        }
    }
    if let Some(AttributeValue::M(manifest)) = parent.get_mut(MANIFEST_ATTRIBUTE) {
        let history = History {
            retention,
            entries: kept,
        };
        if retention.is_on() || !history.entries.is_empty() {
            manifest.insert(HISTORY_FIELD.to_string(), history.to_value());
        }
    }
    Ok(Some(Kept {
        record,
        releases: pack_batch_writes(deletes),
        replaced: replaced.map(|(_, e)| e.version),
    }))
}

/// Puts `note` on the manifest of `parent` (a split's parent).
pub fn set_note(parent: &mut Item, note: &str) -> Result<(), HistoryError> {
    if note.len() > MAX_NOTE_BYTES {
        return Err(HistoryError::NoteTooLong { len: note.len() });
    }
    if let Some(AttributeValue::M(manifest)) = parent.get_mut(MANIFEST_ATTRIBUTE) {
        manifest.insert(NOTE_FIELD.to_string(), AttributeValue::S(note.to_string()));
    }
    Ok(())
}

/// One version of an item, as [`listing`] lists it: the current one, or
/// one its history keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// Its id (`None`: the current item is stored whole, with no version).
    pub version: Option<VersionId>,
    /// True for the current version.
    pub current: bool,
    /// When its write began (ms since the epoch, the store's clock), from
    /// its id.
    pub written_ms: Option<u64>,
    /// When a commit replaced it (ms since the epoch, the store's clock);
    /// `None` for the current version.
    pub replaced_ms: Option<u64>,
    /// Its size: the parent's bytes and the payload's raw length.
    pub bytes: u64,
    /// Its chunk items.
    pub chunk_count: u32,
    /// Its writer's note.
    pub note: Option<String>,
}

/// What an item keeps: its retention (`None`: history is off) and its
/// versions, the current one first, then the kept ones, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listing {
    /// Its retention.
    pub retention: Option<Retention>,
    /// Its versions.
    pub versions: Vec<Listed>,
}

/// The versions the stored parent `parent` has at `now_ms`, every field
/// checked.
pub fn listing(parent: &Item, now_ms: u64) -> Result<Listing, HistoryError> {
    let manifest = parent
        .get(MANIFEST_ATTRIBUTE)
        .map(Manifest::from_value)
        .transpose()?;
    let history = History::of_parent(parent)?;
    let current = Listed {
        version: manifest.as_ref().map(|m| m.version),
        current: true,
        written_ms: manifest.as_ref().map(|m| m.version.unix_ms()),
        replaced_ms: None,
        bytes: item_size(parent) as u64 + manifest.as_ref().map_or(0, Manifest::total_raw_len),
        chunk_count: manifest
            .as_ref()
            .map_or(0, |m| u32::try_from(m.total_chunks()).unwrap_or(u32::MAX)),
        note: note_of(parent)?,
    };
    let mut versions = Vec::from([current]);
    versions.extend(history.iter().flat_map(|h| h.kept(now_ms)).map(|e| {
        Listed {
            version: Some(e.version),
            current: false,
            written_ms: Some(e.version.unix_ms()),
            replaced_ms: Some(e.replaced_ms),
            bytes: e.bytes,
            chunk_count: e
                .groups
                .iter()
                .fold(e.chunk_count, |sum, &(_, n)| sum.saturating_add(n)),
            note: e.note.clone(),
        }
    }));
    Ok(Listing {
        retention: history.map(|h| h.retention),
        versions,
    })
}
