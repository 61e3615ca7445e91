//! The requests a machine has out: handing them to the executor, resending
//! what failed transiently (after a backoff with full jitter) and what a
//! batch left unprocessed, pacing batch requests, and counting the
//! capacity and the store's time the answers report. A batch request
//! resting before its resend holds no place in the pace: the others go on
//! meanwhile, and it goes first when its pause is over and there is room.
//! A machine sees a request again only once it is settled: answered whole,
//! or failed for good.

use alloc::vec::Vec;
use core::time::Duration;

use super::Step;
use super::clock::StoreClock;
use super::error::ProtocolError;
use super::pace::{Pace, Signal};
use super::policy::RetryPolicy;
use super::request::{Answer, Failure, Request, RequestId, Response, Send};
use crate::plan::{BatchGet, BatchWrite, WriteRequest};
use crate::value::Item;

/// Which failures a request may be resent after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Any transient failure: applying it twice is harmless (reads, chunk
    /// writes, conditional writes whose failed condition is resolved by
    /// reading the parent again).
    Transient,
    /// Only throttling, which proves it was not applied: an unconditional
    /// commit, whose late second copy could land after a later writer's.
    Throttled,
    /// A transaction: transient failures, and cancellations by conflicts
    /// or throttling (its token makes a resend idempotent).
    Transaction,
}

/// Capacity units the answers reported.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Consumed {
    /// Read units.
    pub read: f64,
    /// Write units.
    pub write: f64,
}

/// A request settled for the machine.
pub(crate) enum Settled<P> {
    /// Answered: a batch with nothing left unprocessed (a BatchGetItem's
    /// items gathered over its rounds).
    Answer(P, Answer),
    /// Failed for good.
    Failed(P, Failed),
}

/// A request that failed for good.
pub(crate) struct Failed {
    pub(crate) error: ProtocolError,
    /// The last failure, when the service (or the transport) gave one.
    pub(crate) failure: Option<Failure>,
}

impl Failed {
    /// True when the request's condition failed.
    pub(crate) fn condition_failed(&self) -> bool {
        self.failure.as_ref().is_some_and(Failure::condition_failed)
    }

    /// True unless the failure proves the request was not applied.
    pub(crate) fn maybe_applied(&self) -> bool {
        self.failure.as_ref().is_none_or(Failure::maybe_applied)
    }
}

struct Flight {
    id: RequestId,
    request: Request,
    resend: Resend,
    /// Attempts of the current round.
    attempts: u32,
    /// Batch rounds in a row that made no progress.
    stalled: u32,
    /// The pace's number for the attempt in flight (batch requests only).
    paced: Option<u64>,
    /// A BatchGetItem's items from earlier rounds.
    found: Vec<Item>,
    /// Settled at its next answer, resent no more: sent before the machine
    /// stopped.
    last: bool,
    /// A batch request resting before its resend, until this time on the
    /// executor's clock: neither out nor counted by the pace.
    resting_until: Option<u64>,
}

/// The requests out, with what each was sent for: a thin layer over
/// [`Out`], which is the same code for every machine (one copy in a
/// WebAssembly module, not one per purpose type).
pub(crate) struct Flights<P> {
    out: Out,
    purposes: Vec<(RequestId, P)>,
}

impl<P> core::ops::Deref for Flights<P> {
    type Target = Out;
    fn deref(&self) -> &Out {
        &self.out
    }
}

impl<P> core::ops::DerefMut for Flights<P> {
    fn deref_mut(&mut self) -> &mut Out {
        &mut self.out
    }
}

impl<P> Flights<P> {
    pub(crate) fn new(retry: RetryPolicy, pace: Pace, clock: StoreClock, seed: u64) -> Self {
        Self {
            out: Out::new(retry, pace, clock, seed),
            purposes: Vec::new(),
        }
    }

    /// Sends `request` for `purpose`.
    pub(crate) fn send(&mut self, request: Request, purpose: P, resend: Resend) -> RequestId {
        self.send_after(request, purpose, resend, Duration::ZERO)
    }

    /// Sends `request` for `purpose` after `delay`.
    pub(crate) fn send_after(
        &mut self,
        request: Request,
        purpose: P,
        resend: Resend,
        delay: Duration,
    ) -> RequestId {
        let id = self.out.send_after(request, resend, delay);
        self.purposes.push((id, purpose));
        id
    }

    /// Resends none of the requests out; drops those not yet handed out
    /// or resting, and returns their purposes (what a machine reports as
    /// left undone).
    pub(crate) fn stop(&mut self) -> Vec<P> {
        self.out.stop();
        let out = &self.out;
        self.purposes
            .extract_if(.., |(id, _)| !out.is_open(*id))
            .map(|(_, purpose)| purpose)
            .collect()
    }

    /// Takes the answer of request `id`: `None` when it was resent (or is
    /// not one of ours), else the request settled, with its purpose.
    pub(crate) fn land(&mut self, id: RequestId, response: Response) -> Option<Settled<P>> {
        let settled = self.out.land(id, response)?;
        let at = self.purposes.iter().position(|(i, _)| *i == id)?;
        let (_, purpose) = self.purposes.swap_remove(at);
        Some(match settled {
            Ok(answer) => Settled::Answer(purpose, answer),
            Err(failed) => Settled::Failed(purpose, failed),
        })
    }
}

/// The requests out, and what their answers told.
pub(crate) struct Out {
    next: u64,
    open: Vec<Flight>,
    /// Requests to hand out, in order (a handful at most).
    outbox: Vec<Send>,
    pub(crate) retry: RetryPolicy,
    pub(crate) pace: Pace,
    pub(crate) clock: StoreClock,
    pub(crate) consumed: Consumed,
    rng: fastrand::Rng,
}

impl Out {
    fn new(retry: RetryPolicy, pace: Pace, clock: StoreClock, seed: u64) -> Self {
        Self {
            next: 0,
            open: Vec::new(),
            outbox: Vec::new(),
            retry,
            pace,
            clock,
            consumed: Consumed::default(),
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// Random bits for a version id.
    pub(crate) fn random(&mut self) -> u128 {
        self.rng.u128(..)
    }

    /// A fraction in `[0, 1)`, for a pause with full jitter.
    pub(crate) fn jitter(&mut self) -> f64 {
        self.rng.f64()
    }

    fn send_after(&mut self, request: Request, resend: Resend, delay: Duration) -> RequestId {
        let id = RequestId(self.next);
        self.next += 1;
        let paced = is_batch(&request);
        self.open.push(Flight {
            id,
            request,
            resend,
            attempts: 0,
            stalled: 0,
            paced: paced.then_some(0),
            found: Vec::new(),
            last: false,
            resting_until: None,
        });
        self.dispatch(id, delay);
        id
    }

    /// The next request to hand to the executor: one waiting in the
    /// outbox, else a batch request whose rest is over, if the pace has
    /// room for it.
    pub(crate) fn next_send(&mut self) -> Option<Send> {
        if self.outbox.is_empty() && self.batches() < self.pace.limit() {
            let now = self.clock.local_ms();
            let rested = self
                .open
                .iter_mut()
                .filter(|f| f.resting_until.is_some_and(|at| at <= now))
                .min_by_key(|f| f.resting_until);
            if let Some(flight) = rested {
                flight.resting_until = None;
                let id = flight.id;
                self.dispatch(id, Duration::ZERO);
            }
        }
        (!self.outbox.is_empty()).then(|| self.outbox.remove(0))
    }

    /// What a machine with nothing to send says: wait for an answer, or
    /// (when a batch request rests) sleep until its rest is over.
    pub(crate) fn idle<T>(&self) -> Step<T> {
        let now = self.clock.local_ms();
        match self.open.iter().filter_map(|f| f.resting_until).min() {
            Some(at) if at > now => Step::Sleep(Duration::from_millis(at - now)),
            // Rested, but the pace is full: an answer makes room.
            Some(_) if self.batches() > 0 => Step::Wait,
            Some(_) => Step::Sleep(Duration::ZERO),
            None => Step::Wait,
        }
    }

    /// The executor's clock says `local_ms`: rests that are over end.
    pub(crate) fn wake(&mut self, local_ms: u64) {
        self.clock.advance(local_ms);
    }

    /// Requests out, or about to be.
    pub(crate) fn open(&self) -> usize {
        self.open.len()
    }

    /// Batch requests out (not resting).
    pub(crate) fn batches(&self) -> usize {
        self.open
            .iter()
            .filter(|f| f.paced.is_some() && f.resting_until.is_none())
            .count()
    }

    /// True when the pace allows another batch request: rested requests
    /// go first.
    pub(crate) fn room(&self) -> bool {
        let now = self.clock.local_ms();
        let rested = self
            .open
            .iter()
            .filter(|f| f.resting_until.is_some_and(|at| at <= now))
            .count();
        self.batches() + rested < self.pace.limit()
    }

    /// True while request `id` is out.
    fn is_open(&self, id: RequestId) -> bool {
        self.open.iter().any(|f| f.id == id)
    }

    /// Resends none of the requests out; those not yet handed out (or
    /// resting) are dropped. Requests sent from now on are resent as usual
    /// (a failed write's own cleanup).
    fn stop(&mut self) {
        for send in core::mem::take(&mut self.outbox) {
            self.open.retain(|f| f.id != send.id);
        }
        self.open.retain(|f| f.resting_until.is_none());
        for flight in &mut self.open {
            flight.last = true;
        }
    }

    /// Takes the answer of request `id`: `None` when it was resent (or is
    /// not one of ours), else the request settled.
    fn land(&mut self, id: RequestId, response: Response) -> Option<Result<Answer, Failed>> {
        let at = self.open.iter().position(|f| f.id == id)?;
        self.clock.observe(response.date, response.local_ms);
        let operation = self.open[at].request.operation();
        if operation.reads() {
            self.consumed.read += response.consumed;
        } else {
            self.consumed.write += response.consumed;
        }
        let flight = &mut self.open[at];
        flight.attempts += 1;
        let signal = match &response.result {
            Ok(answer) if has_unprocessed(answer) => Signal::Throttled,
            Ok(_) => Signal::Clean,
            Err(failure) if failure.throttled() => Signal::Throttled,
            Err(_) => Signal::Other,
        };
        if let Some(started) = flight.paced {
            self.pace.answered(started, signal);
        }
        match response.result {
            Err(failure) => self.failed(at, failure),
            Ok(answer) => self.answered(at, answer),
        }
    }

    fn failed(&mut self, at: usize, failure: Failure) -> Option<Result<Answer, Failed>> {
        let flight = &self.open[at];
        let resendable = match flight.resend {
            Resend::Transient => failure.transient(),
            Resend::Throttled => failure.throttled(),
            Resend::Transaction => failure.transient() || failure.transaction_retryable(),
        };
        let attempts = flight.attempts;
        if !flight.last && resendable && attempts < self.retry.attempts(failure.throttled()) {
            let id = flight.id;
            let jitter = self.jitter();
            let delay = self.retry.backoff(attempts - 1, jitter);
            self.dispatch(id, delay);
            return None;
        }
        let flight = self.open.swap_remove(at);
        let error = ProtocolError::Request {
            operation: flight.request.operation(),
            failure: failure.clone(),
            attempts,
        };
        Some(Err(Failed {
            error,
            failure: Some(failure),
        }))
    }

    fn answered(&mut self, at: usize, answer: Answer) -> Option<Result<Answer, Failed>> {
        let flight = &mut self.open[at];
        let (left, pending) = match (&mut flight.request, answer) {
            (Request::BatchWrite(batch), Answer::BatchWrite { unprocessed }) => {
                let pending = batch.requests.len();
                let left = unprocessed.len();
                if left > 0 {
                    *batch = rebatch(unprocessed);
                }
                (left, pending)
            }
            (Request::BatchGet(get), Answer::BatchGet { items, unprocessed }) => {
                flight.found.extend(items);
                let pending = get.keys.len();
                let left = unprocessed.len();
                if left > 0 {
                    get.keys = unprocessed;
                }
                (left, pending)
            }
            (_, answer) => {
                self.open.swap_remove(at);
                return Some(Ok(answer));
            }
        };
        if left == 0 {
            let flight = self.open.swap_remove(at);
            let answer = match flight.request {
                Request::BatchGet(_) => Answer::BatchGet {
                    items: flight.found,
                    unprocessed: Vec::new(),
                },
                _ => Answer::BatchWrite {
                    unprocessed: Vec::new(),
                },
            };
            return Some(Ok(answer));
        }
        // Items left unprocessed are the service's answer to a rate: as
        // patient as with throttling errors. A round that made progress
        // shrinks what is left, so the rounds end.
        flight.stalled = if left < pending {
            0
        } else {
            flight.stalled + 1
        };
        flight.attempts = 0;
        let stalled = flight.stalled;
        if flight.last || stalled >= self.retry.attempts(true) {
            let flight = self.open.swap_remove(at);
            let error = ProtocolError::Unprocessed {
                operation: flight.request.operation(),
                left,
                rounds: stalled,
            };
            return Some(Err(Failed {
                error,
                failure: None,
            }));
        }
        let id = flight.id;
        let jitter = self.jitter();
        let delay = self.retry.backoff(stalled, jitter);
        self.dispatch(id, delay);
        None
    }

    /// Puts flight `id` in the outbox, as it now is; a batch request to be
    /// sent after a pause rests instead, out of the pace's count.
    fn dispatch(&mut self, id: RequestId, delay: Duration) {
        let Some(flight) = self.open.iter_mut().find(|f| f.id == id) else {
            return;
        };
        if flight.paced.is_some() && !delay.is_zero() {
            let pause = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            flight.resting_until = Some(self.clock.local_ms().saturating_add(pause.max(1)));
            return;
        }
        if flight.paced.is_some() {
            flight.paced = Some(self.pace.started());
        }
        self.outbox.push(Send {
            id,
            request: flight.request.clone(),
            delay,
            resendable: flight.resend != Resend::Throttled,
        });
    }
}

fn is_batch(request: &Request) -> bool {
    matches!(request, Request::BatchWrite(_) | Request::BatchGet(_))
}

fn has_unprocessed(answer: &Answer) -> bool {
    match answer {
        Answer::BatchWrite { unprocessed } => !unprocessed.is_empty(),
        Answer::BatchGet { unprocessed, .. } => !unprocessed.is_empty(),
        _ => false,
    }
}

/// A batch of the requests a BatchWriteItem left unprocessed.
fn rebatch(requests: Vec<(alloc::string::String, WriteRequest)>) -> BatchWrite {
    let bytes = requests.iter().map(|(_, r)| r.size()).sum();
    BatchWrite { requests, bytes }
}

/// The items a settled BatchGetItem found.
pub(crate) fn found(answer: Answer) -> Vec<Item> {
    match answer {
        Answer::BatchGet { items, .. } => items,
        _ => Vec::new(),
    }
}

/// The item a settled GetItem read.
pub(crate) fn item(answer: Answer) -> Option<Item> {
    match answer {
        Answer::Item(item) => item,
        _ => None,
    }
}

/// What a settled PutItem replaced, when it asked.
pub(crate) fn old(answer: Answer) -> Option<Item> {
    match answer {
        Answer::Applied { old } => old,
        _ => None,
    }
}

/// A BatchGetItem of `keys` in `table`, consistent, every attribute.
pub(crate) fn batch_get(table: &str, keys: Vec<Item>, expected_bytes: usize) -> Request {
    Request::BatchGet(BatchGet {
        table: table.into(),
        keys,
        consistent: true,
        expected_bytes,
        attributes: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
