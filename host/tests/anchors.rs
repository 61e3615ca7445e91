//! Anchors (docs/FORMAT.md section 6): tables made by `create_tables` have
//! the anchors index, writers mark every 64th chunk, and `gc` over the
//! index alone finds every chunk a crashed write left, reading one small
//! entry per 64 chunks instead of every stored byte. Against the embedded
//! store and DynamoDB Local.

mod common;

use std::time::Duration;

use dynaslice_core::layout::ANCHORS_INDEX;
use dynaslice_core::manifest::ANCHOR_ATTRIBUTE;
use dynaslice_core::{AttributeValue, Item, VersionId, split_item};
use dynaslice_host::{GcOptions, LayoutKind, PutOptions, TableConfig};

/// The chunks of a write that crashed three hours ago: of `len` bytes of
/// noise under `id`, in 8 KB chunks.
fn crashed(table: &TableConfig, layout: LayoutKind, id: &str, len: usize, seed: u64) -> Vec<Item> {
    let stamp = VersionId::new(
        dynaslice_host::fresh_version().unix_ms() - 3 * 3600 * 1000,
        u128::from(seed),
    );
    let mut options = PutOptions::default().split_options(&table.core(), stamp);
    options.chunk_item_bytes = 8192;
    options.item_limit = 8192;
    let mut item = common::key(layout, id);
    item.insert("data".into(), AttributeValue::B(common::noise(seed, len)));
    split_item(&item, &options).unwrap().chunks
}

/// A run over the anchors index, or over every chunk.
fn gc_options(over_anchors: bool, dry_run: bool) -> GcOptions {
    GcOptions {
        grace: Duration::from_secs(3600),
        dry_run,
        every_chunk: !over_anchors,
        ..GcOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gc_over_the_anchors_index_finds_every_crashed_chunk_and_reads_no_chunk_bytes() {
    let client = common::client();
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let made = common::fresh_table(&client, "anchors", layout).await;
        // What a user's process finds: the index, active, and not among
        // the index keys writes keep on the parent.
        let table = TableConfig::discover(&client, &made.table).await.unwrap();
        assert_eq!(table.anchors.as_deref(), Some(ANCHORS_INDEX), "{layout:?}");
        assert!(table.index_keys.iter().all(|k| k.name != ANCHOR_ATTRIBUTE));

        // Two live items of 1.2 MB (3 chunks each, one anchor).
        for n in 0..2u64 {
            let mut item = common::key(layout, &format!("live{n}"));
            let data = common::noise(n, 1_200_000);
            item.insert("data".into(), AttributeValue::B(data));
            dynaslice_host::put(&client, &table, &item, &PutOptions::default(), &())
                .await
                .unwrap();
        }
        // Chunk items only (an item collection holds the parents too).
        let stored = common::scan_all(&client, &table.chunk_table).await;
        let live = stored.iter().filter(|i| i.contains_key("_h")).count();
        // Crashed writes: 600 KB in 8 KB chunks (75 chunks, anchors 0 and
        // 64), one that stored only its first 10 chunks, one under a live
        // parent; and a young one, kept.
        let mut planted = crashed(&table, layout, "gone0", 600_000, 10);
        assert!(planted.len() > 64, "{} chunks", planted.len());
        planted.extend(
            crashed(&table, layout, "gone1", 600_000, 11)
                .into_iter()
                .take(10),
        );
        planted.extend(crashed(&table, layout, "live0", 100_000, 12));
        for chunk in &planted {
            common::plant(&client, &table.chunk_table, chunk.clone()).await;
        }
        let mut young = common::key(layout, "young");
        young.insert("data".into(), AttributeValue::B(common::noise(13, 600_000)));
        let version = dynaslice_host::fresh_version();
        let split = PutOptions::default().split_options(&table.core(), version);
        let young = split_item(&young, &split).unwrap().chunks;
        for chunk in &young {
            common::plant(&client, &table.chunk_table, chunk.clone()).await;
        }

        // The same table judged both ways, dry: the same verdicts, but the
        // index run reads a sliver of what the Scan of every chunk does.
        let every = dynaslice_host::gc(&client, &table, &gc_options(false, true))
            .await
            .unwrap();
        let by_anchors = dynaslice_host::gc(&client, &table, &gc_options(true, true))
            .await
            .unwrap();
        let chunks = live + planted.len() + young.len();
        assert_eq!(every.chunks, chunks, "{layout:?} {every:?}");
        // Anchors: one per live item, 2 + 1 + 1 crashed, 1 young.
        assert_eq!(
            (
                by_anchors.chunks,
                by_anchors.referenced,
                by_anchors.young,
                by_anchors.deleted
            ),
            (2 + 4 + 1, 2, 1, 4),
            "{layout:?} {by_anchors:?}"
        );
        println!(
            "{layout:?}: {} chunk items ({} MB): read units {:.1} over every chunk, {:.1} over \
             the anchors index",
            chunks,
            (live * 409_600 + (planted.len() + young.len()) * 8192) / 1_000_000,
            every.consumed.read,
            by_anchors.consumed.read
        );
        // DynamoDB bills an index Scan by the index entries it reads;
        // DynamoDB Local bills it by the table items they stand for (here
        // the 400 KB anchors), so only the embedded store's units compare.
        if common::server_kind() == common::ServerKind::Embedded {
            assert!(
                by_anchors.consumed.read * 10.0 < every.consumed.read,
                "{layout:?}: {by_anchors:?} against {every:?}"
            );
        }

        // The index run deletes: every crashed chunk goes, nothing else.
        let report = dynaslice_host::gc(&client, &table, &gc_options(true, false))
            .await
            .unwrap();
        assert_eq!(report.deleted, 4, "{layout:?} {report:?}");
        let left = common::scan_all(&client, &table.chunk_table).await;
        let chunks_left = left.iter().filter(|i| i.contains_key("_h")).count();
        assert_eq!(chunks_left, live + young.len(), "{layout:?}");
        for chunk in &planted {
            let key: Item = chunk
                .iter()
                .filter(|(n, _)| !n.starts_with('_') && *n != "data")
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect();
            assert!(
                !left
                    .iter()
                    .any(|i| key.iter().all(|(n, v)| i.get(n) == Some(v))),
                "{layout:?}: a crashed chunk survived"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_reads_the_anchors_index_unless_told_to_scan() {
    let client = common::client();
    let table = common::fresh_table(&client, "anchorcli", LayoutKind::ChunkTable).await;
    let mut item = common::key(LayoutKind::ChunkTable, "a");
    item.insert("data".into(), AttributeValue::B(common::noise(1, 900_000)));
    dynaslice_host::put(&client, &table, &item, &PutOptions::default(), &())
        .await
        .unwrap();
    let gc = |extra: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_dynaslice"))
            .args(["--endpoint", common::endpoint(), "gc", "-t", &table.table])
            .args(["--dry-run", "--output", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let by_anchors = gc(&[]);
    assert_eq!(by_anchors["scanned"], "anchors", "{by_anchors}");
    assert_eq!(
        by_anchors["chunks"], 1,
        "one anchor for 3 chunks: {by_anchors}"
    );
    let every = gc(&["--scan"]);
    assert_eq!(every["scanned"], "chunks", "{every}");
    assert_eq!(every["chunks"], 3, "{every}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tables_anchors_adds_the_index_to_an_older_table_and_it_holds_the_anchors_already_written()
{
    let client = common::client();
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let name = common::table_name("anchorless");
        let mut older = TableConfig::new(&name, common::schema(layout), layout);
        older.anchors = None;
        dynaslice_host::create_tables(&client, &older)
            .await
            .unwrap();
        let mut item = common::key(layout, "a");
        item.insert("data".into(), AttributeValue::B(common::noise(1, 900_000)));
        dynaslice_host::put(&client, &older, &item, &PutOptions::default(), &())
            .await
            .unwrap();
        let found = TableConfig::discover(&client, &name).await.unwrap();
        assert_eq!(found.anchors, None, "{layout:?}");

        let run = |extra: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_dynaslice"))
                .args([
                    "--endpoint",
                    common::endpoint(),
                    "tables",
                    "anchors",
                    "-t",
                    &name,
                ])
                .args(extra)
                .output()
                .unwrap()
        };
        let added = run(&["--output", "json"]);
        assert!(
            added.status.success(),
            "{}",
            String::from_utf8_lossy(&added.stderr)
        );
        let added: serde_json::Value = serde_json::from_slice(&added.stdout).unwrap();
        assert_eq!(added["added"], true, "{added}");
        let again = run(&["--output", "json"]);
        let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
        assert_eq!(again["added"], false, "{again}");

        let table = TableConfig::discover(&client, &name).await.unwrap();
        assert_eq!(table.anchors.as_deref(), Some(ANCHORS_INDEX), "{layout:?}");
        // The index was built from what was stored: the item's anchor.
        let report = dynaslice_host::gc(&client, &table, &gc_options(true, true))
            .await
            .unwrap();
        assert_eq!(
            (report.chunks, report.referenced),
            (1, 1),
            "{layout:?} {report:?}"
        );
    }
}
