//! The executor of core's protocol machines: sends what a machine says
//! (each request its own task, after the delay the machine gave), feeds
//! the answers back, runs the machine's CPU-heavy work where it does not
//! hold up the runtime, and reports progress. It decides nothing: what to
//! send, what to resend and when, and when an operation is done are the
//! machine's (`dynaslice_core::protocol`).

mod admin;
mod send;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::plan::{BatchGet, Get, Scan};
use dynaslice_core::protocol::{
    Answer, Call, Env, Machine, Request, RequestId, Response, RetryPolicy, Step,
};
use tokio::task::JoinSet;

use crate::error::HostError;
use crate::progress::Progress;

pub(crate) use admin::{admin_error, with_retries};
pub(crate) use send::{DateSeen, failure_of, local_ms};

/// What a machine is started with: this machine's clock, random bits.
pub(crate) fn env() -> Env {
    Env {
        local_ms: local_ms(),
        seed: fastrand::u64(..),
    }
}

/// Where [`Driver::run`] stopped: the machine finished, or wants bytes moved.
pub(crate) enum Stop<T> {
    Done(Result<T, HostError>),
    /// Give it up to this many more bytes of its payload.
    Input(usize),
    /// Take the bytes it decoded.
    Output,
    /// Throw away the output taken so far.
    Restart,
}

/// Runs machines against one client, its requests in flight as tasks.
pub(crate) struct Driver<'p> {
    client: Client,
    /// The S3 client of the table's objects, when it has a store.
    s3: Option<aws_sdk_s3::Client>,
    progress: &'p dyn Progress,
    flying: JoinSet<(RequestId, Response)>,
    /// What `progress` was last told.
    shown: dynaslice_core::protocol::Progress,
    /// A parent not yet committed, answered to the machine's GetItem
    /// instead of the store's ([`Driver::holding`]).
    held: Option<dynaslice_core::Item>,
}

impl<'p> Driver<'p> {
    pub(crate) fn new(client: &Client, progress: &'p dyn Progress) -> Self {
        Self {
            client: client.clone(),
            s3: None,
            progress,
            flying: JoinSet::new(),
            shown: Default::default(),
            held: None,
        }
    }

    /// This driver, answering the machine's GetItem of a parent with
    /// `parent` instead of asking the store: how the host reads an
    /// uploaded object through before it commits the parent naming it.
    pub(crate) fn holding(mut self, parent: dynaslice_core::Item) -> Self {
        self.held = Some(parent);
        self
    }

    /// A driver that sends S3's requests to `table`'s object store.
    pub(crate) fn for_table(
        client: &Client,
        table: &crate::TableConfig,
        progress: &'p dyn Progress,
    ) -> Self {
        let mut driver = Self::new(client, progress);
        driver.s3 = table.objects.as_ref().map(|o| o.client.clone());
        driver
    }

    /// Does what `machine` says until it finishes or wants bytes moved.
    pub(crate) async fn run<M: Machine>(&mut self, machine: &mut M) -> Stop<M::Output> {
        // Time passed while the caller moved bytes: a rest may be over.
        machine.wake(local_ms());
        loop {
            let step = machine.poll();
            self.report(machine.progress());
            match step {
                Step::Send(send)
                    if self.held.is_some() && matches!(send.request, Request::Get(_)) =>
                {
                    let response = Response {
                        result: Ok(Answer::Item(self.held.clone())),
                        consumed: 0.0,
                        date: None,
                        local_ms: local_ms(),
                    };
                    machine.handle(send.id, response);
                }
                Step::Send(send) => {
                    let client = self.client.clone();
                    let s3 = self.s3.clone();
                    self.flying.spawn(async move {
                        if !send.delay.is_zero() {
                            tokio::time::sleep(send.delay).await;
                        }
                        let response = send::send(&client, s3.as_ref(), send.request).await;
                        (send.id, response)
                    });
                }
                Step::Work => {
                    crate::cpu::heavy(|| machine.work());
                    machine.wake(local_ms());
                }
                Step::Wait => match self.flying.join_next().await {
                    Some(Ok((id, response))) => machine.handle(id, response),
                    Some(Err(failed)) => return Stop::Done(Err(lost_task(failed))),
                    // Waiting with nothing out would wait forever.
                    None => {
                        return Stop::Done(Err(HostError::Internal(
                            "a protocol machine waits with no request out".into(),
                        )));
                    }
                },
                Step::Sleep(pause) => tokio::select! {
                    Some(landed) = self.flying.join_next() => match landed {
                        Ok((id, response)) => machine.handle(id, response),
                        Err(failed) => return Stop::Done(Err(lost_task(failed))),
                    },
                    () = tokio::time::sleep(pause) => machine.wake(local_ms()),
                },
                Step::Input(max) => return Stop::Input(max),
                Step::Output => return Stop::Output,
                Step::Restart => return Stop::Restart,
                Step::Done(result) => return Stop::Done(result.map_err(HostError::from)),
            }
        }
    }

    /// Runs a machine that moves no bytes to its end.
    pub(crate) async fn finish<M: Machine>(
        &mut self,
        machine: &mut M,
    ) -> Result<M::Output, HostError> {
        match self.run(machine).await {
            Stop::Done(result) => result,
            _ => Err(HostError::Internal(
                "a machine that moves no bytes asked to move some".into(),
            )),
        }
    }

    /// Tells `progress` what changed since it was last told.
    fn report(&mut self, now: dynaslice_core::protocol::Progress) {
        if now.bytes_total != self.shown.bytes_total {
            // The display starts again at 0 (a stream's total learned at
            // its end included): it is told all that is done.
            self.progress.start(now.bytes_total);
            self.shown.bytes_done = 0;
        }
        if now.bytes_done > self.shown.bytes_done {
            self.progress
                .advance(now.bytes_done - self.shown.bytes_done);
        }
        self.shown = now;
    }
}

/// One request with the retry policy's resends: what reads that need no
/// protocol of their own send (inspecting, listing, previews).
pub(crate) async fn call(
    client: &Client,
    request: Request,
    retry: RetryPolicy,
) -> Result<Answer, HostError> {
    let mut call = Call::new(request, retry, env());
    Driver::new(client, &()).finish(&mut call).await
}

/// A request's task that did not finish: its panic goes on, and a task
/// cancelled under the driver (the runtime shutting down) ends the run.
fn lost_task(error: tokio::task::JoinError) -> HostError {
    if error.is_panic() {
        std::panic::resume_unwind(error.into_panic());
    }
    HostError::Internal("a request's task was cancelled".into())
}

/// A GetItem resent as `retry` says: the item, if any.
pub(crate) async fn get_item(
    client: &Client,
    get: Get,
    retry: RetryPolicy,
) -> Result<Option<Item>, HostError> {
    match call(client, Request::Get(get), retry).await? {
        Answer::Item(item) => Ok(item),
        _ => Err(unexpected("GetItem")),
    }
}

/// BatchGetItems resent as `retry` says, all at once: every item found.
pub(crate) async fn batch_get_all(
    client: &Client,
    gets: Vec<BatchGet>,
    retry: RetryPolicy,
) -> Result<Vec<Item>, HostError> {
    let calls = gets
        .into_iter()
        .map(|get| call(client, Request::BatchGet(get), retry));
    let mut found = Vec::new();
    for answer in futures::future::try_join_all(calls).await? {
        match answer {
            Answer::BatchGet { items, .. } => found.extend(items),
            _ => return Err(unexpected("BatchGetItem")),
        }
    }
    Ok(found)
}

/// One Scan page with retries: its items and where the next starts.
pub(crate) async fn scan_page(
    client: &Client,
    scan: Scan,
) -> Result<(Vec<Item>, Option<Item>), HostError> {
    match call(client, Request::Scan(scan), RetryPolicy::default()).await? {
        Answer::Scan { items, next } => Ok((items, next)),
        _ => Err(unexpected("Scan")),
    }
}

fn unexpected(operation: &str) -> HostError {
    HostError::Internal(format!(
        "{operation} came back as another operation's answer"
    ))
}
