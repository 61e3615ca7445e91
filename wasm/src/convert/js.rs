//! Reading JavaScript objects without letting a JavaScript exception cross
//! the WebAssembly frames. A getter, a Proxy trap or a revoked Proxy can
//! throw; an exception thrown through wasm skips wasm-bindgen's shadow-stack
//! bookkeeping, and enough of them break the module. Every read that can run
//! user code goes through an import that catches, and the exception becomes
//! a typed error.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::error::Failure;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Object, js_name = entries)]
    fn object_entries(object: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(object: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn array_is_array(value: &JsValue) -> Result<bool, JsValue>;
}

/// What a caught JavaScript exception said, as a typed input error at `path`.
fn thrown(path: &str, error: JsValue) -> Failure {
    let message = Reflect::get(&error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "an exception".into());
    Failure::input(path, format!("reading the value threw: {message}"))
}

/// `Array.isArray(value)`.
pub fn is_array(value: &JsValue, path: &str) -> Result<bool, Failure> {
    array_is_array(value).map_err(|e| thrown(path, e))
}

/// An array's elements, read through `Reflect`.
pub fn elements(array: &JsValue, path: &str) -> Result<Vec<JsValue>, Failure> {
    let length = Reflect::get(array, &"length".into()).map_err(|e| thrown(path, e))?;
    let length = length.as_f64().filter(|n| *n >= 0.0 && n.fract() == 0.0);
    let length =
        length.ok_or_else(|| Failure::input(path, "an array without a valid length"))? as u32;
    (0..length)
        .map(|i| Reflect::get_u32(array, i).map_err(|e| thrown(path, e)))
        .collect()
}

/// An object's own enumerable string-keyed properties, as `Object.entries`.
pub fn entries(object: &JsValue, path: &str) -> Result<Vec<(String, JsValue)>, Failure> {
    let pairs = object_entries(object).map_err(|e| thrown(path, e))?;
    Ok(pairs
        .iter()
        .map(|pair| {
            let pair: Array = pair.unchecked_into();
            (pair.get(0).as_string().unwrap_or_default(), pair.get(1))
        })
        .collect())
}

/// An object's own enumerable string keys, as `Object.keys`.
pub fn keys(object: &JsValue, path: &str) -> Result<Vec<String>, Failure> {
    let keys = object_keys(object).map_err(|e| thrown(path, e))?;
    Ok(keys
        .iter()
        .map(|k| k.as_string().unwrap_or_default())
        .collect())
}

/// True for an object made by `{}` or `Object.create(null)`: not an array,
/// class instance, Date, Map or typed array.
pub fn is_plain_object(value: &JsValue, path: &str) -> Result<bool, Failure> {
    if !value.is_object() || is_array(value, path)? {
        return Ok(false);
    }
    let object: &Object = value.unchecked_ref();
    let proto = JsValue::from(Reflect::get_prototype_of(object).map_err(|e| thrown(path, e))?);
    Ok(proto.is_null() || OBJECT_PROTOTYPE.with(|plain| proto == *plain))
}

thread_local! {
    /// `Object.prototype`, looked up once rather than for every value read.
    static OBJECT_PROTOTYPE: JsValue = Object::get_prototype_of(&Object::new()).into();
}

/// The bytes of a `Uint8Array` (a Node `Buffer` included) or an
/// `ArrayBuffer`; anything else is refused rather than read as zeros.
pub fn bytes(value: &JsValue, what: &str) -> Result<Vec<u8>, Failure> {
    if let Some(array) = value.dyn_ref::<js_sys::Uint8Array>() {
        return Ok(array.to_vec());
    }
    if let Some(buffer) = value.dyn_ref::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(buffer).to_vec());
    }
    Err(Failure::new(
        "INPUT_INVALID",
        format!("{what} must be a Uint8Array or an ArrayBuffer"),
    ))
}
