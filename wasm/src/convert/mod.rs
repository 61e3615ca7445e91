//! Every conversion between JavaScript values and core's types lives here:
//! items in two explicit formats, options, and DynamoDB requests in the
//! shape `@aws-sdk/client-dynamodb` takes.

mod input;
pub mod js;
mod options;
mod output;
mod requests;

pub use input::item_from_js;
pub use options::*;
pub use output::{item_to_js, set_number_value_class, violations};
pub use requests::*;

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

/// How items are written in JavaScript; always chosen by an option, never
/// guessed from the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// DynamoDB JSON, the low-level SDK shape: `{ "S": "x" }`.
    DynamoDb,
    /// Plain values, as `@aws-sdk/util-dynamodb` marshalls them.
    Plain,
}

/// Sets `object[key] = value`.
pub(crate) fn set(object: &Object, key: &str, value: &JsValue) {
    // Setting a property on a plain object we created cannot fail.
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}

/// `object[key]`, `undefined` when absent or not an object or function.
pub(crate) fn get(object: &JsValue, key: &str) -> JsValue {
    if !object.is_object() && !object.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// The name of a value's constructor (`"Object"`, `"NumberValue"`, …).
pub(crate) fn constructor_name(value: &JsValue) -> Option<String> {
    get(&get(value, "constructor"), "name").as_string()
}
