//! The embedded store: dynoxide (a DynamoDB-compatible engine on SQLite)
//! inside this process, so dynaslice works on a fresh machine with no AWS
//! account.
//!
//! The SDK client reaches it through an in-process connector, never a
//! socket: dynoxide's own HTTP server answers every origin's CORS preflight
//! and checks no signature, so any web page that found its port could use
//! the raw DynamoDB API and bypass every check of the host. Here nothing
//! listens: requests go from the SDK straight to the engine, in the
//! DynamoDB JSON protocol, and nothing outside this process can send one.

use std::path::Path;
use std::time::SystemTime;

use aws_sdk_dynamodb::Client;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use dynoxide::Database;

use crate::error::HostError;

/// A running embedded store. Clients made by [`EmbeddedStore::client`] share
/// it; the data is closed when the store and every client are dropped.
#[derive(Clone)]
pub struct EmbeddedStore {
    db: Database,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmbeddedStore")
    }
}

impl EmbeddedStore {
    /// Opens the store with its data in the SQLite file `path` (created with
    /// its folder if missing), or in memory when `path` is `None`.
    pub fn open(path: Option<&Path>) -> Result<Self, HostError> {
        let db = match path {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| HostError::io(dir.display(), e))?;
                }
                let text = path.to_str().ok_or_else(|| {
                    HostError::Embedded(format!("path {} is not UTF-8", path.display()))
                })?;
                Database::new(text)
            }
            None => Database::memory(),
        }
        .map_err(|e| HostError::Embedded(e.to_string()))?;
        Ok(Self { db })
    }

    /// The underlying engine, for a test or tool that serves it itself.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// An SDK client whose requests this store answers in process, with the
    /// settings of [`crate::local_client`].
    pub fn client(&self) -> Client {
        let connector = InProcess {
            db: self.db.clone(),
        };
        // The endpoint is never contacted: the connector answers every request.
        let config = crate::client::local_config("http://embedded.invalid")
            .http_client(SharedHttpClient::new(connector))
            .build();
        Client::from_conf(config)
    }
}

/// The in-process connector: one request, one engine call, one response.
#[derive(Clone)]
struct InProcess {
    db: Database,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InProcess")
    }
}

impl HttpClient for InProcess {
    fn http_connector(
        &self,
        _settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(self.clone())
    }
}

impl HttpConnector for InProcess {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let db = self.db.clone();
        let operation = request
            .headers()
            .get("x-amz-target")
            .and_then(|t| t.strip_prefix("DynamoDB_20120810."))
            .map(str::to_string);
        let body = request.body().bytes().map(<[u8]>::to_vec);
        HttpConnectorFuture::new(async move {
            let (Some(operation), Some(body)) = (operation, body) else {
                return Err(ConnectorError::other(
                    "the embedded store takes DynamoDB JSON requests only".into(),
                    None,
                ));
            };
            // SQLite blocks: keep it off the runtime's workers.
            let (status, body) =
                tokio::task::spawn_blocking(move || answer(&db, &operation, &body))
                    .await
                    .map_err(|e| ConnectorError::other(Box::new(e), None))?;
            let mut response = HttpResponse::new(
                StatusCode::try_from(status).unwrap_or_else(|_| StatusCode::try_from(500).unwrap()),
                SdkBody::from(body),
            );
            let headers = response.headers_mut();
            headers.insert("content-type", "application/x-amz-json-1.0");
            // The store's clock, as any server's Date header: writers and gc
            // judge chunk ages by it (core's `protocol::StoreClock`).
            headers.insert("date", httpdate::fmt_http_date(SystemTime::now()));
            Ok(response)
        })
    }
}

/// Runs one operation: its status and its DynamoDB JSON body.
fn answer(db: &Database, operation: &str, body: &[u8]) -> (u16, String) {
    macro_rules! operations {
        ($($name:literal => $method:ident),* $(,)?) => {
            match operation {
                $($name => serde_json::from_slice(body)
                    .map_err(serialization)
                    .and_then(|request| db.$method(request).map_err(Failure::Engine))
                    .and_then(|response| serde_json::to_string(&response).map_err(serialization)),)*
                _ => Err(Failure::Unknown),
            }
        };
    }
    let result = operations!(
        "CreateTable" => create_table,
        "DeleteTable" => delete_table,
        "DescribeTable" => describe_table,
        "ListTables" => list_tables,
        "UpdateTable" => update_table,
        "UpdateTimeToLive" => update_time_to_live,
        "DescribeTimeToLive" => describe_time_to_live,
        "PutItem" => put_item,
        "GetItem" => get_item,
        "DeleteItem" => delete_item,
        "UpdateItem" => update_item,
        "Query" => query,
        "Scan" => scan,
        "BatchGetItem" => batch_get_item,
        "BatchWriteItem" => batch_write_item,
        "TransactWriteItems" => transact_write_items,
        "TransactGetItems" => transact_get_items,
    );
    match result {
        Ok(json) => (200, json),
        Err(Failure::Engine(e)) => (e.status_code(), e.to_json()),
        Err(Failure::Request(message)) => (400, request_error(&message)),
        Err(Failure::Unknown) => (
            400,
            r#"{"__type":"com.amazon.coral.service#UnknownOperationException"}"#.to_string(),
        ),
    }
}

enum Failure {
    Engine(dynoxide::DynoxideError),
    Request(String),
    Unknown,
}

fn serialization(e: serde_json::Error) -> Failure {
    Failure::Request(e.to_string())
}

/// The error a request the engine's types refused gets, as dynoxide's own
/// server words it: its decoders mark DynamoDB's validation failures with a
/// `VALIDATION:` prefix (and `VALIDATION_REQUEST:`, `SERIALIZATION:`);
/// serde appends a position, which DynamoDB never shows.
fn request_error(message: &str) -> String {
    let message = message
        .rsplit_once(" at line ")
        .map_or(message, |(text, _)| text);
    let (kind, text) = if let Some(rest) = message
        .strip_prefix("VALIDATION_REQUEST:")
        .or_else(|| message.strip_prefix("VALIDATION:"))
    {
        ("com.amazon.coral.validate#ValidationException", rest)
    } else if let Some(rest) = message.strip_prefix("SERIALIZATION:") {
        ("com.amazon.coral.service#SerializationException", rest)
    } else if message.contains("missing field") || message.contains("unknown variant") {
        ("com.amazon.coral.validate#ValidationException", message)
    } else {
        ("com.amazon.coral.service#SerializationException", message)
    };
    serde_json::json!({ "__type": kind, "message": text.trim() }).to_string()
}
