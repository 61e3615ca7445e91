//! `query` against the embedded store and DynamoDB Local: in an item
//! collection a raw Query of a customer returns the chunk items beside the
//! orders; dynaslice's yields exactly the customer's items, whole, in sort
//! key order, through every page.

mod common;

use aws_sdk_dynamodb::types::AttributeValue as Sdk;
use dynaslice_core::{AttributeValue, Item};
use dynaslice_host::{LayoutKind, PutOptions, Query, QueryOptions};

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.into())
}

fn entry(pk: &str, sk: &str, body: usize, seed: u64) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), s(pk));
    item.insert("sk".into(), s(sk));
    item.insert("total".into(), AttributeValue::N(format!("{seed}.5")));
    item.insert("body".into(), AttributeValue::B(common::noise(seed, body)));
    item
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_of_an_item_collection_yields_the_users_items_whole_and_no_chunk() {
    let client = common::client();
    let table = common::fresh_table(&client, "query", LayoutKind::ItemCollection).await;
    let customer = vec![
        entry("CUSTOMER#1", "ORDER#1", 1_500_000, 1),
        entry("CUSTOMER#1", "ORDER#2", 2_000, 2),
        entry("CUSTOMER#1", "ORDER#3", 900_000, 3),
        entry("CUSTOMER#1", "PROFILE", 500, 4),
    ];
    let other = entry("CUSTOMER#2", "ORDER#1", 700_000, 5);
    for item in customer.iter().chain([&other]) {
        dynaslice_host::put(&client, &table, item, &PutOptions::default(), &())
            .await
            .unwrap();
    }

    // What a raw Query of the customer returns, page by page: the chunks too.
    let mut raw_count = 0;
    let mut start = None;
    loop {
        let page = client
            .query()
            .table_name(&table.table)
            .key_condition_expression("pk = :p")
            .expression_attribute_values(":p", Sdk::S("CUSTOMER#1".into()))
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        raw_count += page.items().len();
        match page.last_evaluated_key {
            Some(key) => start = Some(key),
            None => break,
        }
    }
    assert!(
        raw_count > customer.len(),
        "{raw_count} items: chunks beside the orders"
    );

    let run = |key_condition: &str, values: &[(&str, &str)], limit: Option<u32>| {
        let query = Query {
            table: table.table.clone(),
            key_condition: Some(key_condition.into()),
            values: values.iter().map(|(k, v)| (k.to_string(), s(v))).collect(),
            limit,
            forward: true,
            ..Query::default()
        };
        let (client, table) = (client.clone(), table.clone());
        async move {
            let mut items = Vec::new();
            let outcome =
                dynaslice_host::query(&client, &table, query, &QueryOptions::default(), |item| {
                    items.push(item);
                    Ok(())
                })
                .await
                .unwrap();
            (outcome, items)
        }
    };
    let (outcome, items) = run("pk = :p", &[(":p", "CUSTOMER#1")], None).await;
    assert_eq!(
        items, customer,
        "exactly the customer's items, whole, in order"
    );
    assert_eq!(outcome.chunks_skipped as usize, raw_count - customer.len());
    assert_eq!(outcome.virtual_items, 2);
    println!(
        "query of CUSTOMER#1: a raw Query returns {raw_count} items, dynaslice's {} ({} chunk items skipped)",
        outcome.items, outcome.chunks_skipped
    );

    let orders = [(":p", "CUSTOMER#1"), (":o", "ORDER")];
    let (_, items) = run("pk = :p AND begins_with(sk, :o)", &orders, None).await;
    assert_eq!(items, customer[..3].to_vec());
    // Pages of two evaluated items: the orders still come whole, in order.
    let (outcome, items) = run("pk = :p AND begins_with(sk, :o)", &orders, Some(2)).await;
    assert_eq!(items, customer[..3].to_vec());
    assert!(outcome.pages >= 3, "{} pages", outcome.pages);

    // Lazy: parents as stored, no chunk read.
    let query = Query {
        table: table.table.clone(),
        key_condition: Some("pk = :p".into()),
        values: [(":p".to_string(), s("CUSTOMER#2"))].into(),
        forward: true,
        ..Query::default()
    };
    let lazy = QueryOptions {
        lazy: true,
        ..QueryOptions::default()
    };
    let mut parents = Vec::new();
    dynaslice_host::query(&client, &table, query, &lazy, |item| {
        parents.push(item);
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(parents.len(), 1);
    assert!(parents[0].contains_key("_ds") && !parents[0].contains_key("body"));
}
