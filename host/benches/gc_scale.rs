//! gc's peak memory as the table grows from 100,000 to 1,000,000 chunk
//! items: the `dynaslice` binary as an operator runs it, against the
//! embedded store served over HTTP (dynoxide's server), its peak RSS
//! (`VmHWM`) read every 3 ms. The chunk table holds crashed writes'
//! orphans (3 hours old) and, for every tenth item, a live item's chunks:
//! items of 203 KB cut into ~2 KB chunks, 100 chunk items each.
//!
//! ```text
//! cargo bench -p dynaslice-host --bench gc_scale      # npm run bench:gc-scale
//! DYNASLICE_BENCH_CHUNKS=200000 cargo bench -p dynaslice-host --bench gc_scale
//! ```
//!
//! Each size: `gc --scan --dry-run` (every chunk item read,
//! none deleted, so the next size reads the same and more) and `gc
//! --dry-run` over the anchors index. What bounds gc's memory is a page
//! per segment, so the peak should not follow the table.

#[path = "support/store_server.rs"]
mod store_server;

use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, VersionId, split_item,
};
use dynaslice_host::{EmbeddedStore, PutOptions, TableConfig, create_tables, item_to_sdk};
use dynaslice_testing::{cli_run, order_history};
use futures::StreamExt;

/// Chunk items per item.
const PER_ITEM: usize = 100;

fn chunk_options() -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(dynaslice_core::codec::Compression::NONE),
        chunk_item_bytes: 2_100,
        item_limit: 2_100,
        ..PutOptions::default()
    }
}

/// Writes items `from..to` (each `PER_ITEM` chunk items): every tenth put
/// whole by dynaslice, the others' chunks written straight to the chunk
/// table as a crashed write leaves them.
async fn litter(client: &aws_sdk_dynamodb::Client, table: &TableConfig, from: u64, to: u64) {
    let old = dynaslice_host::fresh_version().unix_ms() - 3 * 3600 * 1000;
    let writes = (from..to).map(|n| async move {
        let options = chunk_options();
        let item = Item::from([
            ("pk".to_string(), AttributeValue::S(format!("doc{n:07}"))),
            (
                "data".to_string(),
                AttributeValue::B(order_history::random_bytes(n, 203_000)),
            ),
        ]);
        if n % 10 == 0 {
            dynaslice_host::put(client, table, &item, &options, &())
                .await
                .expect("a put");
            return;
        }
        let split = options.split_options(&table.core(), VersionId::new(old, u128::from(n)));
        let chunks = split_item(&item, &split).expect("a split").chunks;
        for batch in chunks.chunks(25) {
            let mut requests: Vec<_> = batch
                .iter()
                .map(|chunk| {
                    aws_sdk_dynamodb::types::WriteRequest::builder()
                        .put_request(
                            aws_sdk_dynamodb::types::PutRequest::builder()
                                .set_item(Some(item_to_sdk(chunk.clone())))
                                .build()
                                .expect("a put request"),
                        )
                        .build()
                })
                .collect();
            while !requests.is_empty() {
                let answer = client
                    .batch_write_item()
                    .request_items(&table.chunk_table, requests.clone())
                    .send()
                    .await
                    .expect("a batch");
                requests = answer
                    .unprocessed_items
                    .and_then(|mut left| left.remove(&table.chunk_table))
                    .unwrap_or_default();
            }
        }
    });
    futures::stream::iter(writes)
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
}

/// Runs `dynaslice gc` with `args` against `endpoint`: its JSON report,
/// wall time and peak RSS.
fn gc(endpoint: &str, table: &str, args: &[&str]) -> (serde_json::Value, f64, u64) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
    command
        .args([
            "--endpoint",
            endpoint,
            "gc",
            "-t",
            table,
            "--dry-run",
            "--output",
            "json",
        ])
        .args(args);
    let started = Instant::now();
    let (run, peak) = cli_run::run_measured(command);
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(run.code, 0, "gc {args:?}: {}", run.stderr);
    let report = serde_json::from_str(&run.stdout).expect("a JSON report");
    (report, wall, peak)
}

fn main() {
    let top: u64 = std::env::var("DYNASLICE_BENCH_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let sizes = [top / 10, top];
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "dynaslice-bench-gcscale-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let store = EmbeddedStore::open(Some(&dir.join("store.db"))).expect("store opens");
        let addr = store_server::serve_http(&store).await;
        let endpoint = format!("http://{addr}");
        let client = dynaslice_host::local_client(&endpoint);
        let table = TableConfig::chunk_table("gcscale", KeySchema::partition("pk", KeyType::S));
        create_tables(&client, &table).await.expect("tables");
        println!("\ngc's peak RSS as the chunk table grows (the embedded store over HTTP)\n");
        println!(
            "| chunk items | command | items read | wall | peak RSS | peak / the {} run's |",
            sizes[0]
        );
        println!("|---:|---|---:|---:|---:|---:|");
        let mut written = 0u64;
        let mut first: Vec<u64> = Vec::new();
        for (at, &size) in sizes.iter().enumerate() {
            let load = Instant::now();
            let items = size / PER_ITEM as u64;
            let endpoint = endpoint.clone();
            litter(&client, &table, written, items).await;
            written = items;
            eprintln!(
                "loaded {size} chunk items in {:.0} s",
                load.elapsed().as_secs_f64()
            );
            let runs = [
                ("gc --scan", vec!["--scan"]),
                ("gc (anchors index)", vec![]),
            ];
            for (i, (name, args)) in runs.iter().enumerate() {
                let (table_name, args) = (table.table.clone(), args.clone());
                let endpoint = endpoint.clone();
                let (report, wall, peak) =
                    tokio::task::spawn_blocking(move || gc(&endpoint, &table_name, &args))
                        .await
                        .expect("the run");
                if at == 0 {
                    first.push(peak);
                }
                println!(
                    "| {size} | `{name}` | {} {} | {wall:.1} s | {:.1} MB | {:.2} |",
                    report["chunks"],
                    report["scanned"].as_str().unwrap_or(""),
                    peak as f64 / 1e6,
                    peak as f64 / first[i] as f64
                );
            }
        }
    });
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}
