//! Time as the store tells it.
//!
//! `gc` judges an unreferenced chunk's age by the time inside its version
//! id. If that time came from the writer's clock alone, a writer whose
//! clock runs behind by more than the grace period (a laptop, a drifting
//! container) would write chunks that a `gc` elsewhere deletes before the
//! commit makes them referenced: the commit would then publish an item
//! whose chunks are gone. So writers and `gc` both read the time the
//! store's answers carry (the HTTP `Date` header every DynamoDB-compatible
//! server sends, as the AWS SDKs already do to correct request signing)
//! and correct their own clock by it: version ids are stamped, and ages
//! judged, in the store's time.

use super::error::ProtocolError;
use super::policy::MAX_CLOCK_SKEW_MS;
use super::request::StoreDate;

/// The store's clock: the executor's clock plus the offset the last
/// answer's `Date` showed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreClock {
    /// Store time minus local time, once an answer had a `Date`.
    offset_ms: Option<i64>,
    /// The executor's clock at the last answer.
    local_ms: u64,
}

impl StoreClock {
    /// A clock that knows the executor's time only.
    pub fn new(local_ms: u64) -> Self {
        Self {
            offset_ms: None,
            local_ms,
        }
    }

    /// Records an answer received at `local_ms` by the executor's clock,
    /// with its `Date` if it had one. The header has whole seconds: the
    /// offset is rounded toward the local clock, so a correct clock is
    /// never moved by the rounding.
    pub fn observe(&mut self, date: Option<StoreDate>, local_ms: u64) {
        self.advance(local_ms);
        let Some(date) = date else {
            return;
        };
        let (server, local) = (date.unix_ms as i128, local_ms as i128);
        // The server's second began at `server` and ended before
        // `server + 1000`: the local clock is off only beyond that window.
        let offset = if local < server {
            server - local
        } else if local > server + 1000 {
            server + 1000 - local
        } else {
            0
        };
        self.offset_ms = Some(offset.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
    }

    /// The executor's clock as last told (by an answer, or by a machine's
    /// wake), in Unix milliseconds.
    pub fn local_ms(&self) -> u64 {
        self.local_ms
    }

    /// Moves the executor's clock on to `local_ms` (never back).
    pub fn advance(&mut self, local_ms: u64) {
        self.local_ms = self.local_ms.max(local_ms);
    }

    /// Store time minus local time (0 before any `Date` was seen).
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.unwrap_or(0)
    }

    /// The store's time at the last answer, in Unix milliseconds; an error
    /// when the executor's clock is more than [`MAX_CLOCK_SKEW_MS`] off.
    pub fn now_ms(&self) -> Result<u64, ProtocolError> {
        let offset = self.offset_ms();
        if offset.unsigned_abs() > MAX_CLOCK_SKEW_MS {
            return Err(ProtocolError::ClockSkew {
                offset_ms: offset,
                limit_ms: MAX_CLOCK_SKEW_MS,
            });
        }
        Ok((self.local_ms as i128 + offset as i128).max(0) as u64)
    }
}
