//! One request with the retry policy's resends: for reads that need no
//! protocol of their own (`inspect`, listing, previews, describing tables).

use super::clock::StoreClock;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled};
use super::pace::Pace;
use super::policy::RetryPolicy;
use super::request::{Answer, Request, RequestId, Response};
use super::{Env, Machine, Step};

/// Sends one request, resending it after transient failures (and, for a
/// batch, what it left unprocessed), and finishes with its answer. The
/// request must be safe to apply twice (a read, a chunk write).
pub struct Call {
    flights: Flights<()>,
    result: Option<Result<Answer, ProtocolError>>,
}

impl Call {
    /// A call of `request` under `retry`.
    pub fn new(request: Request, retry: RetryPolicy, env: Env) -> Self {
        let pace = Pace::new(1, 1);
        let mut flights = Flights::new(retry, pace, StoreClock::new(env.local_ms), env.seed);
        flights.send(request, (), Resend::Transient);
        Self {
            flights,
            result: None,
        }
    }

    /// The store's clock as the answer set it.
    pub fn clock(&self) -> &StoreClock {
        &self.flights.clock
    }
}

impl Machine for Call {
    type Output = Answer;

    fn poll(&mut self) -> Step<Answer> {
        if let Some(send) = self.flights.next_send() {
            return Step::Send(send);
        }
        match self.result.take() {
            Some(result) => Step::Done(result),
            None => self.flights.idle(),
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        self.result = match self.flights.land(id, response) {
            Some(Settled::Answer((), answer)) => Some(Ok(answer)),
            Some(Settled::Failed((), failed)) => Some(Err(failed.error)),
            None => return,
        };
    }

    fn wake(&mut self, local_ms: u64) {
        self.flights.wake(local_ms);
    }

    fn cancel(&mut self) {
        self.flights.stop();
        if self.flights.open() == 0 && self.result.is_none() {
            self.result = Some(Err(ProtocolError::Cancelled));
        }
    }

    fn consumed(&self) -> Consumed {
        self.flights.consumed
    }
}
