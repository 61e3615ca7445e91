//! Version history ([`dynaslice_core::history`]) as the driver's
//! `listVersions` returns it.

use dynaslice_core::history::Listing;
use js_sys::{Array, Object};
use wasm_bindgen::JsValue;

use super::set;

fn optional(value: Option<u64>) -> JsValue {
    value.map_or(JsValue::UNDEFINED, |n| JsValue::from(n as f64))
}

/// `{ retention, versions }` of a listing.
pub fn listing(listing: &Listing) -> JsValue {
    let result = Object::new();
    if let Some(retention) = listing.retention {
        let r = Object::new();
        set(&r, "keep", &retention.keep.into());
        set(&r, "maxAgeMs", &optional(retention.max_age_ms));
        set(&result, "retention", &r);
    }
    let versions = Array::new();
    for listed in &listing.versions {
        let v = Object::new();
        let id = listed.version.map(|v| v.to_text());
        set(&v, "version", &id.map_or(JsValue::UNDEFINED, JsValue::from));
        set(&v, "current", &listed.current.into());
        set(&v, "writtenAt", &optional(listed.written_ms));
        set(&v, "replacedAt", &optional(listed.replaced_ms));
        set(&v, "bytes", &(listed.bytes as f64).into());
        set(&v, "chunks", &listed.chunk_count.into());
        let note = listed
            .note
            .as_deref()
            .map_or(JsValue::UNDEFINED, JsValue::from);
        set(&v, "note", &note);
        versions.push(&v);
    }
    set(&result, "versions", &versions);
    result.into()
}
