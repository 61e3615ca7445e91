//! `verify` against the embedded store and DynamoDB Local, in both
//! layouts: of a table with planted faults (a flipped byte in a chunk, a
//! missing chunk, a damaged manifest, a chunk of another version) it
//! reports exactly the four damaged items, each with a stored-data code,
//! and nothing else; the CLI lists them and exits 1.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use aws_sdk_dynamodb::Client;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{AttributeValue, Category, Item};
use dynaslice_host::{
    LayoutKind, Position, PutOptions, QueryOptions, Segments, TableConfig, item_to_sdk,
};

fn document(layout: LayoutKind, id: &str, len: usize, seed: u64) -> Item {
    let mut item = common::key(layout, id);
    item.insert("body".into(), AttributeValue::B(common::noise(seed, len)));
    item
}

async fn put(client: &Client, table: &TableConfig, item: &Item) {
    dynaslice_host::put(client, table, item, &PutOptions::default(), &())
        .await
        .expect("a put");
}

fn data_mut(chunk: &mut Item) -> &mut Vec<u8> {
    match chunk.get_mut(CHUNK_DATA_ATTRIBUTE) {
        Some(AttributeValue::B(data)) => data,
        _ => panic!("a chunk has data"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_finds_every_planted_fault_and_nothing_else() {
    let client = common::client();
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let table = common::fresh_table(&client, "verify", layout).await;
        let key = |id: &str| common::key(layout, id);
        for (seed, id) in [
            "flipped", "missing", "manifest", "foreign", "whole1", "whole2",
        ]
        .into_iter()
        .enumerate()
        {
            put(
                &client,
                &table,
                &document(layout, id, 1_200_000, seed as u64),
            )
            .await;
        }
        for id in ["plain1", "plain2"] {
            put(&client, &table, &document(layout, id, 300, 9)).await;
        }

        // A flipped byte in chunk 1.
        let mut chunk = common::stored_chunk(&client, &table, &key("flipped"), 1).await;
        data_mut(&mut chunk)[10] ^= 0x40;
        common::plant(&client, &table.chunk_table, chunk).await;
        // Chunk 2 gone.
        let inspection = dynaslice_host::inspect(&client, &table, &key("missing"))
            .await
            .unwrap()
            .expect("stored");
        let chunk_key = inspection.chunks[2].key.clone();
        client
            .delete_item()
            .table_name(&table.chunk_table)
            .set_key(Some(item_to_sdk(chunk_key)))
            .send()
            .await
            .unwrap();
        // A manifest whose chunk count is not a number.
        let mut parent = dynaslice_host::stored_parent(&client, &table, &key("manifest"))
            .await
            .unwrap()
            .expect("a parent");
        if let Some(AttributeValue::M(fields)) = parent.get_mut(MANIFEST_ATTRIBUTE) {
            fields.insert("n".into(), AttributeValue::S("three".into()));
        }
        common::plant(&client, &table.table, parent).await;
        // Chunk 0 of an earlier version, written over the current one's.
        let old = common::stored_chunk(&client, &table, &key("foreign"), 0).await;
        put(&client, &table, &document(layout, "foreign", 1_200_000, 77)).await;
        let mut current = common::stored_chunk(&client, &table, &key("foreign"), 0).await;
        for name in [CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE] {
            current.insert(name.into(), old[name].clone());
        }
        common::plant(&client, &table.chunk_table, current).await;

        let mut damaged = Vec::new();
        let outcome = dynaslice_host::verify(&client, &table, &QueryOptions::default(), |d| {
            damaged.push(d)
        })
        .await
        .unwrap();
        let found: BTreeSet<Item> = damaged.iter().map(|d| d.key.clone()).collect();
        let planted: BTreeSet<Item> = ["flipped", "missing", "manifest", "foreign"]
            .into_iter()
            .map(key)
            .collect();
        assert_eq!(found, planted, "{layout:?}: exactly the planted faults");
        for d in &damaged {
            assert_eq!(d.error.code().category(), Category::Stored, "{d:?}");
            println!("{layout:?}: {:?} is damaged: {}", d.key, d.error.code());
        }
        assert_eq!((outcome.items, outcome.virtual_items), (4, 2), "{layout:?}");
        assert_eq!(outcome.damaged, 4);

        // The CLI lists them and exits 1.
        let run = Command::new(env!("CARGO_BIN_EXE_dynaslice"))
            .args([
                "--endpoint",
                common::endpoint(),
                "verify",
                "-t",
                &table.table,
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert_eq!(run.status.code(), Some(1), "{stdout}");
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("damaged ")).count(),
            4,
            "{stdout}"
        );
        assert!(stdout.contains("4 damaged"), "{stdout}");

        // In three segments of pages of two: the same four, each once, and
        // every segment between pages at least once or at its end.
        let mut damaged = Vec::new();
        let mut ends = BTreeSet::new();
        let segments = Segments {
            page_size: Some(2),
            ..Segments::all(3)
        };
        let outcome = dynaslice_host::verify_segments(
            &client,
            &table,
            &QueryOptions::default(),
            segments,
            |d| damaged.push(d.key),
            |page| {
                if page.position == Position::End {
                    ends.insert(page.segment);
                }
            },
        )
        .await
        .unwrap();
        damaged.sort();
        assert_eq!(damaged, planted.iter().cloned().collect::<Vec<_>>());
        assert_eq!((outcome.items, outcome.damaged), (4, 4), "{layout:?}");
        assert_eq!(ends, BTreeSet::from([0, 1, 2]));

        verify_killed_and_resumed(&table, &planted);
    }
}

/// `verify --cursor`, killed (SIGKILL) while its rate limit holds it
/// between pages and run again, checks the rest: every planted fault is
/// reported by one run or the other, and the resumed run counts those the
/// first found before its cursor, so it exits 1 even when it finds none.
fn verify_killed_and_resumed(table: &TableConfig, planted: &BTreeSet<Item>) {
    let dir = common::fresh_temp_dir("verifykill");
    let cursor = dir.join("verify.cursor");
    let verify = |rest: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
        command
            .args([
                "--endpoint",
                common::endpoint(),
                "verify",
                "-t",
                &table.table,
            ])
            .args(["--cursor", cursor.to_str().unwrap(), "--page-size", "2"])
            .args(["--segments", "2"])
            .args(rest);
        command
    };
    // A 1.2 MB item costs about 150 read units: at 10 units per second,
    // the run waits for seconds after each.
    let first = common::kill_once_saved(verify(&["--rate-limit", "10"]), &cursor);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cursor).unwrap()).unwrap();
    assert_eq!(saved["scans"], "items", "{saved}");
    // gc refuses verify's cursor, and leaves it.
    let gc = Command::new(env!("CARGO_BIN_EXE_dynaslice"))
        .args(["--endpoint", common::endpoint(), "gc", "-t", &table.table])
        .args([
            "--dry-run",
            "--segments",
            "2",
            "--cursor",
            cursor.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(gc.status.code(), Some(1));
    let said = String::from_utf8_lossy(&gc.stderr);
    assert!(
        said.contains("it is a cursor of verify [INPUT_INVALID]"),
        "{said}"
    );
    assert!(cursor.exists());

    let resumed = verify(&["--output", "json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&resumed.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&resumed.stderr)));
    assert_eq!(resumed.status.code(), Some(1), "{report}");
    assert!(!cursor.exists(), "a finished run removes its cursor");
    let earlier = report["damagedEarlier"].as_u64().unwrap();
    let now = report["damaged"].as_array().unwrap();
    assert_eq!(earlier + now.len() as u64, 4, "{saved} then {report}");
    // Every planted fault by one run or the other (the first may have
    // printed one past its cursor, which the second finds again).
    let first_lines = String::from_utf8_lossy(&first.stdout);
    let mut reported = first_lines
        .lines()
        .filter(|l| l.starts_with("damaged "))
        .count() as u64;
    reported += now.len() as u64;
    assert!(reported >= 4, "{first_lines} then {report}");
    for key in planted {
        let text = dynaslice_host::json::key_text(&table.key, key);
        let json = dynaslice_host::json::item_to_json(key);
        assert!(
            first_lines.contains(&format!("damaged {text}:"))
                || now.iter().any(|d| d["key"] == json),
            "{text} reported by neither run: {first_lines} then {report}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
