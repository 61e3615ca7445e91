//! `Machine`: core's protocol machines as one JavaScript class, for the
//! package's DynamoDB driver (`js/dynamodb.js`), which only sends what
//! `poll()` says and feeds the answers back. Every decision (what to send,
//! what to resend and when, when to commit, when to read the parent
//! again, what gc may delete) is core's.

use dynaslice_core::Code;
use dynaslice_core::protocol::{
    DeleteMachine, Env, GcMachine, Machine as _, ObjectGcMachine, Operation, ProtocolError,
    PutMachine, PutSource, QueryMachine, ReadMachine, RequestId, Sink, Step, UpdateMachine,
    UpdateOptions,
};
use js_sys::{Object, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::JsResult;
use crate::convert::{self, TableOptions, protocol, set, stream};
use crate::error::Failure;

enum Inner {
    Put(Box<PutMachine<'static>>),
    Read(Box<ReadMachine>),
    Delete(Box<DeleteMachine>),
    Gc(Box<GcMachine>, bool),
    Update(Box<UpdateMachine>),
    Query(Box<QueryMachine>),
    ObjectGc(Box<ObjectGcMachine>, bool),
}

/// A protocol machine: a write, a read, an update, a delete or a gc.
#[wasm_bindgen]
pub struct Machine {
    inner: Inner,
    /// The operation of each request out, to read its answer as.
    out: Vec<(u64, Operation)>,
}

/// This machine's clock and 64 random bits, from `crypto.getRandomValues`.
fn env() -> Result<Env, Failure> {
    let random = convert::random_bytes::<8>()?;
    Ok(Env {
        local_ms: js_sys::Date::now().max(0.0) as u64,
        seed: u64::from_le_bytes(random),
    })
}

fn machine(inner: Inner) -> Machine {
    Machine {
        inner,
        out: Vec::new(),
    }
}

/// A protocol error as a JavaScript error, naming the option that raises a
/// size limit it hit.
fn failure(error: ProtocolError, limit_option: &str) -> JsValue {
    let failure = match error {
        ProtocolError::Split(e) => Failure::from(e),
        other => Failure::new(other.code(), other.to_string()),
    };
    failure.raised_by(limit_option).into()
}

#[wasm_bindgen]
impl Machine {
    /// A write of `item` (a value stream); `options` as `putItem` takes them.
    pub fn put(item: &[u8], options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let put = convert::put_options(&table, &options)?;
        let item = stream::item(item)?;
        let source = PutSource::Owned(item);
        let inner = PutMachine::new(source, table.core(), put, env()?);
        Ok(machine(Inner::Put(Box::new(inner))))
    }

    /// A write of `parent` (a value stream) with the binary attribute
    /// `options.attribute` of `options.size` bytes (or as many as come
    /// before `endInput()` when no size is given), given with `input()`.
    #[wasm_bindgen(js_name = putStream)]
    pub fn put_stream(parent: &[u8], options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let put = convert::put_stream_options(&table, &options)?;
        let attribute = convert::attribute(&options, "the streamed binary attribute")?;
        let source = PutSource::Stream {
            parent: stream::item(parent)?,
            attribute,
            len: convert::stream_size(&options)?,
        };
        let inner = PutMachine::new(source, table.core(), put, env()?);
        Ok(machine(Inner::Put(Box::new(inner))))
    }

    /// A read of the whole item with `key` (a value stream).
    pub fn get(key: &[u8], options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let get = convert::get_options(&table, &options)?;
        let key = stream::item(key)?;
        let inner = ReadMachine::new(&key, table.core(), Sink::Item, get, None, env()?);
        Ok(machine(Inner::Read(Box::new(inner))))
    }

    /// A read of the attribute `options.attribute` of the item with `key`,
    /// its bytes taken with `output()`, at most `options.window` chunk
    /// requests ahead.
    #[wasm_bindgen(js_name = getStream)]
    pub fn get_stream(key: &[u8], options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let get = convert::get_options(&table, &options)?;
        let name = convert::attribute(&options, "the attribute to read")?;
        let window = match convert::get(&options, "window").is_undefined() {
            true => None,
            false => match convert::size(&options, "window", 0)? {
                0 => {
                    return Err(Failure::new(
                        Code::OptionsInvalid,
                        "option window must be a positive integer",
                    )
                    .into());
                }
                n => Some(n),
            },
        };
        let sink = Sink::Attribute {
            name,
            restartable: false,
        };
        let key = stream::item(key)?;
        let inner = ReadMachine::new(&key, table.core(), sink, get, window, env()?);
        Ok(machine(Inner::Read(Box::new(inner))))
    }

    /// A delete of the item with `key` (a value stream).
    pub fn delete(key: &[u8], options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let retry = convert::retry(&options)?;
        let key = stream::item(key)?;
        let inner = DeleteMachine::new(&key, table.core(), retry, env()?);
        Ok(machine(Inner::Delete(Box::new(inner))))
    }

    /// An update of the item with `key` (a value stream): the attributes
    /// of `set` (a value stream) set, those named in `remove` removed;
    /// `options` as `putItem` takes them, with `dryRun`.
    pub fn update(
        key: &[u8],
        set: &[u8],
        remove: Vec<String>,
        options: JsValue,
    ) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let update = UpdateOptions {
            put: convert::put_options(&table, &options)?,
            get: convert::get_options(&table, &options)?,
            dry_run: convert::flag(&options, "dryRun", false)?,
            rewrite: convert::flag(&options, "rewrite", false)?,
        };
        let changes = dynaslice_core::plan::Changes {
            set: stream::item(set)?,
            remove,
        };
        let key = stream::item(key)?;
        let inner = UpdateMachine::new(&key, changes, table.core(), update, env()?);
        Ok(machine(Inner::Update(Box::new(inner))))
    }

    /// Whole items from the caller's `QueryCommand` (or `ScanCommand`)
    /// `input`, whose `ExpressionAttributeValues` and `ExclusiveStartKey`
    /// come as value streams (`start` empty for none); each `output`
    /// step's items taken with `items()`.
    pub fn query(
        input: JsValue,
        values: &[u8],
        start: &[u8],
        options: JsValue,
    ) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let start = match start.is_empty() {
            true => None,
            false => Some(stream::item(start)?),
        };
        let query = convert::query_input(&input, stream::item(values)?, start)?;
        let query_options = convert::query_options(&table, &options)?;
        let inner = QueryMachine::new(table.core(), query, query_options, env()?);
        Ok(machine(Inner::Query(Box::new(inner))))
    }

    /// A check of every item of the table (`options.table`): a Scan of it
    /// (of `options.segment`, `[segment, total]`, when given), each
    /// virtual item read whole and its digests checked; each `output`
    /// step's counts and damaged items taken with `checked()`.
    pub fn verify(options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let scan = dynaslice_core::plan::Query {
            table: table.table.clone(),
            segment: convert::segment(&options)?,
            ..Default::default()
        };
        let verify = convert::verify_options(&table, &options)?;
        let inner = QueryMachine::new(table.core(), scan, verify, env()?);
        Ok(machine(Inner::Query(Box::new(inner))))
    }

    /// What a verify's `output` step checked: `{ items, damaged }`, the
    /// count of items that read back and the damaged ones in order, each
    /// `{ key, code, message }` (the key a value stream).
    pub fn checked(&mut self) -> JsValue {
        let checked = Object::new();
        let Inner::Query(m) = &mut self.inner else {
            return checked.into();
        };
        set(&checked, "items", &(m.take().len() as f64).into());
        let damaged: js_sys::Array = m
            .take_damaged()
            .iter()
            .map(|d| {
                let found = Object::new();
                set(&found, "key", &stream::to_js_stream(&d.key));
                set(&found, "code", &d.error.code().as_str().into());
                set(&found, "message", &d.error.to_string().into());
                JsValue::from(found)
            })
            .collect();
        set(&checked, "damaged", &damaged);
        checked.into()
    }

    /// The items a query's `output` step has ready, as value streams, in
    /// order.
    pub fn items(&mut self) -> js_sys::Array {
        match &mut self.inner {
            Inner::Query(m) => m.take().iter().map(stream::to_js_stream).collect(),
            _ => js_sys::Array::new(),
        }
    }

    /// A collection of the table's unreferenced chunks.
    pub fn gc(options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let gc = convert::gc_options(&options)?;
        let retry = convert::retry(&options)?;
        let dry_run = gc.dry_run;
        let inner = GcMachine::new(table.core(), gc, retry, env()?);
        Ok(machine(Inner::Gc(Box::new(inner), dry_run)))
    }

    /// A collection of the table's unreferenced S3 objects and stale
    /// multipart uploads (the table's options name the store: `s3`).
    #[wasm_bindgen(js_name = gcObjects)]
    pub fn gc_objects(options: JsValue) -> JsResult<Machine> {
        let table = TableOptions::from_js(&options)?;
        let gc = convert::gc_options(&options)?;
        let dry_run = gc.dry_run;
        let inner = ObjectGcMachine::new(table.core(), gc, env()?);
        Ok(machine(Inner::ObjectGc(Box::new(inner), dry_run)))
    }

    /// The next step: `{ kind: "send", id, operation, input, delayMs,
    /// resendable }`, `{ kind: "work" }`, `{ kind: "input", max }`, `{
    /// kind: "output" }`, `{ kind: "restart" }`, `{ kind: "wait" }`, `{
    /// kind: "sleep", ms }` (wait for an answer or `ms` milliseconds, then
    /// call `wake`) or `{ kind: "done", result }`; a failed operation
    /// throws its error.
    pub fn poll(&mut self) -> JsResult<JsValue> {
        macro_rules! step {
            ($m:expr, $done:expr, $limit:expr) => {
                match $m.poll() {
                    Step::Send(send) => {
                        self.out.push((send.id.0, send.request.operation()));
                        Ok(protocol::send_step(&send))
                    }
                    Step::Work => Ok(kind("work")),
                    Step::Input(max) => {
                        let step = kind_object("input");
                        set(&step, "max", &(max as f64).into());
                        Ok(step.into())
                    }
                    Step::Output => Ok(kind("output")),
                    Step::Restart => Ok(kind("restart")),
                    Step::Wait => Ok(kind("wait")),
                    Step::Sleep(pause) => {
                        let step = kind_object("sleep");
                        set(&step, "ms", &(pause.as_millis() as f64).into());
                        Ok(step.into())
                    }
                    Step::Done(Ok(outcome)) => {
                        let step = kind_object("done");
                        set(&step, "result", &$done(outcome));
                        Ok(step.into())
                    }
                    Step::Done(Err(error)) => Err(failure(error, $limit)),
                }
            };
        }
        match &mut self.inner {
            Inner::Put(m) => step!(m, |o| protocol::put_outcome(&o), "maxRawBytes"),
            Inner::Read(m) => {
                let (reads, used) = (m.parent_reads(), m.consumed());
                step!(
                    m,
                    |o: Option<_>| protocol::read_outcome(o.as_ref(), reads, used),
                    "maxBytes"
                )
            }
            Inner::Delete(m) => step!(m, |o| protocol::delete_outcome(&o), "maxBytes"),
            Inner::Update(m) => step!(m, |o| protocol::update_outcome(&o), "maxRawBytes"),
            Inner::Query(m) => step!(m, |o| protocol::query_outcome(&o), "maxBytes"),
            Inner::Gc(m, dry_run) => {
                let dry_run = *dry_run;
                step!(m, |o| protocol::gc_report(&o, dry_run), "maxBytes")
            }
            Inner::ObjectGc(m, dry_run) => {
                let dry_run = *dry_run;
                step!(m, |o| protocol::object_gc_report(&o, dry_run), "maxBytes")
            }
        }
    }

    /// The answer (or failure) of request `id`, as the driver read it off
    /// the SDK's output (see `convert::protocol::response`).
    pub fn answer(&mut self, id: f64, response: JsValue) -> JsResult<()> {
        let id = id as u64;
        let Some(at) = self.out.iter().position(|(i, _)| *i == id) else {
            return Ok(());
        };
        let (_, operation) = self.out.swap_remove(at);
        let response = protocol::response(operation, &response)?;
        let id = RequestId(id);
        match &mut self.inner {
            Inner::Put(m) => m.handle(id, response),
            Inner::Read(m) => m.handle(id, response),
            Inner::Delete(m) => m.handle(id, response),
            Inner::Update(m) => m.handle(id, response),
            Inner::Query(m) => m.handle(id, response),
            Inner::Gc(m, _) => m.handle(id, response),
            Inner::ObjectGc(m, _) => m.handle(id, response),
        }
        Ok(())
    }

    /// The time (`Date.now()`), told after a `sleep` step, after `work` and
    /// whenever the driver resumes: pauses that are over end.
    pub fn wake(&mut self, local_ms: f64) {
        let local_ms = local_ms.max(0.0) as u64;
        match &mut self.inner {
            Inner::Put(m) => m.wake(local_ms),
            Inner::Read(m) => m.wake(local_ms),
            Inner::Delete(m) => m.wake(local_ms),
            Inner::Update(m) => m.wake(local_ms),
            Inner::Query(m) => m.wake(local_ms),
            Inner::Gc(m, _) => m.wake(local_ms),
            Inner::ObjectGc(m, _) => m.wake(local_ms),
        }
    }

    /// Does the CPU-heavy work a `work` step asked for.
    pub fn work(&mut self) {
        match &mut self.inner {
            Inner::Put(m) => m.work(),
            Inner::Read(m) => m.work(),
            Inner::Delete(m) => m.work(),
            Inner::Update(m) => m.work(),
            Inner::Query(m) => m.work(),
            Inner::Gc(m, _) => m.work(),
            Inner::ObjectGc(m, _) => m.work(),
        }
    }

    /// The next piece of a streamed write's payload.
    pub fn input(&mut self, bytes: &[u8]) {
        if let Inner::Put(m) = &mut self.inner {
            m.input(bytes);
        }
    }

    /// A streamed write's payload ended.
    #[wasm_bindgen(js_name = endInput)]
    pub fn end_input(&mut self) {
        if let Inner::Put(m) = &mut self.inner {
            m.end_input();
        }
    }

    /// The attribute's next bytes (an `output` step); empty when none.
    pub fn output(&mut self) -> Uint8Array {
        match &mut self.inner {
            Inner::Read(m) => Uint8Array::from(m.output()),
            _ => Uint8Array::new_with_length(0),
        }
    }

    /// A collection's counts so far (an `output` step of gc: a page is
    /// done): `{ chunks, deleted }`.
    #[wasm_bindgen(js_name = gcProgress)]
    pub fn gc_progress(&self) -> JsValue {
        let progress = Object::new();
        if let Inner::Gc(m, _) = &self.inner {
            let report = m.report();
            set(&progress, "chunks", &(report.chunks as f64).into());
            set(&progress, "deleted", &(report.deleted as f64).into());
        }
        progress.into()
    }

    /// The attribute's length once known (a streamed read).
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> Option<f64> {
        match &self.inner {
            Inner::Read(m) => m.size().map(|s| s as f64),
            _ => None,
        }
    }

    /// Stops: only what cleans up after the operation is sent from now on.
    pub fn cancel(&mut self) {
        match &mut self.inner {
            Inner::Put(m) => m.cancel(),
            Inner::Read(m) => m.cancel(),
            Inner::Delete(m) => m.cancel(),
            Inner::Update(m) => m.cancel(),
            Inner::Query(m) => m.cancel(),
            Inner::Gc(m, _) => m.cancel(),
            Inner::ObjectGc(m, _) => m.cancel(),
        }
    }

    /// `{ bytesDone, bytesTotal, chunksDone, chunksTotal }`.
    pub fn progress(&self) -> JsValue {
        let progress = match &self.inner {
            Inner::Put(m) => m.progress(),
            Inner::Read(m) => m.progress(),
            Inner::Delete(m) => m.progress(),
            Inner::Update(m) => m.progress(),
            Inner::Query(m) => m.progress(),
            Inner::Gc(m, _) => m.progress(),
            Inner::ObjectGc(m, _) => m.progress(),
        };
        protocol::progress(progress)
    }
}

fn kind_object(kind: &str) -> Object {
    let step = Object::new();
    set(&step, "kind", &kind.into());
    step
}

fn kind(kind: &str) -> JsValue {
    kind_object(kind).into()
}
