//! Payloads a client stores straight in S3 (docs/API.md, "Uploads straight
//! to S3"): the host hands out a presigned PUT for the one key the item's
//! key and a fresh version derive, with the length, the CRC-32 and
//! `If-None-Match: *` signed into it; once the client says it is done, the
//! host trusts nothing it did not check. The object must have exactly the
//! declared length; its frame's header and trailer describe the manifest;
//! then its bytes are read through once, as any read of it would (ranged
//! GETs conditional on its ETag, every length and the digest checked, in
//! bounded memory) before the parent naming it is committed with the usual
//! commit. An object that fails any check is deleted: its key is this
//! version's alone, so it is no one else's.

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_s3::presigning::PresigningConfig;
use base64::Engine;
use dynaslice_core::codec::{FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES};
use dynaslice_core::object::ObjectRef;
use dynaslice_core::protocol::{
    Answer, ObjectAnswer, ObjectKey, ObjectRequest, ProtocolError, ReadMachine, Sink,
};
use dynaslice_core::upload::{
    OBJECT_HEAD_BYTES, StoredObject, UploadError, check_object_parent, object_upload,
};
use dynaslice_core::{Item, SplitItem, VersionId};

use crate::HostError;
use crate::executor::{Driver, Stop, env};
use crate::objects::send_object;
use crate::put::{PutOptions, PutOutcome};
use crate::table::TableConfig;

/// A presigned PUT a client sends a payload's frame with.
#[derive(Clone, Debug)]
pub struct PresignedPut {
    /// The URL.
    pub url: String,
    /// Headers the request must carry exactly (they are signed).
    pub headers: Vec<(String, String)>,
    /// The version the object is for: name it when the upload is done.
    pub version: VersionId,
    /// The object's key.
    pub key: String,
}

/// What a client asks to store straight in S3: the item's key and small
/// attributes (`parent`), the binary attribute the payload's frame holds,
/// the frame's exact length and its CRC-32.
#[derive(Clone, Debug)]
pub struct ObjectUploadRequest {
    /// The key and the attributes kept on the parent.
    pub parent: Item,
    /// The attribute the frame holds.
    pub attribute: String,
    /// The frame's length in bytes.
    pub size: u64,
    /// Its CRC-32.
    pub crc32: u32,
}

fn store(table: &TableConfig) -> Result<&crate::Objects, HostError> {
    table.objects.as_ref().ok_or_else(|| {
        HostError::Protocol(ProtocolError::Object(
            dynaslice_core::object::ObjectError::NotConfigured {
                bucket: String::new(),
            },
        ))
    })
}

/// The largest frame of a payload of `max_raw_bytes`: every codec's worst
/// case stays within 1/64 more, plus the frame's header and trailer and a
/// value stream's framing.
pub fn max_frame_bytes(max_raw_bytes: u64) -> u64 {
    max_raw_bytes
        .saturating_add(max_raw_bytes / 64)
        .saturating_add(4096)
}

/// A presigned PUT (valid for `expires`) for `request`'s frame, at the key
/// of a fresh version of its item: refused unless the table keeps payloads
/// in S3, the parent is a valid item of it, and the frame is at most
/// [`max_frame_bytes`] of `max_raw_bytes`.
pub async fn presign_object_upload(
    table: &TableConfig,
    request: &ObjectUploadRequest,
    max_raw_bytes: u64,
    expires: Duration,
) -> Result<PresignedPut, HostError> {
    let objects = store(table)?;
    check_object_parent(
        &request.parent,
        &request.attribute,
        &table.upload_rules(max_raw_bytes),
    )?;
    let limit = max_frame_bytes(max_raw_bytes);
    let min = (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64;
    if request.size > limit || request.size < min {
        return Err(HostError::Upload(UploadError::TooLarge {
            raw_len: request.size,
            limit,
        }));
    }
    let version = VersionId::new(env().local_ms, fastrand::u128(..));
    let key = objects
        .store
        .key_for(&table.key, &request.parent, version)
        .map_err(|e| HostError::Protocol(e.into()))?;
    let crc = base64::engine::general_purpose::STANDARD.encode(request.crc32.to_be_bytes());
    let config = PresigningConfig::expires_in(expires)
        .map_err(|e| HostError::S3(format!("presigning: {e}")))?;
    let presigned = objects
        .client
        .put_object()
        .bucket(&objects.store.bucket)
        .key(&key)
        .content_length(i64::try_from(request.size).unwrap_or(i64::MAX))
        .checksum_crc32(crc)
        .if_none_match("*")
        .presigned(config)
        .await
        .map_err(|e| HostError::S3(format!("presigning: {e}")))?;
    Ok(PresignedPut {
        url: presigned.uri().to_string(),
        headers: presigned
            .headers()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        version,
        key,
    })
}

/// Attempts of one of the commit's checking requests.
const CHECK_ATTEMPTS: u32 = 4;

/// One S3 request, resent after a throttle, a 5xx or a dropped connection
/// (with the core's backoff); its failure as a typed error.
async fn object_call(
    objects: &crate::Objects,
    object: &ObjectKey,
    request: ObjectRequest,
) -> Result<ObjectAnswer, HostError> {
    let retry = dynaslice_core::protocol::RetryPolicy::default();
    let mut attempt = 0;
    loop {
        match send_object(&objects.client, request.clone()).await {
            Ok(Answer::Object(answer)) => return Ok(answer),
            Ok(_) => return Err(HostError::Internal("S3 answered as DynamoDB".into())),
            Err(f) if attempt + 1 < CHECK_ATTEMPTS && (f.transient() || f.throttled()) => {
                tokio::time::sleep(retry.backoff(attempt, fastrand::f64())).await;
                attempt += 1;
            }
            Err(f) => return Err(crate::objects::object_error(&f, object)),
        }
    }
}

/// True when `error` refuses what the client stored (its length, frame,
/// digest or size), rather than telling that S3 or the store failed: only
/// then is the object deleted, and the grant spent.
pub fn refuses_upload(error: &HostError) -> bool {
    use dynaslice_core::Category;
    matches!(
        error.code().category(),
        Category::Input | Category::TooLarge | Category::Stored
    )
}

/// Checks the object a client stored for `request` as `version`, then
/// commits it as the item's new version (last writer wins, as a put):
/// its length must be `request.size`; its header, lengths and digest are
/// checked by reading it through once. An object that fails is deleted,
/// and nothing is committed.
pub async fn commit_object_upload(
    client: &Client,
    table: &TableConfig,
    request: ObjectUploadRequest,
    version: VersionId,
    options: &PutOptions,
) -> Result<PutOutcome, HostError> {
    let objects = store(table)?;
    let key = objects
        .store
        .key_for(&table.key, &request.parent, version)
        .map_err(|e| HostError::Protocol(e.into()))?;
    let object = ObjectKey {
        bucket: objects.store.bucket.clone(),
        key,
    };
    let checked = check_stored(client, table, objects, &object, &request, version, options).await;
    let split = match checked {
        Ok(split) => split,
        // Refused: the object is this version's alone, and goes. One that
        // could not be checked (S3 failing) stays, to be committed again.
        Err(error) if refuses_upload(&error) => {
            let delete = ObjectRequest::Delete {
                object: object.clone(),
            };
            let _ = object_call(objects, &object, delete).await;
            return Err(error);
        }
        Err(error) => return Err(error),
    };
    // A write that fails before its commit deletes the object (core's
    // PutMachine); one whose commit may still land leaves it to gc.
    crate::put::put_upload(client, table, split, options).await
}

/// The split that commits the stored object, once every check passed.
async fn check_stored(
    client: &Client,
    table: &TableConfig,
    objects: &crate::Objects,
    object: &ObjectKey,
    request: &ObjectUploadRequest,
    version: VersionId,
    options: &PutOptions,
) -> Result<SplitItem, HostError> {
    let head = ObjectRequest::Head {
        object: object.clone(),
    };
    let head = object_call(objects, object, head).await?;
    let ObjectAnswer::Head { etag, len } = head else {
        return Err(HostError::Internal("HeadObject answered otherwise".into()));
    };
    if len != request.size {
        return Err(HostError::Protocol(ProtocolError::ObjectLength {
            object: format!("s3://{}/{}", object.bucket, object.key),
            expected: request.size,
            found: len,
        }));
    }
    let range = |range: core::ops::Range<u64>| ObjectRequest::Get {
        object: object.clone(),
        etag: etag.clone(),
        range,
    };
    let head_bytes = (OBJECT_HEAD_BYTES as u64).min(len);
    let trailer = FRAME_TRAILER_BYTES as u64;
    let first = object_call(objects, object, range(0..head_bytes)).await?;
    let last = object_call(objects, object, range(len.saturating_sub(trailer)..len)).await?;
    let (ObjectAnswer::Bytes { bytes: head, .. }, ObjectAnswer::Bytes { bytes: tail, .. }) =
        (first, last)
    else {
        return Err(HostError::Internal("GetObject answered otherwise".into()));
    };
    let stored = StoredObject {
        object: ObjectRef {
            bucket: object.bucket.clone(),
            key: object.key.clone(),
            etag,
        },
        len,
        head: &head,
        tail: &tail,
    };
    let rules = table.upload_rules(options.max_item_bytes as u64);
    let split = object_upload(
        request.parent.clone(),
        &request.attribute,
        version,
        stored,
        &rules,
    )?;
    read_through(client, table, &split.parent, &request.attribute).await?;
    Ok(split)
}

/// Reads the attribute of the uncommitted `parent` through once, every
/// length and digest checked as any read checks them, its bytes dropped:
/// the parent is answered from here, the object's ranges come from S3.
async fn read_through(
    client: &Client,
    table: &TableConfig,
    parent: &Item,
    attribute: &str,
) -> Result<(), HostError> {
    let sink = Sink::Attribute {
        name: attribute.to_string(),
        restartable: false,
    };
    let key = table.key.key_of(parent);
    let options = crate::GetOptions {
        max_rereads: 0,
        ..crate::GetOptions::default()
    };
    let mut machine = ReadMachine::new(&key, table.core(), sink, options, None, env());
    let mut driver = Driver::for_table(client, table, &()).holding(parent.clone());
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => {
                return match result? {
                    Some(_) => Ok(()),
                    None => Err(HostError::Internal("the held parent was not read".into())),
                };
            }
            Stop::Output => crate::cpu::heavy(|| {
                machine.output();
            }),
            Stop::Restart => {}
            Stop::Input(_) => return Err(HostError::Internal("a read asked for input".into())),
        }
    }
}
