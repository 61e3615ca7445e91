//! `dynaslice serve`: the web page, the npm package, and a small JSON/HTTP
//! API over the host's functions (docs/API.md). Loopback by default; the
//! browser never sees AWS credentials, and nothing it sends is trusted.

mod api;
mod upload;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use aws_sdk_dynamodb::Client;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use dynaslice_core::{AttributeValue, Item};
use serde_json::json;

use crate::error::HostError;
use crate::table::TableConfig;

pub use upload::UPLOAD_MAGIC;

/// What the server allows and where its files are.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The tables the API may touch, by name.
    pub tables: BTreeMap<String, TableConfig>,
    /// Partition keys must be strings starting with this, when set.
    pub key_prefix: Option<String>,
    /// The largest item accepted, in raw payload bytes.
    pub max_item_bytes: usize,
    /// The web page's folder (`www/`).
    pub www: PathBuf,
    /// The npm package's folder (`wasm/`), served at `/pkg/dynaslice/`.
    pub pkg: PathBuf,
}

impl ServeConfig {
    /// The largest upload body: the item, its chunk overhead and a header.
    pub fn max_body_bytes(&self) -> usize {
        self.max_item_bytes + self.max_item_bytes / 64 + (2 << 20)
    }

    fn table(&self, name: &str) -> Result<&TableConfig, ApiError> {
        self.tables.get(name).ok_or_else(|| ApiError {
            status: StatusCode::FORBIDDEN,
            code: "TABLE_NOT_ALLOWED",
            message: format!("table {name} is not on this server's allow-list"),
        })
    }

    /// Refuses a key outside the configured prefix.
    fn check_scope(&self, table: &TableConfig, item: &Item) -> Result<(), ApiError> {
        let Some(prefix) = &self.key_prefix else {
            return Ok(());
        };
        match item.get(&table.key.partition.name) {
            Some(AttributeValue::S(pk)) if pk.starts_with(prefix.as_str()) => Ok(()),
            _ => Err(ApiError {
                status: StatusCode::FORBIDDEN,
                code: "KEY_OUT_OF_SCOPE",
                message: format!(
                    "partition key {} must be a string starting with {prefix:?}",
                    table.key.partition.name
                ),
            }),
        }
    }
}

/// An API error: a status, a stable code and a sentence.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn bad(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code,
            message: message.into(),
        }
    }

    fn too_large(limit: usize) -> Self {
        Self {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "BODY_TOO_LARGE",
            message: format!("upload body is over this server's limit of {limit} bytes"),
        }
    }

    fn not_found(what: String) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            code: "NOT_FOUND",
            message: what,
        }
    }
}

impl From<HostError> for ApiError {
    fn from(error: HostError) -> Self {
        let code = error.code();
        let status = match code {
            "CONFLICT" => StatusCode::CONFLICT,
            "TABLE_NOT_FOUND" => StatusCode::NOT_FOUND,
            "VIRTUAL_ITEM_TOO_LARGE" | "DECOMPRESS_LIMIT" => StatusCode::PAYLOAD_TOO_LARGE,
            "CONNECTION_FAILED" => StatusCode::SERVICE_UNAVAILABLE,
            "DYNAMODB_ERROR" | "EMBEDDED_STORE" | "IO_ERROR" | "CHUNKS_VANISHED" => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
            _ => StatusCode::BAD_REQUEST,
        };
        Self {
            status,
            code,
            message: error.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        (self.status, Json(body)).into_response()
    }
}

struct State {
    client: Client,
    config: ServeConfig,
}

/// Serves until `shutdown` resolves. `on_ready` gets the bound address.
pub async fn serve(
    client: Client,
    config: ServeConfig,
    listen: SocketAddr,
    on_ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), HostError> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| HostError::Input(format!("cannot listen on {listen}: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| HostError::Input(e.to_string()))?;
    let router = api::router(Arc::new(State { client, config }));
    on_ready(addr);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| HostError::Input(format!("server failed: {e}")))
}
