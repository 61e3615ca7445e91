//! The `dynaslice` binary as a person and a script use it: every command,
//! human and JSON output, one clear line and a non-zero exit for every
//! error, and the embedded store persisting between runs.

use dynaslice_testing::cli_run;
mod common;

use std::path::Path;
use std::process::Command;

use cli_run::{Run, json};

/// The binary, on the embedded store unless the arguments name a server.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
    command.args(args).env_remove("DYNASLICE_ENDPOINT");
    command
}

fn dynaslice(args: &[&str]) -> Run {
    cli_run::run(command(args))
}

fn ok(args: &[&str]) -> Run {
    cli_run::ok(command(args), args)
}

/// `args` after `--endpoint <endpoint>`.
fn with_endpoint(endpoint: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--endpoint".to_string(), endpoint.to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    all
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Fails with exactly one line on stderr naming `code`.
fn fails(args: &[&str], code: &str) -> Run {
    cli_run::fails(command(args), args, code)
}

#[test]
fn every_command_against_a_server() {
    let endpoint = common::endpoint();
    let dir = tempdir("cli");
    let table = common::table_name("cli");
    let at = |rest: &[&str]| with_endpoint(endpoint, rest);
    let run = |rest: &[&str]| ok(&strs(&at(rest)));
    let fail = |rest: &[&str], code: &str| fails(&strs(&at(rest)), code);

    let created = run(&[
        "tables",
        "create",
        "--table",
        &table,
        "--partition-key",
        "id",
        "--json",
    ]);
    assert_eq!(json(&created)["chunkTable"], format!("{table}_chunks"));

    let file = dir.join("photo.bin");
    let bytes = common::noise(3, 3_000_000);
    std::fs::write(&file, &bytes).unwrap();
    let file = file.to_str().unwrap();

    let estimate = json(&run(&[
        "estimate", "-t", &table, "-k", "id=photo", "--file", file, "--output", "json",
    ]));
    assert!(estimate["itemBytes"].as_u64().unwrap() > 3_000_000);
    let chunks = estimate["chunks"].as_u64().unwrap();
    assert!(chunks >= 8, "{estimate}");
    assert!(
        estimate["writeUnits"].as_u64().unwrap() >= 2930,
        "{estimate}"
    );
    // Both modes' prices: 3,000,000 bytes are at least 2,930 KB of chunk
    // writes; a transaction bills each twice; the planned mode's is one of them.
    let batch = estimate["costs"]["batch"].as_u64().unwrap();
    assert!((2930..2960).contains(&batch), "{estimate}");
    assert_eq!(
        estimate["costs"]["atomic"].as_u64(),
        Some(2 * batch),
        "{estimate}"
    );
    let mode = estimate["mode"].as_str().unwrap();
    assert_eq!(
        estimate["costs"][mode], estimate["writeUnits"],
        "{estimate}"
    );
    // Priced at us-east-1's list price, $0.625 per million write units;
    // with no S3 store the payload stays in chunks.
    assert_eq!(estimate["storedIn"], "chunks", "{estimate}");
    let units = estimate["writeUnits"].as_f64().unwrap();
    let dollars = estimate["prices"]["chunks"]["writeDollars"]
        .as_f64()
        .unwrap();
    assert!((dollars - units * 0.625e-6).abs() < 1e-12, "{estimate}");
    // With one, the 3 MB file goes to S3: one PutObject ($0.005 per
    // 1,000) and the parent's one write unit.
    let data = dir.join("local.db");
    let s3_run = |rest: &[&str]| {
        let mut all = vec!["--data", data.to_str().unwrap(), "--s3-bucket", "media"];
        all.extend_from_slice(rest);
        run(&all)
    };
    let offload = json(&s3_run(&[
        "estimate", "-t", &table, "-k", "id=photo", "--file", file, "--output", "json",
    ]));
    assert_eq!(offload["storedIn"], "s3", "{offload}");
    assert_eq!(offload["prices"]["s3"]["writeRequests"], 1, "{offload}");
    let s3_write = offload["prices"]["s3"]["writeDollars"].as_f64().unwrap();
    assert!(
        (s3_write - (0.005e-3 + 0.625e-6)).abs() < 1e-12,
        "{offload}"
    );
    // put spends the parent's one unit: no chunk, the manifest names the
    // object.
    assert_eq!(offload["writeUnits"], 1, "{offload}");
    assert_eq!(offload["chunks"], 0, "{offload}");
    assert!(
        offload["manifest"]["object"]["key"].is_string(),
        "{offload}"
    );
    // In one transaction, put writes the file as an item, in chunks.
    let atomic_file = json(&s3_run(&[
        "estimate", "-t", &table, "-k", "id=photo", "--file", file, "--mode", "atomic", "--output",
        "json",
    ]));
    assert_eq!(atomic_file["storedIn"], "chunks", "{atomic_file}");
    assert_eq!(
        atomic_file["writeUnits"], estimate["costs"]["atomic"],
        "{atomic_file}"
    );
    // An item from --json of at least the threshold goes to S3 as well,
    // in one frame: estimate says so, put stores it there (one object, no
    // chunk), get reads it back.
    let hex: String = bytes[..1_000_000]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let doc_path = dir.join("big.json");
    std::fs::write(
        &doc_path,
        format!(r#"{{"body": {{"S": "{hex}"}}, "n": {{"N": "7"}}}}"#),
    )
    .unwrap();
    let at_doc = format!("@{}", doc_path.display());
    // 2 MB of text compresses to a frame that would fit inline: it goes to
    // S3 all the same, and estimate prices the parent put commits (a few
    // hundred bytes naming the object), not one carrying the frame.
    let log: String = (0..200_000u32)
        .map(|i| format!("line {i} of a log; "))
        .collect();
    let log_path = dir.join("log.json");
    std::fs::write(&log_path, format!(r#"{{"body": {{"S": "{log}"}}}}"#)).unwrap();
    let at_log = format!("@{}", log_path.display());
    let log_estimate = json(&s3_run(&[
        "estimate", "-t", &table, "-k", "id=log", "--json", &at_log, "--output", "json",
    ]));
    assert_eq!(log_estimate["storedIn"], "s3", "{log_estimate}");
    let log_put = json(&s3_run(&[
        "put", "-t", &table, "-k", "id=log", "--json", &at_log, "--output", "json",
    ]));
    assert_eq!(log_estimate["writeUnits"], 1, "{log_estimate}");
    assert_eq!(
        log_estimate["writeUnits"].as_f64(),
        log_put["consumedWriteUnits"].as_f64(),
        "{log_estimate} {log_put}"
    );
    s3_run(&["rm", "-t", &table, "-k", "id=log"]);
    let whole = json(&s3_run(&[
        "estimate", "-t", &table, "-k", "id=big", "--json", &at_doc, "--output", "json",
    ]));
    assert_eq!(whole["storedIn"], "s3", "{whole}");
    assert_eq!(whole["chunks"], 0, "{whole}");
    let put = json(&s3_run(&[
        "put", "-t", &table, "-k", "id=big", "--json", &at_doc, "--output", "json",
    ]));
    // What estimate said the write costs is what put planned and what the
    // server reported: the parent's units (the object's requests are S3's).
    assert_eq!(whole["writeUnits"], put["writeUnits"], "{whole} {put}");
    assert_eq!(
        whole["writeUnits"].as_f64(),
        put["consumedWriteUnits"].as_f64(),
        "{whole} {put}"
    );
    assert!(whole["writeUnits"].as_u64().unwrap() < 5, "{whole}");
    let inspect = json(&s3_run(&[
        "inspect", "-t", &table, "-k", "id=big", "--json",
    ]));
    assert_eq!(inspect["manifest"]["chunks"], 0, "{inspect}");
    let object = inspect["manifest"]["object"]["key"].as_str().unwrap();
    assert!(
        object.starts_with(&format!("dynaslice/{table}/big/")),
        "{inspect}"
    );
    let got = json(&s3_run(&["get", "-t", &table, "-k", "id=big"]));
    assert_eq!(got["body"]["S"].as_str(), Some(hex.as_str()));
    assert_eq!(got["n"]["N"], "7");
    // In one transaction it stays in chunks.
    let atomic = json(&s3_run(&[
        "estimate", "-t", &table, "-k", "id=big", "--json", &at_doc, "--mode", "atomic",
        "--output", "json",
    ]));
    assert_eq!(atomic["storedIn"], "chunks", "{atomic}");
    s3_run(&["rm", "-t", &table, "-k", "id=big"]);
    // estimate wrote nothing
    assert_eq!(
        json(&run(&["ls", "-t", &table, "--json"]))["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    let put = run(&["put", "-t", &table, "-k", "id=photo", "--file", file]);
    assert!(put.stdout.contains("stored id=photo"), "{}", put.stdout);
    assert!(put.stdout.contains("MiB"), "human sizes: {}", put.stdout);

    let back = dir.join("back.bin");
    run(&[
        "get",
        "-t",
        &table,
        "-k",
        "id=photo",
        "--out",
        back.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read(&back).unwrap() == bytes,
        "the file read back differs"
    );

    let inspect = json(&run(&["inspect", "-t", &table, "-k", "id=photo", "--json"]));
    assert_eq!(inspect["layout"], "table");
    assert_eq!(inspect["manifest"]["codec"], "none");
    assert_eq!(
        inspect["chunks"].as_array().unwrap().len() as u64,
        inspect["manifest"]["chunks"].as_u64().unwrap()
    );
    let human = run(&["inspect", "-t", &table, "-k", "id=photo"]);
    assert!(
        human.stdout.contains("chunk 0:") && human.stdout.contains("RCU"),
        "{}",
        human.stdout
    );

    let doc = r#"{"title": {"S": "hello"}, "n": {"N": "42"}, "tags": {"SS": ["a", "b"]}}"#;
    run(&["put", "-t", &table, "-k", "id=doc", "--json", doc]);
    let got = json(&run(&["get", "-t", &table, "-k", "id=doc"]));
    assert_eq!(got["title"]["S"], "hello");
    assert_eq!(got["id"]["S"], "doc");

    let listed = json(&run(&["ls", "-t", &table, "--json"]));
    assert_eq!(listed["items"].as_array().unwrap().len(), 2, "{listed}");

    // Over every chunk (`--scan`): the counts are of chunks.
    let gc = json(&run(&[
        "gc", "-t", &table, "--grace", "0s", "--scan", "--json",
    ]));
    assert_eq!(gc["deleted"], 0, "nothing to collect: {gc}");
    assert_eq!(gc["referenced"], inspect["manifest"]["chunks"]);
    // Over the anchors index: one anchor for its (fewer than 65) chunks.
    let gc = json(&run(&["gc", "-t", &table, "--grace", "0s", "--json"]));
    assert_eq!(
        (gc["scanned"].as_str(), gc["referenced"].as_u64()),
        (Some("anchors"), Some(1)),
        "{gc}"
    );

    run(&["rm", "-t", &table, "-k", "id=photo"]);
    fail(&["get", "-t", &table, "-k", "id=photo"], "NOT_FOUND");
    let gc = json(&run(&["gc", "-t", &table, "--grace", "0s", "--json"]));
    assert_eq!(
        (gc["chunks"].as_u64(), gc["deleted"].as_u64()),
        (Some(0), Some(0)),
        "rm deleted the chunks: {gc}"
    );

    // Errors: one line, a code, non-zero.
    fail(
        &["get", "-t", "no-such-table", "-k", "id=x"],
        "TABLE_NOT_FOUND",
    );
    fail(&["get", "-t", &table, "-k", "nope=x"], "INPUT_INVALID");
    fail(
        &["put", "-t", &table, "-k", "id=x", "--json", "{not json"],
        "INPUT_INVALID",
    );
    fail(
        &[
            "put",
            "-t",
            &table,
            "-k",
            "id=x",
            "--json",
            r#"{"s": {"SS": []}}"#,
        ],
        "SET_EMPTY",
    );
    fail(
        &["put", "-t", &table, "-k", "id=x", "--file", "/no/such/file"],
        "IO_ERROR",
    );
    fail(
        &[
            "put",
            "-t",
            &table,
            "-k",
            "id=big",
            "--file",
            file,
            "--max-size",
            "1000000",
        ],
        "VIRTUAL_ITEM_TOO_LARGE",
    );
    let atomic = run(&[
        "put", "-t", &table, "-k", "id=small", "--file", file, "--mode", "atomic",
    ]);
    assert!(
        atomic.stdout.contains("(atomic mode)"),
        "3 MB fits one transaction: {}",
        atomic.stdout
    );
    let five = dir.join("five.bin");
    std::fs::write(&five, common::noise(5, 5_000_000)).unwrap();
    fail(
        &[
            "put",
            "-t",
            &table,
            "-k",
            "id=x",
            "--file",
            five.to_str().unwrap(),
            "--mode",
            "atomic",
        ],
        "ATOMIC_TOO_LARGE",
    );
    // ...and as JSON for scripts.
    let run_json = dynaslice(
        &at(&[
            "get",
            "-t",
            "no-such-table",
            "-k",
            "id=x",
            "--output",
            "json",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    assert_eq!(run_json.code, 1);
    assert_eq!(json(&run_json)["error"]["code"], "TABLE_NOT_FOUND");
    // Usage errors come from the argument parser, with its own exit code.
    assert_eq!(dynaslice(&["put", "--table"]).code, 2);
}

/// `put` overwrites a stored item by default (last writer wins, the
/// replaced version reported and its chunks deleted); `--if-absent` and
/// `--if-version` refuse with CONFLICT when the stored item is not what
/// they name, and write when it is.
#[test]
fn put_overwrites_by_default_and_locks_with_if_flags() {
    let endpoint = common::endpoint();
    let dir = tempdir("ifflags");
    let table = common::table_name("ifflags");
    let at = |rest: &[&str]| with_endpoint(endpoint, rest);
    let run = |rest: &[&str]| ok(&strs(&at(rest)));
    let fail = |rest: &[&str], code: &str| fails(&strs(&at(rest)), code);
    run(&[
        "tables",
        "create",
        "--table",
        &table,
        "--partition-key",
        "id",
    ]);
    let first = dir.join("first.bin");
    std::fs::write(&first, common::noise(11, 1_500_000)).unwrap();
    let second = dir.join("second.bin");
    let second_bytes = common::noise(12, 900_000);
    std::fs::write(&second, &second_bytes).unwrap();
    let put = |file: &Path, extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["put", "-t", &table, "-k", "id=f"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--file".to_string(), file.to_str().unwrap().to_string()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };

    // --if-absent on a new key writes; on a stored one it is a conflict.
    let created = json(&run(&put(&first, &["--if-absent", "--output", "json"])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()));
    assert_eq!(created["mode"], "batch", "batch is the default: {created}");
    assert_eq!(created["replaced"], serde_json::Value::Null);
    assert_eq!(created["superseded"], false);
    let v1 = created["manifest"]["version"].as_str().unwrap().to_string();
    let refused = fail(
        &put(&second, &["--if-absent"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "CONFLICT",
    );
    assert!(refused.stderr.contains("id=f"), "{}", refused.stderr);

    // The default overwrites what is stored and names what it replaced.
    let overwritten = json(&run(&put(&second, &["--output", "json"])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()));
    assert_eq!(overwritten["replaced"], v1.as_str(), "{overwritten}");
    let v2 = overwritten["manifest"]["version"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(v1, v2);

    // --if-version: a stale version is a conflict, the stored one writes.
    fail(
        &put(&first, &["--if-version", &v1])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "CONFLICT",
    );
    fail(
        &put(&first, &["--if-version", "not-a-version"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "INPUT_INVALID",
    );
    let back = dir.join("back.bin");
    run(&[
        "get",
        "-t",
        &table,
        "-k",
        "id=f",
        "--out",
        back.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read(&back).unwrap() == second_bytes,
        "a refused put changed the stored item"
    );
    let locked = json(&run(&put(
        &first,
        &["--if-version", &v2, "--output", "json"],
    )
    .iter()
    .map(String::as_str)
    .collect::<Vec<_>>()));
    assert_eq!(locked["replaced"], v2.as_str(), "{locked}");
    // Replaced versions' chunks were deleted: nothing is left for gc.
    let gc = json(&run(&[
        "gc",
        "-t",
        &table,
        "--grace",
        "0s",
        "--dry-run",
        "--json",
    ]));
    assert_eq!(gc["deleted"], 0, "no unreferenced chunks: {gc}");
    assert_eq!(gc["chunks"], gc["referenced"], "{gc}");

    // A small item is one unconditional PutItem replacing the virtual one.
    let doc = r#"{"title": {"S": "small now"}}"#;
    let small = json(&run(&[
        "put", "-t", &table, "-k", "id=f", "--json", doc, "--output", "json",
    ]));
    assert_eq!(small["mode"], "single");
    assert_eq!(
        small["replaced"], locked["manifest"]["version"],
        "the returned old parent names the version: {small}"
    );
    let gc = json(&run(&[
        "gc",
        "-t",
        &table,
        "--grace",
        "0s",
        "--dry-run",
        "--json",
    ]));
    assert_eq!(gc["chunks"], 0, "its chunks were deleted: {gc}");
    // The two flags exclude each other (a usage error).
    let both = dynaslice(
        &at(&[
            "put",
            "-t",
            &table,
            "-k",
            "id=f",
            "--json",
            doc,
            "--if-absent",
            "--if-version",
            &v2,
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    assert_eq!(both.code, 2, "{}", both.stderr);
}

#[test]
fn update_sets_and_removes_attributes_and_says_which_way_it_went() {
    let endpoint = common::endpoint();
    let dir = tempdir("update");
    let table = common::table_name("cliupdate");
    let at = |rest: &[&str]| with_endpoint(endpoint, rest);
    let run = |rest: &[&str]| ok(&strs(&at(rest)));
    let fail = |rest: &[&str], code: &str| fails(&strs(&at(rest)), code);
    run(&[
        "tables",
        "create",
        "--table",
        &table,
        "--partition-key",
        "id",
    ]);
    let file = dir.join("doc.bin");
    std::fs::write(&file, common::noise(21, 1_200_000)).unwrap();
    run(&[
        "put",
        "-t",
        &table,
        "-k",
        "id=d",
        "--file",
        file.to_str().unwrap(),
    ]);

    // Dry run: the plan and its price, nothing changed.
    let set = r#"{"status": {"S": "done"}, "n": {"N": "3"}}"#;
    let dry = json(&run(&[
        "update",
        "-t",
        &table,
        "-k",
        "id=d",
        "--set",
        set,
        "--dry-run",
        "--output",
        "json",
    ]));
    assert_eq!(
        (dry["path"].as_str(), dry["applied"].as_bool()),
        (Some("parent"), Some(false)),
        "{dry}"
    );
    let item = json(&run(&["get", "-t", &table, "-k", "id=d"]));
    assert!(
        item.get("data").is_some() && item.get("status").is_none(),
        "a dry run changes nothing"
    );

    let done = json(&run(&[
        "update", "-t", &table, "-k", "id=d", "--set", set, "--output", "json",
    ]));
    assert_eq!(
        (done["path"].as_str(), done["applied"].as_bool()),
        (Some("parent"), Some(true)),
        "{done}"
    );
    assert_eq!(
        done["consumedWriteUnits"].as_f64(),
        done["writeUnits"].as_f64(),
        "{done}"
    );
    let text = run(&["update", "-t", &table, "-k", "id=d", "--remove", "n"]).stdout;
    assert!(text.contains("one UpdateItem of the parent"), "{text}");
    let item = json(&run(&["get", "-t", &table, "-k", "id=d"]));
    assert_eq!(item["status"], serde_json::json!({"S": "done"}));
    assert!(item.get("n").is_none(), "removed");

    // The file is in the payload: a rewrite.
    let rewrite = json(&run(&[
        "update",
        "-t",
        &table,
        "-k",
        "id=d",
        "--set",
        r#"{"data": {"B": "AAEC"}}"#,
        "--output",
        "json",
    ]));
    assert_eq!(rewrite["path"], "rewrite", "{rewrite}");
    assert_eq!(rewrite["reason"], "data is in the payload", "{rewrite}");

    fail(
        &[
            "update",
            "-t",
            &table,
            "-k",
            "id=d",
            "--set",
            r#"{"id": {"S": "e"}}"#,
        ],
        "UPDATE_INVALID",
    );
    fail(
        &["update", "-t", &table, "-k", "id=d", "--set", "not json"],
        "INPUT_INVALID",
    );
    let usage = dynaslice(&strs(&at(&["update", "-t", &table, "-k", "id=d"])));
    assert!(
        usage.code != 0 && usage.stderr.contains("--set"),
        "{}",
        usage.stderr
    );
}

#[test]
fn query_prints_each_item_whole_and_no_chunk() {
    let endpoint = common::endpoint();
    let dir = tempdir("query");
    let table = common::table_name("cliquery");
    let at = |rest: &[&str]| with_endpoint(endpoint, rest);
    let run = |rest: &[&str]| ok(&strs(&at(rest)));
    run(&[
        "tables",
        "create",
        "--table",
        &table,
        "--sort-key",
        "sk",
        "--layout",
        "collection",
    ]);
    let file = dir.join("big.bin");
    let bytes = common::noise(31, 1_100_000);
    std::fs::write(&file, &bytes).unwrap();
    let file = file.to_str().unwrap();
    run(&[
        "put",
        "-t",
        &table,
        "-k",
        "pk=c",
        "-k",
        "sk=ORDER#1",
        "--file",
        file,
    ]);
    run(&[
        "put",
        "-t",
        &table,
        "-k",
        "pk=c",
        "-k",
        "sk=ORDER#2",
        "--json",
        r#"{"n": {"N": "2"}}"#,
    ]);

    let values = r#"{":p": {"S": "c"}}"#;
    let out = run(&[
        "query",
        "-t",
        &table,
        "--key-condition",
        "pk = :p",
        "--values",
        values,
    ]);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a line of JSON"))
        .collect();
    assert_eq!(lines.len(), 2, "two items, no chunk: {}", out.stderr);
    assert_eq!(lines[0]["sk"]["S"], "ORDER#1");
    let data = lines[0]["data"]["B"].as_str().unwrap();
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    assert_eq!(decoded, bytes, "the stored file, whole");
    assert_eq!(lines[1]["n"]["N"], "2");
    assert!(
        out.stderr.contains("2 items (1 read whole)"),
        "{}",
        out.stderr
    );

    let summary = run(&[
        "query",
        "-t",
        &table,
        "--key-condition",
        "pk = :p",
        "--values",
        values,
        "--lazy",
        "--output",
        "json",
    ]);
    let summary: serde_json::Value = serde_json::from_str(summary.stderr.trim()).unwrap();
    assert_eq!(
        summary["virtualItems"], 0,
        "lazy reads no item whole: {summary}"
    );
    assert!(summary["chunksSkipped"].as_u64().unwrap() >= 3, "{summary}");
}

#[test]
fn the_embedded_store_persists_between_runs() {
    let dir = tempdir("embedded");
    let data = dir.join("store").join("local.db");
    let data = data.to_str().unwrap();
    ok(&[
        "--data",
        data,
        "tables",
        "create",
        "-t",
        "docs",
        "--partition-key",
        "pk",
        "--sort-key",
        "sk",
        "--layout",
        "collection",
    ]);
    let file = dir.join("doc.json");
    std::fs::write(&file, common::order_history(5, 2_000_000)).unwrap();
    let put = ok(&[
        "--data",
        data,
        "put",
        "-t",
        "docs",
        "-k",
        "pk=u1",
        "-k",
        "sk=orders",
        "--file",
        file.to_str().unwrap(),
    ]);
    assert!(
        put.stdout.contains("deflate"),
        "a JSON file compresses: {}",
        put.stdout
    );
    let back = dir.join("back.json");
    ok(&[
        "--data",
        data,
        "get",
        "-t",
        "docs",
        "-k",
        "pk=u1",
        "-k",
        "sk=orders",
        "-o",
        back.to_str().unwrap(),
    ]);
    assert!(std::fs::read(&back).unwrap() == std::fs::read(&file).unwrap());
    let inspect = json(&ok(&[
        "--data",
        data,
        "--output",
        "json",
        "inspect",
        "-t",
        "docs",
        "-k",
        "pk=u1",
        "-k",
        "sk=orders",
    ]));
    assert_eq!(inspect["layout"], "collection");
    assert_eq!(inspect["chunkTable"], "docs");
}

#[test]
fn get_out_writes_through_links_fifos_and_devices() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, data) = store_with_docs("out-through");
    let data = data.as_str();
    // 1.5 MB of noise: several chunks, stored uncompressed.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let bytes: Vec<u8> = (0..1_500_000)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 56) as u8
        })
        .collect();
    let file = dir.join("blob.bin");
    std::fs::write(&file, &bytes).unwrap();
    let put = ["--data", data, "put", "-t", "docs", "-k", "pk=blob"];
    ok(&[&put[..], &["--file", file.to_str().unwrap()]].concat());
    let get = |out: &Path| {
        ok(&[
            "--data",
            data,
            "get",
            "-t",
            "docs",
            "-k",
            "pk=blob",
            "-o",
            out.to_str().unwrap(),
        ])
    };

    // A symlink: the file it points to is replaced, the link stays a link.
    let real = dir.join("real.bin");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.join("link.bin");
    std::os::unix::fs::symlink("real.bin", &link).unwrap();
    get(&link);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read(&real).unwrap() == bytes,
        "the link's file holds the payload"
    );

    // A FIFO: the process reading it gets every byte, and it stays a FIFO.
    let fifo = dir.join("pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    get(&fifo);
    // Checked first: had it been renamed over, its reader would wait for
    // ever.
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(
        reader.join().unwrap() == bytes,
        "the FIFO's reader got the payload"
    );

    // A device stays what it was.
    let null = Path::new("/dev/null");
    assert!(
        std::fs::metadata(null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    get(null);
    assert!(
        std::fs::metadata(null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    // /dev/stdout is written through (here to a file the child's standard
    // output is), and stays the link it was.
    let stdout = Path::new("/dev/stdout");
    let was = std::fs::symlink_metadata(stdout).unwrap().file_type();
    let captured = dir.join("captured.bin");
    let to_stdout = [
        "--data",
        data,
        "get",
        "-t",
        "docs",
        "-k",
        "pk=blob",
        "-o",
        "/dev/stdout",
    ];
    let mut command = command(&to_stdout);
    command.stdout(std::fs::File::create(&captured).unwrap());
    let run = command.output().unwrap();
    assert!(run.status.success());
    // What is said goes to stderr: stdout carries the payload alone.
    let said = String::from_utf8(run.stderr).unwrap();
    assert!(said.starts_with("wrote 1.43 MiB to /dev/stdout"), "{said}");
    assert_eq!(std::fs::symlink_metadata(stdout).unwrap().file_type(), was);
    assert!(
        std::fs::read(&captured).unwrap() == bytes,
        "stdout got the payload"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("dynaslice-partial"))
        .collect();
    assert!(names.is_empty(), "no temporary file left: {names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `script` with `sh -c`; it must succeed.
fn sh(script: &str) -> Run {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script)
        .env_remove("DYNASLICE_ENDPOINT");
    cli_run::ok(command, &[script])
}

/// The SHA-256 of a file, by `sha256sum` (an implementation of its own).
fn sha256(path: &Path) -> String {
    let run = sh(&format!("sha256sum < '{}'", path.display()));
    run.stdout.split_whitespace().next().unwrap().to_string()
}

#[test]
fn dash_pipes_and_fifos_stream_in_and_out() {
    use std::io::Write;
    let (dir, data) = store_with_docs("pipes");
    let data = data.as_str();
    let bin = env!("CARGO_BIN_EXE_dynaslice");
    let cli = format!("'{bin}' --data '{data}'");

    // 30 MB from a pipe, whose length nobody knows before it ends.
    let sent = dir.join("sent.bin");
    let put = sh(&format!(
        "head -c 30000000 /dev/urandom | tee '{}' | {cli} put -t docs -k pk=piped --file -",
        sent.display()
    ));
    assert!(put.stdout.contains("stored"), "{}", put.stdout);
    assert_eq!(std::fs::metadata(&sent).unwrap().len(), 30_000_000);
    // A version 2 value stream (docs/FORMAT.md): "DSV" 02, count 1, name
    // length 1, "data", tag 0C: 11 bytes, then the payload to the end.
    let inspect = json(&ok(&[
        "--data", data, "inspect", "-t", "docs", "-k", "pk=piped", "--json",
    ]));
    assert_eq!(inspect["manifest"]["rawBytes"], 30_000_011u64, "{inspect}");
    // Out through `-` into a pipe: what comes out digests as what went in,
    // and what is said goes to stderr.
    let got = sh(&format!(
        "{cli} get -t docs -k pk=piped --out - | sha256sum"
    ));
    assert_eq!(got.stdout.split_whitespace().next().unwrap(), sha256(&sent));
    assert!(got.stderr.contains("to standard output"), "{}", got.stderr);
    // With --json, the document goes to stderr too: stdout is the payload.
    let out = dir.join("out.bin");
    let got = sh(&format!(
        "{cli} get -t docs -k pk=piped --out - --json > '{}'",
        out.display()
    ));
    assert_eq!(sha256(&out), sha256(&sent));
    let said: serde_json::Value = serde_json::from_str(got.stderr.trim()).unwrap();
    assert_eq!(said["bytes"], 30_000_000u64, "{said}");

    // A FIFO as --file: read to its end as another process writes it.
    let fifo = dir.join("in.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let payload: Vec<u8> = (0..2_500_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let writer = {
        let (fifo, payload) = (fifo.clone(), payload.clone());
        std::thread::spawn(move || {
            std::fs::File::create(fifo)
                .unwrap()
                .write_all(&payload)
                .unwrap()
        })
    };
    ok(&[
        "--data",
        data,
        "put",
        "-t",
        "docs",
        "-k",
        "pk=fifo",
        "--file",
        fifo.to_str().unwrap(),
    ]);
    writer.join().unwrap();
    let back = dir.join("fifo.bin");
    ok(&[
        "--data",
        data,
        "get",
        "-t",
        "docs",
        "-k",
        "pk=fifo",
        "-o",
        back.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read(&back).unwrap() == payload,
        "the FIFO's bytes came back"
    );

    // /dev/stdin on a pipe is read to its end too (it once declared 0 bytes).
    sh(&format!(
        "printf 'hello, pipe' | {cli} put -t docs -k pk=stdin --file /dev/stdin"
    ));
    let hello = sh(&format!("{cli} get -t docs -k pk=stdin --out -"));
    assert_eq!(hello.stdout, "hello, pipe");

    // estimate reads a pipe too: "pk" + "stdin" and "data" + 11 bytes.
    let estimate = sh(&format!(
        "printf 'hello, pipe' | {cli} --output json estimate -t docs -k pk=stdin --file -"
    ));
    let estimate: serde_json::Value = serde_json::from_str(&estimate.stdout).unwrap();
    assert_eq!(estimate["itemBytes"], 2 + 5 + 4 + 11, "{estimate}");
    // An atomic put holds the item: a regular file over the limit is refused
    // by its size before it is read.
    let big = dir.join("big.bin");
    std::fs::write(&big, vec![0u8; 2_000]).unwrap();
    let refused = fails(
        &[
            "--data",
            data,
            "put",
            "-t",
            "docs",
            "-k",
            "pk=big",
            "--mode",
            "atomic",
            "--max-size",
            "1000",
            "--file",
            big.to_str().unwrap(),
        ],
        "VIRTUAL_ITEM_TOO_LARGE",
    );
    assert!(
        refused.stderr.contains("payload is 2000 bytes, limit 1000"),
        "{}",
        refused.stderr
    );

    // A limit cuts a pipe off as it passes it; nothing is committed.
    let mut command = Command::new("sh");
    command.arg("-c").arg(format!(
        "head -c 3000000 /dev/zero | {cli} put -t docs -k pk=cut --file - --codec none --max-size 1000000"
    ));
    cli_run::fails(
        command,
        &["put --max-size 1000000"],
        "VIRTUAL_ITEM_TOO_LARGE",
    );
    fails(
        &["--data", data, "inspect", "-t", "docs", "-k", "pk=cut"],
        "NOT_FOUND",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn versions_lists_get_version_reads_and_restore_brings_back() {
    let (dir, data) = store_with_docs("history");
    let run = |rest: &[&str]| {
        let mut args = vec!["--data", data.as_str()];
        args.extend_from_slice(rest);
        ok(&args)
    };
    let mut files = Vec::new();
    for n in 0..4u64 {
        let file = dir.join(format!("v{n}.bin"));
        std::fs::write(&file, common::noise(n, 500_000)).unwrap();
        let note = format!("by writer {n}");
        run(&[
            "put",
            "-t",
            "docs",
            "-k",
            "pk=d",
            "--file",
            file.to_str().unwrap(),
            "--keep-versions",
            "2",
            "--note",
            &note,
        ]);
        files.push(file);
    }
    let listed = json(&run(&[
        "versions", "-t", "docs", "-k", "pk=d", "--output", "json",
    ]));
    assert_eq!(listed["retention"]["keep"], 2, "{listed}");
    let versions = listed["versions"].as_array().unwrap();
    let notes: Vec<&str> = versions
        .iter()
        .map(|v| v["note"].as_str().unwrap())
        .collect();
    assert_eq!(notes, ["by writer 3", "by writer 2", "by writer 1"]);
    assert!(versions[1]["replacedAt"].as_str().is_some() && versions[0]["current"] == true);
    let text = run(&["versions", "-t", "docs", "-k", "pk=d"]);
    assert!(
        text.stdout.contains("keeps the newest 2") && text.stdout.contains("current"),
        "{}",
        text.stdout
    );

    // Version 1, streamed to a file, byte for byte.
    let v1 = versions[2]["version"].as_str().unwrap();
    let out = dir.join("back.bin");
    run(&[
        "get",
        "-t",
        "docs",
        "-k",
        "pk=d",
        "--version",
        v1,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&files[1]).unwrap()
    );
    let get_version = |version: &str, code: &str| {
        let args = [
            "--data",
            &data,
            "get",
            "-t",
            "docs",
            "-k",
            "pk=d",
            "--version",
            version,
        ];
        fails(&args, code)
    };
    get_version("01KAAAAAAAAAAAAAAAAAAAAAAA", "VERSION_NOT_FOUND");
    get_version("v1", "INPUT_INVALID");

    let restored = json(&run(&[
        "restore",
        "-t",
        "docs",
        "-k",
        "pk=d",
        "--version",
        v1,
        "--output",
        "json",
    ]));
    assert_eq!(restored["restored"], v1, "{restored}");
    run(&[
        "get",
        "-t",
        "docs",
        "-k",
        "pk=d",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&files[1]).unwrap()
    );
    let listed = json(&run(&[
        "versions", "-t", "docs", "-k", "pk=d", "--output", "json",
    ]));
    let notes: Vec<&str> = listed["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["note"].as_str().unwrap())
        .collect();
    assert_eq!(
        notes,
        [
            format!("restored {v1}").as_str(),
            "by writer 3",
            "by writer 2"
        ]
    );
    let gc = json(&run(&[
        "gc", "-t", "docs", "--grace", "0s", "--scan", "--output", "json",
    ]));
    assert_eq!(
        (gc["deleted"].as_u64(), gc["kept"].as_u64()),
        (Some(0), Some(6)),
        "{gc}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_reports_each_bad_line_stores_the_rest_resumes_and_export_writes_them_back() {
    let (dir, data) = store_with_docs("import");
    let at = |rest: &[&str]| {
        let mut args = vec!["--data".to_string(), data.clone()];
        args.extend(rest.iter().map(|s| s.to_string()));
        args
    };
    let mut lines = Vec::new();
    for n in 1..=30u64 {
        lines.push(match n {
            7 => "{not json".to_string(),
            12 => r#"{"pk": "p12", "_ds": "reserved"}"#.to_string(),
            15 => String::new(),
            _ => serde_json::json!({ "pk": format!("p{n}"), "n": n, "body": "x".repeat(n as usize * 30_000) })
                .to_string(),
        });
    }
    let file = dir.join("items.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let path = file.to_str().unwrap();
    let run = dynaslice(&strs(&at(&[
        "import", "-t", "docs", "--file", path, "--format", "plain",
    ])));
    assert_eq!(run.code, 1, "a failed line makes exit 1: {}", run.stderr);
    assert!(
        run.stderr.contains("line 7: ") && run.stderr.contains("[INPUT_INVALID]"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("line 12: ") && run.stderr.contains("[ATTRIBUTE_RESERVED]"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("imported 27 items"), "{}", run.stdout);
    // 29 KB to 900 KB: the larger ones split, and every one reads back.
    for n in [1u64, 20, 30] {
        let item = json(&ok(&strs(&at(&[
            "get",
            "-t",
            "docs",
            "-k",
            &format!("pk=p{n}"),
        ]))));
        assert_eq!(item["n"]["N"], n.to_string());
        assert_eq!(
            item["body"]["S"].as_str().unwrap().len(),
            n as usize * 30_000
        );
    }

    // An earlier run's checkpoint: lines through 20 are skipped.
    let table = common::table_name("resume");
    ok(&strs(&at(&[
        "tables",
        "create",
        "-t",
        &table,
        "--partition-key",
        "pk",
    ])));
    let checkpoint = dir.join("items.jsonl.dynaslice-import");
    std::fs::write(
        &checkpoint,
        format!(r#"{{"table": "{table}", "through": 20}}"#),
    )
    .unwrap();
    let resumed = json(&dynaslice(&strs(&at(&[
        "import", "-t", &table, "--file", path, "--format", "plain", "--resume", "--output", "json",
    ]))));
    assert_eq!(
        (resumed["imported"].as_u64(), resumed["skipped"].as_u64()),
        (Some(10), Some(20)),
        "{resumed}"
    );
    assert!(
        resumed["failed"].as_array().unwrap().is_empty(),
        "{resumed}"
    );
    assert!(
        !checkpoint.exists(),
        "a finished import leaves no checkpoint"
    );
    fails(
        &strs(&at(&["get", "-t", &table, "-k", "pk=p20"])),
        "NOT_FOUND",
    );

    let out = dir.join("export.jsonl");
    ok(&strs(&at(&[
        "export",
        "-t",
        &table,
        "--out",
        out.to_str().unwrap(),
    ])));
    let mut keys: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["pk"]["S"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    keys.sort();
    let mut expected: Vec<String> = (21..=30).map(|n| format!("p{n}")).collect();
    expected.sort();
    assert_eq!(keys, expected, "every item once, no chunk item");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh folder with an embedded store holding the table `docs` (key
/// `pk`): the folder, and the store's path for `--data`.
fn store_with_docs(name: &str) -> (std::path::PathBuf, String) {
    let dir = tempdir(name);
    let data = dir.join("store").join("local.db");
    let data = data.to_str().unwrap().to_string();
    ok(&[
        "--data",
        &data,
        "tables",
        "create",
        "-t",
        "docs",
        "--partition-key",
        "pk",
    ]);
    (dir, data)
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaslice-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    assert!(Path::new(&dir).is_dir());
    dir
}
