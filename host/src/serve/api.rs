//! The routes: static files, and one handler per API call (docs/API.md).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State as Extract};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{any, delete, get};
use axum::{Extension, Router, middleware};
use base64::Engine as _;
use dynaslice_core::{AttributeValue, Code, Item};
use serde_json::{Value, json};
use tower_http::services::ServeDir;

use super::guard::Guard;
use super::upload::upload_router;
use super::{ApiError, State, check_scope};
use crate::get::GetOptions;
use crate::inspect::StoredItem;
use crate::json::{OutcomeJson, item_from_json, item_to_json, key_text};
use crate::put::PutOptions;
use crate::table::TableConfig;

type Shared = Extract<Arc<State>>;
type Params = Query<HashMap<String, String>>;

pub(super) fn router(state: Arc<State>, guard: Arc<Guard>) -> Router {
    let pkg = &state.config.pkg;
    let www = ServeDir::new(&state.config.www);
    let uploads = upload_router(
        state.client.clone(),
        state.config.upload(),
        state.config.limits.max_uploads,
    )
    .layer(Extension(state.config.scope()));
    Router::new()
        .route("/api/config", get(config))
        .route("/api/items", get(items))
        .route("/api/item", get(item))
        .route("/api/item", delete(remove))
        .route("/api/preview", get(preview))
        .route("/api/inspect", get(inspect))
        .nest("/api/upload", uploads)
        .route("/api/{*rest}", any(unknown))
        .nest_service("/pkg/dynaslice/js", ServeDir::new(pkg.join("js")))
        .nest_service("/pkg/dynaslice/dist", ServeDir::new(pkg.join("dist")))
        .fallback_service(www)
        .with_state(state)
        .layer(middleware::from_fn_with_state(guard, super::guard::check))
}

async fn unknown() -> ApiError {
    ApiError::not_found("no such API call; see docs/API.md".into())
}

fn param<'a>(params: &'a HashMap<String, String>, name: &str) -> Result<&'a str, ApiError> {
    params.get(name).map(String::as_str).ok_or_else(|| {
        ApiError::new(
            Code::ParameterMissing,
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
        .map_err(|e| ApiError::new(Code::KeyInvalid, format!("key is not JSON: {e}")))?;
    let key = crate::get::check_key(table, &item_from_json(&json)?)?;
    check_scope(&state.config.scope(), table, &key)?;
    Ok((table, key))
}

fn not_found(table: &TableConfig, key: &Item) -> ApiError {
    ApiError::not_found(format!(
        "no item {} in {}",
        key_text(&table.key, key),
        table.table
    ))
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
            let index_keys: Vec<Value> = t
                .index_keys
                .iter()
                .map(|k| json!({ "name": k.name, "type": k.key_type.as_str(), "sort": k.sort }))
                .collect();
            json!({
                "name": t.table,
                "layout": t.layout.name(),
                "chunkTable": t.chunk_table,
                "key": key,
                "indexKeys": index_keys,
                "ttl": t.ttl,
                "anchors": t.anchors.is_some(),
                // Large payloads go straight to S3 (POST /api/upload/object)
                // when the browser can reach it.
                "s3": t.objects.as_ref().filter(|_| state.direct.contains_key(&t.table)).map(|o| json!({
                    "bucket": o.store.bucket,
                    "thresholdBytes": o.store.threshold,
                })),
            })
        })
        .collect();
    Json(json!({
        "tables": tables,
        "keyPrefix": state.config.key_prefix,
        "maxItemBytes": state.config.max_item_bytes,
        "maxBodyBytes": state.config.upload().max_body_bytes(),
    }))
}

/// Items listed per page by default, and at most.
const PAGE_ITEMS: u32 = 100;
const MAX_PAGE_ITEMS: u32 = 1000;

async fn items(Extract(state): Shared, Query(params): Params) -> Result<Json<Value>, ApiError> {
    let table = state.config.table(param(&params, "table")?)?;
    let limit = match params.get("limit") {
        None => PAGE_ITEMS,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_PAGE_ITEMS).contains(n))
            .ok_or_else(|| {
                ApiError::new(
                    Code::ParameterInvalid,
                    format!("limit must be a whole number from 1 to {MAX_PAGE_ITEMS}"),
                )
            })?,
    };
    let after = params
        .get("cursor")
        .map(|c| cursor_key(table, c))
        .transpose()?;
    let page = crate::inspect::list_page(&state.client, table, limit, after.as_ref()).await?;
    let scope = state.config.scope();
    let rows: Vec<Value> = page
        .items
        .iter()
        .filter(|i| check_scope(&scope, table, &i.key).is_ok())
        .map(StoredItem::to_json)
        .collect();
    let cursor = page.next.map(|key| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(item_to_json(&key).to_string())
    });
    Ok(Json(json!({ "items": rows, "cursor": cursor })))
}

/// The key a `cursor` names: base64url of its DynamoDB JSON, checked as a
/// key of the table like any key a caller sends.
fn cursor_key(table: &TableConfig, cursor: &str) -> Result<Item, ApiError> {
    let invalid = || ApiError::new(Code::ParameterInvalid, "cursor is not one this server gave");
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| invalid())?;
    let json: Value = serde_json::from_slice(&text).map_err(|_| invalid())?;
    let key = item_from_json(&json).map_err(|_| invalid())?;
    let full = table.key.key_of(&key);
    if full.len() != key.len() {
        return Err(invalid());
    }
    crate::get::check_key(table, &full).map_err(|_| invalid())
}

async fn item(Extract(state): Shared, Query(params): Params) -> Result<Response, ApiError> {
    let (table, key) = target(&state, &params)?;
    let _permit = state.read_permit()?;
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
            return Err(ApiError::new(
                Code::AttributeNotBlob,
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
    let _permit = state.read_permit()?;
    let number = |name: &str, default: u64| {
        params.get(name).map_or(Ok(default), |v| {
            v.parse::<u64>().map_err(|_| {
                ApiError::new(
                    Code::ParameterInvalid,
                    format!("{name} must be a whole number"),
                )
            })
        })
    };
    let start = number("start", 0)?;
    let end = number("end", start.saturating_add(4096))?.max(start);
    if end - start > 1 << 20 {
        return Err(ApiError::new(
            Code::ParameterInvalid,
            "a preview is at most 1 MiB",
        ));
    }
    let options = GetOptions {
        max_item_bytes: state.config.max_item_bytes,
        ..GetOptions::default()
    };
    let found = crate::preview::preview(&state.client, table, &key, start..end, &options)
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
    Ok(Json(found.to_json(&key)))
}

async fn remove(Extract(state): Shared, Query(params): Params) -> Result<Json<Value>, ApiError> {
    let (table, key) = target(&state, &params)?;
    let options = PutOptions {
        max_item_bytes: state.config.max_item_bytes,
        ..PutOptions::default()
    };
    let outcome = crate::delete::delete(&state.client, table, &key, &options).await?;
    if !outcome.existed {
        return Err(not_found(table, &key));
    }
    Ok(Json(outcome.to_json(&key)))
}
