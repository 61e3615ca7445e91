//! Bytes from JavaScript.

use crate::error::Failure;
use dynaslice_core::Code;
use wasm_bindgen::{JsCast, JsValue};

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
        Code::InputInvalid,
        format!("{what} must be a Uint8Array or an ArrayBuffer"),
    ))
}
