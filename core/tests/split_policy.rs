//! What split decides: which attributes stay on the parent, when an item
//! stays whole, when a payload goes inline.

mod common;

use common::generate;
use dynaslice_core::codec::Compression;
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, MAX_ITEM_BYTES, SplitOptions, VersionId,
    item_size, split_item,
};

fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S)
}

fn options() -> SplitOptions {
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 1));
    options.compression = CodecChoice::Fixed(Compression::NONE);
    options
}

#[test]
fn the_largest_attributes_are_spilled_first_until_the_parent_fits_its_budget() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("k".into()));
    item.insert("huge".into(), generate::big_value(1, 500_000, 0));
    item.insert("medium".into(), generate::big_value(2, 3_000, 0));
    item.insert("small".into(), AttributeValue::S("kept".into()));
    item.insert("gsi_sort".into(), generate::big_value(3, 2_000, 0));
    let split = split_item(&item, &options()).unwrap();
    let manifest = split.manifest.as_ref().unwrap();
    // 500 KB and 3 KB must go to fit 4 KB; then 2 KB + the rest fit.
    assert_eq!(manifest.all_spilled(), ["huge", "medium"]);
    // The 500 KB attribute is a group of its own; the rest share the
    // manifest's own frame.
    assert_eq!(manifest.spilled, ["medium"]);
    assert_eq!(manifest.groups.len(), 1);
    assert_eq!(manifest.groups[0].spilled, ["huge"]);
    assert!(split.parent.contains_key("gsi_sort") && split.parent.contains_key("small"));
    assert!(item_size(&split.parent) <= 4096);
}

#[test]
fn pinned_attributes_are_never_spilled() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("k".into()));
    item.insert("huge".into(), generate::big_value(1, 500_000, 0));
    item.insert("gsi_sort".into(), generate::big_value(3, 9_000, 0));
    let mut options = options();
    options.keep = vec!["gsi_sort".into()];
    let split = split_item(&item, &options).unwrap();
    assert_eq!(split.manifest.as_ref().unwrap().spilled, ["huge"]);
    assert_eq!(split.parent.get("gsi_sort"), item.get("gsi_sort"));

    // When only keys and pinned attributes are left, nothing can move.
    options.keep = vec!["huge".into(), "gsi_sort".into()];
    assert_eq!(
        split_item(&item, &options).unwrap_err().code(),
        "PARENT_TOO_LARGE"
    );
}

#[test]
fn an_item_at_the_limit_stays_whole_and_one_byte_more_splits() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("a".into()));
    item.insert("b".into(), AttributeValue::B(vec![7; 409_596]));
    assert_eq!(item_size(&item), MAX_ITEM_BYTES);
    let whole = split_item(&item, &options()).unwrap();
    assert!(whole.manifest.is_none() && whole.chunks.is_empty());
    assert_eq!(whole.parent, item);

    item.insert("b".into(), AttributeValue::B(vec![7; 409_597]));
    let split = split_item(&item, &options()).unwrap();
    assert!(split.manifest.is_some());
}

#[test]
fn a_payload_that_compresses_small_enough_goes_inline() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("a".into()));
    item.insert("text".into(), generate::big_value(5, 2_000_000, 2));
    let mut options = options();
    options.compression = CodecChoice::Auto;
    let split = split_item(&item, &options).unwrap();
    let manifest = split.manifest.as_ref().unwrap();
    assert!(
        split.chunks.is_empty(),
        "2 MB of text compresses under 400 KB"
    );
    assert!(manifest.inline.is_some());
    assert_ne!(
        manifest.codec,
        dynaslice_core::codec::Codec::None,
        "auto compresses text"
    );
    assert!(item_size(&split.parent) <= MAX_ITEM_BYTES);

    options.inline = false;
    let chunked = split_item(&item, &options).unwrap();
    assert_eq!(chunked.chunks.len(), 1);
}

#[test]
fn auto_stores_incompressible_payloads_uncompressed() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("a".into()));
    item.insert("noise".into(), generate::big_value(6, 1_000_000, 0));
    let mut options = options();
    options.compression = CodecChoice::Auto;
    let split = split_item(&item, &options).unwrap();
    assert_eq!(
        split.manifest.unwrap().codec,
        dynaslice_core::codec::Codec::None
    );
}

#[test]
fn bad_options_and_reserved_names_are_refused() {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("a".into()));
    item.insert("_ds".into(), AttributeValue::Null);
    assert_eq!(
        split_item(&item, &options()).unwrap_err().code(),
        "ATTRIBUTE_RESERVED"
    );

    item.remove("_ds");
    let mut options = options();
    options.chunk_item_bytes = 409_601;
    assert_eq!(
        split_item(&item, &options).unwrap_err().code(),
        "OPTIONS_INVALID"
    );
    options.chunk_item_bytes = MAX_ITEM_BYTES;
    options.compression = CodecChoice::Fixed(Compression {
        codec: dynaslice_core::codec::Codec::Zstd,
        level: Some(19),
    });
    assert_eq!(
        split_item(&item, &options).unwrap_err().code(),
        "CODEC_LEVEL_UNSUPPORTED"
    );

    let mut keyless = Item::new();
    keyless.insert("other".into(), AttributeValue::S("a".into()));
    assert_eq!(
        split_item(&keyless, &self::options()).unwrap_err().code(),
        "KEY_MISSING"
    );

    let mut big = Item::new();
    big.insert("pk".into(), AttributeValue::S("a".into()));
    big.insert("b".into(), AttributeValue::B(vec![0; 2_000_000]));
    let mut small_limit = self::options();
    small_limit.max_raw_bytes = 1_000_000;
    assert_eq!(
        split_item(&big, &small_limit).unwrap_err().code(),
        "VIRTUAL_ITEM_TOO_LARGE"
    );
}

/// Measured on Amazon's DynamoDB Local 3.3.1 (tests/js/dynamodb-local.test.mjs):
/// 31 maps or lists around a string or a set are accepted; around an empty
/// map or list, refused ("Nesting Levels have exceeded supported limits").
#[test]
fn an_empty_container_at_the_last_level_is_too_deep() {
    use dynaslice_core::{ValidateOptions, validate_item};
    fn wrap(mut value: AttributeValue, times: usize, list: bool) -> AttributeValue {
        for _ in 0..times {
            value = if list {
                AttributeValue::L(vec![value])
            } else {
                AttributeValue::M([("n".to_string(), value)].into())
            };
        }
        value
    }
    for list in [false, true] {
        let check = |inner: AttributeValue| {
            let mut item = Item::new();
            item.insert("d".into(), wrap(inner, 31, list));
            validate_item(&item, &ValidateOptions::default())
        };
        assert!(check(AttributeValue::S("x".into())).is_empty());
        assert!(check(AttributeValue::Ss(vec!["x".into()])).is_empty());
        for empty in [
            AttributeValue::L(vec![]),
            AttributeValue::M(Default::default()),
        ] {
            let found = check(empty);
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].code(), "NESTING_TOO_DEEP");
            assert_eq!(
                found[0]
                    .path
                    .matches(if list { "[0]" } else { ".n" })
                    .count(),
                31
            );
        }
    }
}
