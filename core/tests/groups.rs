//! Groups (docs/FORMAT.md §5 and §7, "Groups"): a chunked item's large
//! spilled attributes are frames of their own, each in its own chunks under
//! its own id; every reader takes them (whole, as chunks arrive, one
//! attribute streamed), a new version can carry a group it does not change,
//! and a forged group list is refused before anything is fetched.

use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::layout::{Layout, parse_chunk_key};
use dynaslice_core::manifest::{MANIFEST_ATTRIBUTE, MAX_GROUPS, Manifest};
use dynaslice_core::{
    AttributeValue, ChunkReader, CodecChoice, Item, KeySchema, KeyType, ReassembleOptions,
    Reassembler, SplitOptions, VersionId, item_size, reassemble, split_item,
};

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S)
}

/// Incompressible bytes: sizes on the page are sizes in the store.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..len).map(|_| rng.u8(..)).collect()
}

/// A document: a title kept on the parent, ten 1 KB notes, a 900 KB body
/// and a 600 KB attachment.
fn document() -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("doc".into()));
    item.insert("sk".into(), AttributeValue::S("v".into()));
    item.insert("title".into(), AttributeValue::S("groups".into()));
    for i in 0..10 {
        item.insert(format!("note{i}"), AttributeValue::S("n".repeat(1000)));
    }
    item.insert("body".into(), AttributeValue::B(noise(1, 900_000)));
    item.insert("attachment".into(), AttributeValue::B(noise(2, 600_000)));
    item
}

fn options(layout: &Layout, codec: Codec) -> SplitOptions {
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 40));
    options.layout = layout.clone();
    options.compression = CodecChoice::Fixed(Compression::new(codec));
    options
}

fn layouts() -> [Layout; 2] {
    [Layout::default(), Layout::ItemCollection]
}

fn has_key(chunk: &Item, key: &Item) -> bool {
    key.iter().all(|(k, v)| chunk.get(k) == Some(v))
}

fn blob(value: &AttributeValue) -> Vec<u8> {
    match value {
        AttributeValue::B(b) => b.clone(),
        AttributeValue::S(s) => s.clone().into_bytes(),
        _ => unreachable!("the test's attributes are S or B"),
    }
}

#[test]
fn large_attributes_are_frames_of_their_own_that_every_reader_takes() {
    let item = document();
    for layout in layouts() {
        for codec in [Codec::None, Codec::Zstd, Codec::Deflate] {
            let options = options(&layout, codec);
            let split = split_item(&item, &options).unwrap();
            let manifest = split.manifest.clone().unwrap();
            // The notes spilled share the manifest's own frame; the body
            // and the attachment (over 409,600 bytes each) are one group
            // each, largest first, under the write's id counted on.
            assert!(!manifest.spilled.is_empty());
            for i in 0..10 {
                let note = format!("note{i}");
                let spilled = manifest.spilled.contains(&note);
                assert!(spilled != split.parent.contains_key(&note), "{note}");
            }
            let groups: Vec<_> = manifest.groups.iter().map(|g| g.spilled.clone()).collect();
            assert_eq!(groups, [vec!["body"], vec!["attachment"]], "{codec}");
            let ids: Vec<VersionId> = manifest.frames().map(|f| f.version).collect();
            let version = options.version;
            assert_eq!(ids, [version, version.offset(1), version.offset(2)]);
            assert_eq!(split.parent["title"], item["title"], "kept on the parent");
            assert!(item_size(&split.parent) <= 4096, "within the parent budget");
            // Format 2, which a reader of format 1 refuses.
            let AttributeValue::M(fields) = &split.parent[MANIFEST_ATTRIBUTE] else {
                unreachable!()
            };
            assert_eq!(fields["f"], AttributeValue::N("2".into()));
            // Each frame's chunks are its own: keyed by its id, every one
            // but the frame's last full.
            assert_eq!(split.chunks.len() as u64, manifest.total_chunks());
            for frame in manifest.frames() {
                let mine: Vec<&Item> = split
                    .chunks
                    .iter()
                    .filter(|c| {
                        parse_chunk_key(&options.key, &layout, c).unwrap().version == frame.version
                    })
                    .collect();
                assert_eq!(mine.len() as u32, frame.chunk_count, "{codec}");
            }

            let read = ReassembleOptions::new(&options.key, &layout);
            // Whole, from the chunks in any order.
            let mut shuffled = split.chunks.clone();
            shuffled.reverse();
            assert_eq!(reassemble(&split.parent, &shuffled, &read).unwrap(), item);
            // As they arrive, in the reassembler's order.
            let mut reassembler = Reassembler::new(&split.parent, &read).unwrap();
            assert_eq!(
                u64::from(reassembler.chunk_count()),
                manifest.total_chunks()
            );
            for seq in 0..reassembler.chunk_count() {
                let key = reassembler.chunk_key(seq).unwrap();
                let chunk = split.chunks.iter().find(|c| has_key(c, &key)).unwrap();
                reassembler.push(chunk).unwrap();
            }
            assert_eq!(reassembler.finish().unwrap(), item);
            // One attribute streamed: only its frame's chunks are read.
            for (name, frame) in [
                ("body", &manifest.groups[0]),
                ("attachment", &manifest.groups[1]),
                (manifest.spilled[0].as_str(), &manifest),
            ] {
                let mut reader = ChunkReader::new(&split.parent, name, &read).unwrap();
                assert_eq!(reader.chunk_count(), frame.chunk_count, "{name}");
                let mut bytes = Vec::new();
                for seq in 0..reader.chunk_count() {
                    let key = reader.chunk_key(seq).unwrap();
                    let chunk = split.chunks.iter().find(|c| has_key(c, &key)).unwrap();
                    reader.push(chunk).unwrap();
                    loop {
                        let piece = reader.read().unwrap();
                        if piece.is_empty() {
                            break;
                        }
                        bytes.extend_from_slice(piece);
                    }
                }
                reader.finish().unwrap();
                assert_eq!(bytes, blob(&item[name]), "{codec} {name}");
            }
        }
    }
}

#[test]
fn a_chunk_of_one_frame_in_another_or_missing_is_refused() {
    let item = document();
    let layout = Layout::default();
    let options = options(&layout, Codec::None);
    let split = split_item(&item, &options).unwrap();
    let manifest = split.manifest.clone().unwrap();
    let read = ReassembleOptions::new(&options.key, &layout);
    let body = manifest.groups[0].version;
    let at = |id: VersionId, seq: u32| {
        split
            .chunks
            .iter()
            .position(|c| {
                let key = parse_chunk_key(&options.key, &layout, c).unwrap();
                key.version == id && key.seq == seq
            })
            .unwrap()
    };

    // The body's first chunk missing.
    let mut missing = split.chunks.clone();
    missing.remove(at(body, 0));
    let error = reassemble(&split.parent, &missing, &read).unwrap_err();
    assert_eq!(error.code(), "CHUNK_MISSING", "{error}");

    // The attachment's first chunk's bytes under the body's first key:
    // the same length, another frame's bytes.
    let attachment = manifest.groups[1].version;
    let mut swapped = split.chunks.clone();
    let data = swapped[at(attachment, 0)]["_d"].clone();
    swapped[at(body, 0)].insert("_d".into(), data);
    let error = reassemble(&split.parent, &swapped, &read).unwrap_err();
    assert_eq!(error.code(), "CHUNK_DIGEST_MISMATCH", "{error}");
    let mut reassembler = Reassembler::new(&split.parent, &read).unwrap();
    let error = (0..reassembler.chunk_count())
        .find_map(|seq| {
            let key = reassembler.chunk_key(seq).unwrap();
            let chunk = swapped.iter().find(|c| has_key(c, &key)).unwrap();
            reassembler.push(chunk).err()
        })
        .unwrap_or_else(|| reassembler.finish().unwrap_err());
    assert_eq!(error.code(), "CHUNK_DIGEST_MISMATCH", "{error}");

    // A chunk of another item's frame: refused by its version.
    let other = split_item(&item, &{
        let mut o = options.clone();
        o.version = VersionId::new(1_763_683_200_000, 99);
        o
    })
    .unwrap();
    let mut foreign = split.chunks.clone();
    foreign.push(other.chunks[0].clone());
    let error = reassemble(&split.parent, &foreign, &read).unwrap_err();
    assert_eq!(error.code(), "CHUNK_FOREIGN_VERSION", "{error}");
}

/// `split`'s parent with its manifest's field map changed by `change`.
fn forged(
    split: &dynaslice_core::SplitItem,
    change: impl Fn(&mut std::collections::BTreeMap<String, AttributeValue>),
) -> Item {
    let mut parent = split.parent.clone();
    let Some(AttributeValue::M(fields)) = parent.get_mut(MANIFEST_ATTRIBUTE) else {
        unreachable!()
    };
    change(fields);
    parent
}

#[test]
fn a_forged_group_list_is_refused_before_anything_is_fetched() {
    let item = document();
    let layout = Layout::default();
    let options = options(&layout, Codec::None);
    let split = split_item(&item, &options).unwrap();
    let read = ReassembleOptions::new(&options.key, &layout);
    let groups = |fields: &std::collections::BTreeMap<String, AttributeValue>| match &fields["g"] {
        AttributeValue::L(list) => list.clone(),
        _ => unreachable!(),
    };
    let cases: Vec<(&str, Item)> = vec![
        (
            "format 2 without groups",
            forged(&split, |f| {
                f.remove("g");
            }),
        ),
        (
            "an empty group list",
            forged(&split, |f| {
                f.insert("g".into(), AttributeValue::L(Vec::new()));
            }),
        ),
        (
            "a group of the manifest's own id",
            forged(&split, |f| {
                let mut list = groups(f);
                let AttributeValue::M(group) = &mut list[0] else {
                    unreachable!()
                };
                group.insert("v".into(), f["v"].clone());
                f.insert("g".into(), AttributeValue::L(list));
            }),
        ),
        (
            "one group twice",
            forged(&split, |f| {
                let mut list = groups(f);
                list.push(list[0].clone());
                f.insert("g".into(), AttributeValue::L(list));
            }),
        ),
        (
            "a group naming nothing",
            forged(&split, |f| {
                let mut list = groups(f);
                let AttributeValue::M(group) = &mut list[0] else {
                    unreachable!()
                };
                group.remove("a");
                f.insert("g".into(), AttributeValue::L(list));
            }),
        ),
        (
            "a group inline",
            forged(&split, |f| {
                let mut list = groups(f);
                let AttributeValue::M(group) = &mut list[0] else {
                    unreachable!()
                };
                group.insert("n".into(), AttributeValue::N("0".into()));
                f.insert("g".into(), AttributeValue::L(list));
            }),
        ),
        (
            "more groups than a manifest lists",
            forged(&split, |f| {
                let list = groups(f);
                let many = (0..=MAX_GROUPS as u128)
                    .map(|n| {
                        let AttributeValue::M(mut group) = list[0].clone() else {
                            unreachable!()
                        };
                        let id = VersionId::new(1_763_683_200_000, 1000 + n).to_text();
                        group.insert("v".into(), AttributeValue::S(id));
                        AttributeValue::M(group)
                    })
                    .collect();
                f.insert("g".into(), AttributeValue::L(many));
            }),
        ),
        (
            "groups with a payload inline",
            forged(&split, |f| {
                f.insert("p".into(), AttributeValue::B(Vec::new()));
            }),
        ),
    ];
    for (case, parent) in cases {
        let value = &parent[MANIFEST_ATTRIBUTE];
        let error = Manifest::from_value(value).unwrap_err();
        assert_eq!(error.code(), "MANIFEST_INVALID", "{case}: {error}");
        let error = Reassembler::new(&parent, &read).err().unwrap();
        assert_eq!(error.code(), "MANIFEST_INVALID", "{case}: {error}");
    }

    // Format 1 has no groups: a `g` there is ignored, as a reader of
    // format 1 ignores it, and the chunks of what it names are foreign.
    let one = forged(&split, |f| {
        f.insert("f".into(), AttributeValue::N("1".into()));
    });
    let manifest = Manifest::from_value(&one[MANIFEST_ATTRIBUTE]).unwrap();
    assert!(manifest.groups.is_empty());
    let error = reassemble(&one, &split.chunks, &read).unwrap_err();
    assert_eq!(error.code(), "CHUNK_FOREIGN_VERSION", "{error}");
}

#[test]
fn a_new_version_carries_a_group_it_does_not_change() {
    let item = document();
    let layout = Layout::default();
    let first = options(&layout, Codec::None);
    let old = split_item(&item, &first).unwrap();
    let body = old.manifest.as_ref().unwrap().groups[0].clone();
    assert_eq!(body.spilled, ["body"]);

    // The attachment changes; the body's frame is carried.
    let mut changed = item.clone();
    changed.insert("attachment".into(), AttributeValue::B(noise(3, 500_000)));
    let mut without_body = changed.clone();
    without_body.remove("body");
    let mut second = options(&layout, Codec::None);
    second.version = VersionId::new(1_763_683_300_000, 41);
    second.carried = vec![body.clone()];
    let new = split_item(&without_body, &second).unwrap();
    let manifest = new.manifest.clone().unwrap();
    assert!(
        manifest.frames().any(|f| f == &body),
        "the body is listed as it was"
    );
    let body_id = body.version;
    assert!(
        new.chunks
            .iter()
            .all(|c| parse_chunk_key(&second.key, &layout, c).unwrap().version != body_id),
        "no body chunk is written again"
    );
    // Read from the new chunks and the old body's.
    let old_body: Vec<Item> = old
        .chunks
        .iter()
        .filter(|c| parse_chunk_key(&first.key, &layout, c).unwrap().version == body_id)
        .cloned()
        .collect();
    let chunks: Vec<Item> = new.chunks.iter().chain(&old_body).cloned().collect();
    let read = ReassembleOptions::new(&second.key, &layout);
    assert_eq!(reassemble(&new.parent, &chunks, &read).unwrap(), changed);

    // Everything else fits on the parent: its own frame holds nothing.
    let mut small = Item::new();
    small.insert("pk".into(), AttributeValue::S("doc".into()));
    small.insert("sk".into(), AttributeValue::S("v".into()));
    small.insert("title".into(), AttributeValue::S("groups".into()));
    let only = split_item(&small, &second).unwrap();
    let manifest = only.manifest.clone().unwrap();
    assert!(manifest.spilled.is_empty() && manifest.chunk_count == 1);
    let chunks: Vec<Item> = only.chunks.iter().chain(&old_body).cloned().collect();
    let mut expected = small.clone();
    expected.insert("body".into(), item["body"].clone());
    assert_eq!(reassemble(&only.parent, &chunks, &read).unwrap(), expected);

    // An item still holding a carried attribute would read it twice.
    let error = split_item(&changed, &second).unwrap_err();
    assert_eq!(error.code(), "OPTIONS_INVALID", "{error}");
}

#[test]
fn the_changes_to_a_new_item_are_found_without_reading_the_payload() {
    use dynaslice_core::plan::changes_to;
    let item = document();
    let layout = Layout::default();
    let options = options(&layout, Codec::Zstd);
    let split = split_item(&item, &options).unwrap();
    let manifest = split.manifest.clone().unwrap();
    let parent = &split.parent;
    fn names(changes: &dynaslice_core::plan::Changes) -> (Vec<&str>, Vec<String>) {
        let set: Vec<&str> = changes.set.keys().map(String::as_str).collect();
        (set, changes.remove.clone())
    }

    // The same item: nothing.
    let same = changes_to(parent, &item, &options.key).unwrap().unwrap();
    assert_eq!(names(&same), (vec![], vec![]));

    // A group's attribute: that group alone (its frame's digest differs).
    let mut new = item.clone();
    new.insert("attachment".into(), AttributeValue::B(noise(5, 10)));
    let changes = changes_to(parent, &new, &options.key).unwrap().unwrap();
    assert_eq!(names(&changes), (vec!["attachment"], vec![]));
    assert_eq!(changes.set["attachment"], new["attachment"]);

    // A note in the manifest's own frame: every attribute of that frame.
    let mut new = item.clone();
    let note = manifest.spilled[0].clone();
    new.insert(note.clone(), AttributeValue::S("changed".into()));
    let changes = changes_to(parent, &new, &options.key).unwrap().unwrap();
    let own: Vec<&str> = manifest.spilled.iter().map(String::as_str).collect();
    assert_eq!(names(&changes), (own, vec![]));

    // On the parent: compared by value. Removed, added: as they are.
    let mut new = item.clone();
    new.insert("title".into(), AttributeValue::S("renamed".into()));
    new.remove("body");
    new.insert("added".into(), AttributeValue::N("1".into()));
    let changes = changes_to(parent, &new, &options.key).unwrap().unwrap();
    assert_eq!(
        names(&changes),
        (vec!["added", "title"], vec!["body".into()])
    );

    // A frame that does not name its attributes: only a read could tell.
    let mut unnamed = parent.clone();
    let Some(AttributeValue::M(fields)) = unnamed.get_mut(MANIFEST_ATTRIBUTE) else {
        unreachable!()
    };
    fields.remove("a");
    assert_eq!(changes_to(&unnamed, &item, &options.key).unwrap(), None);
}
