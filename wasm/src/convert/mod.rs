//! Every conversion between JavaScript values and core's types lives here:
//! items as value streams, options, and DynamoDB requests in the shape
//! `@aws-sdk/client-dynamodb` takes.

mod capacity;
mod history;
pub mod js;
mod objects;
mod options;
mod output;
pub mod protocol;
mod requests;
pub mod stream;

pub use capacity::{read_capacity, write_capacity};
pub use history::listing;
pub use options::*;
pub use output::{dynamodb_item, violations};
pub use requests::*;

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

/// Sets `object[key] = value` as an own property: an attribute named
/// `__proto__` too, which an assignment would take as the prototype.
pub(crate) fn set(object: &Object, key: &str, value: &JsValue) {
    // Defining a property on a plain object we created cannot fail.
    if key == "__proto__" {
        let descriptor = Object::new();
        for flag in ["enumerable", "writable", "configurable"] {
            let _ = Reflect::set(&descriptor, &JsValue::from_str(flag), &JsValue::TRUE);
        }
        let _ = Reflect::set(&descriptor, &JsValue::from_str("value"), value);
        let _ = Reflect::define_property(object, &JsValue::from_str(key), &descriptor);
    } else {
        let _ = Reflect::set(object, &JsValue::from_str(key), value);
    }
}

/// `object[key]`, `undefined` when absent or not an object or function.
pub(crate) fn get(object: &JsValue, key: &str) -> JsValue {
    if !object.is_object() && !object.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}
