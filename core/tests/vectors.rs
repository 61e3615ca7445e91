//! The shared size vectors (`tests/vectors/sizes.json`): every case's
//! expected value comes from the AWS rules, published boundary facts or
//! measurements on servers, recorded with its provenance in the file.

mod common;

use dynaslice_core::number::{Decimal, number_size};
use dynaslice_core::{
    KeySchema, KeyType, MAX_ITEM_BYTES, ValidateOptions, item_size, validate_item,
};
use serde_json::Value;

fn sizes() -> Value {
    common::load_vectors("sizes.json", "dynaslice-size-vectors/1")
}

#[test]
fn item_sizes_match_vectors() {
    let vectors = sizes();
    let cases = vectors["items"].as_array().unwrap();
    assert!(cases.len() >= 50);
    let mut wrong = Vec::new();
    for case in cases {
        let item = common::item(&case["item"]);
        let expected = case["size"].as_u64().unwrap() as usize;
        let got = item_size(&item);
        if got != expected {
            wrong.push(format!("{}: expected {expected}, got {got}", case["name"]));
        }
        // Every case that fits must validate cleanly (no key schema here).
        let violations = validate_item(&item, &ValidateOptions::default());
        let fits = expected <= MAX_ITEM_BYTES;
        if fits != violations.is_empty() {
            wrong.push(format!("{}: validation gave {violations:?}", case["name"]));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn number_sizes_match_vectors() {
    let vectors = sizes();
    let cases = vectors["numbers"].as_array().unwrap();
    assert!(cases.len() >= 30);
    let mut wrong = Vec::new();
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let expected = case["size"].as_u64().unwrap() as usize;
        match number_size(text) {
            Ok(got) if got == expected => {}
            other => wrong.push(format!("{text}: expected {expected}, got {other:?}")),
        }
        if let Err(e) = Decimal::parse_valid(text) {
            wrong.push(format!("{text}: should be valid, got {e}"));
        }
        // The aligned count is never smaller than dynoxide's: an item core
        // says fits is accepted by both servers.
        let dynoxide = case["dynoxide_size"].as_u64().unwrap() as usize;
        if dynoxide > expected {
            wrong.push(format!("{text}: dynoxide counts {dynoxide} > {expected}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn schema_of(key: &Value) -> Option<KeySchema> {
    let key = key.as_object()?;
    let key_type = |t: &Value| match t.as_str().unwrap() {
        "S" => KeyType::S,
        "N" => KeyType::N,
        "B" => KeyType::B,
        other => panic!("key type {other}"),
    };
    let mut schema = KeySchema::partition("pk", key_type(&key["pk"]));
    if let Some(sk) = key.get("sk") {
        schema = schema.with_sort("sk", key_type(sk));
    }
    Some(schema)
}

#[test]
fn invalid_items_give_their_code_and_path() {
    let vectors = sizes();
    let cases = vectors["invalid"].as_array().unwrap();
    assert!(cases.len() >= 20);
    let mut wrong = Vec::new();
    for case in cases {
        let item = common::item(&case["item"]);
        let schema = schema_of(&case["key"]);
        let options = ValidateOptions {
            key: schema.as_ref(),
            ..ValidateOptions::default()
        };
        let found = validate_item(&item, &options);
        let expected = (
            case["code"].as_str().unwrap(),
            case["path"].as_str().unwrap(),
        );
        let got: Vec<_> = found
            .iter()
            .map(|v| (v.code().as_str(), v.path.as_str()))
            .collect();
        if got != [expected] {
            wrong.push(format!(
                "{}: expected {expected:?}, got {got:?}",
                case["name"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
