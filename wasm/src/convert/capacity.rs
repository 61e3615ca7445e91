//! Capacity as JavaScript objects: the write capacity of a plan, request by
//! request in the order they are sent, and the read capacity of a stored
//! item. Every figure is core's (`dynaslice_core::capacity`); this module
//! only walks the plan and shapes the result.

use dynaslice_core::manifest::CHUNK_DATA_ATTRIBUTE;
use dynaslice_core::plan::{BatchWrite, TransactAction, WriteRequest};
use dynaslice_core::plan::{WritePlan, WriteSteps, index_entry_units};
use dynaslice_core::{Item, item_size, write_units};
use js_sys::{Array, Object};
use wasm_bindgen::JsValue;

use super::set;

/// `RequestCapacity[]`: one entry per request of `plan`, in sending order,
/// each `{ operation, transactional, items, writeUnits }`, every item
/// `{ chunk, bytes, writeUnits }`; an anchor's units include its entry in
/// the anchors index when the plan counts those (`WritePlan::index_units`),
/// so the requests add up to `plan.write_units()`.
pub fn write_capacity(plan: &WritePlan) -> Array {
    let indexed = plan.index_units > 0;
    let request =
        |operation, transactional, items| request(operation, transactional, items, indexed);
    let requests = Array::new();
    match &plan.steps {
        WriteSteps::Single(put) => {
            requests.push(&request("PutItem", false, vec![&put.item]));
        }
        WriteSteps::Atomic(transaction) => {
            // A transaction's delete is billed by its key's size, as
            // `WritePlan::write_units` counts it.
            let items = transaction.actions.iter().map(|action| match action {
                TransactAction::Put(put) => &put.item,
                TransactAction::Delete(delete) => &delete.key,
            });
            requests.push(&request("TransactWriteItems", true, items.collect()));
        }
        WriteSteps::Batch { chunks, commit, .. } => {
            for batch in chunks {
                requests.push(&request("BatchWriteItem", false, puts(batch).collect()));
            }
            requests.push(&request("PutItem", false, vec![&commit.item]));
        }
    }
    requests
}

/// The items a batch puts: a batch delete's price depends on the deleted
/// item, which a plan does not know (`BatchWrite::write_units` counts 0),
/// and a write plan's chunk batches hold only puts.
fn puts(batch: &BatchWrite) -> impl Iterator<Item = &Item> {
    batch
        .requests
        .iter()
        .filter_map(|(_, request)| match request {
            WriteRequest::Put(item) => Some(item),
            WriteRequest::Delete(_) => None,
        })
}

fn request(operation: &str, transactional: bool, items: Vec<&Item>, indexed: bool) -> JsValue {
    let list = Array::new();
    let mut total = 0;
    for item in items {
        let bytes = item_size(item);
        let units =
            write_units(bytes, transactional) + index_entry_units(item, indexed, transactional);
        total += units;
        let entry = Object::new();
        // A chunk is the one item of a write that holds chunk data; the
        // parent never may (the name is reserved).
        set(
            &entry,
            "chunk",
            &item.contains_key(CHUNK_DATA_ATTRIBUTE).into(),
        );
        set(&entry, "bytes", &(bytes as f64).into());
        set(&entry, "writeUnits", &(units as f64).into());
        list.push(&entry);
    }
    let object = Object::new();
    set(&object, "operation", &operation.into());
    set(&object, "transactional", &transactional.into());
    set(&object, "items", &list);
    set(&object, "writeUnits", &(total as f64).into());
    object.into()
}

/// `ReadCapacity`: `{ parentReadUnits, chunkReadUnits, readUnits }`.
pub fn read_capacity(parent_units: f64, chunk_units: f64) -> JsValue {
    let object = Object::new();
    set(&object, "parentReadUnits", &parent_units.into());
    set(&object, "chunkReadUnits", &chunk_units.into());
    set(&object, "readUnits", &(parent_units + chunk_units).into());
    object.into()
}
