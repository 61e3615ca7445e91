//! Streaming one attribute out of a stored item: the bytes `reassemble`
//! gives, from every codec and layout, inline or chunked, wherever the
//! attribute sits among others; damage stops the stream with the typed error
//! `reassemble` gives, and a damaged chunk before any of its bytes come out.

mod common;

use common::generate;
use common::stored::{
    any_storage, forge, forged_payloads, has_key, item, layouts, schema, split, split_as,
};
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::layout::Layout;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{
    AttributeValue, ChunkReader, CodecChoice, Item, KeySchema, ReassembleError, ReassembleOptions,
    SplitOptions, VersionId, reassemble, split_item,
};
use proptest::prelude::*;

fn options<'a>(schema: &'a KeySchema, layout: &'a Layout) -> ReassembleOptions<'a> {
    ReassembleOptions::new(schema, layout)
}

/// What a stream read yields: the bytes released, and how many had come out
/// after each chunk (index 0: before the first).
struct Streamed {
    bytes: Vec<u8>,
    after: Vec<usize>,
    result: Result<(), ReassembleError>,
}

/// Streams `attribute` out of `parent`, pushing the chunks the reader asks
/// for (those `chunks` holds) in order and reading after each.
fn stream(
    parent: &Item,
    chunks: &[Item],
    attribute: &str,
    options: &ReassembleOptions<'_>,
) -> Streamed {
    let mut streamed = Streamed {
        bytes: Vec::new(),
        after: Vec::new(),
        result: Ok(()),
    };
    streamed.result = stream_into(&mut streamed, parent, chunks, attribute, options);
    streamed
}

fn stream_into(
    streamed: &mut Streamed,
    parent: &Item,
    chunks: &[Item],
    attribute: &str,
    options: &ReassembleOptions<'_>,
) -> Result<(), ReassembleError> {
    let mut reader = ChunkReader::new(parent, attribute, options)?;
    let drain = |reader: &mut ChunkReader, out: &mut Vec<u8>| loop {
        let piece = reader.read()?;
        if piece.is_empty() {
            return Ok::<(), ReassembleError>(());
        }
        out.extend_from_slice(piece);
    };
    drain(&mut reader, &mut streamed.bytes)?;
    streamed.after.push(streamed.bytes.len());
    for seq in 0..reader.chunk_count() {
        let key = reader.chunk_key(seq)?;
        if let Some(chunk) = chunks.iter().find(|c| has_key(c, &key)) {
            reader.push(chunk)?;
        }
        drain(&mut reader, &mut streamed.bytes)?;
        streamed.after.push(streamed.bytes.len());
    }
    reader.finish()
}

/// The attribute as `reassemble` gives it, as bytes.
fn reassembled(
    parent: &Item,
    chunks: &[Item],
    attribute: &str,
    options: &ReassembleOptions<'_>,
) -> Result<Vec<u8>, ReassembleError> {
    match reassemble(parent, chunks, options)?.remove(attribute) {
        Some(AttributeValue::S(s)) => Ok(s.into_bytes()),
        Some(AttributeValue::B(b)) => Ok(b),
        _ => panic!("test items hold {attribute} as S or B"),
    }
}

#[test]
fn every_codec_layout_and_position_streams_what_reassemble_gives() {
    let schema = schema();
    for layout in layouts() {
        let options = options(&schema, &layout);
        for codec in Codec::ALL {
            for (name, string) in [("a", false), ("m", true), ("z", false)] {
                for inline in [true, false] {
                    // Uncompressed, a payload is never smaller than the
                    // attributes it holds, so never inline.
                    if inline && codec == Codec::None {
                        continue;
                    }
                    let len = if inline { 700_000 } else { 450_000 };
                    let item = item(name, len, string, 3);
                    let split = split(&item, &layout, codec, inline, 16_384);
                    let manifest = split.manifest.as_ref().expect("split");
                    assert_eq!(manifest.inline.is_some(), inline, "{codec} {name}");
                    let mut spilled = vec!["f", name, "t"];
                    spilled.sort();
                    assert_eq!(manifest.spilled, spilled, "{codec} {name}");
                    let expected =
                        reassembled(&split.parent, &split.chunks, name, &options).unwrap();
                    let got = stream(&split.parent, &split.chunks, name, &options);
                    let case = format!("{} {codec} {name} inline {inline}", layout.name());
                    got.result.unwrap_or_else(|e| panic!("{case}: {e}"));
                    assert!(got.bytes == expected, "{case}");
                    if !inline {
                        assert!(split.chunks.len() > 3, "{case}: several chunks");
                    }
                    if !inline && codec != Codec::Snappy {
                        // Bytes come out as chunks arrive, not all at the
                        // end (raw snappy decodes only whole).
                        let before_last = got.after[got.after.len() - 2];
                        assert!(before_last > expected.len() / 2, "{case}: {:?}", got.after);
                    }
                }
            }
        }
    }
}

#[test]
fn attributes_on_the_parent_need_no_chunks() {
    let schema = schema();
    let layout = Layout::default();
    let options = options(&schema, &layout);
    let mut item = item("data", 500_000, false, 4);
    item.insert("title".into(), AttributeValue::S("héllo".into()));
    item.insert("count".into(), AttributeValue::N("12".into()));
    let split = split(&item, &layout, Codec::Zstd, false, 409_600);
    assert!(!split.chunks.is_empty());
    for (name, expected) in [("title", "héllo".as_bytes()), ("sk", b"v\\1".as_slice())] {
        let mut reader = ChunkReader::new(&split.parent, name, &options).unwrap();
        assert_eq!(reader.chunk_count(), 0);
        assert_eq!(reader.size(), Some(expected.len() as u64));
        assert_eq!(reader.read().unwrap(), expected);
        assert_eq!(reader.read().unwrap(), b"");
        reader.finish().unwrap();
    }
    // A plain item, never split.
    let mut plain = Item::new();
    plain.insert("pk".into(), AttributeValue::S("p".into()));
    plain.insert("sk".into(), AttributeValue::S("s".into()));
    plain.insert("data".into(), AttributeValue::B(vec![1, 2, 3]));
    let got = stream(&plain, &[], "data", &options);
    assert_eq!((got.bytes, got.result), (vec![1, 2, 3], Ok(())));

    let code = |parent: &Item, name: &str| {
        ChunkReader::new(parent, name, &options)
            .err()
            .map(|e| e.code().as_str())
    };
    assert_eq!(code(&split.parent, "count"), Some("ATTRIBUTE_NOT_BLOB"));
    assert_eq!(code(&plain, "nothing"), Some("ATTRIBUTE_NOT_FOUND"));
    // Not among the manifest's spilled names: refused before any chunk.
    assert_eq!(code(&split.parent, "nothing"), Some("ATTRIBUTE_NOT_FOUND"));
    assert_eq!(
        code(&split.parent, MANIFEST_ATTRIBUTE),
        Some("ATTRIBUTE_NOT_FOUND")
    );
    // In the payload, of another type: found when the stream reaches it.
    let got = stream(&split.parent, &split.chunks, "f", &options);
    assert_eq!(got.result.unwrap_err().code(), "ATTRIBUTE_NOT_BLOB");
    // Finishing with bytes unread is the caller's mistake, and says so.
    let reader = ChunkReader::new(&split.parent, "title", &options).unwrap();
    assert_eq!(reader.finish().unwrap_err().code(), "READER_NOT_DRAINED");
}

#[test]
fn without_a_list_of_spilled_names_absence_is_found_at_the_end() {
    let schema = schema();
    let layout = Layout::default();
    let options = options(&schema, &layout);
    let split = split(
        &item("m", 450_000, false, 5),
        &layout,
        Codec::Deflate,
        false,
        16_384,
    );
    let mut parent = split.parent.clone();
    let mut manifest = Manifest::from_value(&parent[MANIFEST_ATTRIBUTE]).unwrap();
    manifest.spilled.clear();
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    let got = stream(&parent, &split.chunks, "q", &options);
    assert_eq!(got.bytes, b"");
    assert_eq!(got.result.unwrap_err().code(), "ATTRIBUTE_NOT_FOUND");
}

/// A flipped byte in any chunk stops the stream at that chunk's push, with
/// nothing decoded from it released.
#[test]
fn a_damaged_chunk_fails_before_any_of_its_bytes_come_out() {
    let schema = schema();
    for layout in layouts() {
        let options = options(&schema, &layout);
        for codec in [Codec::None, Codec::Gzip, Codec::Zstd] {
            let split = split(&item("m", 450_000, false, 6), &layout, codec, false, 8192);
            let good = stream(&split.parent, &split.chunks, "m", &options);
            good.result.unwrap();
            for seq in 0..split.chunks.len() {
                let mut chunks = split.chunks.clone();
                let Some(AttributeValue::B(data)) = chunks[seq].get_mut(CHUNK_DATA_ATTRIBUTE)
                else {
                    unreachable!()
                };
                let at = data.len() / 2;
                data[at] ^= 0x10;
                let got = stream(&split.parent, &chunks, "m", &options);
                assert_eq!(
                    got.result,
                    Err(ReassembleError::ChunkDigestMismatch { seq: seq as u32 }),
                    "{codec} chunk {seq}"
                );
                assert_eq!(got.bytes.len(), good.after[seq], "{codec} chunk {seq}");
                assert!(got.bytes == good.bytes[..got.bytes.len()]);
            }
        }
    }
}

#[test]
fn chunks_out_of_order_missing_or_foreign_are_refused() {
    let schema = schema();
    let layout = Layout::default();
    let options = options(&schema, &layout);
    let split = split(
        &item("m", 450_000, false, 8),
        &layout,
        Codec::None,
        false,
        8192,
    );
    let other = split_item(&item("m", 450_000, false, 8), &{
        let mut o = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 9));
        o.compression = CodecChoice::Fixed(Compression::NONE);
        o.chunk_item_bytes = 8192;
        o
    })
    .unwrap();
    let code = |chunks: &[&Item]| {
        let mut reader = ChunkReader::new(&split.parent, "m", &options).unwrap();
        for chunk in chunks {
            reader.push(chunk)?;
            while !reader.read()?.is_empty() {}
        }
        reader.finish()
    };
    let c = &split.chunks;
    let code_of = |r: Result<(), ReassembleError>| r.unwrap_err().code().as_str();
    assert_eq!(code_of(code(&[&c[0], &c[2]])), "CHUNK_MISSING");
    assert_eq!(code_of(code(&[&c[0], &c[1], &c[1]])), "CHUNK_DUPLICATE");
    assert_eq!(code_of(code(&[&c[0], &c[1]])), "CHUNK_MISSING");
    assert_eq!(code_of(code(&[&other.chunks[0]])), "CHUNK_FOREIGN_VERSION");
    let mut short = c[0].clone();
    short.insert(CHUNK_DATA_ATTRIBUTE.into(), AttributeValue::B(vec![0; 100]));
    assert_eq!(code_of(code(&[&short])), "CHUNK_TRUNCATED");
    // A reader refuses to go on after its first error.
    let mut reader = ChunkReader::new(&split.parent, "m", &options).unwrap();
    assert_eq!(reader.push(&c[1]).unwrap_err().code(), "CHUNK_MISSING");
    let error = reader.push(&c[0]).unwrap_err();
    assert_eq!(error.code(), "READER_FINISHED");
    assert!(error.to_string().contains("CHUNK_MISSING"), "{error}");
    assert_eq!(reader.read().unwrap_err().code(), "READER_FINISHED");
    assert_eq!(reader.finish().unwrap_err().code(), "READER_FINISHED");
    // Keys of chunks beyond the count are refused.
    let reader = ChunkReader::new(&split.parent, "m", &options).unwrap();
    let count = reader.chunk_count();
    assert_eq!(count as usize, c.len());
    assert!(has_key(
        &c[count as usize - 1],
        &reader.chunk_key(count - 1).unwrap()
    ));
    assert_eq!(
        reader.chunk_key(count).unwrap_err().code(),
        "CHUNK_OUT_OF_RANGE"
    );
}

/// Payloads only a hostile or broken writer stores, each with valid chunk
/// digests: the stream fails with the error `reassemble` gives.
#[test]
fn forged_payloads_fail_as_reassemble_fails() {
    let schema = schema();
    let layout = Layout::default();
    let options = options(&schema, &layout);
    let original = item("m", 450_000, false, 10);
    let good = split(&original, &layout, Codec::None, false, 8192);
    for codec in Codec::ALL {
        for forged in forged_payloads(&original, codec) {
            let Some(expected) = forged.code else {
                continue;
            };
            let name = forged.name;
            let (parent, chunks) = forge(&good, &layout, &forged.payload, codec, forged.tamper);
            let whole = reassemble(&parent, &chunks, &options).unwrap_err();
            let got = stream(&parent, &chunks, "m", &options);
            let streamed = got.result.unwrap_err();
            assert_eq!(
                streamed.code(),
                whole.code(),
                "{codec} {name}: {streamed} / {whole}"
            );
            assert_eq!(streamed.code(), expected, "{codec} {name}: {streamed}");
        }
    }
}

/// The target attribute is not held to the whole-item limit.
#[test]
fn the_attribute_is_not_held_to_the_whole_item_limit() {
    let schema = schema();
    let layout = Layout::default();
    let mut options = options(&schema, &layout);
    options.max_raw_bytes = 100_000;
    for codec in [Codec::None, Codec::Deflate, Codec::Zstd, Codec::Snappy] {
        let item = item("m", 400_000, false, 11);
        let split = split(&item, &layout, codec, false, 409_600);
        let whole = reassemble(&split.parent, &split.chunks, &options).unwrap_err();
        assert_eq!(whole.code(), "DECOMPRESS_LIMIT");
        let got = stream(&split.parent, &split.chunks, "m", &options);
        if codec == Codec::Snappy {
            // Raw snappy is decoded whole, so it is held to the limit.
            assert_eq!(got.result.unwrap_err().code(), "DECOMPRESS_LIMIT");
        } else {
            got.result.unwrap();
            assert_eq!(AttributeValue::B(got.bytes), item["m"], "{codec}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any item, codec, layout and chunk size: streaming each string or
    /// binary attribute gives exactly what `reassemble` gives.
    #[test]
    fn streaming_equals_reassemble(item in generate::item(), storage in any_storage()) {
        let schema = schema();
        let options = options(&schema, &storage.layout);
        let split = split_as(&item, &storage);
        let whole = reassemble(&split.parent, &split.chunks, &options).unwrap();
        prop_assert_eq!(&whole, &item);
        for (name, value) in &item {
            let got = stream(&split.parent, &split.chunks, name, &options);
            match value {
                AttributeValue::S(s) => {
                    prop_assert_eq!(got.result, Ok(()));
                    prop_assert!(got.bytes == s.as_bytes(), "{}", name);
                }
                AttributeValue::B(b) => {
                    prop_assert_eq!(got.result, Ok(()));
                    prop_assert!(&got.bytes == b, "{}", name);
                }
                other => prop_assert_eq!(
                    got.result.map_err(|e| e.code().as_str()),
                    Err("ATTRIBUTE_NOT_BLOB"),
                    "{} {}", name, other.type_name()
                ),
            }
        }
    }
}
