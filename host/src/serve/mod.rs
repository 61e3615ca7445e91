//! `dynaslice serve`: the web page, the npm package, and a small JSON/HTTP
//! API over the host's functions (docs/API.md). Loopback by default; the
//! browser never sees AWS credentials, and nothing it sends is trusted.
//!
//! Who may call the API is the guard's business (`guard.rs`: Host
//! allow-list, same-origin checks, the per-launch token, security headers);
//! how much one request may take is bounded here: header, body and idle
//! timeouts, and a limit on heavy requests in flight.

mod api;
mod guard;
mod object_upload;
mod status;
mod upload;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use dynaslice_core::{AttributeValue, Code, Item};
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::HostError;
use crate::table::TableConfig;

use guard::Guard;
pub use guard::{TOKEN_HEADER, fresh_token};
pub use status::status_of;
pub use upload::{KeyScope, UPLOAD_MAGIC, UploadConfig, upload_router};

/// How much the server gives one client.
#[derive(Clone, Debug)]
pub struct ServeLimits {
    /// Uploads in flight at once; more are refused with 503 (default 4).
    pub max_uploads: usize,
    /// Whole-item reads and previews in flight at once (default 8).
    pub max_reads: usize,
    /// Time to send a request's headers, and to start the next request on
    /// an idle connection (default 10 s).
    pub header_timeout: Duration,
    /// Longest pause while a body is sent (default 30 s).
    pub body_idle_timeout: Duration,
    /// Longest a whole upload body may take (default 10 min).
    pub body_timeout: Duration,
    /// Connections open at once; more wait to be accepted (default 256).
    pub max_connections: usize,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            max_uploads: 4,
            max_reads: 8,
            header_timeout: Duration::from_secs(10),
            body_idle_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(600),
            max_connections: 256,
        }
    }
}

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
    /// The per-launch secret every API call must carry ([`TOKEN_HEADER`]).
    pub token: String,
    /// Host names answered besides the listen address and loopback names.
    pub allowed_hosts: Vec<String>,
    /// Time and concurrency bounds.
    pub limits: ServeLimits,
    /// The folder of the embedded S3 store the tables' objects are in,
    /// when they are ([`crate::EmbeddedS3`]): served on a port of its own
    /// beside the page when the server listens on one address (not
    /// `0.0.0.0`), so the page uploads straight to it; else the page sends
    /// payloads through the server.
    pub embedded_s3: Option<PathBuf>,
}

impl ServeConfig {
    fn table(&self, name: &str) -> Result<&TableConfig, ApiError> {
        self.tables.get(name).ok_or_else(|| {
            ApiError::new(
                Code::TableNotAllowed,
                format!("table {name} is not on this server's allow-list"),
            )
        })
    }

    /// The key scope every request of this server is held to.
    fn scope(&self) -> KeyScope {
        self.key_prefix
            .clone()
            .map_or(KeyScope::Any, KeyScope::Prefix)
    }

    /// The upload rules of this server.
    fn upload(&self) -> UploadConfig {
        UploadConfig {
            tables: self.tables.clone(),
            max_item_bytes: self.max_item_bytes,
            body_idle_timeout: self.limits.body_idle_timeout,
            body_timeout: self.limits.body_timeout,
        }
    }
}

/// Refuses a key outside `scope`.
fn check_scope(scope: &KeyScope, table: &TableConfig, item: &Item) -> Result<(), ApiError> {
    let pk = match item.get(&table.key.partition.name) {
        Some(AttributeValue::S(pk)) => Some(pk.as_str()),
        _ => None,
    };
    if scope.allows(pk) {
        return Ok(());
    }
    Err(ApiError::new(
        Code::KeyOutOfScope,
        format!(
            "partition key {} is outside what this caller may use",
            table.key.partition.name
        ),
    ))
}

/// An API error: a status, a stable code and a sentence.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: Code,
    message: String,
}

impl ApiError {
    /// An error with its code and sentence; the status is the code's
    /// category's ([`status_of`]).
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        let status = status_of(code.category()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// The same error answered with another status (an upload's damaged
    /// data is the uploader's fault, not the store's).
    fn with_status(self, status: StatusCode) -> Self {
        Self { status, ..self }
    }

    /// Its HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Its stable code.
    pub fn code(&self) -> Code {
        self.code
    }

    fn too_large(limit: usize) -> Self {
        Self::new(
            Code::BodyTooLarge,
            format!("upload body is over this server's limit of {limit} bytes"),
        )
    }

    fn busy(what: &str) -> Self {
        Self::new(
            Code::ServerBusy,
            format!("too many {what} in flight; try again shortly"),
        )
    }

    fn not_found(what: String) -> Self {
        Self::new(Code::NotFound, what)
    }
}

impl From<HostError> for ApiError {
    fn from(error: HostError) -> Self {
        let code = error.code();
        // What the store said stays in the server's log: its messages can
        // name accounts, roles and resources the browser has no business
        // knowing. The browser gets the code and a sentence.
        let message = match &error {
            HostError::Dynamo { operation, .. } => {
                eprintln!("dynaslice serve: {error} [{code}]");
                format!("the store could not complete {operation}")
            }
            HostError::Embedded(_) | HostError::Io { .. } => {
                eprintln!("dynaslice serve: {error} [{code}]");
                "the server failed; its log says why".to_string()
            }
            _ => error.to_string(),
        };
        Self::new(code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code.as_str(), "message": self.message } });
        (self.status, Json(body)).into_response()
    }
}

struct State {
    client: Client,
    config: ServeConfig,
    reads: Arc<Semaphore>,
    /// The tables whose S3 store a browser can reach (the embedded one
    /// only when it listens): the page uploads straight to those.
    direct: BTreeMap<String, String>,
}

impl State {
    /// A permit for a heavy read, or 503 when too many are in flight.
    fn read_permit(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.reads)
            .try_acquire_owned()
            .map_err(|_| ApiError::busy("reads"))
    }
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
        .map_err(|e| HostError::Internal(e.to_string()))?;
    let index = config.www.join("index.html");
    let index_html =
        std::fs::read_to_string(&index).map_err(|e| HostError::io(index.display(), e))?;
    // The embedded S3 store's server, if it listens, runs as long as this one.
    #[cfg(feature = "embedded")]
    let (config, _embedded_s3) = serve_embedded_s3(config, addr).await?;
    let direct = s3_origins(&config.tables).await;
    let guard = Guard::new(
        addr,
        &config.allowed_hosts,
        config.token.clone(),
        &index_html,
        &direct.values().cloned().collect::<Vec<_>>(),
    )?;
    let limits = config.limits.clone();
    let state = State {
        client,
        reads: Arc::new(Semaphore::new(limits.max_reads.max(1))),
        config,
        direct,
    };
    let router = api::router(Arc::new(state), Arc::new(guard));
    on_ready(addr);
    serve_connections(listener, router, &limits, shutdown).await;
    Ok(())
}

/// The embedded S3 store, when the tables' objects are in it, served to
/// the page beside the server at `addr` (on one address, not `0.0.0.0`),
/// the tables' objects reached through that server.
#[cfg(feature = "embedded")]
async fn serve_embedded_s3(
    mut config: ServeConfig,
    addr: SocketAddr,
) -> Result<(ServeConfig, Option<crate::EmbeddedS3>), HostError> {
    let Some(root) = &config.embedded_s3 else {
        return Ok((config, None));
    };
    if addr.ip().is_unspecified() {
        return Ok((config, None));
    }
    let origins = guard::page_origins(addr, &config.allowed_hosts);
    let store = crate::EmbeddedS3::listen(root, addr.ip(), origins, &config.limits).await?;
    for objects in config
        .tables
        .values_mut()
        .filter_map(|t| t.objects.as_mut())
    {
        objects.client = store.client();
    }
    Ok((config, Some(store)))
}

/// The origin of each table's S3 endpoint, which the page PUTs to
/// straight: as a presigned URL names it (presigning is done here, nothing
/// is sent). The embedded store answered in process has no address, and is
/// left out.
async fn s3_origins(tables: &BTreeMap<String, TableConfig>) -> BTreeMap<String, String> {
    let mut origins = BTreeMap::new();
    for (name, objects) in tables
        .iter()
        .filter_map(|(n, t)| Some((n, t.objects.as_ref()?)))
    {
        let Ok(config) =
            aws_sdk_s3::presigning::PresigningConfig::expires_in(Duration::from_secs(60))
        else {
            continue;
        };
        let presigned = objects
            .client
            .get_object()
            .bucket(&objects.store.bucket)
            .key(&objects.store.prefix)
            .presigned(config)
            .await;
        let Ok(uri) = presigned.map(|p| p.uri().to_string()) else {
            continue;
        };
        if let Ok(uri) = uri.parse::<axum::http::Uri>()
            && let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority())
            && !authority.host().ends_with(".invalid")
        {
            origins.insert(name.clone(), format!("{scheme}://{authority}"));
        }
    }
    origins
}

/// The accept loop: HTTP/1 with a header timeout (hyper's timer, which
/// `axum::serve` does not install), a bound on open connections, and a
/// graceful stop that lets requests in flight finish. For any tower
/// service: the page's router, or the embedded S3 store served beside it.
pub(crate) async fn serve_connections<S, B>(
    listener: tokio::net::TcpListener,
    service: S,
    limits: &ServeLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) where
    S: tower_service::Service<
            axum::http::Request<hyper::body::Incoming>,
            Response = axum::http::Response<B>,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let connections = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit,
            () = &mut shutdown => break,
        };
        let Ok(permit) = permit else { break };
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A failed accept (out of descriptors, a reset) ends one
                // connection, not the server; a pause keeps a lasting
                // failure from spinning a core.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(service.clone());
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    // Requests in flight finish; a client that holds its connection open
    // does not hold the shutdown past the header timeout's worth of grace.
    let _ = tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stores_own_words_never_reach_the_browser() {
        let leaky = HostError::Dynamo {
            operation: "PutItem",
            aws_code: "AccessDeniedException".into(),
            message: "User: arn:aws:sts::123456789012:assumed-role/app/x is not authorized".into(),
            attempts: 1,
        };
        let api = ApiError::from(leaky);
        assert_eq!(api.code(), "DYNAMODB_ERROR");
        assert_eq!(api.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!api.message.contains("arn:") && !api.message.contains("123456789012"));
        assert!(api.message.contains("PutItem"), "{}", api.message);
        // Our own errors keep their sentence.
        let conflict = ApiError::from(HostError::Conflict { key: "k".into() });
        assert_eq!(conflict.status(), StatusCode::CONFLICT);
        assert!(conflict.message.contains("another writer"));
    }
}
