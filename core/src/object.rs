//! Payloads in Amazon S3 behind the parent's manifest (docs/FORMAT.md,
//! "Objects"): where a table's objects go, the one key each version's
//! object may have, and the check that a manifest names exactly that
//! object before anyone reads or deletes it.
//!
//! An object's key is derived, never trusted: `<prefix><parent key>/<version>`,
//! the parent key written as chunk keys write it (escaped, numbers
//! canonical, binary in base64), then percent-encoded but for ASCII
//! letters, digits, `-` and `_` (S3 servers treat `\`, `.` segments and
//! others in their own ways; these pass every one unchanged). A manifest
//! is only honoured when its bucket is the configured one and its key is
//! the one derived from the
//! parent's own key and the manifest's version, so a manifest written by
//! someone else can never make a reader fetch, or a writer or `gc` delete,
//! an object outside the prefix, or another item's.
//!
//! ```
//! use dynaslice_core::object::ObjectStore;
//! use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType, VersionId};
//!
//! let store = ObjectStore::new("media", "items/");
//! let schema = KeySchema::partition("pk", KeyType::S);
//! let mut parent = Item::new();
//! parent.insert("pk".into(), AttributeValue::S("a#b".into()));
//! let version = VersionId::new(1_763_683_200_000, 7);
//! let key = store.key_for(&schema, &parent, version).unwrap();
//! assert_eq!(key, format!("items/a%5C%23b/{version}"));
//! assert_eq!(store.parse_key(&schema, &key), Some((parent, version)));
//! ```

use alloc::string::{String, ToString};
use core::fmt;

use crate::code::Code;
use crate::key::KeySchema;
use crate::layout::{parent_key_text, parse_versioned_key_text};
use crate::manifest::Manifest;
use crate::plan::WriteMode;
use crate::value::Item;
use crate::version::VersionId;

/// The smallest part of a multipart upload but the last (S3's minimum).
pub const MIN_PART_BYTES: usize = 5 << 20;
/// The largest part S3 takes.
pub const MAX_PART_BYTES: usize = 5 << 30;
/// The part size writes use unless told otherwise: large enough that a
/// 200 MiB payload is 25 requests, small enough that four in flight stay
/// within 32 MiB.
pub const DEFAULT_PART_BYTES: usize = 8 << 20;
/// The most parts one upload may have (S3's limit).
pub const MAX_PARTS: u32 = 10_000;
/// The longest object key S3 takes, in UTF-8 bytes.
pub const MAX_OBJECT_KEY_BYTES: usize = 1024;
/// The longest prefix a configuration may give: the rest of the key is
/// the parent's key and the version.
pub const MAX_PREFIX_BYTES: usize = 512;
/// Payloads of at least this many bytes go to S3 by default
/// (docs/FORMAT.md, "Objects", prices the choice): below it a payload is
/// at most three chunks, one batch or one transaction at DynamoDB's
/// latency; above it a chunked write costs over a hundred times the
/// S3 requests' price.
pub const DEFAULT_OFFLOAD_BYTES: u64 = 1 << 20;
/// The bytes a read asks for with each ranged GET of an object.
pub const READ_RANGE_BYTES: u64 = 8 << 20;

/// Where a table's payloads go in S3, and from what size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectStore {
    /// The bucket.
    pub bucket: String,
    /// Every object's key starts with this (may be empty).
    pub prefix: String,
    /// Payloads of at least this many bytes go to S3; smaller ones stay
    /// in chunks or inline.
    pub threshold: u64,
    /// The size of each part of a multipart upload but the last.
    pub part_bytes: usize,
}

/// Where a version's payload lives in S3, as its manifest records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectRef {
    /// The bucket.
    pub bucket: String,
    /// The object's key.
    pub key: String,
    /// The ETag S3 gave it when it was written: reads are conditional on it.
    pub etag: String,
}

/// Why a configuration or a manifest's object is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectError {
    /// The configuration is unusable.
    BadConfig {
        /// Why.
        reason: &'static str,
    },
    /// The item's payload is in S3, but no store (or another bucket) is configured.
    NotConfigured {
        /// The bucket the manifest names.
        bucket: String,
    },
    /// The manifest names an object that is not this version's own.
    Foreign {
        /// The bucket it names.
        bucket: String,
        /// The key it names.
        key: String,
    },
    /// The parent's key and version make a key over S3's limit.
    KeyTooLong {
        /// Its length in bytes.
        size: usize,
    },
    /// The parent's key cannot be written as text.
    ParentKey,
}

impl ObjectError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::BadConfig { .. } => Code::OptionsInvalid,
            Self::NotConfigured { .. } => Code::ObjectStoreNotConfigured,
            Self::Foreign { .. } => Code::ObjectForeign,
            Self::KeyTooLong { .. } => Code::ChunkKeyTooLarge,
            Self::ParentKey => Code::ParentKeyInvalid,
        }
    }
}

impl fmt::Display for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadConfig { reason } => write!(f, "S3 configuration: {reason}"),
            Self::NotConfigured { bucket } => write!(
                f,
                "the item's payload is in S3 bucket {bucket:?}, and that bucket is not \
                 configured (give it with --s3-bucket and its prefix)"
            ),
            Self::Foreign { bucket, key } => write!(
                f,
                "the manifest names S3 object {key:?} in bucket {bucket:?}, which is not this \
                 version's own under the configured prefix: it is neither read nor deleted"
            ),
            Self::KeyTooLong { size } => write!(
                f,
                "the S3 key would be {size} bytes, over S3's {MAX_OBJECT_KEY_BYTES}"
            ),
            Self::ParentKey => f.write_str("the parent's key cannot be written as an S3 key"),
        }
    }
}

impl ObjectStore {
    /// Objects in `bucket` under `prefix`, with the default threshold and
    /// part size.
    pub fn new(bucket: impl Into<String>, prefix: impl Into<String>) -> Self {
        Self {
            bucket: bucket.into(),
            prefix: prefix.into(),
            threshold: DEFAULT_OFFLOAD_BYTES,
            part_bytes: DEFAULT_PART_BYTES,
        }
    }

    /// True when `item`, written whole (not streamed) in `mode`, may go to
    /// this store: it is not written in one transaction (atomic mode keeps
    /// it in DynamoDB; auto mode, which would write chunks that fit one
    /// transaction in one, sends it too: an object's commit is one write
    /// either way) and it is at least the threshold, as DynamoDB sizes it.
    /// Its payload then goes, in one frame, when its value stream's raw
    /// length is at least the threshold too
    /// ([`takes_payload`](Self::takes_payload)).
    ///
    /// `put` decides with it, and so does `estimate`: where an item would
    /// go is decided here only.
    pub fn takes_item(&self, item: &Item, mode: WriteMode) -> bool {
        mode != WriteMode::Atomic && crate::size::item_size(item) as u64 >= self.threshold
    }

    /// True when a stream's payload of `len` bytes (a file's length),
    /// written in `mode`, goes to this store: at least the threshold. A
    /// stream is never written in one transaction (`put` writes a file in
    /// atomic mode as an item, which [`takes_item`](Self::takes_item)
    /// keeps in DynamoDB).
    pub fn takes_stream(&self, len: u64, mode: WriteMode) -> bool {
        mode != WriteMode::Atomic && len >= self.threshold
    }

    /// True when a payload whose raw (uncompressed) length is `raw_len`
    /// goes to this store: at least the threshold, even when it would
    /// compress to fit inline.
    pub fn takes_payload(&self, raw_len: u64) -> bool {
        raw_len >= self.threshold
    }

    /// Refuses a bucket name S3 would refuse (3 to 63 characters of
    /// lowercase letters, digits, `.` and `-`), a prefix over
    /// [`MAX_PREFIX_BYTES`] and a part size S3 would refuse.
    pub fn check(&self) -> Result<(), ObjectError> {
        let bad = |reason| Err(ObjectError::BadConfig { reason });
        let name_ok = (3..=63).contains(&self.bucket.len())
            && self
                .bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if !name_ok {
            return bad("a bucket name is 3 to 63 lowercase letters, digits, '.' and '-'");
        }
        if self.prefix.len() > MAX_PREFIX_BYTES {
            return bad("the prefix is over 512 bytes");
        }
        if !(MIN_PART_BYTES..=MAX_PART_BYTES).contains(&self.part_bytes) {
            return bad("the part size is 5 MiB to 5 GiB");
        }
        Ok(())
    }

    /// The key of `version`'s object for the item whose key attributes
    /// are in `parent`.
    pub fn key_for(
        &self,
        schema: &KeySchema,
        parent: &Item,
        version: VersionId,
    ) -> Result<String, ObjectError> {
        let text = parent_key_text(schema, parent).map_err(|_| ObjectError::ParentKey)?;
        let mut key = String::with_capacity(self.prefix.len() + text.len() + 27);
        key.push_str(&self.prefix);
        for byte in text.bytes() {
            match byte {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => key.push(byte as char),
                _ => {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    key.push('%');
                    key.push(HEX[usize::from(byte >> 4)] as char);
                    key.push(HEX[usize::from(byte & 15)] as char);
                }
            }
        }
        key.push('/');
        key.push_str(&version.to_text());
        if key.len() > MAX_OBJECT_KEY_BYTES {
            return Err(ObjectError::KeyTooLong { size: key.len() });
        }
        Ok(key)
    }

    /// The parent key and version an object key of this store names;
    /// `None` for a key outside the prefix or not of this form.
    pub fn parse_key(&self, schema: &KeySchema, key: &str) -> Option<(Item, VersionId)> {
        let (encoded, version) = key.strip_prefix(self.prefix.as_str())?.rsplit_once('/')?;
        let mut text = alloc::vec::Vec::with_capacity(encoded.len() + 27);
        let mut bytes = encoded.bytes();
        while let Some(byte) = bytes.next() {
            match byte {
                b'%' => {
                    let hex = |b: u8| char::from(b).to_digit(16);
                    let high = hex(bytes.next()?)?;
                    let low = hex(bytes.next()?)?;
                    text.push((high * 16 + low) as u8);
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => text.push(byte),
                _ => return None,
            }
        }
        let mut text = String::from_utf8(text).ok()?;
        text.push('#');
        text.push_str(version);
        let parsed = parse_versioned_key_text(schema, &text)?;
        // One key for one parent and version: refuse any other spelling.
        (self.key_for(schema, &parsed.0, parsed.1).ok()? == key).then_some(parsed)
    }

    /// The object `manifest` (stored on `parent`) names, when it is this
    /// version's own in this store: the configured bucket, and exactly the
    /// key [`ObjectStore::key_for`] derives. `Ok(None)` when the manifest
    /// names no object.
    pub fn owned<'m>(
        store: Option<&Self>,
        schema: &KeySchema,
        parent: &Item,
        manifest: &'m Manifest,
    ) -> Result<Option<&'m ObjectRef>, ObjectError> {
        let Some(object) = &manifest.object else {
            return Ok(None);
        };
        let Some(store) = store.filter(|s| s.bucket == object.bucket) else {
            return Err(ObjectError::NotConfigured {
                bucket: object.bucket.clone(),
            });
        };
        let foreign = || ObjectError::Foreign {
            bucket: object.bucket.clone(),
            key: object.key.clone(),
        };
        let own = store
            .key_for(schema, parent, manifest.version)
            .map_err(|_| foreign())?;
        if own != object.key {
            return Err(foreign());
        }
        Ok(Some(object))
    }
}

impl ObjectRef {
    /// A short description, for messages.
    pub fn describe(&self) -> String {
        let mut text = "s3://".to_string();
        text.push_str(&self.bucket);
        text.push('/');
        text.push_str(&self.key);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AttributeValue;
    use crate::key::KeyType;

    fn parent(pk: &str, sk: &str) -> Item {
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S(pk.into()));
        item.insert("sk".into(), AttributeValue::N(sk.into()));
        item
    }

    #[test]
    fn keys_of_two_parents_never_collide_and_parse_back() {
        let store = ObjectStore::new("bucket", "p/");
        let schema = KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::N);
        let version = VersionId::new(1_763_683_200_000, 1);
        // "a#1" with sort 2 against "a" with sort... : escaping keeps them apart.
        let one = store
            .key_for(&schema, &parent("a#1", "2"), version)
            .unwrap();
        let two = store.key_for(&schema, &parent("a", "12"), version).unwrap();
        assert_ne!(one, two);
        assert_eq!(one, alloc::format!("p/a%5C%231%232/{version}"));
        // Numbers are canonical: 2.0 names the parent 2 does.
        let canonical = store
            .key_for(&schema, &parent("a#1", "2.0"), version)
            .unwrap();
        assert_eq!(canonical, one);
        assert_eq!(
            store.parse_key(&schema, &one),
            Some((parent("a#1", "2"), version))
        );
        assert_eq!(store.parse_key(&schema, "q/a%232/x"), None);
        // Lowercase hex, or a character left unencoded, is not the key.
        let lower = one.replace("%5C", "%5c");
        assert_eq!(store.parse_key(&schema, &lower), None);
        assert_eq!(store.parse_key(&schema, &one.replace("%23", "#")), None);
    }

    #[test]
    fn only_the_versions_own_object_is_owned() {
        let store = ObjectStore::new("bucket", "p/");
        let schema = KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::N);
        let item = parent("a", "1");
        let version = VersionId::new(1_763_683_200_000, 1);
        let mut manifest = crate::manifest::tests::chunked(version);
        manifest.object = Some(ObjectRef {
            bucket: "bucket".into(),
            key: store.key_for(&schema, &item, version).unwrap(),
            etag: "\"e\"".into(),
        });
        assert!(
            ObjectStore::owned(Some(&store), &schema, &item, &manifest)
                .unwrap()
                .is_some()
        );
        // Another item's key, another version's, another bucket, no store.
        let cases: [(Option<&ObjectStore>, &str, &str, Code); 4] = [
            (Some(&store), "bucket", "p/b%231/", Code::ObjectForeign),
            (Some(&store), "bucket", "x/a%231/", Code::ObjectForeign),
            (Some(&store), "other", "", Code::ObjectStoreNotConfigured),
            (None, "bucket", "", Code::ObjectStoreNotConfigured),
        ];
        for (store, bucket, key, code) in cases {
            let mut m = manifest.clone();
            let object = m.object.as_mut().unwrap();
            object.bucket = bucket.into();
            if !key.is_empty() {
                object.key = alloc::format!("{key}{version}");
            }
            let error = ObjectStore::owned(store, &schema, &item, &m).unwrap_err();
            assert_eq!(error.code(), code, "{bucket} {key}");
        }
        let mut other = manifest.clone();
        other.version = VersionId::new(1_763_683_200_000, 2);
        let error = ObjectStore::owned(Some(&store), &schema, &item, &other).unwrap_err();
        assert_eq!(error.code(), Code::ObjectForeign);
    }

    #[test]
    fn configurations_s3_refuses_are_refused() {
        let ok = ObjectStore::new("my-bucket.1", "");
        assert_eq!(ok.check(), Ok(()));
        for bucket in ["ab", "Upper", "under_score", &"a".repeat(64)] {
            assert!(ObjectStore::new(bucket, "").check().is_err(), "{bucket}");
        }
        let long = ObjectStore::new("bucket", "p".repeat(MAX_PREFIX_BYTES + 1));
        assert!(long.check().is_err());
        let small = ObjectStore {
            part_bytes: MIN_PART_BYTES - 1,
            ..ok
        };
        assert!(small.check().is_err());
    }

    #[test]
    fn a_key_over_s3s_limit_is_refused() {
        let store = ObjectStore::new("bucket", "p/");
        let schema = KeySchema::partition("pk", KeyType::S);
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("k".repeat(1000)));
        let error = store
            .key_for(&schema, &item, VersionId::new(1, 1))
            .unwrap_err();
        assert!(matches!(error, ObjectError::KeyTooLong { size } if size > 1024));
    }
}
