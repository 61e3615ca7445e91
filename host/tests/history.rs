//! Version history against the embedded store and DynamoDB Local, both
//! layouts: with `keep 3`, five overwrites leave exactly three earlier
//! versions listed, each reads back byte for byte, `restore` makes one
//! current, gc deletes only what retention released, and a version kept
//! for an age is collected once it ages out.

mod common;

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use dynaslice_core::codec::Compression;
use dynaslice_core::history::Retention;
use dynaslice_core::{AttributeValue, Code, CodecChoice, Item, VersionId};
use dynaslice_host::{GetOptions, HostError, LayoutKind, PutOptions, TableConfig};

fn keeping(keep: u32, max_age_ms: Option<u64>, note: &str) -> PutOptions {
    PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        history: Some(Retention { keep, max_age_ms }),
        note: Some(note.into()),
        ..PutOptions::default()
    }
}

fn document(layout: LayoutKind, body: usize, seed: u64) -> Item {
    let mut item = common::key(layout, "doc");
    item.insert("status".into(), AttributeValue::S(format!("v{seed}")));
    item.insert("body".into(), AttributeValue::B(common::noise(seed, body)));
    item
}

async fn read(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    version: Option<VersionId>,
) -> Result<Option<Item>, HostError> {
    let options = GetOptions {
        version,
        ..GetOptions::default()
    };
    let fetched = dynaslice_host::get(client, table, key, &options, &()).await?;
    Ok(fetched.map(|f| f.item))
}

fn code(error: HostError) -> Code {
    error.code()
}

#[tokio::test]
async fn keeping_three_over_five_overwrites_lists_reads_restores_and_collects() {
    let client = common::client();
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let table = common::fresh_table(&client, "history", layout).await;
        let key = common::key(layout, "doc");
        // Chunked, inline and small versions alike.
        let sizes = [1_200_000, 300_000, 900, 700_000, 2_000, 1_000_000];
        let items: Vec<Item> = (0..6)
            .map(|n| document(layout, sizes[n], n as u64))
            .collect();
        let mut versions = Vec::new();
        let mut units = Vec::new();
        for (n, item) in items.iter().enumerate() {
            let options = keeping(3, None, &format!("writer {n}"));
            let outcome = dynaslice_host::put(&client, &table, item, &options, &())
                .await
                .expect("a put");
            versions.push(outcome.manifest.expect("split: it keeps history").version);
            units.push(outcome.consumed_write_units);
        }

        let listed = dynaslice_host::versions(&client, &table, &key)
            .await
            .unwrap()
            .expect("the item");
        assert_eq!(
            listed.retention,
            Some(Retention {
                keep: 3,
                max_age_ms: None
            })
        );
        let ids: Vec<VersionId> = listed.versions.iter().filter_map(|v| v.version).collect();
        assert_eq!(
            ids,
            vec![versions[5], versions[4], versions[3], versions[2]],
            "the current version, then exactly three earlier ones, newest first"
        );
        let notes: Vec<&str> = listed
            .versions
            .iter()
            .filter_map(|v| v.note.as_deref())
            .collect();
        assert_eq!(notes, ["writer 5", "writer 4", "writer 3", "writer 2"]);
        for n in 2..6 {
            let back = read(&client, &table, &key, Some(versions[n]))
                .await
                .unwrap()
                .expect("a kept version");
            assert!(
                common::same_item(&back, &items[n], &["body".into()]),
                "version {n}"
            );
        }
        for &released in &versions[..2] {
            let error = read(&client, &table, &key, Some(released))
                .await
                .unwrap_err();
            assert_eq!(code(error), Code::VersionNotFound);
        }

        // gc deletes nothing kept: the commits already released 0 and 1.
        let (report, _) = common::collect_all_orphans(&client, &table).await;
        assert_eq!(report.deleted, 0, "{report:?}");
        assert!(report.kept > 0, "{report:?}");
        for &kept in &versions[2..5] {
            assert!(read(&client, &table, &key, Some(kept)).await.is_ok());
        }

        // Restore version 3: current again, as a new version; version 5 is
        // kept, and the oldest (2) released.
        let restored = dynaslice_host::restore(
            &client,
            &table,
            &key,
            versions[3],
            &keeping(3, None, "undo"),
            &(),
        )
        .await
        .expect("a restore");
        let current = read(&client, &table, &key, None).await.unwrap().unwrap();
        assert!(common::same_item(&current, &items[3], &["body".into()]));
        let listed = dynaslice_host::versions(&client, &table, &key)
            .await
            .unwrap()
            .unwrap();
        let ids: Vec<VersionId> = listed.versions.iter().filter_map(|v| v.version).collect();
        let new = restored.manifest.unwrap().version;
        assert_eq!(ids, vec![new, versions[5], versions[4], versions[3]]);
        let error = read(&client, &table, &key, Some(versions[2]))
            .await
            .unwrap_err();
        assert_eq!(code(error), Code::VersionNotFound);
        let (report, _) = common::collect_all_orphans(&client, &table).await;
        assert_eq!(report.deleted, 0, "{report:?}");

        // Keeping one releases the rest at the next commit.
        let last = document(layout, 500_000, 9);
        dynaslice_host::put(&client, &table, &last, &keeping(1, None, "last"), &())
            .await
            .unwrap();
        let listed = dynaslice_host::versions(&client, &table, &key)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(listed.versions.len(), 2, "{listed:?}");
        assert_eq!(listed.versions[1].version, Some(new));
        let (report, live) = common::collect_all_orphans(&client, &table).await;
        assert_eq!(report.deleted, 0, "{report:?}");
        // The current version's 2 chunks; the kept one (the restored
        // 700 KB item) has 2 and its record: two anchors (gc counts
        // anchors when it reads the anchors index).
        assert_eq!((live, report.kept), (2, 2), "{report:?}");
        if layout == LayoutKind::ChunkTable {
            println!(
                "overwrite of a 1 MB item keeping history: {} write units (the first write {})",
                units[5], units[0]
            );
        }
    }
}

#[tokio::test]
async fn a_version_kept_for_an_age_is_collected_once_it_ages_out() {
    let client = common::client();
    let layout = LayoutKind::ChunkTable;
    let table = common::fresh_table(&client, "historyage", layout).await;
    let key = common::key(layout, "doc");
    let options = keeping(0, Some(2_000), "aging");
    let first = document(layout, 700_000, 1);
    let v1 = dynaslice_host::put(&client, &table, &first, &options, &())
        .await
        .unwrap()
        .manifest
        .unwrap()
        .version;
    dynaslice_host::put(
        &client,
        &table,
        &document(layout, 700_000, 2),
        &options,
        &(),
    )
    .await
    .unwrap();
    let back = read(&client, &table, &key, Some(v1))
        .await
        .unwrap()
        .unwrap();
    assert!(common::same_item(&back, &first, &["body".into()]));
    let (young, _) = common::collect_all_orphans(&client, &table).await;
    assert_eq!(
        (young.kept, young.deleted),
        (2, 0),
        "two chunks and a record kept: two anchors"
    );
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let (old, _) = common::collect_all_orphans(&client, &table).await;
    assert_eq!((old.kept, old.deleted), (0, 2), "aged out: collected");
    let error = read(&client, &table, &key, Some(v1)).await.unwrap_err();
    assert_eq!(code(error), Code::VersionNotFound);
}
