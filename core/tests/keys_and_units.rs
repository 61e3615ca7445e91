//! Chunk keys, number canonical forms, version ids and capacity units, each
//! checked against an independent statement of the rule.

use dynaslice_core::layout::Layout;
use dynaslice_core::layout::{chunk_key, parse_chunk_key};
use dynaslice_core::number::Decimal;
use dynaslice_core::{
    AttributeValue, Item, KeySchema, KeyType, ReadConsistency, VersionId, read_units, write_units,
};
use proptest::prelude::*;

fn key(pk: AttributeValue, sk: Option<&str>) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), pk);
    if let Some(sk) = sk {
        item.insert("sk".into(), AttributeValue::S(sk.into()));
    }
    item
}

fn text_of(item: &Item, name: &str) -> String {
    match &item[name] {
        AttributeValue::S(s) => s.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn version_ids_are_ulids() {
    // Expected texts from python-ulid 3 (`ULID.from_bytes`), an independent
    // implementation of the ULID spec: 48-bit ms timestamp, 80 random bits,
    // Crockford base 32.
    let cases: [(u64, u128, &str); 4] = [
        (0, 0, "00000000000000000000000000"),
        (1_763_683_200_000, 7, "01KAHVBV000000000000000007"),
        ((1 << 48) - 1, (1 << 80) - 1, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
        (
            1_469_918_176_385,
            0x1234_5678_9abc_def0_1234,
            "01ARYZ6S4128T5CY4TQKFF04HM",
        ),
    ];
    for (ms, random, text) in cases {
        let id = VersionId::new(ms, random);
        assert_eq!(id.to_text(), text);
        assert_eq!(VersionId::parse(text), Ok(id));
        assert_eq!(id.unix_ms(), ms);
    }
    assert!(
        VersionId::parse("8ZZZZZZZZZZZZZZZZZZZZZZZZZ").is_err(),
        "overflows 128 bits"
    );
    assert!(
        VersionId::parse("01ARYZ6S4128T5CY4TQKFF04H").is_err(),
        "25 characters"
    );
    assert!(
        VersionId::parse("01ARYZ6S4128T5CY4TQKFF04HU").is_err(),
        "U is not Crockford"
    );
    // Ids sort by time, as ULIDs do.
    assert!(VersionId::new(2, 0).to_text() > VersionId::new(1, u128::MAX).to_text());
}

#[test]
fn chunk_keys_follow_the_documented_grammar() {
    let schema = KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S);
    let version = VersionId::new(1_763_683_200_000, 7);
    let parent = key(AttributeValue::S("user#1".into()), Some("doc\\7"));
    let table = chunk_key(&schema, &Layout::default(), &parent, version, 12).unwrap();
    assert_eq!(
        text_of(&table, "pk"),
        "user\\#1#doc\\\\7#01KAHVBV000000000000000007#000012"
    );
    let collection = chunk_key(&schema, &Layout::ItemCollection, &parent, version, 3).unwrap();
    assert_eq!(collection["pk"], AttributeValue::S("user#1".into()));
    assert_eq!(
        text_of(&collection, "sk"),
        "doc\\\\7#01KAHVBV000000000000000007#000003"
    );

    // A number key is canonical, so any spelling names the same chunks.
    let numeric = KeySchema::partition("pk", KeyType::N);
    let spellings = ["1.50", "15E-1", "+1.5", "001.5"];
    let keys: Vec<_> = spellings
        .iter()
        .map(|n| {
            chunk_key(
                &numeric,
                &Layout::default(),
                &key(AttributeValue::N(n.to_string()), None),
                version,
                0,
            )
            .unwrap()
        })
        .collect();
    assert!(
        keys.iter()
            .all(|k| text_of(k, "pk") == "1.5#01KAHVBV000000000000000007#000000")
    );

    // Binary keys are standard base64 (RFC 4648): 0xfb 0xff is "+/8=".
    let binary = KeySchema::partition("pk", KeyType::B);
    let k = chunk_key(
        &binary,
        &Layout::default(),
        &key(AttributeValue::B(vec![0xfb, 0xff]), None),
        version,
        0,
    )
    .unwrap();
    assert_eq!(text_of(&k, "pk"), "+/8=#01KAHVBV000000000000000007#000000");

    // The item-collection layout needs a string sort key.
    let err = chunk_key(
        &numeric,
        &Layout::ItemCollection,
        &key(AttributeValue::N("1".into()), None),
        version,
        0,
    );
    assert_eq!(err.unwrap_err().code(), "LAYOUT_UNSUPPORTED");
    // A key too long for DynamoDB is refused, not truncated.
    let long = key(AttributeValue::S("#".repeat(1100)), Some("x"));
    let err = chunk_key(&schema, &Layout::default(), &long, version, 0).unwrap_err();
    assert_eq!(err.code(), "CHUNK_KEY_TOO_LARGE");
}

proptest! {
    /// Escaping makes chunk keys injective: every parent key, whatever `#`
    /// and `\` it holds, parses back from its chunk keys, in both layouts.
    #[test]
    fn chunk_keys_parse_back_to_their_parent(
        pk in "[a#\\\\]{1,12}",
        sk in "[b#\\\\]{1,12}",
        seq in 0u32..999_999,
        random in any::<u128>(),
    ) {
        let schema = KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S);
        let parent = key(AttributeValue::S(pk), Some(&sk));
        let version = VersionId::new(1_763_683_200_000, random);
        for layout in [Layout::default(), Layout::ItemCollection] {
            let chunk = chunk_key(&schema, &layout, &parent, version, seq).unwrap();
            let parsed = parse_chunk_key(&schema, &layout, &chunk).unwrap();
            prop_assert_eq!(&parsed.parent_key, &parent);
            prop_assert_eq!(parsed.version, version);
            prop_assert_eq!(parsed.seq, seq);
        }
    }
}

#[test]
fn malformed_chunk_keys_are_refused() {
    let schema = KeySchema::partition("pk", KeyType::S);
    for text in [
        "a#01KAHVBV000000000000000007#12",
        "a#01KAHVBV000000000000000007#0000x2",
        "a#notaversion#000001",
        "a\\b#01KAHVBV000000000000000007#000001",
        "01KAHVBV000000000000000007#000001",
    ] {
        let mut chunk = Item::new();
        chunk.insert("pk".into(), AttributeValue::S(text.into()));
        let err = parse_chunk_key(&schema, &Layout::default(), &chunk).unwrap_err();
        assert_eq!(err.code(), "CHUNK_KEY_MALFORMED", "{text}");
    }
}

#[test]
fn canonical_numbers_are_equal_for_equal_values() {
    let groups: [&[&str]; 6] = [
        &["1.5", "1.50", "15E-1", "+1.5", "0.15e1", "001.500"],
        &["0", "-0", "0.000", "0E10"],
        &["120", "1.2E2", "120.0", "12E1"],
        &["-0.015", "-1.5E-2", "-.015"],
        &["1E125", "10E124"],
        &["0.000001", "1E-6", "1e-6"],
    ];
    for group in groups {
        let canonical: Vec<String> = group
            .iter()
            .map(|n| Decimal::parse(n).unwrap().canonical())
            .collect();
        assert!(
            canonical.windows(2).all(|w| w[0] == w[1]),
            "{group:?} gave {canonical:?}"
        );
    }
    assert_eq!(Decimal::parse("15E-1").unwrap().canonical(), "1.5");
    assert_eq!(Decimal::parse("-1.5E-2").unwrap().canonical(), "-0.015");
    assert_eq!(Decimal::parse("1.2E2").unwrap().canonical(), "120");
}

#[test]
fn capacity_units_follow_the_developer_guide() {
    // "One write capacity unit represents one write per second for an item
    // up to 1 KB"; transactional writes cost 2; "one read capacity unit
    // represents one strongly consistent read ... for an item up to 4 KB",
    // eventually consistent half, transactional 2 (DynamoDB developer guide,
    // "Read/write capacity mode").
    assert_eq!(write_units(0, false), 1);
    assert_eq!(write_units(1024, false), 1);
    assert_eq!(write_units(1025, false), 2);
    assert_eq!(write_units(409_600, false), 400);
    assert_eq!(write_units(409_600, true), 800);
    assert_eq!(read_units(4096, ReadConsistency::Strong), 1.0);
    assert_eq!(read_units(4097, ReadConsistency::Strong), 2.0);
    assert_eq!(read_units(4097, ReadConsistency::Eventual), 1.0);
    assert_eq!(read_units(1, ReadConsistency::Eventual), 0.5);
    assert_eq!(read_units(409_600, ReadConsistency::Transactional), 200.0);
}

#[test]
fn canonical_text_of_absurd_exponents_stays_short() {
    let huge = Decimal::parse("-1.5E4000000000").unwrap().canonical();
    assert_eq!(huge, "-15E3999999999");
    assert_eq!(Decimal::parse("2E-9000").unwrap().canonical(), "2E-9000");
    assert!(
        Decimal::parse("1E9223372036854775807")
            .unwrap()
            .canonical()
            .len()
            < 40
    );
}
