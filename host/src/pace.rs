//! How many requests a [`crate::send::Sender`] keeps in flight: additive
//! increase, multiplicative decrease (AIMD, TCP's congestion control), driven
//! by DynamoDB's throttling.
//!
//! A table and each of its partitions serve a bounded rate (AWS developer
//! guide, "DynamoDB throttling": 1,000 WCU and 3,000 RCU per second per
//! partition; an on-demand table starts at 4,000 WCU and 12,000 RCU per
//! second). Past it the service answers `ProvisionedThroughputExceeded` or
//! `ThrottlingException`, or leaves part of a batch unprocessed. So every
//! request that comes back whole raises the limit (by one while no
//! throttle was seen yet, "slow start"; then by one per limit's worth of
//! clean answers), and a throttled one halves it, at most once per window
//! of requests, so one burst of throttles halves it once.

use std::sync::Mutex;

use tokio::sync::Notify;

/// Requests in flight at first: what the host used before it adapted.
pub const INITIAL_LIMIT: usize = 4;

/// Requests in flight at first when reading a virtual item's chunks: the
/// whole read window ([`crate::chunk_window::MAX_WINDOW`]), at most 12
/// chunks, 1,200 read units (a tenth of a new on-demand table's second).
/// A whole-item read is short: waiting for answers to widen the window
/// leaves a 10 MiB JSON get a third slower in bench:model (56 % of the
/// model's bound starting at 4, 66 % starting at 6).
pub const INITIAL_READ_LIMIT: usize = crate::chunk_window::MAX_WINDOW;

/// The limit on requests in flight, and what is in flight.
#[derive(Debug)]
pub(crate) struct Pace {
    state: Mutex<State>,
    freed: Notify,
    max: usize,
}

#[derive(Debug)]
struct State {
    /// The limit; fractional so additive increase can be 1/limit per answer.
    limit: f64,
    in_flight: usize,
    /// Still doubling: no throttle seen yet.
    slow_start: bool,
    /// Requests started; a throttle on one started before the last decrease
    /// does not decrease again.
    started: u64,
    decreased_at: u64,
}

/// One request's permit to be in flight; dropping it frees its place.
pub(crate) struct Permit<'a> {
    pace: &'a Pace,
    started: u64,
}

/// What a request's answer said about the table's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Served whole.
    Clean,
    /// Throttled, or part of a batch left unprocessed.
    Throttled,
    /// Failed for another reason (no signal about capacity).
    Other,
}

impl Pace {
    /// A pace that starts at [`INITIAL_LIMIT`] and never keeps more than
    /// `max` (at least 1) in flight.
    pub fn new(max: usize) -> Self {
        Self::starting_at(INITIAL_LIMIT, max)
    }

    /// A pace that starts at `start` and never keeps more than `max` (at
    /// least 1) in flight.
    pub fn starting_at(start: usize, max: usize) -> Self {
        let max = max.max(1);
        Self {
            state: Mutex::new(State {
                limit: start.clamp(1, max) as f64,
                in_flight: 0,
                slow_start: true,
                started: 0,
                decreased_at: 0,
            }),
            freed: Notify::new(),
            max,
        }
    }

    /// The most requests in flight this pace ever allows.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The current limit, rounded down (at least 1).
    pub fn limit(&self) -> usize {
        (self.lock().limit as usize).max(1)
    }

    /// Waits for a place in flight.
    pub async fn acquire(&self) -> Permit<'_> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut state = self.lock();
                if state.in_flight < (state.limit as usize).max(1) {
                    state.in_flight += 1;
                    state.started += 1;
                    return Permit {
                        pace: self,
                        started: state.started,
                    };
                }
            }
            freed.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the state torn (every
        // update is a few plain assignments): go on with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Permit<'_> {
    /// Records what the answer of this permit's request said.
    pub fn answer(&self, answer: Answer) {
        let pace = self.pace;
        let max = pace.max as f64;
        let mut state = pace.lock();
        match answer {
            Answer::Clean if state.slow_start => state.limit = (state.limit + 1.0).min(max),
            Answer::Clean => state.limit = (state.limit + 1.0 / state.limit).min(max),
            Answer::Throttled => {
                state.slow_start = false;
                if self.started > state.decreased_at {
                    state.limit = (state.limit / 2.0).max(1.0);
                    state.decreased_at = state.started;
                }
            }
            Answer::Other => {}
        }
        drop(state);
        // A raised limit may let a waiter in.
        pace.freed.notify_waiters();
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.pace.lock().in_flight -= 1;
        self.pace.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn grows_while_clean_and_halves_once_per_burst_of_throttles() {
        let pace = Pace::new(32);
        assert_eq!(pace.limit(), INITIAL_LIMIT);
        // Slow start: one more per clean answer.
        for _ in 0..6 {
            pace.acquire().await.answer(Answer::Clean);
        }
        assert_eq!(pace.limit(), 10);
        // Three requests in flight together are all throttled: one halving.
        let (a, b, c) = (
            pace.acquire().await,
            pace.acquire().await,
            pace.acquire().await,
        );
        for permit in [&a, &b, &c] {
            permit.answer(Answer::Throttled);
        }
        assert_eq!(pace.limit(), 5);
        drop((a, b, c));
        // A request started after the decrease halves again.
        pace.acquire().await.answer(Answer::Throttled);
        assert_eq!(pace.limit(), 2);
        // Then additive: 1/limit per clean answer, so two answers at 2 make 3.
        for _ in 0..2 {
            pace.acquire().await.answer(Answer::Clean);
        }
        assert_eq!(pace.limit(), 3);
        // Other failures say nothing about capacity.
        pace.acquire().await.answer(Answer::Other);
        assert_eq!(pace.limit(), 3);
        // Never below 1, never above max.
        for _ in 0..10 {
            pace.acquire().await.answer(Answer::Throttled);
        }
        assert_eq!(pace.limit(), 1);
        let small = Pace::new(2);
        for _ in 0..10 {
            small.acquire().await.answer(Answer::Clean);
        }
        assert_eq!(small.limit(), 2);
    }

    #[tokio::test]
    async fn a_reading_pace_starts_with_its_window_and_keeps_max() {
        let reads = Pace::starting_at(INITIAL_READ_LIMIT, 16);
        assert_eq!(reads.limit(), 6);
        // All six in flight at once, before any answer.
        let permits: Vec<_> = futures::future::join_all((0..6).map(|_| reads.acquire())).await;
        assert_eq!(permits.len(), 6);
        assert_eq!(Pace::starting_at(INITIAL_READ_LIMIT, 2).limit(), 2);
        assert_eq!(Pace::starting_at(0, 5).limit(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn never_more_in_flight_than_the_limit() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pace = std::sync::Arc::new(Pace::new(3));
        let now = std::sync::Arc::new(AtomicUsize::new(0));
        let most = std::sync::Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..40)
            .map(|_| {
                let (pace, now, most) = (pace.clone(), now.clone(), most.clone());
                tokio::spawn(async move {
                    let permit = pace.acquire().await;
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(n, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    now.fetch_sub(1, Ordering::SeqCst);
                    permit.answer(Answer::Clean);
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        // The limit starts at min(4, 3) and never exceeds max: at most 3,
        // and with 40 tasks waiting, all 3 places were used.
        assert_eq!(most.load(Ordering::SeqCst), 3);
    }
}
