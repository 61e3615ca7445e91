//! Generators for property tests: items of every type and shape.

use std::collections::BTreeSet;

use dynaslice_core::number::Decimal;
use dynaslice_core::{AttributeValue, Item};
use proptest::prelude::*;

/// Deterministic bytes: random (incompressible) or text-like (compressible).
pub fn bulk(seed: u64, len: usize, compressible: bool) -> Vec<u8> {
    let mut state = seed | 1;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    if !compressible {
        return (0..len).map(|_| next() as u8).collect();
    }
    const WORDS: [&str; 12] = [
        "order ",
        "shipped ",
        "customer ",
        "\"sku\":",
        "1299.95,",
        "express ",
        "warehouse ",
        "{\"id\":",
        "pending ",
        "2026-11-21T00:00:00Z ",
        "café ",
        "返品 ",
    ];
    let mut out = Vec::with_capacity(len + 32);
    while out.len() < len {
        out.extend_from_slice(WORDS[(next() % WORDS.len() as u64) as usize].as_bytes());
    }
    // Cut on a character boundary so the bytes stay valid UTF-8.
    let mut end = len;
    while std::str::from_utf8(&out[..end]).is_err() {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// Valid DynamoDB number text of many spellings: signs, exponents, leading
/// and trailing zeros, up to 38 significant digits.
pub fn number() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("-"), Just("+")],
        "[1-9][0-9]{0,18}",
        "[0-9]{0,19}",
        prop_oneof![Just(None), (-60i32..60).prop_map(Some)],
        0usize..3,
    )
        .prop_map(|(sign, int, frac, exp, zeros)| {
            let mut text = format!("{sign}{}{int}", "0".repeat(zeros));
            if !frac.is_empty() {
                text.push('.');
                text.push_str(&frac);
            }
            if let Some(e) = exp {
                text.push_str(&format!("E{e}"));
            }
            text
        })
        .prop_filter("valid DynamoDB number", |t| Decimal::parse_valid(t).is_ok())
}

fn unique_by<T: Clone, K: Ord>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut seen = BTreeSet::new();
    items.into_iter().filter(|i| seen.insert(key(i))).collect()
}

/// Any attribute value, nested up to a few levels.
pub fn value() -> impl Strategy<Value = AttributeValue> {
    let leaf = prop_oneof![
        "\\PC{0,40}".prop_map(AttributeValue::S),
        number().prop_map(AttributeValue::N),
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(AttributeValue::B),
        any::<bool>().prop_map(AttributeValue::Bool),
        Just(AttributeValue::Null),
        proptest::collection::vec("\\PC{0,12}", 1..5)
            .prop_map(|v| AttributeValue::Ss(unique_by(v, |s| s.clone()))),
        proptest::collection::vec(number(), 1..5).prop_map(|v| {
            AttributeValue::Ns(unique_by(v, |n| Decimal::parse(n).unwrap().canonical()))
        }),
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..16), 1..5)
            .prop_map(|v| AttributeValue::Bs(unique_by(v, |b| b.clone()))),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(AttributeValue::L),
            proptest::collection::btree_map("\\PC{1,10}", inner, 0..6).prop_map(AttributeValue::M),
        ]
    })
}

/// A large value of `len` bytes: binary, or a string, compressible or not.
pub fn big_value(seed: u64, len: usize, kind: u8) -> AttributeValue {
    match kind % 3 {
        0 => AttributeValue::B(bulk(seed, len, false)),
        1 => AttributeValue::B(bulk(seed, len, true)),
        _ => AttributeValue::S(String::from_utf8(bulk(seed, len, true)).expect("utf-8")),
    }
}

/// Sizes skewed small: most items fit or need a few chunks, some need many.
pub fn bulk_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        6 => 0usize..50_000,
        3 => 50_000usize..700_000,
        1 => 700_000usize..3_000_000,
    ]
}

/// An item with a string partition key `pk`, a string sort key `sk`, small
/// attributes of every type, and up to two bulky attributes.
pub fn item() -> impl Strategy<Value = Item> {
    (
        "\\PC{1,20}",
        "[a-z#\\\\]{1,12}",
        proptest::collection::btree_map("[a-z_]{1,8}", value(), 0..8),
        proptest::collection::vec((any::<u64>(), bulk_len(), any::<u8>()), 0..3),
    )
        .prop_map(|(pk, sk, small, big)| {
            let mut item: Item = small;
            item.remove("pk");
            item.remove("sk");
            for reserved in dynaslice_core::manifest::RESERVED_ATTRIBUTES {
                item.remove(reserved);
            }
            item.insert("pk".into(), AttributeValue::S(pk));
            item.insert("sk".into(), AttributeValue::S(sk));
            for (i, (seed, len, kind)) in big.into_iter().enumerate() {
                item.insert(format!("big{i}"), big_value(seed, len, kind));
            }
            item
        })
}
