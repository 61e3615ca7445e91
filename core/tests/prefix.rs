//! Decoding the start of a frame from its first bytes (previews).

mod common;

use dynaslice_core::codec::{Codec, Compression, compress, decompress_prefix};
use proptest::prelude::*;

#[test]
fn prefixes_decode_to_prefixes_and_grow_with_the_input() {
    let raw = common::generate::bulk(11, 300_000, true);
    for codec in Codec::ALL {
        let frame = compress(&raw, Compression::new(codec)).unwrap();
        let mut last = 0;
        for cut in [
            13,
            14,
            100,
            1_000,
            10_000,
            frame.len() / 2,
            frame.len() - 8,
            frame.len(),
        ] {
            let out = decompress_prefix(&frame[..cut], false, raw.len()).unwrap();
            assert_eq!(
                out[..],
                raw[..out.len()],
                "{codec:?} cut {cut}: not a prefix of the raw bytes"
            );
            assert!(out.len() >= last, "{codec:?} cut {cut}: shrank");
            last = out.len();
        }
        // Raw snappy decodes only whole; ruzstd releases bytes only beyond
        // its window (the whole frame, for one this small).
        if ![Codec::Snappy, Codec::Zstd].contains(&codec) {
            assert!(
                decompress_prefix(&frame[..frame.len() / 2], false, raw.len())
                    .unwrap()
                    .len()
                    > 1000,
                "{codec:?}: half a frame decodes to something"
            );
        }
        for want in [0, 1, 4096, raw.len(), raw.len() + 10] {
            let out = decompress_prefix(&frame, true, want).unwrap();
            assert_eq!(
                out,
                raw[..want.min(raw.len())],
                "{codec:?} whole frame, want {want}"
            );
        }
    }
}

#[test]
fn a_damaged_deflate_stream_is_corrupt_not_short() {
    let raw = common::generate::bulk(12, 100_000, true);
    let mut frame = compress(&raw, Compression::new(Codec::Deflate)).unwrap();
    frame[13] = 0xff; // an invalid block type in the first byte of the stream
    let error = decompress_prefix(&frame, true, raw.len()).unwrap_err();
    assert_eq!(error.code(), "CODEC_CORRUPT");
}

proptest! {
    #[test]
    fn hostile_frames_never_panic_or_overallocate(body in proptest::collection::vec(any::<u8>(), 0..2000), codec in 0u8..6, want in 0usize..100_000) {
        let mut frame = b"DSZ\x01".to_vec();
        frame.push(codec);
        frame.extend_from_slice(&u64::MAX.to_le_bytes());
        frame.extend_from_slice(&body);
        for complete in [false, true] {
            if let Ok(out) = decompress_prefix(&frame, complete, want) {
                prop_assert!(out.len() <= want);
            }
        }
    }
}

#[test]
fn a_single_blob_is_located_from_the_first_bytes() {
    use dynaslice_core::AttributeValue;
    use dynaslice_core::encoding::{binary_attribute_prefix, encode_attributes, single_blob_span};

    let prefix = binary_attribute_prefix("data", Some(300));
    let span = single_blob_span(&prefix, prefix.len() as u64 + 300).expect("a binary attribute");
    assert_eq!(
        (span.name.as_str(), span.string, span.start, span.len),
        ("data", false, prefix.len(), 300)
    );

    let doc = AttributeValue::S("é".repeat(200));
    let stream = encode_attributes([("doc", &doc)].into_iter()).to_vec();
    let span = single_blob_span(&stream[..20], stream.len() as u64)
        .expect("a string attribute, from 20 bytes");
    assert_eq!((span.string, span.len), (true, 400));
    assert_eq!(&stream[span.start..], "é".repeat(200).as_bytes());

    let number = AttributeValue::N("1".into());
    let two = encode_attributes([("a", &doc), ("b", &number)].into_iter()).to_vec();
    assert_eq!(
        single_blob_span(&two, two.len() as u64),
        None,
        "two attributes"
    );
    let one_number = encode_attributes([("b", &number)].into_iter()).to_vec();
    assert_eq!(
        single_blob_span(&one_number, one_number.len() as u64),
        None,
        "not a string or binary"
    );
    assert_eq!(
        single_blob_span(&prefix[..6], 306),
        None,
        "too short to tell"
    );

    // A payload of unknown length: version 2, the binary runs to the end.
    let open = binary_attribute_prefix("data", None);
    assert_eq!(
        open, b"DSV\x02\x01\x04data\x0c",
        "docs/FORMAT.md, section 3"
    );
    let span = single_blob_span(&open, open.len() as u64 + 5).expect("a binary to the end");
    assert_eq!(
        (span.name.as_str(), span.string, span.start, span.len),
        ("data", false, open.len(), 5)
    );
}

#[test]
fn a_version_2_stream_ends_with_a_binary_that_runs_to_its_end() {
    use dynaslice_core::AttributeValue;
    use dynaslice_core::encoding::decode_attributes;
    // Hand-encoded from docs/FORMAT.md, section 3.
    let item = decode_attributes(b"DSV\x02\x01\x04data\x0chello").unwrap();
    assert_eq!(item["data"], AttributeValue::B(b"hello".to_vec()));
    let empty = decode_attributes(b"DSV\x02\x01\x01d\x0c").unwrap();
    assert_eq!(empty["d"], AttributeValue::B(Vec::new()));
    // Two attributes, a length-prefixed one first.
    let two = decode_attributes(b"DSV\x02\x02\x01a\x01\x02hi\x01b\x0c!!").unwrap();
    assert_eq!(two["a"], AttributeValue::S("hi".into()));
    assert_eq!(two["b"], AttributeValue::B(b"!!".to_vec()));
    let code = |bytes: &[u8]| decode_attributes(bytes).unwrap_err().code();
    // Only in version 2, only at the top level, only last.
    assert_eq!(code(b"DSV\x01\x01\x01d\x0chello"), "STREAM_UNKNOWN_TAG");
    assert_eq!(
        code(b"DSV\x02\x01\x01m\x08\x01\x01d\x0cx"),
        "STREAM_UNKNOWN_TAG"
    );
    assert_eq!(code(b"DSV\x02\x02\x01b\x0cxyz"), "STREAM_TRUNCATED");
    assert_eq!(code(b"DSV\x03\x01\x01d\x0c"), "STREAM_UNSUPPORTED_VERSION");
}
