//! Uploads straight to S3 (docs/API.md): `POST /object?table=NAME` hands
//! out a presigned PUT for a fresh version's object inside the caller's
//! key scope, with the frame's length and CRC-32 signed into it; `POST
//! /object/commit?table=NAME` checks what was stored and commits it
//! ([`crate::commit_object_upload`]). Each grant is used once, by a caller
//! whose scope holds its key, within its time.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::Json;
use base64::Engine;
use dynaslice_core::{Category, Code};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::upload::{Uploads, admit_table};
use super::{ApiError, KeyScope, check_scope};
use crate::json::{OutcomeJson, item_from_json};
use crate::object_upload::refuses_upload;
use crate::put::PutOptions;
use crate::{ObjectUploadRequest, commit_object_upload, presign_object_upload};

/// How long a presigned PUT is valid.
const URL_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// Grants waiting for their commit at once; more are refused (503).
const MAX_GRANTS: usize = 1024;

/// A presigned PUT handed out, waiting for its commit.
pub(super) struct Grant {
    table: String,
    request: ObjectUploadRequest,
    until: Instant,
}

/// Grants by version.
#[derive(Default)]
pub(super) struct Grants(Mutex<HashMap<String, Grant>>);

impl Grants {
    fn insert(&self, version: String, grant: Grant) -> Result<(), ApiError> {
        let mut grants = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        grants.retain(|_, g| g.until > now);
        if grants.len() >= MAX_GRANTS {
            return Err(ApiError::busy("uploads waiting for their commit"));
        }
        grants.insert(version, grant);
        Ok(())
    }

    /// The grant of `version`, taken (it is used once) when `allowed`
    /// says this caller may use it; left as it was otherwise.
    fn take(
        &self,
        version: &str,
        allowed: impl FnOnce(&Grant) -> Result<(), ApiError>,
    ) -> Result<Grant, ApiError> {
        let mut grants = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match grants.get(version) {
            Some(grant) if grant.until > Instant::now() => allowed(grant)?,
            _ => return Err(unknown_grant()),
        }
        grants.remove(version).ok_or_else(unknown_grant)
    }

    /// Puts a grant back: its commit failed for want of S3 or the store,
    /// and may be tried again.
    fn restore(&self, version: String, grant: Grant) {
        let mut grants = self.0.lock().unwrap_or_else(|e| e.into_inner());
        grants.insert(version, grant);
    }
}

fn unknown_grant() -> ApiError {
    ApiError::new(
        Code::NotFound,
        "no upload waits for this version here (unknown, used or expired)",
    )
}

/// The largest grant or commit body. A parent is at most 400 KB as
/// DynamoDB sizes it, but its wire JSON may be several times that (base64,
/// escaped control characters, number sets of one-digit numbers): 4 MiB
/// holds any, and the parent is then checked as an item.
pub(super) const GRANT_BODY_BYTES: usize = 4 << 20;

/// The body limit of the grant and commit routes.
pub(super) fn body_limit() -> DefaultBodyLimit {
    DefaultBodyLimit::max(GRANT_BODY_BYTES)
}

fn malformed(message: impl Into<String>) -> ApiError {
    ApiError::new(Code::UploadMalformed, message).with_status(StatusCode::BAD_REQUEST)
}

/// What every request here starts with: the caller's key scope, the
/// allowed table it names, and its JSON body.
fn opened<'u, 'p>(
    uploads: &'u Uploads,
    params: &'p BTreeMap<String, String>,
    scope: Option<Extension<KeyScope>>,
    body: &Result<Bytes, BytesRejection>,
) -> Result<(KeyScope, &'p str, &'u crate::TableConfig, Value), ApiError> {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(
                ApiError::too_large(GRANT_BODY_BYTES).with_status(StatusCode::PAYLOAD_TOO_LARGE)
            );
        }
        Err(rejection) => return Err(malformed(rejection.body_text())),
    };
    let Some(Extension(scope)) = scope else {
        return Err(ApiError::new(
            Code::KeyScopeMissing,
            "the server mounts the upload router without a key scope for this request",
        ));
    };
    let (name, table) = admit_table(&uploads.config, params)?;
    let body = serde_json::from_slice(body)
        .map_err(|e| malformed(format!("the body is not JSON: {e}")))?;
    Ok((scope, name, table, body))
}

/// A refusal of what the caller sent or stored is the caller's fault
/// (400), unless it is over a limit (413), lost to another writer (409), or
/// the server's or the store's failure.
fn refused(error: crate::HostError) -> ApiError {
    let error = ApiError::from(error);
    match error.code().category() {
        Category::TooLarge | Category::Conflict | Category::Unavailable | Category::Failure => {
            error
        }
        _ => error.with_status(StatusCode::BAD_REQUEST),
    }
}

/// `POST /object?table=NAME`, body `{ parent, attribute, size, crc32 }`
/// (`crc32` the frame's CRC-32 in base64, as S3's `x-amz-checksum-crc32`):
/// `{ url, method, headers, version, key, expiresInSeconds }`.
pub(super) async fn grant(
    State(uploads): State<Arc<Uploads>>,
    Query(params): Query<BTreeMap<String, String>>,
    scope: Option<Extension<KeyScope>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let (scope, name, table, body) = opened(&uploads, &params, scope, &body)?;
    let parent = item_from_json(&body["parent"]).map_err(ApiError::from)?;
    check_scope(&scope, table, &parent)?;
    let attribute = body["attribute"]
        .as_str()
        .ok_or_else(|| malformed("attribute must be the name of the binary attribute"))?;
    let size = body["size"]
        .as_u64()
        .ok_or_else(|| malformed("size must be the frame's length in bytes"))?;
    let crc32 = body["crc32"]
        .as_str()
        .and_then(|c| base64::engine::general_purpose::STANDARD.decode(c).ok())
        .and_then(|c| <[u8; 4]>::try_from(c).ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| malformed("crc32 must be the frame's CRC-32, 4 bytes in base64"))?;
    let request = ObjectUploadRequest {
        parent,
        attribute: attribute.to_string(),
        size,
        crc32,
    };
    let max = uploads.config.max_item_bytes as u64;
    let put = presign_object_upload(table, &request, max, URL_LIFETIME)
        .await
        .map_err(refused)?;
    let version = put.version.to_text();
    let grant = Grant {
        table: name.to_string(),
        request,
        until: Instant::now() + URL_LIFETIME + uploads.config.body_timeout,
    };
    uploads.grants.insert(version.clone(), grant)?;
    let headers: serde_json::Map<String, Value> = put
        .headers
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    Ok(Json(json!({
        "url": put.url,
        "method": "PUT",
        "headers": headers,
        "version": version,
        "key": put.key,
        "expiresInSeconds": URL_LIFETIME.as_secs(),
    })))
}

/// `POST /object/commit?table=NAME`, body `{ version }`: the object
/// checked and committed; the put's outcome as `POST /` answers it.
pub(super) async fn commit(
    State(uploads): State<Arc<Uploads>>,
    Query(params): Query<BTreeMap<String, String>>,
    scope: Option<Extension<KeyScope>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let (scope, name, table, body) = opened(&uploads, &params, scope, &body)?;
    let version = body["version"]
        .as_str()
        .ok_or_else(|| malformed("version must be the version the grant named"))?
        .to_string();
    let parsed = dynaslice_core::VersionId::parse(&version).map_err(|_| unknown_grant())?;
    // A busy server leaves the grant for the caller's next try.
    let _permit = Arc::clone(&uploads.permits)
        .try_acquire_owned()
        .map_err(|_| ApiError::busy("uploads"))?;
    // Only a caller whose scope holds its key can use (and so spend) it.
    let grant = uploads.grants.take(&version, |grant| {
        if grant.table != name {
            return Err(unknown_grant());
        }
        check_scope(&scope, table, &grant.request.parent)
    })?;
    let key = table.key.key_of(&grant.request.parent);
    let options = PutOptions {
        max_item_bytes: uploads.config.max_item_bytes,
        ..PutOptions::default()
    };
    let committed = commit_object_upload(
        &uploads.client,
        table,
        grant.request.clone(),
        parsed,
        &options,
    )
    .await;
    let outcome = match committed {
        Ok(outcome) => outcome,
        Err(error) => {
            if !refuses_upload(&error) {
                uploads.grants.restore(version, grant);
            }
            return Err(refused(error));
        }
    };
    Ok(Json(outcome.to_json(&key)))
}
