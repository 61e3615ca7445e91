//! The requests plans are made of, shaped like DynamoDB's API but free of any
//! SDK: a host maps each to its client's types one-to-one.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::capacity::write_units;
use crate::size::item_size;
use crate::value::{AttributeValue, Item};

/// Most requests in one BatchWriteItem.
pub const MAX_BATCH_WRITE_ITEMS: usize = 25;
/// Most bytes in one BatchWriteItem (16 MB).
pub const MAX_BATCH_WRITE_BYTES: usize = 16 << 20;
/// Most keys in one BatchGetItem.
pub const MAX_BATCH_GET_KEYS: usize = 100;
/// Most bytes one BatchGetItem returns (16 MB); larger responses come back
/// partly as UnprocessedKeys, so plans stay under it.
pub const MAX_BATCH_GET_BYTES: usize = 16 << 20;
/// Most actions in one TransactWriteItems.
pub const MAX_TRANSACT_ACTIONS: usize = 100;
/// Most bytes of items in one TransactWriteItems (4 MB).
pub const MAX_TRANSACT_BYTES: usize = 4 << 20;

/// A condition expression with its placeholders.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Condition {
    /// The `ConditionExpression`.
    pub expression: String,
    /// `ExpressionAttributeNames`: `#name` placeholder to attribute name.
    pub names: BTreeMap<String, String>,
    /// `ExpressionAttributeValues`: `:value` placeholder to value.
    pub values: BTreeMap<String, AttributeValue>,
}

/// A PutItem.
#[derive(Clone, Debug, PartialEq)]
pub struct Put {
    /// Table name.
    pub table: String,
    /// The whole item written: key attributes and all.
    pub item: Item,
    /// Written only if this holds.
    pub condition: Option<Condition>,
    /// Ask for the item it replaces (`ReturnValues: ALL_OLD`): a
    /// last-writer-wins commit learns from it which version to clean up.
    /// Never set on a transaction's Put, which cannot return values.
    pub return_old: bool,
}

/// A DeleteItem.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    /// Table name.
    pub table: String,
    /// The item's key attributes.
    pub key: Item,
    /// Deleted only if this holds.
    pub condition: Option<Condition>,
}

/// An UpdateItem: one expression of `SET` and `REMOVE` actions on
/// top-level attributes, with its condition. The placeholders of both
/// expressions share `names` and `values`.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// Table name.
    pub table: String,
    /// The item's key attributes.
    pub key: Item,
    /// The `UpdateExpression`.
    pub expression: String,
    /// The `ConditionExpression`, if any.
    pub condition: Option<String>,
    /// `ExpressionAttributeNames` of both expressions.
    pub names: BTreeMap<String, String>,
    /// `ExpressionAttributeValues` of both expressions.
    pub values: BTreeMap<String, AttributeValue>,
}

/// A GetItem.
#[derive(Clone, Debug, PartialEq)]
pub struct Get {
    /// Table name.
    pub table: String,
    /// The item's key attributes.
    pub key: Item,
    /// Strongly consistent.
    pub consistent: bool,
}

/// One request inside a BatchWriteItem.
#[derive(Clone, Debug, PartialEq)]
pub enum WriteRequest {
    /// A PutRequest of a whole item.
    Put(Item),
    /// A DeleteRequest by key.
    Delete(Item),
}

impl WriteRequest {
    /// The item or key's exact size.
    pub fn size(&self) -> usize {
        match self {
            Self::Put(item) | Self::Delete(item) => item_size(item),
        }
    }
}

/// One BatchWriteItem: at most 25 requests and 16 MB.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BatchWrite {
    /// `(table, request)` pairs, sent as `RequestItems`.
    pub requests: Vec<(String, WriteRequest)>,
    /// Sum of the requests' item and key sizes.
    pub bytes: usize,
}

impl BatchWrite {
    /// Write capacity units the puts in this batch consume (deletes are
    /// billed by the deleted item's size, unknown here, and not counted).
    pub fn write_units(&self) -> u64 {
        self.requests
            .iter()
            .map(|(_, r)| match r {
                WriteRequest::Put(item) => write_units(item_size(item), false),
                WriteRequest::Delete(_) => 0,
            })
            .sum()
    }
}

/// Packs requests into batches of at most 25 requests and 16 MB, in order.
pub fn pack_batch_writes(
    requests: impl IntoIterator<Item = (String, WriteRequest)>,
) -> Vec<BatchWrite> {
    pack_batch_writes_by(requests, MAX_BATCH_WRITE_ITEMS)
}

/// Packs requests into batches of at most `max_items` (clamped to 1..=25)
/// requests and 16 MB, in order. Smaller batches let a host keep several
/// requests in flight for one item (25 full chunks are one 10 MB request).
pub fn pack_batch_writes_by(
    requests: impl IntoIterator<Item = (String, WriteRequest)>,
    max_items: usize,
) -> Vec<BatchWrite> {
    let max_items = max_items.clamp(1, MAX_BATCH_WRITE_ITEMS);
    let mut batches: Vec<BatchWrite> = Vec::new();
    for (table, request) in requests {
        let size = request.size();
        let fits = batches.last().is_some_and(|b| {
            b.requests.len() < max_items && b.bytes + size <= MAX_BATCH_WRITE_BYTES
        });
        if !fits {
            batches.push(BatchWrite::default());
        }
        let batch = batches.last_mut().expect("a batch was just ensured");
        batch.bytes += size;
        batch.requests.push((table, request));
    }
    batches
}

/// One action of a TransactWriteItems.
#[derive(Clone, Debug, PartialEq)]
pub enum TransactAction {
    /// A conditional or plain put.
    Put(Put),
    /// A conditional or plain delete.
    Delete(Delete),
}

/// One TransactWriteItems: at most 100 actions and 4 MB, all or nothing.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Transaction {
    /// The actions, each on a different item.
    pub actions: Vec<TransactAction>,
    /// Sum of the actions' item and key sizes.
    pub bytes: usize,
}

/// One BatchGetItem: at most 100 keys and an expected response under 16 MB.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchGet {
    /// Table name.
    pub table: String,
    /// Keys to read.
    pub keys: Vec<Item>,
    /// Strongly consistent.
    pub consistent: bool,
    /// The exact size of the items these keys should return (0 when
    /// unknown, as for parents read by `gc`).
    pub expected_bytes: usize,
    /// The attributes to return (`ProjectionExpression`); all when empty.
    /// Whatever is projected, DynamoDB bills the whole item's size.
    pub attributes: Vec<String>,
}

/// One page of a caller's own Query, or of a Scan when it has no key
/// condition: what `query` reads items through. Expressions and their
/// placeholders are the caller's, sent as given.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Query {
    /// Table name.
    pub table: String,
    /// A secondary index to read instead of the table (`IndexName`).
    pub index: Option<String>,
    /// The `KeyConditionExpression`; `None` makes it a Scan.
    pub key_condition: Option<String>,
    /// The `FilterExpression`.
    pub filter: Option<String>,
    /// `ExpressionAttributeNames`.
    pub names: BTreeMap<String, String>,
    /// `ExpressionAttributeValues`.
    pub values: Item,
    /// Strongly consistent (not on a global secondary index).
    pub consistent: bool,
    /// Ascending sort key order (`ScanIndexForward`; a Query's only).
    pub forward: bool,
    /// The most items a page evaluates (`Limit`).
    pub limit: Option<u32>,
    /// Where the page starts: the previous page's `LastEvaluatedKey`.
    pub start: Option<Item>,
    /// One segment of a parallel Scan, `(Segment, TotalSegments)`; a
    /// Query (with a key condition) has none.
    pub segment: Option<(u32, u32)>,
}

/// One page of a Scan.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    /// Table name.
    pub table: String,
    /// The attributes to return (`ProjectionExpression`); all when empty.
    pub attributes: Vec<String>,
    /// Strongly consistent.
    pub consistent: bool,
    /// Where the page starts: the previous page's `LastEvaluatedKey`.
    pub start: Option<Item>,
    /// The most items the page evaluates (`Limit`); the server's 1 MB page
    /// when `None`.
    pub limit: Option<u32>,
    /// One segment of a parallel Scan, `(Segment, TotalSegments)`.
    pub segment: Option<(u32, u32)>,
    /// A secondary index of the table to scan instead (`IndexName`).
    pub index: Option<String>,
}
