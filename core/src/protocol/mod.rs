//! The protocols, as state machines that do no I/O: writing a virtual item
//! ([`PutMachine`]), reading one ([`ReadMachine`]), deleting one
//! ([`DeleteMachine`]), updating one ([`UpdateMachine`]), reading whole
//! items from a caller's Query or Scan ([`QueryMachine`]), collecting what crashed writers left
//! ([`GcMachine`]), and one plain request with retries ([`Call`]).
//!
//! A machine decides everything: which requests to send and when, which
//! failures to resend and after how long, how many batch requests fly,
//! when a write commits, when a read goes back to the parent, what `gc`
//! may delete. An executor (the Rust host, the npm package's driver) only
//! does what [`Machine::poll`] says: sends a [`Request`] and feeds its
//! answer back with [`Machine::handle`], runs CPU-heavy
//! [`Machine::work`] where it does not block others, moves bytes in and
//! out, and reports progress. Policy numbers live in [`policy`].
//!
//! ```
//! use dynaslice_core::protocol::{Answer, Call, Env, Failure, Machine, Request, Response, Step};
//! use dynaslice_core::plan::Get;
//! use dynaslice_core::{AttributeValue, Item};
//!
//! let mut key = Item::new();
//! key.insert("pk".into(), AttributeValue::S("a".into()));
//! let get = Get { table: "docs".into(), key, consistent: true };
//! let env = Env { local_ms: 1_763_683_200_000, seed: 7 };
//! let mut call = Call::new(Request::Get(get), Default::default(), env);
//! let Step::Send(send) = call.poll() else { unreachable!() };
//! // … the executor sends `send.request`: the store is busy.
//! let busy = Failure::answered(400, "ThrottlingException", "rate exceeded");
//! call.handle(send.id, Response::failure(busy, env.local_ms));
//! // The same request again, after a pause with jitter.
//! let Step::Send(again) = call.poll() else { unreachable!() };
//! assert_eq!((again.id, again.request), (send.id, send.request));
//! call.handle(again.id, Response::answer(Answer::Item(None), env.local_ms));
//! assert!(matches!(call.poll(), Step::Done(Ok(Answer::Item(None)))));
//! ```

mod call;
mod clock;
mod delete;
mod deletes;
mod error;
mod flights;
mod gc;
mod object_gc;
mod pace;
pub mod policy;
mod put;
mod query;
mod read;
mod request;
mod update;

pub use call::Call;
pub use clock::StoreClock;
pub use delete::{DeleteMachine, DeleteOutcome};
pub use error::ProtocolError;
pub use flights::Consumed;
pub use gc::{ANCHORS_PER_PAGE, GcMachine, GcOptions, GcReport};
pub use object_gc::{ObjectGcMachine, ObjectGcReport};
pub use pace::{Pace, Signal, rate_pause};
pub use policy::RetryPolicy;
pub use put::{PutMachine, PutOptions, PutOutcome, PutSource};
pub use query::{Damaged, Position, QueryMachine, QueryOptions, QueryOutcome};
pub use read::{GetOptions, ReadMachine, ReadOutcome, Sink};
pub use request::{
    Answer, Failure, FailureKind, Listed, ObjectAnswer, ObjectKey, ObjectRequest, Operation,
    PartDone, Request, RequestId, Response, Send, StoreDate, THROTTLING_CODES, TRANSIENT_CODES,
    Upload,
};
pub use update::{UpdateMachine, UpdateOptions, UpdateOutcome};

/// What the executor does next.
#[derive(Debug)]
pub enum Step<T> {
    /// Send this request (after its delay), then feed its answer to
    /// [`Machine::handle`]. More may follow before any answer is due.
    Send(Send),
    /// Call [`Machine::work`] (compressing or decoding up to a few hundred
    /// kilobytes), then poll again.
    Work,
    /// Give the machine up to this many more bytes of its payload, or tell
    /// it the payload ended ([`PutMachine::input`]).
    Input(usize),
    /// Output is ready: take it (a read's decoded bytes with
    /// [`ReadMachine::output`], a query's items with
    /// [`QueryMachine::take`]), then poll again.
    Output,
    /// Throw away the output taken so far: the read starts over, from a
    /// newer version (a concurrent overwrite replaced the one being read).
    Restart,
    /// Nothing to do until an answer is fed back.
    Wait,
    /// Nothing to do until an answer is fed back or this much time has
    /// passed, whichever comes first: then tell the machine the time
    /// ([`Machine::wake`]) and poll again. A request resting before its
    /// resend goes out when the pause is over.
    Sleep(core::time::Duration),
    /// Finished. Poll no more.
    Done(Result<T, ProtocolError>),
}

/// How far an operation has come, for a progress display.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Bytes done so far (what a byte is depends on the operation: the
    /// payload's bytes for a streamed write, the items' bytes otherwise).
    pub bytes_done: u64,
    /// Bytes in all, as far as known.
    pub bytes_total: u64,
    /// Chunks done so far.
    pub chunks_done: u32,
    /// Chunks in all, as far as known.
    pub chunks_total: u32,
}

/// A protocol machine.
pub trait Machine {
    /// What it finishes with.
    type Output;

    /// The next thing to do.
    fn poll(&mut self) -> Step<Self::Output>;

    /// The answer (or failure) of the request `id`.
    fn handle(&mut self, id: RequestId, response: Response);

    /// Does the CPU-heavy work [`Step::Work`] asked for.
    fn work(&mut self) {}

    /// The executor's clock, in Unix milliseconds: after a [`Step::Sleep`],
    /// after [`Machine::work`] and whenever the executor resumes, so the
    /// pauses that are over end.
    fn wake(&mut self, local_ms: u64);

    /// Stops the operation: nothing new is started but what cleans up
    /// after it (a write's chunks that nothing refers to yet); it then
    /// finishes with [`ProtocolError::Cancelled`]. Answers of requests
    /// already out are still fed back, or simply dropped.
    fn cancel(&mut self);

    /// How far it has come.
    fn progress(&self) -> Progress {
        Progress::default()
    }

    /// Capacity units the answers reported so far.
    fn consumed(&self) -> Consumed;
}

/// What every machine is started with from its executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Env {
    /// The executor's clock, in Unix milliseconds.
    pub local_ms: u64,
    /// Random bits: version ids and the jitter of pauses come from them.
    pub seed: u64,
}
