//! Payloads in S3 behind the parent's manifest (docs/FORMAT.md,
//! "Objects"), against a real S3 implementation: the embedded `s3s-fs`
//! store by default, SeaweedFS with `DYNASLICE_TEST_S3=seaweedfs`.
//! Round trips of every size class, the replaced version's object deleted
//! after the commit (and never another's), and what a hostile manifest or
//! a changed object gets: a typed error, and nothing deleted it does not own.

mod common;

use aws_sdk_s3::primitives::ByteStream;
use dynaslice_core::manifest::MANIFEST_ATTRIBUTE;
use dynaslice_core::object::{MIN_PART_BYTES, ObjectStore};
use dynaslice_core::{AttributeValue, Code, Item};
use dynaslice_host::{
    GetOptions, LayoutKind, Objects, PutOptions, TableConfig, delete, get, put, put_reader,
};

use common::s3;

/// A fresh table whose payloads of 64 KiB and more go to S3 in parts of
/// 5 MiB, under a prefix of its own.
async fn objects_table(layout: LayoutKind) -> TableConfig {
    let client = common::client();
    let mut table = common::fresh_table(&client, "objects", layout).await;
    let store = ObjectStore {
        threshold: 64 << 10,
        part_bytes: MIN_PART_BYTES,
        ..ObjectStore::new(s3::bucket(), format!("{}/", table.table))
    };
    table.objects = Some(Objects::new(store, s3::client().await).unwrap());
    table
}

fn parent(layout: LayoutKind, id: &str) -> Item {
    let mut item = common::key(layout, id);
    item.insert("title".into(), AttributeValue::S(format!("file {id}")));
    item
}

async fn put_bytes(table: &TableConfig, item: &Item, bytes: &[u8], known: bool) -> Option<String> {
    let len = known.then_some(bytes.len() as u64);
    let outcome = put_reader(
        &common::client(),
        table,
        item.clone(),
        "data",
        bytes,
        len,
        &PutOptions::default(),
        &(),
    )
    .await
    .expect("put");
    outcome.manifest.and_then(|m| m.object).map(|o| o.key)
}

async fn keys_under(table: &TableConfig) -> Vec<String> {
    let objects = table.objects.as_ref().unwrap();
    s3::keys(&objects.client, &objects.store.prefix).await
}

#[tokio::test]
async fn payloads_of_every_size_round_trip_through_s3() {
    for layout in [LayoutKind::ChunkTable, LayoutKind::ItemCollection] {
        let table = objects_table(layout).await;
        let dir = common::fresh_temp_dir(&format!("objects-{layout:?}"));
        // Below the threshold (chunks), one part, parts of 5 MiB with a
        // short last one, a pipe of unknown length over several parts, and
        // one that ends below the threshold (held, then in chunks).
        let cases: [(&str, usize, bool, bool); 5] = [
            ("small", 20_000, true, false),
            ("short-pipe", 20_000, false, false),
            ("one-part", 300_000, true, true),
            ("parts", 2 * MIN_PART_BYTES + 12_345, true, true),
            ("pipe", MIN_PART_BYTES + 777, false, true),
        ];
        for (i, (id, len, known, in_s3)) in cases.into_iter().enumerate() {
            let item = parent(layout, id);
            let bytes = common::noise(i as u64, len);
            let object = put_bytes(&table, &item, &bytes, known).await;
            assert_eq!(object.is_some(), in_s3, "{id}: in S3");
            let path = dir.join(id);
            assert_eq!(
                s3::read_file(&table, &item, &path).await,
                Ok(bytes.clone()),
                "{id}"
            );
            // The whole item, its other attributes with it.
            let fetched = s3::fetch(&table, &item).await;
            assert_eq!(fetched.item["data"], AttributeValue::B(bytes));
            assert_eq!(fetched.item["title"], item["title"]);
            if let Some(key) = object {
                assert!(
                    keys_under(&table).await.contains(&key),
                    "{id}: {key} stored"
                );
            }
        }
        // One object per payload in S3, and no upload left open.
        assert_eq!(keys_under(&table).await.len(), 3);
        let objects = table.objects.as_ref().unwrap();
        assert_eq!(s3::uploads(&objects.client, &objects.store.prefix).await, 0);
    }
}

#[tokio::test]
async fn items_put_whole_go_to_s3_from_the_threshold_in_batch_mode() {
    let layout = LayoutKind::ItemCollection;
    let table = objects_table(layout).await;
    let client = common::client();
    let text: Vec<u8> = (0..3_000_000u32)
        .flat_map(|i| format!("line {i} of a log\n").into_bytes())
        .take(3_000_000)
        .collect();
    // Stored whole (it fits), one part (compressed text), parts of 5 MiB
    // (noise), and two large attributes in one object.
    // (id, its large attributes, the object's part count when in S3)
    type Case<'a> = (&'a str, Vec<(&'a str, Vec<u8>)>, Option<usize>);
    let cases: [Case; 4] = [
        ("fits", vec![("data", common::noise(1, 100_000))], None),
        ("text", vec![("data", text)], Some(1)),
        (
            "parts",
            vec![("data", common::noise(2, 2 * MIN_PART_BYTES + 999))],
            Some(3),
        ),
        (
            "two",
            vec![
                ("data", common::noise(3, 500_000)),
                ("more", common::noise(4, 700_000)),
            ],
            Some(1),
        ),
    ];
    for (id, attributes, parts) in cases {
        let mut item = parent(layout, id);
        for (name, bytes) in attributes {
            item.insert(name.into(), AttributeValue::B(bytes));
        }
        let outcome = put(&client, &table, &item, &PutOptions::default(), &())
            .await
            .expect("put");
        let object = outcome.manifest.as_ref().and_then(|m| m.object.clone());
        assert_eq!(object.is_some(), parts.is_some(), "{id}: in S3");
        assert_eq!(
            s3::fetch(&table, &item).await.item,
            item,
            "{id}: read back whole"
        );
        let Some(object) = object else { continue };
        // No chunk was written: the manifest counts none, and the table
        // holds only the parent under this key.
        let manifest = outcome.manifest.unwrap();
        assert_eq!((manifest.chunk_count, manifest.chunk_bytes), (0, 0), "{id}");
        let objects = table.objects.as_ref().unwrap();
        let head = objects
            .client
            .head_object()
            .bucket(&object.bucket)
            .key(&object.key)
            .send()
            .await
            .unwrap();
        assert_eq!(
            head.content_length(),
            Some(manifest.stored_len as i64),
            "{id}"
        );
        // A multipart upload's ETag ends with its part count.
        let etag = head.e_tag().unwrap().trim_matches('"').to_string();
        let expected = parts.filter(|&n| n > 1).map(|n| format!("-{n}"));
        assert_eq!(
            etag.rsplit_once('-').map(|(_, n)| format!("-{n}")),
            expected,
            "{id}: {etag}"
        );
    }
    assert_eq!(keys_under(&table).await.len(), 3);
    // In atomic mode an item stays in chunks, in one transaction.
    let mut item = parent(layout, "atomic");
    item.insert(
        "data".into(),
        AttributeValue::B(common::noise(5, 1_000_000)),
    );
    let atomic = PutOptions {
        mode: dynaslice_core::plan::WriteMode::Atomic,
        ..PutOptions::default()
    };
    let outcome = put(&client, &table, &item, &atomic, &()).await.unwrap();
    let manifest = outcome.manifest.unwrap();
    assert!(manifest.object.is_none());
    assert!(manifest.chunk_count > 1);
    assert_eq!(s3::fetch(&table, &item).await.item, item);
    // An item over its own object: the replaced object goes.
    let replaced = keys_under(&table).await;
    let mut item = parent(layout, "two");
    item.insert("data".into(), AttributeValue::B(common::noise(6, 900_000)));
    let outcome = put(&client, &table, &item, &PutOptions::default(), &())
        .await
        .unwrap();
    assert_eq!(s3::fetch(&table, &item).await.item, item);
    let new_key = outcome.manifest.unwrap().object.unwrap().key;
    let keys = keys_under(&table).await;
    assert!(keys.contains(&new_key), "{keys:?}");
    assert!(!replaced.contains(&new_key));
    assert_eq!(keys.len(), 3, "the replaced object went: {keys:?}");
    let objects = table.objects.as_ref().unwrap();
    assert_eq!(s3::uploads(&objects.client, &objects.store.prefix).await, 0);
}

#[tokio::test]
async fn updates_of_an_item_in_s3_keep_every_attribute() {
    use dynaslice_host::{Changes, UpdateOptions};
    let layout = LayoutKind::ItemCollection;
    let table = objects_table(layout).await;
    let client = common::client();
    let mut item = parent(layout, "doc");
    item.insert(
        "body".into(),
        AttributeValue::B(common::noise(31, 2_000_000)),
    );
    item.insert(
        "extra".into(),
        AttributeValue::B(common::noise(32, 300_000)),
    );
    let first = put(&client, &table, &item, &PutOptions::default(), &())
        .await
        .unwrap();
    let first_key = first.manifest.unwrap().object.unwrap().key;
    // A small attribute on the parent; then one too large for it, which
    // rewrites the item (no frame of the object is reused); then a spilled
    // attribute changed.
    let steps: [(&str, AttributeValue); 3] = [
        ("status", AttributeValue::S("published".into())),
        ("notes", AttributeValue::B(common::noise(33, 500_000))),
        ("extra", AttributeValue::B(common::noise(34, 100_000))),
    ];
    for (name, value) in steps {
        let mut changes = Changes::default();
        changes.set.insert(name.into(), value.clone());
        dynaslice_host::update(
            &client,
            &table,
            &item,
            changes,
            &UpdateOptions::default(),
            &(),
        )
        .await
        .unwrap_or_else(|e| panic!("update {name}: {e}"));
        item.insert(name.into(), value);
        assert_eq!(s3::fetch(&table, &item).await.item, item, "after {name}");
    }
    // The first object went with the version that named it; one is left.
    let keys = keys_under(&table).await;
    assert!(!keys.contains(&first_key), "{keys:?}");
    assert_eq!(keys.len(), 1, "{keys:?}");
}

#[tokio::test]
async fn history_keeps_objects_reads_and_restores_them_and_gc_takes_only_released_ones() {
    use dynaslice_core::history::Retention;
    let layout = LayoutKind::ChunkTable;
    let table = objects_table(layout).await;
    let client = common::client();
    let item = parent(layout, "doc");
    let keeping = |keep: u32, note: &str| PutOptions {
        history: Some(Retention {
            keep,
            max_age_ms: None,
        }),
        note: Some(note.into()),
        ..PutOptions::default()
    };
    let zero_grace = dynaslice_host::GcOptions {
        grace: std::time::Duration::ZERO,
        ..Default::default()
    };
    let version = |outcome: dynaslice_host::PutOutcome| outcome.manifest.unwrap().version;
    // 1: a stream (S3), 2: an item written whole (S3), 3: a stream of two
    // parts (S3), 4: a small item (DynamoDB); two earlier versions kept.
    let payloads = [
        common::noise(11, 300_000),
        common::noise(12, 200_000),
        common::noise(13, MIN_PART_BYTES + 4_321),
        common::noise(14, 20_000),
    ];
    let mut versions = Vec::new();
    let mut objects = Vec::new();
    for (n, bytes) in payloads.iter().enumerate() {
        let options = keeping(2, &format!("writer {n}"));
        let outcome = if n % 2 == 0 {
            dynaslice_host::put_reader(
                &client,
                &table,
                item.clone(),
                "data",
                bytes.as_slice(),
                Some(bytes.len() as u64),
                &options,
                &(),
            )
            .await
        } else {
            let mut whole = item.clone();
            whole.insert("data".into(), AttributeValue::B(bytes.clone()));
            put(&client, &table, &whole, &options, &()).await
        }
        .expect("put keeping history");
        let manifest = outcome.manifest.clone().unwrap();
        assert_eq!(manifest.object.is_some(), n < 3, "version {n} in S3");
        objects.extend(manifest.object.map(|o| o.key));
        versions.push(version(outcome));
    }
    let read = |version| {
        let table = table.clone();
        let item = item.clone();
        async move {
            let options = GetOptions {
                version,
                ..GetOptions::default()
            };
            dynaslice_host::get(&common::client(), &table, &item, &options, &())
                .await
                .map(|f| f.map(|f| f.item["data"].clone()))
        }
    };
    let listed = dynaslice_host::versions(&client, &table, &item)
        .await
        .unwrap()
        .unwrap();
    let ids: Vec<_> = listed.versions.iter().filter_map(|v| v.version).collect();
    assert_eq!(ids, vec![versions[3], versions[2], versions[1]]);
    // Each writer's note, on the versions in S3 as on the one in DynamoDB.
    let notes: Vec<_> = listed
        .versions
        .iter()
        .filter_map(|v| v.note.as_deref())
        .collect();
    assert_eq!(notes, ["writer 3", "writer 2", "writer 1"]);
    // The kept versions read back from their objects; the released one is gone.
    for n in 1..3 {
        assert_eq!(
            read(Some(versions[n])).await.unwrap(),
            Some(AttributeValue::B(payloads[n].clone())),
            "version {n}"
        );
    }
    assert_eq!(
        read(Some(versions[0])).await.unwrap_err().code(),
        Code::VersionNotFound
    );
    // Every object is still there; gc takes the released version's only.
    assert_eq!(keys_under(&table).await, sorted(&objects));
    let report = dynaslice_host::gc_objects(&client, &table, &zero_grace)
        .await
        .unwrap();
    assert_eq!((report.deleted, report.kept, report.referenced), (1, 2, 0));
    assert_eq!(keys_under(&table).await, sorted(&objects[1..]));
    // Restore version 2 (its object read, written anew as an object): the
    // current version (4) is kept, version 1 released.
    let restored = dynaslice_host::restore(
        &client,
        &table,
        &item,
        versions[2],
        &keeping(2, "undo"),
        &(),
    )
    .await
    .unwrap();
    let restored_key = restored.manifest.clone().unwrap().object.unwrap().key;
    assert_eq!(
        read(None).await.unwrap(),
        Some(AttributeValue::B(payloads[2].clone()))
    );
    let report = dynaslice_host::gc_objects(&client, &table, &zero_grace)
        .await
        .unwrap();
    assert_eq!((report.deleted, report.kept, report.referenced), (1, 1, 1));
    assert_eq!(
        keys_under(&table).await,
        sorted(&[objects[2].clone(), restored_key.clone()])
    );
    assert_eq!(
        read(Some(versions[2])).await.unwrap(),
        Some(AttributeValue::B(payloads[2].clone()))
    );
    // History off: what it kept is released, and gc takes it.
    let mut small = item.clone();
    small.insert("data".into(), AttributeValue::B(payloads[3].clone()));
    put(&client, &table, &small, &keeping(0, "off"), &())
        .await
        .unwrap();
    dynaslice_host::gc_objects(&client, &table, &zero_grace)
        .await
        .unwrap();
    assert!(keys_under(&table).await.is_empty());
}

fn sorted(keys: &[String]) -> Vec<String> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys
}

#[tokio::test]
async fn an_overwrite_or_a_delete_removes_the_replaced_object_only() {
    let layout = LayoutKind::ChunkTable;
    let table = objects_table(layout).await;
    let client = common::client();
    let item = parent(layout, "doc");
    let first = put_bytes(&table, &item, &common::noise(1, 200_000), true)
        .await
        .unwrap();
    let second = put_bytes(&table, &item, &common::noise(2, 300_000), false)
        .await
        .unwrap();
    assert_ne!(first, second);
    assert_eq!(keys_under(&table).await, vec![second.clone()]);
    // Chunks over an object: the object goes.
    let mut small = item.clone();
    small.insert("data".into(), AttributeValue::B(common::noise(3, 30_000)));
    put(&client, &table, &small, &PutOptions::default(), &())
        .await
        .unwrap();
    assert!(keys_under(&table).await.is_empty());
    // An object again, then the item deleted: the object goes with it.
    put_bytes(&table, &item, &common::noise(4, 100_000), true)
        .await
        .unwrap();
    assert_eq!(keys_under(&table).await.len(), 1);
    let deleted = delete(&client, &table, &item, &PutOptions::default())
        .await
        .unwrap();
    assert!(deleted.existed);
    assert_eq!(deleted.chunks_left, 0);
    assert!(deleted.object_deleted);
    assert!(keys_under(&table).await.is_empty());
}

/// The parent's manifest, edited by `edit`, written back raw.
async fn tamper(table: &TableConfig, key: &Item, edit: impl FnOnce(&mut Item)) {
    let client = common::client();
    let sdk_key = dynaslice_host::item_to_sdk(table.key.key_of(key));
    let stored = client
        .get_item()
        .table_name(&table.table)
        .set_key(Some(sdk_key))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    let mut manifest = dynaslice_host::item_from_sdk(stored.clone()).unwrap();
    let AttributeValue::M(map) = manifest.get_mut(MANIFEST_ATTRIBUTE).unwrap() else {
        panic!("no manifest")
    };
    let AttributeValue::M(object) = map.get_mut("o").unwrap() else {
        panic!("no object")
    };
    let mut fields = Item::new();
    std::mem::swap(&mut fields, object);
    edit(&mut fields);
    std::mem::swap(&mut fields, object);
    client
        .put_item()
        .table_name(&table.table)
        .set_item(Some(dynaslice_host::item_to_sdk(manifest)))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_manifest_naming_another_object_is_refused_and_that_object_kept() {
    let layout = LayoutKind::ChunkTable;
    let table = objects_table(layout).await;
    let client = common::client();
    let (victim, attacker) = (parent(layout, "victim"), parent(layout, "attacker"));
    let victim_bytes = common::noise(5, 150_000);
    let victim_key = put_bytes(&table, &victim, &victim_bytes, true)
        .await
        .unwrap();
    put_bytes(&table, &attacker, &common::noise(6, 150_000), true)
        .await
        .unwrap();
    let dir = common::fresh_temp_dir("objects-foreign");
    let outside = "elsewhere/secret".to_string();
    let objects = table.objects.as_ref().unwrap();
    objects
        .client
        .put_object()
        .bucket(&objects.store.bucket)
        .key(&outside)
        .body(ByteStream::from(b"not dynaslice's".to_vec()))
        .send()
        .await
        .unwrap();
    // Another item's object, a key outside the prefix, another bucket.
    let forged = [
        (
            victim_key.clone(),
            objects.store.bucket.clone(),
            Code::ObjectForeign,
        ),
        (
            outside.clone(),
            objects.store.bucket.clone(),
            Code::ObjectForeign,
        ),
        (
            victim_key.clone(),
            "other-bucket".into(),
            Code::ObjectStoreNotConfigured,
        ),
    ];
    for (key, bucket, code) in forged {
        tamper(&table, &attacker, |o| {
            o.insert("k".into(), AttributeValue::S(key.clone()));
            o.insert("b".into(), AttributeValue::S(bucket.clone()));
        })
        .await;
        let path = dir.join("attacker");
        assert_eq!(
            s3::read_file(&table, &attacker, &path).await,
            Err(code),
            "{key}"
        );
        assert!(!path.exists(), "nothing written for {key}");
    }
    // Overwriting and deleting the forged item delete none of them.
    put_bytes(&table, &attacker, &common::noise(7, 100_000), true)
        .await
        .unwrap();
    tamper(&table, &attacker, |o| {
        o.insert("k".into(), AttributeValue::S(victim_key.clone()));
    })
    .await;
    delete(&client, &table, &attacker, &PutOptions::default())
        .await
        .unwrap();
    let keys = s3::keys(&objects.client, "").await;
    assert!(keys.contains(&victim_key), "the victim's object stays");
    assert!(
        keys.contains(&outside),
        "the object outside the prefix stays"
    );
    let path = dir.join("victim");
    assert_eq!(
        s3::read_file(&table, &victim, &path).await,
        Ok(victim_bytes)
    );
}

#[tokio::test]
async fn a_changed_or_damaged_object_is_a_typed_error() {
    let layout = LayoutKind::ChunkTable;
    let table = objects_table(layout).await;
    let objects = table.objects.as_ref().unwrap();
    let item = parent(layout, "doc");
    let dir = common::fresh_temp_dir("objects-damaged");
    let bytes = common::noise(8, 200_000);
    let key = put_bytes(&table, &item, &bytes, true).await.unwrap();
    let stored = s3::body(&objects.client, &objects.store.bucket, &key).await;
    let replace = |body: Vec<u8>| {
        let (client, bucket, key) = (
            objects.client.clone(),
            objects.store.bucket.clone(),
            key.clone(),
        );
        async move {
            let out = client
                .put_object()
                .bucket(bucket)
                .key(key)
                .body(ByteStream::from(body))
                .send()
                .await
                .unwrap();
            out.e_tag.unwrap()
        }
    };
    // verify reads it whole: nothing damaged.
    let verify = |table: TableConfig| async move {
        let mut damaged = Vec::new();
        let options = dynaslice_host::QueryOptions::default();
        let outcome = dynaslice_host::verify(&common::client(), &table, &options, |d| {
            damaged.push(d.error.code())
        })
        .await
        .unwrap();
        (outcome.virtual_items, damaged)
    };
    assert_eq!(verify(table.clone()).await, (1, vec![]));
    // Overwritten outside dynaslice: its ETag changed.
    let mut flipped = stored.clone();
    flipped[1000] ^= 1;
    replace(flipped.clone()).await;
    let path = dir.join("doc");
    assert_eq!(
        s3::read_file(&table, &item, &path).await,
        Err(Code::ObjectMissing)
    );
    assert_eq!(verify(table.clone()).await, (0, vec![Code::ObjectMissing]));
    // The manifest names the new ETag too: the digest catches the flip.
    let etag = replace(flipped).await;
    tamper(&table, &item, |o| {
        o.insert("e".into(), AttributeValue::S(etag.clone()));
    })
    .await;
    let error = s3::read_file(&table, &item, &path).await.unwrap_err();
    assert!(
        matches!(error, Code::DigestMismatch | Code::FrameMismatch),
        "{error:?}"
    );
    // Truncated, under its own ETag.
    let etag = replace(stored[..stored.len() - 10].to_vec()).await;
    tamper(&table, &item, |o| {
        o.insert("e".into(), AttributeValue::S(etag.clone()));
    })
    .await;
    assert_eq!(
        s3::read_file(&table, &item, &path).await,
        Err(Code::ObjectLengthMismatch)
    );
    // Gone.
    objects
        .client
        .delete_object()
        .bucket(&objects.store.bucket)
        .key(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        s3::read_file(&table, &item, &path).await,
        Err(Code::ObjectMissing)
    );
    assert!(!path.exists());
}

#[tokio::test]
async fn a_failed_stream_leaves_no_object_and_no_upload() {
    let layout = LayoutKind::ChunkTable;
    let table = objects_table(layout).await;
    let item = parent(layout, "doc");
    // Longer than declared, after two parts went out.
    let bytes = common::noise(9, 2 * MIN_PART_BYTES + 100);
    let error = put_reader(
        &common::client(),
        &table,
        item.clone(),
        "data",
        &bytes[..],
        Some(2 * MIN_PART_BYTES as u64 + 50),
        &PutOptions::default(),
        &(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), Code::StreamLengthMismatch);
    assert!(keys_under(&table).await.is_empty());
    let objects = table.objects.as_ref().unwrap();
    assert_eq!(s3::uploads(&objects.client, &objects.store.prefix).await, 0);
    let found = get(
        &common::client(),
        &table,
        &item,
        &GetOptions::default(),
        &(),
    )
    .await
    .unwrap();
    assert!(found.is_none());
}

#[tokio::test]
async fn gc_deletes_unreferenced_objects_and_stale_uploads_only() {
    let layout = LayoutKind::ChunkTable;
    let table = objects_table(layout).await;
    let client = common::client();
    let objects = table.objects.as_ref().unwrap();
    let (s3c, store) = (&objects.client, &objects.store);
    let put_raw = |key: String| async move {
        s3c.put_object()
            .bucket(&store.bucket)
            .key(key)
            .body(ByteStream::from(b"left behind".to_vec()))
            .send()
            .await
            .unwrap();
    };
    // A live item, an item whose object a crashed writer left (a version
    // never committed), a deleted item's object, a key not dynaslice's,
    // and an object of a parent whose manifest cannot be read.
    let live = parent(layout, "live");
    let live_key = put_bytes(&table, &live, &common::noise(10, 100_000), true)
        .await
        .unwrap();
    let crashed = store
        .key_for(
            &table.key,
            &live,
            dynaslice_core::VersionId::new(1_700_000_000_000, 1),
        )
        .unwrap();
    put_raw(crashed.clone()).await;
    let gone = store
        .key_for(
            &table.key,
            &parent(layout, "gone"),
            dynaslice_core::VersionId::new(1_700_000_000_000, 2),
        )
        .unwrap();
    put_raw(gone.clone()).await;
    let stranger = format!("{}notes.txt", store.prefix);
    put_raw(stranger.clone()).await;
    let damaged = parent(layout, "damaged");
    let damaged_key = store
        .key_for(
            &table.key,
            &damaged,
            dynaslice_core::VersionId::new(1_700_000_000_000, 3),
        )
        .unwrap();
    put_raw(damaged_key.clone()).await;
    let mut raw = damaged.clone();
    raw.insert(
        MANIFEST_ATTRIBUTE.into(),
        AttributeValue::S("not a manifest".into()),
    );
    client
        .put_item()
        .table_name(&table.table)
        .set_item(Some(dynaslice_host::item_to_sdk(raw)))
        .send()
        .await
        .unwrap();
    // An upload a killed writer left open.
    let open = store
        .key_for(
            &table.key,
            &live,
            dynaslice_core::VersionId::new(1_700_000_000_000, 4),
        )
        .unwrap();
    s3c.create_multipart_upload()
        .bucket(&store.bucket)
        .key(&open)
        .send()
        .await
        .unwrap();
    // Within the grace period: nothing goes.
    let young = dynaslice_host::gc_objects(&client, &table, &dynaslice_host::GcOptions::default())
        .await
        .unwrap();
    assert_eq!((young.objects, young.referenced, young.young), (5, 1, 2));
    assert_eq!((young.deleted, young.unreadable, young.foreign), (0, 1, 1));
    assert_eq!(keys_under(&table).await.len(), 5);
    // Past it (a grace of zero): the two orphans and the upload go.
    let options = dynaslice_host::GcOptions {
        grace: std::time::Duration::ZERO,
        ..Default::default()
    };
    let report = dynaslice_host::gc_objects(&client, &table, &options)
        .await
        .unwrap();
    assert_eq!(
        (report.deleted, report.referenced, report.unreadable),
        (2, 1, 1)
    );
    let mut left = vec![live_key, stranger, damaged_key];
    left.sort();
    assert_eq!(keys_under(&table).await, left);
    assert_eq!(report.uploads_listed, s3::lists_uploads());
    if report.uploads_listed {
        assert_eq!(report.uploads_aborted, 1);
        assert_eq!(s3::uploads(s3c, &store.prefix).await, 0);
    }
    // The live item still reads.
    let path = common::fresh_temp_dir("objects-gc").join("live");
    assert_eq!(
        s3::read_file(&table, &live, &path).await,
        Ok(common::noise(10, 100_000))
    );
}

/// A payload that names itself: its seed and length, then noise from the seed.
fn labelled(seed: u64, len: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(16 + len);
    bytes.extend_from_slice(&seed.to_le_bytes());
    bytes.extend_from_slice(&(len as u64).to_le_bytes());
    bytes.extend_from_slice(&common::noise(seed, len));
    bytes
}

/// The seed of a payload [`labelled`] made, if it is one, whole.
fn label_of(bytes: &[u8]) -> Option<u64> {
    let seed = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    let len = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?) as usize;
    (bytes[16..] == common::noise(seed, len)[..]).then_some(seed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_readers_and_gc_never_tear_or_lose_a_version() {
    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};
    let layout = LayoutKind::ChunkTable;
    let table = Arc::new(objects_table(layout).await);
    let item = parent(layout, "raced");
    let committed = Arc::new(Mutex::new(BTreeSet::new()));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dir = common::fresh_temp_dir("objects-race");
    // Three writers, four rounds each, sizes from one part to two.
    let writers: Vec<_> = (0..3u64)
        .map(|w| {
            let (table, item, committed) = (table.clone(), item.clone(), committed.clone());
            tokio::spawn(async move {
                for round in 0..4u64 {
                    let seed = w * 100 + round;
                    let len = [150_000, MIN_PART_BYTES + 5_000, 700_000, 2 * MIN_PART_BYTES]
                        [round as usize];
                    put_bytes(&table, &item, &labelled(seed, len), round % 2 == 0).await;
                    committed.lock().unwrap().insert(seed);
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (table, item, done) = (table.clone(), item.clone(), done.clone());
            let path = dir.join(format!("reader-{r}"));
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    match s3::read_file(&table, &item, &path).await {
                        Ok(bytes) => seen.push(label_of(&bytes).expect("a whole version")),
                        Err(Code::NotFound) => {}
                        // Overtaken by more overwrites than its re-reads.
                        Err(Code::ChunksVanished) => {}
                        Err(code) => panic!("reader {r}: {code:?}"),
                    }
                }
                seen
            })
        })
        .collect();
    // gc all along, with the default grace: it must take nothing live.
    let collector = {
        let (table, done) = (table.clone(), done.clone());
        tokio::spawn(async move {
            let mut runs = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let report = dynaslice_host::gc_objects(
                    &common::client(),
                    &table,
                    &dynaslice_host::GcOptions::default(),
                )
                .await
                .unwrap();
                assert_eq!(report.deleted, 0);
                runs += 1;
            }
            runs
        })
    };
    for writer in writers {
        writer.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let committed = committed.lock().unwrap().clone();
    let mut reads = 0;
    for reader in readers {
        for seed in reader.await.unwrap() {
            assert!(committed.contains(&seed), "read {seed}, never committed");
            reads += 1;
        }
    }
    assert!(reads > 0);
    assert!(collector.await.unwrap() > 0);
    // The last version reads whole, and its object is the only one left.
    let last = label_of(
        &s3::read_file(&table, &item, &dir.join("last"))
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(committed.contains(&last));
    let objects = table.objects.as_ref().unwrap();
    let stored = s3::fetch(&table, &item).await;
    let current = stored.manifest.unwrap().object.unwrap().key;
    assert_eq!(keys_under(&table).await, vec![current.clone()]);

    // Optimistic locking: four writers from the same version, one wins;
    // the losers get CONFLICT and their objects go.
    let version = version_of(&table, &item).await;
    let racers: Vec<_> = (0..4u64)
        .map(|i| {
            let (table, item) = (table.clone(), item.clone());
            tokio::spawn(async move {
                let options = PutOptions {
                    precondition: Some(dynaslice_core::plan::Precondition::Version(version)),
                    ..PutOptions::default()
                };
                let bytes = labelled(1_000 + i, 400_000);
                dynaslice_host::put_reader(
                    &common::client(),
                    &table,
                    item,
                    "data",
                    &bytes[..],
                    Some(bytes.len() as u64),
                    &options,
                    &(),
                )
                .await
                .map_err(|e| e.code())
                .map(|_| 1_000 + i)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for racer in racers {
        match racer.await.unwrap() {
            Ok(seed) => winners.push(seed),
            Err(code) => assert_eq!(code, Code::Conflict),
        }
    }
    assert_eq!(winners.len(), 1, "one writer wins");
    let read = label_of(
        &s3::read_file(&table, &item, &dir.join("locked"))
            .await
            .unwrap(),
    );
    assert_eq!(read, Some(winners[0]));
    assert_eq!(
        keys_under(&table).await.len(),
        1,
        "the losers' objects are gone"
    );
    // gc past the grace: nothing unreferenced, no upload open.
    let options = dynaslice_host::GcOptions {
        grace: std::time::Duration::ZERO,
        ..Default::default()
    };
    let report = dynaslice_host::gc_objects(&common::client(), &table, &options)
        .await
        .unwrap();
    assert_eq!((report.deleted, report.referenced), (0, 1));
    assert_eq!(s3::uploads(&objects.client, &objects.store.prefix).await, 0);
}

/// The version an item is stored at.
async fn version_of(table: &TableConfig, item: &Item) -> dynaslice_core::VersionId {
    s3::fetch(table, item).await.manifest.unwrap().version
}

/// The test helper counting open uploads sees one under its prefix only,
/// and none once it is aborted (on the embedded store, from its files).
#[tokio::test]
async fn open_uploads_are_counted_under_their_prefix_only() {
    let client = s3::client().await;
    let prefix = format!("uploads-count-{}/", std::process::id());
    let started = client
        .create_multipart_upload()
        .bucket(s3::bucket())
        .key(format!("{prefix}a/b"))
        .send()
        .await
        .unwrap();
    assert_eq!(s3::uploads(&client, &prefix).await, 1);
    assert_eq!(s3::uploads(&client, "uploads-count-other/").await, 0);
    client
        .abort_multipart_upload()
        .bucket(s3::bucket())
        .key(format!("{prefix}a/b"))
        .upload_id(started.upload_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(s3::uploads(&client, &prefix).await, 0);
}
