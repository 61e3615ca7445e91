//! The host tests' fault-injecting proxy (`dynaslice_testing::fault_proxy`) as
//! a program, so that tests in other languages (the npm package's DynamoDB
//! driver) meet exactly the faults the host's own tests meet.
//!
//! ```sh
//! cargo run -p dynaslice-host --example fault_proxy -- 127.0.0.1:8000 0.3 7
//! ```
//!
//! Arguments: the upstream server's address, the fault rate (0 to 1) and a
//! seed. It prints `fault proxy listening http://127.0.0.1:PORT` once it
//! listens, starts with faults off, and then reads one command per line on
//! stdin: `on`, `off`, `rate <0..1>` (each answered `ok` once in effect),
//! `counts` (answered with the counts as one line of JSON). It exits when
//! stdin closes.

use dynaslice_testing::fault_proxy;

use std::net::SocketAddr;
use std::process::ExitCode;

use fault_proxy::{Counts, Faults};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const USAGE: &str = "usage: fault_proxy <upstream ip:port> <rate 0..1> <seed>";

fn counts_json(c: &Counts) -> serde_json::Value {
    json!({
        "requests": c.requests,
        "forwarded": c.forwarded,
        "throttled": c.throttled,
        "internalErrorsBefore": c.internal_errors_before,
        "internalErrorsAfter": c.internal_errors_after,
        "droppedBefore": c.dropped_before,
        "droppedAfter": c.dropped_after,
        "partialBatches": c.partial_batches,
        "upstreamErrors": c.upstream_errors,
        "injected": c.injected(),
    })
}

fn parse_args() -> Option<(SocketAddr, Faults)> {
    let mut args = std::env::args().skip(1);
    let upstream = args.next()?.parse().ok()?;
    let rate: f64 = args.next()?.parse().ok()?;
    let seed = args.next()?.parse().ok()?;
    ((0.0..=1.0).contains(&rate) && args.next().is_none())
        .then_some((upstream, Faults { rate, seed }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some((upstream, faults)) = parse_args() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let proxy = fault_proxy::start(upstream, faults).await;
    proxy.set_enabled(false);
    println!("fault proxy listening {}", proxy.endpoint());
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut words = line.split_whitespace();
        match (words.next(), words.next().map(str::parse::<f64>)) {
            (Some("on"), None) => proxy.set_enabled(true),
            (Some("off"), None) => proxy.set_enabled(false),
            (Some("rate"), Some(Ok(rate))) => proxy.set_rate(rate),
            (Some("counts"), None) => {
                println!("{}", counts_json(&proxy.counts()));
                continue;
            }
            _ => {
                println!("error: unknown command {line:?} (on, off, rate <0..1>, counts)");
                continue;
            }
        }
        // Acknowledged once in effect: a test may send requests right after.
        println!("ok");
    }
    ExitCode::SUCCESS
}
