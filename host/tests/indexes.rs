//! A virtual item in a table with secondary indexes and TTL, as a team with
//! a single-table design has them: with no `keep`, the index keys stay on
//! the parent (the item is found by index queries, with its attributes),
//! an index key DynamoDB would refuse is refused before anything is
//! written, every chunk carries the parent's TTL value, and an expired item
//! whose chunks TTL already deleted reads `ITEM_EXPIRED`. Against the
//! embedded store and DynamoDB Local, like every host test.

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue as Sdk, BillingMode, GlobalSecondaryIndex,
    KeySchemaElement, KeyType as SdkKeyType, LocalSecondaryIndex, Projection, ProjectionType,
    ScalarAttributeType, TimeToLiveSpecification, TimeToLiveStatus,
};
use dynaslice_core::codec::Compression;
use dynaslice_core::{AttributeValue, CodecChoice, IndexKey, Item, KeyType};
use dynaslice_host::{
    GetOptions, LayoutKind, PutOptions, TableConfig, create_tables, item_from_sdk, item_to_sdk,
};

/// The Unix time in seconds, `delta` from now.
fn epoch(delta: i64) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    now + delta
}

fn key_element(name: &str, kind: SdkKeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .unwrap()
}

fn definition(name: &str, kind: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()
        .unwrap()
}

/// `docs`-like tables: key `pk`/`sk`, a GSI on `title` (S) and `rank` (N),
/// a GSI on `tag` (B), an LSI on `status` (S), TTL on `expiresAt` on the
/// table and its chunk table.
async fn indexed_tables(client: &Client) -> TableConfig {
    let table = common::table_name("indexed");
    let all = Projection::builder()
        .projection_type(ProjectionType::All)
        .build();
    client
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key_element("pk", SdkKeyType::Hash))
        .key_schema(key_element("sk", SdkKeyType::Range))
        .attribute_definitions(definition("pk", ScalarAttributeType::S))
        .attribute_definitions(definition("sk", ScalarAttributeType::S))
        .attribute_definitions(definition("title", ScalarAttributeType::S))
        .attribute_definitions(definition("rank", ScalarAttributeType::N))
        .attribute_definitions(definition("tag", ScalarAttributeType::B))
        .attribute_definitions(definition("status", ScalarAttributeType::S))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by-title")
                .key_schema(key_element("title", SdkKeyType::Hash))
                .key_schema(key_element("rank", SdkKeyType::Range))
                .projection(all.clone())
                .build()
                .unwrap(),
        )
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by-tag")
                .key_schema(key_element("tag", SdkKeyType::Hash))
                .projection(all.clone())
                .build()
                .unwrap(),
        )
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("by-status")
                .key_schema(key_element("pk", SdkKeyType::Hash))
                .key_schema(key_element("status", SdkKeyType::Range))
                .projection(all)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("indexed table created");
    // The chunk table, with TTL on both, as `tables create --ttl` makes them.
    let chunks = dynaslice_host::chunk_table_name(&table);
    client
        .create_table()
        .table_name(&chunks)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key_element("pk", SdkKeyType::Hash))
        .attribute_definitions(definition("pk", ScalarAttributeType::S))
        .send()
        .await
        .expect("chunk table created");
    ttl_on(client, &table).await;
    ttl_on(client, &chunks).await;
    TableConfig::discover(client, &table)
        .await
        .expect("discovered")
}

/// Turns TTL on for `table`, on `expiresAt`.
async fn ttl_on(client: &Client, table: &str) {
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name("expiresAt")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("TTL on");
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.into())
}

fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// A document as the issue describes it: a 300-character title, an
/// expiry, 30 metadata fields of 150 bytes and a body of `body` bytes.
fn document(id: &str, body: usize, expires_at: i64) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), s(&format!("doc#{id}")));
    item.insert("sk".into(), s("v"));
    item.insert("title".into(), s(&format!("{id}-{}", "t".repeat(300))));
    item.insert("rank".into(), n(7));
    item.insert(
        "tag".into(),
        AttributeValue::B(format!("tag-{id}").into_bytes()),
    );
    item.insert("status".into(), s("draft"));
    item.insert("expiresAt".into(), n(expires_at));
    for i in 0..30 {
        item.insert(format!("meta{i:02}"), s(&"m".repeat(150)));
    }
    item.insert(
        "body".into(),
        AttributeValue::B(common::noise(body as u64, body)),
    );
    item
}

/// The items a query of `index` finds for `condition` (`#a`, `#b` naming
/// the attributes `names` gives, `:a`, `:b` their values), as stored.
async fn query(
    client: &Client,
    table: &str,
    index: &str,
    condition: &str,
    names: &[&str],
    values: &[Sdk],
) -> Vec<Item> {
    let mut request = client
        .query()
        .table_name(table)
        .index_name(index)
        .key_condition_expression(condition);
    for (i, (name, value)) in names.iter().zip(values).enumerate() {
        let slot = ["a", "b"][i];
        request = request
            .expression_attribute_names(format!("#{slot}"), *name)
            .expression_attribute_values(format!(":{slot}"), value.clone());
    }
    let output = request.send().await.expect("query");
    output
        .items()
        .iter()
        .map(|item| item_from_sdk(item.clone()).expect("an item"))
        .collect()
}

/// Every chunk item of the table's chunk table.
async fn chunk_items(client: &Client, table: &TableConfig) -> Vec<Item> {
    common::scan_all(client, &table.chunk_table).await
}

fn plain() -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        max_item_bytes: 40 << 20,
        ..PutOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn index_keys_stay_on_the_parent_and_chunks_carry_its_ttl() {
    let client = common::client();
    let table = indexed_tables(&client).await;
    // What DescribeTable and DescribeTimeToLive told.
    let mut found = table.index_keys.clone();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    let index_key = |name: &str, key_type, sort| IndexKey {
        name: name.into(),
        key_type,
        sort,
    };
    assert_eq!(
        found,
        [
            index_key("rank", KeyType::N, true),
            index_key("status", KeyType::S, true),
            index_key("tag", KeyType::B, false),
            index_key("title", KeyType::S, false),
        ]
    );
    assert_eq!(table.ttl.as_deref(), Some("expiresAt"));
    assert_eq!(table.ttl_warning(), None);

    let expires_at = epoch(86_400);
    for (id, body) in [("small", 1_000), ("one", 1_000_000), ("thirty", 30_000_000)] {
        let item = document(id, body, expires_at);
        let outcome = dynaslice_host::put(&client, &table, &item, &plain(), &())
            .await
            .expect("put, no keep");
        if body > 1_000 {
            let manifest = outcome.manifest.expect("split");
            for name in ["title", "rank", "tag", "status", "expiresAt"] {
                assert!(
                    !manifest.spilled.contains(&name.to_string()),
                    "{id}: {name} spilled"
                );
            }
        }
        let t = &table.table;
        let title = Sdk::S(format!("{id}-{}", "t".repeat(300)));
        let by_title = query(&client, t, "by-title", "#a = :a", &["title"], &[title]).await;
        assert_eq!(by_title.len(), 1, "{id}: in the title index");
        assert_eq!(by_title[0]["rank"], n(7));
        let tag = Sdk::B(format!("tag-{id}").into_bytes().into());
        let by_tag = query(&client, t, "by-tag", "#a = :a", &["tag"], &[tag]).await;
        assert_eq!(by_tag.len(), 1, "{id}: in the tag index");
        let (pk, draft) = (Sdk::S(format!("doc#{id}")), Sdk::S("draft".into()));
        let condition = "#a = :a AND #b = :b";
        let by_status = query(
            &client,
            t,
            "by-status",
            condition,
            &["pk", "status"],
            &[pk, draft],
        )
        .await;
        assert_eq!(by_status.len(), 1, "{id}: in the status index");
        let back = dynaslice_host::get(
            &client,
            &table,
            &item,
            &GetOptions {
                max_item_bytes: 40 << 20,
                ..GetOptions::default()
            },
            &(),
        )
        .await
        .expect("get")
        .expect("found");
        assert!(back.item == item, "{id}: read back whole");
    }
    // Every chunk carries its parent's TTL value.
    let chunks = chunk_items(&client, &table).await;
    assert!(chunks.len() > 75, "{} chunks", chunks.len());
    for chunk in &chunks {
        assert_eq!(
            chunk.get("expiresAt"),
            Some(&n(expires_at)),
            "a chunk without the TTL"
        );
    }
    // A streamed payload's chunks too.
    let mut parent = document("streamed", 0, expires_at);
    parent.remove("body");
    let bytes = common::noise(9, 2_000_000);
    dynaslice_host::put_reader(
        &client,
        &table,
        parent,
        "body",
        &bytes[..],
        None,
        &plain(),
        &(),
    )
    .await
    .expect("streamed put");
    let streamed: Vec<_> = chunk_items(&client, &table)
        .await
        .into_iter()
        .filter(|c| matches!(&c["pk"], AttributeValue::S(k) if k.starts_with("doc\\#streamed")))
        .collect();
    assert_eq!(streamed.len(), 5);
    assert!(
        streamed
            .iter()
            .all(|c| c.get("expiresAt") == Some(&n(expires_at)))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn index_keys_dynamodb_would_refuse_are_refused_before_anything_is_written() {
    let client = common::client();
    let table = indexed_tables(&client).await;
    let cases = [
        ("title", n(3), "KEY_WRONG_TYPE"),
        ("title", s(&"x".repeat(2049)), "KEY_TOO_LARGE"),
        ("rank", s("seven"), "KEY_WRONG_TYPE"),
        ("status", s(""), "KEY_EMPTY"),
        ("status", s(&"x".repeat(1025)), "KEY_TOO_LARGE"),
    ];
    for (name, value, code) in cases {
        let mut item = document("bad", 1_000_000, epoch(3600));
        item.insert(name.into(), value);
        let error = dynaslice_host::put(&client, &table, &item, &plain(), &())
            .await
            .expect_err("refused");
        assert_eq!(error.code(), code, "{name}: {error}");
        assert!(error.to_string().contains(name), "{error}");
    }
    assert!(
        chunk_items(&client, &table).await.is_empty(),
        "no chunk written"
    );
    // The streamed attribute may not be the TTL attribute or an index key.
    let mut parent = document("s", 0, epoch(3600));
    parent.remove("body");
    parent.remove("title");
    let error = dynaslice_host::put_reader(
        &client,
        &table,
        parent,
        "title",
        &[1u8; 10][..],
        None,
        &plain(),
        &(),
    )
    .await
    .expect_err("an index key streamed");
    assert_eq!(error.code(), "OPTIONS_INVALID", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_item_whose_chunks_are_gone_reads_item_expired() {
    let client = common::client();
    let table = indexed_tables(&client).await;
    let mut live_chunks = 0;
    for (id, expires_at, code) in [
        // Six years ago: DynamoDB's TTL leaves alone what expired over
        // five years before, so a server's own TTL (DynamoDB Local has
        // one) cannot delete the parent before the read.
        ("expired", epoch(-6 * 365 * 86_400), "ITEM_EXPIRED"),
        ("live", epoch(3600), "CHUNK_MISSING"),
    ] {
        let item = document(id, 1_000_000, expires_at);
        dynaslice_host::put(&client, &table, &item, &plain(), &())
            .await
            .expect("put");
        // TTL deletes a parent and its chunks in no set order: one chunk
        // gone, the parent not yet.
        let inspection = dynaslice_host::inspect(&client, &table, &item)
            .await
            .expect("inspect")
            .expect("found");
        live_chunks = inspection.chunks.len();
        let key = inspection.chunks[1].key.clone();
        client
            .delete_item()
            .table_name(&table.chunk_table)
            .set_key(Some(item_to_sdk(key)))
            .send()
            .await
            .expect("chunk deleted");
        let error = dynaslice_host::get(&client, &table, &item, &GetOptions::default(), &())
            .await
            .expect_err("a chunk is gone");
        assert_eq!(error.code(), code, "{id}: {error}");
    }
    // Once TTL deleted the parent too, chunks TTL has not deleted yet are
    // orphans for gc.
    let expired = document("expired", 0, 0);
    client
        .delete_item()
        .table_name(&table.table)
        .set_key(Some(item_to_sdk(table.key.key_of(&expired))))
        .send()
        .await
        .expect("parent deleted");
    let of = |id: &str, chunks: &[Item]| {
        let prefix = format!("doc\\#{id}#");
        chunks
            .iter()
            .filter(|c| matches!(&c["pk"], AttributeValue::S(k) if k.starts_with(&prefix)))
            .count()
    };
    let before = chunk_items(&client, &table).await;
    assert_eq!(
        of("live", &before),
        live_chunks - 1,
        "the live item's other chunks"
    );
    let report = dynaslice_host::gc(
        &client,
        &table,
        // Every chunk item: the test's stand-in for TTL deleted chunk 0,
        // the anchor (TTL would delete the others too, in no set order).
        &dynaslice_host::GcOptions {
            grace: std::time::Duration::ZERO,
            every_chunk: true,
            ..dynaslice_host::GcOptions::default()
        },
    )
    .await
    .expect("gc");
    // Both items have the same shape, so the same chunk count.
    assert_eq!(of("expired", &before), live_chunks - 1, "its other chunks");
    assert_eq!(report.deleted, live_chunks - 1, "{report:?}");
    let after = chunk_items(&client, &table).await;
    assert_eq!(
        of("expired", &after),
        0,
        "the expired item's chunks are gone"
    );
    assert_eq!(
        of("live", &after),
        live_chunks - 1,
        "the live item's chunks are kept"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tables_create_turns_ttl_on_for_both_tables_and_a_missing_one_is_warned_of() {
    let client = common::client();
    let mut table = TableConfig::new(
        &common::table_name("ttl"),
        common::schema(LayoutKind::ChunkTable),
        LayoutKind::ChunkTable,
    );
    table.ttl = Some("expiresAt".into());
    create_tables(&client, &table).await.expect("created");
    for name in [&table.table, &table.chunk_table] {
        let described = client
            .describe_time_to_live()
            .table_name(name)
            .send()
            .await
            .expect("described");
        let description = described.time_to_live_description().expect("a description");
        assert_eq!(description.attribute_name(), Some("expiresAt"), "{name}");
        assert!(matches!(
            description.time_to_live_status(),
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
        ));
    }
    let found = TableConfig::discover(&client, &table.table)
        .await
        .expect("discovered");
    assert_eq!(found.ttl_warning(), None);

    // TTL on the parent table only: chunks would outlive their parents.
    let bare = common::fresh_table(&client, "ttl-parent-only", LayoutKind::ChunkTable).await;
    ttl_on(&client, &bare.table).await;
    let found = TableConfig::discover(&client, &bare.table)
        .await
        .expect("discovered");
    let warning = found.ttl_warning().expect("a warning");
    assert!(warning.contains(&bare.chunk_table), "{warning}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_of_a_global_index_yields_whole_items() {
    let client = common::client();
    let table = indexed_tables(&client).await;
    let expires_at = epoch(86_400);
    let items = [
        document("gsi-big", 2_000_000, expires_at),
        document("gsi-small", 100, expires_at),
    ];
    for item in &items {
        dynaslice_host::put(&client, &table, item, &plain(), &())
            .await
            .unwrap();
    }
    for item in &items {
        let query = dynaslice_host::Query {
            table: table.table.clone(),
            index: Some("by-title".into()),
            key_condition: Some("#t = :t".into()),
            names: [("#t".to_string(), "title".to_string())].into(),
            values: [(":t".to_string(), item["title"].clone())].into(),
            forward: true,
            ..Default::default()
        };
        let mut found = Vec::new();
        let outcome = dynaslice_host::query(
            &client,
            &table,
            query,
            &dynaslice_host::QueryOptions::default(),
            |item| {
                found.push(item);
                Ok(())
            },
        )
        .await
        .unwrap();
        assert_eq!(found, vec![item.clone()], "the whole item from the index");
        assert_eq!(outcome.chunks_skipped, 0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn items_written_before_the_index_existed_join_it_after_reindex() {
    let client = common::client();
    let table = indexed_tables(&client).await;
    // A writer that knew neither the indexes nor the TTL: as if they were
    // added after these items were written.
    let unaware = TableConfig {
        index_keys: Vec::new(),
        ttl: None,
        ..table.clone()
    };
    let expires_at = epoch(86_400);
    let docs = [
        document("late-big", 1_000_000, expires_at),
        document("late-small", 100, expires_at),
        document("late-mid", 600_000, expires_at),
    ];
    for doc in &docs {
        dynaslice_host::put(&client, &unaware, doc, &plain(), &())
            .await
            .unwrap();
    }
    let by_title = |doc: &Item| {
        let title = match &doc["title"] {
            AttributeValue::S(title) => title.clone(),
            _ => unreachable!(),
        };
        let client = client.clone();
        let table = table.table.clone();
        async move {
            query(
                &client,
                &table,
                "by-title",
                "#a = :a",
                &["title"],
                &[Sdk::S(title)],
            )
            .await
        }
    };
    assert!(by_title(&docs[0]).await.is_empty(), "its title was spilled");
    assert_eq!(
        by_title(&docs[1]).await.len(),
        1,
        "a plain item is indexed anyway"
    );

    let dry = dynaslice_host::reindex(
        &client,
        &table,
        &dynaslice_host::UpdateOptions {
            dry_run: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!((dry.misplaced, dry.rewritten), (2, 0));
    assert!(
        by_title(&docs[0]).await.is_empty(),
        "a dry run rewrites nothing"
    );

    let report = dynaslice_host::reindex(&client, &table, &Default::default())
        .await
        .unwrap();
    assert_eq!((report.misplaced, report.rewritten), (2, 2), "{report:?}");
    for doc in &docs {
        let found = by_title(doc).await;
        assert_eq!(found.len(), 1, "in the title index now");
        let key = table.key.key_of(doc);
        let read = dynaslice_host::get(&client, &table, &key, &GetOptions::default(), &())
            .await
            .unwrap()
            .expect("stored");
        assert_eq!(&read.item, doc, "the item is unchanged");
    }
    let chunks = chunk_items(&client, &table).await;
    let late: Vec<&Item> = chunks
        .iter()
        .filter(
            |c| matches!(c.get("pk"), Some(AttributeValue::S(k)) if k.starts_with("doc\\#late-")),
        )
        .collect();
    assert!(!late.is_empty());
    assert!(
        late.iter()
            .all(|c| c.get("expiresAt") == Some(&n(expires_at))),
        "the rewritten chunks carry the TTL"
    );
    let again = dynaslice_host::reindex(&client, &table, &Default::default())
        .await
        .unwrap();
    assert_eq!(again.misplaced, 0);
}
