//! How many batch requests an operation keeps in flight: additive increase,
//! multiplicative decrease (AIMD, TCP's congestion control), driven by
//! DynamoDB's throttling.
//!
//! A table and each of its partitions serve a bounded rate (AWS developer
//! guide, "DynamoDB throttling": 1,000 WCU and 3,000 RCU per second per
//! partition; an on-demand table starts at 4,000 WCU and 12,000 RCU per
//! second). Past it the service answers `ProvisionedThroughputExceeded` or
//! `ThrottlingException`, or leaves part of a batch unprocessed. So every
//! request that comes back whole raises the limit (by one while no throttle
//! was seen yet, "slow start"; then by one per limit's worth of clean
//! answers), and a throttled one halves it, at most once per window of
//! requests, so one burst of throttles halves it once.

/// What an answer said about the table's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Served whole.
    Clean,
    /// Throttled, or part of a batch left unprocessed.
    Throttled,
    /// Failed for another reason: no signal about capacity.
    Other,
}

/// The limit on batch requests in flight.
#[derive(Clone, Debug, PartialEq)]
pub struct Pace {
    /// The limit; fractional so additive increase can be 1/limit per answer.
    limit: f64,
    max: usize,
    /// Still doubling: no throttle seen yet.
    slow_start: bool,
    /// Requests started; a throttle on one started before the last
    /// decrease does not decrease again.
    started: u64,
    decreased_at: u64,
}

impl Pace {
    /// A pace that starts at `start` and never allows more than `max` (at
    /// least 1) in flight.
    pub fn new(start: usize, max: usize) -> Self {
        let max = max.max(1);
        Self {
            limit: start.clamp(1, max) as f64,
            max,
            slow_start: true,
            started: 0,
            decreased_at: 0,
        }
    }

    /// The requests allowed in flight now (at least 1).
    pub fn limit(&self) -> usize {
        (self.limit as usize).max(1)
    }

    /// The most this pace ever allows.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Records that a request starts; returns its number, for
    /// [`Pace::answered`].
    pub fn started(&mut self) -> u64 {
        self.started += 1;
        self.started
    }

    /// Records what the answer of request number `started` said.
    pub fn answered(&mut self, started: u64, signal: Signal) {
        let max = self.max as f64;
        match signal {
            Signal::Clean if self.slow_start => self.limit = (self.limit + 1.0).min(max),
            Signal::Clean => self.limit = (self.limit + 1.0 / self.limit).min(max),
            Signal::Throttled => {
                self.slow_start = false;
                if started > self.decreased_at {
                    self.limit = (self.limit / 2.0).max(1.0);
                    self.decreased_at = self.started;
                }
            }
            Signal::Other => {}
        }
    }
}

/// How long maintenance work (gc, verify) waits before its next request
/// to hold `rate` capacity units per second on average: until the `spent`
/// units, at the rate, have had their time since it began (`elapsed_ms`
/// ago). No wait without a rate.
pub fn rate_pause(rate: Option<u32>, spent: f64, elapsed_ms: u64) -> core::time::Duration {
    let Some(rate) = rate.filter(|&r| r > 0) else {
        return core::time::Duration::ZERO;
    };
    let due_ms = spent * 1000.0 / f64::from(rate);
    core::time::Duration::from_millis((due_ms - elapsed_ms as f64).max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers the host's and the driver's pace tests used before the
    /// pace moved here.
    #[test]
    fn grows_while_clean_and_halves_once_per_burst_of_throttles() {
        let mut pace = Pace::new(4, 32);
        assert_eq!(pace.limit(), 4);
        // Slow start: one more per clean answer.
        for _ in 0..6 {
            let n = pace.started();
            pace.answered(n, Signal::Clean);
        }
        assert_eq!(pace.limit(), 10);
        // Three requests in flight together are all throttled: one halving.
        let burst = [pace.started(), pace.started(), pace.started()];
        for n in burst {
            pace.answered(n, Signal::Throttled);
        }
        assert_eq!(pace.limit(), 5);
        // A request started after the decrease halves again.
        let n = pace.started();
        pace.answered(n, Signal::Throttled);
        assert_eq!(pace.limit(), 2);
        // Then additive: 1/limit per clean answer, so two answers at 2 make 3.
        for _ in 0..2 {
            let n = pace.started();
            pace.answered(n, Signal::Clean);
        }
        assert_eq!(pace.limit(), 3);
        // Other failures say nothing about capacity.
        let n = pace.started();
        pace.answered(n, Signal::Other);
        assert_eq!(pace.limit(), 3);
        // Never below 1, never above max.
        for _ in 0..10 {
            let n = pace.started();
            pace.answered(n, Signal::Throttled);
        }
        assert_eq!(pace.limit(), 1);
        let mut small = Pace::new(4, 2);
        assert_eq!(small.limit(), 2);
        for _ in 0..10 {
            let n = small.started();
            small.answered(n, Signal::Clean);
        }
        assert_eq!(small.limit(), 2);
        assert_eq!(Pace::new(0, 16).limit(), 1);
        assert_eq!(Pace::new(6, 0).max(), 1);
    }
}
