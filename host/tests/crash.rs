//! Crashes: the CLI is killed (SIGKILL) at random points during 50 large
//! puts and overwrites. Afterwards every item reads as its old or its new
//! version, never partial, and `gc` removes every orphan.

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use dynaslice_core::AttributeValue;
use dynaslice_host::{GetOptions, HostError, LayoutKind, TableConfig};

use common::{endpoint, fresh_table, key, noise, order_history};

const PUTS: u64 = 50;

/// The file of put `n`: 1 to 9 MB, noise or a compressible document.
fn file_bytes(n: u64) -> Vec<u8> {
    let len = 1_000_000 + (n as usize * 1_234_567) % 8_000_000;
    if n.is_multiple_of(3) {
        order_history(n, len).into_bytes()
    } else {
        noise(n, len)
    }
}

/// The file `item{id}` holds, if it exists.
async fn stored_file(
    client: &Client,
    table: &TableConfig,
    layout: LayoutKind,
    id: u64,
) -> Result<Option<Vec<u8>>, HostError> {
    let key = key(layout, &format!("item{id}"));
    let found = dynaslice_host::get(client, table, &key, &GetOptions::default(), &()).await?;
    Ok(found.map(|f| match f.item.get("data") {
        Some(AttributeValue::B(bytes)) => bytes.clone(),
        other => panic!("data is {other:?}"),
    }))
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_puts_leave_old_or_new_never_partial() {
    // The shared server lives outside the killed processes, as a real deployment's does.
    let endpoint = endpoint().to_string();
    let client = dynaslice_host::local_client(&endpoint);
    let dir = std::env::temp_dir().join(format!("dynaslice-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let layouts = [LayoutKind::ChunkTable, LayoutKind::ItemCollection];
    let mut tables: Vec<TableConfig> = Vec::new();
    for layout in layouts {
        tables.push(fresh_table(&client, "crash", layout).await);
    }
    let mut rng = fastrand::Rng::with_seed(50);
    // (layout index, item) -> the puts tried on it (a put killed after its
    // commit request left may still be applied later: the server can carry
    // out a request whose client died, so any version tried may show up).
    let mut tried: BTreeMap<(usize, u64), Vec<u64>> = BTreeMap::new();
    // The kill window adapts to this machine's speed (and its load) so
    // that about half the puts are killed: longer after a kill, shorter
    // after a put that completed.
    let mut window_ms = 150.0_f64;
    let (mut killed, mut completed) = (0, 0);
    for n in 0..PUTS {
        let l = (n % 2) as usize;
        let (layout, table) = (layouts[l], &tables[l]);
        let id = rng.u64(0..4);
        let bytes = file_bytes(n);
        let path = dir.join(format!("put{n}.bin"));
        std::fs::write(&path, &bytes).unwrap();
        let mut args = vec![
            "--endpoint".to_string(),
            endpoint.clone(),
            "put".into(),
            "-t".into(),
            table.table.clone(),
        ];
        for (name, value) in key(layout, &format!("item{id}")) {
            let AttributeValue::S(value) = value else {
                unreachable!()
            };
            args.extend(["-k".to_string(), format!("{name}={value}")]);
        }
        args.extend(["--file".to_string(), path.to_str().unwrap().to_string()]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_dynaslice"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the CLI starts");
        tried.entry((l, id)).or_default().push(n);
        // Kill somewhere between start-up and the end of a typical upload.
        let deadline = Instant::now() + Duration::from_millis(rng.u64(5..=window_ms as u64));
        let mut exited = None;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().unwrap() {
                exited = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        match exited {
            Some(status) => {
                assert!(status.success(), "put {n} failed on its own");
                completed += 1;
                window_ms = (window_ms * 0.8).max(10.0);
            }
            None => {
                child.kill().expect("SIGKILL");
                child.wait().unwrap();
                killed += 1;
                window_ms = (window_ms * 1.25).min(10_000.0);
            }
        }
        let now = stored_file(&client, table, layout, id)
            .await
            .unwrap_or_else(|e| panic!("after put {n}: item{id} unreadable: {e} [{}]", e.code()));
        // Whole: one of the versions tried on this item, byte for byte
        // (reassembly already refused anything partial or damaged).
        if let Some(now) = &now {
            let versions = &tried[&(l, id)];
            assert!(
                versions.iter().any(|&k| &file_bytes(k) == now),
                "after put {n}: item{id} is none of the versions tried on it"
            );
        }
        if exited.is_some() {
            assert!(
                now.as_deref() == Some(&bytes[..]),
                "put {n} completed but is not what item{id} holds"
            );
        }
    }
    assert!(
        killed >= 10 && completed >= 5,
        "{killed} killed, {completed} completed: adjust the kill window"
    );
    // Let the server finish any request a killed process left behind: gc
    // with no grace period must not race a late commit.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut settled = BTreeMap::new();
    for &(l, id) in tried.keys() {
        let found = stored_file(&client, &tables[l], layouts[l], id).await;
        settled.insert((l, id), found.expect("get"));
    }
    for table in &tables {
        let (report, live) = common::collect_all_orphans(&client, table).await;
        eprintln!(
            "{}: gc removed {} orphans, {live} live chunks",
            table.table, report.deleted
        );
    }
    // gc took nothing a stored item needs: each reads as before it ran.
    for (&(l, id), before) in &settled {
        let found = stored_file(&client, &tables[l], layouts[l], id).await;
        assert!(
            found.expect("get after gc") == *before,
            "item{id} changed across gc"
        );
    }
    eprintln!("{killed} killed, {completed} completed");
    let _ = std::fs::remove_dir_all(&dir);
}
