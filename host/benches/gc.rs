//! What `gc` reads per GiB stored, in the capacity model
//! (`testing/src/capacity_model/`, which bills a Scan by the items its
//! pages return: an index's entries, a table's whole items): tables of
//! items of 1, 10 and 100 MB (random bytes, stored as they are), read by a
//! dry run two ways:
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
//! The items are loaded straight into the store, not through the model;
//! only the two dry runs go through it. Each line: the run's read units
//! (as the model metered them), per GiB of payload stored, and its time.

#[path = "support/store_server.rs"]
mod store_server;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use capacity_model::{CapacityModel, Model};
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType};
use dynaslice_host::{EmbeddedStore, GcOptions, ManyOptions, TableConfig, create_tables};
use dynaslice_testing::{capacity_model, order_history};

/// Item sizes, one table each.
const SIZES: [usize; 3] = [1_000_000, 10_000_000, 100_000_000];
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

fn main() {
    let mb: usize = std::env::var("DYNASLICE_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
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
        let direct = dynaslice_host::local_client(&format!("http://{upstream}"));
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
            create_tables(&direct, &table).await.expect("tables");
            load(&direct, &table, size, n).await;
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
        drop(store);
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}
