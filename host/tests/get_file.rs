//! `dynaslice get --out`: a stored file streamed to disk as its chunks
//! arrive, past the default 64 MiB limit of whole-item reads; the file
//! appears only once every byte was checked, and a failed read leaves no
//! file (and no temporary file) under the final name, and a file already
//! there as it was. Plus the library's `get_file` starting again when an
//! overwrite replaces the item mid-read.

use dynaslice_testing::cli_run;
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use cli_run::{Run, json};
use dynaslice_core::codec::Compression;
use dynaslice_core::{AttributeValue, CodecChoice, Item};
use dynaslice_host::{GetOptions, LayoutKind, Progress, PutOptions, item_to_sdk};
use serde_json::{Value, json};

/// The binary against the shared test server.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
    command.arg("--endpoint").arg(common::endpoint()).args(args);
    command
}

fn dynaslice(args: &[&str]) -> Run {
    cli_run::run(command(args))
}

fn ok(args: &[&str]) -> Run {
    cli_run::ok(command(args), args)
}

/// Fails with exactly one line on stderr naming `code`.
fn fails(args: &[&str], code: &str) -> Run {
    cli_run::fails(command(args), args, code)
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dynaslice-test-getfile-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names in `dir`, sorted (a temporary file left behind shows here).
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// True when the file at `path` holds exactly `bytes` (no 200 MB diff printed).
fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|read| read == bytes)
}

fn create_table(prefix: &str) -> String {
    let table = common::table_name(prefix);
    ok(&[
        "tables",
        "create",
        "--table",
        &table,
        "--partition-key",
        "pk",
    ]);
    table
}

/// Runs the binary, which must succeed, and prints its peak resident set.
fn ok_measured(what: &str, args: &[&str]) -> (Run, u64) {
    let (run, peak) = cli_run::run_measured(command(args));
    assert_eq!(run.code, 0, "dynaslice {args:?} failed: {}", run.stderr);
    println!("{what}: peak RSS {:.1} MiB", peak as f64 / 1048576.0);
    (run, peak)
}

#[test]
fn a_200_mb_file_needs_no_size_flag_and_stays_in_bounded_memory() {
    let dir = tempdir("big");
    let table = create_table("getfile-big");
    // Random (incompressible), stored with codec none: 190.7 MiB, over the
    // 64 MiB limit of whole-item reads.
    let bytes = common::noise(21, 200_000_015);
    let source = dir.join("big.bin");
    std::fs::write(&source, &bytes).unwrap();
    let t = table.as_str();
    // Holding the payload would take its 190.7 MiB and more: each command
    // stays below it (what they hold is a few chunks and the requests in
    // flight, whatever the payload's size).
    let bound = bytes.len() as u64;

    let source_arg = source.to_str().unwrap();
    let put = [
        "put", "-t", t, "-k", "pk=big", "--file", source_arg, "--codec", "none",
    ];
    let (_, peak) = ok_measured("put --file 200 MB", &put);
    assert!(peak < bound, "put held {peak} bytes");
    std::fs::remove_file(&source).unwrap();

    let (run, peak) = ok_measured("inspect", &["inspect", "-t", t, "-k", "pk=big", "--json"]);
    assert!(peak < bound, "inspect held {peak} bytes");
    let found = json(&run);
    // The value stream (docs/FORMAT.md): "DSV" 01, count 1, name length 1,
    // "data", tag 03 and a 4-byte varint of 200,000,015: 15 bytes before it.
    assert_eq!(found["manifest"]["rawBytes"], 200_000_030u64, "{found}");

    // Reading it whole into memory is still held to the limit, and says how
    // to raise it.
    let refused = fails(&["get", "-t", t, "-k", "pk=big"], "DECOMPRESS_LIMIT");
    assert!(
        refused.stderr.contains("--max-size"),
        "names the flag that raises the limit: {}",
        refused.stderr
    );

    let back = dir.join("back.bin");
    let out = [
        "get",
        "-t",
        t,
        "-k",
        "pk=big",
        "--json",
        "--out",
        back.to_str().unwrap(),
    ];
    let (run, peak) = ok_measured("get --out", &out);
    assert!(peak < bound, "get --out held {peak} bytes");
    assert_eq!(json(&run)["bytes"], 200_000_015, "{}", run.stdout);
    assert!(holds(&back, &bytes), "the file read back differs");
    assert_eq!(names(&dir), ["back.bin"], "no temporary file is left");

    let (_, peak) = ok_measured("rm", &["rm", "-t", t, "-k", "pk=big"]);
    assert!(peak < bound, "rm held {peak} bytes");
    fails(&["inspect", "-t", t, "-k", "pk=big"], "NOT_FOUND");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_compressed_file_streams_back() {
    let dir = tempdir("deflate");
    let table = create_table("getfile-deflate");
    // ~96 MB of JSON text, stored deflated (a few MB).
    let text = common::order_history(22, 8_000_000);
    let bytes = text.as_bytes().repeat(12);
    let source = dir.join("orders.json");
    std::fs::write(&source, &bytes).unwrap();
    let put = ok(&[
        "put",
        "-t",
        &table,
        "-k",
        "pk=orders",
        "--file",
        source.to_str().unwrap(),
        "--codec",
        "deflate",
    ]);
    assert!(put.stdout.contains("deflate"), "{}", put.stdout);
    let back = dir.join("back.json");
    let human = ok(&[
        "get",
        "-t",
        &table,
        "-k",
        "pk=orders",
        "--out",
        back.to_str().unwrap(),
    ]);
    assert!(human.stdout.contains("wrote"), "{}", human.stdout);
    assert!(holds(&back, &bytes), "the file read back differs");
    assert_eq!(names(&dir), ["back.json", "orders.json"]);
    ok(&["rm", "-t", &table, "-k", "pk=orders"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_chunk_leaves_no_file_and_an_existing_one_untouched() {
    let client = common::client();
    let table = common::fresh_table(&client, "getfile-damaged", LayoutKind::ChunkTable).await;
    let dir = tempdir("damaged");
    let key = common::key(LayoutKind::ChunkTable, "photo");
    let bytes = common::noise(23, 6_000_000);
    let mut item = key.clone();
    item.insert("data".into(), AttributeValue::B(bytes.clone()));
    let options = PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        ..PutOptions::default()
    };
    dynaslice_host::put(&client, &table, &item, &options, &())
        .await
        .expect("put");
    let get = |path: PathBuf| {
        let table = table.table.clone();
        tokio::task::spawn_blocking(move || {
            let path = path.to_str().unwrap().to_string();
            dynaslice(&["get", "-t", &table, "-k", "pk=photo", "--out", &path])
        })
    };

    // Intact: an existing file is replaced.
    let existing = dir.join("existing.bin");
    std::fs::write(&existing, b"what was here before").unwrap();
    assert_eq!(get(existing.clone()).await.unwrap().code, 0);
    assert!(holds(&existing, &bytes));

    // One byte flipped in a middle chunk, after earlier chunks were written
    // to the temporary file.
    let inspected = dynaslice_host::inspect(&client, &table, &key)
        .await
        .unwrap()
        .unwrap();
    let middle = inspected.chunks.len() / 2;
    let chunk_bytes = inspected.manifest.unwrap().chunk_bytes as usize;
    assert!(middle >= 5, "a middle chunk: {middle}");
    let mut chunk = common::stored_chunk(&client, &table, &key, middle).await;
    let Some(AttributeValue::B(data)) = chunk.get_mut("_d") else {
        panic!("chunk data")
    };
    data[1000] ^= 0x01;
    client
        .put_item()
        .table_name(&table.chunk_table)
        .set_item(Some(item_to_sdk(chunk)))
        .send()
        .await
        .expect("tamper");

    let fresh = dir.join("fresh.bin");
    let run = get(fresh.clone()).await.unwrap();
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("[CHUNK_DIGEST_MISMATCH]")
            && run.stderr.contains(&format!("chunk {middle}")),
        "{}",
        run.stderr
    );
    assert!(!fresh.exists(), "no file under the final name");

    std::fs::write(&existing, b"what was here before").unwrap();
    let run = get(existing.clone()).await.unwrap();
    assert!(
        run.stderr.contains("[CHUNK_DIGEST_MISMATCH]"),
        "{}",
        run.stderr
    );
    assert!(holds(&existing, b"what was here before"), "untouched");
    assert_eq!(names(&dir), ["existing.bin"], "no temporary file is left");

    // To standard output, bytes already out cannot be taken back: the
    // checked chunks before the damaged one went out, none of its bytes
    // did, and the error is one line on stderr with a non-zero exit.
    let piped = dir.join("piped.bin");
    let mut to_stdout = command(&["get", "-t", &table.table, "-k", "pk=photo", "--out", "-"]);
    to_stdout.stdout(std::fs::File::create(&piped).unwrap());
    let run = tokio::task::spawn_blocking(move || to_stdout.output().unwrap())
        .await
        .unwrap();
    assert!(!run.status.success());
    let said = String::from_utf8(run.stderr).unwrap();
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("[CHUNK_DIGEST_MISMATCH]"), "{said}");
    let out = std::fs::read(&piped).unwrap();
    assert!(
        !out.is_empty() && bytes.starts_with(&out),
        "a checked prefix"
    );
    // The frame's 13-byte header and the stream's 15 bytes before the
    // payload (docs/FORMAT.md) come first in chunk 0.
    assert!(
        out.len() <= middle * chunk_bytes - 28,
        "nothing of the damaged chunk {middle}: {} bytes out",
        out.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Overwrites the item with `next` (from another thread and runtime, as
/// another writer would) the first time a chunk arrives.
struct OverwriteOnce {
    done: AtomicBool,
    table: dynaslice_host::TableConfig,
    next: Item,
}

impl Progress for OverwriteOnce {
    fn advance(&self, _bytes: u64) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        let (table, next) = (self.table.clone(), self.next.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let options = PutOptions {
                    compression: CodecChoice::Fixed(Compression::NONE),
                    ..PutOptions::default()
                };
                dynaslice_host::put(&common::client(), &table, &next, &options, &())
                    .await
                    .expect("overwrite");
            });
        })
        .join()
        .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overwrite_mid_read_starts_the_file_again() {
    let client = common::client();
    let table = common::fresh_table(&client, "getfile-overwrite", LayoutKind::ChunkTable).await;
    let dir = tempdir("overwrite");
    let key = common::key(LayoutKind::ChunkTable, "clip");
    let with = |bytes: &[u8]| {
        let mut item = key.clone();
        item.insert("data".into(), AttributeValue::B(bytes.to_vec()));
        item
    };
    let (old, new) = (common::noise(24, 5_000_000), common::noise(25, 4_000_000));
    let options = PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        ..PutOptions::default()
    };
    dynaslice_host::put(&client, &table, &with(&old), &options, &())
        .await
        .expect("put");
    let progress = OverwriteOnce {
        done: AtomicBool::new(false),
        table: table.clone(),
        next: with(&new),
    };
    // One request in flight: the chunks after the first request's are
    // asked for after the overwrite deleted them.
    let read = GetOptions {
        concurrency: 1,
        ..GetOptions::default()
    };
    let path = dir.join("clip.bin");
    let outcome = dynaslice_host::get_file(&client, &table, &key, "data", &path, &read, &progress)
        .await
        .expect("read again from the new version")
        .expect("found");
    assert_eq!(outcome.parent_reads, 2, "{outcome:?}");
    assert_eq!(outcome.bytes, new.len() as u64);
    assert!(holds(&path, &new), "the file is the new version, whole");
    assert_eq!(names(&dir), ["clip.bin"]);

    // No re-reads allowed: a clear error, and no file.
    dynaslice_host::put(&client, &table, &with(&old), &options, &())
        .await
        .expect("put");
    let progress = OverwriteOnce {
        done: AtomicBool::new(false),
        table: table.clone(),
        next: with(&new),
    };
    let read = GetOptions {
        max_rereads: 0,
        ..read
    };
    let other = dir.join("other.bin");
    let error = dynaslice_host::get_file(&client, &table, &key, "data", &other, &read, &progress)
        .await
        .expect_err("no re-read allowed");
    assert_eq!(error.code(), "CHUNKS_VANISHED", "{error}");
    assert_eq!(names(&dir), ["clip.bin"], "no file, no temporary file");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_item_that_is_not_a_stored_file_is_written_as_json() {
    let dir = tempdir("json");
    let table = create_table("getfile-json");
    let doc = r#"{"title": {"S": "hello"}, "n": {"N": "42"}}"#;
    ok(&["put", "-t", &table, "-k", "pk=doc", "--json", doc]);
    let get = |attribute: &str, name: &str| {
        let path = dir.join(name);
        ok(&[
            "get",
            "-t",
            &table,
            "-k",
            "pk=doc",
            "--attribute",
            attribute,
            "--out",
            path.to_str().unwrap(),
        ]);
        std::fs::read(&path).unwrap()
    };
    // No such attribute, or one of another type: the item as DynamoDB JSON.
    for (attribute, name) in [("data", "missing.json"), ("n", "number.json")] {
        let item: Value = serde_json::from_slice(&get(attribute, name)).unwrap();
        assert_eq!(item["title"]["S"], "hello", "{attribute}: {item}");
        assert_eq!(item["pk"]["S"], "doc", "{attribute}: {item}");
    }
    // A string attribute: its text.
    assert_eq!(get("title", "title.txt"), b"hello");
    assert_eq!(
        names(&dir),
        ["missing.json", "number.json", "title.txt"],
        "no temporary file is left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `estimate` prices an overwrite as DynamoDB bills it: the new chunks and
/// parent, the commit billed by the larger of the two parents, and each
/// replaced chunk's delete by that chunk's size.
#[test]
fn estimate_of_an_overwrite_equals_what_the_overwrite_consumes() {
    let dir = tempdir("estimate");
    let table = create_table("estimate");
    let t = table.as_str();
    let old = dir.join("old.bin");
    let new = dir.join("new.bin");
    std::fs::write(&old, common::noise(31, 1_000_000)).unwrap();
    std::fs::write(&new, common::noise(32, 1_300_000)).unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let put = |file: &str| {
        let args = [
            "--output", "json", "put", "-t", t, "-k", "pk=doc", "--file", file, "--codec", "none",
        ];
        json(&ok(&args))
    };
    let estimate = |file: &str| {
        json(&ok(&[
            "--output", "json", "estimate", "-t", t, "-k", "pk=doc", "--file", file, "--codec",
            "none",
        ]))
    };
    // Nothing stored: the plan alone, and the write consumes exactly it.
    let first = estimate(old);
    assert_eq!(first["replaces"], false, "{first}");
    assert_eq!(first["replaceWriteUnits"], 0, "{first}");
    let wrote = put(old);
    assert_eq!(
        wrote["consumedWriteUnits"].as_f64(),
        first["totalWriteUnits"].as_f64(),
        "{wrote}"
    );
    // An overwrite: 4 new chunks and the parent, and the 3 old chunks' deletes.
    let second = estimate(new);
    assert_eq!(second["replaces"], true, "{second}");
    // By hand from docs/FORMAT.md: the old frame is 1,000,035 bytes (13 of
    // header, 14 of value-stream prefix, the data, 8 of trailer) in chunks
    // of 409,538 bytes with 51 bytes of key and digest each (pk "doc"),
    // and 11 more on chunk 0, an anchor: deletes of 409,600, 409,589 and
    // 181,010 bytes, 400 + 400 + 177 units, and 1 for chunk 0's entry in
    // the anchors index; the parents are the same size.
    assert_eq!(second["replaceWriteUnits"], 978, "{second}");
    let replaced = put(new);
    assert_eq!(
        replaced["consumedWriteUnits"].as_f64(),
        second["totalWriteUnits"].as_f64(),
        "estimated {second}, consumed {replaced}"
    );
    println!(
        "overwrite: estimated {} WCU ({} to replace), consumed {}",
        second["totalWriteUnits"], second["replaceWriteUnits"], replaced["consumedWriteUnits"]
    );
    // The same item again: nothing an update would change (its frame's
    // digest is the stored one).
    let same = estimate(new);
    assert!(same["updateInstead"].is_null(), "{same}");

    // A small item and one attribute changed: an update instead is one
    // UpdateItem, priced as the update then consumes.
    let item = |status: &str| {
        format!(r#"{{"status": {{"S": "{status}"}}, "note": {{"S": "kept"}}, "n": {{"N": "7"}}}}"#)
    };
    let small = |args: &[&str]| {
        let mut all = vec!["--output", "json"];
        all.extend_from_slice(args);
        json(&ok(&all))
    };
    small(&["put", "-t", t, "-k", "pk=small", "--json", &item("draft")]);
    let priced = small(&[
        "estimate",
        "-t",
        t,
        "-k",
        "pk=small",
        "--json",
        &item("done"),
    ]);
    let instead = &priced["updateInstead"];
    assert_eq!(instead["path"], "parent", "{priced}");
    assert_eq!(instead["set"], json!(["status"]), "{priced}");
    assert_eq!(instead["remove"], json!([]), "{priced}");
    let updated = small(&[
        "update",
        "-t",
        t,
        "-k",
        "pk=small",
        "--set",
        r#"{"status": {"S": "done"}}"#,
    ]);
    assert_eq!(
        updated["consumedWriteUnits"].as_f64(),
        instead["writeUnits"].as_f64(),
        "estimated {priced}, consumed {updated}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
