//! Throughput in the capacity model (`dynaslice_testing::capacity_model`, `testing/src/capacity_model/`): the
//! embedded store behind a proxy that meters, limits and delays requests as
//! DynamoDB does, so that designs are compared under DynamoDB's limits rather
//! than a local store's speed.
//!
//! ```text
//! cargo bench -p dynaslice-host --bench model          # npm run bench:model
//! DYNASLICE_BENCH_SIZES=1,10 DYNASLICE_BENCH_THROTTLE_SIZES=1 cargo bench -p dynaslice-host --bench model
//! ```
//!
//! The model: `Model::documented()`: 1,000 write / 3,000 read units per
//! second per partition key value, 4,000 / 12,000 per table, one second of
//! burst per bucket, 8 ms per request plus 10 µs per KiB. Every timed
//! operation starts with its tables' buckets empty (no saved burst) and
//! fresh partition keys (a key value the model has not seen starts with its
//! one second of burst: it sits on a partition with capacity to spare).
//!
//! For each item (1, 10 and 50 MiB of incompressible bytes as one `B`; the
//! same sizes of JSON order history as one `S`; the sizes by
//! `DYNASLICE_BENCH_SIZES`, in MiB) it puts and gets the item once each way:
//!
//! - **dynaslice, chunk table**: `dynaslice_host::put` / `get`, default
//!   options (binary with `compression: none`; JSON with `auto`), chunks
//!   in `<table>_chunks`, one partition key each;
//! - **dynaslice, item collection**: the same, chunks beside the parent in
//!   one partition;
//! - **the AWS sample's way** (`support/aws_sample.rs`): sequential PutItems
//!   of ~400 KB chunks under one partition key, one paginated Query;
//! - **parallel batches** (`support/parallel_batch.rs`): the same chunks by
//!   BatchWriteItem, 8 requests in flight, into one item collection; read by
//!   BatchGetItem of the exact keys, 8 in flight.
//!
//! once in wait mode (requests over a limit are delayed) and once in throttle
//! mode (refused with DynamoDB's errors and partial batches, which the
//! clients retry; sizes by `DYNASLICE_BENCH_THROTTLE_SIZES`, default 1 and
//! 10 MiB, to keep the run under ten minutes).
//!
//! Printed per operation: MB/s (10^6 payload bytes / wall time), the model's
//! bound and the share of it reached, write units per MB written and read
//! units per MB read (as the model metered them), and what the client met
//! (throttling answers; items or keys handed back unprocessed). The bound is
//! the least time the model's limits allow for the units the operation
//! consumed: its busiest bucket's units over that bucket's rate (a table's,
//! or one partition key value's less its burst, whichever binds), plus one
//! request's base latency. A request larger than a bucket (a transaction of
//! several 400 KB chunks) may run into debt, so a short operation can beat
//! the bound a little.

#[path = "support/aws_sample.rs"]
mod aws_sample;
use dynaslice_testing::capacity_model;
use dynaslice_testing::order_history;
#[path = "support/parallel_batch.rs"]
mod parallel_batch;
#[path = "support/payload.rs"]
mod payload;
#[path = "support/store_server.rs"]
mod store_server;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use capacity_model::{CapacityModel, Counts, Mode, Model};
use dynaslice_core::codec::Compression;
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType};
use dynaslice_host::{EmbeddedStore, GetOptions, PutOptions, TableConfig, create_tables};
use payload::Payload;

const MIB: usize = 1024 * 1024;
const BODY: &str = "body";
const CHUNK_TABLE: &str = "model_ct";
const ITEM_COLLECTION: &str = "model_ic";
const BASELINE: &str = "model_baseline";

/// One way of storing a large item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    ChunkTable,
    ItemCollection,
    AwsSample,
    ParallelBatch,
}

impl Way {
    const ALL: [Way; 4] = [
        Way::ChunkTable,
        Way::ItemCollection,
        Way::AwsSample,
        Way::ParallelBatch,
    ];

    fn name(self) -> &'static str {
        match self {
            Way::ChunkTable => "dynaslice, chunk table",
            Way::ItemCollection => "dynaslice, item collection",
            Way::AwsSample => "AWS sample (PutItem, Query)",
            Way::ParallelBatch => "parallel batches, one collection",
        }
    }
}

impl Payload {
    /// Binary is stored uncompressed (it is random), a JSON document with
    /// the default codec.
    fn options(&self) -> PutOptions {
        match self {
            Payload::Binary(_) => PutOptions {
                compression: CodecChoice::Fixed(Compression::NONE),
                ..PutOptions::default()
            },
            Payload::Text(_) => PutOptions::default(),
        }
    }
}

struct Workload {
    name: String,
    payload: Payload,
}

/// One timed operation: wall time, what the model counted, what the client
/// met, and an error if it gave up.
struct Measure {
    time: Duration,
    counts: Counts,
    client_throttles: u64,
    client_unprocessed: u64,
    error: Option<String>,
}

struct Row {
    workload: String,
    way: Way,
    bytes: usize,
    put: Measure,
    get: Option<Measure>,
}

fn sizes(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var).map_or_else(
        |_| default.to_vec(),
        |list| {
            list.split(',')
                .filter_map(|s| s.trim().parse::<usize>().ok())
                .collect()
        },
    )
}

fn workloads(mib: &[usize]) -> Vec<Workload> {
    let mut out = Vec::new();
    for &m in mib {
        out.push(Workload {
            name: format!("binary {m} MiB"),
            payload: Payload::Binary(order_history::random_bytes(m as u64, m * MIB)),
        });
    }
    for &m in mib {
        // The generator targets an item size; its JSON text is ~1.23x that.
        let json = order_history::order_history(100 + m as u64, m * MIB * 8_545 / 10_486).json;
        out.push(Workload {
            name: format!("JSON {m} MiB"),
            payload: Payload::Text(String::from_utf8(json).expect("JSON is UTF-8")),
        });
    }
    out
}

fn main() {
    let wait_sizes = sizes("DYNASLICE_BENCH_SIZES", &[1, 10, 50]);
    let throttle_sizes = sizes("DYNASLICE_BENCH_THROTTLE_SIZES", &[1, 10]);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "dynaslice-bench-model-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let store = EmbeddedStore::open(Some(&dir.join("store.db"))).expect("store opens");
        let upstream = store_server::serve_http(&store).await;
        let model = capacity_model::start(upstream, Model::documented()).await;
        let client = dynaslice_host::local_client(&model.endpoint());
        let tables = Tables::create(&client).await;
        print_settings(&model.model());
        let started = Instant::now();
        for (mode, mib) in [(Mode::Wait, &wait_sizes), (Mode::Throttle, &throttle_sizes)] {
            if mib.is_empty() {
                continue;
            }
            model.set_mode(mode);
            let mut rows = Vec::new();
            for workload in workloads(mib) {
                for way in Way::ALL {
                    let row = run(&model, &client, &tables, &workload, way, mode).await;
                    eprintln!(
                        "{mode:?} {} {}: put {:?} get {:?} ({:.0} s so far)",
                        workload.name,
                        way.name(),
                        row.put.time,
                        row.get.as_ref().map(|g| g.time),
                        started.elapsed().as_secs_f64()
                    );
                    rows.push(row);
                }
            }
            print_rows(mode, &model.model(), &rows);
        }
        println!(
            "\nwhole run: {:.0} s; the model's upstream errors: {}",
            started.elapsed().as_secs_f64(),
            model.counts().upstream_errors
        );
        drop(store);
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}

struct Tables {
    chunk_table: TableConfig,
    item_collection: TableConfig,
}

impl Tables {
    async fn create(client: &Client) -> Tables {
        let chunk_table =
            TableConfig::chunk_table(CHUNK_TABLE, KeySchema::partition("pk", KeyType::S));
        let item_collection = TableConfig::item_collection(
            ITEM_COLLECTION,
            KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S),
        );
        create_tables(client, &chunk_table).await.expect("tables");
        create_tables(client, &item_collection)
            .await
            .expect("tables");
        aws_sample::create_table(client, BASELINE).await;
        Tables {
            chunk_table,
            item_collection,
        }
    }
}

fn key(way: Way, pk: &str) -> Item {
    let mut key = Item::from([("pk".to_string(), AttributeValue::S(pk.to_string()))]);
    if way == Way::ItemCollection {
        key.insert("sk".to_string(), AttributeValue::S("item".to_string()));
    }
    key
}

/// Times `op` from empty buckets; returns its result, its wall time and
/// what the model counted meanwhile.
async fn timed<T>(
    model: &CapacityModel,
    op: impl std::future::Future<Output = T>,
) -> (T, Duration, Counts) {
    model.empty_buckets();
    let before = model.counts();
    let started = Instant::now();
    let out = op.await;
    let time = started.elapsed();
    (out, time, model.counts().since(&before))
}

async fn run(
    model: &CapacityModel,
    client: &Client,
    tables: &Tables,
    workload: &Workload,
    way: Way,
    mode: Mode,
) -> Row {
    let pk = format!(
        "{mode:?}-{}-{}",
        workload.name.replace(' ', "_"),
        way.name().split(',').next().unwrap_or("").replace(' ', "_")
    );
    let bytes = workload.payload.bytes().len();
    let measure = |time, counts, throttles, unprocessed, error| Measure {
        time,
        counts,
        client_throttles: throttles,
        client_unprocessed: unprocessed,
        error,
    };
    let row = |put, get| Row {
        workload: workload.name.clone(),
        way,
        bytes,
        put,
        get,
    };
    let read_back = |same: bool| {
        assert!(same, "{} {}: read back differs", workload.name, way.name());
    };
    match way {
        Way::ChunkTable | Way::ItemCollection => {
            let table = match way {
                Way::ChunkTable => &tables.chunk_table,
                _ => &tables.item_collection,
            };
            let mut item = key(way, &pk);
            item.insert(BODY.to_string(), workload.payload.value());
            let options = workload.payload.options();
            let (result, time, counts) = timed(
                model,
                dynaslice_host::put(client, table, &item, &options, &()),
            )
            .await;
            let (throttles, unprocessed) = (counts.throttled(), counts.unprocessed);
            let error = result.err().map(|e| format!("{}: {e}", e.code()));
            let failed = error.is_some();
            let put = measure(time, counts, throttles, unprocessed, error);
            if failed {
                return row(put, None);
            }
            let (result, time, counts) = timed(
                model,
                dynaslice_host::get(client, table, &key(way, &pk), &GetOptions::default(), &()),
            )
            .await;
            let (throttles, unprocessed) = (counts.throttled(), counts.unprocessed);
            let error = match result {
                Ok(Some(fetched)) => {
                    read_back(workload.payload.matches(fetched.item.get(BODY)));
                    None
                }
                Ok(None) => panic!("{} {}: the item is missing", workload.name, way.name()),
                Err(e) => Some(format!("{}: {e}", e.code())),
            };
            row(
                put,
                Some(measure(time, counts, throttles, unprocessed, error)),
            )
        }
        Way::AwsSample => {
            let throttles = AtomicU64::new(0);
            let payload = workload.payload.bytes();
            let (_, time, counts) = timed(
                model,
                aws_sample::put(client, BASELINE, &pk, payload, &throttles),
            )
            .await;
            let put = measure(time, counts, throttles.swap(0, Ordering::Relaxed), 0, None);
            let ((got, _), time, counts) =
                timed(model, aws_sample::get(client, BASELINE, &pk, &throttles)).await;
            read_back(got == payload);
            let get = measure(time, counts, throttles.load(Ordering::Relaxed), 0, None);
            row(put, Some(get))
        }
        Way::ParallelBatch => {
            let met = parallel_batch::Met::default();
            let payload = workload.payload.bytes();
            let (count, time, counts) = timed(
                model,
                parallel_batch::put(client, BASELINE, &pk, payload, &met),
            )
            .await;
            let put = measure(
                time,
                counts,
                met.throttles.swap(0, Ordering::Relaxed),
                met.unprocessed.swap(0, Ordering::Relaxed),
                None,
            );
            let (got, time, counts) = timed(
                model,
                parallel_batch::get(client, BASELINE, &pk, count, &met),
            )
            .await;
            read_back(got == payload);
            let get = measure(
                time,
                counts,
                met.throttles.load(Ordering::Relaxed),
                met.unprocessed.load(Ordering::Relaxed),
                None,
            );
            row(put, Some(get))
        }
    }
}

// ---------------------------------------------------------------------------
// Printing.

fn print_settings(model: &Model) {
    println!("### The model's settings\n");
    println!(
        "per partition key value: {:.0} write / {:.0} read units per second; per table: {:.0} / {:.0}; \
         burst: {:.1} s of capacity per bucket, every timed operation starting with empty table buckets and fresh partition keys; \
         latency: {:?} per request + {:?} per KiB of request and answer",
        model.partition.write_per_s,
        model.partition.read_per_s,
        model.table.write_per_s,
        model.table.read_per_s,
        model.table.burst_s,
        model.latency.base,
        model.latency.per_kib,
    );
}

/// The bound of one measure: MB/s at the least time the model allows.
fn bound_mb_s(bytes: usize, counts: &Counts, model: &Model) -> f64 {
    let seconds = counts.capacity_seconds(model) + model.latency.base.as_secs_f64();
    bytes as f64 / 1e6 / seconds
}

fn cells(bytes: usize, m: &Measure, model: &Model, write: bool) -> String {
    let mb = bytes as f64 / 1e6;
    let speed = mb / m.time.as_secs_f64();
    let bound = bound_mb_s(bytes, &m.counts, model);
    let units = if write {
        m.counts.units.write as f64
    } else {
        m.counts.units.read()
    };
    let met = format!("{} / {}", m.client_throttles, m.client_unprocessed);
    match &m.error {
        Some(error) => format!(
            "failed after {:.1} s ({error}) | {bound:.2} | - | {:.0} | {met}",
            m.time.as_secs_f64(),
            units / mb
        ),
        None => format!(
            "{speed:.2} | {bound:.2} | {:.0} % | {:.0} | {met}",
            speed / bound * 100.0,
            units / mb
        ),
    }
}

fn print_rows(mode: Mode, model: &Model, rows: &[Row]) {
    let title = match mode {
        Mode::Wait => "wait mode (requests over a limit are delayed)",
        Mode::Throttle => {
            "throttle mode (requests over a limit are refused; batches come back partly unprocessed)"
        }
    };
    println!("\n### In the capacity model, {title}\n");
    println!(
        "| item | way | put MB/s | bound | % of bound | WCU/MB | throttled / unprocessed | get MB/s | bound | % of bound | RCU/MB | throttled / unprocessed |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let get = row.get.as_ref().map_or_else(
            || "- | - | - | - | -".to_string(),
            |g| cells(row.bytes, g, model, false),
        );
        println!(
            "| {} | {} | {} | {get} |",
            row.workload,
            row.way.name(),
            cells(row.bytes, &row.put, model, true),
        );
    }
}
