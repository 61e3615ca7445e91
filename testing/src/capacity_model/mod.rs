//! A DynamoDB capacity model: a loopback proxy in front of a local server
//! that meters each request as DynamoDB does, enforces DynamoDB's throughput
//! limits with token buckets, adds latency, and throttles (or waits) the way
//! the service does. No local server enforces any limit, and those limits
//! decide real throughput; benchmarks and tests run in this model instead.
//!
//! ```no_run
//! # async fn example(upstream_addr: std::net::SocketAddr) {
//! use dynaslice_testing::capacity_model;
//!
//! let model = capacity_model::start(upstream_addr, capacity_model::Model::documented()).await;
//! // ... point a client at model.endpoint() (`dynaslice_host::local_client`),
//! // run the code under test, then look at model.counts() ...
//! # }
//! ```
//!
//! What it does to each request:
//!
//! 1. **Meters** it (`capacity_meter.rs`): write units per item by size,
//!    read units per 4 KB, transactions double, charged to the item's
//!    partition key value and its table. Reads are known only from the
//!    answer: they are charged an estimate (from the sizes the model saw
//!    written) before, and corrected to the real cost after.
//! 2. **Enforces** the limits (`capacity_buckets.rs`): one token bucket per
//!    partition key value and one per table, each with a rate and a burst.
//!    [`Model::documented`] uses the documented numbers: each partition serves
//!    at most 1,000 write units or 3,000 read units per second, or a linear
//!    combination ("Understanding DynamoDB warm throughput in different
//!    scenarios",
//!    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html),
//!    and a new on-demand table starts at 4,000 write and 12,000 read units
//!    per second ("Pre-warming a table for on-demand capacity mode",
//!    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html;
//!    AWS Knowledge Center, "on-demand table throttling",
//!    https://repost.aws/knowledge-center/on-demand-table-throttling-dynamodb).
//!    In [`Mode::Wait`] a request over the limit is delayed until the buckets
//!    have served it; in [`Mode::Throttle`] it is refused as DynamoDB refuses
//!    it:
//!    - over a partition's limit: 400 `ProvisionedThroughputExceededException`
//!      (its ThrottlingReason is `KeyRangeThroughputExceeded` in both capacity
//!      modes: "DynamoDB throttling resolution guide",
//!      https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/troubleshooting-throttling-diagnostics.html);
//!    - over a table's limit: 400 `ThrottlingException` ("Error handling with
//!      DynamoDB",
//!      https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html:
//!      "For tables using on-demand mode, this exception might be returned
//!      for any data plane API operation if your request rate is too high");
//!    - a BatchWriteItem or BatchGetItem forwards the requests that fit, in
//!      order, and answers the rest as `UnprocessedItems` / `UnprocessedKeys`;
//!      when none fits it answers `ProvisionedThroughputExceededException`
//!      (BatchWriteItem API reference: "If none of the items can be processed
//!      due to insufficient provisioned throughput on all of the tables in the
//!      request, then BatchWriteItem returns a
//!      ProvisionedThroughputExceededException").
//! 3. **Adds latency**: a base per request plus a cost per KiB of request and
//!    answer body, as one sleep before the answer (throttled answers too).
//! 4. **Counts** everything ([`Counts`]).
//!
//! Simplifications, each a choice a reader should know:
//! - A partition here is one partition key value. DynamoDB's partitions hold
//!   many key values (and split hot ones); a per-value bucket is what a
//!   well-spread workload meets and the worst a hot key meets.
//! - A bucket's burst is configurable and small by default (one second of
//!   capacity): DynamoDB keeps up to 300 seconds of unused capacity as burst
//!   capacity, but "on a best-effort basis", not guaranteed, and may spend
//!   it on background maintenance (AWS Knowledge Center, "How does DynamoDB
//!   handle spiky workloads in short intervals",
//!   https://repost.aws/knowledge-center/dynamodb-spiky-workloads-short-intervals).
//!   On-demand tables' growth past twice the previous peak is not modelled:
//!   the table's rate stays at its configured value.
//! - A request may cost more than a bucket holds (a transaction of several
//!   400 KB items). In throttle mode it is admitted when its buckets hold its
//!   cost or are full, and the debt it leaves falls on the requests after
//!   it; in wait mode each request waits until its buckets are out of the
//!   debt its own cost made (first come, first served). Reads may leave a
//!   bucket in debt too: their cost is known only after the answer.
//! - An item's size before a write is the size the model saw written through
//!   it; items written around the model count as absent.
//! - Indexes are not metered (dynaslice writes none).

#![allow(dead_code)] // each test file uses its own part of this module

mod buckets;
mod meter;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::relay::{
    self, BatchOp, Message, Upstream, bad_gateway, batch_entries, error_answer, merge_unprocessed,
    split_batch,
};
use buckets::{BucketId, Buckets, Refusal};
use meter::{Charge, Effect, ItemKey, Known, Metered, Op, Schema, SizeMap};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

pub use buckets::Limit;

/// What the model does with a request over a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Delays it until the buckets have served it (no request ever fails).
    Wait,
    /// Refuses it as DynamoDB does (errors, partial batches).
    Throttle,
}

/// The latency added to every request: `base + per_kib * (request body +
/// answer body) / 1024`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latency {
    /// Per request.
    pub base: Duration,
    /// Per KiB of request and answer body.
    pub per_kib: Duration,
}

impl Latency {
    /// No latency.
    pub const NONE: Latency = Latency {
        base: Duration::ZERO,
        per_kib: Duration::ZERO,
    };

    /// The latency of a request and answer of these body lengths.
    pub fn of(&self, request_bytes: usize, answer_bytes: usize) -> Duration {
        self.base
            + self
                .per_kib
                .mul_f64((request_bytes + answer_bytes) as f64 / 1024.0)
    }
}

/// The model's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Each partition key value's limit.
    pub partition: Limit,
    /// Each table's limit.
    pub table: Limit,
    /// Wait or throttle.
    pub mode: Mode,
    /// Added to every request.
    pub latency: Latency,
}

impl Model {
    /// A partition's documented limit: 1,000 write or 3,000 read units per
    /// second ("Understanding DynamoDB warm throughput in different
    /// scenarios"), with one second of burst.
    pub const PARTITION: Limit = Limit {
        write_per_s: 1_000.0,
        read_per_s: 3_000.0,
        burst_s: 1.0,
    };

    /// A new on-demand table's documented starting throughput: 4,000 write or
    /// 12,000 read units per second ("Pre-warming a table for on-demand
    /// capacity mode"), with one second of burst.
    pub const NEW_ON_DEMAND_TABLE: Limit = Limit {
        write_per_s: 4_000.0,
        read_per_s: 12_000.0,
        burst_s: 1.0,
    };

    /// The default latency: 8 ms a request (the rough model of issue 15's
    /// author; a same-region round trip to DynamoDB is a few ms) plus 10 µs
    /// per KiB (about 100 MiB/s per connection).
    pub const LATENCY: Latency = Latency {
        base: Duration::from_millis(8),
        per_kib: Duration::from_micros(10),
    };

    /// The documented limits, [`Model::LATENCY`], waiting.
    pub fn documented() -> Model {
        Model {
            partition: Model::PARTITION,
            table: Model::NEW_ON_DEMAND_TABLE,
            mode: Mode::Wait,
            latency: Model::LATENCY,
        }
    }

    /// The same settings in another mode.
    pub fn with_mode(self, mode: Mode) -> Model {
        Model { mode, ..self }
    }
}

/// Capacity units: write units and read units (in halves, so sums are exact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Units {
    /// Write units.
    pub write: u64,
    /// Read units times two.
    pub read_half: u64,
}

impl Units {
    /// Read units as DynamoDB reports them (`0.5`, `1.0`, ...).
    pub fn read(&self) -> f64 {
        self.read_half as f64 / 2.0
    }

    fn add(&mut self, charge: &Charge) {
        self.write += charge.write_units;
        self.read_half += charge.read_half_units;
    }

    fn minus(&self, earlier: &Units) -> Units {
        Units {
            write: self.write.saturating_sub(earlier.write),
            read_half: self.read_half.saturating_sub(earlier.read_half),
        }
    }
}

/// What the model has done so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Requests received from clients.
    pub requests: u64,
    /// Requests forwarded to the upstream (whole or the part of a batch).
    pub forwarded: u64,
    /// Data requests the model could not meter (a body it does not
    /// understand, a table that does not exist): forwarded free.
    pub unmetered: u64,
    /// `ProvisionedThroughputExceededException` answers (a partition's limit,
    /// or a batch of which nothing fit).
    pub throttled_partition: u64,
    /// `ThrottlingException` answers (a table's limit).
    pub throttled_table: u64,
    /// Batches answered with part of them unprocessed.
    pub partial_batches: u64,
    /// Batch requests (items or keys) handed back unprocessed.
    pub unprocessed: u64,
    /// Requests the upstream did not answer (the client got a 502). Should stay 0.
    pub upstream_errors: u64,
    /// Units consumed in all.
    pub units: Units,
    /// Units consumed per table.
    pub tables: BTreeMap<String, Units>,
    /// Units consumed per (table, partition key value as DynamoDB JSON).
    pub partitions: BTreeMap<(String, String), Units>,
    /// Time requests spent waiting for capacity ([`Mode::Wait`]).
    pub waited: Duration,
    /// Latency added, summed over requests.
    pub latency: Duration,
}

impl Counts {
    /// Throttling answers of both kinds.
    pub fn throttled(&self) -> u64 {
        self.throttled_partition + self.throttled_table
    }

    /// What happened between `earlier` (a snapshot of the same model) and this.
    pub fn since(&self, earlier: &Counts) -> Counts {
        fn minus_map<K: Ord + Clone>(
            now: &BTreeMap<K, Units>,
            then: &BTreeMap<K, Units>,
        ) -> BTreeMap<K, Units> {
            now.iter()
                .map(|(k, u)| {
                    (
                        k.clone(),
                        u.minus(&then.get(k).copied().unwrap_or_default()),
                    )
                })
                .filter(|(_, u)| *u != Units::default())
                .collect()
        }
        Counts {
            requests: self.requests - earlier.requests,
            forwarded: self.forwarded - earlier.forwarded,
            unmetered: self.unmetered - earlier.unmetered,
            throttled_partition: self.throttled_partition - earlier.throttled_partition,
            throttled_table: self.throttled_table - earlier.throttled_table,
            partial_batches: self.partial_batches - earlier.partial_batches,
            unprocessed: self.unprocessed - earlier.unprocessed,
            upstream_errors: self.upstream_errors - earlier.upstream_errors,
            units: self.units.minus(&earlier.units),
            tables: minus_map(&self.tables, &earlier.tables),
            partitions: minus_map(&self.partitions, &earlier.partitions),
            waited: self.waited.saturating_sub(earlier.waited),
            latency: self.latency.saturating_sub(earlier.latency),
        }
    }

    /// The least time `model`'s limits need to serve these units, in
    /// seconds, from the state [`CapacityModel::empty_buckets`] leaves for
    /// fresh keys (tables' buckets empty, partition key values not seen
    /// before with their burst): the busiest bucket's units over its rate (a
    /// linear combination of write and read units), a partition's less its
    /// burst.
    pub fn capacity_seconds(&self, model: &Model) -> f64 {
        let tables = self
            .tables
            .values()
            .map(|u| model.table.cost(u.write, u.read_half));
        let partitions = self
            .partitions
            .values()
            .map(|u| model.partition.cost(u.write, u.read_half) - model.partition.burst_s);
        tables.chain(partitions).fold(0.0, f64::max)
    }
}

/// What the model knows about tables and items.
#[derive(Default)]
struct State {
    schemas: HashMap<String, Schema>,
    sizes: SizeMap,
}

impl Known for State {
    fn schema(&self, table: &str) -> Option<&Schema> {
        self.schemas.get(table)
    }
    fn size(&self, table: &str, key: &ItemKey) -> Option<usize> {
        self.sizes.get(table, key)
    }
    fn stored_bytes(&self, table: &str, partition: Option<&str>) -> usize {
        self.sizes.stored_bytes(table, partition)
    }
}

/// State shared by the accept loop, every connection and the handle.
struct Shared {
    upstream: SocketAddr,
    model: Mutex<Model>,
    buckets: Mutex<Buckets>,
    state: Mutex<State>,
    counts: Mutex<Counts>,
}

/// A running capacity model. Dropping it stops accepting connections;
/// connections already open end when their clients close them.
pub struct CapacityModel {
    /// The address it listens on (127.0.0.1, a port the kernel picked).
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl CapacityModel {
    /// `http://127.0.0.1:<port>`, for an SDK client's `endpoint_url`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The model's settings now.
    pub fn model(&self) -> Model {
        *self.shared.model.lock().unwrap()
    }

    /// Switches between waiting and throttling (for the next request).
    pub fn set_mode(&self, mode: Mode) {
        self.shared.model.lock().unwrap().mode = mode;
    }

    /// Empties every bucket, and makes tables' buckets created from now on
    /// start empty: no saved burst, so a table serves `units` in
    /// `units / rate`. A partition key value not seen before still starts
    /// with its burst (it sits on a partition with capacity to spare).
    pub fn empty_buckets(&self) {
        self.shared.buckets.lock().unwrap().empty();
    }

    /// Fills every bucket to its burst, and makes new buckets start full
    /// (as after [`start`]).
    pub fn fill_buckets(&self) {
        self.shared.buckets.lock().unwrap().fill();
    }

    /// A snapshot of the counts.
    pub fn counts(&self) -> Counts {
        self.shared.counts.lock().unwrap().clone()
    }
}

impl Drop for CapacityModel {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Starts a capacity model on 127.0.0.1 (a free port) in front of
/// `upstream`. Buckets start full. Must run inside a Tokio runtime.
pub async fn start(upstream: SocketAddr, model: Model) -> CapacityModel {
    let shared = Arc::new(Shared {
        upstream,
        model: Mutex::new(model),
        buckets: Mutex::new(Buckets::new(model.partition, model.table)),
        state: Mutex::new(State::default()),
        counts: Mutex::new(Counts::default()),
    });
    let (addr, accept) = relay::listen({
        let shared = shared.clone();
        move |client| serve_client(shared.clone(), client)
    })
    .await;
    CapacityModel {
        addr,
        shared,
        accept,
    }
}

/// Serves one client connection, one request at a time, each answered
/// after the model's latency.
async fn serve_client(shared: Arc<Shared>, client: TcpStream) {
    let upstream = shared.upstream;
    relay::serve_requests(client, upstream, |request, upstream| {
        let shared = shared.clone();
        Box::pin(async move {
            shared.counts.lock().unwrap().requests += 1;
            let (answer, answer_body) = handle(&shared, upstream, request).await;
            let latency = shared
                .model
                .lock()
                .unwrap()
                .latency
                .of(request.body.len(), answer_body);
            shared.counts.lock().unwrap().latency += latency;
            tokio::time::sleep(latency).await;
            Some(answer)
        })
    })
    .await;
}

/// The answer to one request, and its body's length (for the latency).
async fn handle(shared: &Shared, upstream: &mut Upstream, request: &Message) -> (Vec<u8>, usize) {
    let head_request = request.method() == "HEAD";
    let operation = request.operation().unwrap_or_default().to_string();
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    let (Some(op), Some(body)) = (Op::of(&operation), body) else {
        // The control plane: relayed; a table created or deleted anew is
        // forgotten.
        if let Some(table) = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|b| b.get("TableName")?.as_str().map(str::to_string))
            && matches!(operation.as_str(), "CreateTable" | "DeleteTable")
        {
            let mut state = shared.state.lock().unwrap();
            state.schemas.remove(&table);
            state.sizes.forget(&table);
        }
        return forward(shared, upstream, &request.raw, head_request).await;
    };
    learn_schemas(shared, upstream, request, &body).await;
    let metered = {
        let state = shared.state.lock().unwrap();
        meter::meter(op, &operation, &body, &*state)
    };
    let Some(metered) = metered else {
        shared.counts.lock().unwrap().unmetered += 1;
        return forward(shared, upstream, &request.raw, head_request).await;
    };
    let mode = shared.model.lock().unwrap().mode;

    // Admission: which requests of a batch go (all of them but in throttle
    // mode), after how long a wait.
    let batch_op = match op {
        Op::BatchWrite => Some(BatchOp::Write),
        Op::BatchGet => Some(BatchOp::Get),
        _ => None,
    };
    let mut admitted: Vec<bool> = vec![true; metered.charges.len()];
    match (mode, batch_op) {
        (Mode::Wait, _) => {
            let wait = {
                let mut buckets = shared.buckets.lock().unwrap();
                let costs = costs(&buckets, &metered.charges);
                buckets.reserve(&costs)
            };
            shared.counts.lock().unwrap().waited += wait;
            tokio::time::sleep(wait).await;
        }
        (Mode::Throttle, None) => {
            let refused = {
                let mut buckets = shared.buckets.lock().unwrap();
                let costs = costs(&buckets, &metered.charges);
                buckets.admit(&costs).err()
            };
            if let Some(refusal) = refused {
                return throttled(shared, refusal);
            }
        }
        (Mode::Throttle, Some(_)) => {
            {
                let mut buckets = shared.buckets.lock().unwrap();
                for (i, charge) in metered.charges.iter().enumerate() {
                    let costs = costs(&buckets, std::slice::from_ref(charge));
                    admitted[i] = buckets.admit(&costs).is_ok();
                }
            }
            if admitted.iter().all(|a| !a) {
                // Nothing fits: the batch as a whole is refused, whichever
                // limit refused it (the BatchWriteItem reference).
                shared.counts.lock().unwrap().throttled_partition += 1;
                return (throughput_exceeded(), 0);
            }
        }
    }

    // Forward all of it, or the admitted part of a batch.
    let mut partial = None;
    let mut forwarded_body = body.clone();
    if let Some(batch_op) = batch_op
        && admitted.iter().any(|a| !a)
    {
        let entries = batch_entries(batch_op, &body);
        let keep: HashSet<(String, usize)> = entries
            .into_iter()
            .zip(&admitted)
            .filter(|(_, a)| **a)
            .map(|(e, _)| e)
            .collect();
        let split = split_batch(batch_op, body.clone(), &keep);
        forwarded_body = serde_json::from_slice(&split.forwarded_body).unwrap_or(Value::Null);
        partial = Some(split);
    }
    let raw = match &partial {
        Some(split) => request.rebuild(&split.forwarded_body),
        None => request.raw.clone(),
    };
    let response = match upstream.exchange(&raw, head_request).await {
        Ok(response) => response,
        Err(error) => {
            refund(shared, &metered, &admitted);
            shared.counts.lock().unwrap().upstream_errors += 1;
            return (bad_gateway("capacity_model", &error), 0);
        }
    };
    shared.counts.lock().unwrap().forwarded += 1;
    let answer_json: Option<Value> = serde_json::from_slice(&response.body).ok();

    // What it really cost.
    let charged: Vec<Charge> = if response.status() == Some(200) {
        let answer_json = answer_json.unwrap_or(Value::Null);
        if op.reads() {
            let actual = {
                let state = shared.state.lock().unwrap();
                meter::read_charges(op, &forwarded_body, &answer_json, &metered, &*state)
            };
            let estimated: Vec<Charge> = kept(&metered.charges, &admitted);
            settle(shared, &estimated, &actual);
            actual
        } else {
            let estimated = kept(&metered.charges, &admitted);
            let effects = kept(&metered.effects, &admitted);
            let actual = apply_effects(shared, upstream, request, op, &estimated, &effects).await;
            settle(shared, &estimated, &actual);
            actual
        }
    } else if consumes_when_failed(&answer_json) {
        kept(&metered.charges, &admitted)
    } else {
        refund(shared, &metered, &admitted);
        Vec::new()
    };
    {
        let mut counts = shared.counts.lock().unwrap();
        for charge in &charged {
            counts.units.add(charge);
            counts
                .tables
                .entry(charge.table.clone())
                .or_default()
                .add(charge);
            if let Some(partition) = &charge.partition {
                counts
                    .partitions
                    .entry((charge.table.clone(), partition.clone()))
                    .or_default()
                    .add(charge);
            }
        }
    }

    match partial {
        Some(split) => match merge_unprocessed(&split, &response) {
            Ok(Some(merged)) => {
                let held: usize = split
                    .held_back
                    .values()
                    .map(|v| match split.op {
                        BatchOp::Write => v.as_array().map_or(0, Vec::len),
                        BatchOp::Get => v.get("Keys").and_then(Value::as_array).map_or(0, Vec::len),
                    })
                    .sum();
                let mut counts = shared.counts.lock().unwrap();
                counts.partial_batches += 1;
                counts.unprocessed += held as u64;
                let len = merged.len();
                (merged, len)
            }
            Ok(None) => (response.raw, response.body.len()),
            Err(error) => {
                shared.counts.lock().unwrap().upstream_errors += 1;
                (bad_gateway("capacity_model", &error), 0)
            }
        },
        None => (response.raw, response.body.len()),
    }
}

/// Relays a request unmetered.
async fn forward(
    shared: &Shared,
    upstream: &mut Upstream,
    raw: &[u8],
    head_request: bool,
) -> (Vec<u8>, usize) {
    match upstream.exchange(raw, head_request).await {
        Ok(response) => {
            shared.counts.lock().unwrap().forwarded += 1;
            let len = response.body.len();
            (response.raw, len)
        }
        Err(error) => {
            shared.counts.lock().unwrap().upstream_errors += 1;
            (bad_gateway("capacity_model", &error), 0)
        }
    }
}

/// The elements of `all` whose request was admitted.
fn kept<T: Clone>(all: &[T], admitted: &[bool]) -> Vec<T> {
    all.iter()
        .zip(admitted)
        .filter(|(_, a)| **a)
        .map(|(t, _)| t.clone())
        .collect()
}

/// The seconds of capacity `charges` take from each bucket.
fn costs(buckets: &Buckets, charges: &[Charge]) -> Vec<(BucketId, f64)> {
    let mut by_bucket: BTreeMap<BucketId, f64> = BTreeMap::new();
    for charge in charges {
        let mut ids = vec![BucketId::Table(charge.table.clone())];
        if let Some(key) = &charge.partition {
            ids.push(BucketId::Partition {
                table: charge.table.clone(),
                key: key.clone(),
            });
        }
        for id in ids {
            let cost = buckets
                .limit(&id)
                .cost(charge.write_units, charge.read_half_units);
            *by_bucket.entry(id).or_default() += cost;
        }
    }
    by_bucket.into_iter().collect()
}

/// Corrects the buckets from what was taken (`estimated`) to what the
/// request really cost (`actual`).
fn settle(shared: &Shared, estimated: &[Charge], actual: &[Charge]) {
    let mut buckets = shared.buckets.lock().unwrap();
    let before = costs(&buckets, estimated);
    let after: BTreeMap<BucketId, f64> = costs(&buckets, actual).into_iter().collect();
    let mut delta: BTreeMap<BucketId, f64> = after.clone();
    for (id, cost) in before {
        *delta.entry(id).or_default() -= cost;
    }
    for (id, cost) in delta {
        if cost != 0.0 {
            buckets.take(&id, cost);
        }
    }
}

/// Gives back what an admitted request took, when it did not happen.
fn refund(shared: &Shared, metered: &Metered, admitted: &[bool]) {
    let estimated = kept(&metered.charges, admitted);
    settle(shared, &estimated, &[]);
}

/// Whether a failed request still consumed its units: a write whose
/// condition failed does ("DynamoDB read and write operations"), alone or
/// in a cancelled transaction.
fn consumes_when_failed(answer: &Option<Value>) -> bool {
    let kind = answer
        .as_ref()
        .and_then(|a| a.get("__type")?.as_str())
        .unwrap_or_default();
    kind.ends_with("ConditionalCheckFailedException")
        || kind.ends_with("TransactionCanceledException")
}

/// Records a successful write's effects on the size map and returns what
/// it really cost: the estimate, except that an UpdateItem's item is read
/// back (a consistent GetItem the model makes itself, not metered) to learn
/// its size after the write.
async fn apply_effects(
    shared: &Shared,
    upstream: &mut Upstream,
    request: &Message,
    op: Op,
    estimated: &[Charge],
    effects: &[Effect],
) -> Vec<Charge> {
    let mut actual = estimated.to_vec();
    for (i, effect) in effects.iter().enumerate() {
        let effect = match effect {
            Effect::Updated(table, key, key_json) => {
                let body = json!({"TableName": table, "Key": key_json, "ConsistentRead": true});
                let read = request.rebuild_for("GetItem", body.to_string().as_bytes());
                let after = match upstream.exchange(&read, false).await {
                    Ok(answer) if answer.status() == Some(200) => {
                        serde_json::from_slice::<Value>(&answer.body)
                            .ok()
                            .and_then(|a| meter::size_of(a.get("Item")?))
                    }
                    _ => None,
                };
                let before = shared.state.lock().unwrap().sizes.get(table, key);
                if let Some(charge) = actual.get_mut(i) {
                    let size = after.unwrap_or(0).max(before.unwrap_or(0));
                    charge.write_units = dynaslice_core::write_units(size, op == Op::TransactWrite);
                }
                match after {
                    Some(size) => Effect::Stored(table.clone(), key.clone(), size),
                    None => Effect::Deleted(table.clone(), key.clone()),
                }
            }
            other => other.clone(),
        };
        shared.state.lock().unwrap().sizes.apply(&effect);
    }
    actual
}

/// Learns the key schema of every table `body` names that the model does
/// not know yet, with a DescribeTable of its own.
async fn learn_schemas(shared: &Shared, upstream: &mut Upstream, request: &Message, body: &Value) {
    let mut tables: Vec<String> = Vec::new();
    if let Some(table) = body.get("TableName").and_then(Value::as_str) {
        tables.push(table.to_string());
    }
    if let Some(items) = body.get("RequestItems").and_then(Value::as_object) {
        tables.extend(items.keys().cloned());
    }
    for action in body
        .get("TransactItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(inner) = action.as_object().and_then(|o| o.values().next())
            && let Some(table) = inner.get("TableName").and_then(Value::as_str)
        {
            tables.push(table.to_string());
        }
    }
    for table in tables {
        if shared.state.lock().unwrap().schemas.contains_key(&table) {
            continue;
        }
        let describe = json!({ "TableName": table }).to_string();
        let raw = request.rebuild_for("DescribeTable", describe.as_bytes());
        let Ok(answer) = upstream.exchange(&raw, false).await else {
            continue;
        };
        let schema = serde_json::from_slice::<Value>(&answer.body)
            .ok()
            .and_then(|a| Schema::from_describe(&a));
        if let Some(schema) = schema {
            shared.state.lock().unwrap().schemas.insert(table, schema);
        }
    }
}

/// DynamoDB's answer to a request over a partition's limit, or to a batch of
/// which nothing fits.
fn throughput_exceeded() -> Vec<u8> {
    error_answer(
        400,
        "ProvisionedThroughputExceededException",
        "The request rate for one or more partition key values exceeds their throughput \
         (capacity_model: partition limit)",
    )
}

/// A refused request's answer, counted.
fn throttled(shared: &Shared, refusal: Refusal) -> (Vec<u8>, usize) {
    let mut counts = shared.counts.lock().unwrap();
    match refusal {
        Refusal::Partition => {
            counts.throttled_partition += 1;
            (throughput_exceeded(), 0)
        }
        Refusal::Table => {
            counts.throttled_table += 1;
            (
                error_answer(
                    400,
                    "ThrottlingException",
                    "Rate of requests exceeds the allowed throughput. (capacity_model: table limit)",
                ),
                0,
            )
        }
    }
}
