//! Plans as the exact input objects `@aws-sdk/client-dynamodb` commands
//! take (`PutItemInput`, `BatchWriteItemInput`, `TransactWriteItemsInput`,
//! `BatchGetItemInput`, `GetItemInput`, `DeleteItemInput`).

use dynaslice_core::plan::{
    BatchGet, BatchWrite, Condition, Delete, Get, Put, TransactAction, Update, WriteRequest,
};
use dynaslice_core::plan::{WritePlan, WriteSteps};
use dynaslice_core::{Item, SplitItem};
use std::collections::BTreeMap;

use js_sys::{Array, Object};
use wasm_bindgen::JsValue;

use super::output::dynamodb_item;
use super::set;

fn condition(object: &Object, condition: &Option<Condition>) {
    if let Some(c) = condition {
        set(object, "ConditionExpression", &c.expression.as_str().into());
        placeholders(object, &c.names, &c.values);
    }
}

/// An expression's `ExpressionAttributeNames` and `ExpressionAttributeValues`.
fn placeholders(object: &Object, names: &BTreeMap<String, String>, values: &Item) {
    let names_object = Object::new();
    names
        .iter()
        .for_each(|(k, v)| set(&names_object, k, &v.as_str().into()));
    set(object, "ExpressionAttributeNames", &names_object);
    if !values.is_empty() {
        set(object, "ExpressionAttributeValues", &dynamodb_item(values));
    }
}

/// `PutItemInput` (also the `Put` of a transaction).
pub fn put(p: &Put) -> JsValue {
    let object = Object::new();
    set(&object, "TableName", &p.table.as_str().into());
    set(&object, "Item", &dynamodb_item(&p.item));
    condition(&object, &p.condition);
    if p.return_old {
        set(&object, "ReturnValues", &"ALL_OLD".into());
    }
    object.into()
}

/// `DeleteItemInput` (also the `Delete` of a transaction).
pub fn delete(d: &Delete) -> JsValue {
    let object = Object::new();
    set(&object, "TableName", &d.table.as_str().into());
    set(&object, "Key", &dynamodb_item(&d.key));
    condition(&object, &d.condition);
    object.into()
}

/// `UpdateItemInput`.
pub fn update(u: &Update) -> JsValue {
    let object = Object::new();
    set(&object, "TableName", &u.table.as_str().into());
    set(&object, "Key", &dynamodb_item(&u.key));
    set(&object, "UpdateExpression", &u.expression.as_str().into());
    if let Some(condition) = &u.condition {
        set(&object, "ConditionExpression", &condition.as_str().into());
    }
    placeholders(&object, &u.names, &u.values);
    object.into()
}

/// `GetItemInput`.
pub fn get_item(g: &Get) -> JsValue {
    let object = Object::new();
    set(&object, "TableName", &g.table.as_str().into());
    set(&object, "Key", &dynamodb_item(&g.key));
    set(&object, "ConsistentRead", &g.consistent.into());
    object.into()
}

/// `BatchWriteItemInput`s.
pub fn batch_writes(batches: &[BatchWrite]) -> Array {
    batches
        .iter()
        .map(|batch| {
            let by_table = Object::new();
            for (table, request) in &batch.requests {
                let list = super::get(&by_table, table);
                let list: Array = if list.is_undefined() {
                    let fresh = Array::new();
                    set(&by_table, table, &fresh);
                    fresh
                } else {
                    list.into()
                };
                let entry = Object::new();
                match request {
                    WriteRequest::Put(i) => {
                        set(&entry, "PutRequest", &single("Item", dynamodb_item(i)))
                    }
                    WriteRequest::Delete(k) => {
                        set(&entry, "DeleteRequest", &single("Key", dynamodb_item(k)))
                    }
                }
                list.push(&entry);
            }
            JsValue::from(single("RequestItems", by_table.into()))
        })
        .collect()
}

/// `TransactWriteItemsInput`.
pub fn transaction(actions: &[TransactAction]) -> JsValue {
    let items: Array = actions
        .iter()
        .map(|action| match action {
            TransactAction::Put(p) => JsValue::from(single("Put", put(p))),
            TransactAction::Delete(d) => JsValue::from(single("Delete", delete(d))),
        })
        .collect();
    single("TransactItems", items.into()).into()
}

/// `BatchGetItemInput`s.
pub fn batch_gets(batches: &[BatchGet]) -> Array {
    batches
        .iter()
        .map(|batch| {
            let keys: Array = batch.keys.iter().map(dynamodb_item).collect();
            let request = Object::new();
            set(&request, "Keys", &keys);
            set(&request, "ConsistentRead", &batch.consistent.into());
            JsValue::from(single(
                "RequestItems",
                single(&batch.table, request.into()).into(),
            ))
        })
        .collect()
}

/// `{ [key]: value }`.
fn single(key: &str, value: JsValue) -> Object {
    let object = Object::new();
    set(&object, key, &value);
    object
}

/// What `split` returns: the parent and chunks (DynamoDB JSON), the
/// manifest's figures, the requests in the order to send them, and the
/// write capacity they cost, in all and request by request.
pub fn split_result(split: &SplitItem, plan: &WritePlan) -> JsValue {
    let result = Object::new();
    set(&result, "parent", &dynamodb_item(&split.parent));
    set(
        &result,
        "chunks",
        &split.chunks.iter().map(dynamodb_item).collect::<Array>(),
    );
    if let Some(m) = &split.manifest {
        set(&result, "manifest", &super::protocol::manifest(m));
    }
    let requests = Object::new();
    match &plan.steps {
        WriteSteps::Single(p) => set(&requests, "putItem", &put(p)),
        WriteSteps::Atomic(t) => set(&requests, "transactWriteItems", &transaction(&t.actions)),
        WriteSteps::Batch {
            chunks,
            overwrite,
            commit,
            abort,
        } => {
            set(&requests, "batchWriteItems", &batch_writes(chunks));
            if let Some(overwrite) = overwrite {
                set(&requests, "overwrite", &put(overwrite));
            }
            set(&requests, "commit", &put(commit));
            set(&requests, "abort", &batch_writes(abort));
        }
    }
    set(&requests, "mode", &plan.steps.kind().name().into());
    set(&requests, "cleanup", &batch_writes(&plan.cleanup));
    set(&result, "requests", &requests);
    set(&result, "writeUnits", &(plan.write_units() as f64).into());
    set(&result, "capacity", &super::write_capacity(plan));
    result.into()
}

/// Both modes' prices of a split, whichever mode its plan took: `{ batch,
/// atomic }`, atomic `null` when the item does not fit one transaction;
/// with the anchors index's entries when `anchors_indexed`.
pub fn write_costs(split: &SplitItem, anchors_indexed: bool) -> JsValue {
    let both = Object::new();
    for (mode, units) in dynaslice_core::plan::write_costs_to(split, anchors_indexed).by_mode() {
        let units = units.map_or(JsValue::NULL, |u| (u as f64).into());
        set(&both, mode.name(), &units);
    }
    both.into()
}
