//! Retries with bounded exponential backoff and full jitter (the AWS
//! Architecture Blog's "Exponential Backoff and Jitter"): attempt `n` sleeps
//! a uniform random time in `[0, min(max_delay, base * 2^n))`. The SDK's own
//! retries are switched off (see [`crate::client`]), so this is the one
//! place that decides, and every caller gets the same bound.

use std::future::Future;
use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};

/// How often and how patiently to retry a request that failed transiently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// Attempts in all while the service answers that it is over a rate
    /// (throttling). DynamoDB throttles a hot partition or a table past its
    /// rate until capacity frees up, which takes seconds rather than a
    /// fault's milliseconds: giving up after `max_attempts` would fail a
    /// write that a one-partition layout merely makes slow.
    pub max_throttled_attempts: u32,
    /// The first backoff's upper bound.
    pub base_delay: Duration,
    /// No backoff is longer than this.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 10 attempts, 25 ms doubling to at most 2 s: a request survives a 30 %
    /// failure rate with probability 1 - 0.3^10 (about 1 in 170,000 fails).
    /// 50 while throttled: over a minute of backoff before giving up.
    fn default() -> Self {
        Self {
            max_attempts: 10,
            max_throttled_attempts: 50,
            base_delay: Duration::from_millis(25),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// The sleep before retry number `retry` (0 for the first retry).
    pub fn backoff(&self, retry: u32) -> Duration {
        let ceiling = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX))
            .min(self.max_delay);
        ceiling.mul_f64(fastrand::f64())
    }

    /// The attempts allowed in all when the last one failed with `error`.
    fn attempts_after<E: ProvideErrorMetadata>(&self, error: &SdkError<E, HttpResponse>) -> u32 {
        let limit = if is_throttled(error) {
            self.max_throttled_attempts.max(self.max_attempts)
        } else {
            self.max_attempts
        };
        limit.max(1)
    }

    /// Runs `call` until it succeeds, fails for good, or attempts run out.
    /// Returns the last result and the attempts made.
    pub(crate) async fn run<T, E, F, Fut>(
        &self,
        call: F,
    ) -> (Result<T, SdkError<E, HttpResponse>>, u32)
    where
        E: ProvideErrorMetadata,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    {
        self.run_if(is_transient, call).await
    }

    /// [`RetryPolicy::run`], retrying the errors `transient` picks.
    pub(crate) async fn run_if<T, E, F, Fut>(
        &self,
        transient: impl Fn(&SdkError<E, HttpResponse>) -> bool,
        mut call: F,
    ) -> (Result<T, SdkError<E, HttpResponse>>, u32)
    where
        E: ProvideErrorMetadata,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = call().await;
            match &result {
                Err(e) if attempt < self.attempts_after(e) && transient(e) => {
                    tokio::time::sleep(self.backoff(attempt - 1)).await;
                }
                _ => return (result, attempt),
            }
        }
    }
}

/// DynamoDB error codes that mean "try again later".
const TRANSIENT_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
];

/// DynamoDB error codes of a request refused before it was carried out
/// (throttling): a resend cannot apply it twice.
const THROTTLING_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
];

/// True when DynamoDB answered that it throttled the request (over a
/// table's or a partition's rate): it was not carried out. These get
/// `max_throttled_attempts`, and the pace of requests in flight halves on
/// them. Only these errors may resend a last-writer-wins commit;
/// every other transient failure (a 500, a lost connection, a timeout) may
/// come after the write was applied.
pub(crate) fn is_throttled<E: ProvideErrorMetadata>(error: &SdkError<E, HttpResponse>) -> bool {
    match error {
        SdkError::ServiceError(service) => service
            .err()
            .code()
            .is_some_and(|c| THROTTLING_CODES.contains(&c)),
        _ => false,
    }
}

/// True for throttling, server errors and transport failures: the request
/// may be sent again unchanged. (A write that may have been applied is
/// still safe to resend when it is idempotent or conditional: chunk puts
/// are, and a commit's condition failing on a resend is resolved by
/// re-reading the parent. An unconditional commit is neither: see
/// [`is_throttled`].)
pub(crate) fn is_transient<E: ProvideErrorMetadata>(error: &SdkError<E, HttpResponse>) -> bool {
    match error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => {
            service.raw().status().as_u16() >= 500
                || service
                    .err()
                    .code()
                    .is_some_and(|c| TRANSIENT_CODES.contains(&c))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::error::ErrorMetadata;
    use aws_sdk_dynamodb::operation::get_item::GetItemError;
    use aws_smithy_types::body::SdkBody;

    fn service_error(code: &str) -> SdkError<GetItemError, HttpResponse> {
        let error = GetItemError::generic(ErrorMetadata::builder().code(code).build());
        let status = if code == "InternalServerError" {
            500
        } else {
            400
        };
        SdkError::service_error(
            error,
            HttpResponse::new(status.try_into().unwrap(), SdkBody::empty()),
        )
    }

    /// Attempts made against an error that never goes away.
    async fn attempts_against(policy: RetryPolicy, code: &str) -> u32 {
        let (result, attempts) = policy
            .run(|| async { Err::<(), _>(service_error(code)) })
            .await;
        assert!(result.is_err());
        attempts
    }

    #[tokio::test]
    async fn throttling_is_retried_longer_than_faults() {
        let policy = RetryPolicy {
            max_attempts: 3,
            max_throttled_attempts: 7,
            base_delay: Duration::from_micros(10),
            max_delay: Duration::from_micros(100),
        };
        for code in [
            "ProvisionedThroughputExceededException",
            "ThrottlingException",
            "RequestLimitExceeded",
        ] {
            assert_eq!(attempts_against(policy, code).await, 7, "{code}");
        }
        assert_eq!(attempts_against(policy, "InternalServerError").await, 3);
        assert_eq!(attempts_against(policy, "ValidationException").await, 1);
        // Never fewer throttled attempts than attempts.
        let odd = RetryPolicy {
            max_throttled_attempts: 1,
            ..policy
        };
        assert_eq!(attempts_against(odd, "ThrottlingException").await, 3);
    }

    #[test]
    fn backoff_is_bounded_and_grows() {
        let policy = RetryPolicy::default();
        for retry in 0..64 {
            let ceiling =
                (policy.base_delay * 2u32.saturating_pow(retry.min(20))).min(policy.max_delay);
            for _ in 0..50 {
                assert!(policy.backoff(retry) <= ceiling, "retry {retry}");
            }
        }
        // Full jitter: late retries spread over the whole window, not near 0 only.
        let late: Vec<Duration> = (0..200).map(|_| policy.backoff(20)).collect();
        assert!(late.iter().any(|d| *d > policy.max_delay / 2));
        assert!(late.iter().any(|d| *d < policy.max_delay / 2));
    }
}
