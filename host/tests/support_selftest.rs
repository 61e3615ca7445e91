//! Checks the integration tests' support modules against real servers:
//! `support/fault_proxy.rs` in front of dynoxide (in-process) and of DynamoDB
//! Local, and `support/dynamodb_local.rs` itself.
//!
//! Every client here has retries disabled, so each error the proxy injects
//! reaches the test as it is.

use dynaslice_testing::dynamodb_local;
use dynaslice_testing::fault_proxy;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, SharedCredentialsProvider};
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, DeleteRequest, KeySchemaElement, KeyType,
    KeysAndAttributes, PutRequest, ScalarAttributeType, WriteRequest,
};
use fault_proxy::{Counts, FaultKind, FaultProxy, Faults};
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

type Item = HashMap<String, AttributeValue>;

/// dynoxide, in memory, serving on 127.0.0.1 and a free port.
async fn start_dynoxide() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let db = dynoxide::Database::memory().unwrap();
    tokio::spawn(dynoxide::server::serve_on(listener, db));
    addr
}

/// An SDK client for `endpoint` with retries off (one attempt per call), dummy
/// credentials, and a time limit so a hung proxy fails the test instead of
/// stalling it.
fn sdk_client(endpoint: &str) -> Client {
    let sdk_config = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(SharedCredentialsProvider::new(Credentials::new(
            "dynaslice",
            "dynaslice",
            None,
            None,
            "support_selftest",
        )))
        .endpoint_url(endpoint)
        .build();
    let config = aws_sdk_dynamodb::config::Builder::from(&sdk_config)
        .retry_config(RetryConfig::disabled())
        .timeout_config(
            TimeoutConfig::builder()
                .operation_timeout(Duration::from_secs(120))
                .build(),
        )
        .build();
    Client::from_conf(config)
}

/// A table keyed by the string attribute `pk`.
async fn create_table(client: &Client, name: &str) {
    client
        .create_table()
        .table_name(name)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
}

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn key(pk: &str) -> Item {
    HashMap::from([("pk".to_string(), s(pk))])
}

/// An item with key `pk` and a random string attribute of `size` characters.
fn item(pk: &str, size: usize, rng: &mut fastrand::Rng) -> Item {
    let payload: String = std::iter::repeat_with(|| rng.alphanumeric())
        .take(size)
        .collect();
    HashMap::from([
        ("pk".to_string(), s(pk)),
        ("payload".to_string(), s(payload)),
    ])
}

fn put_request(item: Item) -> WriteRequest {
    WriteRequest::builder()
        .put_request(PutRequest::builder().set_item(Some(item)).build().unwrap())
        .build()
}

fn delete_request(key: Item) -> WriteRequest {
    WriteRequest::builder()
        .delete_request(DeleteRequest::builder().set_key(Some(key)).build().unwrap())
        .build()
}

/// The item stored under `pk`, read strongly consistently.
async fn get(client: &Client, table: &str, pk: &str) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .set_key(Some(key(pk)))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
}

async fn put(client: &Client, table: &str, item: Item) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

/// Whether a write request has taken effect in the store `direct` reads.
async fn applied(direct: &Client, table: &str, request: &WriteRequest) -> bool {
    if let Some(put) = &request.put_request {
        let AttributeValue::S(pk) = &put.item["pk"] else {
            panic!("pk is a string")
        };
        get(direct, table, pk).await.as_ref() == Some(&put.item)
    } else {
        let delete = request.delete_request.as_ref().unwrap();
        let AttributeValue::S(pk) = &delete.key["pk"] else {
            panic!("pk is a string")
        };
        get(direct, table, pk).await.is_none()
    }
}

/// Sends `sent` as one BatchWriteItem through `client` (faults on, partial
/// batches only) and checks the answer against the store: every request either
/// took effect or is listed in UnprocessedItems, never both, never neither, and
/// at least one of each. Then re-sends UnprocessedItems with faults off and
/// checks that everything took effect: the listed requests are the very ones
/// sent, in a shape the SDK sends back as it is.
async fn check_partial_batch_write(
    proxy: &FaultProxy,
    client: &Client,
    direct: &Client,
    sent: &[(String, WriteRequest)],
) {
    let mut request = client.batch_write_item();
    let mut by_table: HashMap<&str, Vec<WriteRequest>> = HashMap::new();
    for (table, write) in sent {
        by_table
            .entry(table.as_str())
            .or_default()
            .push(write.clone());
    }
    for (table, writes) in by_table {
        request = request.request_items(table, writes);
    }

    let before = proxy.counts();
    proxy.set_kinds(&[FaultKind::PartialBatch]);
    proxy.set_enabled(true);
    let answer = request.send().await.unwrap();
    proxy.set_enabled(false);
    assert_eq!(proxy.counts().partial_batches, before.partial_batches + 1);

    let unprocessed = answer.unprocessed_items.unwrap_or_default();
    let held: Vec<(String, WriteRequest)> = unprocessed
        .iter()
        .flat_map(|(table, writes)| writes.iter().map(|w| (table.clone(), w.clone())))
        .collect();
    assert!(
        !held.is_empty() && held.len() < sent.len(),
        "a partial batch holds back some but not all of {} requests, held {}",
        sent.len(),
        held.len()
    );
    for entry in &held {
        assert!(
            sent.contains(entry),
            "held back a request never sent: {entry:?}"
        );
    }
    let mut not_applied = 0;
    for (table, write) in sent {
        let done = applied(direct, table, write).await;
        let listed = held
            .iter()
            .filter(|(t, w)| t == table && w == write)
            .count();
        assert_eq!(
            listed,
            usize::from(!done),
            "{table} {write:?}: applied {done}, listed as unprocessed {listed} times"
        );
        not_applied += usize::from(!done);
    }
    assert_eq!(held.len(), not_applied);

    let retried = client
        .batch_write_item()
        .set_request_items(Some(unprocessed))
        .send()
        .await
        .unwrap();
    assert!(retried.unprocessed_items.unwrap_or_default().is_empty());
    for (table, write) in sent {
        assert!(
            applied(direct, table, write).await,
            "{table} {write:?} after the retry"
        );
    }
}

/// The counter of `kind` in `counts`.
fn count_of(kind: FaultKind, counts: &Counts) -> u64 {
    match kind {
        FaultKind::Throttle => counts.throttled,
        FaultKind::InternalErrorBefore => counts.internal_errors_before,
        FaultKind::InternalErrorAfter => counts.internal_errors_after,
        FaultKind::DropBefore => counts.dropped_before,
        FaultKind::DropAfter => counts.dropped_after,
        FaultKind::PartialBatch => counts.partial_batches,
    }
}

/// How the SDK reported a failed call.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Seen {
    Throttled,
    InternalError,
    ConnectionLost,
}

/// Classifies a failed PutItem; panics on anything the proxy never causes.
fn seen(error: &SdkError<PutItemError>) -> Seen {
    match error {
        SdkError::ServiceError(service) => {
            let status = service.raw().status().as_u16();
            if service.err().is_provisioned_throughput_exceeded_exception() {
                assert_eq!(status, 400, "throttling comes as a 400");
                Seen::Throttled
            } else if service.err().is_internal_server_error() {
                assert_eq!(status, 500, "an internal error comes as a 500");
                Seen::InternalError
            } else {
                panic!("unexpected service error: {error:?}")
            }
        }
        // The connection closed without an answer.
        SdkError::DispatchFailure(failure) => {
            assert!(!failure.is_timeout(), "a drop is not a timeout: {error:?}");
            Seen::ConnectionLost
        }
        other => panic!("unexpected SDK error: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_kind_reaches_the_sdk_as_its_error() {
    let upstream = start_dynoxide().await;
    let proxy = fault_proxy::start(upstream, Faults { rate: 1.0, seed: 1 }).await;
    let client = sdk_client(&proxy.endpoint());
    let direct = sdk_client(&format!("http://{upstream}"));
    proxy.set_enabled(false);
    create_table(&client, "faults").await;
    assert_eq!(proxy.counts().injected(), 0);
    proxy.set_enabled(true);

    let cases = [
        (FaultKind::Throttle, Seen::Throttled, false),
        (FaultKind::InternalErrorBefore, Seen::InternalError, false),
        (FaultKind::InternalErrorAfter, Seen::InternalError, true),
        (FaultKind::DropBefore, Seen::ConnectionLost, false),
        (FaultKind::DropAfter, Seen::ConnectionLost, true),
    ];
    for (i, (kind, expected, forwarded)) in cases.into_iter().enumerate() {
        proxy.set_kinds(&[kind]);
        let before = proxy.counts();
        let pk = format!("k{i}");
        let error = client
            .put_item()
            .table_name("faults")
            .set_item(Some(key(&pk)))
            .send()
            .await
            .expect_err("rate 1.0 fails every request");
        assert_eq!(seen(&error), expected, "{kind:?}: {error:?}");

        let after = proxy.counts();
        assert_eq!(after.requests, before.requests + 1, "{kind:?}");
        assert_eq!(after.injected(), before.injected() + 1, "{kind:?}");
        assert_eq!(
            count_of(kind, &after),
            count_of(kind, &before) + 1,
            "{kind:?}"
        );
        assert_eq!(
            after.forwarded,
            before.forwarded + u64::from(forwarded),
            "{kind:?}"
        );
        // The write happened exactly when the request went upstream.
        assert_eq!(
            get(&direct, "faults", &pk).await.is_some(),
            forwarded,
            "{kind:?}"
        );
    }

    // Partial batches apply to batches of two or more only: anything else passes.
    proxy.set_kinds(&[FaultKind::PartialBatch]);
    let before = proxy.counts();
    put(&client, "faults", key("single")).await;
    client
        .batch_write_item()
        .request_items("faults", vec![put_request(key("alone"))])
        .send()
        .await
        .unwrap();
    let after = proxy.counts();
    assert_eq!(after.injected(), before.injected());
    assert_eq!(after.forwarded, before.forwarded + 2);
    assert!(get(&direct, "faults", "alone").await.is_some());

    // Switched off, a rate of 1.0 injects nothing.
    proxy.set_kinds(&FaultKind::ALL);
    proxy.set_enabled(false);
    put(&client, "faults", key("off")).await;
    assert_eq!(proxy.counts().injected(), after.injected());
    assert_eq!(proxy.counts().upstream_errors, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_faults_match_the_counters_and_the_store() {
    let upstream = start_dynoxide().await;
    let proxy = fault_proxy::start(
        upstream,
        Faults {
            rate: 0.5,
            seed: 42,
        },
    )
    .await;
    let client = sdk_client(&proxy.endpoint());
    let direct = sdk_client(&format!("http://{upstream}"));
    proxy.set_enabled(false);
    create_table(&client, "mixed").await;
    let start = proxy.counts();
    proxy.set_enabled(true);

    let total = 150;
    let mut seen_counts: HashMap<Option<Seen>, u64> = HashMap::new();
    for i in 0..total {
        let result = client
            .put_item()
            .table_name("mixed")
            .set_item(Some(key(&format!("m{i}"))))
            .send()
            .await;
        *seen_counts
            .entry(result.err().map(|e| seen(&e)))
            .or_default() += 1;
    }
    proxy.set_enabled(false);
    let counts = proxy.counts();
    let count = |seen: Option<Seen>| seen_counts.get(&seen).copied().unwrap_or(0);

    assert_eq!(counts.requests - start.requests, total);
    assert_eq!(counts.partial_batches, 0, "PutItem is never split");
    assert_eq!(counts.upstream_errors, 0);
    assert_eq!(count(Some(Seen::Throttled)), counts.throttled);
    assert_eq!(
        count(Some(Seen::InternalError)),
        counts.internal_errors_before + counts.internal_errors_after
    );
    assert_eq!(
        count(Some(Seen::ConnectionLost)),
        counts.dropped_before + counts.dropped_after
    );
    assert_eq!(count(None), total - counts.injected());
    // Every kind occurs (the seed fixes the sequence), and about half fail.
    for kind in &FaultKind::ALL[..5] {
        assert!(
            count_of(*kind, &counts) > 0,
            "{kind:?} never chosen: {counts:?}"
        );
    }
    assert!(
        (total / 4..total * 3 / 4).contains(&counts.injected()),
        "{counts:?}"
    );

    // What was stored: the successes and the faults after forwarding, only.
    let stored = direct
        .scan()
        .table_name("mixed")
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .count as u64;
    assert_eq!(
        stored,
        count(None) + counts.internal_errors_after + counts.dropped_after
    );
    assert_eq!(
        counts.forwarded - start.forwarded,
        count(None) + counts.internal_errors_after + counts.dropped_after
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_batch_write_returns_exactly_what_it_held_back() {
    let upstream = start_dynoxide().await;
    let proxy = fault_proxy::start(upstream, Faults { rate: 1.0, seed: 7 }).await;
    let client = sdk_client(&proxy.endpoint());
    let direct = sdk_client(&format!("http://{upstream}"));
    proxy.set_enabled(false);
    create_table(&client, "pw_a").await;
    create_table(&client, "pw_b").await;

    let mut rng = fastrand::Rng::with_seed(1);
    for round in 0..8 {
        // Two tables, puts and deletes of items that exist, 20 requests.
        let mut sent = Vec::new();
        for (table, puts, deletes) in [("pw_a", 9, 3), ("pw_b", 5, 3)] {
            for j in 0..deletes {
                let pk = format!("r{round}-d{j}");
                put(&client, table, item(&pk, 10, &mut rng)).await;
                sent.push((table.to_string(), delete_request(key(&pk))));
            }
            for j in 0..puts {
                let pk = format!("r{round}-p{j}");
                sent.push((table.to_string(), put_request(item(&pk, 200, &mut rng))));
            }
        }
        rng.shuffle(&mut sent);
        check_partial_batch_write(&proxy, &client, &direct, &sent).await;
    }
    // Large items: 25 of about 390 KB, a body of nearly 10 MB to rewrite.
    let sent: Vec<(String, WriteRequest)> = (0..25)
        .map(|j| {
            let table = if j % 2 == 0 { "pw_a" } else { "pw_b" };
            (
                table.to_string(),
                put_request(item(&format!("big{j}"), 390_000, &mut rng)),
            )
        })
        .collect();
    check_partial_batch_write(&proxy, &client, &direct, &sent).await;
    assert_eq!(proxy.counts().partial_batches, 9);
    assert_eq!(proxy.counts().upstream_errors, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_batch_get_returns_exactly_what_it_held_back() {
    let upstream = start_dynoxide().await;
    let proxy = fault_proxy::start(
        upstream,
        Faults {
            rate: 1.0,
            seed: 11,
        },
    )
    .await;
    let client = sdk_client(&proxy.endpoint());
    proxy.set_enabled(false);
    create_table(&client, "pg_a").await;
    create_table(&client, "pg_b").await;
    let mut rng = fastrand::Rng::with_seed(2);
    let mut stored: HashMap<(String, String), Item> = HashMap::new();
    for (table, count) in [("pg_a", 10), ("pg_b", 6)] {
        for j in 0..count {
            let pk = format!("{table}-{j}");
            let mut item = item(&pk, 100, &mut rng);
            item.insert("x".to_string(), s(format!("x{j}")));
            put(&client, table, item.clone()).await;
            stored.insert((table.to_string(), pk), item);
        }
    }
    let keys = |table: &str, count: usize| -> Vec<Item> {
        (0..count).map(|j| key(&format!("{table}-{j}"))).collect()
    };
    let request_a = KeysAndAttributes::builder()
        .set_keys(Some(keys("pg_a", 10)))
        .consistent_read(true)
        .build()
        .unwrap();
    let request_b = KeysAndAttributes::builder()
        .set_keys(Some(keys("pg_b", 6)))
        .projection_expression("pk, #x")
        .expression_attribute_names("#x", "x")
        .build()
        .unwrap();
    // What each table's answer should hold: whole items from pg_a, only pk and
    // x from pg_b (which shows the projection was forwarded with the keys).
    let expected = |table: &str, pk: &str| -> Item {
        let item = stored[&(table.to_string(), pk.to_string())].clone();
        if table == "pg_a" {
            item
        } else {
            item.into_iter()
                .filter(|(name, _)| name == "pk" || name == "x")
                .collect()
        }
    };

    proxy.set_kinds(&[FaultKind::PartialBatch]);
    for round in 0..8 {
        proxy.set_enabled(true);
        let answer = client
            .batch_get_item()
            .request_items("pg_a", request_a.clone())
            .request_items("pg_b", request_b.clone())
            .send()
            .await
            .unwrap();
        proxy.set_enabled(false);
        assert_eq!(proxy.counts().partial_batches, round + 1);

        let mut got: HashSet<(String, String)> = HashSet::new();
        for (table, items) in answer.responses.unwrap_or_default() {
            for item in items {
                let AttributeValue::S(pk) = &item["pk"] else {
                    panic!("pk is a string")
                };
                assert_eq!(item, expected(&table, pk), "{table} {pk}");
                assert!(
                    got.insert((table.clone(), pk.clone())),
                    "{table} {pk} twice"
                );
            }
        }
        let unprocessed = answer.unprocessed_keys.unwrap_or_default();
        let mut held: HashSet<(String, String)> = HashSet::new();
        for (table, request) in &unprocessed {
            // The held-back keys keep their table's read options.
            let original = if table == "pg_a" {
                &request_a
            } else {
                &request_b
            };
            assert_eq!(request.consistent_read, original.consistent_read, "{table}");
            assert_eq!(
                request.projection_expression,
                original.projection_expression
            );
            assert_eq!(
                request.expression_attribute_names,
                original.expression_attribute_names
            );
            assert!(!request.keys.is_empty(), "{table}: an empty key list");
            for key in &request.keys {
                let AttributeValue::S(pk) = &key["pk"] else {
                    panic!("pk is a string")
                };
                assert!(
                    held.insert((table.clone(), pk.clone())),
                    "{table} {pk} twice"
                );
            }
        }
        assert!(
            !got.is_empty() && !held.is_empty(),
            "round {round}: {got:?} {held:?}"
        );
        assert!(got.is_disjoint(&held), "round {round}");
        let union: HashSet<(String, String)> = got.union(&held).cloned().collect();
        let all: HashSet<(String, String)> = stored.keys().cloned().collect();
        assert_eq!(union, all, "round {round}");

        // The held-back request, sent as it came, gets exactly the rest.
        let rest = client
            .batch_get_item()
            .set_request_items(Some(unprocessed))
            .send()
            .await
            .unwrap();
        let mut rest_keys = HashSet::new();
        for (table, items) in rest.responses.unwrap_or_default() {
            for item in items {
                let AttributeValue::S(pk) = &item["pk"] else {
                    panic!("pk is a string")
                };
                assert_eq!(item, expected(&table, pk));
                rest_keys.insert((table.clone(), pk.clone()));
            }
        }
        assert_eq!(rest_keys, held, "round {round}");
    }
    assert_eq!(proxy.counts().upstream_errors, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_off_concurrent_and_large_requests_pass_through() {
    let upstream = start_dynoxide().await;
    let proxy = fault_proxy::start(upstream, Faults { rate: 1.0, seed: 5 }).await;
    proxy.set_enabled(false);
    let client = sdk_client(&proxy.endpoint());
    create_table(&client, "through").await;

    // 16 concurrent writes of about 350 KB: several client connections at once.
    let mut rng = fastrand::Rng::with_seed(3);
    let items: Vec<Item> = (0..16)
        .map(|i| item(&format!("c{i}"), 350_000, &mut rng))
        .collect();
    futures::future::join_all(
        items
            .iter()
            .map(|item| put(&client, "through", item.clone())),
    )
    .await;
    // One BatchWriteItem of 25 items of about 390 KB: a body near 10 MB.
    let batch: Vec<Item> = (0..25)
        .map(|i| item(&format!("b{i}"), 390_000, &mut rng))
        .collect();
    let answer = client
        .batch_write_item()
        .request_items("through", batch.iter().cloned().map(put_request).collect())
        .send()
        .await
        .unwrap();
    assert!(answer.unprocessed_items.unwrap_or_default().is_empty());

    let everything: Vec<&Item> = items.iter().chain(&batch).collect();
    let reads = futures::future::join_all(everything.iter().map(|item| {
        let AttributeValue::S(pk) = &item["pk"] else {
            panic!("pk is a string")
        };
        get(&client, "through", pk)
    }))
    .await;
    for (item, read) in everything.iter().zip(reads) {
        assert_eq!(read.as_ref(), Some(*item));
    }
    let counts = proxy.counts();
    let calls = 1 + 16 + 1 + 41;
    assert_eq!(counts.requests, calls);
    assert_eq!(counts.forwarded, calls);
    assert_eq!(counts.injected(), 0);
    assert_eq!(counts.upstream_errors, 0);
}

/// A stand-in upstream for [`faults_off_relays_bytes_exactly`]: accepts one
/// connection, and for each expected request reads exactly its length, then
/// writes the matching canned answer; returns the bytes it read, and checks
/// that nothing follows the last request.
async fn recording_upstream(
    listener: TcpListener,
    request_lengths: Vec<usize>,
    answers: Vec<Vec<u8>>,
) -> Vec<Vec<u8>> {
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut received = Vec::new();
    for (length, answer) in request_lengths.into_iter().zip(answers) {
        let mut request = vec![0; length];
        stream.read_exact(&mut request).await.unwrap();
        received.push(request);
        stream.write_all(&answer).await.unwrap();
    }
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    assert!(
        rest.is_empty(),
        "{} unexpected bytes after the last request",
        rest.len()
    );
    received
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_off_relays_bytes_exactly() {
    let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream_addr = upstream.local_addr().unwrap();
    let proxy = fault_proxy::start(upstream_addr, Faults { rate: 1.0, seed: 9 }).await;
    proxy.set_enabled(false);

    let mut rng = fastrand::Rng::with_seed(4);
    let big_request_body: Vec<u8> = std::iter::repeat_with(|| rng.u8(..))
        .take(16 << 20)
        .collect();
    let big_answer_body: Vec<u8> = std::iter::repeat_with(|| rng.u8(..))
        .take(5 << 20)
        .collect();
    let requests: Vec<Vec<u8>> = vec![
        // Odd but valid spelling and spacing, kept as they are.
        b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\nX-AMZ-TARGET:DynamoDB_20120810.BatchWriteItem\r\n\
          content-length:   18\r\nX-Odd: a,  b\r\n\r\n{\"RequestItems\":1}"
            .to_vec(),
        // A chunked body, with an extension and a trailer.
        b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.BatchGetItem\r\n\
          Transfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{\"a\"\r\nA\r\n:1234567}\n\r\n0\r\nX-Trailer: t\r\n\r\n"
            .to_vec(),
        // 16 MB of arbitrary bytes.
        [
            format!(
                "POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\n\
                 Content-Length: {}\r\n\r\n",
                big_request_body.len()
            )
            .into_bytes(),
            big_request_body,
        ]
        .concat(),
    ];
    let answers: Vec<Vec<u8>> = vec![
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nx-amz-crc32: 1\r\n\
          Content-Length: 13\r\n\r\n{\"Answer\":0}\n"
            .to_vec(),
        // Chunked, with an extension and a trailer.
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n\
          1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: done\r\n\r\n"
            .to_vec(),
        [
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                big_answer_body.len()
            )
            .into_bytes(),
            big_answer_body,
        ]
        .concat(),
    ];
    let recorder = tokio::spawn(recording_upstream(
        upstream,
        requests.iter().map(Vec::len).collect(),
        answers.clone(),
    ));

    let exchange = async {
        // One client connection, kept alive across the three requests.
        let mut client = TcpStream::connect(proxy.addr).await.unwrap();
        for (request, answer) in requests.iter().zip(&answers) {
            client.write_all(request).await.unwrap();
            let mut got = vec![0; answer.len()];
            client.read_exact(&mut got).await.unwrap();
            assert!(got == *answer, "the answer changed on the way");
        }
        client.shutdown().await.unwrap();
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).await.unwrap();
        assert!(
            rest.is_empty(),
            "{} bytes after the last answer",
            rest.len()
        );
    };
    tokio::time::timeout(Duration::from_secs(60), exchange)
        .await
        .expect("the proxy relays every message whole");
    let received = tokio::time::timeout(Duration::from_secs(60), recorder)
        .await
        .expect("the proxy closes its upstream connection after the client's")
        .unwrap();
    assert_eq!(received.len(), requests.len());
    for (got, sent) in received.iter().zip(&requests) {
        assert!(got == sent, "a request changed on the way");
    }
    let counts = proxy.counts();
    assert_eq!((counts.requests, counts.forwarded), (3, 3));
    assert_eq!(counts.injected(), 0);
}

/// CRC-32 (IEEE), bit by bit: a second implementation to check the proxy's.
fn crc32_bitwise(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// Sends one raw request on a new connection with `Connection: close` and
/// returns the answer's head and body (framed by Content-Length).
async fn raw_call(addr: SocketAddr, target: &str, body: &str) -> (String, Vec<u8>) {
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: DynamoDB_20120810.{target}\r\nX-Amz-Date: 20250101T000000Z\r\n\
         Authorization: AWS4-HMAC-SHA256 Credential=dynaslice/20250101/us-east-1/dynamodb/aws4_request, \
         SignedHeaders=host;x-amz-date;x-amz-target, Signature=0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP head")
        + 4;
    let head = String::from_utf8(answer[..split].to_vec()).unwrap();
    let length: usize = header(&head, "content-length").unwrap().parse().unwrap();
    assert_eq!(answer.len() - split, length, "{head}");
    (head, answer[split..].to_vec())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_and_rewritten_answers_carry_a_right_crc32() {
    assert_eq!(crc32_bitwise(b"123456789"), 0xCBF4_3926);
    // The value DynamoDB Local sent for this body.
    assert_eq!(
        fault_proxy::crc32(br#"{"TableNames":["tbl"]}"#),
        3_234_564_637
    );

    let upstream = start_dynoxide().await;
    let proxy = fault_proxy::start(
        upstream,
        Faults {
            rate: 1.0,
            seed: 13,
        },
    )
    .await;
    proxy.set_enabled(false);
    create_table(&sdk_client(&proxy.endpoint()), "crc").await;
    proxy.set_enabled(true);

    let check = |head: &str, body: &[u8]| {
        let crc: u32 = header(head, "x-amz-crc32").expect(head).parse().unwrap();
        assert_eq!(crc, crc32_bitwise(body), "{head}");
    };
    proxy.set_kinds(&[FaultKind::PartialBatch]);
    let batch = r#"{"RequestItems":{"crc":[{"PutRequest":{"Item":{"pk":{"S":"a"}}}},{"PutRequest":{"Item":{"pk":{"S":"b"}}}},{"PutRequest":{"Item":{"pk":{"S":"c"}}}}]}}"#;
    let (head, body) = raw_call(proxy.addr, "BatchWriteItem", batch).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(String::from_utf8_lossy(&body).contains("UnprocessedItems"));
    check(&head, &body);
    assert_eq!(proxy.counts().partial_batches, 1);

    proxy.set_kinds(&[FaultKind::Throttle]);
    let (head, body) = raw_call(proxy.addr, "ListTables", "{}").await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    check(&head, &body);
    proxy.set_kinds(&[FaultKind::InternalErrorBefore]);
    let (head, body) = raw_call(proxy.addr, "ListTables", "{}").await;
    assert!(head.starts_with("HTTP/1.1 500"), "{head}");
    check(&head, &body);
}

#[test]
fn listening_addresses_tells_loopback_from_wildcard() {
    let loopback = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = loopback.local_addr().unwrap().port();
    let found = dynamodb_local::listening_addresses(port);
    assert_eq!(found, ["127.0.0.1"]);
    assert!(dynamodb_local::all_loopback(&found));

    let wildcard = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = wildcard.local_addr().unwrap().port();
    let found = dynamodb_local::listening_addresses(port);
    assert_eq!(found, ["0.0.0.0"]);
    assert!(!dynamodb_local::all_loopback(&found));
    assert!(!dynamodb_local::all_loopback(&[]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_local_on_loopback_behind_the_proxy() {
    let server = tokio::task::spawn_blocking(dynamodb_local::start)
        .await
        .unwrap()
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(server.endpoint, format!("http://127.0.0.1:{}", server.port));
    let addresses = server.listening_addresses();
    assert!(
        dynamodb_local::all_loopback(&addresses),
        "DynamoDB Local listens on {addresses:?}"
    );

    let proxy = fault_proxy::start(
        server.addr(),
        Faults {
            rate: 1.0,
            seed: 17,
        },
    )
    .await;
    proxy.set_enabled(false);
    let client = sdk_client(&proxy.endpoint());
    let direct = sdk_client(&server.endpoint);
    create_table(&client, "local_items").await;
    let mut rng = fastrand::Rng::with_seed(5);
    let one = item("one", 300_000, &mut rng);
    put(&client, "local_items", one.clone()).await;
    assert_eq!(get(&client, "local_items", "one").await, Some(one));
    let counts = proxy.counts();
    assert_eq!(
        (counts.requests, counts.forwarded, counts.injected()),
        (3, 3, 0)
    );

    // A rewritten body under the client's original signature is accepted.
    let sent: Vec<(String, WriteRequest)> = (0..10)
        .map(|i| {
            (
                "local_items".to_string(),
                put_request(item(&format!("batch{i}"), 1000, &mut rng)),
            )
        })
        .collect();
    check_partial_batch_write(&proxy, &client, &direct, &sent).await;
    assert_eq!(proxy.counts().upstream_errors, 0);

    // Dropping it kills it: nothing listens on its port any more.
    let port = server.port;
    drop(server);
    assert_eq!(
        dynamodb_local::listening_addresses(port),
        Vec::<String>::new()
    );
}
