//! Every number the protocols run by, defined once: retries and backoff,
//! how many requests fly, how often a write re-plans and a read re-reads,
//! how long `gc` waits. The host and the npm package's driver read them
//! from here (the driver through the binding).

use core::time::Duration;

/// How often and how patiently to resend a request that failed
/// transiently: attempt `n` waits a uniform random time in
/// `[0, min(max_delay, base_delay * 2^n))` (the AWS Architecture Blog's
/// "Exponential Backoff and Jitter", full jitter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// Attempts in all while the service answers that it is over a rate
    /// (throttling), and rounds of a batch in a row that leave everything
    /// unprocessed. DynamoDB throttles a hot partition or a table past its
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
    /// The upper bound of the pause before retry number `retry` (0 for the
    /// first retry); the pause itself is a uniform fraction of it.
    pub fn ceiling(&self, retry: u32) -> Duration {
        self.base_delay
            .saturating_mul(1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX))
            .min(self.max_delay)
    }

    /// The pause before retry number `retry`, `fraction` (in `[0, 1)`) of
    /// the way up to its ceiling.
    pub fn backoff(&self, retry: u32, fraction: f64) -> Duration {
        self.ceiling(retry).mul_f64(fraction.clamp(0.0, 1.0))
    }

    /// Attempts allowed in all when the last one was `throttled` or not.
    pub fn attempts(&self, throttled: bool) -> u32 {
        let limit = if throttled {
            self.max_throttled_attempts.max(self.max_attempts)
        } else {
            self.max_attempts
        };
        limit.max(1)
    }
}

/// The most batch requests in flight at once for one operation when the
/// caller does not say: the pace starts lower and adapts between 1 and this.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// Write requests in flight at first, before answers widen the pace.
pub const INITIAL_WRITE_LIMIT: usize = 4;

/// Chunks asked for in one BatchGetItem of a read: with at most
/// [`READ_WINDOW`] requests in flight, at most 6 chunks (~2.4 MB of chunk
/// items) are fetched ahead of the reader. One rather than two (or four):
/// the first chunks arrive sooner and the last request is short, so
/// decoding overlaps the fetching (bench:model, with reads starting at the
/// whole window: 10 MiB JSON get 57 % of the bound at two, 61-66 % at
/// one). A plan's requests may carry 16 MB each (DynamoDB's bound), which
/// beside a 64 MiB item would be most of it, and one such request is one
/// long wait: small requests in flight together overlap their latency.
pub const CHUNKS_PER_READ: u32 = 1;

/// The most chunk requests a read keeps ahead of the chunk it decodes,
/// whatever the pace allows: a read's memory stays bounded.
pub const READ_WINDOW: usize = 6;

/// Chunk requests in flight when a read starts: the whole window, at most
/// 6 chunks, 600 read units (a twentieth of a new on-demand table's
/// second). A whole-item read is short: waiting for answers to widen the
/// window leaves a 10 MiB JSON get a third slower in bench:model (56 % of
/// the model's bound starting at 4, 66 % starting at 6).
pub const INITIAL_READ_LIMIT: usize = READ_WINDOW;

/// Chunks in one BatchWriteItem of a write (1..=25): five full chunks are
/// 2 MB, so one item keeps several requests in flight where 25 would be
/// one 10 MB request.
pub const DEFAULT_BATCH_ITEMS: usize = 5;

/// Raw bytes of an in-memory item compressed between looks at the writes
/// in flight (about 6 ms of deflate).
pub const WORK_BYTES: usize = 256 << 10;

/// Bytes a streamed write takes from its source at a time; `auto`
/// chooses the codec of a stream on its first piece.
pub const INPUT_BYTES: usize = 1 << 20;

/// At most how much of a stream of unknown length (a pipe) a put holds
/// before it chooses where the payload goes, when the table keeps large
/// payloads in S3: up to the threshold, so that a short stream stays in
/// DynamoDB, but never more than this (a longer stream, still unknown,
/// goes to S3, whatever the threshold).
pub const HOLD_BYTES: usize = 16 << 20;

/// Parts of one S3 object in flight at once (each of
/// [`crate::object::ObjectStore::part_bytes`], 8 MiB by default: 32 MiB
/// of a write's memory), and ranges of one object a read fetches at once.
pub const PARTS_IN_FLIGHT: usize = 4;

/// Rounds an atomic write under last writer wins makes: after a concurrent
/// commit changed the parent, it pauses (the retry policy's backoff, with
/// full jitter), reads the parent again and re-plans, before giving up
/// with a conflict. Each failed round is one transaction that wrote
/// nothing, and means another writer committed meanwhile: a write
/// succeeds whenever fewer than 8 other commits land while it tries (with
/// the default backoff the pauses add up to at most 3.2 s). Writers that
/// overwrite one key without pause starve each other in atomic mode;
/// batch mode does not.
pub const MAX_REPLANS: u32 = 8;

/// Times a read goes back to the parent when chunks vanished under a
/// concurrent overwrite, before it reports that they stay missing.
pub const MAX_REREADS: u32 = 5;

/// `gc` keeps unreferenced chunks younger than this: a write that takes
/// longer than this while `gc` runs could lose chunks.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3600);

/// Larger offsets than this between an executor's clock and the store's
/// are refused rather than corrected: something is wrong with one of them
/// (or with a proxy between), and a write stamped by a wildly wrong clock
/// is exactly what reading the store's time exists to prevent.
pub const MAX_CLOCK_SKEW_MS: u64 = 24 * 3600 * 1000;

/// A version stamped this close to the store's time is kept: a minute is
/// far below any useful `gc` grace period, and covers the time a split
/// takes.
pub const RESTAMP_TOLERANCE_MS: u64 = 60_000;
