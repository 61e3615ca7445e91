//! A loopback HTTP/1.1 proxy that injects DynamoDB faults, for tests.
//!
//! ```ignore
//! #[path = "support/fault_proxy.rs"]
//! mod fault_proxy;
//!
//! let proxy = fault_proxy::start(upstream_addr, fault_proxy::Faults { rate: 0.3, seed: 7 }).await;
//! proxy.set_enabled(false);      // set up cleanly...
//! // ... create tables through proxy.endpoint() ...
//! proxy.set_enabled(true);       // ...then let faults happen
//! // ... run the code under test, then look at proxy.counts() ...
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
//! Rewriting a body invalidates the request's SigV4 signature (it signs the
//! payload's hash); that works because neither dynoxide nor DynamoDB Local
//! checks signatures (`support_selftest.rs` proves it for both). A proxy in
//! front of real AWS could not do this.
//!
//! Without a fault the proxy relays the client's bytes and the upstream's bytes
//! unchanged (framing included, `Transfer-Encoding: chunked` too). It keeps each
//! client connection alive across requests and gives it its own upstream
//! connection, so requests on one connection reach the upstream in order and
//! concurrent connections are independent. Not supported, because the SDK does
//! not use them with DynamoDB: `Expect: 100-continue`, pipelining, upgrades.

#![allow(dead_code)] // each test file uses its own part of this module

use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// DynamoDB accepts request bodies up to 16 MB and BatchGetItem answers up to
/// 16 MB; twice that leaves room for anything a test may send while still
/// refusing a runaway message.
const MAX_BODY: usize = 32 * 1024 * 1024;

/// Far more than any SDK request's header block.
const MAX_HEAD: usize = 64 * 1024;

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
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("fault proxy: bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("fault proxy: local address");
    let shared = Arc::new(Shared {
        upstream,
        enabled: AtomicBool::new(true),
        rate: AtomicU64::new(faults.rate.clamp(0.0, 1.0).to_bits()),
        kinds: Mutex::new(FaultKind::ALL.to_vec()),
        rng: Mutex::new(fastrand::Rng::with_seed(faults.seed)),
        counters: Counters::default(),
    });
    let accept = tokio::spawn({
        let shared = shared.clone();
        async move {
            loop {
                match listener.accept().await {
                    Ok((client, _)) => {
                        tokio::spawn(serve_client(shared.clone(), client));
                    }
                    // Out of file descriptors and the like: try again shortly
                    // rather than end the proxy under a running test.
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                }
            }
        }
    });
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

/// Which batch operation a [`Partial`] splits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BatchOp {
    Write,
    Get,
}

impl BatchOp {
    /// The response field that lists what was not done.
    fn unprocessed_field(self) -> &'static str {
        match self {
            BatchOp::Write => "UnprocessedItems",
            BatchOp::Get => "UnprocessedKeys",
        }
    }
}

/// A batch split in two: the body to forward and what is held back, already in
/// the shape of the response's `UnprocessedItems` / `UnprocessedKeys`.
struct Partial {
    op: BatchOp,
    forwarded_body: Vec<u8>,
    held_back: Map<String, Value>,
}

/// Serves one client connection: one request at a time, until either side
/// closes it or a drop fault does.
async fn serve_client(shared: Arc<Shared>, client: TcpStream) {
    let _ = client.set_nodelay(true);
    let mut client = Conn::new(client);
    // Opened on the first forwarded request, kept alive with the client's connection.
    let mut upstream: Option<Conn> = None;
    loop {
        let request = match client.read_message(Framing::Request).await {
            Ok(Some(request)) => request,
            // The client closed (or sent garbage): nothing to answer.
            Ok(None) | Err(_) => return,
        };
        bump(&shared.counters.requests);
        let counters = &shared.counters;
        let head_request = request.method() == "HEAD";

        // What goes back to the client; `None` closes the connection instead.
        let answer: Option<Vec<u8>> = match shared.choose(&request) {
            None => match exchange(&shared, &mut upstream, &request.raw, head_request).await {
                Ok(response) => Some(response.raw),
                Err(error) => Some(bad_gateway(&shared, &error)),
            },
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
                Some(internal_error())
            }
            Some(Fault::InternalErrorAfter) => {
                match exchange(&shared, &mut upstream, &request.raw, head_request).await {
                    Ok(_) => {
                        bump(&counters.internal_errors_after);
                        Some(internal_error())
                    }
                    Err(error) => Some(bad_gateway(&shared, &error)),
                }
            }
            Some(Fault::DropBefore) => {
                bump(&counters.dropped_before);
                return;
            }
            Some(Fault::DropAfter) => {
                match exchange(&shared, &mut upstream, &request.raw, head_request).await {
                    Ok(_) => {
                        bump(&counters.dropped_after);
                        return;
                    }
                    Err(error) => Some(bad_gateway(&shared, &error)),
                }
            }
            Some(Fault::PartialBatch(partial)) => {
                let forwarded = request.rebuild(&partial.forwarded_body);
                match exchange(&shared, &mut upstream, &forwarded, head_request).await {
                    Ok(response) => match merge_unprocessed(&partial, &response) {
                        Ok(Some(merged)) => {
                            bump(&counters.partial_batches);
                            Some(merged)
                        }
                        // The upstream refused the smaller batch: let the client see why.
                        Ok(None) => Some(response.raw),
                        Err(error) => Some(bad_gateway(&shared, &error)),
                    },
                    Err(error) => Some(bad_gateway(&shared, &error)),
                }
            }
        };
        let Some(answer) = answer else { return };
        if client.stream.write_all(&answer).await.is_err() {
            return;
        }
        // Our own answers keep the connection open; a relayed `Connection: close`
        // (or a 502) promised the client a close, so keep the promise.
        if request.wants_close() || closes_connection(&answer) {
            let _ = client.stream.shutdown().await;
            return;
        }
    }
}

impl Shared {
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
                Fault::PartialBatch(split_batch(op, body, &mut rng))
            }
        })
    }
}

/// Every request of a batch body as (table, index within that table's list):
/// the write requests of a BatchWriteItem, the keys of a BatchGetItem.
fn batch_entries(op: BatchOp, body: &Value) -> Vec<(String, usize)> {
    let Some(items) = body.get("RequestItems").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut entries = Vec::new();
    for (table, value) in items {
        let list = match op {
            BatchOp::Write => value.as_array(),
            BatchOp::Get => value.get("Keys").and_then(Value::as_array),
        };
        let count = list.map_or(0, Vec::len);
        entries.extend((0..count).map(|i| (table.clone(), i)));
    }
    entries
}

/// Splits a batch at random into a non-empty proper subset to forward and the
/// rest to hold back. Tables left with nothing are omitted from either side,
/// as DynamoDB rejects empty request lists and never reports empty ones.
fn split_batch(op: BatchOp, mut body: Value, rng: &mut fastrand::Rng) -> Partial {
    let entries = batch_entries(op, &body);
    let n = entries.len();
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let keep_count = rng.usize(1..n); // 1..=n-1: never none, never all
    let keep: HashSet<&(String, usize)> =
        order[..keep_count].iter().map(|&i| &entries[i]).collect();

    let items = body
        .get_mut("RequestItems")
        .and_then(Value::as_object_mut)
        .expect("batch_entries found RequestItems");
    let mut forwarded = Map::new();
    let mut held_back = Map::new();
    for (table, value) in std::mem::take(items) {
        // Each side gets the table's request with its own part of the list;
        // for BatchGetItem that copies ConsistentRead, ProjectionExpression and
        // ExpressionAttributeNames to both, as DynamoDB's UnprocessedKeys does.
        let list = match op {
            BatchOp::Write => value.as_array(),
            BatchOp::Get => value.get("Keys").and_then(Value::as_array),
        }
        .cloned()
        .unwrap_or_default();
        let (mut kept, mut held) = (Vec::new(), Vec::new());
        for (i, entry) in list.into_iter().enumerate() {
            if keep.contains(&(table.clone(), i)) {
                kept.push(entry);
            } else {
                held.push(entry);
            }
        }
        let with_list = |list: Vec<Value>| match op {
            BatchOp::Write => Value::Array(list),
            BatchOp::Get => {
                let mut request = value.clone();
                request["Keys"] = Value::Array(list);
                request
            }
        };
        if !kept.is_empty() {
            forwarded.insert(table.clone(), with_list(kept));
        }
        if !held.is_empty() {
            held_back.insert(table, with_list(held));
        }
    }
    *items = forwarded;
    Partial {
        op,
        forwarded_body: serde_json::to_vec(&body).expect("JSON serialises"),
        held_back,
    }
}

/// Adds the held-back requests to the upstream's answer to the forwarded part.
/// `Ok(None)` if the upstream refused it (not a 200), so the client gets that
/// answer as it is.
fn merge_unprocessed(partial: &Partial, response: &Message) -> Result<Option<Vec<u8>>, String> {
    if response.status() != Some(200) {
        return Ok(None);
    }
    let mut answer: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("upstream's batch answer is not JSON: {e}"))?;
    let object = answer
        .as_object_mut()
        .ok_or("upstream's batch answer is not a JSON object")?;
    let unprocessed = object
        .entry(partial.op.unprocessed_field())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("upstream's unprocessed field is not an object")?;
    for (table, held) in &partial.held_back {
        match (partial.op, unprocessed.get_mut(table)) {
            (BatchOp::Write, Some(Value::Array(existing))) => {
                existing.extend(held.as_array().into_iter().flatten().cloned());
            }
            (BatchOp::Get, Some(existing)) => match existing.get_mut("Keys") {
                Some(Value::Array(keys)) => {
                    keys.extend(held["Keys"].as_array().into_iter().flatten().cloned());
                }
                _ => return Err(format!("upstream's UnprocessedKeys.{table} has no Keys")),
            },
            (BatchOp::Write, Some(_)) => {
                return Err(format!("upstream's UnprocessedItems.{table} is not a list"));
            }
            (_, None) => {
                unprocessed.insert(table.clone(), held.clone());
            }
        }
    }
    let body = serde_json::to_vec(&answer).expect("JSON serialises");
    Ok(Some(response.rebuild(&body)))
}

/// Sends `request` (raw bytes) upstream over the connection's upstream
/// connection, opening it if needed, and reads the answer.
async fn exchange(
    shared: &Shared,
    upstream: &mut Option<Conn>,
    request: &[u8],
    head_request: bool,
) -> Result<Message, String> {
    for attempt in 0..2 {
        let reused = upstream.is_some();
        if upstream.is_none() {
            let stream = TcpStream::connect(shared.upstream)
                .await
                .map_err(|e| format!("cannot connect to upstream {}: {e}", shared.upstream))?;
            let _ = stream.set_nodelay(true);
            *upstream = Some(Conn::new(stream));
        }
        let conn = upstream.as_mut().expect("connected above");
        // A kept-alive connection the upstream closed while it was idle fails
        // on the write, or ends before a single byte of answer: the request was
        // never read, so it is safe to send it once more on a new connection.
        let retry = reused && attempt == 0;
        if let Err(error) = conn.stream.write_all(request).await {
            *upstream = None;
            if retry {
                continue;
            }
            return Err(format!("cannot send to upstream: {error}"));
        }
        match conn.read_message(Framing::Response { head_request }).await {
            Ok(Some(response)) => {
                if response.wants_close() || response.read_to_eof {
                    *upstream = None;
                }
                bump(&shared.counters.forwarded);
                return Ok(response);
            }
            Ok(None) if retry => *upstream = None,
            Ok(None) => {
                *upstream = None;
                return Err("upstream closed the connection without an answer".into());
            }
            Err(error) => {
                *upstream = None;
                return Err(format!("upstream's answer is unreadable: {error}"));
            }
        }
    }
    unreachable!("the second attempt always returns")
}

/// A 502 for a request the proxy could not get answered; counts it.
fn bad_gateway(shared: &Shared, error: &str) -> Vec<u8> {
    bump(&shared.counters.upstream_errors);
    let body = format!("fault_proxy: {error}\n");
    format!(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// DynamoDB's 500 answer.
fn internal_error() -> Vec<u8> {
    error_answer(
        500,
        "InternalServerError",
        "Internal server error (injected by fault_proxy)",
    )
}

/// An answer in DynamoDB's error shape: a JSON body naming the error type,
/// with the headers the SDK reads (`x-amzn-RequestId`, `x-amz-crc32`).
fn error_answer(status: u16, error_type: &str, message: &str) -> Vec<u8> {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let reason = match status {
        400 => "Bad Request",
        500 => "Internal Server Error",
        _ => "Error",
    };
    let body = json!({
        "__type": format!("com.amazonaws.dynamodb.v20120810#{error_type}"),
        "message": message,
    })
    .to_string();
    format!(
        "HTTP/1.1 {status} {reason}\r\n\
         Content-Type: application/x-amz-json-1.0\r\n\
         x-amzn-RequestId: fault-proxy-{}\r\n\
         x-amz-crc32: {}\r\n\
         Content-Length: {}\r\n\
         \r\n\
         {body}",
        NEXT_ID.fetch_add(1, Ordering::Relaxed),
        crc32(body.as_bytes()),
        body.len()
    )
    .into_bytes()
}

/// Whether a raw answer's head says `Connection: close`.
fn closes_connection(answer: &[u8]) -> bool {
    let head_end = find(answer, b"\r\n\r\n", 0).unwrap_or(answer.len());
    String::from_utf8_lossy(&answer[..head_end])
        .split("\r\n")
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .any(|(name, value)| {
            name.trim().eq_ignore_ascii_case("connection") && has_token(value, "close")
        })
}

/// Whether a comma-separated header value lists `token` (case-insensitive).
fn has_token(value: &str, token: &str) -> bool {
    value
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// The CRC-32 (IEEE) DynamoDB sends in `x-amz-crc32`, as a decimal number, over
/// the body. Kept right on every answer we build or rewrite, since some SDKs
/// check it.
pub fn crc32(data: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut bit = 0;
            while bit < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                bit += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &byte in data {
        crc = TABLE[((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// The position of `needle` in `haystack` at or after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|i| i + from)
}

/// One HTTP/1.1 message as read from a connection.
struct Message {
    /// The request line or status line, without its CRLF.
    start: String,
    /// The header fields in order, names and values trimmed.
    headers: Vec<(String, String)>,
    /// Exactly the bytes read: head and body, with the body's framing.
    raw: Vec<u8>,
    /// The body with any chunked framing removed.
    body: Vec<u8>,
    /// The body ran to the end of the stream (no length, not chunked), so the
    /// connection is finished.
    read_to_eof: bool,
}

impl Message {
    /// The first value of header `name` (case-insensitive).
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A request's method.
    fn method(&self) -> &str {
        self.start.split(' ').next().unwrap_or("")
    }

    /// A response's status code.
    fn status(&self) -> Option<u16> {
        self.start.split(' ').nth(1)?.parse().ok()
    }

    /// The DynamoDB operation a request names in `X-Amz-Target`.
    fn operation(&self) -> Option<&str> {
        self.header("x-amz-target")?.rsplit('.').next()
    }

    /// Whether the sender will close the connection after this message:
    /// `Connection: close`, or HTTP/1.0 without `Connection: keep-alive`.
    fn wants_close(&self) -> bool {
        let connection = self.header("connection").unwrap_or("");
        let http10 = self.start.starts_with("HTTP/1.0") || self.start.ends_with("HTTP/1.0");
        has_token(connection, "close") || (http10 && !has_token(connection, "keep-alive"))
    }

    /// The same message with another body: framed by `Content-Length` (never
    /// chunked), with `x-amz-crc32` recomputed if it had one. Every other
    /// header, the signature included, stays as it was.
    fn rebuild(&self, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(body.len() + 1024);
        out.extend_from_slice(self.start.as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            let value = if name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
            {
                continue;
            } else if name.eq_ignore_ascii_case("x-amz-crc32") {
                crc32(body).to_string()
            } else {
                value.clone()
            };
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        out.extend_from_slice(body);
        out
    }
}

/// How a message's body is delimited depends on whether it is a request or a
/// response (and for a response, on the request's method).
#[derive(Clone, Copy)]
enum Framing {
    Request,
    Response { head_request: bool },
}

/// A TCP stream with the bytes read from it but not yet consumed.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn new(stream: TcpStream) -> Self {
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    /// Reads more bytes into the buffer; `false` at the end of the stream.
    async fn fill(&mut self) -> io::Result<bool> {
        self.buf.reserve(64 * 1024);
        Ok(self.stream.read_buf(&mut self.buf).await? > 0)
    }

    /// Fills the buffer to at least `len` bytes; the stream ending first is an error.
    async fn fill_to(&mut self, len: usize) -> io::Result<()> {
        if len > self.buf.len() {
            self.buf.reserve(len - self.buf.len());
        }
        while self.buf.len() < len {
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(())
    }

    /// The position of the next CRLF at or after `from`, reading as needed.
    async fn line_end(&mut self, from: usize) -> io::Result<usize> {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n", from) {
                return Ok(end);
            }
            if self.buf.len() - from > MAX_HEAD {
                return Err(invalid("line too long"));
            }
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    /// Reads one whole message. `Ok(None)` if the stream ends cleanly before
    /// its first byte (the peer closed an idle connection).
    async fn read_message(&mut self, framing: Framing) -> io::Result<Option<Message>> {
        // The head ends at the first empty line.
        let mut searched = 0;
        let head_end = loop {
            if let Some(at) = find(&self.buf, b"\r\n\r\n", searched) {
                break at + 4;
            }
            searched = self.buf.len().saturating_sub(3);
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("header block too long"));
            }
            if !self.fill().await? {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        };
        let head = std::str::from_utf8(&self.buf[..head_end - 4])
            .map_err(|_| invalid("header block is not UTF-8"))?;
        let mut lines = head.split("\r\n");
        let start = lines.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        for line in lines {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| invalid("header line without a colon"))?;
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let mut message = Message {
            start,
            headers,
            raw: Vec::new(),
            body: Vec::new(),
            read_to_eof: false,
        };

        let chunked = message
            .header("transfer-encoding")
            .is_some_and(|te| has_token(te, "chunked"));
        let length = match message.header("content-length") {
            Some(value) => Some(
                value
                    .parse::<usize>()
                    .map_err(|_| invalid("bad Content-Length"))?,
            ),
            None => None,
        };
        let no_body = match framing {
            Framing::Request => !chunked && length.is_none(),
            // RFC 9112 section 6.3: these answers never have a body.
            Framing::Response { head_request } => {
                head_request || matches!(message.status(), Some(100..=199 | 204 | 304))
            }
        };

        let mut pos = head_end;
        if no_body {
        } else if chunked {
            // Chunks: `<hex size>[;ext]\r\n<data>\r\n` ..., `0\r\n`, trailers, `\r\n`.
            loop {
                let end = self.line_end(pos).await?;
                let size_text = std::str::from_utf8(&self.buf[pos..end])
                    .map_err(|_| invalid("bad chunk size"))?;
                let size_text = size_text.split(';').next().unwrap_or("").trim();
                let size =
                    usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
                pos = end + 2;
                if size == 0 {
                    // Trailer fields up to an empty line.
                    loop {
                        let end = self.line_end(pos).await?;
                        let empty = end == pos;
                        pos = end + 2;
                        if empty {
                            break;
                        }
                    }
                    break;
                }
                if message.body.len() + size > MAX_BODY {
                    return Err(invalid("body too large"));
                }
                self.fill_to(pos + size + 2).await?;
                message.body.extend_from_slice(&self.buf[pos..pos + size]);
                if &self.buf[pos + size..pos + size + 2] != b"\r\n" {
                    return Err(invalid("chunk not followed by CRLF"));
                }
                pos += size + 2;
            }
        } else if let Some(length) = length {
            if length > MAX_BODY {
                return Err(invalid("body too large"));
            }
            self.fill_to(pos + length).await?;
            message.body = self.buf[pos..pos + length].to_vec();
            pos += length;
        } else {
            // A response with neither: its body is everything until the close.
            while self.fill().await? {
                if self.buf.len() - pos > MAX_BODY {
                    return Err(invalid("body too large"));
                }
            }
            message.body = self.buf[pos..].to_vec();
            pos = self.buf.len();
            message.read_to_eof = true;
        }
        message.raw = self.buf.drain(..pos).collect();
        Ok(Some(message))
    }
}

/// An `InvalidData` error: the peer sent something that is not HTTP/1.1.
fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}
