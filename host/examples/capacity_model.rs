//! The host tests' DynamoDB capacity model (`dynaslice_testing::capacity_model`, `testing/src/capacity_model/`)
//! as a program, so that benchmarks and tests in other languages (the npm
//! package's DynamoDB driver) run in the same model as the host's.
//!
//! ```sh
//! cargo run -p dynaslice-host --example capacity_model -- 127.0.0.1:8000
//! cargo run -p dynaslice-host --example capacity_model -- 127.0.0.1:8000 --mode throttle --latency-ms 0
//! ```
//!
//! The first argument is the upstream server's address; the flags change the
//! documented defaults (`Model::documented()`):
//!
//! | flag | default | meaning |
//! |---|---|---|
//! | `--mode wait\|throttle` | `wait` | delay requests over a limit, or refuse them as DynamoDB does |
//! | `--partition-write N` | 1000 | write units per second per partition key value |
//! | `--partition-read N` | 3000 | read units per second per partition key value |
//! | `--table-write N` | 4000 | write units per second per table |
//! | `--table-read N` | 12000 | read units per second per table |
//! | `--burst S` | 1 | seconds of capacity every bucket saves for a burst |
//! | `--latency-ms N` | 8 | latency per request, ms |
//! | `--latency-us-per-kib N` | 10 | latency per KiB of request and answer body, µs |
//!
//! It prints `capacity model listening http://127.0.0.1:PORT` once it
//! listens, then reads one command per line on stdin: `mode wait`,
//! `mode throttle`, `empty` (empty every bucket, and start tables' new
//! buckets empty: no saved burst), `fill` (fill every bucket), each answered `ok` once in effect; `counts`,
//! answered with the counts as one line of JSON. It exits when stdin closes.

use dynaslice_testing::capacity_model;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use capacity_model::{Counts, Mode, Model, Units};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const USAGE: &str = "usage: capacity_model <upstream ip:port> [--mode wait|throttle] \
[--partition-write N] [--partition-read N] [--table-write N] [--table-read N] [--burst S] \
[--latency-ms N] [--latency-us-per-kib N]";

fn units_json(units: &Units) -> Value {
    json!({ "write": units.write, "read": units.read() })
}

fn counts_json(c: &Counts, model: &Model) -> Value {
    let tables: serde_json::Map<String, Value> = c
        .tables
        .iter()
        .map(|(table, units)| (table.clone(), units_json(units)))
        .collect();
    let partitions: Vec<Value> = c
        .partitions
        .iter()
        .map(|((table, key), units)| {
            json!({ "table": table, "key": key, "write": units.write, "read": units.read() })
        })
        .collect();
    json!({
        "requests": c.requests,
        "forwarded": c.forwarded,
        "unmetered": c.unmetered,
        "throttledPartition": c.throttled_partition,
        "throttledTable": c.throttled_table,
        "partialBatches": c.partial_batches,
        "unprocessed": c.unprocessed,
        "upstreamErrors": c.upstream_errors,
        "writeUnits": c.units.write,
        "readUnits": c.units.read(),
        "tables": tables,
        "partitions": partitions,
        "waitedMs": c.waited.as_secs_f64() * 1e3,
        "latencyMs": c.latency.as_secs_f64() * 1e3,
        "capacitySeconds": c.capacity_seconds(model),
    })
}

fn parse_args() -> Option<(SocketAddr, Model)> {
    let mut args = std::env::args().skip(1);
    let upstream = args.next()?.parse().ok()?;
    let mut model = Model::documented();
    while let Some(flag) = args.next() {
        let value = args.next()?;
        let number = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n >= 0.0)
        };
        let rate = || number().filter(|n| *n > 0.0);
        match flag.as_str() {
            "--mode" => {
                model.mode = match value.as_str() {
                    "wait" => Mode::Wait,
                    "throttle" => Mode::Throttle,
                    _ => return None,
                }
            }
            "--partition-write" => model.partition.write_per_s = rate()?,
            "--partition-read" => model.partition.read_per_s = rate()?,
            "--table-write" => model.table.write_per_s = rate()?,
            "--table-read" => model.table.read_per_s = rate()?,
            "--burst" => {
                let burst = number()?;
                model.partition.burst_s = burst;
                model.table.burst_s = burst;
            }
            "--latency-ms" => model.latency.base = Duration::from_secs_f64(number()? / 1e3),
            "--latency-us-per-kib" => {
                model.latency.per_kib = Duration::from_secs_f64(number()? / 1e6)
            }
            _ => return None,
        }
    }
    Some((upstream, model))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some((upstream, model)) = parse_args() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let proxy = capacity_model::start(upstream, model).await;
    println!("capacity model listening {}", proxy.endpoint());
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["mode", "wait"] => proxy.set_mode(Mode::Wait),
            ["mode", "throttle"] => proxy.set_mode(Mode::Throttle),
            ["empty"] => proxy.empty_buckets(),
            ["fill"] => proxy.fill_buckets(),
            ["counts"] => {
                println!("{}", counts_json(&proxy.counts(), &proxy.model()));
                continue;
            }
            _ => {
                println!(
                    "error: unknown command {line:?} (mode wait|throttle, empty, fill, counts)"
                );
                continue;
            }
        }
        // Acknowledged once in effect: a client may send requests right after.
        println!("ok");
    }
    ExitCode::SUCCESS
}
