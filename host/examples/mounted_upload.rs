//! A backend that mounts dynaslice's upload verification behind its own
//! authentication: each bearer token is a user, and a user may write and
//! read only partition keys starting with `<user>/`.
//!
//! ```sh
//! DYNASLICE_USERS="alice:alice-secret-token,bob:bob-secret-token" \
//!   cargo run -p dynaslice-host --example mounted_upload
//! ```
//!
//! Then a browser (or any client) splits an item with the npm package and
//! sends `POST /upload?table=docs` with `Authorization: Bearer
//! alice-secret-token` and the `DSU1` body (docs/API.md); `GET
//! /items/{pk}` reads it back whole. The store is the embedded one, in
//! memory, unless `DYNASLICE_ENDPOINT` names a DynamoDB-compatible server.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType};
use dynaslice_host::serve::{KeyScope, UploadConfig, upload_router};
use dynaslice_host::{EmbeddedStore, GetOptions, TableConfig, create_tables, local_client};
use serde_json::json;

/// Who a bearer token belongs to.
type Users = Arc<BTreeMap<String, String>>;

/// The authenticated user, put on the request by [`authenticate`].
#[derive(Clone)]
struct User(String);

/// The application: its own authentication in front of dynaslice's upload
/// router, and a read route of its own.
fn app(client: Client, table: TableConfig, users: Users) -> Router {
    let uploads = UploadConfig {
        tables: BTreeMap::from([(table.table.clone(), table.clone())]),
        max_item_bytes: 64 << 20,
        body_idle_timeout: Duration::from_secs(30),
        body_timeout: Duration::from_secs(600),
    };
    Router::new()
        .nest("/upload", upload_router(client.clone(), uploads, 4))
        .route("/items/{pk}", get(read_item))
        .with_state((client, table))
        .layer(middleware::from_fn_with_state(users, authenticate))
}

/// Maps `Authorization: Bearer <token>` to a user and scopes their keys to
/// `<user>/`; anything else is 401.
async fn authenticate(State(users): State<Users>, mut request: Request, next: Next) -> Response {
    let user = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|token| users.get(token))
        .cloned();
    let Some(user) = user else {
        return (StatusCode::UNAUTHORIZED, "a bearer token is required").into_response();
    };
    request
        .extensions_mut()
        .insert(KeyScope::Prefix(format!("{user}/")));
    request.extensions_mut().insert(User(user));
    next.run(request).await
}

/// `GET /items/{pk}`: the item, reassembled and checked, as DynamoDB JSON.
async fn read_item(
    State((client, table)): State<(Client, TableConfig)>,
    axum::Extension(User(user)): axum::Extension<User>,
    Path(pk): Path<String>,
) -> Response {
    if !pk.starts_with(&format!("{user}/")) {
        return (StatusCode::FORBIDDEN, "not your key").into_response();
    }
    let mut key = Item::new();
    key.insert("pk".into(), AttributeValue::S(pk));
    match dynaslice_host::get(&client, &table, &key, &GetOptions::default(), &()).await {
        Ok(Some(found)) => Json(dynaslice_host::json::item_to_json(&found.item)).into_response(),
        Ok(None) => (StatusCode::NOT_FOUND, "no such item").into_response(),
        // The code only: the message of a store error can name accounts and
        // resources (`dynaslice serve` logs it and sends a sentence).
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({ "error": { "code": e.code().as_str() } })),
        )
            .into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let users: BTreeMap<String, String> = std::env::var("DYNASLICE_USERS")
        .map_err(|_| "set DYNASLICE_USERS=user:token,...")?
        .split(',')
        .filter_map(|pair| pair.split_once(':'))
        .map(|(user, token)| (token.to_string(), user.to_string()))
        .collect();
    let (client, _store) = match std::env::var("DYNASLICE_ENDPOINT") {
        Ok(url) if !url.is_empty() => (local_client(&url), None),
        _ => {
            let store = EmbeddedStore::open(None)?;
            (store.client(), Some(store))
        }
    };
    let table = TableConfig::chunk_table("docs", KeySchema::partition("pk", KeyType::S));
    create_tables(&client, &table).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!(
        "mounted_upload listening on http://{}",
        listener.local_addr()?
    );
    axum::serve(listener, app(client, table, Arc::new(users))).await?;
    Ok(())
}
