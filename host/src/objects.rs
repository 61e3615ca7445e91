//! S3 for payloads (docs/FORMAT.md, "Objects"): the client beside the
//! DynamoDB one, and the S3 requests core's machines ask for, sent once
//! with `aws-sdk-s3` and reported as facts (the machine decides what to
//! resend). Every object write carries `If-None-Match: *` and the body's
//! CRC-32, which S3 checks before it stores anything; every read carries
//! `If-Match` on the ETag the manifest recorded.

use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_s3::config::Region;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{ChecksumAlgorithm, CompletedMultipartUpload, CompletedPart};
use base64::Engine;
use dynaslice_core::object::ObjectStore;
use dynaslice_core::protocol::{
    Answer, Failure, Listed, ObjectAnswer, ObjectKey, ObjectRequest, ProtocolError, Upload,
};

use crate::executor::{DateSeen, failure_of};

/// Where a table's payloads go in S3 ([`ObjectStore`]), and the client
/// that reaches it. Two are equal when they name the same store.
#[derive(Clone, Debug)]
pub struct Objects {
    /// The bucket, prefix, threshold and part size.
    pub store: ObjectStore,
    /// The S3 client (its own retries off: the machines resend).
    pub client: aws_sdk_s3::Client,
}

impl PartialEq for Objects {
    fn eq(&self, other: &Self) -> bool {
        self.store == other.store
    }
}

impl Eq for Objects {}

impl Objects {
    /// Objects under `store` through `client`; refused when S3 would
    /// refuse the bucket name or part size.
    pub fn new(store: ObjectStore, client: aws_sdk_s3::Client) -> Result<Self, crate::HostError> {
        store
            .check()
            .map_err(|e| crate::HostError::Protocol(e.into()))?;
        Ok(Self { store, client })
    }
}

fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(10))
        .operation_attempt_timeout(Duration::from_secs(300))
        .build()
}

/// The configuration of an S3 client for an S3-compatible server at `url`
/// (path-style addressing, placeholder credentials as for a local
/// DynamoDB, region `us-east-1`).
pub(crate) fn local_s3_config(url: &str) -> aws_sdk_s3::config::Builder {
    aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(url)
        .force_path_style(true)
        .region(Region::new("us-east-1"))
        .credentials_provider(crate::client::local_credentials())
        .retry_config(RetryConfig::disabled())
        .timeout_config(timeouts())
}

/// A client for an S3-compatible server at `url` (see [`local_s3_config`]).
pub fn local_s3_client(url: &str) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(local_s3_config(url).build())
}

/// A client for Amazon S3 with the standard AWS credential chain and
/// region, as [`crate::aws_client`] for DynamoDB.
pub async fn aws_s3_client() -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::new(&crate::client::aws_config(timeouts()).await)
}

/// Creates `bucket` unless it exists (for a local server; on AWS a bucket
/// is made once, outside dynaslice).
pub async fn ensure_bucket(
    client: &aws_sdk_s3::Client,
    bucket: &str,
) -> Result<(), crate::HostError> {
    if client.head_bucket().bucket(bucket).send().await.is_ok() {
        return Ok(());
    }
    match client.create_bucket().bucket(bucket).send().await {
        Ok(_) => Ok(()),
        // Made by another caller meanwhile.
        Err(_) if client.head_bucket().bucket(bucket).send().await.is_ok() => Ok(()),
        Err(e) => {
            let failure = failure_of(&e);
            match failure.code.as_str() {
                "BucketAlreadyOwnedByYou" | "BucketAlreadyExists" => Ok(()),
                _ => Err(crate::HostError::S3(format!(
                    "bucket {bucket}: {}: {}",
                    failure.code, failure.message
                ))),
            }
        }
    }
}

/// A time S3 gave, in Unix milliseconds.
fn millis(time: Option<&aws_sdk_s3::primitives::DateTime>) -> Option<u64> {
    time.and_then(|t| t.to_millis().ok())
        .and_then(|ms| u64::try_from(ms).ok())
}

fn crc(sum: u32) -> String {
    base64::engine::general_purpose::STANDARD.encode(sum.to_be_bytes())
}

fn etag(tag: Option<String>, operation: &str) -> Result<String, Failure> {
    tag.filter(|t| !t.is_empty()).ok_or_else(|| {
        Failure::answered(
            200,
            "MissingETag",
            format!("{operation} answered without an ETag"),
        )
    })
}

/// A failed S3 request about `object` as a typed error: the object gone,
/// or no longer the one recorded (`NoSuchKey`, HeadObject's `NotFound`,
/// `PreconditionFailed` on `If-Match`), is `OBJECT_MISSING`; anything
/// else `S3_ERROR`.
pub(crate) fn object_error(failure: &Failure, object: &ObjectKey) -> crate::HostError {
    match failure.code.as_str() {
        "NoSuchKey" | "NotFound" | "PreconditionFailed" => {
            crate::HostError::Protocol(ProtocolError::ObjectMissing {
                object: format!("s3://{}/{}", object.bucket, object.key),
            })
        }
        _ => crate::HostError::S3(format!("{}: {}", failure.code, failure.message)),
    }
}

/// Sends one S3 request and reports what came back.
pub(crate) async fn send_object(
    client: &aws_sdk_s3::Client,
    request: ObjectRequest,
) -> Result<Answer, Failure> {
    let answer = match request {
        ObjectRequest::Put {
            object,
            body,
            crc32,
        } => {
            let out = client
                .put_object()
                .bucket(object.bucket)
                .key(object.key)
                .if_none_match("*")
                .checksum_crc32(crc(crc32))
                .body(ByteStream::from(body.to_vec()))
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            ObjectAnswer::Written {
                etag: etag(out.e_tag, "PutObject")?,
            }
        }
        ObjectRequest::StartUpload { object } => {
            let out = client
                .create_multipart_upload()
                .bucket(object.bucket)
                .key(object.key)
                .checksum_algorithm(ChecksumAlgorithm::Crc32)
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            let upload_id = out.upload_id.filter(|id| !id.is_empty()).ok_or_else(|| {
                Failure::answered(200, "MissingUploadId", "no upload id came back")
            })?;
            ObjectAnswer::Started { upload_id }
        }
        ObjectRequest::UploadPart {
            object,
            upload_id,
            number,
            body,
            crc32,
        } => {
            let number = i32::try_from(number).unwrap_or(i32::MAX);
            let out = client
                .upload_part()
                .bucket(object.bucket)
                .key(object.key)
                .upload_id(upload_id)
                .part_number(number)
                .checksum_crc32(crc(crc32))
                .body(ByteStream::from(body.to_vec()))
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            ObjectAnswer::Part {
                etag: etag(out.e_tag, "UploadPart")?,
            }
        }
        ObjectRequest::CompleteUpload {
            object,
            upload_id,
            parts,
        } => {
            let parts = parts
                .into_iter()
                .map(|p| {
                    CompletedPart::builder()
                        .part_number(i32::try_from(p.number).unwrap_or(i32::MAX))
                        .e_tag(p.etag)
                        .checksum_crc32(crc(p.crc32))
                        .build()
                })
                .collect();
            let upload = CompletedMultipartUpload::builder()
                .set_parts(Some(parts))
                .build();
            let out = client
                .complete_multipart_upload()
                .bucket(object.bucket)
                .key(object.key)
                .upload_id(upload_id)
                .if_none_match("*")
                .multipart_upload(upload)
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            ObjectAnswer::Written {
                etag: etag(out.e_tag, "CompleteMultipartUpload")?,
            }
        }
        ObjectRequest::AbortUpload { object, upload_id } => {
            client
                .abort_multipart_upload()
                .bucket(object.bucket)
                .key(object.key)
                .upload_id(upload_id)
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            ObjectAnswer::Done
        }
        ObjectRequest::Head { object } => {
            let out = client
                .head_object()
                .bucket(object.bucket)
                .key(object.key)
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            ObjectAnswer::Head {
                etag: etag(out.e_tag, "HeadObject")?,
                len: out
                    .content_length
                    .and_then(|l| u64::try_from(l).ok())
                    .unwrap_or(0),
            }
        }
        ObjectRequest::Get {
            object,
            etag,
            range,
        } => {
            let out = client
                .get_object()
                .bucket(object.bucket)
                .key(object.key)
                .if_match(etag)
                .range(format!(
                    "bytes={}-{}",
                    range.start,
                    range.end.saturating_sub(1)
                ))
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            let etag = out.e_tag;
            // Read no further than one piece past the range: a server that
            // sends more is refused by its length (OBJECT_LENGTH_MISMATCH),
            // never held whole.
            let want = usize::try_from(range.end.saturating_sub(range.start)).unwrap_or(usize::MAX);
            let mut body = out.body;
            let mut bytes = Vec::with_capacity(want.min(16 << 20));
            while bytes.len() <= want {
                let piece = body.try_next().await.map_err(|e| {
                    Failure::no_answer("ResponseBodyError", format!("GetObject's body: {e}"))
                })?;
                match piece {
                    Some(piece) => bytes.extend_from_slice(&piece),
                    None => break,
                }
            }
            ObjectAnswer::Bytes { bytes, etag }
        }
        ObjectRequest::List {
            bucket,
            prefix,
            after,
        } => {
            let date = DateSeen::default();
            let out = client
                .list_objects_v2()
                .bucket(bucket)
                .prefix(prefix)
                .set_continuation_token(after)
                .customize()
                .interceptor(date.clone())
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            let objects = out
                .contents()
                .iter()
                .filter_map(|o| {
                    Some(Listed {
                        key: o.key.clone()?,
                        modified_ms: millis(o.last_modified.as_ref()),
                    })
                })
                .collect();
            let next = match out.is_truncated {
                Some(true) => out.next_continuation_token.clone(),
                _ => None,
            };
            ObjectAnswer::Listed {
                objects,
                next,
                now_ms: date.get().map(|d| d.unix_ms),
            }
        }
        ObjectRequest::ListUploads {
            bucket,
            prefix,
            after,
        } => {
            let date = DateSeen::default();
            let (key_marker, id_marker) = after.unzip();
            let out = client
                .list_multipart_uploads()
                .bucket(bucket)
                .prefix(prefix)
                .set_key_marker(key_marker)
                .set_upload_id_marker(id_marker)
                .customize()
                .interceptor(date.clone())
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            let uploads = out
                .uploads()
                .iter()
                .filter_map(|u| {
                    Some(Upload {
                        key: u.key.clone()?,
                        upload_id: u.upload_id.clone()?,
                        initiated_ms: millis(u.initiated.as_ref()),
                    })
                })
                .collect();
            let next = match out.is_truncated {
                Some(true) => out
                    .next_key_marker
                    .clone()
                    .zip(out.next_upload_id_marker.clone()),
                _ => None,
            };
            ObjectAnswer::Uploads {
                uploads,
                next,
                now_ms: date.get().map(|d| d.unix_ms),
            }
        }
        ObjectRequest::Delete { object } => {
            client
                .delete_object()
                .bucket(object.bucket)
                .key(object.key)
                .send()
                .await
                .map_err(|e| failure_of(&e))?;
            ObjectAnswer::Done
        }
    };
    Ok(Answer::Object(answer))
}
