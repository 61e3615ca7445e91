//! At table scale, the `dynaslice` binary as an operator runs it: `import`
//! of 100,000 items, `export` of them, `verify` of the table, and `gc`
//! over a chunk table of 100,000 chunk items (crashed writes' orphans and
//! live items' chunks) each keep the process's peak RSS under 128 MB,
//! whatever the table's size (printed: `cargo test -p dynaslice-host
//! --test scale -- --nocapture`). Against DynamoDB Local
//! (`DYNASLICE_TEST_SERVER=dynamodb-local`, as `npm test` runs it); against
//! the embedded store's server the same paths run at a tenth of the size,
//! to keep the workspace's run short. Each command in its own process.

mod common;

use std::process::Command;

use dynaslice_core::{AttributeValue, CodecChoice, Item, VersionId, split_item};
use dynaslice_host::{LayoutKind, PutOptions, TableConfig};
use dynaslice_testing::cli_run::{self, Run};

/// Items imported and exported; chunk items gc goes through.
fn n() -> usize {
    match common::server_kind() {
        common::ServerKind::DynamoDbLocal => 100_000,
        common::ServerKind::Embedded => 10_000,
    }
}
/// The bound every command's peak RSS must stay under.
const MAX_PEAK: u64 = 128 << 20;

fn measured(args: &[&str]) -> (Run, u64) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
    command
        .args(["--endpoint", common::endpoint()])
        .args(args)
        .env_remove("DYNASLICE_ENDPOINT");
    let (run, peak) = cli_run::run_measured(command);
    assert_eq!(run.code, 0, "dynaslice {args:?}: {}", run.stderr);
    println!(
        "dynaslice {}: peak RSS {:.1} MB",
        args[0],
        peak as f64 / 1e6
    );
    assert!(peak > 0, "the peak could not be read");
    assert!(peak < MAX_PEAK, "dynaslice {args:?}: peak RSS {peak} bytes");
    (run, peak)
}

/// Chunk items of crashed writes (orphans, 3 hours old) and of live items,
/// at least `n()` in all, the orphans written straight to the chunk table 25
/// to a batch: the live items' chunk count, and the orphans'.
async fn litter(table: &TableConfig) -> (usize, usize) {
    let client = common::client();
    let mut live = 0;
    // 1,000 items of 203 KB cut into ~2 KB chunks (the least): 100 chunk items each.
    let per_item = 100;
    let options = PutOptions {
        compression: CodecChoice::Fixed(dynaslice_core::codec::Compression::NONE),
        chunk_item_bytes: 2_100,
        item_limit: 2_100,
        ..PutOptions::default()
    };
    let stamp = |n: u64| {
        VersionId::new(
            dynaslice_host::fresh_version().unix_ms() - 3 * 3600 * 1000,
            u128::from(n),
        )
    };
    let mut batches = Vec::new();
    for n in 0..(n() / per_item) as u64 {
        let mut item = common::key(LayoutKind::ChunkTable, &format!("doc{n:05}"));
        item.insert("data".into(), AttributeValue::B(common::noise(n, 203_000)));
        // Every tenth item is live: written whole by dynaslice.
        if n % 10 == 0 {
            let outcome = dynaslice_host::put(&client, table, &item, &options, &())
                .await
                .unwrap();
            live += outcome.manifest.map_or(0, |m| m.chunk_count as usize);
            continue;
        }
        let split = split_item(&item, &options.split_options(&table.core(), stamp(n))).unwrap();
        batches.extend(split.chunks);
    }
    let writes = batches.chunks(25).map(|batch| {
        let client = client.clone();
        let requests: Vec<_> = batch
            .iter()
            .map(|chunk| {
                aws_sdk_dynamodb::types::WriteRequest::builder()
                    .put_request(
                        aws_sdk_dynamodb::types::PutRequest::builder()
                            .set_item(Some(dynaslice_host::item_to_sdk(chunk.clone())))
                            .build()
                            .unwrap(),
                    )
                    .build()
            })
            .collect();
        let chunk_table = table.chunk_table.clone();
        async move {
            let mut requests = requests;
            while !requests.is_empty() {
                let answer = client
                    .batch_write_item()
                    .request_items(&chunk_table, requests.clone())
                    .send()
                    .await
                    .expect("a batch");
                requests = answer
                    .unprocessed_items
                    .and_then(|mut left| left.remove(&chunk_table))
                    .unwrap_or_default();
            }
        }
    });
    let orphans = batches.len();
    futures::stream::iter(writes)
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    (live, orphans)
}

use futures::StreamExt;

#[test]
fn import_export_verify_and_gc_of_100_000_items_stay_under_128_mb() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = common::client();
    let table = runtime.block_on(common::fresh_table(
        &client,
        "scale",
        LayoutKind::ChunkTable,
    ));
    let dir = common::fresh_temp_dir("scale");

    // 100,000 items of JSON Lines, about 300 bytes each.
    let file = dir.join("items.jsonl");
    let mut lines = String::new();
    for n in 0..n() {
        let item = serde_json::json!({
            "pk": format!("item{n:06}"),
            "n": n,
            "note": format!("{n:0>240}"),
        });
        lines.push_str(&item.to_string());
        lines.push('\n');
    }
    std::fs::write(&file, lines).unwrap();
    let (run, _) = measured(&[
        "import",
        "-t",
        &table.table,
        "--file",
        file.to_str().unwrap(),
        "--format",
        "plain",
        "--in-flight",
        "32",
        "--output",
        "json",
    ]);
    let imported: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        imported["imported"].as_u64(),
        Some(n() as u64),
        "{imported}"
    );

    let out = dir.join("export.jsonl");
    let (run, _) = measured(&["export", "-t", &table.table, "--out", out.to_str().unwrap()]);
    let exported = std::fs::read_to_string(&out).unwrap();
    assert_eq!(exported.lines().count(), n(), "{}", run.stderr);
    let first: Item = dynaslice_host::json::item_from_json(
        &serde_json::from_str(exported.lines().next().unwrap()).unwrap(),
    )
    .unwrap();
    assert!(matches!(first.get("note"), Some(AttributeValue::S(s)) if s.len() == 240));

    let (run, _) = measured(&["verify", "-t", &table.table, "--output", "json"]);
    let verified: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(verified["items"].as_u64(), Some(n() as u64), "{verified}");

    let (live, orphans) = runtime.block_on(litter(&table));
    assert!(live + orphans >= n(), "{live} + {orphans} chunk items");
    let (run, _) = measured(&[
        "gc",
        "-t",
        &table.table,
        "--segments",
        "4",
        // Every chunk item (the anchors index would hold one entry per
        // 64): what bounds gc's memory is a page, whatever the table.
        "--scan",
        "--output",
        "json",
    ]);
    let collected: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let [chunks, referenced, deleted] =
        ["chunks", "referenced", "deleted"].map(|k| collected[k].as_u64().unwrap() as usize);
    // Each orphan's chunk 0, an anchor, goes with its span: chunks of the
    // span on later pages go unseen and uncounted.
    assert_eq!((referenced, chunks), (live, live + deleted), "{collected}");
    assert!(
        deleted >= orphans / 100 && deleted <= orphans,
        "{collected}"
    );
    // What is left: exactly the live chunks.
    let (run, _) = measured(&[
        "gc",
        "-t",
        &table.table,
        "--scan",
        "--dry-run",
        "--output",
        "json",
    ]);
    let left: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let left = ["chunks", "deleted"].map(|k| left[k].as_u64().unwrap() as usize);
    assert_eq!(left, [live, 0], "{}", run.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}
