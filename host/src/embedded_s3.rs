//! The embedded S3-compatible store: `s3s-fs` (the S3 protocol over a
//! folder) inside this process, beside the embedded DynamoDB store, so
//! payloads go to "S3" on a fresh machine with no AWS account.
//!
//! As with the embedded DynamoDB store, nothing listens ([`EmbeddedS3::open`]):
//! the SDK client reaches it through an in-process connector (`s3s-aws`),
//! and it checks each request's signature against the placeholder
//! credentials. `dynaslice serve` may also serve it on a port of its own
//! for the page ([`EmbeddedS3::listen`]), with a secret key made at launch.
//!
//! `s3s-fs` checks a conditional write before writing, without a lock:
//! two writers racing on one key can both pass. dynaslice never has two
//! writers of one key (each version has its own), but tests of races need
//! a real server (SeaweedFS; see `host/tests/objects.rs`).

use std::path::Path;
#[cfg(feature = "serve")]
use std::time::Duration;
use std::time::SystemTime;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use s3s::auth::SimpleAuth;
use s3s::service::{S3Service, S3ServiceBuilder};

use crate::error::HostError;

/// A running embedded S3 store with its objects under a folder.
#[derive(Clone)]
pub struct EmbeddedS3 {
    client: aws_sdk_s3::Client,
    /// The server [`EmbeddedS3::listen`] runs, stopped with the last clone.
    #[cfg(feature = "serve")]
    _listening: Option<std::sync::Arc<Listening>>,
}

/// Stops the accept loop of a listening store when dropped: requests in
/// flight then finish, within the server's grace.
#[cfg(feature = "serve")]
struct Listening {
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl std::fmt::Debug for EmbeddedS3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmbeddedS3")
    }
}

/// The S3 protocol over the folder `root` (created if missing), answering
/// requests signed with `access_key` and `secret`.
fn service(root: &Path, access_key: &str, secret: &str) -> Result<S3Service, HostError> {
    std::fs::create_dir_all(root).map_err(|e| HostError::io(root.display(), e))?;
    let fs = s3s_fs::FileSystem::new(root).map_err(|e| HostError::Embedded(format!("{e:?}")))?;
    let mut builder = S3ServiceBuilder::new(fs);
    builder.set_auth(SimpleAuth::from_single(access_key, secret));
    Ok(builder.build())
}

impl EmbeddedS3 {
    /// Opens the store with its buckets as folders of `root` (created if
    /// missing).
    pub fn open(root: &Path) -> Result<Self, HostError> {
        let service = service(root, "dynaslice", "dynaslice")?;
        // The endpoint is never contacted: the connector answers every request.
        let config = crate::objects::local_s3_config("http://s3.embedded.invalid")
            .http_client(Dated(s3s_aws::Client::from(service)))
            .build();
        Ok(Self {
            client: aws_sdk_s3::Client::from_conf(config),
            #[cfg(feature = "serve")]
            _listening: None,
        })
    }

    /// An SDK client whose requests this store answers (in process, or
    /// through its port when it listens).
    pub fn client(&self) -> aws_sdk_s3::Client {
        self.client.clone()
    }
}

/// The in-process client, its answers dated as any server's are: `gc`
/// judges an object's age by the `Date` of S3's answers (here this
/// process's clock, which is the store's).
#[derive(Debug)]
struct Dated(s3s_aws::Client);

impl HttpClient for Dated {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(DatedConnector(self.0.http_connector(settings, components)))
    }
}

#[derive(Debug)]
struct DatedConnector(SharedHttpConnector);

impl HttpConnector for DatedConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let answer = self.0.call(request);
        HttpConnectorFuture::new(async move {
            let mut response = answer.await?;
            let date = httpdate::fmt_http_date(SystemTime::now());
            response.headers_mut().insert("date", date);
            Ok(response)
        })
    }
}

/// Serving the store over HTTP, for a page that uploads straight to it
/// (`dynaslice serve` on the embedded store).
#[cfg(feature = "serve")]
impl EmbeddedS3 {
    /// Opens the store as [`EmbeddedS3::open`] does and serves it on `ip`,
    /// on a port of its own, until the last clone of the value returned is
    /// dropped (connections open then finish). Every request must be
    /// signed with a secret key made for this launch (the client returned
    /// holds it, and presigns with it; no one else knows it), and CORS lets
    /// only pages of `page_origins` (the server's own) send the presigned
    /// PUTs and read the answers.
    pub async fn listen(
        root: &Path,
        ip: std::net::IpAddr,
        page_origins: std::collections::BTreeSet<String>,
        limits: &crate::serve::ServeLimits,
    ) -> Result<Self, HostError> {
        use axum::http::{Method, header};
        use tower_http::cors::{AllowHeaders, AllowOrigin, Cors};

        const ACCESS_KEY: &str = "dynaslice-embedded";
        let secret = crate::serve::fresh_token()?;
        let service = service(root, ACCESS_KEY, &secret)?;
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .map_err(|e| HostError::Input(format!("cannot listen on {ip} for S3: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| HostError::Internal(e.to_string()))?;
        let allowed = move |origin: &header::HeaderValue, _: &axum::http::request::Parts| {
            origin
                .to_str()
                .is_ok_and(|o| page_origins.contains(&o.to_ascii_lowercase()))
        };
        let app = Cors::new(service)
            .allow_origin(AllowOrigin::predicate(allowed))
            .allow_methods([Method::GET, Method::HEAD, Method::PUT])
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers([header::ETAG])
            .max_age(Duration::from_secs(600));
        // As the page's own server: its header timeout, connection bound
        // and graceful stop (when the last clone is dropped).
        let limits = limits.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            crate::serve::serve_connections(listener, app, &limits, shutdown).await;
        });
        let credentials =
            aws_sdk_s3::config::Credentials::new(ACCESS_KEY, secret, None, None, "embedded");
        let config = crate::objects::local_s3_config(&format!("http://{addr}"))
            .credentials_provider(credentials)
            .build();
        Ok(Self {
            client: aws_sdk_s3::Client::from_conf(config),
            _listening: Some(std::sync::Arc::new(Listening { _stop: stop })),
        })
    }
}
