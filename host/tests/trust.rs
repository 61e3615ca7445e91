//! Untrusted stored data and the embedded store's boundary: manifests
//! planted in the table by someone else are refused before anything
//! proportional to their claims is built, `gc` never deletes what it cannot
//! understand, the format's names are reserved, and the embedded store is
//! reachable from this process only.

mod common;

use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use common::{client, fresh_table, key, noise};
use dynaslice_core::codec::Compression;
use dynaslice_core::codec::{Codec, FRAME_HEADER_BYTES, FrameHeader};
use dynaslice_core::digest::chunk_digest;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::plan::WriteMode;
use dynaslice_core::{AttributeValue, CodecChoice, Item, VersionId};
use dynaslice_host::{
    EmbeddedStore, GcOptions, GetOptions, LayoutKind, PutOptions, TableConfig, create_tables,
    item_to_sdk,
};

/// A parent whose manifest claims `chunk_count` chunks of `chunk_bytes`
/// and a raw length of `raw_len`, all consistent with the format's rules.
fn claimed(key: Item, chunk_count: u32, chunk_bytes: u32, raw_len: u64) -> Item {
    let stored_len = u64::from(chunk_count - 1) * u64::from(chunk_bytes) + 1;
    let manifest = Manifest {
        version: VersionId::new(1_700_000_000_000, 7),
        layout: "table".into(),
        codec: Codec::Deflate,
        chunk_count,
        chunk_bytes,
        stored_len,
        raw_len,
        digest: 0,
        spilled: vec!["body".into()],
        inline: None,
        updated: None,
        groups: Vec::new(),
        object: None,
    };
    let mut parent = key;
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    parent
}

/// A parent whose manifest has the most groups a manifest may list, each
/// claiming 60,000 chunks of 1 KB: every frame within the format's
/// bounds, 3,840,001 chunk keys in all.
fn claimed_groups(key: Item) -> Item {
    let mut parent = claimed(key, 1, 1024, 1);
    let mut manifest = Manifest::from_value(&parent[MANIFEST_ATTRIBUTE]).unwrap();
    manifest.groups = (1..=dynaslice_core::manifest::MAX_GROUPS as u32)
        .map(|n| Manifest {
            version: manifest.version.offset(n),
            chunk_count: 60_000,
            stored_len: 59_999 * 1024 + 1,
            raw_len: 60_000 * 1024,
            spilled: vec![format!("part{n}")],
            ..manifest.clone()
        })
        .collect();
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    parent
}

fn options() -> GetOptions {
    GetOptions::default()
}

#[tokio::test]
async fn planted_manifests_are_refused_before_their_claims_are_built() {
    let client = client();
    let table = fresh_table(&client, "planted", LayoutKind::ChunkTable).await;
    // 999,999 chunks of 1 KB (about 1 GB), and one chunk claiming 2^60 raw bytes.
    let cases = [
        (
            "million",
            claimed(
                key(LayoutKind::ChunkTable, "million"),
                999_999,
                1024,
                900 << 20,
            ),
        ),
        (
            "huge",
            claimed(key(LayoutKind::ChunkTable, "huge"), 1, 1024, 1 << 60),
        ),
        (
            "groups",
            claimed_groups(key(LayoutKind::ChunkTable, "groups")),
        ),
    ];
    for (name, parent) in cases {
        Manifest::from_value(&parent[MANIFEST_ATTRIBUTE]).expect("a well-formed claim");
        common::plant(&client, &table.table, parent.clone()).await;
        let key = key(LayoutKind::ChunkTable, name);
        let started = Instant::now();
        let get = dynaslice_host::get(&client, &table, &key, &options(), &())
            .await
            .expect_err("get refuses");
        let preview = dynaslice_host::preview(&client, &table, &key, 0..100, &options())
            .await
            .expect_err("preview refuses");
        for error in [&get, &preview] {
            assert_eq!(error.code(), "DECOMPRESS_LIMIT", "{name}: {error}");
        }
        if name == "huge" {
            // One chunk key: inspect and rm never read the payload, so
            // the claimed size costs them nothing; rm deletes the item.
            let found = dynaslice_host::inspect(&client, &table, &key)
                .await
                .expect("inspect reads the manifest only")
                .expect("found");
            assert_eq!(found.manifest.expect("a manifest").raw_len, 1 << 60);
            assert_eq!(found.chunks.len(), 1);
            let rm = dynaslice_host::delete(&client, &table, &key, &PutOptions::default())
                .await
                .expect("rm deletes by one chunk key");
            assert!(rm.existed);
            assert_eq!(rm.chunks_deleted + rm.chunks_left, 1);
            continue;
        }
        // 999,999 chunk keys, or 3,840,001 in groups: refused before one
        // is built.
        let inspect = dynaslice_host::inspect(&client, &table, &key)
            .await
            .expect_err("inspect refuses");
        let rm = dynaslice_host::delete(&client, &table, &key, &PutOptions::default())
            .await
            .expect_err("rm refuses");
        let elapsed = started.elapsed();
        for error in [&inspect, &rm] {
            assert_eq!(error.code(), "DECOMPRESS_LIMIT", "{name}: {error}");
            let claim = if name == "groups" {
                "3840001 chunks"
            } else {
                "999999 chunks"
            };
            assert!(error.to_string().contains(claim), "{error}");
        }
        println!("planted {name}: get, preview, inspect and rm refused in {elapsed:?} total");
        // rm refused: the parent is still there.
        assert!(
            dynaslice_host::inspect(&client, &table, &key)
                .await
                .is_err(),
            "{name}: the refused rm deleted the parent"
        );
        let report = dynaslice_host::gc(&client, &table, &GcOptions::default())
            .await
            .expect("gc reads versions only");
        assert_eq!(report.deleted, 0);
    }
}

async fn stored_parent(client: &Client, table: &TableConfig, key: &Item) -> Item {
    dynaslice_host::inspect(client, table, key)
        .await
        .unwrap()
        .unwrap()
        .parent
}

#[tokio::test]
async fn a_frame_header_that_disagrees_with_the_manifest_is_refused() {
    let client = client();
    let table = fresh_table(&client, "frame", LayoutKind::ChunkTable).await;
    let mut item = key(LayoutKind::ChunkTable, "doc");
    let text = common::order_history(5, 4_000_000);
    item.insert("body".into(), AttributeValue::S(text));
    let put = PutOptions {
        compression: CodecChoice::Fixed(Compression::new(Codec::Deflate)),
        ..PutOptions::default()
    };
    dynaslice_host::put(&client, &table, &item, &put, &())
        .await
        .unwrap();
    let parent = stored_parent(&client, &table, &item).await;
    let manifest = Manifest::from_value(&parent[MANIFEST_ATTRIBUTE]).unwrap();
    assert!(manifest.chunk_count >= 2, "{} chunks", manifest.chunk_count);
    // Chunk 0's frame header now claims 2^60 raw bytes; its digest is made
    // anew, so only the header check can catch it.
    let mut chunk = common::stored_chunk(&client, &table, &item, 0).await;
    let Some(AttributeValue::B(data)) = chunk.get_mut(CHUNK_DATA_ATTRIBUTE) else {
        panic!("chunk data");
    };
    let mut header = FrameHeader::parse_header(data).unwrap();
    assert_eq!(header.raw_len, manifest.raw_len);
    header.raw_len = 1 << 60;
    data[..FRAME_HEADER_BYTES].copy_from_slice(&header.to_bytes());
    let digest = chunk_digest(data, &manifest.version.to_text(), 0);
    chunk.insert(
        CHUNK_DIGEST_ATTRIBUTE.into(),
        AttributeValue::B(digest.to_be_bytes().to_vec()),
    );
    common::plant(&client, &table.chunk_table, chunk).await;
    let preview = dynaslice_host::preview(&client, &table, &item, 0..100, &options())
        .await
        .expect_err("preview refuses");
    assert_eq!(preview.code(), "FRAME_MISMATCH", "{preview}");
    let get = dynaslice_host::get(&client, &table, &item, &options(), &())
        .await
        .expect_err("get refuses");
    assert_eq!(get.code(), "FRAME_MISMATCH", "{get}");
}

/// Counts the chunk items of `table` by scanning its chunk table.
async fn chunk_count(client: &Client, table: &TableConfig) -> usize {
    let mut count = 0;
    let mut start = None;
    loop {
        let page = client
            .scan()
            .table_name(&table.chunk_table)
            .consistent_read(true)
            .select(aws_sdk_dynamodb::types::Select::Count)
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        count += page.count as usize;
        match page.last_evaluated_key {
            Some(key) if !key.is_empty() => start = Some(key),
            _ => return count,
        }
    }
}

#[tokio::test]
async fn gc_keeps_the_chunks_of_a_manifest_it_cannot_read() {
    let client = client();
    let table = fresh_table(&client, "gcunread", LayoutKind::ChunkTable).await;
    let put = PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        mode: WriteMode::Batch,
        ..PutOptions::default()
    };
    for (name, damage) in [("future", "f"), ("damaged", "h")] {
        let mut item = key(LayoutKind::ChunkTable, name);
        item.insert("body".into(), AttributeValue::B(noise(9, 1_000_000)));
        dynaslice_host::put(&client, &table, &item, &put, &())
            .await
            .unwrap();
        let mut parent = stored_parent(&client, &table, &item).await;
        let Some(AttributeValue::M(manifest)) = parent.get_mut(MANIFEST_ATTRIBUTE) else {
            panic!("manifest");
        };
        if damage == "f" {
            // Written by a newer format version.
            manifest.insert("f".into(), AttributeValue::N("4".into()));
        } else {
            manifest.remove("h");
        }
        common::plant(&client, &table.table, parent).await;
    }
    let before = chunk_count(&client, &table).await;
    assert!(before >= 6, "{before}");
    let report = dynaslice_host::gc(
        &client,
        &table,
        &GcOptions {
            grace: Duration::ZERO,
            dry_run: false,
            every_chunk: true,
            ..GcOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(report.deleted, 0, "{report:?}");
    assert_eq!(report.unreadable, before, "{report:?}");
    let codes: Vec<&str> = report
        .unreadable_parents
        .iter()
        .map(|(_, why)| why.rsplit('[').next().unwrap_or_default())
        .collect();
    assert_eq!(codes.len(), 2, "{report:?}");
    assert!(
        codes.contains(&"MANIFEST_UNSUPPORTED_VERSION]"),
        "{codes:?}"
    );
    assert!(codes.contains(&"MANIFEST_INVALID]"), "{codes:?}");
    assert_eq!(chunk_count(&client, &table).await, before);
}

#[tokio::test]
async fn the_formats_names_are_reserved() {
    let client = client();
    let table = fresh_table(&client, "reserved", LayoutKind::ItemCollection).await;
    for name in ["_ds", "_d", "_h"] {
        let mut item = key(LayoutKind::ItemCollection, "user");
        item.insert(name.into(), AttributeValue::B(vec![1; 8]));
        let error = dynaslice_host::put(&client, &table, &item, &PutOptions::default(), &())
            .await
            .expect_err("reserved");
        assert_eq!(error.code(), "ATTRIBUTE_RESERVED", "{name}: {error}");
    }
}

/// The TCP ports this process listens on (its sockets in LISTEN state).
fn listening_ports() -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|target| {
            let text = target.to_str()?.to_string();
            Some(
                text.strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address, state 0A = LISTEN, inode in column 10.
            if fields.get(3) == Some(&"0A")
                && inodes.iter().any(|i| Some(&i.as_str()) == fields.get(9))
            {
                let port = fields[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports
}

#[tokio::test]
async fn the_embedded_store_answers_in_process_and_opens_no_socket() {
    // The shared test server (other tests' store) is up before counting.
    common::endpoint();
    let before = listening_ports();
    let store = EmbeddedStore::open(None).unwrap();
    let client = store.client();
    let table = TableConfig::new(
        "inproc",
        common::schema(LayoutKind::ChunkTable),
        LayoutKind::ChunkTable,
    );
    create_tables(&client, &table).await.unwrap();
    for (name, mode) in [("atomic", WriteMode::Atomic), ("batch", WriteMode::Batch)] {
        let mut item = key(LayoutKind::ChunkTable, name);
        item.insert("body".into(), AttributeValue::B(noise(4, 2_500_000)));
        let put = PutOptions {
            mode,
            compression: CodecChoice::Fixed(Compression::NONE),
            ..PutOptions::default()
        };
        let outcome = dynaslice_host::put(&client, &table, &item, &put, &())
            .await
            .unwrap();
        assert_eq!(outcome.mode.name(), name);
        assert!(outcome.consumed_write_units > 0.0, "{outcome:?}");
        let read = dynaslice_host::get(&client, &table, &item, &options(), &())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(read.item, item);
    }
    // The engine's own rules arrive as DynamoDB's errors: an item one byte
    // over 409,600 is refused by the store, one at the limit is stored.
    for (extra, accepted) in [(0, true), (1, false)] {
        let mut item = key(LayoutKind::ChunkTable, "edge");
        let base = dynaslice_core::item_size(&item) + "v".len();
        item.insert(
            "v".into(),
            AttributeValue::B(vec![0; 409_600 - base + extra]),
        );
        let result = client
            .put_item()
            .table_name(&table.table)
            .set_item(Some(item_to_sdk(item)))
            .send()
            .await;
        assert_eq!(result.is_ok(), accepted, "{result:?}");
        if let Err(e) = result {
            let service = e.into_service_error();
            assert_eq!(
                aws_sdk_dynamodb::error::ProvideErrorMetadata::code(&service),
                Some("ValidationException")
            );
        }
    }
    assert_eq!(
        listening_ports(),
        before,
        "the embedded store opened a socket"
    );
}
