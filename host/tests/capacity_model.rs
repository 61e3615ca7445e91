//! The capacity model (`support/capacity_model.rs`) itself, in front of the
//! test server: it meters as DynamoDB's rules say (and as the server reports,
//! where it reports consumed capacity), throttles a hot key at the stated
//! rate, lets a spread workload reach the table's limit and not a
//! partition's, hands back exactly the part of a batch over the limit, and in
//! wait mode delays instead of refusing.
//!
//! Small rates keep the tests short. Nothing asserts a speed: counts are
//! checked against the time the test measured around them (an upper bound
//! that a slow machine only loosens), and lower bounds on elapsed time are
//! ones the model enforces.

use dynaslice_testing::capacity_model;
mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue as Sdk, BillingMode, KeySchemaElement, KeyType,
    KeysAndAttributes, Put, PutRequest, ReturnConsumedCapacity, ScalarAttributeType,
    TransactGetItem, TransactWriteItem, WriteRequest,
};
use capacity_model::{CapacityModel, Latency, Limit, Mode, Model};
use dynaslice_core::{AttributeValue, Item, item_size};
use dynaslice_host::local_client;

use common::{ServerKind, endpoint, server_kind, table_name};

fn upstream() -> SocketAddr {
    endpoint()
        .trim_start_matches("http://")
        .parse()
        .expect("an http://ip:port endpoint")
}

/// Limits so high they never bind.
const UNLIMITED: Limit = limit(1e9, 1e9);

/// `write_per_s` and `read_per_s` units a second with one second of burst,
/// so that a test of a few seconds sees the rate.
const fn limit(write_per_s: f64, read_per_s: f64) -> Limit {
    Limit {
        write_per_s,
        read_per_s,
        burst_s: 1.0,
    }
}

fn model(partition: Limit, table: Limit, mode: Mode) -> Model {
    Model {
        partition,
        table,
        mode,
        latency: Latency::NONE,
    }
}

async fn start(model: Model) -> (CapacityModel, Client) {
    let proxy = capacity_model::start(upstream(), model).await;
    let client = local_client(&proxy.endpoint());
    (proxy, client)
}

/// Creates a table `pk` (S), with `sk` (S) if `sorted`; returns its name.
async fn create_table(client: &Client, sorted: bool) -> String {
    let name = table_name("capacity");
    let mut request = client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest);
    let keys: &[(&str, KeyType)] = if sorted {
        &[("pk", KeyType::Hash), ("sk", KeyType::Range)]
    } else {
        &[("pk", KeyType::Hash)]
    };
    for (attribute, kind) in keys {
        request = request
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(*attribute)
                    .key_type(kind.clone())
                    .build()
                    .expect("key schema"),
            )
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(*attribute)
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .expect("attribute definition"),
            );
    }
    request.send().await.expect("table created");
    name
}

/// An item under `pk` (and `sk`) of exactly `size` bytes by DynamoDB's rules.
fn item_of_size(pk: &str, sk: Option<&str>, size: usize) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S(pk.into()));
    if let Some(sk) = sk {
        item.insert("sk".into(), AttributeValue::S(sk.into()));
    }
    let overhead = item_size(&item) + "data".len();
    item.insert("data".into(), AttributeValue::B(vec![7; size - overhead]));
    assert_eq!(item_size(&item), size);
    item
}

fn sdk_item(item: &Item) -> std::collections::HashMap<String, Sdk> {
    dynaslice_host::item_to_sdk(item.clone())
}

fn sdk_key(pk: &str, sk: Option<&str>) -> std::collections::HashMap<String, Sdk> {
    let mut key = std::collections::HashMap::from([("pk".to_string(), Sdk::S(pk.into()))]);
    if let Some(sk) = sk {
        key.insert("sk".to_string(), Sdk::S(sk.into()));
    }
    key
}

/// A strongly consistent read of `keys`, for BatchGetItem.
fn consistent_keys(keys: Vec<std::collections::HashMap<String, Sdk>>) -> KeysAndAttributes {
    KeysAndAttributes::builder()
        .set_keys(Some(keys))
        .consistent_read(true)
        .build()
        .expect("keys")
}

async fn put(client: &Client, table: &str, item: &Item) -> Result<(), String> {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(sdk_item(item)))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| e.code().unwrap_or("no code").to_string())
}

/// Does `table` hold `pk` (asked of the server directly, around the model)?
async fn stored(table: &str, pk: &str, sk: Option<&str>) -> bool {
    common::client()
        .get_item()
        .table_name(table)
        .set_key(Some(sdk_key(pk, sk)))
        .consistent_read(true)
        .send()
        .await
        .expect("direct GetItem")
        .item
        .is_some()
}

/// A hot key: puts of 2 write units each to one key, as fast as one client
/// sends them, against a partition limit of 20 write units per second with
/// one second of burst. What gets in stays within rate x time + burst, the
/// rest is refused with ProvisionedThroughputExceededException, and every
/// admitted put is metered at exactly its units.
#[tokio::test]
async fn a_hot_key_is_throttled_at_the_partition_rate() {
    let partition = limit(20.0, 60.0);
    let (proxy, client) = start(model(partition, UNLIMITED, Mode::Throttle)).await;
    let table = create_table(&client, false).await;
    let item = item_of_size("hot", None, 1_500); // 2 write units
    let before = proxy.counts();

    let started = Instant::now();
    let (mut ok, mut refused) = (0u64, 0u64);
    while started.elapsed() < Duration::from_secs(2) {
        match put(&client, &table, &item).await {
            Ok(()) => ok += 1,
            Err(code) => {
                assert_eq!(code, "ProvisionedThroughputExceededException");
                refused += 1;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let counts = proxy.counts().since(&before);

    let admitted_units = ok * 2;
    let most = partition.write_per_s * elapsed + partition.write_per_s * partition.burst_s;
    assert!(
        admitted_units as f64 <= most,
        "{admitted_units} units admitted in {elapsed:.2} s, at most {most:.0}"
    );
    // One client alone keeps the bucket busy: it gets well over half.
    assert!(
        admitted_units as f64 >= most / 2.0,
        "{admitted_units} units admitted in {elapsed:.2} s, expected near {most:.0}"
    );
    assert!(refused > 0, "nothing was throttled");
    assert_eq!(counts.throttled_partition, refused);
    assert_eq!(counts.throttled_table, 0);
    assert_eq!(counts.units.write, admitted_units);
    let key = (table.clone(), r#"{"S":"hot"}"#.to_string());
    assert_eq!(counts.partitions[&key].write, admitted_units);
}

/// Many keys, each written once, by eight concurrent clients, against a
/// table limit of 60 write units per second and a partition limit of 20:
/// the table's limit binds (ThrottlingException), no partition's does, and
/// the admitted units exceed what one partition could take.
#[tokio::test]
async fn a_spread_workload_reaches_the_table_limit_not_the_partition_limit() {
    let partition = limit(20.0, 60.0);
    let table_limit = limit(60.0, 180.0);
    let (proxy, client) = start(model(partition, table_limit, Mode::Throttle)).await;
    let table = create_table(&client, false).await;
    let before = proxy.counts();

    let started = Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let (client, table) = (client.clone(), table.clone());
            tokio::spawn(async move {
                let (mut ok, mut by_code) = (0u64, std::collections::BTreeMap::new());
                let mut n = 0;
                while started.elapsed() < Duration::from_secs(2) {
                    let item = item_of_size(&format!("k{task}-{n}"), None, 1_000); // 1 unit
                    n += 1;
                    match put(&client, &table, &item).await {
                        Ok(()) => ok += 1,
                        Err(code) => *by_code.entry(code).or_insert(0u64) += 1,
                    }
                }
                (ok, by_code)
            })
        })
        .collect();
    let mut ok = 0;
    let mut codes = std::collections::BTreeMap::new();
    for task in tasks {
        let (n, by_code) = task.await.expect("task");
        ok += n;
        for (code, count) in by_code {
            *codes.entry(code).or_insert(0) += count;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let counts = proxy.counts().since(&before);

    let most = table_limit.write_per_s * (elapsed + table_limit.burst_s);
    let one_partition = partition.write_per_s * (elapsed + partition.burst_s);
    assert!(
        ok as f64 <= most,
        "{ok} units in {elapsed:.2} s, at most {most:.0}"
    );
    assert!(
        ok as f64 > 1.5 * one_partition,
        "{ok} units in {elapsed:.2} s: not past one partition's {one_partition:.0}"
    );
    assert_eq!(codes.keys().collect::<Vec<_>>(), ["ThrottlingException"]);
    assert_eq!(counts.throttled_table, codes["ThrottlingException"]);
    assert_eq!(counts.throttled_partition, 0);
    assert_eq!(counts.units.write, ok);
    assert!(counts.partitions.values().all(|u| u.write == 1));
}

/// A BatchWriteItem over the table's limit: the items that fit, in order,
/// are written; exactly the rest come back as UnprocessedItems. With no
/// capacity at all the batch is refused. The same for BatchGetItem keys.
#[tokio::test]
async fn a_batch_over_the_limit_hands_back_exactly_the_items_over_it() {
    // 10 write units of burst; items of 3 units: three fit, two do not.
    let table_limit = limit(10.0, 4.0);
    let (proxy, client) = start(model(UNLIMITED, table_limit, Mode::Throttle)).await;
    let table = create_table(&client, false).await;
    let requests: Vec<WriteRequest> = (0..5)
        .map(|i| {
            let item = item_of_size(&format!("b{i}"), None, 3_000);
            WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(sdk_item(&item)))
                        .build()
                        .expect("put request"),
                )
                .build()
        })
        .collect();
    let before = proxy.counts();
    let output = client
        .batch_write_item()
        .request_items(&table, requests.clone())
        .send()
        .await
        .expect("a partial batch is a success");
    let unprocessed = output.unprocessed_items.unwrap_or_default();
    let held: Vec<String> = unprocessed
        .get(&table)
        .into_iter()
        .flatten()
        .map(|r| match r.put_request().and_then(|p| p.item().get("pk")) {
            Some(Sdk::S(pk)) => pk.clone(),
            other => panic!("unprocessed request without pk: {other:?}"),
        })
        .collect();
    assert_eq!(held, ["b3", "b4"]);
    for (i, expected) in [true, true, true, false, false].into_iter().enumerate() {
        assert_eq!(
            stored(&table, &format!("b{i}"), None).await,
            expected,
            "b{i}"
        );
    }
    let counts = proxy.counts().since(&before);
    assert_eq!(counts.partial_batches, 1);
    assert_eq!(counts.unprocessed, 2);
    assert_eq!(counts.units.write, 9);

    // No capacity at all: the whole batch is refused.
    proxy.empty_buckets();
    let error = client
        .batch_write_item()
        .request_items(&table, requests[3..].to_vec())
        .send()
        .await
        .expect_err("an empty bucket refuses the batch");
    assert_eq!(error.code(), Some("ProvisionedThroughputExceededException"));

    // Reads: 4 read units of burst, strongly consistent reads of 3,000-byte
    // items cost 1 unit each: four keys of six fit.
    proxy.fill_buckets();
    // Six keys: three stored items and three missing ones (a missing item
    // costs the minimum, one unit).
    let six: Vec<_> = [0, 1, 2, 5, 6, 7]
        .iter()
        .map(|i| sdk_key(&format!("b{i}"), None))
        .collect();
    let output = client
        .batch_get_item()
        .request_items(&table, consistent_keys(six.clone()))
        .send()
        .await
        .expect("a partial batch get is a success");
    let returned = output
        .responses
        .unwrap_or_default()
        .remove(&table)
        .unwrap_or_default();
    assert_eq!(returned.len(), 3, "the three stored items are read");
    let held: Vec<_> = output
        .unprocessed_keys
        .unwrap_or_default()
        .remove(&table)
        .map(|k| k.keys)
        .unwrap_or_default();
    assert_eq!(held, six[4..].to_vec());
}

/// TransactWriteItems and TransactGetItems cost twice what the same items
/// cost alone, and a write of the larger of before and after; a failed
/// condition still consumes.
#[tokio::test]
async fn transactions_cost_double() {
    let (proxy, client) = start(model(UNLIMITED, UNLIMITED, Mode::Wait)).await;
    let table = create_table(&client, false).await;
    let a = item_of_size("ta", None, 1_500); // 2 write units, 1 read unit
    let b = item_of_size("tb", None, 5_000); // 5 write units, 2 read units

    let before = proxy.counts();
    let put = |item: &Item| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&table)
                    .set_item(Some(sdk_item(item)))
                    .build()
                    .expect("put"),
            )
            .build()
    };
    let output = client
        .transact_write_items()
        .transact_items(put(&a))
        .transact_items(put(&b))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("transaction");
    let counts = proxy.counts().since(&before);
    assert_eq!(counts.units.write, 2 * (2 + 5));
    // DynamoDB Local reports multi-action transactions wrongly (TOOLCHAIN.md).
    if server_kind() == ServerKind::Embedded {
        let reported: f64 = output
            .consumed_capacity
            .unwrap_or_default()
            .iter()
            .filter_map(|c| c.capacity_units)
            .sum();
        assert_eq!(reported, counts.units.write as f64);
    }

    let before = proxy.counts();
    let get = |pk: &str| {
        TransactGetItem::builder()
            .get(
                aws_sdk_dynamodb::types::Get::builder()
                    .table_name(&table)
                    .set_key(Some(sdk_key(pk, None)))
                    .build()
                    .expect("get"),
            )
            .build()
    };
    client
        .transact_get_items()
        .transact_items(get("ta"))
        .transact_items(get("tb"))
        .send()
        .await
        .expect("transactional read");
    let counts = proxy.counts().since(&before);
    assert_eq!(counts.units.read(), 2.0 * (1.0 + 2.0));

    // The same puts alone cost half; overwriting b with a smaller item costs
    // b's size (the larger), and a failed condition still consumes.
    let before = proxy.counts();
    self::put(&client, &table, &a).await.expect("put a");
    let small_b = item_of_size("tb", None, 500);
    self::put(&client, &table, &small_b).await.expect("put b");
    let failed = client
        .put_item()
        .table_name(&table)
        .set_item(Some(sdk_item(&a)))
        .condition_expression("attribute_not_exists(pk)")
        .send()
        .await
        .expect_err("a is there");
    assert_eq!(failed.code(), Some("ConditionalCheckFailedException"));
    let counts = proxy.counts().since(&before);
    assert_eq!(counts.units.write, 2 + 5 + 2);
}

/// Reads are metered per 4 KB, rounded up, per item for GetItem and
/// BatchGetItem and over the page for Query, half for eventually consistent
/// reads, and writes per 1 KB: the model's units match the rules and the
/// units the server reports (both servers report these).
#[tokio::test]
async fn reads_and_writes_are_metered_as_the_server_reports() {
    let (proxy, client) = start(model(UNLIMITED, UNLIMITED, Mode::Wait)).await;
    let table = create_table(&client, true).await;
    let sizes = [100, 4_096, 4_097, 10_000, 1_024, 1_025];
    for (i, size) in sizes.iter().enumerate() {
        let item = item_of_size("p", Some(&format!("s{i}")), *size);
        let before = proxy.counts();
        let output = client
            .put_item()
            .table_name(&table)
            .set_item(Some(sdk_item(&item)))
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .send()
            .await
            .expect("put");
        let metered = proxy.counts().since(&before).units.write;
        assert_eq!(metered, size.div_ceil(1024) as u64, "put of {size} bytes");
        if let Some(reported) = output.consumed_capacity.and_then(|c| c.capacity_units) {
            assert_eq!(reported, metered as f64, "put of {size} bytes");
        }
    }
    for (i, size) in sizes.iter().enumerate() {
        for consistent in [true, false] {
            let before = proxy.counts();
            let output = client
                .get_item()
                .table_name(&table)
                .set_key(Some(sdk_key("p", Some(&format!("s{i}")))))
                .consistent_read(consistent)
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await
                .expect("get");
            let metered = proxy.counts().since(&before).units.read();
            let units = size.div_ceil(4096) as f64;
            let expected = if consistent { units } else { units / 2.0 };
            assert_eq!(
                metered, expected,
                "get of {size} bytes, consistent {consistent}"
            );
            if let Some(reported) = output.consumed_capacity.and_then(|c| c.capacity_units) {
                assert_eq!(reported, metered, "get of {size} bytes");
            }
        }
    }

    // BatchGetItem: each item rounded up by itself.
    let before = proxy.counts();
    let keys = (0..sizes.len())
        .map(|i| sdk_key("p", Some(&format!("s{i}"))))
        .collect();
    let output = client
        .batch_get_item()
        .request_items(&table, consistent_keys(keys))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("batch get");
    let metered = proxy.counts().since(&before).units.read();
    let per_item: f64 = sizes.iter().map(|s| s.div_ceil(4096) as f64).sum();
    assert_eq!(metered, per_item);
    let reported: Option<f64> = output
        .consumed_capacity
        .map(|all| all.iter().filter_map(|c| c.capacity_units).sum());
    if let Some(reported) = reported {
        assert_eq!(reported, metered);
    }

    // Query: the page's sizes summed, then rounded up.
    let before = proxy.counts();
    let output = client
        .query()
        .table_name(&table)
        .key_condition_expression("#p = :p")
        .expression_attribute_names("#p", "pk")
        .expression_attribute_values(":p", Sdk::S("p".into()))
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("query");
    assert_eq!(output.items().len(), sizes.len());
    let counts = proxy.counts().since(&before);
    let summed = sizes.iter().sum::<usize>().div_ceil(4096) as f64;
    assert!(summed < per_item, "the sizes make the two rules differ");
    assert_eq!(counts.units.read(), summed);
    let key = (table.clone(), r#"{"S":"p"}"#.to_string());
    assert_eq!(
        counts.partitions[&key].read(),
        summed,
        "charged to partition p"
    );
    if let Some(reported) = output.consumed_capacity.and_then(|c| c.capacity_units) {
        assert_eq!(reported, summed);
    }

    // A projection saves nothing: a GetItem and a Query of the keys alone
    // are billed by the whole items (10,000 bytes: 3 units, consistent).
    let before = proxy.counts();
    let output = client
        .get_item()
        .table_name(&table)
        .set_key(Some(sdk_key("p", Some("s3"))))
        .projection_expression("pk")
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("projected get");
    assert_eq!(
        output.item().map(|i| i.len()),
        Some(1),
        "only the key came back"
    );
    assert_eq!(proxy.counts().since(&before).units.read(), 3.0);
    if let Some(reported) = output.consumed_capacity.and_then(|c| c.capacity_units) {
        assert_eq!(reported, 3.0, "the server bills it the same");
    }
    let before = proxy.counts();
    client
        .query()
        .table_name(&table)
        .key_condition_expression("#p = :p")
        .expression_attribute_names("#p", "pk")
        .expression_attribute_values(":p", Sdk::S("p".into()))
        .projection_expression("#p, sk")
        .consistent_read(true)
        .send()
        .await
        .expect("projected query");
    assert_eq!(proxy.counts().since(&before).units.read(), summed);
}

/// In wait mode nothing is refused: 40 write units to one key against 20 a
/// second with 20 of burst take at least a second, every put succeeds, and
/// the latency is added to every request.
#[tokio::test]
async fn wait_mode_delays_instead_of_refusing() {
    let partition = limit(20.0, 60.0);
    let mut settings = model(partition, UNLIMITED, Mode::Wait);
    settings.latency = Latency {
        base: Duration::from_millis(20),
        per_kib: Duration::ZERO,
    };
    let (proxy, client) = start(settings).await;
    let table = create_table(&client, false).await;
    let before = proxy.counts();
    let started = Instant::now();
    for i in 0..10 {
        let mut item = item_of_size("waiting", None, 4_000); // 4 write units
        item.insert("n".into(), AttributeValue::N(i.to_string()));
        put(&client, &table, &item).await.expect("never refused");
    }
    let elapsed = started.elapsed();
    let counts = proxy.counts().since(&before);
    assert_eq!(counts.throttled(), 0);
    assert_eq!(counts.units.write, 40);
    // (40 - 20 of burst) / 20 per second: the last put leaves its wait a
    // second after the first arrived. The latency (which the bucket refills
    // during) covers at most 10 x 20 ms of that, the rest is waiting.
    assert!(elapsed >= Duration::from_millis(1_000), "{elapsed:?}");
    assert!(
        counts.waited >= Duration::from_millis(300),
        "{:?}",
        counts.waited
    );
    assert!(
        counts.latency >= Duration::from_millis(200),
        "{:?}",
        counts.latency
    );
}
