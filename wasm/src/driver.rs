//! What the package's DynamoDB driver (`js/dynamodb.js`) needs from the
//! core beyond the plans: version ids stamped in the store's time, what a
//! last-writer-wins commit replaced (from the old parent its answer
//! returned), and, for `gc`, the Scan that finds chunks and each scanned
//! item read back as a chunk key. The driver never parses a chunk key or a
//! manifest, or names a format attribute itself.

use dynaslice_core::layout::{chunk_key, parse_chunk_key};
use dynaslice_core::manifest::CHUNK_DIGEST_ATTRIBUTE;
use dynaslice_core::plan::{WriteRequest, pack_batch_writes, plan_replaced};
use dynaslice_core::{Code, Layout};
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use crate::JsResult;
use crate::convert::{self, TableOptions, set, stream};
use crate::error::Failure;

/// A fresh version id (26 characters) stamped at `unixMs`: the store's
/// time, which the driver reads from its answers' `Date` headers.
#[wasm_bindgen(js_name = versionAt)]
pub fn version_at(unix_ms: f64) -> JsResult<String> {
    if !(unix_ms.is_finite() && unix_ms >= 0.0 && unix_ms < 2f64.powi(48)) {
        return Err(Failure::new(
            Code::InputInvalid,
            "a version's time must be Unix milliseconds",
        )
        .into());
    }
    Ok(convert::fresh_version(unix_ms)?.to_text())
}

/// The `ScanInput` (first page) that finds every chunk of the table's
/// layout: the chunk table's key attributes and each chunk's digest
/// attribute, strongly consistent.
#[wasm_bindgen(js_name = gcScan)]
pub fn gc_scan(options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let mut projected: Vec<&str> = match &table.layout {
        Layout::ChunkTable { key_name } => vec![key_name.as_str()],
        Layout::ItemCollection => table.key.attributes().map(|k| k.name.as_str()).collect(),
    };
    projected.push(CHUNK_DIGEST_ATTRIBUTE);
    let names = Object::new();
    let mut projection = String::new();
    for (i, name) in projected.iter().enumerate() {
        let placeholder = ["#a0", "#a1", "#a2"][i];
        set(&names, placeholder, &(*name).into());
        if i > 0 {
            projection.push_str(", ");
        }
        projection.push_str(placeholder);
    }
    let scan = Object::new();
    set(&scan, "TableName", &table.chunk_table.as_str().into());
    set(&scan, "ProjectionExpression", &projection.as_str().into());
    set(&scan, "ExpressionAttributeNames", &names);
    set(&scan, "ConsistentRead", &true.into());
    Ok(scan.into())
}

/// A scanned item (as `gcScan` projects it) read as a chunk: `{ key,
/// parentKey, version, versionMs }` (DynamoDB JSON keys), or `undefined`
/// for an item that is not a chunk of this layout (in an item collection,
/// the user's own items).
#[wasm_bindgen(js_name = chunkOf)]
pub fn chunk_of(item: &[u8], options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let item = stream::item(item)?;
    if !item.contains_key(CHUNK_DIGEST_ATTRIBUTE) {
        return Ok(JsValue::UNDEFINED);
    }
    let Ok(chunk) = parse_chunk_key(&table.key, &table.layout, &item) else {
        return Ok(JsValue::UNDEFINED);
    };
    // The chunk's key as the core makes it (the item less its digest).
    let Ok(key) = chunk_key(
        &table.key,
        &table.layout,
        &chunk.parent_key,
        chunk.version,
        chunk.seq,
    ) else {
        return Ok(JsValue::UNDEFINED);
    };
    let result = Object::new();
    set(&result, "key", &convert::dynamodb_item(&key));
    set(
        &result,
        "parentKey",
        &convert::dynamodb_item(&chunk.parent_key),
    );
    set(&result, "version", &chunk.version.to_text().into());
    set(
        &result,
        "versionMs",
        &(chunk.version.unix_ms() as f64).into(),
    );
    Ok(result.into())
}

/// The `BatchWriteItemInput`s deleting chunks by key (streams back to back,
/// `ends` where each ends), packed to DynamoDB's limits. Only chunk keys
/// are accepted: this never deletes a parent or a user's item.
#[wasm_bindgen(js_name = chunkDeletes)]
pub fn chunk_deletes(keys: &[u8], ends: &[u32], options: JsValue) -> JsResult<Array> {
    let table = TableOptions::from_js(&options)?;
    let keys = stream::items(keys, ends)?;
    if keys
        .iter()
        .any(|key| parse_chunk_key(&table.key, &table.layout, key).is_err())
    {
        return Err(Failure::new(
            Code::ChunkKeyMalformed,
            "a key to delete is not a chunk key of this layout",
        )
        .into());
    }
    let requests = keys
        .into_iter()
        .map(|key| (table.chunk_table.clone(), WriteRequest::Delete(key)));
    Ok(convert::batch_writes(&pack_batch_writes(requests)))
}

/// What the unconditional commit of `parent` (a stream of the parent it
/// wrote) replaced, from `old`, the stream of the item its answer returned
/// (`Attributes` of `ReturnValues: ALL_OLD`; absent when nothing was
/// stored): `{ version, cleanup, leftForGc }`, where `version` is the
/// replaced version (undefined for a plain item or nothing), `cleanup` the
/// `BatchWriteItemInput`s deleting its chunks, and `leftForGc` (when set)
/// why its chunks are left to gc instead (an unreadable manifest).
#[wasm_bindgen(js_name = replacedBy)]
pub fn replaced_by(old: Option<Box<[u8]>>, parent: &[u8], options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let old = old.as_deref().map(stream::item).transpose()?;
    let parent = stream::item(parent)?;
    let replaced = plan_replaced(old.as_ref(), &parent, &table.target());
    let result = Object::new();
    if let Some(version) = replaced.version {
        set(&result, "version", &version.to_text().into());
    }
    set(
        &result,
        "cleanup",
        &convert::batch_writes(&replaced.cleanup),
    );
    if let Some(why) = replaced.left_for_gc {
        set(&result, "leftForGc", &why.to_string().into());
    }
    Ok(result.into())
}
