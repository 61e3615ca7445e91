//! Bulk loads and exports against the embedded store and DynamoDB Local:
//! `put_many` stores every valid item of a mixed load (1 KB to 1.5 MB,
//! JSON-like and binary) and reports each invalid one by its tag, and
//! `export` writes every item whole, once, and no chunk item.

mod common;

use std::process::Command;

use dynaslice_core::{AttributeValue, Code, Item};
use dynaslice_host::json::item_from_json;
use dynaslice_host::{GetOptions, HostError, LayoutKind, ManyOptions, QueryOptions};

fn item(layout: LayoutKind, n: u64) -> Item {
    let mut item = common::key(layout, &format!("item{n:03}"));
    let size = [1_000, 50_000, 420_000, 1_500_000][n as usize % 4];
    match n % 2 {
        0 => item.insert("body".into(), AttributeValue::B(common::noise(n, size))),
        _ => item.insert(
            "body".into(),
            AttributeValue::S(common::order_history(n, size)),
        ),
    };
    item
}

#[tokio::test]
async fn put_many_stores_the_valid_items_and_reports_the_rest_and_export_writes_each_once() {
    let client = common::client();
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let table = common::fresh_table(&client, "bulk", layout).await;
        let items: Vec<Item> = (0..24).map(|n| item(layout, n)).collect();
        let mut input: Vec<(u64, Result<Item, HostError>)> = items
            .iter()
            .cloned()
            .enumerate()
            .map(|(n, i)| (n as u64, Ok(i)))
            .collect();
        // A reserved attribute, a missing key, and an input that never parsed.
        let mut reserved = item(layout, 90);
        reserved.insert("_ds".into(), AttributeValue::S("x".into()));
        input.push((90, Ok(reserved)));
        input.push((
            91,
            Ok(Item::from([("body".into(), AttributeValue::S("x".into()))])),
        ));
        input.push((92, Err(HostError::Input("not JSON".into()))));
        let mut failed = Vec::new();
        let report = dynaslice_host::put_many(
            &client,
            &table,
            futures::stream::iter(input),
            &ManyOptions::default(),
            |tag, outcome| {
                if let Err(error) = outcome {
                    failed.push((tag, error.code()));
                }
            },
        )
        .await;
        failed.sort_by_key(|(tag, _)| *tag);
        assert_eq!(
            failed,
            [
                (90, Code::AttributeReserved),
                (91, Code::KeyMissing),
                (92, Code::InputInvalid)
            ]
        );
        assert_eq!((report.written, report.failed), (24, 3));
        for item in &items {
            let back = dynaslice_host::get(&client, &table, item, &GetOptions::default(), &())
                .await
                .unwrap()
                .expect("stored");
            assert!(common::same_item(&back.item, item, &["body".into()]));
        }

        let dir = common::fresh_temp_dir("export");
        let out = dir.join("items.jsonl");
        let outcome = dynaslice_host::export(&client, &table, &out, &QueryOptions::default(), &())
            .await
            .unwrap();
        assert_eq!(outcome.items, 24);
        let text = std::fs::read_to_string(&out).unwrap();
        let mut lines: Vec<Item> = text
            .lines()
            .map(|line| item_from_json(&serde_json::from_str(line).unwrap()).unwrap())
            .collect();
        assert_eq!(lines.len(), 24, "each item once, and no chunk item");
        lines.sort_by_key(|i| {
            common::normalized(i)
                .get("pk")
                .cloned()
                .map(|v| format!("{v:?}"))
        });
        for (line, item) in lines.iter().zip(&items) {
            assert!(common::same_item(line, item, &["body".into()]));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `dynaslice export`, killed (SIGKILL) after its first checkpoint and run
/// again with `--resume`, writes every item exactly once: the temporary
/// file is cut back to the checkpoint's bytes and the Scan continues from
/// its start. (An item collection: its chunk items make many 1 MB pages.)
#[tokio::test]
async fn an_export_killed_and_resumed_writes_every_item_once() {
    let client = common::client();
    let layout = LayoutKind::ItemCollection;
    let table = common::fresh_table(&client, "exportkill", layout).await;
    let items: Vec<Item> = (0..16).map(|n| item(layout, n)).collect();
    let input = items.iter().cloned().map(|i| ((), Ok(i)));
    let report = dynaslice_host::put_many(
        &client,
        &table,
        futures::stream::iter(input),
        &ManyOptions::default(),
        |_, _| {},
    )
    .await;
    assert_eq!(report.written, 16);

    let dir = common::fresh_temp_dir("exportkill");
    let out = dir.join("items.jsonl");
    let checkpoint = dir.join("items.jsonl.dynaslice-export");
    let export = |rest: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
        command
            .args([
                "--endpoint",
                common::endpoint(),
                "export",
                "-t",
                &table.table,
            ])
            .args(["--out", out.to_str().unwrap()])
            .args(rest);
        command
    };
    // About 2,000 read units in all: at 100 a second it runs for seconds.
    common::kill_once_saved(export(&["--rate-limit", "100"]), &checkpoint);
    assert!(
        !out.exists(),
        "a killed export leaves no file under the name"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&checkpoint).unwrap()).unwrap();
    assert!(saved["bytes"].as_u64().unwrap() > 0, "{saved}");

    let resumed = export(&["--resume", "--output", "json"]).output().unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert!(report["items"].as_u64().unwrap() < 16, "{report}");
    assert!(
        !checkpoint.exists(),
        "a finished export removes its checkpoint"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines: Vec<Item> = text
        .lines()
        .map(|line| item_from_json(&serde_json::from_str(line).unwrap()).unwrap())
        .collect();
    assert_eq!(lines.len(), 16, "each item once: {saved} then {report}");
    lines.sort_by_key(|i| format!("{:?}", common::normalized(i).get("pk")));
    for (line, item) in lines.iter().zip(&items) {
        assert!(common::same_item(line, item, &["body".into()]));
    }
    // Resuming with nothing to resume says so.
    let again = export(&["--resume"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("there is none to resume"),
        "{again:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `dynaslice import --folder`: every regular file below the folder is an
/// item under its path (links not followed), a file over --max-size is
/// reported and the rest go in; `--resume` skips the files whose paths
/// sort at or before the checkpoint's.
#[tokio::test]
async fn a_folder_imports_each_file_under_its_path_and_resumes_after_its_checkpoint() {
    let client = common::client();
    let layout = LayoutKind::ChunkTable;
    let dir = common::fresh_temp_dir("folder");
    let folder = dir.join("docs");
    std::fs::create_dir_all(folder.join("sub/deeper")).unwrap();
    let files: [(&str, Vec<u8>); 5] = [
        ("a.txt", b"hello".to_vec()),
        ("big.bin", common::noise(1, 2_500_000)),
        ("empty", Vec::new()),
        ("sub/b.bin", common::noise(2, 1_200_000)),
        (
            "sub/deeper/c.json",
            common::order_history(3, 50_000).into_bytes(),
        ),
    ];
    for (name, bytes) in &files {
        std::fs::write(folder.join(name), bytes).unwrap();
    }
    std::os::unix::fs::symlink(folder.join("a.txt"), folder.join("link")).unwrap();
    // A name that is not UTF-8 cannot be a string key.
    let unnamed =
        folder.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"bad\xff"));
    std::fs::write(&unnamed, b"x").unwrap();
    // A trailing slash: the checkpoint still goes beside the folder.
    let given = format!("{}/", folder.display());
    let import = |table: &str, rest: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dynaslice"))
            .args(["--endpoint", common::endpoint(), "import", "-t", table])
            .args(["--folder", given.as_str(), "--max-size", "2000000"])
            .args(["--output", "json"])
            .args(rest)
            .output()
            .unwrap()
    };
    let stored = async |table: &dynaslice_host::TableConfig, name: &str| {
        dynaslice_host::get(
            &client,
            table,
            &common::key(layout, name),
            &GetOptions::default(),
            &(),
        )
        .await
        .unwrap()
        .map(|back| back.item["data"].clone())
    };

    let table = common::fresh_table(&client, "folder", layout).await;
    let run = import(&table.table, &[]);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(run.status.code(), Some(1), "{report}");
    assert_eq!(report["imported"], 4, "{report}");
    let mut failed: Vec<(String, String)> = report["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().into(),
                f["code"].as_str().unwrap().into(),
            )
        })
        .collect();
    failed.sort();
    assert_eq!(
        failed,
        [
            ("bad\u{fffd}".to_string(), "INPUT_INVALID".to_string()),
            ("big.bin".to_string(), "INPUT_INVALID".to_string())
        ],
        "{report}"
    );
    std::fs::remove_file(&unnamed).unwrap();
    for (name, bytes) in &files {
        let expected = (*name != "big.bin").then(|| AttributeValue::B(bytes.clone()));
        assert_eq!(stored(&table, name).await, expected, "{name}");
    }
    assert_eq!(stored(&table, "link").await, None, "a link is not followed");
    assert!(!dir.join("docs.dynaslice-import").exists());

    // A checkpoint through "empty": a resumed run stores only what sorts after.
    let fresh = common::fresh_table(&client, "folder", layout).await;
    let checkpoint = dir.join("docs.dynaslice-import");
    let saved = serde_json::json!({ "table": fresh.table, "throughPath": "empty" });
    std::fs::write(&checkpoint, saved.to_string()).unwrap();
    let run = import(&fresh.table, &["--resume"]);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(run.status.success(), "{report}");
    assert_eq!(
        (report["imported"].clone(), report["skipped"].clone()),
        (2.into(), 3.into())
    );
    for (name, bytes) in &files {
        let expected = name
            .starts_with("sub/")
            .then(|| AttributeValue::B(bytes.clone()));
        assert_eq!(stored(&fresh, name).await, expected, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
