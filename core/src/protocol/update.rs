//! Updating a virtual item (docs/FORMAT.md, "Updating"): read the parent,
//! plan ([`plan_update`]), then either one UpdateItem of the parent,
//! conditional on the version read and its last update, or a rewrite: the
//! item read whole ([`ReadMachine`]), changed, and written as a new version
//! ([`PutMachine`]) on the condition that the parent is still as read. An
//! overwrite that commits between the update's first read and its write
//! makes the update a conflict; changes are never mixed into another
//! version, and an update is never undone by a write that read before it.

use alloc::boxed::Box;

use super::clock::StoreClock;
use super::error::ProtocolError;
use super::flights::{Consumed, Flights, Resend, Settled, item};
use super::pace::Pace;
use super::policy::{DEFAULT_CONCURRENCY, INITIAL_WRITE_LIMIT};
use super::put::{PutMachine, PutOptions, PutOutcome, PutSource};
use super::read::{GetOptions, ReadMachine, Sink};
use super::request::{Request, RequestId, Response};
use super::{Env, Machine, Progress, Step};
use crate::manifest::Manifest;
use crate::plan::{
    Changes, Expect, Precondition, UpdatePlan, UpdateSteps, parent_get, plan_update,
};
use crate::table::Table;
use crate::value::Item;
use crate::version::VersionId;

/// How to update.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct UpdateOptions {
    /// How a rewrite writes the new version (its `precondition` is the
    /// update's own), and the item size limit of both paths
    /// (`item_limit`).
    pub put: PutOptions,
    /// How a rewrite reads the item first.
    pub get: GetOptions,
    /// Plan only: read the parent, report the plan and its cost, send
    /// nothing else.
    pub dry_run: bool,
    /// Rewrite the item as a new version whatever the changes (which may
    /// be none): its attributes are spilled again by the table's current
    /// index keys and TTL, the backfill of an index added after the item
    /// was written. An absent item stays absent.
    pub rewrite: bool,
}

/// What an update did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct UpdateOutcome {
    /// The plan: which path, and what it was to cost.
    pub plan: UpdatePlan,
    /// False for a dry run.
    pub applied: bool,
    /// The rewrite's write, when the update rewrote the item.
    pub put: Option<PutOutcome>,
    /// Capacity units the store reported consuming, every request counted.
    pub consumed: Consumed,
}

#[derive(Clone, Copy, Debug)]
enum Purpose {
    /// The parent, read first.
    Parent,
    /// The UpdateItem of the parent.
    Update,
}

/// Request ids of the rewrite's machines carry these tags, so their
/// answers find them (each numbers its requests from 0). Below 2^53: a
/// JavaScript executor holds ids as numbers.
const READ_TAG: u64 = 1 << 48;
const PUT_TAG: u64 = 2 << 48;
const TAGS: u64 = 3 << 48;

enum Phase {
    /// Reading the parent, or updating it.
    Parent,
    /// The rewrite's read of the whole item.
    Read(Box<ReadMachine>),
    /// The rewrite's write of the changed item.
    Write(Box<PutMachine<'static>>),
    Done(Option<Box<Result<UpdateOutcome, ProtocolError>>>),
}

/// An update of one virtual item (see the module's documentation).
pub struct UpdateMachine {
    table: Table,
    key: Item,
    changes: Changes,
    options: UpdateOptions,
    flights: Flights<Purpose>,
    plan: Option<UpdatePlan>,
    /// Units the finished read consumed.
    read_consumed: Consumed,
    phase: Phase,
    local_ms: u64,
}

impl UpdateMachine {
    /// An update of the item with `key` in `table` by `changes`.
    pub fn new(
        key: &Item,
        changes: Changes,
        table: Table,
        options: UpdateOptions,
        env: Env,
    ) -> Self {
        let pace = Pace::new(INITIAL_WRITE_LIMIT, DEFAULT_CONCURRENCY);
        let retry = options.put.retry;
        let flights = Flights::new(retry, pace, StoreClock::new(env.local_ms), env.seed);
        let mut machine = Self {
            table,
            key: Item::new(),
            changes,
            options,
            flights,
            plan: None,
            read_consumed: Consumed::default(),
            phase: Phase::Parent,
            local_ms: env.local_ms,
        };
        let checked = machine
            .table
            .key
            .check_key(key)
            .map_err(ProtocolError::Key)
            .and_then(|key| {
                let nothing = machine.changes.set.is_empty() && machine.changes.remove.is_empty();
                if !(machine.options.rewrite && nothing) {
                    machine.changes.check(&machine.table)?;
                }
                Ok(key)
            });
        match checked {
            Ok(key) => {
                let get = parent_get(&machine.table.keys_target(), &key);
                machine.key = key;
                machine
                    .flights
                    .send(Request::Get(get), Purpose::Parent, Resend::Transient);
            }
            Err(error) => machine.finish(Err(error)),
        }
        machine
    }

    /// The plan, once the parent is read.
    pub fn plan(&self) -> Option<&UpdatePlan> {
        self.plan.as_ref()
    }

    fn finish(&mut self, result: Result<UpdateOutcome, ProtocolError>) {
        self.flights.stop();
        self.phase = Phase::Done(Some(Box::new(result)));
    }

    fn conflict(&self) -> ProtocolError {
        ProtocolError::Conflict {
            key: self.table.key.key_text(&self.key),
        }
    }

    fn env(&mut self) -> Env {
        Env {
            local_ms: self.local_ms,
            seed: self.flights.random() as u64,
        }
    }

    fn outcome(&self, applied: bool, put: Option<PutOutcome>) -> Option<UpdateOutcome> {
        let mut consumed = self.flights.consumed;
        consumed.read += self.read_consumed.read;
        if let Some(put) = &put {
            consumed.read += put.consumed_read_units;
            consumed.write += put.consumed_write_units;
        }
        Some(UpdateOutcome {
            plan: self.plan.clone()?,
            applied,
            put,
            consumed,
        })
    }

    fn done(&mut self, applied: bool, put: Option<PutOutcome>) {
        match self.outcome(applied, put) {
            Some(outcome) => self.finish(Ok(outcome)),
            None => self.finish(Err(ProtocolError::Cancelled)),
        }
    }

    fn parent_read(&mut self, stored: Option<Item>) -> Result<(), ProtocolError> {
        let update = VersionId::new(self.local_ms, self.flights.random());
        let limit = self.options.put.item_limit;
        let plan = plan_update(
            &self.key,
            stored.as_ref(),
            &self.changes,
            &self.table,
            limit,
            update,
            self.options.rewrite,
        )?;
        let (steps, expect) = (plan.steps.clone(), plan.expect.clone());
        self.plan = Some(plan);
        // Nothing to rewrite: no item, and no change to create one with.
        let nothing = self.changes.set.is_empty() && self.changes.remove.is_empty();
        if self.options.dry_run || (stored.is_none() && nothing) {
            self.done(false, None);
            return Ok(());
        }
        match steps {
            UpdateSteps::Parent(update) => {
                // Idempotent: resent after a lost answer, it sets the same
                // values under the same condition (its own update id
                // included, so an applied first copy fails the second's
                // condition only when another writer came in between).
                self.flights
                    .send(Request::Update(update), Purpose::Update, Resend::Transient);
            }
            UpdateSteps::Rewrite(_) => match stored {
                Some(parent) if parent.contains_key(crate::manifest::MANIFEST_ATTRIBUTE) => {
                    let env = self.env();
                    // The frames it reuses are not read.
                    let mut get = self.options.get.clone();
                    get.skip_frames = self.carried().iter().map(|g| g.version).collect();
                    let read =
                        ReadMachine::new(&self.key, self.table.clone(), Sink::Item, get, None, env);
                    self.phase = Phase::Read(Box::new(read));
                }
                stored => self.write(stored, expect),
            },
        }
        Ok(())
    }

    /// The rewrite's write of `item` (the whole item as read; `None`: no
    /// item), changed, on the condition that the parent is as `expect`
    /// says.
    fn write(&mut self, item: Option<Item>, expect: Expect) {
        let mut item = item.unwrap_or_else(|| self.table.key.key_of(&self.key));
        self.changes.apply(&mut item);
        let mut options = self.options.put.clone();
        options.precondition = Some(Precondition::Stored(expect));
        options.carried = self.carried().to_vec();
        let env = self.env();
        let put = PutMachine::new(PutSource::Owned(item), self.table.clone(), options, env);
        self.phase = Phase::Write(Box::new(put));
    }

    /// The groups the planned rewrite reuses.
    fn carried(&self) -> &[Manifest] {
        self.plan.as_ref().map_or(&[], |p| &p.carried[..])
    }

    /// The rewrite's read finished with `item` of `manifest`'s version.
    fn read_done(&mut self, item: Option<Item>, manifest: Option<Manifest>) {
        let planned = self.plan.as_ref().map(|p| &p.expect);
        let read = match (&item, &manifest) {
            (None, _) => Expect::Absent,
            (Some(_), None) => Expect::Plain,
            (Some(_), Some(manifest)) => Expect::of(manifest),
        };
        // Another version than the one planned for: an overwrite came in
        // between. (A newer update of the same version is kept: the
        // changes go on top of it.)
        let same = match (planned, &read) {
            (Some(Expect::Version { version: a, .. }), Expect::Version { version: b, .. }) => {
                a == b
            }
            _ => false,
        };
        if !same {
            let conflict = self.conflict();
            self.finish(Err(conflict));
            return;
        }
        self.write(item, read);
    }

    fn handled(&mut self, purpose: Purpose, stored: Option<Item>) -> Result<(), ProtocolError> {
        match purpose {
            Purpose::Parent => self.parent_read(stored),
            Purpose::Update => {
                self.done(true, None);
                Ok(())
            }
        }
    }
}

impl Machine for UpdateMachine {
    type Output = UpdateOutcome;

    fn poll(&mut self) -> Step<UpdateOutcome> {
        loop {
            if let Some(send) = self.flights.next_send() {
                return Step::Send(send);
            }
            let step = match &mut self.phase {
                Phase::Done(result) => {
                    return match result.take() {
                        Some(result) => Step::Done(*result),
                        None => Step::Wait,
                    };
                }
                Phase::Parent => return self.flights.idle(),
                Phase::Read(read) => match read.poll() {
                    Step::Done(Ok(outcome)) => {
                        self.read_consumed = read.consumed();
                        let (item, manifest) = match outcome {
                            Some(outcome) => (outcome.item, outcome.manifest),
                            None => (None, None),
                        };
                        self.read_done(item, manifest);
                        continue;
                    }
                    step => tagged(step, READ_TAG),
                },
                Phase::Write(put) => match put.poll() {
                    Step::Done(Ok(outcome)) => {
                        self.done(true, Some(outcome));
                        continue;
                    }
                    step => tagged(step, PUT_TAG),
                },
            };
            if let Step::Done(Err(error)) = step {
                self.finish(Err(error));
                continue;
            }
            return step;
        }
    }

    fn handle(&mut self, id: RequestId, response: Response) {
        let inner = RequestId(id.0 & !TAGS);
        match (&mut self.phase, id.0 & TAGS) {
            (Phase::Read(read), READ_TAG) => return read.handle(inner, response),
            (Phase::Write(put), PUT_TAG) => return put.handle(inner, response),
            (_, 0) => {}
            _ => return,
        }
        let result = match self.flights.land(id, response) {
            Some(Settled::Answer(purpose, answer)) => self.handled(purpose, item(answer)),
            // The version (or its last update) is not the one read: another
            // writer changed the item first.
            Some(Settled::Failed(Purpose::Update, failed)) if failed.condition_failed() => {
                Err(self.conflict())
            }
            Some(Settled::Failed(_, failed)) => Err(failed.error),
            None => Ok(()),
        };
        if let Err(error) = result {
            self.finish(Err(error));
        }
    }

    fn work(&mut self) {
        match &mut self.phase {
            Phase::Read(read) => read.work(),
            Phase::Write(put) => put.work(),
            _ => {}
        }
    }

    fn wake(&mut self, local_ms: u64) {
        self.local_ms = self.local_ms.max(local_ms);
        self.flights.wake(local_ms);
        match &mut self.phase {
            Phase::Read(read) => read.wake(local_ms),
            Phase::Write(put) => put.wake(local_ms),
            _ => {}
        }
    }

    fn cancel(&mut self) {
        match &mut self.phase {
            Phase::Done(_) => {}
            Phase::Read(read) => read.cancel(),
            Phase::Write(put) => put.cancel(),
            Phase::Parent => self.finish(Err(ProtocolError::Cancelled)),
        }
    }

    fn progress(&self) -> Progress {
        match &self.phase {
            Phase::Read(read) => read.progress(),
            Phase::Write(put) => put.progress(),
            _ => Progress::default(),
        }
    }

    fn consumed(&self) -> Consumed {
        let mut consumed = self.flights.consumed;
        consumed.read += self.read_consumed.read;
        let inner = match &self.phase {
            Phase::Read(read) => read.consumed(),
            Phase::Write(put) => put.consumed(),
            _ => Consumed::default(),
        };
        consumed.read += inner.read;
        consumed.write += inner.write;
        consumed
    }
}

/// A step of the rewrite's inner machine (not its success, which the
/// update takes over), its request id tagged.
fn tagged<T, U>(step: Step<T>, tag: u64) -> Step<U> {
    match step {
        Step::Send(mut send) => {
            send.id = RequestId(send.id.0 | tag);
            Step::Send(send)
        }
        Step::Work => Step::Work,
        Step::Input(n) => Step::Input(n),
        Step::Output => Step::Output,
        Step::Restart => Step::Restart,
        Step::Wait => Step::Wait,
        Step::Sleep(pause) => Step::Sleep(pause),
        Step::Done(Err(error)) => Step::Done(Err(error)),
        Step::Done(Ok(_)) => Step::Wait,
    }
}
