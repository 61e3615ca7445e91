//! A bulk load in the capacity model (`testing/src/capacity_model/`, wait
//! mode): N items of mixed sizes (1 KB to 5 MB, JSON and binary in turn),
//! each under its own partition key, loaded three ways:
//!
//! Then 20 N items of 1 KB to 8 KB, where each request's latency decides.
//!
//! - **dynaslice import** (`dynaslice_host::put_many`, what `dynaslice
//!   import` runs): 8 items in flight, each by the put protocol;
//! - **a shell loop of `dynaslice put`**: one process per item, in turn
//!   (`for line in …; do dynaslice put --json …; done`);
//! - **the AWS sample's way** (`support/aws_sample.rs`): each item's bytes
//!   in ~400 KB chunks, one sequential PutItem per chunk, item after item.
//!
//! ```text
//! cargo bench -p dynaslice-host --bench bulk       # npm run bench:bulk
//! DYNASLICE_BENCH_ITEMS=50 cargo bench -p dynaslice-host --bench bulk
//! ```
//!
//! Printed per way: MB/s (10^6 payload bytes per second of wall time), the
//! model's bound for the units the load consumed (its busiest bucket's
//! units over that bucket's rate: with a partition key per item, the
//! table's 4,000 write units per second), the share of it reached, and the
//! write units per MB.

#[path = "support/aws_sample.rs"]
#[allow(
    dead_code,
    reason = "shared with the other benches: this one only writes"
)]
mod aws_sample;
#[path = "support/payload.rs"]
#[allow(
    dead_code,
    reason = "shared with the other benches: this one reads nothing back"
)]
mod payload;
#[path = "support/store_server.rs"]
mod store_server;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use capacity_model::{CapacityModel, Counts, Model};
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType};
use dynaslice_host::json::item_to_json;
use dynaslice_host::{EmbeddedStore, ManyOptions, PutOptions, TableConfig, create_tables};
use dynaslice_testing::{capacity_model, order_history};
use payload::Payload;

const TABLE: &str = "bulk";
const BASELINE: &str = "bulk_baseline";
/// Item sizes in turn: 1 KB to 5 MB.
const SIZES: [usize; 5] = [1_000, 20_000, 200_000, 1_000_000, 5_000_000];
/// Small items' sizes in turn: where each request's latency, not the
/// table's capacity, decides.
const SMALL: [usize; 4] = [1_000, 2_000, 4_000, 8_000];

/// `n` items named `{prefix}{i}`, sizes from `sizes` in turn.
fn items(prefix: &str, n: usize, sizes: &[usize]) -> Vec<(String, Payload)> {
    (0..n)
        .map(|i| {
            let size = sizes[i % sizes.len()];
            let payload = match i % 2 {
                0 => Payload::Binary(order_history::random_bytes(i as u64, size)),
                _ => {
                    // The generator targets an item size; its JSON text is ~1.23x that.
                    let json = order_history::order_history(i as u64, size * 8_545 / 10_486).json;
                    Payload::Text(String::from_utf8(json).expect("JSON is UTF-8"))
                }
            };
            (format!("{prefix}{i:06}"), payload)
        })
        .collect()
}

fn item(pk: &str, payload: &Payload) -> Item {
    Item::from([
        ("pk".to_string(), AttributeValue::S(pk.to_string())),
        ("body".to_string(), payload.value()),
    ])
}

fn options() -> PutOptions {
    PutOptions {
        compression: CodecChoice::Auto,
        ..PutOptions::default()
    }
}

async fn timed<T>(
    model: &CapacityModel,
    op: impl std::future::Future<Output = T>,
) -> (T, Duration, Counts) {
    model.empty_buckets();
    let before = model.counts();
    let started = Instant::now();
    let out = op.await;
    (out, started.elapsed(), model.counts().since(&before))
}

fn shell_loop(endpoint: &str, dir: &Path, items: &[(String, Payload)]) {
    let json = dir.join("item.json");
    for (pk, payload) in items {
        let mut item = item(&format!("shell-{pk}"), payload);
        item.remove("pk");
        std::fs::write(&json, item_to_json(&item).to_string()).expect("item file");
        let status = Command::new(env!("CARGO_BIN_EXE_dynaslice"))
            .args(["--endpoint", endpoint, "put", "-t", TABLE, "-k"])
            .arg(format!("pk=shell-{pk}"))
            .arg("--json")
            .arg(format!("@{}", json.display()))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("dynaslice runs");
        assert!(status.success(), "a put failed");
    }
}

fn main() {
    let n: usize = std::env::var("DYNASLICE_BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "dynaslice-bench-bulk-{}-{nanos}",
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
        let table = TableConfig::chunk_table(TABLE, KeySchema::partition("pk", KeyType::S));
        create_tables(&client, &table).await.expect("tables");
        aws_sample::create_table(&client, BASELINE).await;
        let setup = Setup {
            model: &model,
            client: &client,
            table: &table,
            dir: &dir,
        };
        let mixed = items("mixed", n, &SIZES);
        load(&setup, "1 KB to 5 MB, JSON and binary in turn", &mixed, 40).await;
        let small = items("small", 20 * n, &SMALL);
        load(&setup, "1 KB to 8 KB, JSON and binary in turn", &small, 100).await;
        rated(&setup, &items("rated", 10 * n, &SMALL), RATE).await;
        drop(store);
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The rate limit of the rated load: a quarter of the table's 4,000 write
/// units per second.
const RATE: u32 = 1_000;

/// Loads `items` with `put_many` held to `rate` units per second (what
/// `dynaslice import --rate-limit` runs): the units the model metered on
/// the table per second, against the limit.
async fn rated(setup: &Setup<'_>, items: &[(String, Payload)], rate: u32) {
    let stream = futures::stream::iter(items.iter().map(|(pk, p)| (pk.clone(), Ok(item(pk, p)))));
    let many = ManyOptions {
        put: options(),
        max_units_per_second: Some(rate),
        ..ManyOptions::default()
    };
    let (report, time, counts) = timed(
        setup.model,
        dynaslice_host::put_many(setup.client, setup.table, stream, &many, |pk, outcome| {
            if let Err(e) = outcome {
                panic!("{pk}: {e}");
            }
        }),
    )
    .await;
    assert_eq!(report.written, items.len() as u64);
    let units = counts.units.write as f64 + counts.units.read();
    let per_second = units / time.as_secs_f64();
    println!(
        "\n{} items of 1 KB to 8 KB with a rate limit of {rate} units/s: {units:.0} units \
         (write and read) in {:.1} s, {per_second:.0} units/s, {:+.1} % of the limit",
        items.len(),
        time.as_secs_f64(),
        (per_second / f64::from(rate) - 1.0) * 100.0
    );
}

struct Setup<'a> {
    model: &'a CapacityModel,
    client: &'a aws_sdk_dynamodb::Client,
    table: &'a TableConfig,
    dir: &'a Path,
}

fn row(way: &str, bytes: usize, time: Duration, counts: &Counts, model: &Model) {
    let mb = bytes as f64 / 1e6;
    let bound = mb / (counts.capacity_seconds(model) + model.latency.base.as_secs_f64());
    let speed = mb / time.as_secs_f64();
    println!(
        "| {way} | {:.1} s | {speed:.2} | {bound:.2} | {:.0} % | {:.0} |",
        time.as_secs_f64(),
        speed / bound * 100.0,
        counts.units.write as f64 / mb
    );
}

/// Loads `items` each way; the shell loop only its first `looped`.
async fn load(setup: &Setup<'_>, what: &str, items: &[(String, Payload)], looped: usize) {
    let Setup {
        model,
        client,
        table,
        dir,
    } = *setup;
    let bytes: usize = items.iter().map(|(_, p)| p.bytes().len()).sum();
    println!(
        "\n{} items, {:.1} MB of payload ({what})\n",
        items.len(),
        bytes as f64 / 1e6
    );
    println!("| way | time | MB/s | bound MB/s | % of bound | WCU/MB |");
    println!("|---|---:|---:|---:|---:|---:|");
    let stream = futures::stream::iter(items.iter().map(|(pk, p)| (pk.clone(), Ok(item(pk, p)))));
    let many = ManyOptions {
        put: options(),
        ..ManyOptions::default()
    };
    let (report, time, counts) = timed(
        model,
        dynaslice_host::put_many(client, table, stream, &many, |pk, outcome| {
            if let Err(e) = outcome {
                panic!("{pk}: {e}");
            }
        }),
    )
    .await;
    assert_eq!(report.written, items.len() as u64);
    row(
        "dynaslice import (put_many, 32 in flight, 64 MiB)",
        bytes,
        time,
        &counts,
        &model.model(),
    );

    let endpoint = model.endpoint();
    let loop_items = &items[..items.len().min(looped)];
    let (_, time, counts) = timed(model, async {
        tokio::task::block_in_place(|| shell_loop(&endpoint, dir, loop_items))
    })
    .await;
    // The loop's items are the load's first (every size alike).
    let loop_bytes = loop_items
        .iter()
        .map(|(_, p)| p.bytes().len())
        .sum::<usize>();
    row(
        &format!(
            "shell loop of dynaslice put (the first {} items)",
            loop_items.len()
        ),
        loop_bytes,
        time,
        &counts,
        &model.model(),
    );

    let throttles = AtomicU64::new(0);
    let (_, time, counts) = timed(model, async {
        for (pk, payload) in items {
            aws_sample::put(client, BASELINE, pk, payload.bytes(), &throttles).await;
        }
    })
    .await;
    row(
        "AWS sample's way (sequential PutItem of chunks)",
        bytes,
        time,
        &counts,
        &model.model(),
    );
}
