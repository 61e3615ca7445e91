//! `encoding::stream_item_size`: the size of the item a value stream holds,
//! read without building it (what the npm package's `itemSize` runs). It
//! must agree with `item_size` on every item, and with the decoder on every
//! damaged stream.

mod common;

use common::generate;
use dynaslice_core::encoding::{
    DecodeError, decode_attributes_nested, encode_item, stream_item_size,
};
use dynaslice_core::{Item, MAX_NESTING_DEPTH, item_size};
use proptest::prelude::*;

fn stream(item: &Item) -> Vec<u8> {
    encode_item(item).to_vec()
}

/// The size scan checks the stream's structure, not its text: where the
/// decoder refuses text (invalid UTF-8 outside numbers, a repeated name),
/// the scan may still count the bytes.
fn text_only(error: &DecodeError) -> bool {
    matches!(
        error,
        DecodeError::InvalidUtf8 { .. } | DecodeError::DuplicateName { .. }
    )
}

#[test]
fn the_size_vectors_scan_to_their_sizes() {
    let vectors = common::load_vectors("sizes.json", "dynaslice-size-vectors/1");
    let cases = vectors["items"].as_array().unwrap();
    assert!(cases.len() >= 50);
    for case in cases {
        let item = common::item(&case["item"]);
        let expected = case["size"].as_u64().unwrap() as usize;
        assert_eq!(
            stream_item_size(&stream(&item), MAX_NESTING_DEPTH),
            Ok(expected),
            "{}",
            case["name"]
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_scan_agrees_with_item_size(item in generate::item()) {
        prop_assert_eq!(stream_item_size(&stream(&item), MAX_NESTING_DEPTH), Ok(item_size(&item)));
    }

    #[test]
    fn damaged_streams_scan_as_they_decode(
        item in generate::item(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let mut bytes = stream(&item);
        bytes.truncate(cut.index(bytes.len() + 1).max(bytes.len().saturating_sub(64)));
        for (at, value) in flips {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
        }
        let scanned = stream_item_size(&bytes, MAX_NESTING_DEPTH);
        match decode_attributes_nested(&bytes, MAX_NESTING_DEPTH) {
            Ok(decoded) => prop_assert_eq!(scanned, Ok(item_size(&decoded))),
            Err(e) if text_only(&e) => {}
            Err(e) => prop_assert_eq!(scanned, Err(e)),
        }
    }
}

#[test]
fn depth_is_bounded_by_the_callers_limit() {
    let mut deep = b"DSV\x01\x01\x01x".to_vec();
    for _ in 0..100_000 {
        deep.extend_from_slice(&[0x07, 0x01]);
    }
    deep.push(0x06);
    assert_eq!(
        stream_item_size(&deep, 40),
        Err(DecodeError::TooDeep { limit: 40 })
    );
    // 33 lists around a null: 33 x (3 + 1) + 1 for the null, + 1 for "x".
    let mut ok = b"DSV\x01\x01\x01x".to_vec();
    for _ in 0..33 {
        ok.extend_from_slice(&[0x07, 0x01]);
    }
    ok.push(0x06);
    assert_eq!(stream_item_size(&ok, 40), Ok(33 * 4 + 1 + 1));
    assert!(stream_item_size(&ok, MAX_NESTING_DEPTH).is_err());
}
