//! WebAssembly bindings of `dynaslice-core`, published as the npm package
//! `dynaslice`. Glue only: each export reads its JavaScript arguments, calls
//! the core, and converts the result; every conversion is in [`convert`].

mod convert;
mod error;
mod splitter;

use dynaslice_core::{Expect, MAX_ITEM_BYTES, ValidateOptions, plan};
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

use convert::{TableOptions, set};
use error::Failure;

pub use splitter::Splitter;

type JsResult<T> = Result<T, JsValue>;

/// Called once by the package's entry module with its `NumberValue` class.
#[wasm_bindgen(js_name = __setNumberValueClass)]
pub fn set_number_value_class(class: js_sys::Function) {
    convert::set_number_value_class(class);
}

/// The exact size DynamoDB bills and limits for `item`.
#[wasm_bindgen(js_name = itemSize)]
pub fn item_size(item: JsValue, options: JsValue) -> JsResult<f64> {
    let item = convert::item_from_js(&item, &convert::input_options(&options)?)?;
    Ok(dynaslice_core::item_size(&item) as f64)
}

/// Every rule `item` breaks, as `{ code, path, message }`; empty when valid.
#[wasm_bindgen(js_name = validateItem)]
pub fn validate_item(item: JsValue, options: JsValue) -> JsResult<Array> {
    let item = convert::item_from_js(&item, &convert::input_options(&options)?)?;
    let key_option = convert::get(&options, "key");
    let key = if key_option.is_undefined() {
        None
    } else {
        Some(convert::key_schema(&key_option)?)
    };
    let validate = ValidateOptions {
        key: key.as_ref(),
        max_item_bytes: convert::size(&options, "maxItemBytes", MAX_ITEM_BYTES)?,
    };
    Ok(convert::violations(&dynaslice_core::validate_item(
        &item, &validate,
    )))
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
    Ok(dynaslice_core::codec::decompress(&bytes, limit).map_err(Failure::from)?)
}

/// Splits an item and plans its write: the parent, the chunks, the requests
/// to send, and the write capacity they cost.
#[wasm_bindgen]
pub fn split(item: JsValue, options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let item = convert::item_from_js(&item, &convert::input_options(&options)?)?;
    let split_options = convert::split_options(&table, &options)?;
    let split = dynaslice_core::split_item(&item, &split_options).map_err(Failure::from)?;
    let expect = expectation(&options, &table)?;
    let target = table.target();
    let plan = plan::plan_write(&split, &target, &expect, convert::write_mode(&options)?)
        .map_err(Failure::from)?;
    Ok(convert::split_result(&split, &plan))
}

/// What the write replaces: `expect` is `"absent"` (default), `"any"`, or
/// the stored parent as read (DynamoDB JSON).
pub(crate) fn expectation(options: &JsValue, table: &TableOptions) -> Result<Expect, Failure> {
    let expect = convert::get(options, "expect");
    match expect.as_string().as_deref() {
        _ if expect.is_undefined() || expect.is_null() => Ok(Expect::Absent),
        Some("absent") => Ok(Expect::Absent),
        Some("any") => Ok(Expect::Any),
        Some(_) => Err(Failure::new(
            "OPTIONS_INVALID",
            "option expect must be \"absent\", \"any\" or the stored parent",
        )),
        None => {
            let stored = convert::item_from_js(&expect, &convert::DYNAMODB_INPUT)?;
            Ok(Expect::from_stored_at(Some(&stored), &table.target()).map_err(Failure::from)?)
        }
    }
}

/// Rebuilds the item from its parent and chunks (DynamoDB JSON, any order).
#[wasm_bindgen]
pub fn reassemble(parent: JsValue, chunks: JsValue, options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let parent = convert::item_from_js(&parent, &convert::DYNAMODB_INPUT)?;
    if !convert::js::is_array(&chunks, "chunks")? {
        return Err(Failure::new("INPUT_INVALID", "chunks must be an array of chunk items").into());
    }
    let chunks = convert::js::elements(&chunks, "chunks")?
        .iter()
        .map(|c| convert::item_from_js(c, &convert::DYNAMODB_INPUT))
        .collect::<Result<Vec<_>, _>>()?;
    let item = dynaslice_core::reassemble(&parent, &chunks, &table.reassemble(&options)?)
        .map_err(Failure::from)?;
    Ok(convert::item_to_js(
        &item,
        &convert::output_options(&options)?,
    )?)
}

/// The GetItem request for the parent with `key` (consistent).
#[wasm_bindgen(js_name = parentRequest)]
pub fn parent_request(key: JsValue, options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let key = convert::item_from_js(&key, &convert::input_options(&options)?)?;
    let key = table.key.key_of(&key);
    let checked = ValidateOptions {
        key: Some(&table.key),
        max_item_bytes: MAX_ITEM_BYTES,
    };
    if let Some(v) = dynaslice_core::validate_item(&key, &checked).first() {
        return Err(Failure::new(v.code(), v.to_string()).into());
    }
    Ok(convert::get_item(&plan::parent_get(&table.target(), &key)))
}

/// The BatchGetItem requests for a parent's chunks, and their read capacity.
#[wasm_bindgen(js_name = readRequests)]
pub fn read_requests(parent: JsValue, options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let parent = convert::item_from_js(&parent, &convert::DYNAMODB_INPUT)?;
    let consistent = convert::flag(&options, "consistentRead", true)?;
    let read = plan::plan_read(&parent, &table.target(), consistent).map_err(Failure::from)?;
    let result = Object::new();
    set(
        &result,
        "batchGetItems",
        &convert::batch_gets(&read.batches),
    );
    set(&result, "readUnits", &read.read_units().into());
    Ok(result.into())
}

/// The requests deleting a stored item: the parent first, then its chunks.
#[wasm_bindgen(js_name = deleteRequests)]
pub fn delete_requests(parent: JsValue, options: JsValue) -> JsResult<JsValue> {
    let table = TableOptions::from_js(&options)?;
    let parent = convert::item_from_js(&parent, &convert::DYNAMODB_INPUT)?;
    let delete = plan::plan_delete(&parent, &table.target()).map_err(Failure::from)?;
    let result = Object::new();
    set(&result, "deleteItem", &convert::delete(&delete.parent));
    set(
        &result,
        "batchWriteItems",
        &convert::batch_writes(&delete.chunks),
    );
    Ok(result.into())
}
