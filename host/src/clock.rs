//! Time as the store tells it.
//!
//! `gc` judges an unreferenced chunk's age by the time inside its version id.
//! If that time came from the writer's clock alone, a writer whose clock runs
//! behind by more than the grace period (a laptop, a drifting container)
//! would write chunks that a `gc` elsewhere deletes before the commit makes
//! them referenced: the commit would then publish an item whose chunks are
//! gone. So writers and `gc` both read the time the store's responses carry
//! (the HTTP `Date` header every DynamoDB-compatible server sends, as the AWS
//! SDKs already do to correct request signing) and correct their own clock
//! by it: version ids are stamped, and ages judged, in the store's time.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::config::interceptors::BeforeDeserializationInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use dynaslice_core::VersionId;

use crate::error::HostError;

/// Larger offsets than this between the local clock and the store's are
/// refused rather than corrected: something is wrong with one of them (or
/// with a proxy between), and a write stamped by a wildly wrong clock is
/// exactly what this module exists to prevent.
pub const MAX_CLOCK_SKEW_MS: i64 = 24 * 3600 * 1000;

/// A version stamped this close to the store's time is kept: a minute is
/// far below any useful `gc` grace period, and covers the time a split takes.
const RESTAMP_TOLERANCE_MS: u64 = 60_000;

/// Marks "no Date header seen yet".
const UNKNOWN: i64 = i64::MIN;

/// The store's clock: the local clock plus the offset the last response's
/// `Date` header showed. Shared by the requests of one operation.
#[derive(Debug)]
pub(crate) struct StoreClock {
    offset_ms: AtomicI64,
}

impl Default for StoreClock {
    fn default() -> Self {
        Self {
            offset_ms: AtomicI64::new(UNKNOWN),
        }
    }
}

/// Milliseconds since the Unix epoch by the local clock.
fn local_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl StoreClock {
    /// Records a response's `Date` header, seen now by the local clock. The
    /// header has whole seconds: the offset is rounded toward the local
    /// clock, so a correct clock is never moved by the rounding.
    fn observe(&self, date: &str) {
        let Ok(server) = httpdate::parse_http_date(date) else {
            return;
        };
        let server_ms = server
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let local = local_ms();
        // The server's second began at server_ms and ended before
        // server_ms + 1000: the local clock is off only beyond that window.
        let offset = if local < server_ms {
            server_ms - local
        } else if local > server_ms + 1000 {
            server_ms + 1000 - local
        } else {
            0
        };
        self.offset_ms.store(offset, Ordering::Relaxed);
    }

    /// The store's time in Unix milliseconds; an error when the local clock
    /// is more than [`MAX_CLOCK_SKEW_MS`] off. Before any response was seen,
    /// the local clock.
    pub fn now_ms(&self) -> Result<u64, HostError> {
        let offset = match self.offset_ms.load(Ordering::Relaxed) {
            UNKNOWN => 0,
            offset => offset,
        };
        if offset.abs() > MAX_CLOCK_SKEW_MS {
            return Err(HostError::ClockSkew {
                offset_ms: offset,
                limit_ms: MAX_CLOCK_SKEW_MS,
            });
        }
        Ok(u64::try_from(local_ms().saturating_add(offset)).unwrap_or(0))
    }

    /// `None` when `version` was stamped within [`RESTAMP_TOLERANCE_MS`] of
    /// the store's time now; otherwise a fresh version in the store's time.
    pub fn restamp(&self, version: VersionId) -> Result<Option<VersionId>, HostError> {
        let now = self.now_ms()?;
        Ok((version.unix_ms().abs_diff(now) > RESTAMP_TOLERANCE_MS)
            .then(|| VersionId::new(now, fastrand::u128(..))))
    }

    /// A fresh version id stamped with the store's time.
    pub fn fresh_version(&self) -> Result<VersionId, HostError> {
        Ok(VersionId::new(self.now_ms()?, fastrand::u128(..)))
    }

    /// An interceptor recording every response's `Date` here.
    pub fn observer(self: &Arc<Self>) -> DateObserver {
        DateObserver(Arc::clone(self))
    }
}

/// Reads the `Date` header of each response into a [`StoreClock`].
#[derive(Debug)]
pub(crate) struct DateObserver(Arc<StoreClock>);

impl Intercept for DateObserver {
    fn name(&self) -> &'static str {
        "dynaslice::DateObserver"
    }

    fn read_after_transmit(
        &self,
        context: &BeforeDeserializationInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        if let Some(date) = context.response().headers().get("date") {
            self.0.observe(date);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_two_hours_behind_is_corrected_to_the_stores_time() {
        let clock = StoreClock::default();
        let store_time = SystemTime::now() + std::time::Duration::from_secs(7200);
        clock.observe(&httpdate::fmt_http_date(store_time));
        let now = clock.now_ms().unwrap() as i64;
        let expected = local_ms() + 7_200_000;
        assert!((now - expected).abs() <= 1000, "{now} vs {expected}");
    }

    #[test]
    fn a_correct_clock_is_not_moved_by_the_headers_whole_seconds() {
        let clock = StoreClock::default();
        clock.observe(&httpdate::fmt_http_date(SystemTime::now()));
        assert_eq!(clock.offset_ms.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_absurd_offset_is_refused_and_garbage_is_ignored() {
        let clock = StoreClock::default();
        clock.observe("not a date");
        assert_eq!(clock.offset_ms.load(Ordering::Relaxed), UNKNOWN);
        let far = SystemTime::now() + std::time::Duration::from_secs(3 * 24 * 3600);
        clock.observe(&httpdate::fmt_http_date(far));
        assert_eq!(clock.now_ms().unwrap_err().code(), "CLOCK_SKEW");
    }
}
