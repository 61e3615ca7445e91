//! `dynaslice gc --cursor` killed (SIGKILL) mid-run and run again finishes
//! with the same result as a run never stopped: every orphan deleted,
//! every live item whole. Against the embedded store and DynamoDB Local.

mod common;

use std::process::Command;
use std::time::Duration;

use dynaslice_core::{AttributeValue, VersionId, split_item};
use dynaslice_host::{GcOptions, GetOptions, LayoutKind, PutOptions};

#[tokio::test]
async fn a_gc_killed_mid_run_and_resumed_from_its_cursor_finishes_the_same() {
    let client = common::client();
    let table = common::fresh_table(&client, "gckill", LayoutKind::ChunkTable).await;
    // Two live items, and twelve crashed writes' chunks (3 hours old), all
    // of 1.2 MB: the chunk table is many 1 MB Scan pages.
    let mut live = Vec::new();
    for n in 0..2u64 {
        let mut item = common::key(LayoutKind::ChunkTable, &format!("live{n}"));
        item.insert(
            "data".into(),
            AttributeValue::B(common::noise(n, 1_200_000)),
        );
        dynaslice_host::put(&client, &table, &item, &PutOptions::default(), &())
            .await
            .unwrap();
        live.push(item);
    }
    let stamp = VersionId::new(
        dynaslice_host::fresh_version().unix_ms() - 3 * 3600 * 1000,
        7,
    );
    let split = PutOptions::default().split_options(&table.core(), stamp);
    for n in 0..12u64 {
        let mut orphan = common::key(LayoutKind::ChunkTable, &format!("crashed{n}"));
        orphan.insert(
            "data".into(),
            AttributeValue::B(common::noise(100 + n, 1_200_000)),
        );
        for chunk in split_item(&orphan, &split).unwrap().chunks {
            common::plant(&client, &table.chunk_table, chunk).await;
        }
    }

    let dir = common::fresh_temp_dir("gckill");
    let cursor = dir.join("gc.cursor");
    let gc = |rest: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
        command
            .args(["--endpoint", common::endpoint(), "gc", "-t", &table.table])
            .args(["--cursor", cursor.to_str().unwrap()])
            // Every chunk, in many 1 MB pages (the anchors index would be
            // a single small page).
            .arg("--scan")
            .args(rest);
        command
    };
    // Slowed to a crawl by its rate limit, so it is surely mid-run when
    // killed: after its first page, with the cursor saved.
    common::kill_once_saved(gc(&["--rate-limit", "5"]), &cursor);
    let saved = std::fs::read_to_string(&cursor).unwrap();
    assert!(saved.contains("segments"), "{saved}");

    let resumed = gc(&["--output", "json"]).output().unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert!(report["deleted"].as_u64().unwrap() > 0, "{report}");
    assert!(!cursor.exists(), "a finished run removes its cursor");

    // The same result as a run never stopped: only the live items' chunks.
    let dry = GcOptions {
        grace: Duration::ZERO,
        dry_run: true,
        every_chunk: true,
        ..GcOptions::default()
    };
    let after = dynaslice_host::gc(&client, &table, &dry).await.unwrap();
    assert_eq!(
        (after.deleted, after.chunks, after.referenced),
        (0, 6, 6),
        "{after:?}"
    );
    for item in &live {
        let back = dynaslice_host::get(&client, &table, item, &GetOptions::default(), &())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(back.item, *item);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
