//! SDK clients: for a local endpoint (dummy credentials) or for AWS (the
//! standard credential chain). Both have the SDK's own retries switched off:
//! [`crate::RetryPolicy`] retries every request, so there is one bound.

use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, Region};

/// Connect and per-attempt timeouts: a 16 MB batch on a busy local store
/// takes seconds, a hung connection must not take forever.
fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(10))
        .operation_attempt_timeout(Duration::from_secs(120))
        .build()
}

/// A client for a DynamoDB-compatible server at `url` (local servers accept
/// any credentials; these are fixed placeholders, region `us-east-1`).
pub fn local_client(url: &str) -> Client {
    Client::from_conf(local_config(url).build())
}

/// The configuration of [`local_client`], for a caller that adds to it
/// (the embedded store's in-process connector).
pub(crate) fn local_config(url: &str) -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(url)
        .region(Region::new("us-east-1"))
        .credentials_provider(local_credentials())
        .retry_config(RetryConfig::disabled())
        .timeout_config(timeouts())
}

/// The placeholder credentials every local server gets (DynamoDB's and
/// S3's: local servers accept or check exactly these).
pub(crate) fn local_credentials() -> Credentials {
    Credentials::new("dynaslice", "dynaslice", None, None, "dynaslice-local")
}

/// The standard AWS credential chain and region, with the SDK's own
/// retries off and `timeouts`: what a client for real AWS is made from.
pub(crate) async fn aws_config(timeouts: TimeoutConfig) -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .retry_config(RetryConfig::disabled())
        .timeout_config(timeouts)
        .load()
        .await
}

/// A client for real DynamoDB with the standard AWS credential chain and
/// region (environment, profile, SSO cache, instance metadata).
pub async fn aws_client() -> Client {
    Client::new(&aws_config(timeouts()).await)
}
