//! Inputs found by the fuzz targets in `core/fuzz`, and the seeds they start
//! from, replayed as ordinary tests through the same code paths: each gives
//! its expected error code (never a panic), or, when valid, a correct round
//! trip. Every file under `tests/fuzz_regressions/` must have a row below,
//! so a new crash file cannot be dropped in without saying what it must give.
//! `tests/fuzz_regressions/README.md` says where each file comes from.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use dynaslice_core::codec::{FrameHeader, check_digest, decompress};
use dynaslice_core::encoding::{decode_attributes, encode_item};
use dynaslice_core::layout::Layout;
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType, ReassembleOptions, reassemble};

/// The limit the `decompress` fuzz target uses.
const DECOMPRESS_LIMIT: usize = 1 << 20;

/// Expected outcome of each file: an error code, or `OK`.
const EXPECTED: &[(&str, &str, &str)] = &[
    ("decode_value", "all-types-unsorted", "OK"),
    ("decode_value", "bad-magic", "STREAM_BAD_MAGIC"),
    ("decode_value", "corpus-top-1", "OK"),
    ("decode_value", "corpus-top-2", "OK"),
    ("decode_value", "count-u64-max", "STREAM_TRUNCATED"),
    ("decode_value", "duplicate-map-key", "STREAM_DUPLICATE_NAME"),
    ("decode_value", "duplicate-name", "STREAM_DUPLICATE_NAME"),
    (
        "decode_value",
        "list-count-beyond-input",
        "STREAM_TRUNCATED",
    ),
    ("decode_value", "name-not-utf8", "STREAM_INVALID_UTF8"),
    ("decode_value", "nesting-40", "STREAM_TOO_DEEP"),
    (
        "decode_value",
        "string-longer-than-input",
        "STREAM_TRUNCATED",
    ),
    ("decode_value", "trailing-byte", "STREAM_TRAILING_BYTES"),
    ("decode_value", "unknown-tag", "STREAM_UNKNOWN_TAG"),
    // "DSV" 02 and no attributes: unsupported until version 2 (a binary
    // of unknown length) was added; now an empty item.
    ("decode_value", "unsupported-version", "OK"),
    (
        "decode_value",
        "unsupported-version-3",
        "STREAM_UNSUPPORTED_VERSION",
    ),
    ("decode_value", "varint-eleven-bytes", "STREAM_BAD_VARINT"),
    ("decode_value", "varint-overlong", "STREAM_BAD_VARINT"),
    ("decompress", "bad-magic", "FRAME_BAD_MAGIC"),
    ("decompress", "codec-id-6", "CODEC_UNKNOWN"),
    ("decompress", "corpus-zstd-corrupt", "CODEC_CORRUPT"),
    ("decompress", "corpus-zstd-short", "LENGTH_MISMATCH"),
    (
        "decompress",
        "deflate-shorter-than-recorded",
        "LENGTH_MISMATCH",
    ),
    ("decompress", "frame-version-2", "FRAME_UNSUPPORTED_VERSION"),
    ("decompress", "gzip-crc-flipped", "CODEC_CORRUPT"),
    ("decompress", "gzip-extra-beyond-body", "CODEC_CORRUPT"),
    ("decompress", "gzip-text-valid", "OK"),
    ("decompress", "none-body-flipped", "DIGEST_MISMATCH"),
    ("decompress", "raw-length-over-limit", "DECOMPRESS_LIMIT"),
    ("decompress", "raw-length-u64-max", "DECOMPRESS_LIMIT"),
    ("decompress", "snappy-length-disagrees", "LENGTH_MISMATCH"),
    ("decompress", "truncated-header", "FRAME_TRUNCATED"),
    ("decompress", "zlib-trailing-byte", "CODEC_CORRUPT"),
    ("decompress", "zstd-empty-valid", "OK"),
    ("decompress", "zstd-longer-than-recorded", "LENGTH_MISMATCH"),
    ("decompress", "zstd-trailing-byte", "CODEC_CORRUPT"),
    ("reassemble", "chunk-count-4e9", "MANIFEST_INVALID"),
    ("reassemble", "chunk-missing", "CHUNK_MISSING"),
    (
        "reassemble",
        "inline-manifest-digest-flip",
        "FRAME_MISMATCH",
    ),
    ("reassemble", "number-key-huge-exponent", "CHUNK_MALFORMED"),
    ("reassemble", "number-key-min-exponent", "CHUNK_MALFORMED"),
    ("reassemble", "over-reader-limit", "DECOMPRESS_LIMIT"),
    ("reassemble", "resealed-body-flip", "DIGEST_MISMATCH"),
    ("reassemble", "resealed-data-swapped", "FRAME_BAD_MAGIC"),
    ("reassemble", "resealed-deflate-flip", "DIGEST_MISMATCH"),
    (
        "reassemble",
        "stored-shorter-than-framing",
        "MANIFEST_INVALID",
    ),
    ("reassemble", "untouched-inline", "OK"),
    ("reassemble", "untouched-reversed", "OK"),
];

fn dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_regressions")
        .join(target)
}

/// Runs `replay` on every file of `target`, checking each outcome against
/// [`EXPECTED`] and turning a panic into a failure that names the file.
fn replay_all(target: &str, replay: fn(&[u8]) -> String) {
    let rows: Vec<_> = EXPECTED.iter().filter(|row| row.0 == target).collect();
    assert!(!rows.is_empty(), "no regression files for {target}");
    for &&(_, name, expected) in &rows {
        let bytes =
            fs::read(dir(target).join(name)).unwrap_or_else(|e| panic!("{target}/{name}: {e}"));
        let outcome = catch_unwind(AssertUnwindSafe(|| replay(&bytes)))
            .unwrap_or_else(|_| panic!("{target}/{name} panicked"));
        assert_eq!(outcome, expected, "{target}/{name}");
    }
}

#[test]
fn every_file_has_an_expected_outcome() {
    let listed: BTreeSet<(String, String)> = EXPECTED
        .iter()
        .map(|(t, n, _)| (t.to_string(), n.to_string()))
        .collect();
    assert_eq!(listed.len(), EXPECTED.len(), "a file is listed twice");
    let mut found = BTreeSet::new();
    for target in ["decode_value", "decompress", "reassemble"] {
        for entry in fs::read_dir(dir(target)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            found.insert((target.to_string(), name));
        }
    }
    assert_eq!(found, listed, "files and EXPECTED rows differ");
}

/// The `decode_value` target's check: a decoded item re-encodes to a stream
/// of the same length that decodes to the same item.
fn replay_decode(bytes: &[u8]) -> String {
    let item = match decode_attributes(bytes) {
        Ok(item) => item,
        Err(e) => return e.code().as_str().into(),
    };
    let encoded = encode_item(&item).to_vec();
    assert_eq!(encoded.len(), bytes.len(), "re-encoding changed the length");
    assert_eq!(decode_attributes(&encoded).unwrap(), item);
    "OK".into()
}

#[test]
fn decode_value() {
    replay_all("decode_value", replay_decode);
}

/// The `decompress` target's check: output within the limit, of the length
/// the header records, matching the trailer's digest.
fn replay_decompress(frame: &[u8]) -> String {
    let raw = match decompress(frame, DECOMPRESS_LIMIT) {
        Ok(raw) => raw,
        Err(e) => return e.code().as_str().into(),
    };
    assert!(raw.len() <= DECOMPRESS_LIMIT);
    assert_eq!(FrameHeader::parse(frame).unwrap().raw_len, raw.len() as u64);
    check_digest(&raw, FrameHeader::trailer_digest(frame)).unwrap();
    "OK".into()
}

#[test]
fn decompress_frames() {
    replay_all("decompress", replay_decompress);
}

/// A saved `reassemble` case: a value stream holding the key types, layout,
/// payload limit, the original item, and the (tampered) parent and chunks.
struct ReassembleCase {
    schema: KeySchema,
    layout: Layout,
    max_raw_bytes: usize,
    item: Item,
    parent: Item,
    chunks: Vec<Item>,
}

fn key_type(name: &str) -> KeyType {
    match name {
        "S" => KeyType::S,
        "N" => KeyType::N,
        "B" => KeyType::B,
        _ => panic!("unknown key type {name}"),
    }
}

fn read_case(bytes: &[u8]) -> ReassembleCase {
    let mut case = decode_attributes(bytes).expect("a saved case is a value stream");
    let mut take = |name: &str| case.remove(name);
    let text = |value: Option<AttributeValue>| match value {
        Some(AttributeValue::S(s)) => s,
        other => panic!("expected text, got {other:?}"),
    };
    let map = |value: Option<AttributeValue>| match value {
        Some(AttributeValue::M(m)) => m,
        other => panic!("expected a map, got {other:?}"),
    };
    let mut schema = KeySchema::partition("pk", key_type(&text(take("partition"))));
    if let Some(sort) = take("sort") {
        schema = schema.with_sort("sk", key_type(&text(Some(sort))));
    }
    let layout = match text(take("layout")).as_str() {
        "table" => Layout::default(),
        "collection" => Layout::ItemCollection,
        other => panic!("unknown layout {other}"),
    };
    let max_raw_bytes = match take("max_raw_bytes") {
        Some(AttributeValue::N(n)) => n.parse().unwrap(),
        other => panic!("expected a number, got {other:?}"),
    };
    let chunks = match take("chunks") {
        Some(AttributeValue::L(list)) => list.into_iter().map(|c| map(Some(c))).collect(),
        other => panic!("expected a list, got {other:?}"),
    };
    ReassembleCase {
        schema,
        layout,
        max_raw_bytes,
        item: map(take("item")),
        parent: map(take("parent")),
        chunks,
    }
}

/// The `reassemble` target's check: the original item or an error, never
/// another item.
fn replay_reassemble(bytes: &[u8]) -> String {
    let case = read_case(bytes);
    let options = ReassembleOptions {
        key: &case.schema,
        layout: &case.layout,
        max_raw_bytes: case.max_raw_bytes,
    };
    match reassemble(&case.parent, &case.chunks, &options) {
        Ok(item) => {
            assert!(item == case.item, "reassembled a different item");
            "OK".into()
        }
        Err(e) => e.code().as_str().into(),
    }
}

#[test]
fn reassemble_cases() {
    replay_all("reassemble", replay_reassemble);
}
