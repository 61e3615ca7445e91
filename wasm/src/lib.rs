//! WebAssembly bindings of `dynaslice-core`, published as the npm package
//! `dynaslice`. Glue only: each export reads its arguments, calls the core,
//! and converts the result; every conversion is in [`convert`]. Items cross
//! as value streams, written and read by the package's `js/encode.js` and
//! `js/decode.js`; these exports are called only by the package's
//! `js/api.js`, which gives them their public shape.

// Talc instead of Rust's default dlmalloc: smaller and faster (talc's
// WebAssembly benchmarks); the module is single-threaded (no atomics).
#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

mod convert;
mod error;
mod machine;
mod reader;
mod splitter;

use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, MANIFEST_ATTRIBUTE, stored_version};
use dynaslice_core::plan::Expect;
use dynaslice_core::{Code, MAX_ITEM_BYTES, ValidateOptions, VersionId, plan};
use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;

use convert::{TableOptions, set, stream};
use error::Failure;

pub use machine::Machine;
pub use reader::ChunkReader;
pub use splitter::Splitter;

type JsResult<T> = Result<T, JsValue>;

/// The exact size DynamoDB bills and limits for the item.
#[wasm_bindgen(js_name = itemSize)]
pub fn item_size(item: &[u8]) -> JsResult<f64> {
    Ok(stream::item_size(item)? as f64)
}

/// Every rule the item breaks, as `{ code, path, message }`; empty when valid.
#[wasm_bindgen(js_name = validateItem)]
pub fn validate_item(item: &[u8], options: JsValue) -> JsResult<Array> {
    let item = stream::item(item)?;
    let key_option = convert::get(&options, "key");
    let key = if key_option.is_undefined() {
        None
    } else {
        Some(convert::key_schema(&key_option)?)
    };
    let validate = ValidateOptions {
        key: key.as_ref(),
        max_item_bytes: convert::size(&options, "maxItemBytes", MAX_ITEM_BYTES)?,
        index_keys: &[],
    };
    Ok(convert::violations(&dynaslice_core::validate_item(
        &item, &validate,
    )))
}

/// A running CRC-32 (ISO-HDLC, S3's `ChecksumCRC32`), for a payload sent
/// in pieces.
#[wasm_bindgen]
pub struct Crc32(dynaslice_core::codec::Crc32);

#[wasm_bindgen]
impl Crc32 {
    /// A CRC-32 of no bytes yet.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self(dynaslice_core::codec::Crc32::new())
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The checksum of every byte added.
    pub fn sum(&self) -> u32 {
        self.0.sum()
    }
}

/// Compresses bytes into a self-describing frame.
#[wasm_bindgen]
pub fn compress(bytes: JsValue, options: JsValue) -> JsResult<Vec<u8>> {
    let bytes = convert::js::bytes(&bytes, "compress's input")?;
    let compression = convert::compression(&options)?;
    Ok(dynaslice_core::codec::compress(&bytes, compression).map_err(Failure::from)?)
}

/// Decompresses a frame, refusing more than `maxBytes` (default 64 MiB).
#[wasm_bindgen]
pub fn decompress(bytes: JsValue, options: JsValue) -> JsResult<Vec<u8>> {
    let bytes = convert::js::bytes(&bytes, "decompress's input")?;
    let limit = convert::size(&options, "maxBytes", dynaslice_core::DEFAULT_MAX_RAW_BYTES)?;
    Ok(dynaslice_core::codec::decompress(&bytes, limit).map_err(error::read_failure)?)
}

/// Splits an item and plans its write: the parent, the chunks, the requests
/// to send, and the write capacity they cost. `stored` is the stream of the
/// parent `options.expect` holds, when it holds one.
#[wasm_bindgen]
pub fn split(item: &[u8], stored: Option<Box<[u8]>>, options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let item = stream::item(item)?;
    let split_options = convert::split_options(&table, &options)?;
    let split = dynaslice_core::split_item(&item, &split_options).map_err(error::write_failure)?;
    let expect = expectation(&options, stored.as_deref(), &table)?;
    let target = table.target();
    let mode = convert::write_mode(&options)?;
    let plan = plan::plan_write_as(&split, &target, &expect, mode, convert::commit(&options)?)
        .map_err(Failure::from)?;
    let result = convert::split_result(&split, &plan);
    set(
        result.unchecked_ref(),
        "costs",
        &convert::write_costs(&split, table.anchors.is_some()),
    );
    Ok(result)
}

/// What the write replaces: `expect` is `"absent"` (default), `"any"`, or
/// the stored parent as read (DynamoDB JSON), whose stream is `stored`.
pub(crate) fn expectation(
    options: &JsValue,
    stored: Option<&[u8]>,
    table: &TableOptions,
) -> Result<Expect, Failure> {
    let expect = convert::get(options, "expect");
    match (expect.as_string().as_deref(), stored) {
        (_, Some(stored)) => {
            let stored = stream::item(stored)?;
            let target = table.target().keys_only();
            Ok(Expect::from_stored_at(Some(&stored), &target).map_err(Failure::from)?)
        }
        _ if expect.is_undefined() || expect.is_null() => Ok(Expect::Absent),
        (Some("absent"), None) => Ok(Expect::Absent),
        (Some("any"), None) => Ok(Expect::Any),
        _ => Err(Failure::new(
            Code::OptionsInvalid,
            "option expect must be \"absent\", \"any\" or the stored parent",
        )),
    }
}

/// Rebuilds an item from its parent and chunks (streams of DynamoDB JSON
/// items, chunks back to back in any order, `ends` where each ends); returns
/// the item's stream.
#[wasm_bindgen]
pub fn reassemble(
    parent: &[u8],
    chunks: &[u8],
    ends: &[u32],
    options: JsValue,
) -> JsResult<Uint8Array> {
    let table = TableOptions::from_js(&options)?;
    let parent = stream::item(parent)?;
    let chunks = stream::items(chunks, ends)?;
    let item = dynaslice_core::reassemble(&parent, &chunks, &table.reassemble())
        .map_err(error::read_failure)?;
    Ok(stream::to_js_stream(&item))
}

/// The GetItem request for the parent whose key the item holds (consistent).
#[wasm_bindgen(js_name = parentRequest)]
pub fn parent_request(key: &[u8], options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let key = table
        .key
        .check_key(&stream::item(key)?)
        .map_err(|violations| {
            let first = &violations[0];
            Failure::new(first.code(), first.to_string())
        })?;
    Ok(convert::get_item(&plan::parent_get(&table.target(), &key)))
}

/// The BatchGetItem requests for a parent's chunks, their read capacity,
/// and the version they belong to (none for an item stored whole).
#[wasm_bindgen(js_name = readRequests)]
pub fn read_requests(parent: &[u8], options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let parent = stream::item(parent)?;
    let consistent = convert::flag(&options, "consistentRead", true)?;
    let read =
        plan::plan_read(&parent, &table.target(), consistent).map_err(error::read_failure)?;
    let result = Object::new();
    set(
        &result,
        "batchGetItems",
        &convert::batch_gets(&read.batches),
    );
    set(&result, "readUnits", &read.read_units().into());
    if let Some(manifest) = read.manifest {
        set(&result, "version", &manifest.version.to_text().into());
    }
    Ok(result.into())
}

/// The requests deleting a stored item: the parent first, then its chunks.
#[wasm_bindgen(js_name = deleteRequests)]
pub fn delete_requests(parent: &[u8], options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let parent = stream::item(parent)?;
    let target = table.target().keys_only();
    let delete = plan::plan_delete(&parent, &target).map_err(error::read_failure)?;
    let result = Object::new();
    set(&result, "deleteItem", &convert::delete(&delete.parent));
    set(
        &result,
        "batchWriteItems",
        &convert::batch_writes(&delete.chunks),
    );
    Ok(result.into())
}

/// The read capacity of reading a stored item: the parent's GetItem
/// (strongly consistent, as `parentRequest` makes it) and its chunks'
/// BatchGetItems (as `readRequests` plans them).
#[wasm_bindgen(js_name = readCapacity)]
pub fn read_capacity(parent: &[u8], options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let parent = stream::item(parent)?;
    let consistent = convert::flag(&options, "consistentRead", true)?;
    let read =
        plan::plan_read(&parent, &table.target(), consistent).map_err(error::read_failure)?;
    Ok(convert::read_capacity(
        read.parent_read_units(),
        read.read_units(),
    ))
}

/// Whether the manifest in `manifest` (the stream of an item holding at
/// most the manifest attribute, taken from a stored parent) is of
/// `version`. No manifest: false. A manifest that cannot be read is an
/// error, never a guess.
#[wasm_bindgen(js_name = carriesVersion)]
pub fn carries_version(manifest: &[u8], version: &str) -> JsResult<bool> {
    let version = VersionId::parse(version).map_err(Failure::from)?;
    let item = stream::item(manifest)?;
    Ok(stored_version(&item).map_err(Failure::from)? == Some(version))
}

/// The versions a stored parent (its stream) has at `now_ms`: `{
/// retention: { keep, maxAgeMs } | undefined, versions: [{ version,
/// current, writtenAt, replacedAt, bytes, chunks, note }] }`, the current
/// version first, then the kept ones, newest first (times in ms).
#[wasm_bindgen(js_name = versionsOf)]
pub fn versions_of(parent: &[u8], now_ms: f64) -> JsResult<JsValue> {
    let parent = stream::item(parent)?;
    let listing = dynaslice_core::history::listing(&parent, now_ms as u64)
        .map_err(|e| Failure::new(e.code(), e.to_string()))?;
    Ok(convert::listing(&listing))
}

/// The protocol's policy numbers (core's `protocol::policy`): `{
/// concurrency, retry, graceMs, readWindow, … }`, the driver's defaults.
#[wasm_bindgen(js_name = protocolPolicy)]
pub fn protocol_policy() -> JsValue {
    convert::protocol::policy()
}

/// Core's constants the package's JavaScript needs, read once when the
/// module is ready: `{ maxItemBytes, manifestAttribute, chunkDataAttribute }`.
#[wasm_bindgen(js_name = formatConstants)]
pub fn format_constants() -> JsValue {
    let constants = Object::new();
    set(&constants, "maxItemBytes", &(MAX_ITEM_BYTES as f64).into());
    set(&constants, "manifestAttribute", &MANIFEST_ATTRIBUTE.into());
    set(
        &constants,
        "chunkDataAttribute",
        &CHUNK_DATA_ATTRIBUTE.into(),
    );
    constants.into()
}
