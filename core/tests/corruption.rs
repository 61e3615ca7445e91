//! Hostile and damaged inputs: each kind of damage gives its own typed error,
//! never a panic and never wrong data.

mod common;

use common::generate;
use common::stored::data_mut;
use dynaslice_core::Category;
use dynaslice_core::codec::Compression;
use dynaslice_core::codec::{self, Codec, FrameHeader};
use dynaslice_core::layout::Layout;
use dynaslice_core::manifest::{CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, ReassembleOptions, SplitItem,
    SplitOptions, VersionId, reassemble, split_item,
};
use proptest::prelude::*;

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S)
}

fn item(pk: &str, len: usize) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S(pk.into()));
    item.insert("body".into(), generate::big_value(7, len, 0));
    item
}

fn split(item: &Item, version: u128, codec: Codec) -> SplitItem {
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, version));
    options.compression = CodecChoice::Fixed(Compression::new(codec));
    split_item(item, &options).unwrap()
}

fn code_of(parent: &Item, chunks: &[Item]) -> &'static str {
    let layout = Layout::default();
    let schema = schema();
    match reassemble(parent, chunks, &ReassembleOptions::new(&schema, &layout)) {
        Ok(_) => "OK",
        Err(e) => e.code().as_str(),
    }
}

#[test]
fn each_kind_of_damage_has_its_own_error() {
    for codec in [Codec::None, Codec::Zstd] {
        let original = item("doc", 1_500_000);
        let good = split(&original, 1, codec);
        assert!(good.chunks.len() >= 3, "the item needs several chunks");
        assert_eq!(code_of(&good.parent, &good.chunks), "OK");
        let mut codes = Vec::new();
        let mut case = |name: &str, chunks: Vec<Item>, parent: Option<Item>| {
            let code = code_of(parent.as_ref().unwrap_or(&good.parent), &chunks);
            codes.push((name.to_string(), code));
        };

        let mut truncated = good.chunks.clone();
        data_mut(&mut truncated[1]).pop();
        case("truncated", truncated, None);

        let mut duplicated = good.chunks.clone();
        duplicated.push(good.chunks[1].clone());
        case("duplicated", duplicated, None);

        let mut missing = good.chunks.clone();
        missing.remove(1);
        case("missing", missing, None);

        let other_version = split(&original, 2, codec);
        let mut foreign = good.chunks.clone();
        foreign[1] = other_version.chunks[1].clone();
        case("foreign-version", foreign, None);

        let other_item = split(&item("other", 1_500_000), 1, codec);
        let mut foreign_parent = good.chunks.clone();
        foreign_parent[1] = other_item.chunks[1].clone();
        case("foreign-parent", foreign_parent, None);

        let mut flipped = good.chunks.clone();
        data_mut(&mut flipped[1])[1000] ^= 0x10;
        case("bit-flipped", flipped, None);

        let mut oversized = good.chunks.clone();
        data_mut(&mut oversized[1]).push(0);
        case("oversized", oversized, None);

        let bigger = split(&item("doc", 3_000_000), 1, codec);
        let mut out_of_range = good.chunks.clone();
        out_of_range.push(bigger.chunks.last().unwrap().clone());
        case("out-of-range", out_of_range, None);

        let mut no_digest = good.chunks.clone();
        no_digest[0].remove(CHUNK_DIGEST_ATTRIBUTE);
        case("malformed", no_digest, None);

        // Whoever rewrites a chunk's bytes and its digest still fails the
        // whole payload's digest.
        let mut rewritten = good.chunks.clone();
        let seq = 1u32;
        data_mut(&mut rewritten[1])[5000] ^= 1;
        let data = data_mut(&mut rewritten[1]).clone();
        let digest = dynaslice_core::digest::chunk_digest(
            &data,
            &VersionId::new(1_763_683_200_000, 1).to_text(),
            seq,
        );
        rewritten[1].insert(
            CHUNK_DIGEST_ATTRIBUTE.into(),
            AttributeValue::B(digest.to_be_bytes().to_vec()),
        );
        case("rewritten-with-digest", rewritten, None);

        let mut parent = good.parent.clone();
        parent.insert(
            MANIFEST_ATTRIBUTE.into(),
            AttributeValue::S("not a manifest".into()),
        );
        case("bad-manifest", good.chunks.clone(), Some(parent));

        let expected = [
            ("truncated", "CHUNK_TRUNCATED"),
            ("duplicated", "CHUNK_DUPLICATE"),
            ("missing", "CHUNK_MISSING"),
            ("foreign-version", "CHUNK_FOREIGN_VERSION"),
            ("foreign-parent", "CHUNK_FOREIGN_PARENT"),
            ("bit-flipped", "CHUNK_DIGEST_MISMATCH"),
            ("oversized", "CHUNK_OVERSIZED"),
            ("out-of-range", "CHUNK_OUT_OF_RANGE"),
            ("malformed", "CHUNK_MALFORMED"),
            // The body is incompressible, so zstd stores it in raw blocks and
            // the damage surfaces at the whole payload's digest.
            ("rewritten-with-digest", "DIGEST_MISMATCH"),
            ("bad-manifest", "MANIFEST_INVALID"),
        ];
        let got: Vec<(&str, &str)> = codes.iter().map(|(n, c)| (n.as_str(), *c)).collect();
        assert_eq!(got, expected, "codec {codec}");
    }
}

#[test]
fn a_zip_bomb_is_refused_within_the_callers_limit() {
    // 64 MiB of zeros deflates to about 64 KB.
    let zeros = vec![0u8; 64 << 20];
    let bomb = codec::compress(&zeros, Compression::new(Codec::Deflate)).unwrap();
    assert!(bomb.len() < 100_000);
    let err = codec::decompress(&bomb, 1 << 20).unwrap_err();
    assert_eq!(err.code(), "DECOMPRESS_LIMIT");

    // A frame that lies about its raw length: it claims 1000 bytes, so at
    // most 1000 are ever produced, and the lie is reported.
    let mut liar = bomb.clone();
    liar[5..13].copy_from_slice(&1000u64.to_le_bytes());
    assert_eq!(FrameHeader::parse(&liar).unwrap().raw_len, 1000);
    assert_eq!(
        codec::decompress(&liar, 1 << 20).unwrap_err().code(),
        "LENGTH_MISMATCH"
    );

    // A manifest claiming more than the reader's limit is refused before
    // any chunk is looked at.
    let original = item("doc", 2_000_000);
    let good = split(&original, 1, Codec::Zstd);
    let layout = Layout::default();
    let schema = schema();
    let mut options = ReassembleOptions::new(&schema, &layout);
    options.max_raw_bytes = 1 << 20;
    let err = reassemble(&good.parent, &good.chunks, &options).unwrap_err();
    assert_eq!(err.code(), "DECOMPRESS_LIMIT");
}

#[test]
fn every_codec_refuses_a_damaged_frame() {
    let raw = generate::bulk(3, 200_000, true);
    for codec in Codec::ALL {
        let frame = codec::compress(&raw, Compression::new(codec)).unwrap();
        assert_eq!(
            codec::decompress(&frame, raw.len()).unwrap(),
            raw,
            "{codec}"
        );
        assert_eq!(
            codec::decompress(&frame, raw.len() - 1).unwrap_err().code(),
            "DECOMPRESS_LIMIT"
        );
        let truncated = &frame[..frame.len() / 2];
        assert!(
            codec::decompress(truncated, raw.len()).is_err(),
            "{codec} truncated"
        );
        let mut flipped = frame.clone();
        let middle = frame.len() / 2;
        flipped[middle] ^= 0x04;
        assert!(
            codec::decompress(&flipped, raw.len()).is_err(),
            "{codec} flipped"
        );
        assert_eq!(
            codec::decompress(&frame[..5], 1).unwrap_err().code(),
            "FRAME_TRUNCATED"
        );
        let mut magic = frame.clone();
        magic[0] = b'X';
        assert_eq!(
            codec::decompress(&magic, raw.len()).unwrap_err().code(),
            "FRAME_BAD_MAGIC"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random damage anywhere in any chunk or the manifest: the result is
    /// the original item or an error, never a different item.
    #[test]
    fn random_damage_never_gives_wrong_data(
        codec in proptest::sample::select(Codec::ALL.to_vec()),
        target in any::<prop::sample::Index>(),
        offset in any::<prop::sample::Index>(),
        bit in 0u8..8,
        damage_manifest in any::<bool>(),
    ) {
        let original = item("doc", 900_000);
        let good = split(&original, 9, codec);
        let mut parent = good.parent.clone();
        let mut chunks = good.chunks.clone();
        if damage_manifest {
            let Some(AttributeValue::M(manifest)) = parent.get_mut(MANIFEST_ATTRIBUTE) else { unreachable!() };
            let field = target.get(&manifest.keys().cloned().collect::<Vec<_>>()).clone();
            let value = manifest.get_mut(&field).unwrap();
            match value {
                AttributeValue::N(n) | AttributeValue::S(n) => {
                    let mut bytes = n.clone().into_bytes();
                    let at = offset.index(bytes.len());
                    bytes[at] ^= 1 << bit;
                    *n = String::from_utf8_lossy(&bytes).into_owned();
                }
                AttributeValue::B(b) => { let at = offset.index(b.len()); b[at] ^= 1 << bit; }
                _ => { *value = AttributeValue::Null; }
            }
        } else {
            let data = data_mut(target.get_mut(&mut chunks));
            let at = offset.index(data.len());
            data[at] ^= 1 << bit;
        }
        let layout = Layout::default();
        let schema = schema();
        match reassemble(&parent, &chunks, &ReassembleOptions::new(&schema, &layout)) {
            Ok(back) => prop_assert!(back == original, "damage produced a different item"),
            Err(e) => prop_assert_eq!(e.code().category(), Category::Stored, "{}", e),
        }
    }
}

/// A parent written by anyone: manifests whose counts would make a reader
/// allocate or fetch without bound are refused before any work.
#[test]
fn crafted_manifests_are_refused_before_any_work() {
    let original = item("doc", 1_000_000);
    let good = split(&original, 1, Codec::None);
    let with = |edits: &[(&str, AttributeValue)]| {
        let mut parent = good.parent.clone();
        let Some(AttributeValue::M(manifest)) = parent.get_mut(MANIFEST_ATTRIBUTE) else {
            unreachable!()
        };
        for (field, value) in edits {
            manifest.insert(field.to_string(), value.clone());
        }
        parent
    };
    let n = |v: u64| AttributeValue::N(v.to_string());
    let cases = [
        // Four billion one-byte chunks: consistent lengths, absurd counts.
        with(&[
            ("n", n(u64::from(u32::MAX))),
            ("k", n(1)),
            ("s", n(u64::from(u32::MAX))),
            ("r", n(u64::from(u32::MAX) - 21)),
        ]),
        // An uncompressed frame too short to hold its header and trailer.
        with(&[("n", n(1)), ("k", n(13)), ("s", n(13)), ("r", n(0))]),
        // A stored length far beyond what any codec makes of the raw length.
        with(&[
            ("c", AttributeValue::S("zstd".into())),
            ("r", n(1)),
            ("s", n(good.manifest.as_ref().unwrap().stored_len)),
        ]),
        // Chunks smaller than any split makes.
        with(&[("k", n(100)), ("n", n(10_000))]),
    ];
    for parent in &cases {
        assert_eq!(code_of(parent, &good.chunks), "MANIFEST_INVALID");
        assert_eq!(code_of(parent, &[]), "MANIFEST_INVALID");
    }
}

#[test]
fn an_inline_payload_must_match_the_manifest_digest() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("doc".into()));
    item.insert("body".into(), generate::big_value(1, 1_000_000, 1));
    let inline = split(&item, 1, Codec::Zstd);
    assert!(inline.chunks.is_empty() && inline.manifest.as_ref().unwrap().inline.is_some());
    assert_eq!(code_of(&inline.parent, &[]), "OK");
    let mut parent = inline.parent.clone();
    let Some(AttributeValue::M(manifest)) = parent.get_mut(MANIFEST_ATTRIBUTE) else {
        unreachable!()
    };
    manifest.insert("h".into(), AttributeValue::B(vec![0; 8]));
    assert_eq!(code_of(&parent, &[]), "FRAME_MISMATCH");
}

#[test]
fn a_payload_cannot_smuggle_in_a_manifest_attribute() {
    use dynaslice_core::encoding::encode_attributes;
    let smuggled = AttributeValue::S("x".into());
    let raw = encode_attributes([("_ds", &smuggled)].into_iter()).to_vec();
    let frame = codec::compress(&raw, Compression::new(Codec::None)).unwrap();
    let manifest = dynaslice_core::manifest::Manifest {
        version: VersionId::new(1, 1),
        layout: "table".into(),
        codec: Codec::None,
        chunk_count: 0,
        chunk_bytes: 0,
        stored_len: frame.len() as u64,
        raw_len: raw.len() as u64,
        digest: dynaslice_core::digest::digest(&raw),
        spilled: vec!["_ds".into()],
        inline: Some(frame),
        updated: None,
        groups: vec![],
        object: None,
    };
    let mut parent = Item::new();
    parent.insert("pk".into(), AttributeValue::S("doc".into()));
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    assert_eq!(code_of(&parent, &[]), "ATTRIBUTE_CONFLICT");
}
