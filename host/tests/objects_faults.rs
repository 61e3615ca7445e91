//! S3 objects under faults, against the real SeaweedFS server (always:
//! faults need a socket to break): a proxy in front of it that answers
//! 503 `SlowDown` and 500 `InternalError` and drops connections before and
//! after forwarding, mid-part included; and the CLI killed (SIGKILL) in the
//! middle of a multipart upload. Nothing committed is lost, reads stay
//! exact, and gc leaves no unreferenced object and no open upload. And an
//! object a client stored straight (a granted PUT) whose check meets a
//! failing S3 is kept, to be committed once S3 answers again.

mod common;

use common::s3;

use std::net::SocketAddr;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dynaslice_core::object::{MIN_PART_BYTES, ObjectStore};
use dynaslice_core::{AttributeValue, Code, Item};
use dynaslice_host::{
    GcOptions, LayoutKind, Objects, PutOptions, TableConfig, gc_objects, local_s3_client,
    put_reader,
};
use dynaslice_testing::fault_proxy::{self, FaultKind, Faults};
use dynaslice_testing::seaweedfs::{self, SeaweedFs};

fn server() -> &'static SeaweedFs {
    static SERVER: OnceLock<SeaweedFs> = OnceLock::new();
    SERVER.get_or_init(|| seaweedfs::start().expect("SeaweedFS starts"))
}

fn upstream() -> SocketAddr {
    let endpoint = &server().s3_endpoint;
    endpoint.trim_start_matches("http://").parse().unwrap()
}

/// A fresh table whose payloads of 64 KiB and more go to S3 through `s3`
/// under `prefix`, in parts of 5 MiB.
async fn table_through(s3: aws_sdk_s3::Client, prefix: String) -> TableConfig {
    let client = common::client();
    let mut table = common::fresh_table(&client, "faults", LayoutKind::ChunkTable).await;
    let store = ObjectStore {
        threshold: 64 << 10,
        part_bytes: MIN_PART_BYTES,
        ..ObjectStore::new(s3::bucket(), prefix)
    };
    table.objects = Some(Objects::new(store, s3).unwrap());
    table
}

fn key(id: &str) -> Item {
    common::key(LayoutKind::ChunkTable, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slowdowns_errors_and_dropped_connections_lose_nothing() {
    let direct = local_s3_client(&server().s3_endpoint);
    dynaslice_host::ensure_bucket(&direct, &s3::bucket())
        .await
        .unwrap();
    let proxy = fault_proxy::start_s3(
        upstream(),
        Faults {
            rate: 0.3,
            seed: 11,
        },
    )
    .await;
    proxy.set_kinds(&[
        FaultKind::Throttle,
        FaultKind::InternalErrorBefore,
        FaultKind::InternalErrorAfter,
        FaultKind::DropBefore,
        FaultKind::DropAfter,
    ]);
    let prefix = format!("faults-{}/", std::process::id());
    let table = table_through(local_s3_client(&proxy.endpoint()), prefix.clone()).await;
    let dir = common::fresh_temp_dir("objects-faults");
    // Items written twice each (a failed overwrite must leave the first),
    // until every kind of fault has struck: one part, several, a pipe.
    let sizes = [300_000, 2 * MIN_PART_BYTES + 1_000, MIN_PART_BYTES + 10];
    let mut stored: Vec<(Item, Vec<u8>)> = Vec::new();
    let (mut writes, mut failed_writes) = (0, 0);
    let struck = |c: fault_proxy::Counts| {
        c.throttled > 0
            && c.internal_errors_before > 0
            && c.internal_errors_after > 0
            && c.dropped_before > 0
            && c.dropped_after > 0
    };
    for i in 0..24usize {
        if struck(proxy.counts()) && i >= 3 {
            break;
        }
        let len = sizes[i % sizes.len()];
        let item = key(&format!("item-{i}"));
        let mut last: Option<Vec<u8>> = None;
        for round in 0..2u64 {
            let bytes = common::noise(i as u64 * 10 + round, len);
            let known = (round == 0).then_some(bytes.len() as u64);
            writes += 1;
            let written = put_reader(
                &common::client(),
                &table,
                item.clone(),
                "data",
                &bytes[..],
                known,
                &PutOptions::default(),
                &(),
            )
            .await;
            match written {
                Ok(_) => last = Some(bytes),
                Err(e) => {
                    failed_writes += 1;
                    assert!(
                        matches!(e.code(), Code::S3Error | Code::ConnectionFailed),
                        "{e}"
                    );
                }
            }
            // What reads is the last write that succeeded, faults and all.
            let path = dir.join(format!("{i}-{round}"));
            let expected = last.clone().ok_or(Code::NotFound);
            let mut got = s3::read_file(&table, &item, &path).await;
            // A read may give up under faults; one more try without them.
            if matches!(got, Err(Code::S3Error | Code::ConnectionFailed)) {
                proxy.set_enabled(false);
                got = s3::read_file(&table, &item, &path).await;
                proxy.set_enabled(true);
            }
            assert_eq!(got, expected, "item {i} round {round}");
        }
        if let Some(bytes) = last {
            stored.push((item, bytes));
        }
    }
    let counts = proxy.counts();
    assert!(struck(counts), "{counts:?}");
    assert!(
        failed_writes < writes,
        "{failed_writes} of {writes} writes failed"
    );
    // gc past the grace, without faults: only the live objects remain.
    proxy.set_enabled(false);
    let options = GcOptions {
        grace: Duration::ZERO,
        ..GcOptions::default()
    };
    let report = gc_objects(&common::client(), &table, &options)
        .await
        .unwrap();
    assert_eq!(report.referenced, stored.len(), "{report:?}");
    assert_eq!(s3::keys(&direct, &prefix).await.len(), stored.len());
    assert_eq!(s3::uploads(&direct, &prefix).await, 0);
    for (i, (item, bytes)) in stored.iter().enumerate() {
        let path = dir.join(format!("final-{i}"));
        assert_eq!(s3::read_file(&table, item, &path).await.as_ref(), Ok(bytes));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_killed_mid_upload_leaves_the_old_version_and_gc_cleans_up() {
    let direct = local_s3_client(&server().s3_endpoint);
    dynaslice_host::ensure_bucket(&direct, &s3::bucket())
        .await
        .unwrap();
    let cli_prefix = format!("kill-{}/", std::process::id());
    let client = common::client();
    let mut table = common::fresh_table(&client, "killed", LayoutKind::ChunkTable).await;
    let prefix = format!("{cli_prefix}{}/", table.table);
    let store = ObjectStore::new(s3::bucket(), prefix.clone());
    table.objects = Some(Objects::new(store, direct.clone()).unwrap());
    let dir = common::fresh_temp_dir("objects-kill");
    let item = key("video");
    let put = |file: &std::path::Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dynaslice"));
        command
            .args([
                "put",
                "-t",
                &table.table,
                "--key",
                "pk=video",
                "--codec",
                "none",
            ])
            .arg("--file")
            .arg(file)
            .args(["--endpoint", common::endpoint()])
            .args(["--s3-bucket", &s3::bucket(), "--s3-prefix", &cli_prefix])
            .args(["--s3-endpoint", &server().s3_endpoint]);
        command
    };
    let old = common::noise(21, 3_000_000);
    std::fs::write(dir.join("old.bin"), &old).unwrap();
    let run = put(&dir.join("old.bin")).output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // 96 MiB in 12 parts: killed once its upload is open.
    std::fs::write(dir.join("new.bin"), common::noise(22, 96 << 20)).unwrap();
    let mut child = put(&dir.join("new.bin"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while s3::uploads(&direct, &prefix).await == 0 {
        assert!(child.try_wait().unwrap().is_none(), "the put ended first");
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no upload opened"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The old version reads whole; the killed write left an open upload.
    assert_eq!(
        s3::read_file(&table, &item, &dir.join("read.bin")).await,
        Ok(old.clone())
    );
    assert_eq!(s3::uploads(&direct, &prefix).await, 1);
    let old_key = s3::keys(&direct, &prefix).await;
    assert_eq!(old_key.len(), 1);
    let options = GcOptions {
        grace: Duration::ZERO,
        ..GcOptions::default()
    };
    let report = gc_objects(&client, &table, &options).await.unwrap();
    assert_eq!(
        (report.uploads_aborted, report.referenced),
        (1, 1),
        "{report:?}"
    );
    assert_eq!(s3::uploads(&direct, &prefix).await, 0);
    assert_eq!(s3::keys(&direct, &prefix).await, old_key);
    let mut stored = client
        .get_item()
        .table_name(&table.table)
        .set_key(Some(dynaslice_host::item_to_sdk(item.clone())))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(stored.remove("_ds").is_some());
    assert_eq!(
        dynaslice_host::item_from_sdk(stored).unwrap().get("pk"),
        Some(&AttributeValue::S("video".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_straight_upload_checked_while_s3_fails_is_kept_and_commits_later() {
    use dynaslice_core::codec::Compression;
    use dynaslice_core::manifest::CHUNK_DATA_ATTRIBUTE;
    use dynaslice_core::{CodecChoice, SplitOptions, VersionId, split_item};

    let direct = local_s3_client(&server().s3_endpoint);
    dynaslice_host::ensure_bucket(&direct, &s3::bucket())
        .await
        .unwrap();
    let proxy = fault_proxy::start_s3(upstream(), Faults { rate: 1.0, seed: 5 }).await;
    proxy.set_kinds(&[FaultKind::InternalErrorBefore]);
    let prefix = format!("straight-{}/", std::process::id());
    let healthy = table_through(direct.clone(), prefix.clone()).await;
    let mut failing = healthy.clone();
    if let Some(objects) = failing.objects.as_mut() {
        objects.client = local_s3_client(&proxy.endpoint());
    }
    // The frame a browser would PUT: its split's chunks' data, in order.
    let bytes = common::noise(9, 2_000_000);
    let mut item = key("straight");
    item.insert("data".into(), AttributeValue::B(bytes.clone()));
    let mut options = SplitOptions::new(healthy.key.clone(), VersionId::new(1, 1));
    options.compression = CodecChoice::Fixed(Compression::NONE);
    let split = split_item(&item, &options).unwrap();
    let frame: Vec<u8> = split
        .chunks
        .iter()
        .flat_map(|c| match c.get(CHUNK_DATA_ATTRIBUTE) {
            Some(AttributeValue::B(data)) => data.clone(),
            _ => panic!("chunk data"),
        })
        .collect();
    let request = dynaslice_host::ObjectUploadRequest {
        parent: key("straight"),
        attribute: "data".into(),
        size: frame.len() as u64,
        crc32: dynaslice_core::codec::crc32(&frame),
    };
    let granted = dynaslice_host::presign_object_upload(
        &healthy,
        &request,
        64 << 20,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    direct
        .put_object()
        .bucket(s3::bucket())
        .key(&granted.key)
        .body(frame.into())
        .send()
        .await
        .unwrap();
    let client = common::client();
    let put = PutOptions::default();
    let commit = |table: TableConfig| {
        let (client, request, put) = (client.clone(), request.clone(), put.clone());
        async move {
            dynaslice_host::commit_object_upload(&client, &table, request, granted.version, &put)
                .await
        }
    };
    // S3 answers 500 to every check: not a refusal, and the object stays.
    let failed = commit(failing).await.unwrap_err();
    assert_eq!(failed.code(), Code::S3Error, "{failed}");
    assert!(!dynaslice_host::refuses_upload(&failed));
    let methods = proxy.methods();
    assert_eq!(methods.get("HEAD"), Some(&4), "resent: {methods:?}");
    assert_eq!(methods.get("DELETE"), None, "no delete tried: {methods:?}");
    assert_eq!(s3::keys(&direct, &prefix).await, [granted.key.as_str()]);
    let options = dynaslice_host::GetOptions::default();
    let none = dynaslice_host::get(&client, &healthy, &key("straight"), &options, &()).await;
    assert!(none.unwrap().is_none(), "nothing committed");
    // Once S3 answers, the same commit goes through and reads back whole.
    commit(healthy.clone()).await.unwrap();
    let read = dynaslice_host::get(&client, &healthy, &key("straight"), &options, &())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.item.get("data"), Some(&AttributeValue::B(bytes)));
}

/// S3's rates per prefix, modelled by the proxy far lower than S3's (4
/// writes and 8 reads a second, a second of burst): an item of six parts
/// takes more writes than its prefix allows at once, is answered SlowDown,
/// and still goes in and reads back exact, resent with the core's backoff.
#[tokio::test]
async fn a_prefix_past_its_request_rate_is_slowed_down_and_nothing_is_lost() {
    let direct = local_s3_client(&server().s3_endpoint);
    dynaslice_host::ensure_bucket(&direct, &s3::bucket())
        .await
        .unwrap();
    let proxy = fault_proxy::start_s3(upstream(), Faults { rate: 0.0, seed: 3 }).await;
    proxy.set_prefix_rates(Some(fault_proxy::PrefixRates {
        writes_per_s: 4.0,
        reads_per_s: 8.0,
        burst_s: 1.0,
    }));
    let prefix = format!("rates-{}/", std::process::id());
    let table = table_through(local_s3_client(&proxy.endpoint()), prefix).await;
    let item = key("hot");
    let bytes = common::noise(77, 5 * MIN_PART_BYTES + 3);
    put_reader(
        &common::client(),
        &table,
        item.clone(),
        "data",
        &bytes[..],
        Some(bytes.len() as u64),
        &PutOptions::default(),
        &(),
    )
    .await
    .expect("the put goes in, slowed down");
    let slowed = proxy.counts().throttled;
    assert!(
        slowed > 0,
        "six parts, a start and a completion: past 4 at once"
    );
    let path = common::fresh_temp_dir("objects-rates").join("hot");
    assert_eq!(s3::read_file(&table, &item, &path).await, Ok(bytes));
}
