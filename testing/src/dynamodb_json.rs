//! Test support: DynamoDB JSON (the shape of `tests/vectors/` and the AWS
//! SDKs) into core's item model, with the vectors' `fill` extension.
#![allow(dead_code)]

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use dynaslice_core::{AttributeValue, Item};
use serde_json::Value;

/// The repository's `tests/vectors/` folder.
pub fn vectors_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

/// Parses a vector file, refusing a format version this loader does not know.
pub fn load_vectors(file: &str, format: &str) -> Value {
    let path = vectors_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value = serde_json::from_str(&text).expect("vector file is JSON");
    assert_eq!(json["format"], format, "unknown vector format in {file}");
    json
}

/// A DynamoDB JSON item, or `None` for anything else (what a proxy reads
/// off the wire may be anything): every value of a known type, binaries in
/// base64.
pub fn try_item(json: &Value) -> Option<Item> {
    json.as_object()?
        .iter()
        .map(|(name, value)| Some((name.clone(), try_value(value)?)))
        .collect()
}

fn try_value(json: &Value) -> Option<AttributeValue> {
    let object = json.as_object().filter(|o| o.len() == 1)?;
    let (kind, inner) = object.iter().next()?;
    let texts = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|t| t.as_str().map(str::to_string))
            .collect()
    };
    Some(match kind.as_str() {
        "S" => AttributeValue::S(inner.as_str()?.to_string()),
        "N" => AttributeValue::N(inner.as_str()?.to_string()),
        "B" => AttributeValue::B(BASE64.decode(inner.as_str()?).ok()?),
        "BOOL" => AttributeValue::Bool(inner.as_bool()?),
        "NULL" => AttributeValue::Null,
        "L" => AttributeValue::L(
            inner
                .as_array()?
                .iter()
                .map(try_value)
                .collect::<Option<_>>()?,
        ),
        "M" => AttributeValue::M(try_item(inner)?),
        "SS" => AttributeValue::Ss(texts(inner)?),
        "NS" => AttributeValue::Ns(texts(inner)?),
        "BS" => AttributeValue::Bs(
            inner
                .as_array()?
                .iter()
                .map(|b| BASE64.decode(b.as_str()?).ok())
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// A DynamoDB JSON item (`{"name": {"S": "x"}, ...}`), with the vectors'
/// `fill` extension; panics on anything else.
pub fn item(json: &Value) -> Item {
    json.as_object()
        .expect("item is an object")
        .iter()
        .map(|(name, value)| (name.clone(), value_of(value)))
        .collect()
}

fn fill_bytes(spec: &Value) -> Vec<u8> {
    let unit = hex(spec["fill"].as_str().expect("fill is hex"));
    unit.repeat(spec["count"].as_u64().expect("count") as usize)
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(spec) => {
            let unit = spec["fill"].as_str().expect("fill is text");
            unit.repeat(spec["count"].as_u64().expect("count") as usize)
        }
        other => panic!("not text: {other}"),
    }
}

fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(s) => BASE64.decode(s).expect("base64"),
        Value::Object(_) => fill_bytes(value),
        other => panic!("not binary: {other}"),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("set is an array")
        .iter()
        .map(text)
        .collect()
}

/// One DynamoDB JSON value.
pub fn value_of(json: &Value) -> AttributeValue {
    let object = json.as_object().expect("value is an object");
    assert_eq!(object.len(), 1, "one type per value: {json}");
    let (kind, inner) = object.iter().next().expect("one entry");
    match kind.as_str() {
        "S" => AttributeValue::S(text(inner)),
        "N" => AttributeValue::N(inner.as_str().expect("N is text").to_string()),
        "B" => AttributeValue::B(bytes(inner)),
        "BOOL" => AttributeValue::Bool(inner.as_bool().expect("BOOL")),
        "NULL" => AttributeValue::Null,
        "L" => AttributeValue::L(inner.as_array().expect("L").iter().map(value_of).collect()),
        "M" => AttributeValue::M(item(inner)),
        "SS" => AttributeValue::Ss(strings(inner)),
        "NS" => AttributeValue::Ns(strings(inner)),
        "BS" => AttributeValue::Bs(inner.as_array().expect("BS").iter().map(bytes).collect()),
        other => panic!("unknown type {other}"),
    }
}
