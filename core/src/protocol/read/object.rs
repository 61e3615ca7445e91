//! Reading a payload stored as one S3 object: ranged GETs, each only if
//! the object still has the ETag the manifest recorded (`If-Match`), a few
//! ranges ahead. Each range is cut into pieces of [`READ_CHUNK_BYTES`]
//! that the read's decoders take as the chunks of a chunked frame, so the
//! object's bytes pass the same checks as chunks (the frame's header,
//! every length, the digest of the whole) and an attribute streams in
//! bounded memory. An object that is gone or changed sends the read back
//! to the parent, as a missing chunk does.

use alloc::vec::Vec;

use crate::digest::chunk_digest;
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest};
use crate::object::ObjectStore;
use crate::protocol::error::ProtocolError;
use crate::protocol::flights::Failed;
use crate::protocol::policy::PARTS_IN_FLIGHT;
use crate::protocol::request::{ObjectKey, ObjectRequest, Request};
use crate::table::Table;
use crate::value::Item;
use crate::write::split::chunk_item_of;

/// The pieces a range is cut into for the decoders.
pub(super) const READ_CHUNK_BYTES: u32 = 256 << 10;
/// Pieces per ranged GET: 8 MiB a request.
const RANGE_CHUNKS: u32 = (crate::object::READ_RANGE_BYTES / READ_CHUNK_BYTES as u64) as u32;

/// The object a read reads.
pub(super) struct ObjectRead {
    object: ObjectKey,
    etag: String,
    /// The manifest as if the frame were in chunks of [`READ_CHUNK_BYTES`].
    chunked: Manifest,
    /// The parent's key attributes.
    key: Item,
}

use alloc::string::String;

impl ObjectRead {
    /// The read of `manifest`'s object (stored on `parent`), when it names
    /// one; refused unless it is this version's own in the table's store.
    pub(super) fn of(
        table: &Table,
        parent: &Item,
        manifest: &Manifest,
    ) -> Result<Option<Self>, ProtocolError> {
        let owned = ObjectStore::owned(table.objects.as_ref(), &table.key, parent, manifest)?;
        let Some(object) = owned else {
            return Ok(None);
        };
        let count = manifest.stored_len.div_ceil(u64::from(READ_CHUNK_BYTES));
        let chunked = Manifest {
            object: None,
            chunk_count: u32::try_from(count).unwrap_or(u32::MAX),
            chunk_bytes: READ_CHUNK_BYTES,
            ..manifest.clone()
        };
        Ok(Some(Self {
            object: ObjectKey {
                bucket: object.bucket.clone(),
                key: object.key.clone(),
            },
            etag: object.etag.clone(),
            chunked,
            key: table.key.key_of(parent),
        }))
    }

    /// `parent` with the manifest the decoders read.
    pub(super) fn chunked_parent(&self, parent: &Item) -> Item {
        let mut parent = parent.clone();
        parent.insert(MANIFEST_ATTRIBUTE.into(), self.chunked.to_value());
        parent
    }

    /// Pieces a read may ask for ahead of the one being decoded.
    pub(super) fn window(&self) -> usize {
        RANGE_CHUNKS as usize * PARTS_IN_FLIGHT
    }

    /// The range of pieces `first..`: the piece after it, and its bytes.
    fn bounds(&self, first: u32) -> (u32, core::ops::Range<u64>) {
        let last = first
            .saturating_add(RANGE_CHUNKS)
            .min(self.chunked.chunk_count);
        let start = u64::from(first) * u64::from(READ_CHUNK_BYTES);
        let end = (u64::from(last) * u64::from(READ_CHUNK_BYTES)).min(self.chunked.stored_len);
        (last, start..end)
    }

    /// The GET of the range holding pieces `first..`, and the piece after it.
    pub(super) fn range(&self, first: u32) -> (Request, u32) {
        let (last, range) = self.bounds(first);
        let request = ObjectRequest::Get {
            object: self.object.clone(),
            etag: self.etag.clone(),
            range,
        };
        (Request::Object(request), last)
    }

    /// The pieces of the range starting at piece `first`, as chunk items
    /// the decoders check: refused unless the range holds exactly its bytes.
    pub(super) fn pieces(
        &self,
        table: &Table,
        first: u32,
        bytes: &[u8],
    ) -> Result<Vec<(u32, Item)>, ProtocolError> {
        let (_, range) = self.bounds(first);
        if bytes.len() as u64 != range.end - range.start {
            return Err(ProtocolError::ObjectLength {
                object: self.describe(),
                expected: self.chunked.stored_len,
                found: range.start + bytes.len() as u64,
            });
        }
        let version = self.chunked.version;
        let text = version.to_text();
        bytes
            .chunks(READ_CHUNK_BYTES as usize)
            .zip(first..)
            .map(|(data, seq)| {
                let digest = chunk_digest(data, &text, seq);
                let item = chunk_item_of(
                    &table.key,
                    &table.layout,
                    &self.key,
                    version,
                    seq,
                    data.to_vec(),
                    digest,
                )
                .map_err(|e| ProtocolError::Split(crate::SplitError::ChunkKey(e)))?;
                Ok((seq, item))
            })
            .collect()
    }

    /// True when a GET failed because the object is gone (`NoSuchKey`) or
    /// no longer has the recorded ETag (`PreconditionFailed`).
    pub(super) fn gone(failed: &Failed) -> bool {
        failed.condition_failed()
            || failed
                .failure
                .as_ref()
                .is_some_and(|f| f.code == "NoSuchKey")
    }

    /// False when an answer's ETag names another object than the
    /// manifest's (no ETag given: true, `If-Match` was sent).
    pub(super) fn same_etag(&self, etag: Option<&str>) -> bool {
        etag.is_none_or(|e| e == self.etag)
    }

    /// The error of an object gone while its parent still names it.
    pub(super) fn gone_error(&self) -> ProtocolError {
        ProtocolError::ObjectMissing {
            object: self.describe(),
        }
    }

    fn describe(&self) -> String {
        alloc::format!("s3://{}/{}", self.object.bucket, self.object.key)
    }
}
