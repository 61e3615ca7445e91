//! Core results as JavaScript objects: items inside requests (DynamoDB
//! JSON, small: keys, manifests, chunks) and validation results. Whole
//! items go back as value streams ([`super::stream`]).

use dynaslice_core::{AttributeValue, Item, Violation};
use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::JsValue;

use super::set;

/// An item as DynamoDB JSON, the shape requests take.
pub fn dynamodb_item(item: &Item) -> JsValue {
    let object = Object::new();
    for (name, value) in item {
        set(&object, name, &typed(value));
    }
    object.into()
}

fn bytes(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

fn strings(items: &[String]) -> JsValue {
    items
        .iter()
        .map(|s| JsValue::from_str(s))
        .collect::<Array>()
        .into()
}

/// DynamoDB JSON, with binary as `Uint8Array` as the SDK expects.
fn typed(value: &AttributeValue) -> JsValue {
    let (kind, inner): (&str, JsValue) = match value {
        AttributeValue::S(s) => ("S", s.into()),
        AttributeValue::N(n) => ("N", n.into()),
        AttributeValue::B(b) => ("B", bytes(b)),
        AttributeValue::Bool(b) => ("BOOL", (*b).into()),
        AttributeValue::Null => ("NULL", true.into()),
        AttributeValue::L(list) => ("L", list.iter().map(typed).collect::<Array>().into()),
        AttributeValue::M(map) => {
            let object = Object::new();
            map.iter().for_each(|(k, v)| set(&object, k, &typed(v)));
            ("M", object.into())
        }
        AttributeValue::Ss(set) => ("SS", strings(set)),
        AttributeValue::Ns(set) => ("NS", strings(set)),
        AttributeValue::Bs(set) => ("BS", set.iter().map(|b| bytes(b)).collect::<Array>().into()),
    };
    let object = Object::new();
    set(&object, kind, &inner);
    object.into()
}

/// Validation results as an array of `{ code, path, message }`.
pub fn violations(found: &[Violation]) -> Array {
    found
        .iter()
        .map(|v| {
            let object = Object::new();
            set(&object, "code", &v.code().as_str().into());
            set(&object, "path", &v.path.as_str().into());
            set(&object, "message", &v.kind.to_string().into());
            JsValue::from(object)
        })
        .collect()
}
