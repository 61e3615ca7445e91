//! `update` against the embedded store and DynamoDB Local: a parent
//! attribute of a 10 MB item changes for a few write units with no chunk
//! touched (and the item moves in its index), a spilled attribute rewrites
//! the item whole, and updates racing overwrites give one writer's item,
//! never a mix, the loser getting `CONFLICT`.

mod common;

use aws_sdk_dynamodb::Client;
use dynaslice_core::codec::Compression;
use dynaslice_core::{AttributeValue, Code, CodecChoice, Item};
use dynaslice_host::{
    Changes, GetOptions, HostError, LayoutKind, PutOptions, Rewrite, TableConfig, UpdateOptions,
    UpdateSteps,
};

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.into())
}

fn set(name: &str, value: AttributeValue) -> Changes {
    let mut changes = Changes::default();
    changes.set.insert(name.into(), value);
    changes
}

/// A document: a status, ten metadata fields of 2 KB (spilled with the
/// body) and a body of `body` incompressible bytes.
fn document(layout: LayoutKind, id: &str, body: usize, seed: u64) -> Item {
    let mut item = common::key(layout, id);
    item.insert("status".into(), s("draft"));
    for i in 0..10 {
        item.insert(
            format!("meta{i}"),
            s(&format!("{seed}-{}", "m".repeat(2000))),
        );
    }
    item.insert("body".into(), AttributeValue::B(common::noise(seed, body)));
    item
}

fn plain() -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        ..PutOptions::default()
    }
}

fn options() -> UpdateOptions {
    UpdateOptions {
        put: plain(),
        ..UpdateOptions::default()
    }
}

async fn read(client: &Client, table: &TableConfig, key: &Item) -> Option<Item> {
    dynaslice_host::get(client, table, key, &GetOptions::default(), &())
        .await
        .expect("a read")
        .map(|fetched| fetched.item)
}

/// The keys of every chunk item, sorted.
async fn chunk_keys(client: &Client, table: &TableConfig) -> Vec<Item> {
    let name = dynaslice_host::CHUNK_KEY_NAME;
    let mut keys: Vec<Item> = common::scan_all(client, &table.chunk_table)
        .await
        .into_iter()
        .map(|chunk| chunk.into_iter().filter(|(k, _)| k == name).collect())
        .collect();
    keys.sort();
    keys
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parent_attribute_of_a_10_mb_item_costs_a_few_units_and_touches_no_chunk() {
    let client = common::client();
    let table = common::fresh_table(&client, "update", LayoutKind::ChunkTable).await;
    let key = common::key(LayoutKind::ChunkTable, "big");
    let item = document(LayoutKind::ChunkTable, "big", 10 << 20, 1);
    let put = dynaslice_host::put(&client, &table, &item, &plain(), &())
        .await
        .unwrap();
    let manifest = put.manifest.clone().unwrap();
    let chunks = chunk_keys(&client, &table).await;
    assert_eq!(chunks.len() as u64, manifest.total_chunks());
    // The body is a group of its own; the metadata share the other frame.
    assert_eq!(manifest.groups.len(), 1);
    assert_eq!(manifest.groups[0].spilled, ["body"]);

    let outcome = dynaslice_host::update(
        &client,
        &table,
        &key,
        set("status", s("published")),
        &options(),
        &(),
    )
    .await
    .unwrap();
    println!(
        "update of a parent attribute of a 10 MB item: {} write units consumed ({} planned); \
         the put consumed {}",
        outcome.consumed.write, outcome.plan.write_units, put.consumed_write_units
    );
    assert!(matches!(outcome.plan.steps, UpdateSteps::Parent(_)));
    assert!(outcome.consumed.write < 10.0, "{}", outcome.consumed.write);
    assert_eq!(outcome.consumed.write, outcome.plan.write_units as f64);
    assert_eq!(
        chunk_keys(&client, &table).await,
        chunks,
        "no chunk touched"
    );
    let mut expected = item.clone();
    expected.insert("status".into(), s("published"));
    assert_eq!(read(&client, &table, &key).await, Some(expected.clone()));

    // A spilled attribute of the metadata group: a new version that
    // rewrites that group's chunks only and reuses the body's.
    let body_chunks: Vec<Item> = chunks
        .iter()
        .filter(|k| format!("{k:?}").contains(&manifest.groups[0].version.to_text()))
        .cloned()
        .collect();
    assert_eq!(body_chunks.len(), manifest.groups[0].chunk_count as usize);
    let outcome = dynaslice_host::update(
        &client,
        &table,
        &key,
        set("meta3", s("changed")),
        &options(),
        &(),
    )
    .await
    .unwrap();
    assert_eq!(
        outcome.plan.steps,
        UpdateSteps::Rewrite(Rewrite::Spilled {
            name: "meta3".into()
        })
    );
    let group = outcome.put.expect("a rewrite");
    expected.insert("meta3".into(), s("changed"));
    assert_eq!(read(&client, &table, &key).await, Some(expected.clone()));
    let after = chunk_keys(&client, &table).await;
    assert!(
        body_chunks.iter().all(|k| after.contains(k)),
        "the body's chunks are reused"
    );
    assert_eq!(after.len(), chunks.len(), "the metadata's chunks replaced");
    assert!(
        after.iter().any(|k| !chunks.contains(k)),
        "new metadata chunks"
    );

    // The same change as a full rewrite (as `--rewrite` asks): every frame
    // written again, and the replaced ones deleted.
    let full = dynaslice_host::update(
        &client,
        &table,
        &key,
        set("meta3", s("changed again")),
        &UpdateOptions {
            rewrite: true,
            ..options()
        },
        &(),
    )
    .await
    .unwrap();
    println!(
        "update of one spilled attribute of a 10 MB item: {} write units consumed (its group \
         rewritten, {} planned) against {} for a full rewrite ({} planned): {:.0}x fewer",
        outcome.consumed.write,
        outcome.plan.write_units,
        full.consumed.write,
        full.plan.write_units,
        full.consumed.write / outcome.consumed.write
    );
    assert!(outcome.consumed.write >= group.consumed_write_units);
    // The group: about 20 KB written and 20 KB deleted; a full rewrite:
    // about 10 MB of each.
    assert!(outcome.consumed.write < 100.0, "{}", outcome.consumed.write);
    assert!(
        full.consumed.write > 2.0 * 10_240.0,
        "{}",
        full.consumed.write
    );
    expected.insert("meta3".into(), s("changed again"));
    assert_eq!(read(&client, &table, &key).await, Some(expected));
    let rewritten = chunk_keys(&client, &table).await;
    assert!(
        rewritten.iter().all(|k| !after.contains(k)),
        "a full rewrite writes only new chunks"
    );
    assert_eq!(rewritten.len(), chunks.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_racing_overwrites_give_one_writers_item_and_the_loser_a_conflict() {
    let client = common::client();
    let table = common::fresh_table(&client, "update-race", LayoutKind::ItemCollection).await;
    let key = common::key(LayoutKind::ItemCollection, "doc");
    let first = document(LayoutKind::ItemCollection, "doc", 600_000, 100);
    dynaslice_host::put(&client, &table, &first, &plain(), &())
        .await
        .unwrap();
    let mut conflicts = 0;
    for round in 0..12u64 {
        let next = document(
            LayoutKind::ItemCollection,
            "doc",
            400_000 + 50_000 * round as usize,
            round,
        );
        // Even rounds change the parent, odd ones the payload (a rewrite).
        let (name, value) = match round % 2 {
            0 => ("status", s(&format!("round {round}"))),
            _ => ("meta0", s(&format!("round {round}"))),
        };
        let (client2, table2, key2) = (client.clone(), table.clone(), key.clone());
        let changes = set(name, value.clone());
        let update = tokio::spawn(async move {
            dynaslice_host::update(&client2, &table2, &key2, changes, &options(), &()).await
        });
        let put = dynaslice_host::put(&client, &table, &next, &plain(), &()).await;
        put.expect("last writer wins: the put goes in");
        let updated = update.await.unwrap();
        let stored = read(&client, &table, &key).await.expect("an item");
        let mut with_update = next.clone();
        with_update.insert(name.into(), value);
        match updated {
            // Before the put (replaced by it), or after it (on top of it).
            Ok(_) => assert!(
                stored == next || stored == with_update,
                "round {round}: a mixed item"
            ),
            Err(HostError::Conflict { .. }) => {
                conflicts += 1;
                assert_eq!(stored, next, "round {round}: the loser left a trace");
            }
            Err(e) => panic!("round {round}: {e} [{}]", e.code()),
        }
    }
    println!("{conflicts} of 12 updates lost the race to an overwrite");
    let (report, _) = common::collect_all_orphans(&client, &table).await;
    assert_eq!(report.deleted, 0, "no chunk left behind: {report:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_changes_are_refused_before_anything_is_written() {
    let client = common::client();
    let table = common::fresh_table(&client, "update-bad", LayoutKind::ChunkTable).await;
    let key = common::key(LayoutKind::ChunkTable, "x");
    let mut both = set("a", s("1"));
    both.remove.push("a".into());
    for (changes, code) in [
        (set("pk", s("other")), Code::UpdateInvalid),
        (set("_ds", s("forged")), Code::AttributeReserved),
        (both, Code::UpdateInvalid),
        (Changes::default(), Code::UpdateInvalid),
    ] {
        let error = dynaslice_host::update(&client, &table, &key, changes, &options(), &())
            .await
            .unwrap_err();
        assert_eq!(error.code(), code, "{error}");
    }
    assert_eq!(read(&client, &table, &key).await, None, "nothing created");
}
