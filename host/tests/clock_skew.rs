//! A writer whose clock runs two hours behind, with `gc` (grace 1 h)
//! running concurrently from a process whose clock is right, loses
//! nothing: version ids are stamped, and ages judged, by the store's clock.
//!
//! The skewed writer is the real `dynaslice` binary under libfaketime (the
//! Debian package `faketime`, which `.ci/run` installs): its whole process
//! sees a clock two hours behind, as a drifting laptop would.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{client, fresh_table, key, noise};
use dynaslice_core::AttributeValue;
use dynaslice_core::manifest::MANIFEST_ATTRIBUTE;
use dynaslice_core::manifest::Manifest;
use dynaslice_host::{GcOptions, GetOptions, LayoutKind};

/// `faketime` with the writer's offset; monotonic clocks stay real, so
/// timers and timeouts behave.
fn behind(offset: &str) -> Command {
    let mut command = Command::new("faketime");
    command
        .arg("-f")
        .arg(offset)
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    command
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_two_hours_behind_loses_nothing_to_a_concurrent_gc() {
    // The tool itself: a process under it must see the clock 2 h behind.
    let shown = behind("-2h")
        .args(["date", "+%s"])
        .output()
        .expect("faketime runs (Debian package faketime)");
    let shown: u64 = String::from_utf8(shown.stdout)
        .unwrap()
        .trim()
        .parse()
        .expect("date printed seconds");
    let skew = unix_now() as i64 - shown as i64;
    assert!(
        (7190..=7210).contains(&skew),
        "faketime shifted by {skew} s"
    );

    let client = client();
    let table = fresh_table(&client, "skew", LayoutKind::ChunkTable).await;
    let dir = std::env::temp_dir().join(format!("dynaslice-skew-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("payload.bin");
    let payload = noise(21, 8_000_000);
    std::fs::write(&file, &payload).unwrap();

    // One batch in flight, few chunks a batch: the write takes long enough
    // for many gc passes to see its chunks before the commit.
    let mut writer = behind("-2h")
        .arg(env!("CARGO_BIN_EXE_dynaslice"))
        .args([
            "--endpoint",
            common::endpoint(),
            "put",
            "--table",
            &table.table,
        ])
        .args(["--key", "pk=skewed", "--file", file.to_str().unwrap()])
        .args(["--codec", "none", "--mode", "batch", "--concurrency", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the writer starts");
    let gc = GcOptions {
        grace: Duration::from_secs(3600),
        dry_run: false,
        ..GcOptions::default()
    };
    let mut passes = 0;
    let mut young_seen = 0;
    let status = loop {
        let report = dynaslice_host::gc(&client, &table, &gc).await.expect("gc");
        passes += 1;
        young_seen = young_seen.max(report.young);
        assert_eq!(
            report.deleted, 0,
            "gc deleted a writer's chunks: {report:?}"
        );
        if let Some(status) = writer.try_wait().unwrap() {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(writer.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "the skewed writer failed: {stderr}");
    println!("gc ran {passes} passes during the write; at most {young_seen} young chunks seen");
    assert!(
        young_seen > 0,
        "no gc pass ran while chunks were unreferenced"
    );

    // The version is stamped in the store's time, not the writer's.
    let stored = dynaslice_host::inspect(&client, &table, &key(LayoutKind::ChunkTable, "skewed"))
        .await
        .unwrap()
        .expect("committed");
    let manifest = Manifest::from_value(&stored.parent[MANIFEST_ATTRIBUTE]).unwrap();
    let stamped = manifest.version.unix_ms() / 1000;
    assert!(
        stamped.abs_diff(unix_now()) < 120,
        "version stamped {} s from now",
        stamped as i64 - unix_now() as i64
    );
    let read = dynaslice_host::get(
        &client,
        &table,
        &key(LayoutKind::ChunkTable, "skewed"),
        &GetOptions::default(),
        &(),
    )
    .await
    .expect("read back whole")
    .expect("the item");
    assert_eq!(read.item.get("data"), Some(&AttributeValue::B(payload)));
    std::fs::remove_dir_all(&dir).ok();
}
