//! `decode_value` seeds: value streams, `encode_item` of items with every
//! attribute type, nesting to DynamoDB's limit, sets, number texts, text
//! lengths that take one- and two-byte varints, and the parent and a chunk
//! of a real split.

use std::collections::BTreeMap;

use dynaslice_core::encoding::{decode_attributes, encode_item};
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType, MAX_NESTING_DEPTH, SplitOptions, VersionId, split_item};
use dynaslice_core::codec::Compression;

use crate::Seed;
use AttributeValue::{B, Bool, Bs, L, M, N, Ns, Null, S, Ss};

fn item<const K: usize>(attributes: [(&str, AttributeValue); K]) -> Item {
    attributes
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

fn map<const K: usize>(attributes: [(&str, AttributeValue); K]) -> AttributeValue {
    M(item(attributes))
}

fn s(text: &str) -> AttributeValue {
    S(text.into())
}

fn n(text: &str) -> AttributeValue {
    N(text.into())
}

/// A user record of the kind a table holds: maps, lists, sets, numbers.
fn realistic() -> Item {
    item([
        ("pk", s("user#1842")),
        ("sk", s("profile")),
        ("name", s("Ada Lovelace")),
        ("email", s("ada@example.com")),
        ("age", n("36")),
        ("balance", n("-1250.75")),
        ("verified", Bool(true)),
        ("deleted_at", Null),
        ("roles", Ss(vec!["admin".into(), "editor".into()])),
        ("scores", Ns(vec!["98".into(), "87.5".into(), "1e3".into()])),
        (
            "address",
            map([
                ("street", s("12 St James's Square")),
                ("city", s("London")),
                ("geo", L(vec![n("51.5074"), n("-0.1278")])),
            ]),
        ),
        (
            "orders",
            L(vec![
                map([("id", n("1")), ("total", n("19.99")), ("items", n("2"))]),
                map([("id", n("2")), ("total", n("5")), ("gift", Bool(false))]),
            ]),
        ),
        ("avatar", B((0u8..=255).step_by(7).collect())),
    ])
}

/// [`realistic`] as a value stream (also a `decompress` input).
pub fn realistic_stream() -> Vec<u8> {
    encode_item(&realistic()).to_vec()
}

/// Lists nested `depth` deep around one number.
fn nested_lists(depth: usize) -> AttributeValue {
    (1..depth).fold(L(vec![n("1")]), |inner, _| L(vec![inner]))
}

/// A real split's parent (with its manifest map) and its first chunk.
fn split() -> (Item, Item) {
    let schema = KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::N);
    let mut whole = realistic();
    whole.insert("sk".into(), n("7"));
    whole.insert("body".into(), B(crate::decompress::random(7, 3000)));
    let mut options = SplitOptions::new(schema, VersionId::new(1_700_000_000_000, 42));
    options.compression = CodecChoice::Fixed(Compression::new(dynaslice_core::codec::Codec::Zstd));
    options.chunk_item_bytes = 2048;
    options.item_limit = 1024;
    options.parent_budget = 512;
    let split = split_item(&whole, &options).unwrap();
    assert!(split.chunks.len() >= 2);
    (split.parent, split.chunks[0].clone())
}

pub fn seeds() -> Vec<Seed> {
    let (parent, chunk) = split();
    let items: Vec<(&str, Item)> = vec![
        ("empty-item", Item::new()),
        (
            "scalars",
            item([
                ("s", s("text")),
                ("n", n("42")),
                ("b", B(vec![0, 1, 2, 0xFF])),
                ("t", Bool(true)),
                ("f", Bool(false)),
                ("z", Null),
            ]),
        ),
        (
            "empty-values",
            item([
                ("s", s("")),
                ("b", B(Vec::new())),
                ("l", L(Vec::new())),
                ("m", M(BTreeMap::new())),
            ]),
        ),
        (
            "numbers",
            item([
                ("zero", n("0")),
                ("negative", n("-1")),
                ("pi", n("3.14159")),
                ("exponent", n("1E+10")),
                ("small", n("-0.000001")),
                ("digits38", n("12345678901234567890123456789012345678")),
                ("tiny", n("1e-130")),
                ("huge", n("9.9999999999999999999999999999999999999E+125")),
            ]),
        ),
        (
            "sets",
            item([
                ("ss", Ss(vec!["a".into(), "b".into(), "ccc".into()])),
                ("ns", Ns(vec!["1".into(), "2.5".into(), "-3e2".into()])),
                ("bs", Bs(vec![vec![0], vec![1, 2], vec![0xFF; 3]])),
            ]),
        ),
        (
            "nested",
            item([(
                "doc",
                map([
                    (
                        "list",
                        L(vec![s("a"), n("1"), Bool(true), Null, B(vec![9])]),
                    ),
                    (
                        "inner",
                        map([(
                            "deeper",
                            L(vec![map([
                                ("ss", Ss(vec!["x".into()])),
                                ("m", M(BTreeMap::new())),
                            ])]),
                        )]),
                    ),
                ]),
            )]),
        ),
        // The deepest nesting DynamoDB accepts (one more is an error).
        (
            "nesting-limit",
            item([("deep", nested_lists(MAX_NESTING_DEPTH - 1))]),
        ),
        (
            "unicode",
            item([
                ("naïve", s("crème brûlée")),
                ("日本語", s("こんにちは")),
                ("emoji", Ss(vec!["🦀".into(), "🎉".into()])),
            ]),
        ),
        (
            "long-values",
            item([
                ("text", S("0123456789".repeat(30))),
                ("bytes", B(vec![0xA5; 200])),
                ("list", L((0..130).map(|i| n(&i.to_string())).collect())),
            ]),
        ),
        (
            "many-attributes",
            (0..40)
                .map(|i| {
                    let value = match i % 4 {
                        0 => n(&i.to_string()),
                        1 => S(format!("value {i}")),
                        2 => Bool(i % 3 == 0),
                        _ => B(vec![i as u8; 3]),
                    };
                    (format!("a{i:02}"), value)
                })
                .collect(),
        ),
        ("realistic", realistic()),
        ("split-parent", parent),
        ("split-chunk", chunk),
    ];
    items
        .into_iter()
        .map(|(name, item)| {
            let stream = encode_item(&item).to_vec();
            assert_eq!(decode_attributes(&stream).unwrap(), item, "{name}");
            (name.to_string(), stream)
        })
        .collect()
}
