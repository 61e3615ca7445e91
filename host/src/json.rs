//! DynamoDB JSON (`{"name": {"S": "x"}}`, binaries in base64) to and from
//! core items, and key arguments (`pk=value`) typed by a table's schema.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::protocol::{DeleteOutcome, PutOutcome};
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType};
use serde_json::json;

use serde_json::{Map, Value};

use crate::error::HostError;

fn bad(path: &str, what: &str) -> HostError {
    HostError::Input(format!(
        "{}: {what}",
        if path.is_empty() { "item" } else { path }
    ))
}

/// Reads an item in DynamoDB JSON.
pub fn item_from_json(json: &Value) -> Result<Item, HostError> {
    let object = json
        .as_object()
        .ok_or_else(|| bad("", "expected a JSON object of attributes"))?;
    object
        .iter()
        .map(|(name, value)| Ok((name.clone(), value_from_json(value, name)?)))
        .collect()
}

/// Reads one attribute value in DynamoDB JSON (`{"N": "1"}`).
pub fn value_from_json(json: &Value, path: &str) -> Result<AttributeValue, HostError> {
    let object = json.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
        bad(
            path,
            "expected an object with one type key, like {\"S\": \"text\"}",
        )
    })?;
    let (tag, inner) = object
        .iter()
        .next()
        .ok_or_else(|| bad(path, "empty value"))?;
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(path, &format!("{tag} needs a string")))
    };
    let bytes = |v: &Value| {
        let t = v
            .as_str()
            .ok_or_else(|| bad(path, &format!("{tag} needs base64 text")))?;
        BASE64
            .decode(t)
            .map_err(|e| bad(path, &format!("bad base64: {e}")))
    };
    fn list<'v>(v: &'v Value, path: &str, tag: &str) -> Result<&'v Vec<Value>, HostError> {
        v.as_array()
            .ok_or_else(|| bad(path, &format!("{tag} needs an array")))
    }
    Ok(match tag.as_str() {
        "S" => AttributeValue::S(text(inner)?),
        "N" => AttributeValue::N(text(inner)?),
        "B" => AttributeValue::B(bytes(inner)?),
        "BOOL" => AttributeValue::Bool(
            inner
                .as_bool()
                .ok_or_else(|| bad(path, "BOOL needs true or false"))?,
        ),
        "NULL" => AttributeValue::Null,
        "L" => AttributeValue::L(
            list(inner, path, tag)?
                .iter()
                .enumerate()
                .map(|(i, v)| value_from_json(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        "M" => AttributeValue::M(
            inner
                .as_object()
                .ok_or_else(|| bad(path, "M needs an object"))?
                .iter()
                .map(|(k, v)| Ok((k.clone(), value_from_json(v, &format!("{path}.{k}"))?)))
                .collect::<Result<BTreeMap<_, _>, HostError>>()?,
        ),
        "SS" => AttributeValue::Ss(
            list(inner, path, tag)?
                .iter()
                .map(text)
                .collect::<Result<_, _>>()?,
        ),
        "NS" => AttributeValue::Ns(
            list(inner, path, tag)?
                .iter()
                .map(text)
                .collect::<Result<_, _>>()?,
        ),
        "BS" => AttributeValue::Bs(
            list(inner, path, tag)?
                .iter()
                .map(bytes)
                .collect::<Result<_, _>>()?,
        ),
        other => return Err(bad(path, &format!("unknown type {other}"))),
    })
}

/// Reads an item in plain JSON (`{"pk": "a", "n": 1, "tags": ["x"]}`):
/// a string is `S`, a number `N` (as JSON wrote it), a boolean `BOOL`,
/// null `NULL`, an array `L`, an object `M`. Binary and sets need
/// DynamoDB JSON.
pub fn item_from_plain_json(json: &Value) -> Result<Item, HostError> {
    fn value(json: &Value) -> AttributeValue {
        match json {
            Value::String(s) => AttributeValue::S(s.clone()),
            Value::Number(n) => AttributeValue::N(n.to_string()),
            Value::Bool(b) => AttributeValue::Bool(*b),
            Value::Null => AttributeValue::Null,
            Value::Array(list) => AttributeValue::L(list.iter().map(value).collect()),
            Value::Object(map) => {
                AttributeValue::M(map.iter().map(|(k, v)| (k.clone(), value(v))).collect())
            }
        }
    }
    let object = json
        .as_object()
        .ok_or_else(|| bad("", "expected a JSON object of attributes"))?;
    Ok(object
        .iter()
        .map(|(name, v)| (name.clone(), value(v)))
        .collect())
}

/// Writes an item as DynamoDB JSON.
pub fn item_to_json(item: &Item) -> Value {
    Value::Object(
        item.iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect(),
    )
}

/// Writes one value as DynamoDB JSON.
pub fn value_to_json(value: &AttributeValue) -> Value {
    let (tag, inner) = match value {
        AttributeValue::S(s) => ("S", Value::from(s.as_str())),
        AttributeValue::N(n) => ("N", Value::from(n.as_str())),
        AttributeValue::B(b) => ("B", Value::from(BASE64.encode(b))),
        AttributeValue::Bool(b) => ("BOOL", Value::from(*b)),
        AttributeValue::Null => ("NULL", Value::from(true)),
        AttributeValue::L(l) => ("L", Value::Array(l.iter().map(value_to_json).collect())),
        AttributeValue::M(m) => ("M", item_to_json(m)),
        AttributeValue::Ss(s) => ("SS", Value::from(s.clone())),
        AttributeValue::Ns(s) => ("NS", Value::from(s.clone())),
        AttributeValue::Bs(s) => (
            "BS",
            Value::Array(s.iter().map(|b| Value::from(BASE64.encode(b))).collect()),
        ),
    };
    Value::Object(Map::from_iter([(tag.to_string(), inner)]))
}

/// A key value as a person reads it: strings and numbers as they are,
/// binaries in base64.
pub fn value_text(value: &AttributeValue) -> String {
    match value {
        AttributeValue::S(s) | AttributeValue::N(s) => s.clone(),
        AttributeValue::B(b) => BASE64.encode(b),
        other => value_to_json(other).to_string(),
    }
}

/// A key as text, `name=value` per key attribute in the schema's order
/// (partition key first), space-separated: the form `-k` arguments take,
/// used by every message that names an item (core's
/// [`KeySchema::key_text`]).
pub fn key_text(schema: &KeySchema, key: &Item) -> String {
    schema.key_text(key)
}

/// Builds a key from `name=value` arguments typed by `schema` (numbers as
/// given, binaries in base64); the value may itself contain `=`.
pub fn key_from_args(args: &[String], schema: &KeySchema) -> Result<Item, HostError> {
    let mut key = Item::new();
    for arg in args {
        let (name, text) = arg
            .split_once('=')
            .ok_or_else(|| HostError::Input(format!("key {arg:?} must be name=value")))?;
        let Some(attribute) = schema.attributes().find(|k| k.name == name) else {
            let expected: Vec<String> = schema
                .attributes()
                .map(|k| format!("{} ({})", k.name, k.key_type.as_str()))
                .collect();
            return Err(HostError::Input(format!(
                "{name} is not a key attribute of this table; its key is {}",
                expected.join(" and ")
            )));
        };
        let value = match attribute.key_type {
            KeyType::S => AttributeValue::S(text.to_string()),
            KeyType::N => AttributeValue::N(text.to_string()),
            KeyType::B => AttributeValue::B(
                BASE64
                    .decode(text)
                    .map_err(|e| HostError::Input(format!("{name}: bad base64: {e}")))?,
            ),
        };
        key.insert(name.to_string(), value);
    }
    Ok(key)
}

/// A manifest as JSON for people and scripts (the CLI's `--json` output
/// and the HTTP API).
pub fn manifest_to_json(manifest: &Manifest) -> Value {
    json!({
        "version": manifest.version.to_text(),
        "layout": manifest.layout,
        "codec": manifest.codec.name(),
        "chunks": manifest.total_chunks(),
        "chunkBytes": manifest.chunk_bytes,
        "storedBytes": manifest.total_stored_len(),
        "rawBytes": manifest.total_raw_len(),
        "inline": manifest.inline.is_some(),
        "object": manifest.object.as_ref().map(|o| json!({
            "bucket": o.bucket,
            "key": o.key,
            "etag": o.etag,
        })),
        "spilled": manifest.all_spilled(),
        "groups": manifest.groups.iter().map(|g| json!({
            "id": g.version.to_text(),
            "chunks": g.chunk_count,
            "storedBytes": g.stored_len,
            "spilled": g.spilled,
        })).collect::<Vec<_>>(),
    })
}

/// The JSON of an operation's outcome, as the CLI (`--json`) prints it and
/// the server answers it, naming the item by `key`.
pub trait OutcomeJson {
    /// The outcome as JSON.
    fn to_json(&self, key: &Item) -> Value;
}

impl OutcomeJson for PutOutcome {
    fn to_json(&self, key: &Item) -> Value {
        json!({
            "key": item_to_json(key),
            "mode": self.mode.name(),
            "manifest": self.manifest.as_ref().map(manifest_to_json),
            "replaced": self.replaced.map(|v| v.to_text()),
            "superseded": self.superseded,
            "bytesWritten": self.bytes_written,
            "writeUnits": self.planned_write_units,
            "consumedWriteUnits": self.consumed_write_units,
            "consumedReadUnits": self.consumed_read_units,
            "cleanupLeft": self.cleanup_left,
        })
    }
}

impl OutcomeJson for crate::UpdateOutcome {
    fn to_json(&self, key: &Item) -> Value {
        let reason = match &self.plan.steps {
            crate::UpdateSteps::Parent(_) => None,
            crate::UpdateSteps::Rewrite(why) => Some(why.to_string()),
        };
        json!({
            "key": item_to_json(key),
            "path": self.plan.path(),
            "reason": reason,
            "applied": self.applied,
            "writeUnits": self.plan.write_units,
            "reused": self.plan.reused(),
            "put": self.put.as_ref().map(|p| p.to_json(key)),
            "consumedWriteUnits": self.consumed.write,
            "consumedReadUnits": self.consumed.read,
        })
    }
}

impl OutcomeJson for DeleteOutcome {
    fn to_json(&self, key: &Item) -> Value {
        json!({
            "key": item_to_json(key),
            "deleted": self.existed,
            "chunksDeleted": self.chunks_deleted,
            "objectDeleted": self.object_deleted,
            "chunksLeft": self.chunks_left,
        })
    }
}
