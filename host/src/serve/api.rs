//! The routes: static files, and one handler per API call (docs/API.md).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{delete, get, post};
use dynaslice_core::{AttributeValue, Item};
use serde_json::{Value, json};
use tower_http::services::ServeDir;

use super::upload::{commit_upload, drain, read_upload};
use super::{ApiError, State};
use crate::get::GetOptions;
use crate::json::{inspection_to_json, item_from_json, item_to_json, manifest_to_json};
use crate::put::PutOptions;
use crate::table::TableConfig;

type Shared = Extract<Arc<State>>;
type Params = Query<HashMap<String, String>>;

pub(super) fn router(state: Arc<State>) -> Router {
    let pkg = &state.config.pkg;
    let www = ServeDir::new(&state.config.www);
    Router::new()
        .route("/api/config", get(config))
        .route("/api/upload", post(upload))
        .route("/api/items", get(items))
        .route("/api/item", get(item))
        .route("/api/item", delete(remove))
        .route("/api/preview", get(preview))
        .route("/api/inspect", get(inspect))
        .route("/api/{*rest}", get(unknown).post(unknown).delete(unknown))
        .nest_service("/pkg/dynaslice/js", ServeDir::new(pkg.join("js")))
        .nest_service("/pkg/dynaslice/dist", ServeDir::new(pkg.join("dist")))
        .fallback_service(www)
        .with_state(state)
}

async fn unknown() -> ApiError {
    ApiError::not_found("no such API call; see docs/API.md".into())
}

fn param<'a>(params: &'a HashMap<String, String>, name: &str) -> Result<&'a str, ApiError> {
    params.get(name).map(String::as_str).ok_or_else(|| {
        ApiError::bad(
            "PARAMETER_MISSING",
            format!("query parameter {name} is required"),
        )
    })
}

/// The table and the key a request names, checked against the allow-list and scope.
fn target<'s>(
    state: &'s State,
    params: &HashMap<String, String>,
) -> Result<(&'s TableConfig, Item), ApiError> {
    let table = state.config.table(param(params, "table")?)?;
    let text = param(params, "key")?;
    let json: Value = serde_json::from_str(text)
        .map_err(|e| ApiError::bad("KEY_INVALID", format!("key is not JSON: {e}")))?;
    let key = crate::get::check_key(table, &item_from_json(&json)?)?;
    state.config.check_scope(table, &key)?;
    Ok((table, key))
}

fn not_found(table: &TableConfig, key: &Item) -> ApiError {
    ApiError::not_found(format!("no item {} in {}", item_to_json(key), table.table))
}

async fn config(Extract(state): Shared) -> Json<Value> {
    let tables: Vec<Value> = state
        .config
        .tables
        .values()
        .map(|t| {
            let key: Vec<Value> = t
                .key
                .attributes()
                .map(|k| json!({ "name": k.name, "type": k.key_type.as_str() }))
                .collect();
            json!({ "name": t.table, "layout": t.layout.name(), "chunkTable": t.chunk_table, "key": key })
        })
        .collect();
    Json(json!({
        "tables": tables,
        "keyPrefix": state.config.key_prefix,
        "maxItemBytes": state.config.max_item_bytes,
        "maxBodyBytes": state.config.max_body_bytes(),
    }))
}

async fn upload(
    Extract(state): Shared,
    Query(params): Params,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let limit = state.config.max_body_bytes();
    let mut stream = body.into_data_stream();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let checked = param(&params, "table").and_then(|name| state.config.table(name));
    let read = match (checked, declared) {
        (Err(e), _) => Err(e),
        (Ok(_), Some(n)) if n > limit => Err(ApiError::too_large(limit)),
        (Ok(table), _) => read_upload(&mut stream, limit)
            .await
            .map(|upload| (table, upload)),
    };
    let (table, upload) = match read {
        Ok(read) => read,
        Err(e) => {
            drain(&mut stream, limit.saturating_mul(2)).await;
            return Err(e);
        }
    };
    let key = table.key.key_of(&upload.parent);
    let outcome = commit_upload(&state.client, table, &state.config, upload).await?;
    Ok(Json(json!({
        "key": item_to_json(&key),
        "mode": outcome.mode,
        "manifest": outcome.manifest.as_ref().map(manifest_to_json),
        "bytesWritten": outcome.bytes_written,
        "writeUnits": outcome.planned_write_units,
        "consumedWriteUnits": outcome.consumed_write_units,
    })))
}

async fn items(Extract(state): Shared, Query(params): Params) -> Result<Json<Value>, ApiError> {
    let table = state.config.table(param(&params, "table")?)?;
    let found = crate::inspect::list(&state.client, table).await?;
    let rows: Vec<Value> = found
        .iter()
        .filter(|i| state.config.check_scope(table, &i.key).is_ok())
        .map(|i| json!({ "key": item_to_json(&i.key), "parentBytes": i.parent_bytes, "manifest": i.manifest.as_ref().map(manifest_to_json) }))
        .collect();
    Ok(Json(json!({ "items": rows })))
}

async fn item(Extract(state): Shared, Query(params): Params) -> Result<Response, ApiError> {
    let (table, key) = target(&state, &params)?;
    let options = GetOptions {
        max_item_bytes: state.config.max_item_bytes,
        ..GetOptions::default()
    };
    let fetched = crate::get::get(&state.client, table, &key, &options, &())
        .await?
        .ok_or_else(|| not_found(table, &key))?;
    let Some(attribute) = params.get("attribute") else {
        return Ok(Json(item_to_json(&fetched.item)).into_response());
    };
    let mut item = fetched.item;
    // Moved out of the item, not copied: it may be 64 MiB.
    let bytes = match item.remove(attribute) {
        Some(AttributeValue::B(bytes)) => bytes,
        Some(AttributeValue::S(text)) => text.into_bytes(),
        Some(_) => {
            return Err(ApiError::bad(
                "ATTRIBUTE_NOT_BLOB",
                format!("attribute {attribute} is not a string or binary"),
            ));
        }
        None => {
            return Err(ApiError::not_found(format!(
                "the item has no attribute {attribute}"
            )));
        }
    };
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
}

async fn preview(Extract(state): Shared, Query(params): Params) -> Result<Response, ApiError> {
    let (table, key) = target(&state, &params)?;
    let number = |name: &str, default: u64| {
        params.get(name).map_or(Ok(default), |v| {
            v.parse::<u64>().map_err(|_| {
                ApiError::bad(
                    "PARAMETER_INVALID",
                    format!("{name} must be a whole number"),
                )
            })
        })
    };
    let start = number("start", 0)?;
    let end = number("end", start + 4096)?.max(start);
    if end - start > 1 << 20 {
        return Err(ApiError::bad(
            "PARAMETER_INVALID",
            "a preview is at most 1 MiB",
        ));
    }
    let found = crate::preview::preview(
        &state.client,
        table,
        &key,
        start..end,
        &GetOptions::default(),
    )
    .await?
    .ok_or_else(|| not_found(table, &key))?;
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/octet-stream")],
        found.bytes,
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert("x-dynaslice-total", HeaderValue::from(found.total));
    headers.insert(
        "x-dynaslice-chunks-read",
        HeaderValue::from(found.chunks_read),
    );
    if let Some(value) = found.attribute.and_then(|a| HeaderValue::from_str(&a).ok()) {
        headers.insert("x-dynaslice-attribute", value);
    }
    Ok(response)
}

async fn inspect(Extract(state): Shared, Query(params): Params) -> Result<Json<Value>, ApiError> {
    let (table, key) = target(&state, &params)?;
    let found = crate::inspect::inspect(&state.client, table, &key)
        .await?
        .ok_or_else(|| not_found(table, &key))?;
    Ok(Json(inspection_to_json(&key, &found)))
}

async fn remove(Extract(state): Shared, Query(params): Params) -> Result<Json<Value>, ApiError> {
    let (table, key) = target(&state, &params)?;
    let outcome = crate::delete::delete(&state.client, table, &key, &PutOptions::default()).await?;
    if !outcome.existed {
        return Err(not_found(table, &key));
    }
    Ok(Json(
        json!({ "deleted": true, "chunksDeleted": outcome.chunks_deleted }),
    ))
}
