//! Rebuilding a whole item from chunks pushed in order (`Reassembler`): the
//! item `reassemble` gives, from every codec and layout, inline or chunked;
//! for damaged, missing, duplicate, foreign or forged chunks, the error
//! `reassemble` gives for the same chunks in order; chunks out of order are
//! a chunk missing.

mod common;

use common::generate;
use common::stored::{
    any_storage, data_mut, forge, forged_payloads, has_key, item, layouts, schema, split, split_as,
};
use dynaslice_core::codec::Codec;
use dynaslice_core::codec::Compression;
use dynaslice_core::layout::Layout;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, ReassembleError, ReassembleOptions, Reassembler,
    SplitOptions, VersionId, reassemble, split_item,
};
use proptest::prelude::*;

/// Pushes `chunks` as given, in their order, and finishes.
fn push_all(
    parent: &Item,
    chunks: &[Item],
    options: &ReassembleOptions<'_>,
) -> Result<Item, ReassembleError> {
    let mut reassembler = Reassembler::new(parent, options)?;
    for chunk in chunks {
        reassembler.push(chunk)?;
    }
    reassembler.finish()
}

/// Pushes the chunks the reassembler asks for, found by key among `chunks`
/// (skipping one not there), as a reader fetching by key does.
fn by_key(
    parent: &Item,
    chunks: &[Item],
    options: &ReassembleOptions<'_>,
) -> Result<Item, ReassembleError> {
    let mut reassembler = Reassembler::new(parent, options)?;
    for seq in 0..reassembler.chunk_count() {
        let key = reassembler.chunk_key(seq)?;
        if let Some(chunk) = chunks.iter().find(|c| has_key(c, &key)) {
            reassembler.push(chunk)?;
        }
    }
    reassembler.finish()
}

#[test]
fn every_codec_layout_and_placement_gives_what_reassemble_gives() {
    let schema = schema();
    for layout in layouts() {
        let options = ReassembleOptions::new(&schema, &layout);
        for codec in Codec::ALL {
            for inline in [true, false] {
                // Uncompressed, a payload is never smaller than the
                // attributes it holds, so never inline.
                if inline && codec == Codec::None {
                    continue;
                }
                let len = if inline { 700_000 } else { 450_000 };
                let original = item("m", len, true, 3);
                let split = split(&original, &layout, codec, inline, 16_384);
                let case = format!("{} {codec} inline {inline}", layout.name());
                let manifest = split.manifest.as_ref().expect("split");
                assert_eq!(manifest.inline.is_some(), inline, "{case}");
                let reassembler = Reassembler::new(&split.parent, &options).unwrap();
                if inline {
                    assert_eq!(reassembler.chunk_count(), 0, "{case}");
                } else {
                    assert!(split.chunks.len() > 3, "{case}: several chunks");
                    assert_eq!(reassembler.chunk_count() as usize, split.chunks.len());
                }
                let whole = reassemble(&split.parent, &split.chunks, &options).unwrap();
                assert!(whole == original, "{case}");
                let got = by_key(&split.parent, &split.chunks, &options)
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                assert!(got == original, "{case}");
                // BatchGetItem's order is the table's: chunks pushed as
                // stored (in sequence) need no sorting.
                let got = push_all(&split.parent, &split.chunks, &options).unwrap();
                assert!(got == original, "{case}");
            }
        }
    }
}

#[test]
fn an_item_never_split_is_its_parent() {
    let schema = schema();
    let layout = Layout::default();
    let options = ReassembleOptions::new(&schema, &layout);
    let mut plain = Item::new();
    plain.insert("pk".into(), AttributeValue::S("p".into()));
    plain.insert("sk".into(), AttributeValue::S("s".into()));
    plain.insert("n".into(), AttributeValue::N("1.50".into()));
    let mut reassembler = Reassembler::new(&plain, &options).unwrap();
    assert_eq!(reassembler.chunk_count(), 0);
    assert_eq!(
        reassembler.chunk_key(0).unwrap_err().code(),
        "CHUNK_OUT_OF_RANGE"
    );
    let split = split(
        &item("m", 450_000, false, 1),
        &layout,
        Codec::None,
        false,
        65_536,
    );
    let error = reassembler.push(&split.chunks[0]).unwrap_err();
    assert_eq!(error.code(), "CHUNKS_UNEXPECTED");
    assert_eq!(
        reassemble(&plain, &split.chunks[..1], &options)
            .unwrap_err()
            .code(),
        "CHUNKS_UNEXPECTED"
    );
    assert_eq!(
        Reassembler::new(&plain, &options).unwrap().finish(),
        Ok(plain)
    );
}

/// A flipped byte in any chunk's data: `CHUNK_DIGEST_MISMATCH` naming it,
/// as `reassemble` names it, whatever the codec.
#[test]
fn a_damaged_chunk_is_named() {
    let schema = schema();
    for layout in layouts() {
        let options = ReassembleOptions::new(&schema, &layout);
        for codec in Codec::ALL {
            let split = split(&item("m", 450_000, false, 6), &layout, codec, false, 8192);
            assert!(split.chunks.len() > 3, "{codec}");
            for seq in 0..split.chunks.len() {
                let mut chunks = split.chunks.clone();
                let data = data_mut(&mut chunks[seq]);
                let at = data.len() / 2;
                data[at] ^= 0x10;
                let expected = Err(ReassembleError::ChunkDigestMismatch { seq: seq as u32 });
                let whole = reassemble(&split.parent, &chunks, &options).map(|_| ());
                assert_eq!(whole, expected, "{codec} chunk {seq}");
                let got = push_all(&split.parent, &chunks, &options).map(|_| ());
                assert_eq!(got, expected, "{codec} chunk {seq}");
            }
        }
    }
}

/// Like `reassemble`, a chunk's digest matters only to name the damage: a
/// damaged `_h` over intact data still gives the item (the whole payload's
/// digest vouches for every byte).
#[test]
fn a_damaged_chunk_digest_over_intact_data_is_not_an_error() {
    let schema = schema();
    let layout = Layout::default();
    let options = ReassembleOptions::new(&schema, &layout);
    let original = item("m", 450_000, false, 7);
    let split = split(&original, &layout, Codec::Deflate, false, 8192);
    let mut chunks = split.chunks.clone();
    chunks[1].insert(CHUNK_DIGEST_ATTRIBUTE.into(), AttributeValue::B(vec![0; 8]));
    assert!(reassemble(&split.parent, &chunks, &options).unwrap() == original);
    assert!(push_all(&split.parent, &chunks, &options).unwrap() == original);
}

#[test]
fn missing_duplicate_foreign_and_misplaced_chunks_fail_as_reassemble_fails() {
    let schema = schema();
    let layout = Layout::default();
    let options = ReassembleOptions::new(&schema, &layout);
    let original = item("m", 450_000, false, 8);
    let good = split(&original, &layout, Codec::Zstd, false, 8192);
    let c = &good.chunks;
    let n = c.len();
    assert!(n > 4);
    // Another version of the same item, and the same version of another.
    let other_version = split_item(&original, &{
        let mut o = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 9));
        o.compression = CodecChoice::Fixed(Compression::new(Codec::Zstd));
        o.chunk_item_bytes = 8192;
        o.inline = false;
        o
    })
    .unwrap();
    let mut other_item = original.clone();
    other_item.insert("pk".into(), AttributeValue::S("doc#2".into()));
    let other_parent = split(&other_item, &layout, Codec::Zstd, false, 8192);
    let manifest = good.manifest.as_ref().unwrap();
    let beyond = {
        let mut chunk =
            chunk_key(&schema, &layout, &good.parent, manifest.version, n as u32).unwrap();
        chunk.extend(
            c[n - 1]
                .iter()
                .filter(|(k, _)| k.starts_with('_'))
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        chunk
    };
    let with = |at: usize, chunk: &Item| {
        let mut chunks = c.clone();
        chunks[at] = chunk.clone();
        chunks
    };
    let mut short = c[2].clone();
    data_mut(&mut short).pop();
    let mut long = c[2].clone();
    data_mut(&mut long).push(0);
    let mut no_data = c[2].clone();
    no_data.remove(CHUNK_DATA_ATTRIBUTE);
    let cases: Vec<(&str, Vec<Item>, &str)> = vec![
        ("the last missing", c[..n - 1].to_vec(), "CHUNK_MISSING"),
        (
            "a middle one missing",
            [&c[..2], &c[3..]].concat(),
            "CHUNK_MISSING",
        ),
        ("one twice", [&c[..3], &c[2..]].concat(), "CHUNK_DUPLICATE"),
        (
            "another version's",
            with(0, &other_version.chunks[0]),
            "CHUNK_FOREIGN_VERSION",
        ),
        (
            "another item's",
            with(1, &other_parent.chunks[1]),
            "CHUNK_FOREIGN_PARENT",
        ),
        (
            "beyond the count",
            with(n - 1, &beyond),
            "CHUNK_OUT_OF_RANGE",
        ),
        ("truncated", with(2, &short), "CHUNK_TRUNCATED"),
        ("oversized", with(2, &long), "CHUNK_OVERSIZED"),
        ("no data", with(2, &no_data), "CHUNK_MALFORMED"),
    ];
    for (name, chunks, expected) in cases {
        let whole = reassemble(&good.parent, &chunks, &options).unwrap_err();
        let got = push_all(&good.parent, &chunks, &options).unwrap_err();
        assert_eq!(whole.code(), expected, "{name}: {whole}");
        assert_eq!(got.code(), expected, "{name}: {got}");
        if expected == "CHUNK_MISSING" || expected == "CHUNK_DUPLICATE" {
            assert_eq!(got, whole, "{name}: the same chunk named");
        }
    }
    // Out of order: `reassemble` sorts, a reassembler takes them as they
    // come and finds the next one missing.
    let mut swapped = c.clone();
    swapped.swap(1, 2);
    assert!(reassemble(&good.parent, &swapped, &options).unwrap() == original);
    assert_eq!(
        push_all(&good.parent, &swapped, &options),
        Err(ReassembleError::ChunkMissing {
            seq: 1,
            count: n as u32
        })
    );
    // It refuses to go on after its first error, naming it.
    let mut reassembler = Reassembler::new(&good.parent, &options).unwrap();
    assert_eq!(reassembler.push(&c[1]).unwrap_err().code(), "CHUNK_MISSING");
    let error = reassembler.push(&c[0]).unwrap_err();
    assert_eq!(error.code(), "READER_FINISHED");
    assert!(error.to_string().contains("CHUNK_MISSING"), "{error}");
    assert_eq!(reassembler.finish().unwrap_err().code(), "READER_FINISHED");
    // Chunk keys are those of the stored chunks, and no further.
    let reassembler = Reassembler::new(&good.parent, &options).unwrap();
    for (seq, chunk) in c.iter().enumerate() {
        assert!(has_key(chunk, &reassembler.chunk_key(seq as u32).unwrap()));
    }
    assert_eq!(
        reassembler.chunk_key(n as u32).unwrap_err().code(),
        "CHUNK_OUT_OF_RANGE"
    );
}

#[test]
fn the_parent_is_checked_before_any_chunk() {
    let schema = schema();
    let layout = Layout::default();
    let original = item("m", 450_000, false, 9);
    let good = split(&original, &layout, Codec::Deflate, false, 8192);
    let code = |parent: &Item, options: &ReassembleOptions<'_>| {
        let whole = reassemble(parent, &good.chunks, options).unwrap_err();
        let new = Reassembler::new(parent, options)
            .err()
            .expect("refused at once");
        assert_eq!(new.code(), whole.code(), "{new} / {whole}");
        new.code().as_str()
    };
    let mut small = ReassembleOptions::new(&schema, &layout);
    small.max_raw_bytes = 100_000;
    assert_eq!(code(&good.parent, &small), "DECOMPRESS_LIMIT");
    let collection = Layout::ItemCollection;
    let options = ReassembleOptions::new(&schema, &collection);
    assert_eq!(code(&good.parent, &options), "LAYOUT_MISMATCH");
    let options = ReassembleOptions::new(&schema, &layout);
    let mut damaged = good.parent.clone();
    damaged.insert(MANIFEST_ATTRIBUTE.into(), AttributeValue::S("x".into()));
    assert_eq!(code(&damaged, &options), "MANIFEST_INVALID");
    // A spilled attribute also on the parent: found once decoded.
    let mut conflict = good.parent.clone();
    conflict.insert("t".into(), AttributeValue::Null);
    let whole = reassemble(&conflict, &good.chunks, &options).unwrap_err();
    let got = push_all(&conflict, &good.chunks, &options).unwrap_err();
    assert_eq!(whole.code(), "ATTRIBUTE_CONFLICT");
    assert_eq!(got, whole);
}

/// Payloads only a hostile or broken writer stores, each with valid chunk
/// digests: the error `reassemble` gives.
#[test]
fn forged_payloads_fail_as_reassemble_fails() {
    let schema = schema();
    let layout = Layout::default();
    let options = ReassembleOptions::new(&schema, &layout);
    let original = item("m", 450_000, false, 10);
    let good = split(&original, &layout, Codec::None, false, 8192);
    for codec in Codec::ALL {
        for forged in forged_payloads(&original, codec) {
            let (parent, chunks) = forge(&good, &layout, &forged.payload, codec, forged.tamper);
            let whole = reassemble(&parent, &chunks, &options).unwrap_err();
            let got = push_all(&parent, &chunks, &options).unwrap_err();
            let name = forged.name;
            assert_eq!(got.code(), whole.code(), "{codec} {name}: {got} / {whole}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any item, codec, layout and chunk size: the reassembler gives the
    /// item back, as `reassemble` does.
    #[test]
    fn reassembler_equals_reassemble(item in generate::item(), storage in any_storage()) {
        let schema = schema();
        let options = ReassembleOptions::new(&schema, &storage.layout);
        let split = split_as(&item, &storage);
        let whole = reassemble(&split.parent, &split.chunks, &options).unwrap();
        prop_assert_eq!(&whole, &item);
        let got = by_key(&split.parent, &split.chunks, &options).unwrap();
        prop_assert_eq!(&got, &item);
    }
}
