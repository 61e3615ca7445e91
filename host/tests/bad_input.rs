//! Bad input gets a typed error and touches nothing: unknown tables, wrong
//! key schemas, missing or oversized keys, items over the configured
//! maximum, and stored chunks tampered with directly on the server.

mod common;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue as Sdk;
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType};
use dynaslice_host::{
    GetOptions, HostError, LayoutKind, PutOptions, TableConfig, item_from_sdk, item_to_sdk,
};

use common::{client, fresh_table, key, noise, same_item};

/// Every item of both tables of `table`, sorted: what "nothing touched" compares.
async fn snapshot(client: &Client, table: &TableConfig) -> Vec<Item> {
    let mut all = Vec::new();
    let mut tables = vec![table.table.clone()];
    if table.chunk_table != table.table {
        tables.push(table.chunk_table.clone());
    }
    for name in tables {
        let mut start = None;
        loop {
            let page = client
                .scan()
                .table_name(&name)
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .expect("scan");
            all.extend(
                page.items()
                    .iter()
                    .map(|i| item_from_sdk(i.clone()).expect("known types")),
            );
            start = page.last_evaluated_key.filter(|k| !k.is_empty());
            if start.is_none() {
                break;
            }
        }
    }
    all.sort();
    all
}

fn big(layout: LayoutKind, id: &str, len: usize) -> Item {
    let mut item = key(layout, id);
    item.insert("data".into(), AttributeValue::B(noise(len as u64, len)));
    item
}

fn plain_options() -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::new(Codec::None)),
        ..PutOptions::default()
    }
}

async fn put_err(
    client: &Client,
    table: &TableConfig,
    item: &Item,
    options: &PutOptions,
) -> HostError {
    dynaslice_host::put(client, table, item, options, &())
        .await
        .expect_err("the put must fail")
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tables_are_named() {
    let client = client();
    let error = TableConfig::discover(&client, "no-such-table")
        .await
        .expect_err("no table");
    assert_eq!(error.code(), "TABLE_NOT_FOUND");
    assert!(error.to_string().contains("no-such-table"), "{error}");
    let missing = TableConfig::chunk_table("also-missing", KeySchema::partition("pk", KeyType::S));
    let error = put_err(
        &client,
        &missing,
        &big(LayoutKind::ChunkTable, "x", 10),
        &PutOptions::default(),
    )
    .await;
    assert_eq!(error.code(), "TABLE_NOT_FOUND", "{error}");
    let error = dynaslice_host::get(
        &client,
        &missing,
        &key(LayoutKind::ChunkTable, "x"),
        &GetOptions::default(),
        &(),
    )
    .await
    .expect_err("no table");
    assert_eq!(error.code(), "TABLE_NOT_FOUND", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_keys_are_refused_before_anything_is_sent() {
    let client = client();
    let table = fresh_table(&client, "keys", LayoutKind::ItemCollection).await;
    dynaslice_host::put(
        &client,
        &table,
        &big(LayoutKind::ItemCollection, "keep", 900_000),
        &plain_options(),
        &(),
    )
    .await
    .expect("a good put");
    let before = snapshot(&client, &table).await;

    let mut no_key = big(LayoutKind::ItemCollection, "a", 600_000);
    no_key.remove("sk");
    assert_eq!(
        put_err(&client, &table, &no_key, &plain_options())
            .await
            .code(),
        "KEY_MISSING"
    );

    let mut wrong_type = big(LayoutKind::ItemCollection, "a", 600_000);
    wrong_type.insert("pk".into(), AttributeValue::N("7".into()));
    assert_eq!(
        put_err(&client, &table, &wrong_type, &plain_options())
            .await
            .code(),
        "KEY_WRONG_TYPE"
    );

    let mut too_long = big(LayoutKind::ItemCollection, "a", 600_000);
    too_long.insert("pk".into(), AttributeValue::S("k".repeat(2049)));
    assert_eq!(
        put_err(&client, &table, &too_long, &plain_options())
            .await
            .code(),
        "KEY_TOO_LARGE"
    );

    let mut empty = big(LayoutKind::ItemCollection, "a", 600_000);
    empty.insert("sk".into(), AttributeValue::S(String::new()));
    assert_eq!(
        put_err(&client, &table, &empty, &plain_options())
            .await
            .code(),
        "KEY_EMPTY"
    );

    // A chunk key longer than DynamoDB allows: a sort key of 1,000 bytes
    // leaves no room for the version and sequence suffix.
    let mut long_sort = big(LayoutKind::ItemCollection, "a", 600_000);
    long_sort.insert("sk".into(), AttributeValue::S("s".repeat(1000)));
    assert_eq!(
        put_err(&client, &table, &long_sort, &plain_options())
            .await
            .code(),
        "CHUNK_KEY_TOO_LARGE"
    );

    let get = |key: Item| {
        let (client, table) = (client.clone(), table.clone());
        async move { dynaslice_host::get(&client, &table, &key, &GetOptions::default(), &()).await }
    };
    let mut partial = key(LayoutKind::ItemCollection, "keep");
    partial.remove("sk");
    assert_eq!(
        get(partial).await.expect_err("no sort key").code(),
        "KEY_MISSING"
    );

    // A configuration naming the wrong key attribute: the server refuses.
    let wrong_schema = TableConfig::item_collection(
        &table.table,
        KeySchema::partition("id", KeyType::S).with_sort("sk", KeyType::S),
    );
    let mut item = big(LayoutKind::ItemCollection, "b", 600_000);
    item.insert("id".into(), AttributeValue::S("b".into()));
    let error = put_err(&client, &wrong_schema, &item, &plain_options()).await;
    assert_eq!(error.code(), "DYNAMODB_VALIDATION", "{error}");

    assert_eq!(
        snapshot(&client, &table).await,
        before,
        "a refused write changed the table"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn items_over_the_configured_maximum_are_refused() {
    let client = client();
    let table = fresh_table(&client, "max", LayoutKind::ChunkTable).await;
    let before = snapshot(&client, &table).await;
    let options = PutOptions {
        max_item_bytes: 1_000_000,
        max_stream_bytes: Some(1_000_000),
        ..plain_options()
    };
    let error = put_err(
        &client,
        &table,
        &big(LayoutKind::ChunkTable, "huge", 1_200_000),
        &options,
    )
    .await;
    assert_eq!(error.code(), "VIRTUAL_ITEM_TOO_LARGE");
    assert!(error.to_string().contains("1000000"), "{error}");
    let streamed = dynaslice_host::put_reader(
        &client,
        &table,
        key(LayoutKind::ChunkTable, "s"),
        "data",
        &[0u8; 10][..],
        Some(2_000_000),
        &options,
        &(),
    )
    .await
    .expect_err("declared too large");
    assert_eq!(streamed.code(), "VIRTUAL_ITEM_TOO_LARGE");
    assert_eq!(snapshot(&client, &table).await, before);
    // A stream of unknown length is cut off when it passes the limit, after
    // two full chunks went out: they are deleted and nothing is committed.
    let pipe = noise(5, 3_000_000);
    let cut = dynaslice_host::put_reader(
        &client,
        &table,
        key(LayoutKind::ChunkTable, "pipe"),
        "data",
        &pipe[..],
        None,
        &options,
        &(),
    )
    .await
    .expect_err("passes the limit");
    assert_eq!(cut.code(), "VIRTUAL_ITEM_TOO_LARGE", "{cut}");
    assert!(cut.to_string().contains("limit 1000000"), "{cut}");
    assert_eq!(snapshot(&client, &table).await, before);

    // A reader with a lower limit refuses a stored item before reading its chunks.
    let item = big(LayoutKind::ChunkTable, "big", 2_000_000);
    dynaslice_host::put(&client, &table, &item, &plain_options(), &())
        .await
        .expect("put");
    let small_reader = GetOptions {
        max_item_bytes: 1_000_000,
        ..GetOptions::default()
    };
    let error = dynaslice_host::get(&client, &table, &item, &small_reader, &())
        .await
        .expect_err("over the reader's limit");
    assert_eq!(error.code(), "DECOMPRESS_LIMIT", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tampered_chunks_and_manifests_are_detected() {
    let client = client();
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let table = fresh_table(&client, "tamper", layout).await;
        let victim = big(layout, "victim", 1_500_000);
        let bystander = big(layout, "bystander", 1_200_000);
        for item in [&victim, &bystander] {
            dynaslice_host::put(&client, &table, item, &plain_options(), &())
                .await
                .expect("put");
        }

        // One byte of chunk 1 flipped on the server.
        let mut chunk = common::stored_chunk(&client, &table, &victim, 1).await;
        let Some(AttributeValue::B(data)) = chunk.get_mut("_d") else {
            panic!("chunk data")
        };
        data[100] ^= 0x40;
        client
            .put_item()
            .table_name(&table.chunk_table)
            .set_item(Some(item_to_sdk(chunk)))
            .send()
            .await
            .expect("tamper");
        let before = snapshot(&client, &table).await;
        let error = dynaslice_host::get(&client, &table, &victim, &GetOptions::default(), &())
            .await
            .expect_err("a damaged chunk is an error");
        assert_eq!(error.code(), "CHUNK_DIGEST_MISMATCH", "{error}");
        assert!(
            error.to_string().contains("chunk 1"),
            "names the chunk: {error}"
        );
        assert_eq!(
            snapshot(&client, &table).await,
            before,
            "a failed read changed something"
        );

        // A chunk deleted on the server (the parent did not move): missing, not retried forever.
        let gone = dynaslice_host::inspect(&client, &table, &victim)
            .await
            .unwrap()
            .unwrap()
            .chunks[2]
            .key
            .clone();
        client
            .delete_item()
            .table_name(&table.chunk_table)
            .set_key(Some(item_to_sdk(gone)))
            .send()
            .await
            .expect("delete chunk");
        let error = dynaslice_host::get(&client, &table, &victim, &GetOptions::default(), &())
            .await
            .expect_err("missing");
        assert_eq!(error.code(), "CHUNK_MISSING", "{error}");

        // A manifest claiming another chunk count.
        let parent_key = item_to_sdk(table.key.key_of(&victim));
        client
            .update_item()
            .table_name(&table.table)
            .set_key(Some(parent_key))
            .update_expression("SET #m.#n = :n")
            .expression_attribute_names("#m", "_ds")
            .expression_attribute_names("#n", "n")
            .expression_attribute_values(":n", Sdk::N("3".into()))
            .send()
            .await
            .expect("tamper manifest");
        let error = dynaslice_host::get(&client, &table, &victim, &GetOptions::default(), &())
            .await
            .expect_err("lying manifest");
        assert!(
            error.code().category() == dynaslice_core::Category::Stored,
            "{error} [{}]",
            error.code()
        );

        // A manifest that is not a map at all.
        client
            .update_item()
            .table_name(&table.table)
            .set_key(Some(item_to_sdk(table.key.key_of(&victim))))
            .update_expression("SET #m = :b")
            .expression_attribute_names("#m", "_ds")
            .expression_attribute_values(":b", Sdk::B(Blob::new(vec![1, 2, 3])))
            .send()
            .await
            .expect("tamper manifest");
        let error = dynaslice_host::get(&client, &table, &victim, &GetOptions::default(), &())
            .await
            .expect_err("bad manifest");
        assert_eq!(error.code(), "MANIFEST_INVALID", "{error}");

        // The bystander is untouched and whole.
        let fetched = dynaslice_host::get(&client, &table, &bystander, &GetOptions::default(), &())
            .await
            .expect("bystander reads")
            .expect("found");
        assert!(same_item(&fetched.item, &bystander, &["data".to_string()]));
    }
}
