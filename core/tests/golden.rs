//! Golden vectors from independent sources: value streams encoded by hand
//! from the specification, codec bodies made by other implementations
//! (zlib, gzip, libzstd) or by hand (snappy), and XXH3 digests from the C
//! reference implementation.

mod common;

use dynaslice_core::codec::{self, Codec, FrameHeader};
use dynaslice_core::digest::digest;
use dynaslice_core::encoding::{decode_attributes, encode_item};

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn value_streams_encode_and_decode_exactly_as_specified() {
    let vectors = common::load_vectors("stream.json", "dynaslice-stream-vectors/1");
    for case in vectors["valid"].as_array().unwrap() {
        let item = common::item(&case["item"]);
        let expected = case["hex"].as_str().unwrap();
        let encoded = encode_item(&item).to_vec();
        assert_eq!(to_hex(&encoded), expected, "{}", case["name"]);
        assert_eq!(
            decode_attributes(&hex(expected)).unwrap(),
            item,
            "{}",
            case["name"]
        );
    }
    // Version 2 replaces the answer of the cases it supersedes.
    let v2 = common::load_vectors("stream.v2.json", "dynaslice-stream-vectors/2");
    let superseded = v2["supersedes"]["invalid"].as_array().unwrap();
    let invalid = vectors["invalid"].as_array().unwrap();
    let kept: Vec<_> = invalid
        .iter()
        .filter(|case| !superseded.contains(&case["name"]))
        .collect();
    assert_eq!(kept.len() + superseded.len(), invalid.len());
    for case in kept.into_iter().chain(v2["invalid"].as_array().unwrap()) {
        let err = decode_attributes(&hex(case["hex"].as_str().unwrap())).unwrap_err();
        assert_eq!(
            err.code(),
            case["code"].as_str().unwrap(),
            "{}",
            case["name"]
        );
    }
    // Version 2 streams are decoded only: writers emit one just for a
    // binary of unknown length (tests/stream_split.rs).
    for case in v2["valid"].as_array().unwrap() {
        let item = common::item(&case["item"]);
        let bytes = hex(case["hex"].as_str().unwrap());
        assert_eq!(decode_attributes(&bytes).unwrap(), item, "{}", case["name"]);
    }
}

/// Wraps an external codec body in a dynaslice frame.
fn frame(codec: Codec, raw: &[u8], body: &[u8]) -> Vec<u8> {
    let header = FrameHeader {
        codec,
        raw_len: raw.len() as u64,
    };
    let mut frame = header.to_bytes().to_vec();
    frame.extend_from_slice(body);
    frame.extend_from_slice(&digest(raw).to_le_bytes());
    frame
}

#[test]
fn bodies_from_other_implementations_decode_exactly() {
    let vectors = common::load_vectors("codecs.json", "dynaslice-codec-vectors/1");
    let bodies = vectors["bodies"].as_array().unwrap();
    assert!(bodies.len() >= 15);
    for case in bodies {
        let codec = Codec::from_name(case["codec"].as_str().unwrap()).unwrap();
        let raw = hex(case["raw_hex"].as_str().unwrap());
        let body = hex(case["body_hex"].as_str().unwrap());
        let decoded = codec::decompress(&frame(codec, &raw, &body), raw.len());
        assert_eq!(decoded.as_deref(), Ok(raw.as_slice()), "{}", case["name"]);
        // One byte less of body is always refused, never a silent truncation.
        if !body.is_empty() && codec != Codec::None {
            let short = frame(codec, &raw, &body[..body.len() - 1]);
            assert!(
                codec::decompress(&short, raw.len()).is_err(),
                "{} truncated",
                case["name"]
            );
        }
    }
}

#[test]
fn digests_match_the_reference_implementation() {
    let vectors = common::load_vectors("codecs.json", "dynaslice-codec-vectors/1");
    for case in vectors["digests"].as_array().unwrap() {
        let raw = hex(case["raw_hex"].as_str().unwrap());
        assert_eq!(
            format!("{:016x}", digest(&raw)),
            case["xxh3_64"].as_str().unwrap()
        );
    }
    for case in vectors["seeded_digests"].as_array().unwrap() {
        let raw = hex(case["raw_hex"].as_str().unwrap());
        let seed: u64 = case["seed"].as_str().unwrap().parse().unwrap();
        let got = xxhash_rust::xxh3::xxh3_64_with_seed(&raw, seed);
        assert_eq!(format!("{got:016x}"), case["xxh3_64"].as_str().unwrap());
    }
}

#[test]
fn our_frames_are_read_by_other_implementations_too() {
    // The reverse direction, for the zlib family: what we write, Python's
    // zlib wrote too, so bodies must be standard. Check the standard
    // headers by their published magic numbers.
    let raw = b"dynaslice ".repeat(100);
    let zlib = codec::compress(&raw, dynaslice_core::codec::Compression::new(Codec::Zlib)).unwrap();
    assert_eq!(zlib[13] & 0x0f, 8, "zlib CM = 8 (deflate), RFC 1950");
    assert_eq!(
        (u16::from(zlib[13]) << 8 | u16::from(zlib[14])) % 31,
        0,
        "zlib FCHECK, RFC 1950"
    );
    let gzip = codec::compress(&raw, dynaslice_core::codec::Compression::new(Codec::Gzip)).unwrap();
    assert_eq!(&gzip[13..16], &[0x1f, 0x8b, 8], "gzip ID1 ID2 CM, RFC 1952");
    let zstd = codec::compress(&raw, dynaslice_core::codec::Compression::new(Codec::Zstd)).unwrap();
    assert_eq!(
        &zstd[13..17],
        &[0x28, 0xb5, 0x2f, 0xfd],
        "zstd magic, RFC 8878"
    );
}
