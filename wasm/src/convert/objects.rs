//! S3 requests as the exact inputs `@aws-sdk/client-s3` commands take
//! (`PutObjectCommandInput`, …), and their answers back into core's terms.
//! As in the host (`host/src/objects.rs`), every object write carries
//! `IfNoneMatch: "*"` and the body's CRC-32, and every read `IfMatch` on
//! the ETag the manifest recorded.

use dynaslice_core::Code;
use dynaslice_core::object::ObjectStore;
use dynaslice_core::protocol::{Listed, ObjectAnswer, ObjectRequest, Operation, Upload};
use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use super::{get, set};
use crate::error::Failure;

/// `{ bucket, prefix, thresholdBytes, partBytes }` (the S3 client beside
/// them is the driver's): where a table's large payloads go. The prefix
/// defaults to `dynaslice/<table>/`, as the CLI's does.
pub fn store(options: &JsValue, table: &str) -> Result<Option<ObjectStore>, Failure> {
    let s3 = get(options, "s3");
    if s3.is_undefined() || s3.is_null() {
        return Ok(None);
    }
    let expected = "an object like { client: new S3Client(…), bucket: \"media\" }";
    let bad = || {
        Failure::new(
            Code::OptionsInvalid,
            format!("option s3 must be {expected}"),
        )
    };
    if !s3.is_object() {
        return Err(bad());
    }
    let bucket = super::text(&s3, "bucket")?.ok_or_else(bad)?;
    let prefix = super::text(&s3, "prefix")?.unwrap_or_else(|| format!("dynaslice/{table}/"));
    let mut store = ObjectStore::new(bucket, prefix);
    store.threshold = super::size(&s3, "thresholdBytes", store.threshold as usize)? as u64;
    store.part_bytes = super::size(&s3, "partBytes", store.part_bytes)?;
    store
        .check()
        .map_err(|e| Failure::new(Code::OptionsInvalid, format!("option s3: {e}")))?;
    Ok(Some(store))
}

/// A CRC-32 as S3's `ChecksumCRC32` is written: base64 of its big-endian bytes.
fn crc(sum: u32) -> JsValue {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .encode(sum.to_be_bytes())
        .into()
}

fn located(bucket: &str, key: &str) -> Object {
    let input = Object::new();
    set(&input, "Bucket", &bucket.into());
    set(&input, "Key", &key.into());
    input
}

/// The input of the SDK command a request is.
pub fn input(request: &ObjectRequest) -> JsValue {
    let input = match request {
        ObjectRequest::Put {
            object,
            body,
            crc32,
        } => {
            let input = located(&object.bucket, &object.key);
            set(&input, "Body", &Uint8Array::from(&body[..]));
            set(&input, "IfNoneMatch", &"*".into());
            set(&input, "ChecksumCRC32", &crc(*crc32));
            input
        }
        ObjectRequest::StartUpload { object } => {
            let input = located(&object.bucket, &object.key);
            set(&input, "ChecksumAlgorithm", &"CRC32".into());
            input
        }
        ObjectRequest::UploadPart {
            object,
            upload_id,
            number,
            body,
            crc32,
        } => {
            let input = located(&object.bucket, &object.key);
            set(&input, "UploadId", &upload_id.as_str().into());
            set(&input, "PartNumber", &(*number).into());
            set(&input, "Body", &Uint8Array::from(&body[..]));
            set(&input, "ChecksumCRC32", &crc(*crc32));
            input
        }
        ObjectRequest::CompleteUpload {
            object,
            upload_id,
            parts,
        } => {
            let input = located(&object.bucket, &object.key);
            set(&input, "UploadId", &upload_id.as_str().into());
            set(&input, "IfNoneMatch", &"*".into());
            let list: Array = parts
                .iter()
                .map(|p| {
                    let part = Object::new();
                    set(&part, "PartNumber", &p.number.into());
                    set(&part, "ETag", &p.etag.as_str().into());
                    set(&part, "ChecksumCRC32", &crc(p.crc32));
                    JsValue::from(part)
                })
                .collect();
            let upload = Object::new();
            set(&upload, "Parts", &list);
            set(&input, "MultipartUpload", &upload);
            input
        }
        ObjectRequest::AbortUpload { object, upload_id } => {
            let input = located(&object.bucket, &object.key);
            set(&input, "UploadId", &upload_id.as_str().into());
            input
        }
        ObjectRequest::Head { object } | ObjectRequest::Delete { object } => {
            located(&object.bucket, &object.key)
        }
        ObjectRequest::Get {
            object,
            etag,
            range,
        } => {
            let input = located(&object.bucket, &object.key);
            set(&input, "IfMatch", &etag.as_str().into());
            let last = range.end.saturating_sub(1);
            set(
                &input,
                "Range",
                &format!("bytes={}-{last}", range.start).into(),
            );
            input
        }
        ObjectRequest::List {
            bucket,
            prefix,
            after,
        } => {
            let input = Object::new();
            set(&input, "Bucket", &bucket.as_str().into());
            set(&input, "Prefix", &prefix.as_str().into());
            if let Some(token) = after {
                set(&input, "ContinuationToken", &token.as_str().into());
            }
            input
        }
        ObjectRequest::ListUploads {
            bucket,
            prefix,
            after,
        } => {
            let input = Object::new();
            set(&input, "Bucket", &bucket.as_str().into());
            set(&input, "Prefix", &prefix.as_str().into());
            if let Some((key, id)) = after {
                set(&input, "KeyMarker", &key.as_str().into());
                set(&input, "UploadIdMarker", &id.as_str().into());
            }
            input
        }
    };
    input.into()
}

fn invalid(what: &str) -> Failure {
    Failure::new(
        Code::InputInvalid,
        format!("an S3 answer is not in the shape the driver gives: {what}"),
    )
}

fn text(value: &JsValue, name: &str) -> Option<String> {
    get(value, name).as_string().filter(|t| !t.is_empty())
}

fn millis(value: &JsValue, name: &str) -> Option<u64> {
    get(value, name)
        .as_f64()
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| ms as u64)
}

fn array(value: &JsValue, name: &str) -> Result<Array, Failure> {
    let list = get(value, name);
    if list.is_undefined() {
        return Ok(Array::new());
    }
    list.dyn_into().map_err(|_| invalid(name))
}

/// What the driver read off an S3 command's output (`{ etag, uploadId,
/// len, bytes, objects, uploads, next, nextKey, nextUploadId }`), with
/// `now_ms` the answer's `Date`.
pub fn answer(
    operation: Operation,
    value: &JsValue,
    now_ms: Option<u64>,
) -> Result<ObjectAnswer, Failure> {
    let etag = || text(value, "etag").ok_or_else(|| invalid("no ETag"));
    Ok(match operation {
        Operation::PutObject | Operation::CompleteMultipartUpload => {
            ObjectAnswer::Written { etag: etag()? }
        }
        Operation::UploadPart => ObjectAnswer::Part { etag: etag()? },
        Operation::CreateMultipartUpload => ObjectAnswer::Started {
            upload_id: text(value, "uploadId").ok_or_else(|| invalid("no upload id"))?,
        },
        Operation::HeadObject => ObjectAnswer::Head {
            etag: etag()?,
            len: millis(value, "len").unwrap_or(0),
        },
        Operation::GetObject => {
            let bytes: Uint8Array = get(value, "bytes")
                .dyn_into()
                .map_err(|_| invalid("bytes"))?;
            ObjectAnswer::Bytes {
                bytes: bytes.to_vec(),
                etag: text(value, "etag"),
            }
        }
        Operation::AbortMultipartUpload | Operation::DeleteObject => ObjectAnswer::Done,
        Operation::ListObjectsV2 => ObjectAnswer::Listed {
            objects: array(value, "objects")?
                .iter()
                .map(|o| {
                    Ok(Listed {
                        key: get(&o, "key").as_string().ok_or_else(|| invalid("key"))?,
                        modified_ms: millis(&o, "modifiedMs"),
                    })
                })
                .collect::<Result<_, Failure>>()?,
            next: text(value, "next"),
            now_ms,
        },
        Operation::ListMultipartUploads => ObjectAnswer::Uploads {
            uploads: array(value, "uploads")?
                .iter()
                .map(|u| {
                    Ok(Upload {
                        key: get(&u, "key").as_string().ok_or_else(|| invalid("key"))?,
                        upload_id: text(&u, "uploadId").ok_or_else(|| invalid("upload id"))?,
                        initiated_ms: millis(&u, "initiatedMs"),
                    })
                })
                .collect::<Result<_, Failure>>()?,
            next: text(value, "nextKey").zip(text(value, "nextUploadId")),
            now_ms,
        },
        _ => return Err(invalid("not an S3 operation")),
    })
}
