//! What `gc` reads per GiB stored, in the capacity model
//! (`testing/src/capacity_model/`, which bills a Scan by the items its
//! pages read: an index's entries, a table's whole items, whatever the
//! projection): tables of items of 1, 10 and 50 MB (random bytes, stored as
//! they are), read by a dry run two ways:
//!
//! - **every chunk** (`gc --scan`): a Scan of the chunk table, eventually
//!   consistent; the design before anchors read the same strongly
//!   consistent, at twice the units;
//! - **the anchors index** (`gc`, docs/FORMAT.md section 6): one entry per
//!   64 chunks, then each anchor's parent read consistently.
//!
//! ```text
//! cargo bench -p dynaslice-host --bench gc        # npm run bench:gc
//! DYNASLICE_BENCH_MB=100 cargo bench -p dynaslice-host --bench gc
//! ```
//!
//! The items are loaded through the model (so it knows every item's size),
//! then each dry run is metered alone. Each line: the run's read units,
//! per GiB of payload stored, and its time.
//!
//! Then gc at a rate limit (`--rate-limit`, over every chunk, so it has
//! many pages) while a writer puts 1 MB items into the same table: the
//! units per second gc counted for itself, and the read units per second
//! the model metered on the table meanwhile (gc's, and the writer's parent
//! reads), against the limit.

#[path = "support/store_server.rs"]
mod store_server;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use capacity_model::{CapacityModel, Model};
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType};
use dynaslice_host::{EmbeddedStore, GcOptions, ManyOptions, TableConfig, create_tables};
use dynaslice_testing::{capacity_model, order_history};

/// Item sizes, one table each.
const SIZES: [usize; 3] = [1_000_000, 10_000_000, 50_000_000];
const GIB: f64 = (1u64 << 30) as f64;

async fn load(client: &aws_sdk_dynamodb::Client, table: &TableConfig, size: usize, n: usize) {
    let items = (0..n).map(move |i| {
        let pk = format!("item{i:06}");
        let data = order_history::random_bytes((size + i) as u64, size);
        let item = Item::from([
            ("pk".to_string(), AttributeValue::S(pk.clone())),
            ("data".to_string(), AttributeValue::B(data)),
        ]);
        (pk, Ok(item))
    });
    let report = dynaslice_host::put_many(
        client,
        table,
        futures::stream::iter(items),
        &ManyOptions::default(),
        |pk, outcome| {
            if let Err(e) = outcome {
                panic!("{pk}: {e}");
            }
        },
    )
    .await;
    assert_eq!(report.written, n as u64);
}

/// A dry run of gc through the model: its read units and time.
async fn dry_run(
    model: &CapacityModel,
    client: &aws_sdk_dynamodb::Client,
    table: &TableConfig,
    every_chunk: bool,
) -> (f64, usize, Duration) {
    model.fill_buckets();
    let before = model.counts();
    let started = Instant::now();
    let options = GcOptions {
        grace: Duration::ZERO,
        dry_run: true,
        every_chunk,
        ..GcOptions::default()
    };
    let report = dynaslice_host::gc(client, table, &options)
        .await
        .expect("gc");
    assert_eq!(report.deleted, 0, "nothing to collect");
    let units = model.counts().since(&before).units.read();
    (units, report.chunks, started.elapsed())
}

/// gc limited to `RATE` units per second beside a writer of 1 MB items.
async fn rate_beside_a_writer(model: &CapacityModel, client: &aws_sdk_dynamodb::Client, mb: usize) {
    const RATE: u32 = 1_000;
    let table = TableConfig::chunk_table("gcrate", KeySchema::partition("pk", KeyType::S));
    create_tables(client, &table).await.expect("tables");
    load(client, &table, 1_000_000, mb).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (client, table, stop) = (client.clone(), table.clone(), stop.clone());
        tokio::spawn(async move {
            let mut written = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let item = Item::from([
                    (
                        "pk".to_string(),
                        AttributeValue::S(format!("new{written:06}")),
                    ),
                    (
                        "data".to_string(),
                        AttributeValue::B(order_history::random_bytes(written, 1_000_000)),
                    ),
                ]);
                dynaslice_host::put(&client, &table, &item, &Default::default(), &())
                    .await
                    .expect("the writer's put");
                written += 1;
            }
            written
        })
    };
    model.fill_buckets();
    let before = model.counts();
    let started = Instant::now();
    let options = GcOptions {
        grace: Duration::ZERO,
        dry_run: true,
        every_chunk: true,
        max_units_per_second: Some(RATE),
        ..GcOptions::default()
    };
    let report = dynaslice_host::gc(client, &table, &options)
        .await
        .expect("gc");
    let seconds = started.elapsed().as_secs_f64();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = writer.await.expect("the writer");
    let metered = model.counts().since(&before).units;
    let own = report.consumed.read + report.consumed.write;
    println!(
        "\ngc --rate-limit {RATE} over every chunk of {} chunk items, a writer putting 1 MB items \
         into the same table beside it ({written} written meanwhile): {seconds:.1} s; gc counted \
         {own:.0} units, {:.0} per second ({:+.1} % of the limit); the model metered {:.0} read \
         units on the table, {:.0} per second ({:+.1} %)",
        report.chunks,
        own / seconds,
        (own / seconds / f64::from(RATE) - 1.0) * 100.0,
        metered.read(),
        metered.read() / seconds,
        (metered.read() / seconds / f64::from(RATE) - 1.0) * 100.0,
    );
}

fn main() {
    let mb: usize = std::env::var("DYNASLICE_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir =
        std::env::temp_dir().join(format!("dynaslice-bench-gc-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let store = EmbeddedStore::open(Some(&dir.join("store.db"))).expect("store opens");
        let upstream = store_server::serve_http(&store).await;
        let model = capacity_model::start(upstream, Model::documented()).await;
        let metered = dynaslice_host::local_client(&model.endpoint());
        println!(
            "\nAbout {mb} MB of items per table; read units of a gc dry run (as the model bills them)\n"
        );
        println!(
            "| items | stored | over every chunk | per GiB | per GiB, strongly consistent (before) \
             | over the anchors index | per GiB | fewer | time, every chunk / anchors |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for size in SIZES {
            let n = (mb * 1_000_000 / size).max(1);
            let name = format!("gc{}mb", size / 1_000_000);
            let table = TableConfig::chunk_table(&name, KeySchema::partition("pk", KeyType::S));
            create_tables(&metered, &table).await.expect("tables");
            load(&metered, &table, size, n).await;
            let stored = (size * n) as f64;
            let (every, chunks, every_time) = dry_run(&model, &metered, &table, true).await;
            let (by_anchors, anchors, anchors_time) =
                dry_run(&model, &metered, &table, false).await;
            println!(
                "| {n} × {} MB | {:.0} MB, {chunks} chunks | {every:.0} | {:.0} | {:.0} | {by_anchors:.1} \
                 ({anchors} anchors) | {:.1} | {:.0}× | {:.2} s / {:.2} s |",
                size / 1_000_000,
                stored / 1e6,
                every / stored * GIB,
                2.0 * every / stored * GIB,
                by_anchors / stored * GIB,
                every / by_anchors,
                every_time.as_secs_f64(),
                anchors_time.as_secs_f64(),
            );
        }
        rate_beside_a_writer(&model, &metered, mb).await;
        drop(store);
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}
