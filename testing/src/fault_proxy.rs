//! A loopback HTTP/1.1 proxy that injects DynamoDB faults (or, started with
//! [`start_s3`], S3's), for tests.
//!
//! ```no_run
//! # async fn example(upstream_addr: std::net::SocketAddr) {
//! use dynaslice_testing::fault_proxy;
//!
//! let proxy = fault_proxy::start(upstream_addr, fault_proxy::Faults { rate: 0.3, seed: 7 }).await;
//! proxy.set_enabled(false);      // set up cleanly...
//! // ... create tables through proxy.endpoint() ...
//! proxy.set_enabled(true);       // ...then let faults happen
//! // ... run the code under test, then look at proxy.counts() ...
//! # }
//! ```
//!
//! No local DynamoDB-compatible server ever throttles, fails, or leaves a batch
//! partly done, so the retry paths of a client can only be exercised by faking
//! those answers. The proxy sits between the AWS SDK (which talks plain HTTP/1.1
//! to an `http://127.0.0.1:<port>` endpoint: `POST /`, `X-Amz-Target:
//! DynamoDB_20120810.<Operation>`, a JSON body with `Content-Length`) and a
//! server such as dynoxide or DynamoDB Local, and on each request, with
//! probability [`Faults::rate`], does one of the [`FaultKind`]s instead of a
//! plain relay:
//!
//! - [`FaultKind::Throttle`]: answers 400 `ProvisionedThroughputExceededException`
//!   without forwarding.
//! - [`FaultKind::InternalErrorBefore`] / [`FaultKind::InternalErrorAfter`]:
//!   answers 500 `InternalServerError`, either without forwarding or after the
//!   upstream has carried the request out (the write happened, the client sees a
//!   failure: what makes retried conditional writes interesting).
//! - [`FaultKind::DropBefore`] / [`FaultKind::DropAfter`]: closes the client's
//!   connection without an answer, before or after forwarding.
//! - [`FaultKind::PartialBatch`] (BatchWriteItem and BatchGetItem only): forwards
//!   a random non-empty proper subset of `RequestItems` and adds the rest to the
//!   upstream's `UnprocessedItems` / `UnprocessedKeys`, as DynamoDB does under load.
//!
//! Without a fault the proxy relays the client's bytes and the upstream's bytes
//! unchanged (framing included, `Transfer-Encoding: chunked` too). The HTTP
//! plumbing, and what it does not support, is `relay.rs`'s.

#![allow(dead_code)] // each test file uses its own part of this module

use crate::relay::{
    self, BatchOp, Message, Partial, Upstream, bad_gateway, batch_entries, error_answer,
    merge_unprocessed, split_batch,
};
use serde_json::Value;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// The CRC-32 DynamoDB sends in `x-amz-crc32` (`relay::crc32`), for tests
/// that build answers of their own.
pub fn crc32(data: &[u8]) -> u32 {
    relay::crc32(data)
}

/// What to inject: each request gets a fault with probability `rate`.
#[derive(Clone, Copy, Debug)]
pub struct Faults {
    /// The probability, from 0.0 to 1.0, that a request gets a fault.
    pub rate: f64,
    /// Seeds the random choices (whether, which fault, which subset), so a
    /// sequential run is repeatable. Concurrent requests draw in arrival order.
    pub seed: u64,
}

/// One kind of injected fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// 400 `ProvisionedThroughputExceededException`; the request is not forwarded.
    Throttle,
    /// 500 `InternalServerError`; the request is not forwarded.
    InternalErrorBefore,
    /// 500 `InternalServerError` after the upstream carried the request out.
    InternalErrorAfter,
    /// The connection closes without an answer; the request is not forwarded.
    DropBefore,
    /// The connection closes without an answer after the upstream carried the
    /// request out.
    DropAfter,
    /// BatchWriteItem / BatchGetItem with at least two requests only: a random
    /// non-empty proper subset is forwarded and the rest comes back as
    /// `UnprocessedItems` / `UnprocessedKeys`.
    PartialBatch,
}

impl FaultKind {
    /// Every kind, the default set [`FaultProxy::set_kinds`] chooses from.
    pub const ALL: [FaultKind; 6] = [
        FaultKind::Throttle,
        FaultKind::InternalErrorBefore,
        FaultKind::InternalErrorAfter,
        FaultKind::DropBefore,
        FaultKind::DropAfter,
        FaultKind::PartialBatch,
    ];

    /// Relative odds of each kind: throttling, 500s, dropped connections and
    /// (for batches) partial batches are equally likely, and the 500s and drops
    /// split evenly between before and after forwarding.
    fn weight(self) -> u32 {
        match self {
            FaultKind::Throttle | FaultKind::PartialBatch => 2,
            _ => 1,
        }
    }
}

/// A snapshot of what the proxy has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests received from clients.
    pub requests: u64,
    /// Requests the upstream answered (whole, or the forwarded part of a
    /// partial batch), faults after forwarding included.
    pub forwarded: u64,
    /// [`FaultKind::Throttle`] answers sent.
    pub throttled: u64,
    /// [`FaultKind::InternalErrorBefore`] answers sent.
    pub internal_errors_before: u64,
    /// [`FaultKind::InternalErrorAfter`] answers sent.
    pub internal_errors_after: u64,
    /// [`FaultKind::DropBefore`] connections closed.
    pub dropped_before: u64,
    /// [`FaultKind::DropAfter`] connections closed.
    pub dropped_after: u64,
    /// [`FaultKind::PartialBatch`] answers sent (with held-back requests merged in).
    pub partial_batches: u64,
    /// Requests the upstream could not be reached for or answered malformed;
    /// the client got a 502. Should stay 0.
    pub upstream_errors: u64,
}

impl Counts {
    /// How many faults were injected in total.
    pub fn injected(&self) -> u64 {
        self.throttled
            + self.internal_errors_before
            + self.internal_errors_after
            + self.dropped_before
            + self.dropped_after
            + self.partial_batches
    }
}

/// The live counters behind [`Counts`].
#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    forwarded: AtomicU64,
    throttled: AtomicU64,
    internal_errors_before: AtomicU64,
    internal_errors_after: AtomicU64,
    dropped_before: AtomicU64,
    dropped_after: AtomicU64,
    partial_batches: AtomicU64,
    upstream_errors: AtomicU64,
}

/// Bumps one counter.
fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::SeqCst);
}

/// State shared by the accept loop, every connection and the [`FaultProxy`] handle.
struct Shared {
    upstream: SocketAddr,
    enabled: AtomicBool,
    /// `f64` bits, so the rate can change while connections run.
    rate: AtomicU64,
    kinds: Mutex<Vec<FaultKind>>,
    rng: Mutex<fastrand::Rng>,
    counters: Counters,
    /// Answer faults as S3 does (XML errors; throttling is 503 `SlowDown`).
    s3: bool,
    /// The latency added to every request ([`FaultProxy::set_latency`]).
    latency: Mutex<Option<Latency>>,
    /// Requests by HTTP method.
    methods: Mutex<std::collections::BTreeMap<String, u64>>,
    /// S3's request rates per prefix, when modelled ([`FaultProxy::set_prefix_rates`]).
    rates: Mutex<Option<PrefixLimits>>,
}

/// S3's request rates per partitioned prefix: "at least 3,500
/// PUT/COPY/POST/DELETE or 5,500 GET/HEAD requests per second per
/// partitioned Amazon S3 prefix" (Amazon S3 User Guide, "Best practices
/// design patterns: optimizing Amazon S3 performance"). A request past its
/// prefix's rate is answered 503 `SlowDown`, as S3 answers it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrefixRates {
    /// PUT, POST and DELETE requests a second per prefix.
    pub writes_per_s: f64,
    /// GET and HEAD requests a second per prefix.
    pub reads_per_s: f64,
    /// Seconds of unused rate a prefix saves for a burst (and starts with).
    pub burst_s: f64,
}

impl PrefixRates {
    /// S3's published rates, with a second of burst.
    pub const S3: Self = Self {
        writes_per_s: 3_500.0,
        reads_per_s: 5_500.0,
        burst_s: 1.0,
    };
}

/// The rates and each prefix's token buckets (writes and reads apart).
struct PrefixLimits {
    rates: PrefixRates,
    /// Requests left, and when last filled, by prefix and whether writes.
    buckets: std::collections::HashMap<(String, bool), (f64, std::time::Instant)>,
}

impl PrefixLimits {
    /// Takes one request of `prefix` from its bucket; false when none is left.
    fn take(&mut self, prefix: String, write: bool) -> bool {
        let rate = match write {
            true => self.rates.writes_per_s,
            false => self.rates.reads_per_s,
        };
        let full = rate * self.rates.burst_s;
        let now = std::time::Instant::now();
        let (level, at) = self.buckets.entry((prefix, write)).or_insert((full, now));
        *level = (*level + now.duration_since(*at).as_secs_f64() * rate).min(full);
        *at = now;
        if *level < 1.0 {
            return false;
        }
        *level -= 1.0;
        true
    }
}

/// The prefix an S3 request (path-style) counts against, and whether it is
/// a write: the bucket and the key up to its last `/` (the `prefix`
/// parameter of a bucket's listing); `None` for a request of no bucket.
fn s3_prefix(request: &Message) -> Option<(String, bool)> {
    let write = matches!(request.method(), "PUT" | "POST" | "DELETE");
    let target = request.start.split(' ').nth(1)?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = path.trim_start_matches('/');
    let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
    if bucket.is_empty() {
        return None;
    }
    let within = match key.rsplit_once('/') {
        Some((dir, _)) => dir.to_string(),
        None if key.is_empty() => query
            .split('&')
            .find_map(|pair| pair.strip_prefix("prefix="))
            .map_or(String::new(), |p| {
                let p = p.replace("%2F", "/").replace("%2f", "/");
                p.rsplit_once('/')
                    .map_or(String::new(), |(d, _)| d.to_string())
            }),
        None => String::new(),
    };
    Some((format!("{bucket}/{within}"), write))
}

/// A service's latency, added to every request a proxy relays: `base`
/// before it is forwarded (the first byte's wait), and its bodies' bytes
/// at `bytes_per_second` (one connection's bandwidth) each way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latency {
    /// Added to every request.
    pub base: std::time::Duration,
    /// Bytes per second of each request's and each answer's body.
    pub bytes_per_second: f64,
}

impl Latency {
    fn of(&self, bytes: usize) -> std::time::Duration {
        std::time::Duration::from_secs_f64(bytes as f64 / self.bytes_per_second)
    }
}

/// A running fault-injecting proxy. Dropping it stops accepting connections;
/// connections already open end when their clients close them.
pub struct FaultProxy {
    /// The address it listens on (127.0.0.1, a port the kernel picked).
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    /// `http://127.0.0.1:<port>`, for an SDK client's `endpoint_url`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The server the proxy forwards to.
    pub fn upstream(&self) -> SocketAddr {
        self.shared.upstream
    }

    /// A snapshot of the counters, consistent per field (read any time).
    pub fn counts(&self) -> Counts {
        let c = &self.shared.counters;
        let get = |counter: &AtomicU64| counter.load(Ordering::SeqCst);
        Counts {
            requests: get(&c.requests),
            forwarded: get(&c.forwarded),
            throttled: get(&c.throttled),
            internal_errors_before: get(&c.internal_errors_before),
            internal_errors_after: get(&c.internal_errors_after),
            dropped_before: get(&c.dropped_before),
            dropped_after: get(&c.dropped_after),
            partial_batches: get(&c.partial_batches),
            upstream_errors: get(&c.upstream_errors),
        }
    }

    /// Turns fault injection on or off (on after [`start`]); off, every request
    /// is relayed unchanged. Takes effect for the next request read.
    pub fn set_enabled(&self, enabled: bool) {
        self.shared.enabled.store(enabled, Ordering::SeqCst);
    }

    /// Whether faults are being injected.
    pub fn enabled(&self) -> bool {
        self.shared.enabled.load(Ordering::SeqCst)
    }

    /// Changes the probability of a fault per request (clamped to 0.0..=1.0).
    pub fn set_rate(&self, rate: f64) {
        let rate = rate.clamp(0.0, 1.0);
        self.shared.rate.store(rate.to_bits(), Ordering::SeqCst);
    }

    /// Adds `latency` to every request from now on (`None`: none).
    pub fn set_latency(&self, latency: Option<Latency>) {
        *self.shared.latency.lock().unwrap() = latency;
    }

    /// Models S3's request rates per prefix from now on (`None`: none;
    /// [`PrefixRates::S3`]: S3's own). Only for a proxy made by [`start_s3`].
    pub fn set_prefix_rates(&self, rates: Option<PrefixRates>) {
        *self.shared.rates.lock().unwrap() = rates.map(|rates| PrefixLimits {
            rates,
            buckets: std::collections::HashMap::new(),
        });
    }

    /// Requests received so far by HTTP method (`PUT`, `POST`, `GET`, ...).
    pub fn methods(&self) -> std::collections::BTreeMap<String, u64> {
        self.shared.methods.lock().unwrap().clone()
    }

    /// Restricts the faults to `kinds` ([`FaultKind::ALL`] after [`start`]). A
    /// request none of them applies to (say, a PutItem when only
    /// [`FaultKind::PartialBatch`] is allowed) is relayed unchanged.
    pub fn set_kinds(&self, kinds: &[FaultKind]) {
        *self.shared.kinds.lock().unwrap() = kinds.to_vec();
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Starts a proxy on 127.0.0.1 (a free port) in front of `upstream`, with
/// faults enabled and every [`FaultKind`] allowed. Must run inside a Tokio runtime.
pub async fn start(upstream: SocketAddr, faults: Faults) -> FaultProxy {
    start_as(upstream, faults, false).await
}

/// [`start`] in front of an S3-compatible server: throttling is S3's 503
/// `SlowDown`, a 500 is `InternalError`, both as S3's XML errors.
pub async fn start_s3(upstream: SocketAddr, faults: Faults) -> FaultProxy {
    start_as(upstream, faults, true).await
}

async fn start_as(upstream: SocketAddr, faults: Faults, s3: bool) -> FaultProxy {
    let shared = Arc::new(Shared {
        s3,
        latency: Mutex::new(None),
        methods: Mutex::new(std::collections::BTreeMap::new()),
        rates: Mutex::new(None),
        upstream,
        enabled: AtomicBool::new(true),
        rate: AtomicU64::new(faults.rate.clamp(0.0, 1.0).to_bits()),
        kinds: Mutex::new(FaultKind::ALL.to_vec()),
        rng: Mutex::new(fastrand::Rng::with_seed(faults.seed)),
        counters: Counters::default(),
    });
    let (addr, accept) = relay::listen({
        let shared = shared.clone();
        move |client| serve_client(shared.clone(), client)
    })
    .await;
    FaultProxy {
        addr,
        shared,
        accept,
    }
}

/// A fault chosen for one request, with what it needs.
enum Fault {
    Throttle,
    InternalErrorBefore,
    InternalErrorAfter,
    DropBefore,
    DropAfter,
    PartialBatch(Partial),
}

/// Serves one client connection: one request at a time, until either side
/// closes it or a drop fault does.
async fn serve_client(shared: Arc<Shared>, client: TcpStream) {
    let upstream = shared.upstream;
    relay::serve_requests(client, upstream, |request, upstream| {
        let shared = shared.clone();
        Box::pin(async move { answer(&shared, upstream, request).await })
    })
    .await;
}

/// What goes back to the client for `request`; `None` closes the
/// connection instead.
async fn answer(shared: &Shared, upstream: &mut Upstream, request: &Message) -> Option<Vec<u8>> {
    bump(&shared.counters.requests);
    *shared
        .methods
        .lock()
        .unwrap()
        .entry(request.method().to_string())
        .or_default() += 1;
    let latency = *shared.latency.lock().unwrap();
    if let Some(latency) = latency {
        tokio::time::sleep(latency.base + latency.of(request.body.len())).await;
    }
    let counters = &shared.counters;
    if shared.s3 && !shared.within_rates(request) {
        bump(&counters.throttled);
        return Some(relay::s3_error_answer(
            503,
            "SlowDown",
            "Please reduce your request rate. (the prefix's rate, modelled by fault_proxy)",
        ));
    }
    let head_request = request.method() == "HEAD";
    match shared.choose(request) {
        None => match forward(shared, upstream, &request.raw, head_request).await {
            Ok(response) => {
                if let Some(latency) = latency {
                    tokio::time::sleep(latency.of(response.body.len())).await;
                }
                Some(response.raw)
            }
            Err(error) => Some(upstream_error(shared, &error)),
        },
        Some(Fault::Throttle) if shared.s3 => {
            bump(&counters.throttled);
            Some(relay::s3_error_answer(
                503,
                "SlowDown",
                "Please reduce your request rate. (injected by fault_proxy)",
            ))
        }
        Some(Fault::Throttle) => {
            bump(&counters.throttled);
            Some(error_answer(
                400,
                "ProvisionedThroughputExceededException",
                "The level of configured provisioned throughput for the table was exceeded. \
                 Consider increasing your provisioning level with the UpdateTable API. \
                 (injected by fault_proxy)",
            ))
        }
        Some(Fault::InternalErrorBefore) => {
            bump(&counters.internal_errors_before);
            Some(internal_error(shared.s3))
        }
        Some(Fault::InternalErrorAfter) => {
            match forward(shared, upstream, &request.raw, head_request).await {
                Ok(_) => {
                    bump(&counters.internal_errors_after);
                    Some(internal_error(shared.s3))
                }
                Err(error) => Some(upstream_error(shared, &error)),
            }
        }
        Some(Fault::DropBefore) => {
            bump(&counters.dropped_before);
            None
        }
        Some(Fault::DropAfter) => {
            match forward(shared, upstream, &request.raw, head_request).await {
                Ok(_) => {
                    bump(&counters.dropped_after);
                    None
                }
                Err(error) => Some(upstream_error(shared, &error)),
            }
        }
        Some(Fault::PartialBatch(partial)) => {
            let forwarded = request.rebuild(&partial.forwarded_body);
            match forward(shared, upstream, &forwarded, head_request).await {
                Ok(response) => match merge_unprocessed(&partial, &response) {
                    Ok(Some(merged)) => {
                        bump(&counters.partial_batches);
                        Some(merged)
                    }
                    // The upstream refused the smaller batch: let the client see why.
                    Ok(None) => Some(response.raw),
                    Err(error) => Some(upstream_error(shared, &error)),
                },
                Err(error) => Some(upstream_error(shared, &error)),
            }
        }
    }
}

/// Relays `request` (raw bytes) and counts it forwarded once answered.
async fn forward(
    shared: &Shared,
    upstream: &mut Upstream,
    request: &[u8],
    head_request: bool,
) -> Result<Message, String> {
    let response = upstream.exchange(request, head_request).await?;
    bump(&shared.counters.forwarded);
    Ok(response)
}

/// A 502 for a request the upstream did not answer; counts it.
fn upstream_error(shared: &Shared, error: &str) -> Vec<u8> {
    bump(&shared.counters.upstream_errors);
    bad_gateway("fault_proxy", error)
}

impl Shared {
    /// False when `request` is past its prefix's rate ([`PrefixRates`]).
    fn within_rates(&self, request: &Message) -> bool {
        let mut rates = self.rates.lock().unwrap();
        match (rates.as_mut(), s3_prefix(request)) {
            (Some(limits), Some((prefix, write))) => limits.take(prefix, write),
            _ => true,
        }
    }

    /// Decides whether `request` gets a fault, and which.
    fn choose(&self, request: &Message) -> Option<Fault> {
        if !self.enabled.load(Ordering::SeqCst) {
            return None;
        }
        let rate = f64::from_bits(self.rate.load(Ordering::SeqCst));
        let kinds = self.kinds.lock().unwrap().clone();
        let mut rng = self.rng.lock().unwrap();
        // Draw even when the rate is 0 or 1, so one seed gives one sequence.
        if rng.f64() >= rate {
            return None;
        }

        // A batch can only be split if it holds two requests or more.
        let op = match request.operation() {
            Some("BatchWriteItem") => Some(BatchOp::Write),
            Some("BatchGetItem") => Some(BatchOp::Get),
            _ => None,
        };
        let batch = op.and_then(|op| {
            let body: Value = serde_json::from_slice(&request.body).ok()?;
            (batch_entries(op, &body).len() >= 2).then_some((op, body))
        });

        let candidates: Vec<FaultKind> = kinds
            .into_iter()
            .filter(|kind| *kind != FaultKind::PartialBatch || batch.is_some())
            .collect();
        let total: u32 = candidates.iter().map(|kind| kind.weight()).sum();
        if total == 0 {
            return None;
        }
        let mut pick = rng.u32(0..total);
        let kind = candidates
            .into_iter()
            .find(|kind| {
                if pick < kind.weight() {
                    true
                } else {
                    pick -= kind.weight();
                    false
                }
            })
            .expect("pick < total weight");
        Some(match kind {
            FaultKind::Throttle => Fault::Throttle,
            FaultKind::InternalErrorBefore => Fault::InternalErrorBefore,
            FaultKind::InternalErrorAfter => Fault::InternalErrorAfter,
            FaultKind::DropBefore => Fault::DropBefore,
            FaultKind::DropAfter => Fault::DropAfter,
            FaultKind::PartialBatch => {
                let (op, body) = batch.expect("only a splittable batch allows PartialBatch");
                Fault::PartialBatch(random_split(op, body, &mut rng))
            }
        })
    }
}

/// DynamoDB's (or S3's) 500 answer.
fn internal_error(s3: bool) -> Vec<u8> {
    if s3 {
        return relay::s3_error_answer(
            500,
            "InternalError",
            "We encountered an internal error. (injected by fault_proxy)",
        );
    }
    error_answer(
        500,
        "InternalServerError",
        "Internal server error (injected by fault_proxy)",
    )
}

/// Splits a batch at random into a non-empty proper subset to forward and the
/// rest to hold back.
fn random_split(op: BatchOp, body: Value, rng: &mut fastrand::Rng) -> Partial {
    let entries = batch_entries(op, &body);
    let n = entries.len();
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let keep_count = rng.usize(1..n); // 1..=n-1: never none, never all
    let keep: HashSet<(String, usize)> = order[..keep_count]
        .iter()
        .map(|&i| entries[i].clone())
        .collect();
    split_batch(op, body, &keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(start: &str) -> Message {
        Message {
            start: start.into(),
            headers: Vec::new(),
            raw: Vec::new(),
            body: Vec::new(),
            read_to_eof: false,
        }
    }

    #[test]
    fn an_s3_request_counts_against_its_keys_prefix() {
        let cases = [
            (
                "PUT /media/docs/a%2Fb/01J HTTP/1.1",
                Some(("media/docs/a%2Fb", true)),
            ),
            (
                "PUT /media/docs/x/01J?partNumber=2&uploadId=u HTTP/1.1",
                Some(("media/docs/x", true)),
            ),
            (
                "GET /media/docs/x/01J HTTP/1.1",
                Some(("media/docs/x", false)),
            ),
            ("HEAD /media/top HTTP/1.1", Some(("media/", false))),
            (
                "DELETE /media/docs/x/01J HTTP/1.1",
                Some(("media/docs/x", true)),
            ),
            (
                "GET /media?list-type=2&prefix=docs%2Fx%2F HTTP/1.1",
                Some(("media/docs/x", false)),
            ),
            (
                "GET /media?prefix=docs%2fx%2fab&list-type=2 HTTP/1.1",
                Some(("media/docs/x", false)),
            ),
            ("GET /media?list-type=2 HTTP/1.1", Some(("media/", false))),
            ("GET / HTTP/1.1", None),
        ];
        for (start, expected) in cases {
            let got = s3_prefix(&request(start));
            let expected = expected.map(|(p, w)| (p.to_string(), w));
            assert_eq!(got, expected, "{start}");
        }
    }

    #[test]
    fn a_prefix_gets_its_burst_then_its_rate_and_others_their_own() {
        let mut limits = PrefixLimits {
            rates: PrefixRates {
                writes_per_s: 10.0,
                reads_per_s: 1_000.0,
                burst_s: 1.0,
            },
            buckets: std::collections::HashMap::new(),
        };
        let taken = (0..15)
            .filter(|_| limits.take("b/hot".into(), true))
            .count();
        assert_eq!(taken, 10, "a second's worth of burst, then refused");
        assert!(
            limits.take("b/cold".into(), true),
            "another prefix has its own"
        );
        assert!(limits.take("b/hot".into(), false), "reads have their own");
        std::thread::sleep(std::time::Duration::from_millis(250));
        let refilled = (0..15)
            .filter(|_| limits.take("b/hot".into(), true))
            .count();
        // At 10 a second: at least two after 250 ms, never past the burst.
        assert!(
            (2..=10).contains(&refilled),
            "{refilled} after 250 ms at 10/s"
        );
    }
}
