//! Where a table's virtual items live, owned: what the protocol machines
//! keep for the whole of an operation.

use alloc::string::String;
use alloc::vec::Vec;

use crate::key::{IndexKey, KeySchema};
use crate::layout::{Layout, parse_chunk_key};
use crate::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, Manifest};
use crate::plan::Target;
use crate::value::Item;

/// A table able to hold virtual items: the parent table, its key schema,
/// and where its chunks go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The parent table's name.
    pub table: String,
    /// The parent table's key schema.
    pub key: KeySchema,
    /// Where chunks live.
    pub layout: Layout,
    /// The table chunks go to (the parent table itself in the
    /// item-collection layout).
    pub chunk_table: String,
    /// The key attributes of the table's secondary indexes: writes keep
    /// them on the parent, so items stay in their indexes.
    pub index_keys: Vec<IndexKey>,
    /// The table's TTL attribute: kept on the parent and copied to every
    /// chunk, so chunks expire with their parent.
    pub ttl: Option<String>,
    /// The anchors index of the table chunks go to, when it has one
    /// ([`crate::layout::ANCHORS_INDEX`], docs/FORMAT.md section 6): `gc`
    /// reads it instead of every chunk, and plans count the write unit each
    /// anchor's entry costs.
    pub anchors: Option<String>,
    /// Where payloads at or above a threshold go in S3, when the table
    /// names a bucket ([`crate::object`]).
    pub objects: Option<crate::object::ObjectStore>,
}

impl Table {
    /// The plan target, refusing stored manifests of more than
    /// `max_raw_bytes` raw payload bytes before a key is built for any of
    /// their chunks.
    pub fn target(&self, max_raw_bytes: u64) -> Target<'_> {
        Target {
            max_raw_bytes,
            anchors_indexed: self.anchors.is_some(),
            ..Target::new(&self.table, &self.chunk_table, &self.key, &self.layout)
        }
    }

    /// The plan target of an operation that builds chunk keys but never
    /// holds the payload (see [`Target::keys_only`]).
    pub fn keys_target(&self) -> Target<'_> {
        Target {
            anchors_indexed: self.anchors.is_some(),
            ..Target::new(&self.table, &self.chunk_table, &self.key, &self.layout).keys_only()
        }
    }

    /// True for an item that is one of this table's chunks: in the
    /// item-collection layout a Query or Scan of the table returns them
    /// beside the items (no item of a user holds both `_d` and `_h`: writes
    /// refuse those names).
    pub fn is_chunk(&self, item: &Item) -> bool {
        item.contains_key(CHUNK_DIGEST_ATTRIBUTE)
            && item.contains_key(CHUNK_DATA_ATTRIBUTE)
            && parse_chunk_key(&self.key, &self.layout, item).is_ok()
    }

    /// The S3 object of the version the stored `parent` holds, when its
    /// manifest names one this table's store owns; `None` for any other
    /// parent (no object, an unreadable manifest, a foreign object: left
    /// alone, never deleted).
    pub fn owned_object(&self, parent: &Item) -> Option<crate::protocol::ObjectKey> {
        let manifest =
            Manifest::from_value(parent.get(crate::manifest::MANIFEST_ATTRIBUTE)?).ok()?;
        let object =
            crate::object::ObjectStore::owned(self.objects.as_ref(), &self.key, parent, &manifest)
                .ok()??;
        Some(crate::protocol::ObjectKey {
            bucket: object.bucket.clone(),
            key: object.key.clone(),
        })
    }

    /// The first attribute `manifest` spilled that this table keeps on the
    /// parent (an index key, or the TTL attribute): an item written before
    /// the index (or TTL) existed, which is not in the index (or never
    /// expires) until it is rewritten.
    pub fn misplaced<'m>(&self, manifest: &'m Manifest) -> Option<&'m str> {
        crate::upload::misplaced(manifest, &self.index_keys, self.ttl.as_deref())
    }
}
