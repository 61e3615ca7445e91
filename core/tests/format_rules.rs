//! The format rules core owns for everyone else: reading a stored parent's
//! manifest against a limit, checking one chunk alone, which chunks hold a
//! byte range, checking a key, the upload checks, reserved names, and the
//! names of write modes.

use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::manifest::{
    CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE, RESERVED_ATTRIBUTES,
};
use dynaslice_core::object::ObjectRef;
use dynaslice_core::plan::Target;
use dynaslice_core::plan::{WriteKind, WriteMode};
use dynaslice_core::upload::{
    OBJECT_HEAD_BYTES, StoredObject, UploadRules, check_upload_header, object_upload, restamp,
    upload_chunk_item, verify_upload,
};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, ReassembleOptions, SplitItem,
    SplitOptions, VersionId, split_item, verify_chunk,
};

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S)
}

/// An item with a binary of `len` bytes, split uncompressed into chunk
/// items of about 100 KB, so that it has several chunks.
fn split(len: usize) -> (Item, SplitItem) {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("doc".into()));
    item.insert(
        "body".into(),
        AttributeValue::B((0..len).map(|i| (i * 31 % 251) as u8).collect()),
    );
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 9));
    options.compression = CodecChoice::Fixed(Compression::NONE);
    options.chunk_item_bytes = 100_000;
    let split = split_item(&item, &options).unwrap();
    (item, split)
}

#[test]
fn a_manifest_over_the_targets_limit_is_refused_before_any_key_is_built() {
    let (_, split) = split(1_000_000);
    let layout = Layout::default();
    let key = schema();
    let mut target = Target::new("docs", "docs_chunks", &key, &layout);
    assert!(target.read_manifest(&split.parent).unwrap().is_some());
    target.max_raw_bytes = 999_999;
    for error in [
        target.read_manifest(&split.parent).unwrap_err(),
        dynaslice_core::plan::plan_read(&split.parent, &target, true).unwrap_err(),
        dynaslice_core::plan::plan_delete(&split.parent, &target).unwrap_err(),
    ] {
        assert_eq!(error.code(), "DECOMPRESS_LIMIT", "{error}");
        assert!(error.to_string().contains("999999"), "{error}");
    }
    // Deletes and inspections never hold the payload: any size, bounded by
    // the chunk keys a forged manifest could make them build.
    let keys = target.keys_only();
    assert_eq!(keys.max_raw_bytes, u64::MAX);
    assert_eq!(keys.max_chunks, dynaslice_core::DEFAULT_MAX_CHUNK_KEYS);
    assert!(keys.read_manifest(&split.parent).unwrap().is_some());
    let count = split.manifest.as_ref().unwrap().chunk_count;
    let few = Target {
        max_chunks: count - 1,
        ..keys
    };
    let error = dynaslice_core::plan::plan_delete(&split.parent, &few).unwrap_err();
    assert_eq!(error.code(), "DECOMPRESS_LIMIT", "{error}");
    let claims = format!("claims {count} chunks, more than the {}", count - 1);
    assert!(error.to_string().contains(&claims), "{error}");
    // A plain item has no manifest; a damaged one is an error, never None.
    let mut plain = Item::new();
    plain.insert("pk".into(), AttributeValue::S("p".into()));
    assert_eq!(target.read_manifest(&plain).unwrap(), None);
    let mut damaged = split.parent.clone();
    damaged.insert(MANIFEST_ATTRIBUTE.into(), AttributeValue::S("?".into()));
    assert_eq!(
        target.read_manifest(&damaged).unwrap_err().code(),
        "MANIFEST_INVALID"
    );
}

#[test]
fn one_chunk_is_checked_alone_and_named_by_its_fault() {
    let (_, split) = split(1_000_000);
    let manifest = split.manifest.clone().unwrap();
    assert!(manifest.chunk_count >= 5, "{}", manifest.chunk_count);
    let layout = Layout::default();
    let key = schema();
    let options = ReassembleOptions::new(&key, &layout);
    // In any order, chunk 3 is found and its bytes are exactly its share.
    let mut shuffled = split.chunks.clone();
    shuffled.reverse();
    let data = verify_chunk(&split.parent, &manifest, 3, &shuffled, &options).unwrap();
    assert_eq!(data.len() as u64, manifest.chunk_len(3));
    assert_eq!(
        Some(&AttributeValue::B(data.to_vec())),
        split.chunks[3].get(CHUNK_DATA_ATTRIBUTE)
    );
    let code = |chunks: &[Item], seq| {
        verify_chunk(&split.parent, &manifest, seq, chunks, &options)
            .unwrap_err()
            .code()
    };
    assert_eq!(code(&split.chunks[..3], 3), "CHUNK_MISSING");
    assert_eq!(
        code(&split.chunks, manifest.chunk_count),
        "CHUNK_OUT_OF_RANGE"
    );
    let mut damaged = split.chunks.clone();
    let Some(AttributeValue::B(bytes)) = damaged[3].get_mut(CHUNK_DATA_ATTRIBUTE) else {
        panic!("chunk data");
    };
    bytes[10] ^= 1;
    assert_eq!(code(&damaged, 3), "CHUNK_DIGEST_MISMATCH");
    let Some(AttributeValue::B(bytes)) = damaged[3].get_mut(CHUNK_DATA_ATTRIBUTE) else {
        panic!("chunk data");
    };
    bytes.pop();
    assert_eq!(code(&damaged, 3), "CHUNK_TRUNCATED");
    damaged[3].remove(CHUNK_DIGEST_ATTRIBUTE);
    assert_eq!(code(&damaged, 3), "CHUNK_MALFORMED");
}

#[test]
fn the_chunks_holding_a_range_are_exactly_those_its_bytes_fall_in() {
    let (_, split) = split(1_000_000);
    let manifest = split.manifest.unwrap();
    let size = u64::from(manifest.chunk_bytes);
    let last = manifest.chunk_count - 1;
    assert_eq!(manifest.chunks_holding(0..1), (0, 0));
    assert_eq!(manifest.chunks_holding(0..size), (0, 0));
    assert_eq!(manifest.chunks_holding(0..size + 1), (0, 1));
    assert_eq!(manifest.chunks_holding(size - 1..size + 1), (0, 1));
    assert_eq!(manifest.chunks_holding(2 * size..2 * size), (2, 2));
    assert_eq!(manifest.chunks_holding(0..manifest.stored_len), (0, last));
    assert_eq!(manifest.chunks_holding(0..u64::MAX), (0, last));
    assert_eq!(
        manifest.chunks_holding(u64::MAX - 1..u64::MAX),
        (last, last)
    );
}

#[test]
fn a_key_is_checked_against_its_schema() {
    let key = schema().with_sort("sk", KeyType::N);
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("a".into()));
    item.insert("sk".into(), AttributeValue::N("7".into()));
    item.insert("other".into(), AttributeValue::Bool(true));
    let checked = key.check_key(&item).unwrap();
    assert_eq!(checked.len(), 2);
    item.insert("sk".into(), AttributeValue::S("7".into()));
    item.remove("pk");
    let violations = key.check_key(&item).unwrap_err();
    assert_eq!(violations.len(), 2, "{violations:?}");
}

#[test]
fn an_upload_is_checked_header_first_then_chunk_by_chunk_then_whole() {
    let (item, split) = split(1_000_000);
    let manifest = split.manifest.clone().unwrap();
    let key = schema();
    let layout = Layout::default();
    let rules = UploadRules {
        key: &key,
        layout: &layout,
        max_raw_bytes: 2_000_000,
        index_keys: &[],
        ttl: None,
    };
    let lengths: Vec<u64> = (0..manifest.chunk_count)
        .map(|s| manifest.chunk_len(s))
        .collect();
    assert_eq!(
        check_upload_header(&split.parent, &lengths, &rules).unwrap(),
        Some(manifest.clone())
    );
    let code = |lengths: &[u64], rules: &UploadRules<'_>| {
        check_upload_header(&split.parent, lengths, rules)
            .unwrap_err()
            .code()
    };
    assert_eq!(code(&lengths[1..], &rules), "CHUNK_COUNT_MISMATCH");
    let mut lying = lengths.clone();
    lying[1] += 1;
    assert_eq!(code(&lying, &rules), "CHUNK_LENGTH_MISMATCH");
    let small = UploadRules {
        max_raw_bytes: 1000,
        ..rules
    };
    assert_eq!(code(&lengths, &small), "VIRTUAL_ITEM_TOO_LARGE");
    let mut planted = split.parent.clone();
    planted.insert(CHUNK_DIGEST_ATTRIBUTE.into(), AttributeValue::B(vec![0; 8]));
    assert_eq!(
        check_upload_header(&planted, &lengths, &rules)
            .unwrap_err()
            .code(),
        "ATTRIBUTE_RESERVED"
    );
    // Chunk items made from the bytes alone rebuild the item exactly.
    let chunks: Vec<Item> = split
        .chunks
        .iter()
        .zip(0u32..)
        .map(|(chunk, seq)| {
            let Some(AttributeValue::B(data)) = chunk.get(CHUNK_DATA_ATTRIBUTE) else {
                panic!("chunk data");
            };
            upload_chunk_item(&split.parent, &manifest, seq, data.clone(), &rules).unwrap()
        })
        .collect();
    assert_eq!(chunks, split.chunks);
    assert_eq!(verify_upload(&split.parent, &chunks, &rules).unwrap(), item);
    // Stamped anew: same item, new keys and digests; the old chunks no
    // longer belong to the restamped parent.
    let (mut parent, mut stamped) = (split.parent.clone(), manifest.clone());
    let version = VersionId::new(1_800_000_000_000, 5);
    let restamped = restamp(&mut parent, &mut stamped, chunks.clone(), version, &rules).unwrap();
    assert_eq!(stamped.version, version);
    assert_eq!(
        dynaslice_core::manifest::Manifest::from_value(&parent[MANIFEST_ATTRIBUTE]).unwrap(),
        stamped
    );
    assert!(restamped.iter().zip(&chunks).all(|(a, b)| a != b));
    assert_eq!(verify_upload(&parent, &restamped, &rules).unwrap(), item);
    assert!(verify_upload(&parent, &chunks, &rules).is_err());
    let mut swapped = chunks.clone();
    let first = swapped[0][CHUNK_DATA_ATTRIBUTE].clone();
    let second = swapped[1][CHUNK_DATA_ATTRIBUTE].clone();
    swapped[0].insert(CHUNK_DATA_ATTRIBUTE.into(), second);
    swapped[1].insert(CHUNK_DATA_ATTRIBUTE.into(), first);
    assert!(verify_upload(&split.parent, &swapped, &rules).is_err());
}

#[test]
fn reserved_names_and_mode_names() {
    assert_eq!(RESERVED_ATTRIBUTES, ["_ds", "_d", "_h", "_da"]);
    for mode in WriteMode::ALL {
        assert_eq!(WriteMode::from_name(mode.name()), Some(mode));
    }
    assert_eq!(WriteMode::from_name("fast"), None);
    let names = [WriteKind::Single, WriteKind::Atomic, WriteKind::Batch].map(WriteKind::name);
    assert_eq!(names, ["single", "atomic", "batch"]);
}

/// An upload to a table with an index on `title` and TTL on `expires`:
/// split without them, the title is spilled and the chunks have no room
/// for the TTL value; split with them, it goes in and every chunk carries
/// the parent's TTL.
#[test]
fn an_upload_keeps_the_tables_index_keys_on_the_parent_and_its_chunks_carry_the_ttl() {
    use dynaslice_core::{IndexKey, Table};
    let table = Table {
        table: "docs".into(),
        key: schema(),
        layout: Layout::default(),
        chunk_table: "docs_chunks".into(),
        index_keys: vec![IndexKey {
            name: "title".into(),
            key_type: KeyType::S,
            sort: false,
        }],
        ttl: Some("expires".into()),
        anchors: None,
        objects: None,
    };
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("doc".into()));
    // The largest attribute but the body: spilled first by a client that
    // does not know it is an index key.
    item.insert("title".into(), AttributeValue::S("t".repeat(2000)));
    for i in 0..3 {
        item.insert(format!("meta{i}"), AttributeValue::S("m".repeat(1000)));
    }
    item.insert("expires".into(), AttributeValue::N("2000000000".into()));
    item.insert(
        "body".into(),
        AttributeValue::B((0..1_000_000).map(|i| (i * 7 % 253) as u8).collect()),
    );
    let split_as = |table: &Table| {
        let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 9));
        options.compression = CodecChoice::Fixed(Compression::NONE);
        options.index_keys = table.index_keys.clone();
        options.ttl = table.ttl.clone();
        // An upload is one frame, as the WebAssembly split makes it.
        options.group_bytes = usize::MAX;
        split_item(&item, &options).unwrap()
    };
    let rules = UploadRules::of(&table, 2_000_000);
    // In groups (the body one, the rest another), it is refused whole.
    let grouped = split_item(&item, &{
        let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 9));
        options.compression = CodecChoice::Fixed(Compression::NONE);
        options
    })
    .unwrap();
    assert_eq!(grouped.manifest.as_ref().unwrap().groups.len(), 1);
    let lengths_of = |split: &SplitItem| -> Vec<u64> {
        let manifest = split.manifest.as_ref().unwrap();
        (0..manifest.chunk_count)
            .map(|s| manifest.chunk_len(s))
            .collect()
    };
    let refused = check_upload_header(&grouped.parent, &lengths_of(&grouped), &rules).unwrap_err();
    assert_eq!(refused.code(), "MANIFEST_INVALID", "{refused}");
    let lengths = |split: &SplitItem| -> Vec<u64> {
        let manifest = split.manifest.as_ref().unwrap();
        (0..manifest.chunk_count)
            .map(|s| manifest.chunk_len(s))
            .collect()
    };

    // Split by a client that knew neither: refused before a chunk byte.
    let unaware = split_as(&Table {
        index_keys: Vec::new(),
        ttl: None,
        ..table.clone()
    });
    assert!(
        unaware
            .manifest
            .as_ref()
            .unwrap()
            .spilled
            .contains(&"title".to_string())
    );
    let refused = check_upload_header(&unaware.parent, &lengths(&unaware), &rules).unwrap_err();
    assert_eq!(refused.code(), "ATTRIBUTE_MISPLACED", "{refused}");
    // Its full chunks leave no room for the TTL value either.
    let manifest = unaware.manifest.clone().unwrap();
    let data = |split: &SplitItem, seq: usize| match &split.chunks[seq][CHUNK_DATA_ATTRIBUTE] {
        AttributeValue::B(data) => data.clone(),
        _ => unreachable!(),
    };
    let full = upload_chunk_item(&unaware.parent, &manifest, 0, data(&unaware, 0), &rules);
    assert_eq!(full.unwrap_err().code(), "ITEM_TOO_LARGE");

    // Split with them: accepted, and every chunk carries the TTL.
    let aware = split_as(&table);
    let manifest = check_upload_header(&aware.parent, &lengths(&aware), &rules)
        .unwrap()
        .expect("split");
    let chunks: Vec<Item> = (0..aware.chunks.len())
        .map(|seq| {
            upload_chunk_item(
                &aware.parent,
                &manifest,
                seq as u32,
                data(&aware, seq),
                &rules,
            )
            .unwrap()
        })
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c.get("expires") == item.get("expires"))
    );
    assert_eq!(
        chunks, aware.chunks,
        "the chunks the split made, byte for byte"
    );
    assert_eq!(verify_upload(&aware.parent, &chunks, &rules).unwrap(), item);

    // An index key of another type than the index's is refused too.
    let mut wrong = aware.parent.clone();
    wrong.insert("title".into(), AttributeValue::N("7".into()));
    let refused = check_upload_header(&wrong, &lengths(&aware), &rules).unwrap_err();
    assert_eq!(refused.code(), "KEY_WRONG_TYPE");
}

#[test]
fn an_object_stored_straight_is_described_by_its_frame_and_never_taken_for_chunks() {
    let (mut parent, split) = split(1_000_000);
    let manifest = split.manifest.clone().unwrap();
    // The frame a client would PUT: its chunks' data in order.
    let frame: Vec<u8> = split
        .chunks
        .iter()
        .flat_map(|c| match c.get(CHUNK_DATA_ATTRIBUTE) {
            Some(AttributeValue::B(data)) => data.clone(),
            _ => panic!("chunk data"),
        })
        .collect();
    assert_eq!(frame.len() as u64, manifest.stored_len);
    let (key, layout) = (schema(), Layout::default());
    let rules = UploadRules {
        key: &key,
        layout: &layout,
        max_raw_bytes: 2_000_000,
        index_keys: &[],
        ttl: None,
    };
    parent.remove("body");
    let version = VersionId::new(1_800_000_000_000, 7);
    let object = ObjectRef {
        bucket: "media".into(),
        key: "dynaslice/docs/doc/x".into(),
        etag: "\"e\"".into(),
    };
    /// The object as S3 holds it; `head` instead of the frame's own when given.
    fn stored<'a>(object: &ObjectRef, frame: &'a [u8], head: &'a [u8]) -> StoredObject<'a> {
        let n = frame.len();
        StoredObject {
            object: object.clone(),
            len: n as u64,
            head: if head.is_empty() {
                &frame[..n.min(OBJECT_HEAD_BYTES)]
            } else {
                head
            },
            tail: &frame[n - 8..],
        }
    }
    let own = stored(&object, &frame, &[]);
    let made = object_upload(parent.clone(), "body", version, own, &rules).unwrap();
    let m = made.manifest.clone().unwrap();
    // What the split recorded, read back off the frame's header and trailer.
    let facts = (m.codec, m.raw_len, m.digest, m.stored_len);
    let split_facts = (
        manifest.codec,
        manifest.raw_len,
        manifest.digest,
        manifest.stored_len,
    );
    assert_eq!(facts, split_facts);
    assert_eq!(m.spilled, ["body"]);
    assert_eq!(
        (m.version, m.chunk_count, m.object),
        (version, 0, Some(object.clone()))
    );
    let code = |parent: &Item, attribute: &str, head: &[u8], rules: &UploadRules<'_>| {
        let object = stored(&object, &frame, head);
        object_upload(parent.clone(), attribute, version, object, rules)
            .unwrap_err()
            .code()
    };
    assert_eq!(code(&parent, "body", &[0; 13], &rules), "FRAME_BAD_MAGIC");
    let small = UploadRules {
        max_raw_bytes: 1000,
        ..rules
    };
    assert_eq!(code(&parent, "body", &[], &small), "VIRTUAL_ITEM_TOO_LARGE");
    let mut holding = parent.clone();
    holding.insert("body".into(), AttributeValue::S("already here".into()));
    assert_eq!(code(&holding, "body", &[], &rules), "OPTIONS_INVALID");
    assert_eq!(
        code(&parent, MANIFEST_ATTRIBUTE, &[], &rules),
        "ATTRIBUTE_RESERVED"
    );
    // A frame holding another attribute beside the one granted (here the
    // TTL attribute a reader would then see) is refused from its head.
    let mut two = Item::new();
    two.insert("body".into(), AttributeValue::B(vec![7; 100_000]));
    two.insert("expires".into(), AttributeValue::N("1".into()));
    let raw = dynaslice_core::encoding::encode_item(&two).to_vec();
    let framed = dynaslice_core::codec::compress(&raw, Compression::NONE).unwrap();
    let other = stored(&object, &framed, &[]);
    let refused = object_upload(parent.clone(), "body", version, other, &rules).unwrap_err();
    assert_eq!(refused.code(), "UPLOAD_MALFORMED", "{refused}");
    // The one attribute, under another name than granted: refused too.
    let theirs = stored(&object, &frame, &[]);
    let refused = object_upload(parent.clone(), "other", version, theirs, &rules).unwrap_err();
    assert_eq!(refused.code(), "UPLOAD_MALFORMED", "{refused}");
    // A parent naming an object is never an upload of chunks: the chunk
    // path would commit a pointer it did not check.
    let refused = check_upload_header(&made.parent, &[], &rules).unwrap_err();
    assert_eq!(refused.code(), "MANIFEST_INVALID", "{refused}");
}
