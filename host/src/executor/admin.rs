//! Requests outside the protocols (describing and creating tables), resent
//! by core's rules: the same retry policy, the same judgement of which
//! failures are worth another attempt.

use std::future::Future;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use dynaslice_core::protocol::RetryPolicy;

use super::failure_of;
use crate::error::HostError;

/// Runs `call` until it succeeds, fails for good, or the default retry
/// policy's attempts run out. A failure comes back with the error itself,
/// for the caller that tells one service error from another.
pub(crate) async fn with_retries<T, E, F, Fut>(
    call: F,
) -> Result<T, (SdkError<E, HttpResponse>, u32)>
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
{
    let policy = RetryPolicy::default();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let error = match call().await {
            Ok(output) => return Ok(output),
            Err(error) => error,
        };
        let failure = failure_of(&error);
        if !failure.transient() || attempts >= policy.attempts(failure.throttled()) {
            return Err((error, attempts));
        }
        tokio::time::sleep(policy.backoff(attempts - 1, fastrand::f64())).await;
    }
}

/// The error of an admin request that failed for good.
pub(crate) fn admin_error<E>(
    operation: &'static str,
    (error, attempts): (SdkError<E, HttpResponse>, u32),
) -> HostError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    HostError::dynamo(operation, error, attempts)
}
