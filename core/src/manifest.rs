//! The manifest: what a parent item records about its virtual item, in one
//! map attribute (`_ds`), so any reader can find, check and decode the chunks
//! without configuration. Specified in `docs/FORMAT.md`, "Manifest".

use crate::code::Code;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::codec::{Codec, FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES};
use crate::layout::MAX_CHUNKS;
use crate::object::{MAX_OBJECT_KEY_BYTES, ObjectRef};
use crate::size::MAX_ITEM_BYTES;
use crate::value::{AttributeValue, Item};
use crate::version::VersionId;
use crate::write::split::MIN_CHUNK_DATA_BYTES;

/// The parent attribute holding the manifest. Items may not use this name.
pub const MANIFEST_ATTRIBUTE: &str = "_ds";
/// The chunk attribute holding a chunk's bytes.
pub const CHUNK_DATA_ATTRIBUTE: &str = "_d";
/// The chunk attribute holding a chunk's digest.
pub const CHUNK_DIGEST_ATTRIBUTE: &str = "_h";
/// The attribute marking an anchor ([`crate::layout::is_anchor`]): a copy of
/// its `_h`, the key of the sparse index `gc` reads instead of every chunk.
pub const ANCHOR_ATTRIBUTE: &str = "_da";
/// Attribute names the stored format uses, which no item may use: a user's
/// `_ds` would be read as a manifest, and in the item-collection layout an
/// item holding `_d` and `_h` would look like a chunk (hidden by listings,
/// deleted by `gc`), and one holding `_da` would enter the anchors index.
pub const RESERVED_ATTRIBUTES: [&str; 4] = [
    MANIFEST_ATTRIBUTE,
    CHUNK_DATA_ATTRIBUTE,
    CHUNK_DIGEST_ATTRIBUTE,
    ANCHOR_ATTRIBUTE,
];

/// The first reserved name among `names`, if any.
pub fn reserved_attribute<'n>(mut names: impl Iterator<Item = &'n str>) -> Option<&'static str> {
    names.find_map(|name| RESERVED_ATTRIBUTES.iter().copied().find(|r| *r == name))
}

/// The manifest field an in-place update sets ([`Manifest::updated`]).
pub const UPDATED_FIELD: &str = "u";

/// The newest manifest format this crate writes and reads: 3 when the
/// frame is an S3 object (`o`), which a reader of an older format would
/// take for a frame with no chunks; 2 when the manifest lists groups
/// (`g`), which a reader of format 1 would miss; 1 otherwise, so every
/// reader reads what needs no more.
pub const MANIFEST_VERSION: u8 = 3;

/// A virtual item's manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The write attempt that produced the chunks.
    pub version: VersionId,
    /// `table` or `collection` (see [`crate::Layout::name`]).
    pub layout: String,
    /// The codec of the stored frame.
    pub codec: Codec,
    /// How many chunks; 0 when the frame is inline.
    pub chunk_count: u32,
    /// Frame bytes in every chunk but the last.
    pub chunk_bytes: u32,
    /// Length of the stored frame.
    pub stored_len: u64,
    /// Length of the raw value stream inside the frame.
    pub raw_len: u64,
    /// XXH3-64 of the raw value stream.
    pub digest: u64,
    /// Names of the attributes moved off the parent (informative: stored as a
    /// string set, whose order DynamoDB does not keep).
    pub spilled: Vec<String>,
    /// The frame itself when small enough to live on the parent.
    pub inline: Option<Vec<u8>>,
    /// The id of the last update that changed this version's parent
    /// attributes in place (`None` until one does): a commit conditional
    /// on the parent pins it too, so an update is never silently undone by
    /// a write that read the parent before it.
    pub updated: Option<VersionId>,
    /// Further frames of spilled attributes, each stored in its own chunks
    /// under its own id (`_ds.g`): a large attribute is its own group, so
    /// an update that changes another attribute reuses its chunks. Each is
    /// a manifest of one frame: `version` is the group's id, `layout` the
    /// parent's, `spilled` the exact names it holds, chunked (never
    /// inline), no `updated` and no groups. Empty for a manifest of one
    /// frame (format 1).
    pub groups: Vec<Manifest>,
    /// The S3 object holding the frame (`_ds.o`), when it is neither
    /// inline nor chunked: `chunk_count` and `chunk_bytes` are 0, and
    /// there are no groups (format 3).
    pub object: Option<ObjectRef>,
}

/// The most groups a manifest may list besides its own frame.
pub const MAX_GROUPS: usize = 64;

/// Why a parent's manifest could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest attribute is not a map.
    NotAMap,
    /// A field is absent.
    MissingField {
        /// The field.
        field: &'static str,
    },
    /// A field has the wrong type or an impossible value.
    InvalidField {
        /// The field.
        field: &'static str,
    },
    /// A manifest format version this crate does not read.
    UnsupportedVersion {
        /// The version found.
        got: String,
    },
}

impl ManifestError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::NotAMap | Self::MissingField { .. } | Self::InvalidField { .. } => {
                Code::ManifestInvalid
            }
            Self::UnsupportedVersion { .. } => Code::ManifestUnsupportedVersion,
        }
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAMap => write!(f, "manifest attribute {MANIFEST_ATTRIBUTE} is not a map"),
            Self::MissingField { field } => write!(f, "manifest field {field} is missing"),
            Self::InvalidField { field } => write!(f, "manifest field {field} is invalid"),
            Self::UnsupportedVersion { got } => {
                write!(
                    f,
                    "manifest version {got}, this build reads 1 to {MANIFEST_VERSION}"
                )
            }
        }
    }
}

fn number(n: impl ToString) -> AttributeValue {
    AttributeValue::N(n.to_string())
}

/// The version a stored parent carries: `None` for an item stored whole
/// (no manifest), an error for a manifest that cannot be read. The one
/// answer to "is this parent of version V" for every protocol: a commit
/// telling its own parent from another writer's, a read telling a moved
/// parent from a lost chunk, `gc` telling referenced chunks from orphans.
/// No size limit applies: only the version is read.
pub fn stored_version(parent: &Item) -> Result<Option<VersionId>, ManifestError> {
    parent
        .get(MANIFEST_ATTRIBUTE)
        .map(|value| Manifest::from_value(value).map(|m| m.version))
        .transpose()
}

impl Manifest {
    /// The manifest as the value of [`MANIFEST_ATTRIBUTE`].
    pub fn to_value(&self) -> AttributeValue {
        let mut map = BTreeMap::new();
        let mut put = |k: &str, v| {
            map.insert(k.to_string(), v);
        };
        let format = match (&self.object, self.groups.is_empty()) {
            (Some(_), _) => 3,
            (None, true) => 1,
            (None, false) => 2,
        };
        put("f", number(format));
        put("l", AttributeValue::S(self.layout.clone()));
        self.frame_fields(&mut map);
        let mut put = |k: &str, v| {
            map.insert(k.to_string(), v);
        };
        if !self.groups.is_empty() {
            let groups = self.groups.iter().map(|g| {
                let mut fields = BTreeMap::new();
                g.frame_fields(&mut fields);
                AttributeValue::M(fields)
            });
            put("g", AttributeValue::L(groups.collect()));
        }
        if let Some(frame) = &self.inline {
            put("p", AttributeValue::B(frame.clone()));
        }
        if let Some(object) = &self.object {
            let mut fields = BTreeMap::new();
            fields.insert("b".to_string(), AttributeValue::S(object.bucket.clone()));
            fields.insert("k".to_string(), AttributeValue::S(object.key.clone()));
            fields.insert("e".to_string(), AttributeValue::S(object.etag.clone()));
            put("o", AttributeValue::M(fields));
        }
        if let Some(updated) = self.updated {
            put(UPDATED_FIELD, AttributeValue::S(updated.to_text()));
        }
        AttributeValue::M(map)
    }

    /// The fields describing one frame, a manifest's own or a group's.
    fn frame_fields(&self, map: &mut BTreeMap<String, AttributeValue>) {
        let mut put = |k: &str, v| {
            map.insert(k.to_string(), v);
        };
        put("v", AttributeValue::S(self.version.to_text()));
        put("c", AttributeValue::S(self.codec.name().to_string()));
        put("n", number(self.chunk_count));
        put("k", number(self.chunk_bytes));
        put("s", number(self.stored_len));
        put("r", number(self.raw_len));
        put("h", AttributeValue::B(self.digest.to_be_bytes().to_vec()));
        if !self.spilled.is_empty() {
            put("a", AttributeValue::Ss(self.spilled.clone()));
        }
    }

    /// Every frame: this manifest's own, then its groups'. Each frame's
    /// chunks are `0..chunk_count` under its `version`.
    pub fn frames(&self) -> impl Iterator<Item = &Manifest> {
        core::iter::once(self).chain(&self.groups)
    }

    /// The frame holding attribute `name`, alone (no groups): the group
    /// that lists it, else this manifest's own frame when it lists it or
    /// lists nothing (a writer before names were recorded). `None` when
    /// no frame can hold it.
    pub fn frame_holding(&self, name: &str) -> Option<Manifest> {
        let lists = |f: &Manifest| f.spilled.iter().any(|s| s == name);
        if let Some(group) = self.groups.iter().find(|g| lists(g)) {
            return Some(group.clone());
        }
        (self.spilled.is_empty() || lists(self)).then(|| Manifest {
            groups: Vec::new(),
            ..self.clone()
        })
    }

    /// The frame of chunk `seq` counted across every frame (its own first,
    /// then its groups'), and the chunk's number within that frame.
    pub fn frame_chunk(&self, mut seq: u32) -> Option<(&Manifest, u32)> {
        for frame in self.frames() {
            if seq < frame.chunk_count {
                return Some((frame, seq));
            }
            seq -= frame.chunk_count;
        }
        None
    }

    /// Stored bytes of every chunked frame.
    pub fn total_stored_len(&self) -> u64 {
        self.frames()
            .fold(0u64, |sum, f| sum.saturating_add(f.stored_len))
    }

    /// True when a frame lists attribute `name` as spilled.
    pub fn spills(&self, name: &str) -> bool {
        self.frames().any(|f| f.spilled.iter().any(|s| s == name))
    }

    /// The spilled attributes of every frame, in ascending order.
    pub fn all_spilled(&self) -> Vec<String> {
        let mut names: Vec<String> = self.frames().flat_map(|f| f.spilled.clone()).collect();
        names.sort_unstable();
        names
    }

    /// Chunks of every frame.
    pub fn total_chunks(&self) -> u64 {
        self.frames().map(|f| u64::from(f.chunk_count)).sum()
    }

    /// Raw bytes of every frame: what a whole read decodes.
    pub fn total_raw_len(&self) -> u64 {
        self.frames()
            .fold(0u64, |sum, f| sum.saturating_add(f.raw_len))
    }

    /// Reads a manifest from the value of [`MANIFEST_ATTRIBUTE`], checking
    /// every field (the parent may have been written by anyone).
    pub fn from_value(value: &AttributeValue) -> Result<Self, ManifestError> {
        let AttributeValue::M(map) = value else {
            return Err(ManifestError::NotAMap);
        };
        let invalid = |field| ManifestError::InvalidField { field };
        let format = match map.get("f") {
            None => return Err(ManifestError::MissingField { field: "f" }),
            Some(AttributeValue::N(n)) if n == "1" => 1,
            Some(AttributeValue::N(n)) if n == "2" => 2,
            Some(AttributeValue::N(n)) if n == "3" => 3,
            Some(AttributeValue::N(n)) => {
                return Err(ManifestError::UnsupportedVersion { got: n.clone() });
            }
            Some(_) => return Err(invalid("f")),
        };
        let layout = match map.get("l") {
            None => return Err(ManifestError::MissingField { field: "l" }),
            Some(AttributeValue::S(l)) if l == "table" || l == "collection" => l.clone(),
            Some(_) => return Err(invalid("l")),
        };
        let inline = match map.get("p") {
            None => None,
            Some(AttributeValue::B(frame)) => Some(frame.clone()),
            Some(_) => return Err(invalid("p")),
        };
        let updated = match map.get(UPDATED_FIELD) {
            None => None,
            Some(AttributeValue::S(id)) => Some(VersionId::parse(id).map_err(|_| invalid("u"))?),
            Some(_) => return Err(invalid("u")),
        };
        let object = match (format, map.get("o")) {
            (3, Some(AttributeValue::M(fields))) => Some(object_ref(fields).ok_or(invalid("o"))?),
            (3, _) => return Err(invalid("o")),
            // Formats 1 and 2 have no objects: an `o` there is ignored.
            _ => None,
        };
        let in_object = object.is_some();
        let mut manifest = Self::frame(map, layout.clone(), inline, in_object)?;
        manifest.updated = updated;
        manifest.object = object;
        // Format 1 has no groups: a `g` there is an unknown field, ignored
        // as a reader of format 1 ignores it. Format 2 has at least one.
        if format == 2 {
            let groups = match map.get("g") {
                Some(AttributeValue::L(groups)) if !groups.is_empty() => groups,
                _ => return Err(invalid("g")),
            };
            if groups.len() > MAX_GROUPS || manifest.inline.is_some() {
                return Err(invalid("g"));
            }
            for group in groups {
                let AttributeValue::M(fields) = group else {
                    return Err(invalid("g"));
                };
                let group = Self::frame(fields, layout.clone(), None, false)?;
                // A group holds named attributes, and its own chunks.
                let clash = manifest.frames().any(|f| f.version == group.version);
                if group.spilled.is_empty() || clash {
                    return Err(invalid("g"));
                }
                manifest.groups.push(group);
            }
        }
        Ok(manifest)
    }

    /// One frame's fields (`v`, `c`, `n`, `k`, `s`, `r`, `h`, `a`) read
    /// from `map` and checked, with the frame inline, in an S3 object
    /// (`in_object`), or chunked.
    fn frame(
        map: &BTreeMap<String, AttributeValue>,
        layout: String,
        inline: Option<Vec<u8>>,
        in_object: bool,
    ) -> Result<Self, ManifestError> {
        let get = |field: &'static str| map.get(field).ok_or(ManifestError::MissingField { field });
        let invalid = |field| ManifestError::InvalidField { field };
        let text = |field| match get(field)? {
            AttributeValue::S(s) => Ok(s.as_str()),
            _ => Err(invalid(field)),
        };
        let int = |field| match get(field)? {
            AttributeValue::N(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse::<u64>().map_err(|_| invalid(field))
            }
            _ => Err(invalid(field)),
        };
        let version = VersionId::parse(text("v")?).map_err(|_| invalid("v"))?;
        let codec = Codec::from_name(text("c")?).ok_or(invalid("c"))?;
        let digest = match get("h")? {
            AttributeValue::B(b) if b.len() == 8 => {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(b);
                u64::from_be_bytes(bytes)
            }
            _ => return Err(invalid("h")),
        };
        let spilled = match map.get("a") {
            None => Vec::new(),
            Some(AttributeValue::Ss(names)) => names.clone(),
            Some(_) => return Err(invalid("a")),
        };
        let chunk_count = u32::try_from(int("n")?).map_err(|_| invalid("n"))?;
        let chunk_bytes = u32::try_from(int("k")?).map_err(|_| invalid("k"))?;
        let stored_len = int("s")?;
        let raw_len = int("r")?;
        // Bound everything a reader will do by the raw length, which the
        // reader checks against its own limit: the chunk count (at most
        // 999,999, each at least 1 KB and at most one item), and the stored
        // length (no codec here expands data by more than a sixth).
        if chunk_count > MAX_CHUNKS {
            return Err(invalid("n"));
        }
        if chunk_count > 0
            && !(MIN_CHUNK_DATA_BYTES as u32..=MAX_ITEM_BYTES as u32).contains(&chunk_bytes)
        {
            return Err(invalid("k"));
        }
        let exact = codec != Codec::None || stored_len == max_stored_len(codec, raw_len);
        if !exact || stored_len > max_stored_len(codec, raw_len) {
            return Err(invalid("s"));
        }
        // The chunks must hold exactly the stored frame, with only the last
        // one short; an inline frame has no chunks.
        let consistent = match (&inline, chunk_count) {
            // An object holds the whole frame: no chunks, nothing inline.
            _ if in_object => inline.is_none() && chunk_count == 0 && chunk_bytes == 0,
            (Some(frame), 0) => frame.len() as u64 == stored_len,
            (Some(_), _) => false,
            (None, 0) => false,
            (None, n) => {
                let full = u64::from(n - 1) * u64::from(chunk_bytes);
                stored_len > full && stored_len <= full + u64::from(chunk_bytes)
            }
        };
        if !consistent {
            return Err(invalid("s"));
        }
        Ok(Self {
            version,
            layout,
            codec,
            chunk_count,
            chunk_bytes,
            stored_len,
            raw_len,
            digest,
            spilled,
            inline,
            updated: None,
            groups: Vec::new(),
            object: None,
        })
    }

    /// The chunks holding bytes `range` of the stored frame, as
    /// `(first, last)`, both clamped to the last chunk (an empty range
    /// holds the chunk its start falls in).
    pub fn chunks_holding(&self, range: core::ops::Range<u64>) -> (u32, u32) {
        let size = u64::from(self.chunk_bytes.max(1));
        let last = self.chunk_count.saturating_sub(1);
        let seq = |offset: u64| u32::try_from(offset / size).unwrap_or(u32::MAX).min(last);
        let end = range.end.saturating_sub(1).max(range.start);
        (seq(range.start), seq(end))
    }

    /// The length of chunk `seq`'s bytes (zero beyond the last chunk).
    pub fn chunk_len(&self, seq: u32) -> u64 {
        let start = u64::from(seq) * u64::from(self.chunk_bytes);
        self.stored_len
            .saturating_sub(start)
            .min(u64::from(self.chunk_bytes))
    }
}

/// The largest frame any codec writes for `raw_len` bytes: exactly the raw
/// bytes plus header and trailer when uncompressed; otherwise snappy's bound
/// (`32 + n + n/6`), which exceeds deflate's and zstd's worst cases.
fn max_stored_len(codec: Codec, raw_len: u64) -> u64 {
    let framing = (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64;
    match codec {
        Codec::None => raw_len.saturating_add(framing),
        _ => raw_len
            .saturating_add(raw_len / 6)
            .saturating_add(framing + 64),
    }
}

/// The object a manifest's `o` names, checked: a bucket name of S3's
/// length, a key within S3's limit, and an ETag of at most 256 bytes.
fn object_ref(fields: &BTreeMap<String, AttributeValue>) -> Option<ObjectRef> {
    let text = |name: &str, max: usize| match fields.get(name) {
        Some(AttributeValue::S(s)) if !s.is_empty() && s.len() <= max => Some(s.clone()),
        _ => None,
    };
    Some(ObjectRef {
        bucket: text("b", 63)?,
        key: text("k", MAX_OBJECT_KEY_BYTES)?,
        etag: text("e", 256)?,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A manifest of one chunked frame of `version`.
    pub(crate) fn chunked(version: VersionId) -> Manifest {
        Manifest {
            version,
            layout: "table".into(),
            codec: Codec::None,
            chunk_count: 2,
            chunk_bytes: 100_000,
            stored_len: 150_000,
            raw_len: 150_000 - (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64,
            digest: 7,
            spilled: alloc::vec!["data".into()],
            inline: None,
            updated: None,
            groups: Vec::new(),
            object: None,
        }
    }

    fn in_object() -> Manifest {
        Manifest {
            chunk_count: 0,
            chunk_bytes: 0,
            object: Some(ObjectRef {
                bucket: "bucket".into(),
                key: "p/a#x".into(),
                etag: "\"abc\"".into(),
            }),
            ..chunked(VersionId::new(1_763_683_200_000, 9))
        }
    }

    #[test]
    fn an_object_manifest_round_trips_as_format_3() {
        let manifest = in_object();
        let value = manifest.to_value();
        let AttributeValue::M(map) = &value else {
            panic!("not a map")
        };
        assert_eq!(map["f"], AttributeValue::N("3".into()));
        assert_eq!(Manifest::from_value(&value), Ok(manifest));
    }

    #[test]
    fn object_manifests_that_do_not_add_up_are_refused() {
        let with = |edit: &dyn Fn(&mut BTreeMap<String, AttributeValue>)| {
            let AttributeValue::M(mut map) = in_object().to_value() else {
                unreachable!()
            };
            edit(&mut map);
            Manifest::from_value(&AttributeValue::M(map))
        };
        let invalid = |field| Err(ManifestError::InvalidField { field });
        assert_eq!(with(&|m| drop(m.remove("o"))), invalid("o"));
        // Chunks beside the object: a chunk count with no chunk size.
        assert_eq!(
            with(&|m| drop(m.insert("n".into(), AttributeValue::N("1".into())))),
            invalid("k")
        );
        assert_eq!(
            with(&|m| drop(m.insert("p".into(), AttributeValue::B(alloc::vec![0; 10])))),
            invalid("s")
        );
        let object = |k: &'static str, v: AttributeValue| {
            move |m: &mut BTreeMap<String, AttributeValue>| {
                if let Some(AttributeValue::M(o)) = m.get_mut("o") {
                    o.insert(k.into(), v.clone());
                }
            }
        };
        let long_key = AttributeValue::S("k".repeat(MAX_OBJECT_KEY_BYTES + 1));
        assert_eq!(with(&object("k", long_key)), invalid("o"));
        assert_eq!(
            with(&object("b", AttributeValue::S(String::new()))),
            invalid("o")
        );
        assert_eq!(
            with(&object("e", AttributeValue::N("1".into()))),
            invalid("o")
        );
        // An older format ignores `o`, and then has no chunks: refused.
        assert_eq!(
            with(&|m| drop(m.insert("f".into(), AttributeValue::N("1".into())))),
            invalid("s")
        );
    }
}
