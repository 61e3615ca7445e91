//! Payloads in S3 against chunks and against the peers' way, by time and by
//! cost, in the capacity model (BENCHMARKS.md, "Payloads in S3").
//!
//! ```text
//! cargo bench -p dynaslice-host --bench objects        # npm run bench:objects
//! DYNASLICE_BENCH_SIZES=1,10 cargo bench -p dynaslice-host --bench objects
//! ```
//!
//! DynamoDB is the embedded store behind the capacity model
//! (`Model::documented()`, wait mode: 1,000 write / 3,000 read units per
//! second per partition key value, 4,000 / 12,000 per table, 8 ms per
//! request). S3 is SeaweedFS (`weed mini` on loopback, the real server)
//! behind the fault proxy with no faults and S3's latency: 30 ms before
//! each request (a first byte in S3 takes tens of milliseconds) and each
//! body at 90 MB/s (one connection's throughput). S3's per-prefix rates
//! (3,500 writes and 5,500 reads a second) are not modelled: no way here
//! comes near them.
//!
//! Each way puts, then gets, one item of random bytes of each size (1, 10,
//! 50 and 200 MiB; `DYNASLICE_BENCH_SIZES` in MiB) under a fresh key:
//!
//! - **chunks**: `put_reader` / `get_file` with no object store, codec `none`;
//! - **offload**: the same with an S3 store (threshold 1 MiB, parts of 8 MiB);
//! - **the peers' way** (pydynox's `S3Attribute`, the AWS sample): one
//!   PutObject of the whole payload at a fixed key, then a PutItem naming
//!   it; a GetItem, then one GetObject of the whole.
//!
//! Cost at us-east-1 list prices (on-demand DynamoDB: $0.625 per million
//! write and $0.125 per million read request units; S3 Standard: $0.005 per
//! 1,000 PUT, POST and LIST requests, $0.0004 per 1,000 GET and HEAD,
//! DELETE free), from the units the model metered and the requests the
//! proxy counted.

#[path = "support/store_server.rs"]
mod store_server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use dynaslice_core::codec::Compression;
use dynaslice_core::object::ObjectStore;
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType};
use dynaslice_host::{
    EmbeddedStore, GetOptions, Objects, PutOptions, TableConfig, create_tables, get_file,
    put_reader,
};
use dynaslice_testing::capacity_model::{self, CapacityModel, Model};
use dynaslice_testing::fault_proxy::{self, FaultProxy, Faults, Latency};

const MIB: usize = 1024 * 1024;
const BUCKET: &str = "bench";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Chunks,
    Offload,
    Peers,
}

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::Chunks => "dynaslice, chunks",
            Way::Offload => "dynaslice, S3 object",
            Way::Peers => "peers' way (object at a fixed key, then the item)",
        }
    }
}

/// What one put or get took and cost.
struct Measure {
    time: Duration,
    write_units: u64,
    read_units: f64,
    s3: BTreeMap<String, u64>,
}

impl Measure {
    fn requests(&self) -> u64 {
        self.s3.values().sum()
    }

    fn dollars(&self) -> f64 {
        let put_class: u64 = ["PUT", "POST"]
            .iter()
            .map(|m| self.s3.get(*m).copied().unwrap_or(0))
            .sum();
        let get_class: u64 = ["GET", "HEAD"]
            .iter()
            .map(|m| self.s3.get(*m).copied().unwrap_or(0))
            .sum();
        let p = dynaslice_core::price::US_EAST_1;
        p.write_units(self.write_units)
            + p.read_units(self.read_units)
            + p.s3_writes(put_class)
            + p.s3_reads(get_class)
    }
}

fn since(now: &BTreeMap<String, u64>, then: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    now.iter()
        .map(|(k, v)| (k.clone(), v - then.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

async fn timed<T>(
    model: &CapacityModel,
    proxy: &FaultProxy,
    op: impl std::future::Future<Output = T>,
) -> (T, Measure) {
    model.empty_buckets();
    let (units, methods) = (model.counts().units, proxy.methods());
    let started = Instant::now();
    let out = op.await;
    let time = started.elapsed();
    let now = model.counts().units;
    let measure = Measure {
        time,
        write_units: now.write - units.write,
        read_units: (now.read_half - units.read_half) as f64 / 2.0,
        s3: since(&proxy.methods(), &methods),
    };
    (out, measure)
}

fn key(pk: &str) -> Item {
    Item::from([("pk".to_string(), AttributeValue::S(pk.to_string()))])
}

fn sizes() -> Vec<usize> {
    std::env::var("DYNASLICE_BENCH_SIZES").map_or_else(
        |_| vec![1, 10, 50, 200],
        |list| {
            list.split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect()
        },
    )
}

fn main() {
    let weed = dynaslice_testing::seaweedfs::start().expect("SeaweedFS starts");
    let dir: PathBuf =
        std::env::temp_dir().join(format!("dynaslice-bench-objects-{}", std::process::id()));
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
        let s3_addr = weed
            .s3_endpoint
            .trim_start_matches("http://")
            .parse()
            .unwrap();
        let proxy = fault_proxy::start_s3(s3_addr, Faults { rate: 0.0, seed: 1 }).await;
        let s3 = dynaslice_host::local_s3_client(&proxy.endpoint());
        dynaslice_host::ensure_bucket(&s3, BUCKET)
            .await
            .expect("bucket");
        proxy.set_latency(Some(Latency {
            base: Duration::from_millis(30),
            bytes_per_second: 90e6,
        }));
        // S3's request rates per prefix (3,500 writes, 5,500 reads a second).
        proxy.set_prefix_rates(Some(dynaslice_testing::fault_proxy::PrefixRates::S3));
        let chunks =
            TableConfig::chunk_table("bench_chunks", KeySchema::partition("pk", KeyType::S));
        create_tables(&client, &chunks).await.expect("tables");
        let mut offload =
            TableConfig::chunk_table("bench_offload", KeySchema::partition("pk", KeyType::S));
        create_tables(&client, &offload).await.expect("tables");
        let objects = ObjectStore::new(BUCKET, "offload/");
        offload.objects = Some(Objects::new(objects, s3.clone()).expect("store"));
        let peers = TableConfig::chunk_table("bench_peers", KeySchema::partition("pk", KeyType::S));
        create_tables(&client, &peers).await.expect("tables");
        // One small item each way first: connections and credentials are
        // set up before anything is timed.
        let warm = dir.join("warm.bin");
        std::fs::write(&warm, vec![7u8; 2 * MIB]).unwrap();
        ours_put(&client, &offload, "warm", &warm).await;
        ours_get(&client, &offload, "warm", &dir.join("warm.out")).await;
        peers_put(&client, &s3, "warm", &warm).await;
        peers_get(&client, &s3, "warm", &dir.join("warm.out")).await;
        let started = Instant::now();
        let mut rows = Vec::new();
        for mib in sizes() {
            let source = dir.join(format!("{mib}.bin"));
            std::fs::write(
                &source,
                dynaslice_testing::order_history::random_bytes(mib as u64, mib * MIB),
            )
            .unwrap();
            for way in [Way::Chunks, Way::Offload, Way::Peers] {
                let pk = format!("{mib}-{}", way.name().len());
                let out = dir.join("out.bin");
                let (put, get) = match way {
                    Way::Peers => {
                        let (_, put) =
                            timed(&model, &proxy, peers_put(&client, &s3, &pk, &source)).await;
                        let (_, get) =
                            timed(&model, &proxy, peers_get(&client, &s3, &pk, &out)).await;
                        (put, get)
                    }
                    _ => {
                        let table = if way == Way::Chunks {
                            &chunks
                        } else {
                            &offload
                        };
                        let (_, put) =
                            timed(&model, &proxy, ours_put(&client, table, &pk, &source)).await;
                        let (_, get) =
                            timed(&model, &proxy, ours_get(&client, table, &pk, &out)).await;
                        (put, get)
                    }
                };
                assert_eq!(
                    std::fs::read(&out).unwrap(),
                    std::fs::read(&source).unwrap(),
                    "{mib} MiB {}",
                    way.name()
                );
                eprintln!(
                    "{mib} MiB {}: put {:?}, get {:?} ({:.0} s so far)",
                    way.name(),
                    put.time,
                    get.time,
                    started.elapsed().as_secs_f64()
                );
                rows.push((mib, way, put, get));
            }
        }
        print_rows(&rows);
        println!(
            "\nS3 requests answered SlowDown (past a prefix's rate): {}",
            proxy.counts().throttled
        );
        println!("whole run: {:.0} s", started.elapsed().as_secs_f64());
        drop(store);
    });
    drop(runtime);
    drop(weed);
    let _ = std::fs::remove_dir_all(&dir);
}

async fn ours_put(client: &aws_sdk_dynamodb::Client, table: &TableConfig, pk: &str, source: &Path) {
    let file = tokio::fs::File::open(source).await.unwrap();
    let len = file.metadata().await.unwrap().len();
    let options = PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        max_item_bytes: usize::MAX,
        ..PutOptions::default()
    };
    put_reader(
        client,
        table,
        key(pk),
        "data",
        file,
        Some(len),
        &options,
        &(),
    )
    .await
    .expect("put");
}

async fn ours_get(client: &aws_sdk_dynamodb::Client, table: &TableConfig, pk: &str, out: &Path) {
    let options = GetOptions::default();
    get_file(client, table, &key(pk), "data", out, &options, &())
        .await
        .expect("get")
        .expect("found");
}

/// The peers' way: the whole payload at a fixed key, then the item.
async fn peers_put(
    client: &aws_sdk_dynamodb::Client,
    s3: &aws_sdk_s3::Client,
    pk: &str,
    source: &Path,
) {
    let object = format!("peers/{pk}");
    let body = ByteStream::from_path(source).await.unwrap();
    s3.put_object()
        .bucket(BUCKET)
        .key(&object)
        .body(body)
        .send()
        .await
        .expect("PutObject");
    let item = Item::from([
        ("pk".to_string(), AttributeValue::S(pk.to_string())),
        (
            "s3".to_string(),
            AttributeValue::S(format!("s3://{BUCKET}/{object}")),
        ),
    ]);
    client
        .put_item()
        .table_name("bench_peers")
        .set_item(Some(dynaslice_host::item_to_sdk(item)))
        .send()
        .await
        .expect("PutItem");
}

async fn peers_get(
    client: &aws_sdk_dynamodb::Client,
    s3: &aws_sdk_s3::Client,
    pk: &str,
    out: &Path,
) {
    let item = client
        .get_item()
        .table_name("bench_peers")
        .set_key(Some(dynaslice_host::item_to_sdk(key(pk))))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem")
        .item
        .expect("found");
    let pointer = item["s3"].as_s().unwrap();
    let object = pointer
        .trim_start_matches(&format!("s3://{BUCKET}/"))
        .to_string();
    let answer = s3
        .get_object()
        .bucket(BUCKET)
        .key(object)
        .send()
        .await
        .expect("GetObject");
    let bytes = answer.body.collect().await.unwrap().into_bytes();
    std::fs::write(out, bytes).unwrap();
}

fn print_rows(rows: &[(usize, Way, Measure, Measure)]) {
    println!(
        "\n| item | way | put MB/s | get MB/s | put: units, S3 requests, $ | get: units, S3 requests, $ |"
    );
    println!("|---:|---|---:|---:|---|---|");
    for (mib, way, put, get) in rows {
        let mb = (*mib * MIB) as f64 / 1e6;
        println!(
            "| {mib} MiB | {} | {:.1} | {:.1} | {} WRU, {} ({}), ${:.6} | {} RRU, {} ({}), ${:.7} |",
            way.name(),
            mb / put.time.as_secs_f64(),
            mb / get.time.as_secs_f64(),
            put.write_units,
            put.requests(),
            methods(&put.s3),
            put.dollars(),
            get.read_units,
            get.requests(),
            methods(&get.s3),
            get.dollars(),
        );
    }
}

fn methods(counts: &BTreeMap<String, u64>) -> String {
    if counts.is_empty() {
        return "none".into();
    }
    counts
        .iter()
        .map(|(m, n)| format!("{n} {m}"))
        .collect::<Vec<_>>()
        .join(", ")
}
