//! End-to-end transfer benchmark of `dynaslice-host` on the embedded store
//! (dynoxide on a SQLite file in a fresh folder under the system temp dir,
//! served on 127.0.0.1 inside this process, as the `dynaslice` CLI runs it
//! by default), against a naive chunking baseline on the same store.
//!
//! ```text
//! cargo bench -p dynaslice-host --bench transfer
//! DYNASLICE_BENCH_REPS=7 cargo bench -p dynaslice-host --bench transfer   # more repetitions
//! ```
//!
//! What one run measures and prints (as Markdown tables, quoted in
//! BENCHMARKS.md, "The host (embedded store)"):
//!
//! 1. **Throughput**, MB/s = payload bytes (10^6 per MB) / wall time, the
//!    median of `DYNASLICE_BENCH_REPS` repetitions (default 5, at least 3),
//!    each with fresh keys, of:
//!    - one 10 MiB item, one `B` of incompressible bytes, written with
//!      `compression: Fixed(Compression::NONE)`;
//!    - one ~10 MiB realistic JSON order-history document (the generator of
//!      the core benchmarks) stored as one `S`, with the default `auto`
//!      codec (it picks deflate), and once more with snappy forced (not a
//!      default: what a fast codec gives);
//!    - 100 items of 500 KB of incompressible bytes (`none`), put and got
//!      [`CONCURRENT_ITEMS`] at a time (`buffered`, which keeps the order).
//!
//!    `dynaslice_host::put` / `get` with default options otherwise. The
//!    timed region is the call alone: items are built before, results are
//!    checked against the input after.
//! 2. **The baseline** (`support/aws_sample.rs`, shared with the model
//!    benchmark), doing what the public AWS sample for
//!    large items does: the raw bytes cut into ~400 KB chunks (409,600 bytes
//!    minus the key and attribute-name overhead), stored under the same
//!    partition key with string sort keys `chunk-1`, `chunk-2`, ..., one
//!    sequential PutItem per chunk (no batching, no concurrency, also across
//!    the 100 items); read back with one Query on the partition key
//!    (following LastEvaluatedKey, which the sample does not, so that all of
//!    it is read; strongly consistent like dynaslice's reads), sorted by the
//!    number parsed out of the sort key, concatenated (and for the document,
//!    turned back into a `String`). Its table has `pk` (S) + `sk` (S).
//! 3. **Ratios** dynaslice / baseline of put and get throughput.
//! 4. **Capacity** of each workload's first repetition: the write units the
//!    server reported (`PutOutcome::consumed_write_units`, from
//!    ReturnConsumedCapacity) and `planned_write_units` against
//!    ceil(payload / 1024) per item, for the 10 MiB binary put as a %
//!    difference; the same for the baseline's PutItems, and the read units
//!    of both gets against ceil(payload / 4096).
//! 5. **Peak memory** of a 50 MiB put + get, each in a child process (this
//!    binary re-executed with `DYNASLICE_BENCH_MEMORY=inmem|stream`), from
//!    `VmHWM` in `/proc/self/status`, reset between put and get by writing 5
//!    to `/proc/self/clear_refs`: an in-memory item (`put`, then `get`) and a
//!    file streamed with `put_reader` (a `tokio::fs::File`, then `get`). Each
//!    runs twice: against the parent's store (the child's RSS is the client
//!    alone) and with the embedded store inside the child (as the CLI runs).
//!
//! `DYNASLICE_BENCH_ONLY=<part of a workload name>` runs only the matching
//! workloads and no memory children (to profile one, e.g. under `perf`);
//! `DYNASLICE_BENCH_ONLY=memory` runs the memory children alone;
//! `DYNASLICE_BENCH_MARKS=1` prints each timed phase's start and end
//! (CLOCK_MONOTONIC) to stderr, to cut a `perf record -k CLOCK_MONOTONIC`
//! profile into phases.
//!
//! Linux only (procfs). Everything runs on one tokio multi-thread runtime
//! with one worker per core, server included.

#[path = "support/aws_sample.rs"]
mod aws_sample;
use dynaslice_testing::memory;
use dynaslice_testing::order_history;
#[path = "support/payload.rs"]
mod payload;
#[path = "support/store_server.rs"]
mod store_server;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use std::sync::atomic::AtomicU64;

use aws_sdk_dynamodb::Client;
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType};
use dynaslice_host::{
    EmbeddedStore, GetOptions, PutOptions, PutOutcome, TableConfig, create_tables, local_client,
};
use futures::{StreamExt, TryStreamExt};
use payload::Payload;

/// Items in flight at once for the 100-item workload (dynaslice only).
const CONCURRENT_ITEMS: usize = 8;
/// The one big binary item.
const BINARY_BYTES: usize = 10 * 1024 * 1024;
/// The JSON document's target length (the generator overshoots a little).
const DOCUMENT_BYTES: usize = 10 * 1024 * 1024;
/// The many small items.
const SMALL_COUNT: usize = 100;
const SMALL_BYTES: usize = 500_000;
/// The item of the memory measurements.
const MEMORY_BYTES: usize = 50 * 1024 * 1024;
/// The payload attribute, for both dynaslice and the baseline.
const BODY: &str = "body";

/// The workload whose capacity is reported.
const BINARY_WORKLOAD: &str = "binary 10 MiB, none";

const DYNASLICE_TABLE: &str = "bench";
const BASELINE_TABLE: &str = "baseline";
const MEMORY_TABLE: &str = "memory";
/// `DYNASLICE_BENCH_ONLY` for the memory children alone (no workload has
/// this name).
const MEMORY_ONLY: &str = "memory";

fn main() {
    if let Ok(mode) = std::env::var("DYNASLICE_BENCH_MEMORY") {
        memory_child(&mode);
        return;
    }
    let reps = std::env::var("DYNASLICE_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse::<usize>().ok())
        .unwrap_or(5)
        .max(3);
    let dir = fresh_dir("run");
    let runtime = runtime();
    runtime.block_on(run(&dir, reps));
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A new empty folder under the system temp dir.
fn fresh_dir(what: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "dynaslice-bench-{what}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir created");
    dir
}

/// With `DYNASLICE_BENCH_MARKS` set, prints `mark <what> <CLOCK_MONOTONIC>`
/// to stderr (Instant's Debug shows the timespec) to cut a
/// `perf record -k CLOCK_MONOTONIC` profile into phases.
fn mark(what: &str) {
    if std::env::var_os("DYNASLICE_BENCH_MARKS").is_some() {
        eprintln!("mark {what} {:?}", Instant::now());
    }
}

fn key_schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S)
}

fn key_item(pk: &str) -> Item {
    Item::from([("pk".to_string(), AttributeValue::S(pk.to_string()))])
}

fn item_with(pk: &str, body: AttributeValue) -> Item {
    let mut item = key_item(pk);
    item.insert(BODY.to_string(), body);
    item
}

fn options_none() -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        ..PutOptions::default()
    }
}

/// One workload's inputs: the payload of each item, as raw bytes (what the
/// baseline stores) and as the attribute value dynaslice stores.
struct Workload {
    name: &'static str,
    payloads: Vec<Payload>,
    options: PutOptions,
}

impl Workload {
    fn total_bytes(&self) -> usize {
        self.payloads.iter().map(|p| p.bytes().len()).sum()
    }
    fn pk(&self, rep: usize, index: usize, who: &str) -> String {
        format!("{who}-{}-r{rep}-{index}", self.name.replace(' ', "_"))
    }
}

/// Wall times of one measured operation over the repetitions.
#[derive(Default)]
struct Times(Vec<Duration>);

impl Times {
    fn median(&self) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        sorted[sorted.len() / 2]
    }
    fn min(&self) -> Duration {
        self.0.iter().copied().min().unwrap_or_default()
    }
    fn max(&self) -> Duration {
        self.0.iter().copied().max().unwrap_or_default()
    }
    fn mb_per_s(&self, bytes: usize) -> f64 {
        bytes as f64 / self.median().as_secs_f64() / 1e6
    }
}

#[derive(Default)]
struct Measured {
    put: Times,
    get: Times,
    base_put: Times,
    base_get: Times,
}

/// Capacity the server reported in a workload's first repetition.
#[derive(Default)]
struct Capacity {
    outcomes: Vec<PutOutcome>,
    read_units: f64,
    base_write_units: f64,
    base_read_units: f64,
    base_chunks: usize,
}

async fn run(dir: &Path, reps: usize) {
    let db = dir.join("store.db");
    let store = EmbeddedStore::open(Some(&db)).expect("embedded store opens");
    let client = store.client();
    // The memory runs' child processes share the store over HTTP.
    let endpoint = format!("http://{}", store_server::serve_http(&store).await);
    let table = TableConfig::chunk_table(DYNASLICE_TABLE, key_schema());
    create_tables(&client, &table)
        .await
        .expect("tables created");
    aws_sample::create_table(&client, BASELINE_TABLE).await;

    let started = Instant::now();
    let mut workloads = workloads();
    // For profiling one workload: `DYNASLICE_BENCH_ONLY=JSON` (skips memory).
    let only = std::env::var("DYNASLICE_BENCH_ONLY").ok();
    if let Some(only) = &only {
        workloads.retain(|w| w.name.contains(only.as_str()));
    }
    println!(
        "inputs generated in {:.1} s; store file {}; {reps} repetitions",
        started.elapsed().as_secs_f64(),
        db.display()
    );

    let mut measured: Vec<Measured> = workloads.iter().map(|_| Measured::default()).collect();
    let mut capacity: Vec<Capacity> = workloads.iter().map(|_| Capacity::default()).collect();
    for rep in 0..reps {
        for (w, workload) in workloads.iter().enumerate() {
            let m = &mut measured[w];
            let c = &mut capacity[w];

            let (time, outcomes) = dynaslice_put(&client, &table, workload, rep).await;
            m.put.0.push(time);
            let (time, read_units) = dynaslice_get(&client, &table, workload, rep).await;
            m.get.0.push(time);
            if rep == 0 {
                c.outcomes = outcomes;
                c.read_units = read_units;
            }

            let (time, write_units, chunks) = baseline_puts(&client, workload, rep).await;
            m.base_put.0.push(time);
            let (time, read_units) = baseline_gets(&client, workload, rep).await;
            m.base_get.0.push(time);
            if rep == 0 {
                c.base_write_units = write_units;
                c.base_read_units = read_units;
                c.base_chunks = chunks;
            }
            eprintln!(
                "rep {}/{reps} {}: put {:?} get {:?} | baseline put {:?} get {:?}",
                rep + 1,
                workload.name,
                m.put.0[rep],
                m.get.0[rep],
                m.base_put.0[rep],
                m.base_get.0[rep],
            );
        }
    }

    print_throughput(&workloads, &measured, &capacity, reps);
    print_capacity(&workloads, &capacity);

    let size = std::fs::metadata(&db).map_or(0, |m| m.len());
    println!(
        "\nstore file after the throughput runs: {:.0} MB",
        size as f64 / 1e6
    );

    if only.is_none() || only.as_deref() == Some(MEMORY_ONLY) {
        let memory = memory_runs(&client, &endpoint, dir).await;
        print_memory(&memory);
    }
    drop(store);
}

fn workloads() -> Vec<Workload> {
    let binary = order_history::random_bytes(1, BINARY_BYTES);
    // The generator targets an item size; its JSON text is ~1.23x that.
    let document = order_history::order_history(2, DOCUMENT_BYTES * 8_545 / 10_486).json;
    let document = String::from_utf8(document).expect("JSON is UTF-8");
    let small = (0..SMALL_COUNT)
        .map(|i| Payload::Binary(order_history::random_bytes(100 + i as u64, SMALL_BYTES)))
        .collect();
    vec![
        Workload {
            name: BINARY_WORKLOAD,
            payloads: vec![Payload::Binary(binary)],
            options: options_none(),
        },
        Workload {
            name: "JSON doc ~10 MiB as S, auto",
            payloads: vec![Payload::Text(document.clone())],
            options: PutOptions::default(),
        },
        // Not the default: what a fast codec would give (auto picks deflate).
        Workload {
            name: "JSON doc ~10 MiB as S, snappy",
            payloads: vec![Payload::Text(document)],
            options: PutOptions {
                compression: CodecChoice::Fixed(Compression::new(Codec::Snappy)),
                ..PutOptions::default()
            },
        },
        Workload {
            name: "100 x 500 KB binary, none",
            payloads: small,
            options: options_none(),
        },
    ]
}

/// Puts every item of the workload (concurrently when there are several);
/// returns the wall time and the outcomes.
async fn dynaslice_put(
    client: &Client,
    table: &TableConfig,
    workload: &Workload,
    rep: usize,
) -> (Duration, Vec<PutOutcome>) {
    let items: Vec<Item> = workload
        .payloads
        .iter()
        .enumerate()
        .map(|(i, p)| item_with(&workload.pk(rep, i, "ds"), p.value()))
        .collect();
    mark("dynaslice-put start");
    let started = Instant::now();
    let outcomes: Vec<PutOutcome> = futures::stream::iter(&items)
        .map(|item| dynaslice_host::put(client, table, item, &workload.options, &()))
        .buffered(CONCURRENT_ITEMS)
        .try_collect()
        .await
        .expect("dynaslice put");
    let elapsed = started.elapsed();
    mark("dynaslice-put end");
    (elapsed, outcomes)
}

/// Gets every item of the workload back; returns the wall time and the
/// read units consumed. Panics if anything differs from what was put.
async fn dynaslice_get(
    client: &Client,
    table: &TableConfig,
    workload: &Workload,
    rep: usize,
) -> (Duration, f64) {
    let keys: Vec<Item> = (0..workload.payloads.len())
        .map(|i| key_item(&workload.pk(rep, i, "ds")))
        .collect();
    let options = GetOptions::default();
    mark("dynaslice-get start");
    let started = Instant::now();
    let fetched: Vec<_> = futures::stream::iter(&keys)
        .map(|key| dynaslice_host::get(client, table, key, &options, &()))
        .buffered(CONCURRENT_ITEMS)
        .try_collect()
        .await
        .expect("dynaslice get");
    let elapsed = started.elapsed();
    mark("dynaslice-get end");
    let mut read_units = 0.0;
    for (payload, fetched) in workload.payloads.iter().zip(fetched) {
        let fetched = fetched.expect("the item is there");
        assert!(payload.matches(fetched.item.get(BODY)), "dynaslice get");
        read_units += fetched.consumed_read_units;
    }
    (elapsed, read_units)
}

// ---------------------------------------------------------------------------
// The baseline (`support/aws_sample.rs`).

/// The baseline put of every item of the workload, one after the other.
async fn baseline_puts(client: &Client, workload: &Workload, rep: usize) -> (Duration, f64, usize) {
    // The embedded store never throttles.
    let no_throttles = AtomicU64::new(0);
    mark("baseline-put start");
    let started = Instant::now();
    let mut units = 0.0;
    let mut chunks = 0;
    for (i, payload) in workload.payloads.iter().enumerate() {
        let pk = workload.pk(rep, i, "base");
        let (u, c) =
            aws_sample::put(client, BASELINE_TABLE, &pk, payload.bytes(), &no_throttles).await;
        units += u;
        chunks += c;
    }
    let elapsed = started.elapsed();
    mark("baseline-put end");
    (elapsed, units, chunks)
}

/// The baseline get of every item of the workload, one after the other;
/// text payloads become `String`s again (checked UTF-8), as an application
/// storing a string would need.
async fn baseline_gets(client: &Client, workload: &Workload, rep: usize) -> (Duration, f64) {
    let no_throttles = AtomicU64::new(0);
    mark("baseline-get start");
    let started = Instant::now();
    let mut units = 0.0;
    let mut got = Vec::with_capacity(workload.payloads.len());
    for (i, payload) in workload.payloads.iter().enumerate() {
        let pk = workload.pk(rep, i, "base");
        let (bytes, u) = aws_sample::get(client, BASELINE_TABLE, &pk, &no_throttles).await;
        units += u;
        got.push(match payload {
            Payload::Binary(_) => Payload::Binary(bytes),
            Payload::Text(_) => Payload::Text(String::from_utf8(bytes).expect("UTF-8")),
        });
    }
    let elapsed = started.elapsed();
    mark("baseline-get end");
    for (payload, got) in workload.payloads.iter().zip(&got) {
        assert!(payload.bytes() == got.bytes(), "baseline get");
    }
    (elapsed, units)
}

// ---------------------------------------------------------------------------
// Printing.

fn thousands(n: u64) -> String {
    let text = n.to_string();
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i > 0 && (text.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e3)
}

fn print_throughput(
    workloads: &[Workload],
    measured: &[Measured],
    capacity: &[Capacity],
    reps: usize,
) {
    println!(
        "\n### Throughput (MB/s = 10^6 payload bytes / s, median of {reps}; WCU/MB and RCU/MB: units the server reported per 10^6 payload bytes, first repetition)\n"
    );
    println!(
        "| workload | payload bytes | dynaslice put | WCU/MB | baseline put | WCU/MB | put ratio | dynaslice get | RCU/MB | baseline get | RCU/MB | get ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for ((workload, m), c) in workloads.iter().zip(measured).zip(capacity) {
        let bytes = workload.total_bytes();
        let per_mb = |units: f64| format!("{:.0}", units / (bytes as f64 / 1e6));
        let written: f64 = c.outcomes.iter().map(|o| o.consumed_write_units).sum();
        let (put, base_put) = (m.put.mb_per_s(bytes), m.base_put.mb_per_s(bytes));
        let (get, base_get) = (m.get.mb_per_s(bytes), m.base_get.mb_per_s(bytes));
        println!(
            "| {} | {} | {put:.1} | {} | {base_put:.1} | {} | **{:.2}x** | {get:.1} | {} | {base_get:.1} | {} | **{:.2}x** |",
            workload.name,
            thousands(bytes as u64),
            per_mb(written),
            per_mb(c.base_write_units),
            put / base_put,
            per_mb(c.read_units),
            per_mb(c.base_read_units),
            get / base_get,
        );
    }
    println!("\nWall times, ms: median (min-max)\n");
    println!("| workload | dynaslice put | baseline put | dynaslice get | baseline get |");
    println!("|---|---:|---:|---:|---:|");
    for (workload, m) in workloads.iter().zip(measured) {
        let cell = |t: &Times| format!("{} ({}-{})", ms(t.median()), ms(t.min()), ms(t.max()));
        println!(
            "| {} | {} | {} | {} | {} |",
            workload.name,
            cell(&m.put),
            cell(&m.base_put),
            cell(&m.get),
            cell(&m.base_get)
        );
    }
}

fn print_capacity(workloads: &[Workload], capacity: &[Capacity]) {
    let diff = |units: f64, expected: f64| (units - expected) / expected * 100.0;
    println!("\n### Capacity units the server reported (first repetition)\n");
    println!(
        "| workload | sum of ceil(payload / 1 KB) | dynaslice WCU consumed | planned | baseline WCU (PutItems) | sum of ceil(payload / 4 KB) | dynaslice RCU (incl. parent reads) | baseline RCU |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (workload, c) in workloads.iter().zip(capacity) {
        let ceil_sum = |unit: usize| -> u64 {
            workload
                .payloads
                .iter()
                .map(|p| p.bytes().len().div_ceil(unit) as u64)
                .sum()
        };
        let consumed: f64 = c.outcomes.iter().map(|o| o.consumed_write_units).sum();
        let planned: u64 = c.outcomes.iter().map(|o| o.planned_write_units).sum();
        println!(
            "| {} | {} | {} | {} | {} ({}) | {} | {} | {} |",
            workload.name,
            thousands(ceil_sum(1024)),
            thousands(consumed.round() as u64),
            thousands(planned),
            thousands(c.base_write_units.round() as u64),
            c.base_chunks,
            thousands(ceil_sum(4096)),
            thousands(c.read_units.round() as u64),
            thousands(c.base_read_units.round() as u64),
        );
    }
    let Some((_, c)) = workloads
        .iter()
        .zip(capacity)
        .find(|(w, _)| w.name == BINARY_WORKLOAD)
    else {
        return;
    };
    let Some(outcome) = c.outcomes.first() else {
        return;
    };
    let expected = BINARY_BYTES.div_ceil(1024) as f64;
    let chunks = outcome.manifest.as_ref().map_or(0, |m| m.chunk_count);
    println!(
        "\nWCU of the {BINARY_WORKLOAD} put ({} mode, {chunks} chunks + parent, {} item bytes written): \
         consumed {:.1} ({:+.3} % against ceil({BINARY_BYTES} / 1024) = {expected}), \
         planned {} ({:+.3} %); its parent read consumed {:.1} RCU",
        outcome.mode,
        thousands(outcome.bytes_written),
        outcome.consumed_write_units,
        diff(outcome.consumed_write_units, expected),
        outcome.planned_write_units,
        diff(outcome.planned_write_units as f64, expected),
        outcome.consumed_read_units,
    );
}

// ---------------------------------------------------------------------------
// Memory: child processes.

/// What a memory child reports, in bytes.
#[derive(Debug, Default)]
struct MemoryReport {
    mode: String,
    store: &'static str,
    /// RSS with the runtime, client (and store) up, before the payload exists.
    idle: u64,
    /// RSS once the payload is ready (the item built, or nothing for a file).
    before_put: u64,
    put_peak: u64,
    before_get: u64,
    get_peak: u64,
    /// False when `/proc/self/clear_refs` could not reset the peak: then
    /// both peaks are the lifetime peak.
    reset: bool,
}

async fn memory_runs(client: &Client, endpoint: &str, dir: &Path) -> Vec<MemoryReport> {
    let table = TableConfig::chunk_table(MEMORY_TABLE, key_schema());
    create_tables(client, &table).await.expect("memory tables");
    let file = dir.join("source.bin");
    std::fs::write(&file, order_history::random_bytes(3, MEMORY_BYTES)).expect("source file");
    let mut reports = Vec::new();
    for (n, (mode, shared)) in [
        ("inmem", true),
        ("stream", true),
        ("inmem", false),
        ("stream", false),
    ]
    .into_iter()
    .enumerate()
    {
        let mut command = std::process::Command::new(std::env::current_exe().expect("exe"));
        command
            .env("DYNASLICE_BENCH_MEMORY", mode)
            .env("DYNASLICE_BENCH_FILE", &file)
            .env("DYNASLICE_BENCH_KEY", format!("mem-{n}"))
            .env("DYNASLICE_BENCH_DIR", dir.join(format!("child-{n}")));
        if shared {
            command.env("DYNASLICE_BENCH_ENDPOINT", endpoint);
        }
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("child joined")
            .expect("child runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "memory child {mode} failed: {}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        let line = stdout
            .lines()
            .find(|l| l.starts_with("memory "))
            .expect("memory line");
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        reports.push(MemoryReport {
            mode: mode.to_string(),
            store: if shared { "parent" } else { "child" },
            idle: field("idle"),
            before_put: field("before_put"),
            put_peak: field("put_peak"),
            before_get: field("before_get"),
            get_peak: field("get_peak"),
            reset: field("reset") == 1,
        });
    }
    reports
}

fn print_memory(reports: &[MemoryReport]) {
    let item = MEMORY_BYTES as f64;
    let mb = |b: u64| format!("{:.0}", b as f64 / 1e6);
    println!(
        "\n### Peak RSS of a {} MiB put + get (child process, VmHWM; MB = 10^6 bytes)\n",
        MEMORY_BYTES >> 20
    );
    println!(
        "| put | store in | idle RSS | before put | put peak | before get | get peak | peak / item | (peak - idle) / item |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in reports {
        let peak = r.put_peak.max(r.get_peak);
        let put = match r.mode.as_str() {
            "inmem" => "`put` of an in-memory item",
            _ => "`put_reader` from a file",
        };
        println!(
            "| {put} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} |",
            r.store,
            mb(r.idle),
            mb(r.before_put),
            mb(r.put_peak),
            mb(r.before_get),
            mb(r.get_peak),
            peak as f64 / item,
            peak.saturating_sub(r.idle) as f64 / item,
        );
    }
    if reports.iter().any(|r| !r.reset) {
        println!("\n(the peak could not be reset between put and get: both are the lifetime peak)");
    }
}

/// A memory child: one 50 MiB put (in memory or streamed) and one get,
/// reporting RSS figures on one `memory ...` line.
fn memory_child(mode: &str) {
    let runtime = runtime();
    runtime.block_on(async {
        let key = std::env::var("DYNASLICE_BENCH_KEY").expect("DYNASLICE_BENCH_KEY");
        let (store, client) = match std::env::var("DYNASLICE_BENCH_ENDPOINT") {
            Ok(endpoint) => (None, local_client(&endpoint)),
            Err(_) => {
                let dir = PathBuf::from(std::env::var("DYNASLICE_BENCH_DIR").expect("dir"));
                let store = EmbeddedStore::open(Some(&dir.join("store.db"))).expect("store opens");
                let client = store.client();
                (Some(store), client)
            }
        };
        let table = TableConfig::chunk_table(MEMORY_TABLE, key_schema());
        if store.is_some() {
            create_tables(&client, &table).await.expect("tables");
        }
        // One request first, so connection pools and lazy statics exist.
        let missing = dynaslice_host::get(
            &client,
            &table,
            &key_item("nothing"),
            &GetOptions::default(),
            &(),
        )
        .await
        .expect("warm-up get");
        assert!(missing.is_none());
        let idle = memory::rss();
        let path = PathBuf::from(std::env::var("DYNASLICE_BENCH_FILE").expect("file"));
        let (before_put, put_peak, mut reset) = match mode {
            "inmem" => {
                let bytes = std::fs::read(&path).expect("source file");
                let item = item_with(&key, AttributeValue::B(bytes));
                let before = memory::rss();
                let reset = memory::reset_peak();
                dynaslice_host::put(&client, &table, &item, &PutOptions::default(), &())
                    .await
                    .expect("put");
                let peak = memory::peak();
                drop(item);
                (before, peak, reset)
            }
            "stream" => {
                let file = tokio::fs::File::open(&path).await.expect("source file");
                let len = file.metadata().await.expect("metadata").len();
                let before = memory::rss();
                let reset = memory::reset_peak();
                dynaslice_host::put_reader(
                    &client,
                    &table,
                    key_item(&key),
                    BODY,
                    file,
                    Some(len),
                    &PutOptions::default(),
                    &(),
                )
                .await
                .expect("put_reader");
                (before, memory::peak(), reset)
            }
            other => panic!("DYNASLICE_BENCH_MEMORY={other}: expected inmem or stream"),
        };
        let before_get = memory::rss();
        reset &= memory::reset_peak();
        let fetched = dynaslice_host::get(
            &client,
            &table,
            &key_item(&key),
            &GetOptions::default(),
            &(),
        )
        .await
        .expect("get")
        .expect("the item is there");
        let get_peak = memory::peak();
        match fetched.item.get(BODY) {
            Some(AttributeValue::B(b)) => assert_eq!(b.len(), MEMORY_BYTES),
            _ => panic!("no body"),
        }
        drop(fetched);
        println!(
            "memory idle={idle} before_put={before_put} put_peak={put_peak} before_get={before_get} get_peak={get_peak} reset={}",
            u8::from(reset)
        );
        if let Some(store) = store {
            drop(store);
        }
    });
}
