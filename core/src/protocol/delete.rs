//! Deleting a virtual item: read the parent, delete it on the condition
//! that it is still the version read (the commit point: once it is gone,
//! so is the item), then delete its chunks. A concurrent overwrite between
//! the read and the delete is a conflict that leaves the new version whole.

use super::clock::StoreClock;
use super::deletes::Deletes;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled, item};
use super::pace::Pace;
use super::policy::{DEFAULT_CONCURRENCY, INITIAL_WRITE_LIMIT, RetryPolicy};
use super::request::{Request, RequestId, Response};
use super::{Env, Machine, Step};
use crate::plan::{DeletePlan, parent_get, plan_delete};
use crate::table::Table;
use crate::value::Item;

/// What a delete did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DeleteOutcome {
    /// An item was there and is gone.
    pub existed: bool,
    /// Chunks deleted after the parent.
    pub chunks_deleted: usize,
    /// Chunk deletes that failed (unreferenced now: `gc` removes them).
    pub chunks_left: usize,
    /// The version's S3 object was deleted after the parent.
    pub object_deleted: bool,
    /// Capacity units the store reported consuming.
    pub consumed: Consumed,
}

#[derive(Clone, Copy, Debug)]
enum Purpose {
    /// The parent, read first.
    Parent,
    /// The conditional delete of the parent.
    Delete,
    /// The parent read again after the condition failed.
    Check,
    /// A batch of chunk deletes, of this many requests.
    Chunks(usize),
    /// The delete of the version's S3 object.
    Object,
}

enum Phase {
    Running,
    Done(Option<Result<DeleteOutcome, ProtocolError>>),
}

/// A delete of one virtual item (see the module's documentation).
pub struct DeleteMachine {
    table: Table,
    key: Item,
    flights: Flights<Purpose>,
    plan: Option<DeletePlan>,
    /// Chunk deletes to send, anchors last.
    chunks: Deletes<Purpose>,
    existed: bool,
    chunks_deleted: usize,
    chunks_left: usize,
    object_deleted: bool,
    phase: Phase,
    /// The stored version's S3 object, deleted after the parent.
    object: Option<super::request::ObjectKey>,
}

impl DeleteMachine {
    /// A delete of the item with `key` from `table`, whatever its size (the
    /// payload is never read). A stored item whose manifest claims more than
    /// [`crate::DEFAULT_MAX_CHUNK_KEYS`] chunks is refused (nothing
    /// deleted) before a key is built for any of them.
    pub fn new(key: &Item, table: Table, retry: RetryPolicy, env: Env) -> Self {
        let pace = Pace::new(INITIAL_WRITE_LIMIT, DEFAULT_CONCURRENCY);
        let flights = Flights::new(retry, pace, StoreClock::new(env.local_ms), env.seed);
        let mut machine = Self {
            table,
            key: Item::new(),
            flights,
            plan: None,
            chunks: Deletes::default(),
            existed: false,
            chunks_deleted: 0,
            chunks_left: 0,
            object_deleted: false,
            phase: Phase::Running,
            object: None,
        };
        match machine.table.key.check_key(key) {
            Ok(key) => {
                machine.key = key;
                machine.read_parent(Purpose::Parent);
            }
            Err(violations) => machine.finish(Err(ProtocolError::Key(violations))),
        }
        machine
    }

    fn read_parent(&mut self, purpose: Purpose) {
        let target = self.table.keys_target();
        let get = parent_get(&target, &self.key);
        self.flights
            .send(Request::Get(get), purpose, Resend::Transient);
    }

    fn finish(&mut self, result: Result<DeleteOutcome, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(result));
    }

    fn outcome(&self) -> DeleteOutcome {
        DeleteOutcome {
            existed: self.existed,
            chunks_deleted: self.chunks_deleted,
            chunks_left: self.chunks_left,
            object_deleted: self.object_deleted,
            consumed: self.flights.consumed,
        }
    }

    fn answered(&mut self, purpose: Purpose, stored: Option<Item>) -> Result<(), ProtocolError> {
        match purpose {
            Purpose::Parent => {
                let Some(stored) = stored else {
                    self.finish(Ok(self.outcome()));
                    return Ok(());
                };
                let target = self.table.keys_target();
                let plan = plan_delete(&stored, &target)?;
                self.object = self.table.owned_object(&stored);
                self.flights.send(
                    Request::Delete(plan.parent.clone()),
                    Purpose::Delete,
                    Resend::Transient,
                );
                self.plan = Some(plan);
            }
            // Changed: someone wrote a new version, which must stay whole.
            Purpose::Check if stored.is_some() => {
                return Err(ProtocolError::Conflict {
                    key: self.table.key.key_text(&self.key),
                });
            }
            // Gone: an earlier attempt of this delete, or another deleter,
            // removed it; either way its chunks are to be deleted.
            Purpose::Check | Purpose::Delete => self.parent_deleted(),
            Purpose::Chunks(count) => self.chunks_deleted += count,
            Purpose::Object => self.object_deleted = true,
        }
        Ok(())
    }

    fn parent_deleted(&mut self) {
        self.existed = true;
        if let Some(plan) = self.plan.take() {
            self.chunks.add(&self.table, plan.chunks, Purpose::Chunks);
        }
        if let Some(object) = self.object.take() {
            let delete = super::request::ObjectRequest::Delete { object };
            self.chunks.add_object(delete, Purpose::Object);
        }
    }
}

impl Machine for DeleteMachine {
    type Output = DeleteOutcome;

    fn poll(&mut self) -> Step<DeleteOutcome> {
        loop {
            if let Some(send) = self.flights.next_send() {
                return Step::Send(send);
            }
            if let Phase::Done(result) = &mut self.phase {
                return match result.take() {
                    Some(result) => Step::Done(result),
                    None => Step::Wait,
                };
            }
            if self.chunks.send(&mut self.flights) {
                continue;
            }
            if self.existed && !self.chunks.waiting() && self.flights.open() == 0 {
                // Anchors held back by a failed delete stay for gc.
                self.chunks_left += self.chunks.take_left();
                self.finish(Ok(self.outcome()));
                continue;
            }
            return self.flights.idle();
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        let settled = self.flights.land(id, response);
        if let Some(settled) = &settled {
            self.chunks
                .settled(id, matches!(settled, Settled::Answer(..)));
        }
        let result = match settled {
            Some(Settled::Answer(purpose, answer)) => self.answered(purpose, item(answer)),
            Some(Settled::Failed(Purpose::Delete, failed)) if failed.condition_failed() => {
                self.read_parent(Purpose::Check);
                Ok(())
            }
            Some(Settled::Failed(Purpose::Chunks(count), _)) => {
                self.chunks_left += count;
                Ok(())
            }
            // Unreferenced now: gc deletes it.
            Some(Settled::Failed(Purpose::Object, _)) => Ok(()),
            Some(Settled::Failed(_, failed)) => Err(failed.error),
            None => Ok(()),
        };
        if let Err(error) = result {
            self.finish(Err(error));
        }
    }

    fn wake(&mut self, local_ms: u64) {
        self.flights.wake(local_ms);
    }

    fn cancel(&mut self) {
        if let Phase::Done(_) = self.phase {
            return;
        }
        // Once the parent is gone the item is deleted; chunks not deleted
        // yet (unsent, or resting before a resend) are unreferenced, left
        // to gc.
        let dropped = self
            .flights
            .stop()
            .into_iter()
            .map(|purpose| match purpose {
                Purpose::Chunks(count) => count,
                _ => 0,
            });
        self.chunks_left += dropped.sum::<usize>() + self.chunks.take_left();
        let result = match self.existed {
            true => Ok(self.outcome()),
            false => Err(ProtocolError::Cancelled),
        };
        self.finish(result);
    }

    fn consumed(&self) -> Consumed {
        self.flights.consumed
    }
}
