//! The chunk-set vectors (`tests/vectors/chunks.v2.json`): the expected
//! parent and chunk items of `split_item`, computed by an independent Python
//! implementation of `docs/FORMAT.md` (`tests/vectors/tools/reference.py`),
//! not by dynaslice. Cases marked `decode_only` hold payloads compressed by
//! Python's zlib and gzip: they check the reading side only. The version 1
//! file (`chunks.json`, written before anchors) is what older writers
//! stored: every one of its sets must still read.

mod common;

use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::{
    CodecChoice, Item, KeySchema, KeyType, ReassembleOptions, SplitOptions, VersionId, reassemble,
    split_item,
};
use serde_json::Value;

fn vectors() -> Value {
    common::load_vectors("chunks.v2.json", "dynaslice-chunk-vectors/2")
}

fn vectors_v1() -> Value {
    common::load_vectors("chunks.json", "dynaslice-chunk-vectors/1")
}

fn key_type(t: &Value) -> KeyType {
    match t.as_str().unwrap() {
        "S" => KeyType::S,
        "N" => KeyType::N,
        "B" => KeyType::B,
        other => panic!("key type {other}"),
    }
}

/// `{"pk": "S"}` or `{"pk": "S", "sk": "S"}`: partition key first.
fn schema_of(key: &Value) -> KeySchema {
    let key = key.as_object().unwrap();
    let mut schema = KeySchema::partition("pk", key_type(&key["pk"]));
    if let Some(sk) = key.get("sk") {
        schema = schema.with_sort("sk", key_type(sk));
    }
    assert_eq!(key.len(), 1 + usize::from(schema.sort.is_some()));
    schema
}

fn layout_of(layout: &Value) -> Layout {
    match layout["kind"].as_str().unwrap() {
        "table" => Layout::ChunkTable {
            key_name: layout["key_name"].as_str().unwrap().to_string(),
        },
        "collection" => Layout::ItemCollection,
        other => panic!("layout {other}"),
    }
}

fn options_of(case: &Value, schema: &KeySchema, layout: &Layout) -> SplitOptions {
    let o = &case["options"];
    let version = VersionId::new(
        o["version"]["unix_ms"].as_u64().unwrap(),
        o["version"]["random"].as_str().unwrap().parse().unwrap(),
    );
    assert_eq!(
        o["codec"], "none",
        "{}: only codec none is comparable",
        case["name"]
    );
    let mut options = SplitOptions::new(schema.clone(), version);
    options.layout = layout.clone();
    options.compression = CodecChoice::Fixed(Compression::NONE);
    options.chunk_item_bytes = o["chunk_item_bytes"].as_u64().unwrap() as usize;
    options.item_limit = o["item_limit"].as_u64().unwrap() as usize;
    options.parent_budget = o["parent_budget"].as_u64().unwrap() as usize;
    options.inline = o["inline"].as_bool().unwrap();
    options
}

fn chunks_of(case: &Value) -> Vec<Item> {
    case["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(common::item)
        .collect()
}

#[test]
fn split_gives_exactly_the_vectors_chunks() {
    let vectors = vectors();
    let cases = vectors["cases"].as_array().unwrap();
    assert!(cases.len() >= 12);
    let mut wrong = Vec::new();
    for case in cases.iter().filter(|c| c["decode_only"] != true) {
        let name = case["name"].as_str().unwrap();
        let schema = schema_of(&case["key"]);
        let layout = layout_of(&case["layout"]);
        let options = options_of(case, &schema, &layout);
        let item = common::item(&case["item"]);
        let parent = common::item(&case["parent"]);
        let chunks = chunks_of(case);
        match split_item(&item, &options) {
            Ok(split) => {
                if split.parent != parent {
                    wrong.push(format!(
                        "{name}: parent\n  expected {:?}\n  got      {:?}",
                        parent.get("_ds"),
                        split.parent.get("_ds")
                    ));
                }
                if split.chunks != chunks {
                    let first = split.chunks.iter().zip(&chunks).position(|(a, b)| a != b);
                    wrong.push(format!(
                        "{name}: chunks differ (expected {}, got {}; first difference at seq {first:?})",
                        chunks.len(),
                        split.chunks.len()
                    ));
                }
            }
            Err(e) => wrong.push(format!("{name}: split failed: {} {e}", e.code())),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_vector_reassembles_to_its_item() {
    reassembles_every_case(&vectors());
}

#[test]
fn every_version_1_vector_still_reassembles() {
    let v1 = vectors_v1();
    assert!(
        v1["cases"].as_array().unwrap().iter().all(|c| {
            c["chunks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|chunk| chunk.get("_da").is_none())
        }),
        "version 1 has no anchors"
    );
    reassembles_every_case(&v1);
}

fn reassembles_every_case(vectors: &Value) {
    let mut wrong = Vec::new();
    for case in vectors["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let schema = schema_of(&case["key"]);
        let layout = layout_of(&case["layout"]);
        let item = common::item(&case["item"]);
        let parent = common::item(&case["parent"]);
        let mut chunks = chunks_of(case);
        // Chunks may come in any order.
        chunks.reverse();
        match reassemble(&parent, &chunks, &ReassembleOptions::new(&schema, &layout)) {
            Ok(back) if back == item => {}
            Ok(_) => wrong.push(format!("{name}: reassembled another item")),
            Err(e) => wrong.push(format!("{name}: {} {e}", e.code())),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn vectors_cover_what_they_claim() {
    let vectors = vectors();
    let cases = vectors["cases"].as_array().unwrap();
    let decode_only: Vec<_> = cases.iter().filter(|c| c["decode_only"] == true).collect();
    for codec in ["deflate", "zlib", "gzip"] {
        assert!(
            decode_only.iter().any(|c| c["options"]["codec"] == codec),
            "no decode_only case for {codec}"
        );
    }
    for kind in ["table", "collection"] {
        assert!(
            cases
                .iter()
                .any(|c| c["layout"]["kind"] == kind && c["decode_only"] != true)
        );
    }
    assert!(
        cases
            .iter()
            .any(|c| c["chunks"].as_array().unwrap().len() >= 10)
    );
    assert!(
        cases
            .iter()
            .any(|c| c["parent"]["_ds"]["M"].get("p").is_some())
    );
    // Anchors: exactly chunks 0, 64, ... carry `_da`, a copy of `_h`, in a
    // set long enough to have two.
    let anchored = |c: &&Value| -> Vec<usize> {
        let chunks = c["chunks"].as_array().unwrap();
        for chunk in chunks.iter().filter(|ch| ch.get("_da").is_some()) {
            assert_eq!(chunk["_da"], chunk["_h"]);
        }
        (0..chunks.len())
            .filter(|&i| chunks[i].get("_da").is_some())
            .collect()
    };
    for case in cases.iter().filter(|c| c["decode_only"] != true) {
        let n = case["chunks"].as_array().unwrap().len();
        let expected: Vec<usize> = (0..n).step_by(64).collect();
        assert_eq!(anchored(&case), expected, "{}", case["name"]);
    }
    assert!(cases.iter().any(|c| anchored(&c).len() == 2));
}
