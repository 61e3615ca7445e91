//! The size oracle: the server decides. Items of every type, padded by
//! core's `item_size` to exactly 409,600 bytes, must be accepted; one byte
//! more must be refused by DynamoDB Local (dynoxide counts some numbers a
//! byte smaller, so it may accept that byte, but only for items with
//! numbers). This confirms every size vector in `tests/vectors/sizes.json`
//! against the server, and thousands of generated items besides.

mod common;
use dynaslice_testing::dynamodb_json as core_common;
use dynaslice_testing::generate;

use aws_sdk_dynamodb::Client;
use dynaslice_core::{AttributeValue, Item, KeyType, MAX_ITEM_BYTES, item_size, value_size};
use dynaslice_host::item_to_sdk;
use futures::StreamExt;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};

use common::{ServerKind, client, server_kind, table_name};

/// How many generated items (each written twice: exact and one byte over).
const GENERATED: usize = 2_000;

/// The attribute that pads an item to a size.
const PAD: &str = "zz_oracle_pad";

/// `item` with a `pad` string making it exactly `size` bytes by core's count.
fn padded(item: &Item, size: usize) -> Option<Item> {
    let mut item = item.clone();
    item.remove(PAD);
    let base = item_size(&item) + PAD.len();
    let fill = size.checked_sub(base)?;
    item.insert(PAD.into(), AttributeValue::S("p".repeat(fill)));
    debug_assert_eq!(item_size(&item), size);
    Some(item)
}

/// Bytes DynamoDB Local counts fewer than core for `value`: one for each
/// negative number of 20 base-100 pairs (core: 20 + 1 + 1 = 22 bytes,
/// DynamoDB Local: 21; the known disagreement recorded by the wasm
/// package's interop test; core keeps the larger count, safe everywhere).
fn dynamodb_local_discount(value: &AttributeValue) -> usize {
    let negative_full = |n: &String| {
        n.trim_start().starts_with('-') && value_size(&AttributeValue::N(n.clone())) == 22
    };
    match value {
        AttributeValue::N(n) => usize::from(negative_full(n)),
        AttributeValue::Ns(set) => set.iter().filter(|n| negative_full(n)).count(),
        AttributeValue::L(list) => list.iter().map(dynamodb_local_discount).sum(),
        AttributeValue::M(map) => map.values().map(dynamodb_local_discount).sum(),
        _ => 0,
    }
}

fn has_number(value: &AttributeValue) -> bool {
    match value {
        AttributeValue::N(_) | AttributeValue::Ns(_) => true,
        AttributeValue::L(list) => list.iter().any(has_number),
        AttributeValue::M(map) => map.values().any(has_number),
        _ => false,
    }
}

/// What the server said about one item.
#[derive(Debug)]
enum Verdict {
    Accepted,
    TooLarge,
    Other(#[expect(dead_code, reason = "read through Debug in failure messages")] String),
}

async fn try_put(client: &Client, table: &str, item: Item) -> Verdict {
    match client
        .put_item()
        .table_name(table)
        .set_item(Some(item_to_sdk(item)))
        .send()
        .await
    {
        Ok(_) => Verdict::Accepted,
        Err(e) => {
            let message = aws_sdk_dynamodb::error::DisplayErrorContext(&e).to_string();
            if message.contains("size has exceeded the maximum allowed size")
                || message.contains("Item size")
            {
                Verdict::TooLarge
            } else {
                Verdict::Other(message)
            }
        }
    }
}

/// Writes each case exact and one byte over; returns the failures, named.
async fn check(client: &Client, table: &str, cases: Vec<(String, Item)>) -> Vec<String> {
    let checks = cases.into_iter().map(|(name, item)| async move {
        // On DynamoDB Local, pad by its own count so the boundary is exact there too.
        let discount = match server_kind() {
            ServerKind::DynamoDbLocal => item.values().map(dynamodb_local_discount).sum(),
            ServerKind::Embedded => 0,
        };
        let Some(exact) = padded(&item, MAX_ITEM_BYTES + discount) else {
            // Already at or over the limit with no room for a pad: the
            // server must agree with core's count of the item as it is.
            let size = item_size(&item);
            return match (try_put(client, table, item).await, size <= MAX_ITEM_BYTES) {
                (Verdict::Accepted, true) | (Verdict::TooLarge, false) => None,
                (other, _) => Some(format!("{name}: {size} bytes: server said {other:?}")),
            };
        };
        let over =
            padded(&item, MAX_ITEM_BYTES + discount + 1).expect("one byte more fits the pad");
        let numbers = item.values().any(has_number);
        match try_put(client, table, exact).await {
            Verdict::Accepted => {}
            other => return Some(format!("{name}: exactly 409600 bytes refused: {other:?}")),
        }
        match (try_put(client, table, over).await, server_kind()) {
            (Verdict::TooLarge, _) => None,
            (Verdict::Accepted, ServerKind::Embedded) if numbers => None,
            (other, _) => Some(format!(
                "{name}: 409601 bytes not refused as too large: {other:?}"
            )),
        }
    });
    futures::stream::iter(checks)
        .buffer_unordered(8)
        .filter_map(|failure| async move { failure })
        .collect()
        .await
}

async fn oracle_table(client: &Client, key_type: dynaslice_core::KeyType) -> String {
    let table = table_name("oracle");
    let config = dynaslice_host::TableConfig::chunk_table(
        &table,
        dynaslice_core::KeySchema::partition("pk", key_type),
    );
    dynaslice_host::create_tables(client, &config)
        .await
        .expect("table");
    table
}

#[tokio::test(flavor = "multi_thread")]
async fn every_size_vector_is_exact_on_the_server() {
    let client = client();
    let (strings, binaries) = (
        oracle_table(&client, KeyType::S).await,
        oracle_table(&client, KeyType::B).await,
    );
    let vectors = core_common::load_vectors("sizes.json", "dynaslice-size-vectors/1");
    let (mut cases, mut binary_keyed) = (Vec::new(), Vec::new());
    for (i, case) in vectors["items"]
        .as_array()
        .expect("items")
        .iter()
        .enumerate()
    {
        let mut item = core_common::item(&case["item"]);
        let name = case["name"].as_str().unwrap_or("?").to_string();
        // Vectors about keys bring their own `pk`; the rest get one.
        match item.get("pk") {
            Some(AttributeValue::B(_)) => binary_keyed.push((name, item)),
            Some(_) => cases.push((name, item)),
            None => {
                item.insert("pk".into(), AttributeValue::S(format!("item-{i}")));
                cases.push((name, item));
            }
        }
    }
    for (i, case) in vectors["numbers"]
        .as_array()
        .expect("numbers")
        .iter()
        .enumerate()
    {
        let text = case["text"].as_str().expect("text");
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S(format!("number-{i}")));
        item.insert("n".into(), AttributeValue::N(text.into()));
        cases.push((format!("number {text}"), item));
    }
    let total = cases.len() + binary_keyed.len();
    assert_eq!(total, 73 + 61, "every item and number vector is checked");
    let mut failures = check(&client, &strings, cases).await;
    failures.extend(check(&client, &binaries, binary_keyed).await);
    assert!(
        failures.is_empty(),
        "{} of {total} vectors disagree with the server:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn thousands_of_generated_items_are_exact_on_the_server() {
    let client = client();
    let table = oracle_table(&client, KeyType::S).await;
    let mut runner = TestRunner::new(Config {
        rng_seed: proptest::test_runner::RngSeed::Fixed(409_600),
        ..Config::default()
    });
    let strategy = proptest::collection::btree_map("[a-zA-Z0-9_éü]{1,8}", generate::value(), 1..12);
    let cases: Vec<(String, Item)> = (0..GENERATED)
        .map(|i| {
            let mut item: Item = strategy.new_tree(&mut runner).expect("generated").current();
            item.remove("pk");
            item.remove(PAD);
            item.insert("pk".into(), AttributeValue::S(format!("gen-{i}-ключ")));
            (format!("generated #{i}: {item:?}"), item)
        })
        .collect();
    let failures = check(&client, &table, cases).await;
    assert!(
        failures.is_empty(),
        "{} of {GENERATED} items disagree with the server:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
