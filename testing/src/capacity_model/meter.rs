//! What a DynamoDB request costs, by the developer guide's rules, for the
//! capacity model (`capacity_model.rs`).
//!
//! The rules, from "DynamoDB read and write operations"
//! (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html),
//! with the arithmetic in `dynaslice_core::capacity` and exact item sizes
//! from `dynaslice_core::item_size`:
//!
//! - PutItem, UpdateItem, DeleteItem: one write unit per 1 KB, rounded up, of
//!   the larger of the item before and after the write (a delete: the
//!   deleted item); a write whose condition fails still consumes them.
//! - BatchWriteItem: each put or delete as if alone. TransactWriteItems: each
//!   action twice (a ConditionCheck is priced here as a write of the item it
//!   checks, an assumption: the page does not price it separately).
//! - GetItem: one read unit per 4 KB, rounded up (at least one, also for a
//!   missing item), half for an eventually consistent read. BatchGetItem:
//!   each item rounded up by itself. TransactGetItems: each item twice.
//! - Query and Scan: the sizes of the items a page reads, summed, then
//!   rounded up to 4 KB (at least one unit).
//! - A projection (`ProjectionExpression`) saves no units: every read of a
//!   table is billed by the whole item, so the model bills the size it last
//!   saw written to that key when it knows one, else what came back (a
//!   Query or Scan item without its whole key cannot be told: what came
//!   back). A Query
//!   or Scan of a secondary index is billed by the index entries it returns
//!   (the developer guide's "Global secondary indexes", read capacity
//!   units: "the sizes of the index entries, rather than the size of the
//!   item in the base table").
//!
//! The size of an item before a write is what the model last saw written to
//! that key through it (a map of key to size it keeps); an item it has not
//! seen counts as absent. An UpdateItem's size after the write is read back
//! from the upstream by the model after it succeeds.

#![allow(dead_code)] // each user takes its own part

use std::collections::HashMap;

use dynaslice_core::ReadConsistency;
use dynaslice_core::{read_half_units, write_units};
use serde_json::{Map, Value};

/// A table's primary key attribute names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// The partition (HASH) key attribute.
    pub hash: String,
    /// The sort (RANGE) key attribute, if any.
    pub range: Option<String>,
}

impl Schema {
    /// Reads `Table.KeySchema` out of a DescribeTable answer.
    pub fn from_describe(answer: &Value) -> Option<Schema> {
        let elements = answer.get("Table")?.get("KeySchema")?.as_array()?;
        let named = |kind: &str| {
            elements
                .iter()
                .find(|e| e.get("KeyType").and_then(Value::as_str) == Some(kind))
                .and_then(|e| e.get("AttributeName")?.as_str())
                .map(str::to_string)
        };
        Some(Schema {
            hash: named("HASH")?,
            range: named("RANGE"),
        })
    }
}

/// Where an item lives: its partition key value and its whole key, both as
/// compact DynamoDB JSON (which is canonical for one attribute value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ItemKey {
    /// The partition key attribute's value.
    pub partition: String,
    /// The partition key value and the sort key value, if any.
    pub key: String,
}

impl ItemKey {
    /// The key of `item` (an item or a key, as a DynamoDB JSON object).
    pub fn of(item: &Value, schema: &Schema) -> Option<ItemKey> {
        let partition = item.get(&schema.hash)?.to_string();
        let key = match &schema.range {
            Some(range) => format!("{partition}\u{1}{}", item.get(range)?),
            None => partition.clone(),
        };
        Some(ItemKey { partition, key })
    }
}

/// The exact size of an item in DynamoDB JSON; `None` if it is not one.
pub fn size_of(item: &Value) -> Option<usize> {
    crate::dynamodb_json::try_item(item).map(|item| dynaslice_core::item_size(&item))
}

/// The units one item's part of a request costs, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charge {
    /// The table the units are charged to.
    pub table: String,
    /// The partition key value (DynamoDB JSON), when the request names one;
    /// a Scan and a Query on an index charge the table only.
    pub partition: Option<String>,
    /// Write units.
    pub write_units: u64,
    /// Read units, in halves (an eventually consistent 4 KB read is 1).
    pub read_half_units: u64,
}

/// A write's effect on the model's map of item sizes, once it succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The item at the key now has this size.
    Stored(String, ItemKey, usize),
    /// The item at the key is gone.
    Deleted(String, ItemKey),
    /// The item at the key changed in a way only a read can tell (UpdateItem);
    /// the value is the request's `Key`.
    Updated(String, ItemKey, Value),
    /// Nothing changes (a transaction's ConditionCheck).
    Unchanged,
}

/// The request kinds the model meters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// PutItem, UpdateItem, DeleteItem.
    Write,
    /// BatchWriteItem: [`Metered::charges`] and [`Metered::effects`] follow
    /// `relay::batch_entries`.
    BatchWrite,
    /// TransactWriteItems.
    TransactWrite,
    /// GetItem.
    Get,
    /// BatchGetItem: [`Metered::charges`] follows `relay::batch_entries`.
    BatchGet,
    /// TransactGetItems.
    TransactGet,
    /// Query.
    Query,
    /// Scan.
    Scan,
}

impl Op {
    /// The metered operation `X-Amz-Target` names, or `None` (the control
    /// plane: CreateTable, DescribeTable, ...).
    pub fn of(operation: &str) -> Option<Op> {
        Some(match operation {
            "PutItem" | "UpdateItem" | "DeleteItem" => Op::Write,
            "BatchWriteItem" => Op::BatchWrite,
            "TransactWriteItems" => Op::TransactWrite,
            "GetItem" => Op::Get,
            "BatchGetItem" => Op::BatchGet,
            "TransactGetItems" => Op::TransactGet,
            "Query" => Op::Query,
            "Scan" => Op::Scan,
            _ => return None,
        })
    }

    /// Whether the request reads (its cost is known only from the answer).
    pub fn reads(self) -> bool {
        matches!(
            self,
            Op::Get | Op::BatchGet | Op::TransactGet | Op::Query | Op::Scan
        )
    }
}

/// A request's cost as known before it is forwarded: exact for writes
/// (UpdateItem's after-size aside), an estimate from the size map for reads.
#[derive(Clone, Debug)]
pub struct Metered {
    /// What kind of request.
    pub op: Op,
    /// One charge per item (for batches, in `relay::batch_entries` order).
    pub charges: Vec<Charge>,
    /// What each write does to the size map if it succeeds, one per charge
    /// (empty for reads).
    pub effects: Vec<Effect>,
}

/// What the model knows: tables' key schemas and the sizes of the items it
/// saw written, by table and key.
pub trait Known {
    /// The key schema of `table`, if the table exists.
    fn schema(&self, table: &str) -> Option<&Schema>;
    /// The size of the item at `key` in `table`, if the model saw it written.
    fn size(&self, table: &str, key: &ItemKey) -> Option<usize>;
    /// The sizes of the items the model saw written to `table`, all of them or
    /// those of one partition key value.
    fn stored_bytes(&self, table: &str, partition: Option<&str>) -> usize;
}

/// The sizes the model saw written, by table and key.
#[derive(Default)]
pub struct SizeMap {
    sizes: HashMap<String, HashMap<ItemKey, usize>>,
}

impl SizeMap {
    /// The size at `key`, if seen.
    pub fn get(&self, table: &str, key: &ItemKey) -> Option<usize> {
        self.sizes.get(table)?.get(key).copied()
    }

    /// Records a write's effect (an [`Effect::Updated`] must be resolved to
    /// one of the others first).
    pub fn apply(&mut self, effect: &Effect) {
        match effect {
            Effect::Stored(table, key, size) => {
                self.sizes
                    .entry(table.clone())
                    .or_default()
                    .insert(key.clone(), *size);
            }
            Effect::Deleted(table, key) => {
                if let Some(sizes) = self.sizes.get_mut(table) {
                    sizes.remove(key);
                }
            }
            Effect::Updated(..) | Effect::Unchanged => {}
        }
    }

    /// Forgets a table (deleted or created anew).
    pub fn forget(&mut self, table: &str) {
        self.sizes.remove(table);
    }

    /// The bytes stored in `table`, or in one partition of it.
    pub fn stored_bytes(&self, table: &str, partition: Option<&str>) -> usize {
        self.sizes.get(table).map_or(0, |sizes| {
            sizes
                .iter()
                .filter(|(k, _)| partition.is_none_or(|p| k.partition == p))
                .map(|(_, size)| size)
                .sum()
        })
    }
}

/// A DynamoDB request page returns at most 1 MB.
const PAGE_BYTES: usize = 1024 * 1024;

fn text<'v>(value: &'v Value, field: &str) -> Option<&'v str> {
    value.get(field)?.as_str()
}

fn consistency(request: &Value) -> ReadConsistency {
    if request.get("ConsistentRead").and_then(Value::as_bool) == Some(true) {
        ReadConsistency::Strong
    } else {
        ReadConsistency::Eventual
    }
}

/// The charge of writing an item of size `new` (a put), or of changing or
/// removing the item (`new == None`) at the key `item_or_key` holds; doubled
/// in a transaction.
fn write_charge(
    known: &dyn Known,
    table: &str,
    item_or_key: &Value,
    new: Option<usize>,
    transactional: bool,
) -> Option<(Charge, ItemKey)> {
    let schema = known.schema(table)?;
    let key = ItemKey::of(item_or_key, schema)?;
    let before = known.size(table, &key).unwrap_or(0);
    let size = new.unwrap_or(0).max(before);
    Some((
        Charge {
            table: table.to_string(),
            partition: Some(key.partition.clone()),
            write_units: write_units(size, transactional),
            read_half_units: 0,
        },
        key,
    ))
}

/// A read of one item by key: estimated from its known size (a missing or
/// unknown item costs the minimum).
fn read_charge(
    known: &dyn Known,
    table: &str,
    key_json: &Value,
    consistency: ReadConsistency,
) -> Option<(Charge, ItemKey)> {
    let schema = known.schema(table)?;
    let key = ItemKey::of(key_json, schema)?;
    let size = known.size(table, &key).unwrap_or(0);
    Some((
        Charge {
            table: table.to_string(),
            partition: Some(key.partition.clone()),
            write_units: 0,
            read_half_units: read_half_units(size, consistency),
        },
        key,
    ))
}

/// Meters a request before it is forwarded. `None` when the body is not a
/// request the model understands (it is then forwarded unmetered, and the
/// upstream answers whatever it answers).
pub fn meter(op: Op, operation: &str, body: &Value, known: &dyn Known) -> Option<Metered> {
    let mut charges = Vec::new();
    let mut effects = Vec::new();
    match op {
        Op::Write => {
            let table = text(body, "TableName")?;
            match operation {
                "PutItem" => {
                    let item = body.get("Item")?;
                    let size = size_of(item)?;
                    let (charge, key) = write_charge(known, table, item, Some(size), false)?;
                    charges.push(charge);
                    effects.push(Effect::Stored(table.to_string(), key, size));
                }
                "DeleteItem" => {
                    let (charge, key) = write_charge(known, table, body.get("Key")?, None, false)?;
                    charges.push(charge);
                    effects.push(Effect::Deleted(table.to_string(), key));
                }
                _ => {
                    let key_json = body.get("Key")?;
                    let (charge, key) = write_charge(known, table, key_json, None, false)?;
                    charges.push(charge);
                    effects.push(Effect::Updated(table.to_string(), key, key_json.clone()));
                }
            }
        }
        Op::BatchWrite => {
            for (table, requests) in body.get("RequestItems")?.as_object()? {
                for request in requests.as_array()? {
                    if let Some(put) = request.get("PutRequest") {
                        let item = put.get("Item")?;
                        let size = size_of(item)?;
                        let (charge, key) = write_charge(known, table, item, Some(size), false)?;
                        charges.push(charge);
                        effects.push(Effect::Stored(table.clone(), key, size));
                    } else {
                        let key_json = request.get("DeleteRequest")?.get("Key")?;
                        let (charge, key) = write_charge(known, table, key_json, None, false)?;
                        charges.push(charge);
                        effects.push(Effect::Deleted(table.clone(), key));
                    }
                }
            }
        }
        Op::TransactWrite => {
            for action in body.get("TransactItems")?.as_array()? {
                let (kind, inner) = action.as_object()?.iter().next()?;
                let table = text(inner, "TableName")?;
                match kind.as_str() {
                    "Put" => {
                        let item = inner.get("Item")?;
                        let size = size_of(item)?;
                        let (charge, key) = write_charge(known, table, item, Some(size), true)?;
                        charges.push(charge);
                        effects.push(Effect::Stored(table.to_string(), key, size));
                    }
                    "Delete" => {
                        let key_json = inner.get("Key")?;
                        let (charge, key) = write_charge(known, table, key_json, None, true)?;
                        charges.push(charge);
                        effects.push(Effect::Deleted(table.to_string(), key));
                    }
                    "Update" => {
                        let key_json = inner.get("Key")?;
                        let (charge, key) = write_charge(known, table, key_json, None, true)?;
                        charges.push(charge);
                        effects.push(Effect::Updated(table.to_string(), key, key_json.clone()));
                    }
                    _ => {
                        let (charge, _) =
                            write_charge(known, table, inner.get("Key")?, None, true)?;
                        charges.push(charge);
                        effects.push(Effect::Unchanged);
                    }
                }
            }
        }
        Op::Get => {
            let table = text(body, "TableName")?;
            let (charge, _) = read_charge(known, table, body.get("Key")?, consistency(body))?;
            charges.push(charge);
        }
        Op::BatchGet => {
            for (table, request) in body.get("RequestItems")?.as_object()? {
                let consistency = consistency(request);
                for key in request.get("Keys")?.as_array()? {
                    charges.push(read_charge(known, table, key, consistency)?.0);
                }
            }
        }
        Op::TransactGet => {
            for action in body.get("TransactItems")?.as_array()? {
                let get = action.get("Get")?;
                let table = text(get, "TableName")?;
                let key = get.get("Key")?;
                charges.push(read_charge(known, table, key, ReadConsistency::Transactional)?.0);
            }
        }
        Op::Query | Op::Scan => {
            let table = text(body, "TableName")?;
            let partition = match op {
                Op::Query if body.get("IndexName").is_none() => {
                    query_partition(body, known.schema(table)?)
                }
                _ => None,
            };
            // A page returns at most 1 MB: estimate what is stored, up to that.
            let bytes = known
                .stored_bytes(table, partition.as_deref())
                .min(PAGE_BYTES);
            charges.push(Charge {
                table: table.to_string(),
                partition,
                write_units: 0,
                read_half_units: read_half_units(bytes, consistency(body)),
            });
        }
    }
    Some(Metered {
        op,
        charges,
        effects,
    })
}

/// The partition key value a Query names: `KeyConditionExpression` with
/// `<partition key or #alias> = :placeholder`, or the legacy `KeyConditions`.
pub fn query_partition(body: &Value, schema: &Schema) -> Option<String> {
    if let Some(conditions) = body.get("KeyConditions") {
        let value = conditions
            .get(&schema.hash)?
            .get("AttributeValueList")?
            .get(0)?;
        return Some(value.to_string());
    }
    let expression = text(body, "KeyConditionExpression")?;
    let mut names = vec![schema.hash.clone()];
    if let Some(aliases) = body
        .get("ExpressionAttributeNames")
        .and_then(Value::as_object)
    {
        names.extend(
            aliases
                .iter()
                .filter(|(_, name)| name.as_str() == Some(schema.hash.as_str()))
                .map(|(alias, _)| alias.clone()),
        );
    }
    let values = body.get("ExpressionAttributeValues")?;
    for name in &names {
        let mut from = 0;
        while let Some(at) = expression[from..].find(name.as_str()) {
            let start = from + at;
            let end = start + name.len();
            from = end;
            let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '#' || c == ':';
            let before_ok = expression[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !word(c));
            let rest = expression[end..].trim_start();
            let (true, Some(rest)) = (before_ok, rest.strip_prefix('=')) else {
                continue;
            };
            let rest = rest.trim_start();
            if !rest.starts_with(':') {
                continue;
            }
            let placeholder: String = rest
                .chars()
                .take_while(|c| *c == ':' || c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            return values.get(&placeholder).map(Value::to_string);
        }
    }
    None
}

/// The charges a read really cost, from its answer (a 200's JSON body).
/// `forwarded` is the request body as forwarded (a partial batch's part).
pub fn read_charges(
    op: Op,
    forwarded: &Value,
    answer: &Value,
    estimate: &Metered,
    known: &dyn Known,
) -> Vec<Charge> {
    let mut charges = Vec::new();
    // A table's item is billed whole, whatever came back of it.
    let whole = |table: &str, key: Option<&ItemKey>, item: &Value| {
        let returned = size_of(item)?;
        let stored = key.and_then(|key| known.size(table, key));
        Some(stored.map_or(returned, |stored| stored.max(returned)))
    };
    match op {
        Op::Get => {
            // A missing item costs the minimum, as the estimate said.
            let table = text(forwarded, "TableName").unwrap_or_default();
            // The key asked for names the item, whatever the projection kept.
            let asked = forwarded.get("Key").zip(known.schema(table));
            let key = asked.and_then(|(key, schema)| ItemKey::of(key, schema));
            let found = answer.get("Item").and_then(|item| {
                Some(Charge {
                    table: table.to_string(),
                    partition: Some(key.clone()?.partition),
                    write_units: 0,
                    read_half_units: read_half_units(
                        whole(table, key.as_ref(), item)?,
                        consistency(forwarded),
                    ),
                })
            });
            let missing = || {
                Some(Charge {
                    read_half_units: read_half_units(0, consistency(forwarded)),
                    ..estimate.charges.first()?.clone()
                })
            };
            charges.extend(found.or_else(missing));
        }
        Op::BatchGet => {
            let empty = Map::new();
            let requests = forwarded
                .get("RequestItems")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            for (table, request) in requests {
                let consistency = consistency(request);
                let Some(schema) = known.schema(table) else {
                    continue;
                };
                let returned: HashMap<ItemKey, &Value> = answer
                    .get("Responses")
                    .and_then(|r| r.get(table))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|item| Some((ItemKey::of(item, schema)?, item)))
                    .collect();
                let unprocessed: Vec<ItemKey> = answer
                    .get("UnprocessedKeys")
                    .and_then(|u| u.get(table))
                    .and_then(|t| t.get("Keys"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|key| ItemKey::of(key, schema))
                    .collect();
                let keys = request.get("Keys").and_then(Value::as_array);
                for key_json in keys.into_iter().flatten() {
                    let Some(key) = ItemKey::of(key_json, schema) else {
                        continue;
                    };
                    if unprocessed.contains(&key) {
                        continue;
                    }
                    let size = returned
                        .get(&key)
                        .and_then(|item| whole(table, Some(&key), item))
                        .unwrap_or(0);
                    charges.push(Charge {
                        table: table.clone(),
                        partition: Some(key.partition),
                        write_units: 0,
                        read_half_units: read_half_units(size, consistency),
                    });
                }
            }
        }
        Op::TransactGet => {
            let actions = forwarded.get("TransactItems").and_then(Value::as_array);
            let responses = answer.get("Responses").and_then(Value::as_array);
            for (i, action) in actions.into_iter().flatten().enumerate() {
                let Some(get) = action.get("Get") else {
                    continue;
                };
                let table = text(get, "TableName").unwrap_or_default();
                let item = responses.and_then(|r| r.get(i)).and_then(|r| r.get("Item"));
                let size = item.and_then(size_of).unwrap_or(0);
                let partition = known
                    .schema(table)
                    .and_then(|schema| ItemKey::of(get.get("Key")?, schema))
                    .map(|key| key.partition);
                charges.push(Charge {
                    table: table.to_string(),
                    partition,
                    write_units: 0,
                    read_half_units: read_half_units(size, ReadConsistency::Transactional),
                });
            }
        }
        Op::Query | Op::Scan => {
            let table = text(forwarded, "TableName").unwrap_or_default();
            let items = answer.get("Items").and_then(Value::as_array);
            let index = forwarded.get("IndexName").is_some();
            let schema = known.schema(table);
            let bytes: usize = items
                .into_iter()
                .flatten()
                .filter_map(|item| match (index, schema) {
                    (false, Some(schema)) => whole(table, ItemKey::of(item, schema).as_ref(), item),
                    _ => size_of(item),
                })
                .sum();
            let partition = estimate.charges.first().and_then(|c| c.partition.clone());
            charges.push(Charge {
                table: table.to_string(),
                partition,
                write_units: 0,
                read_half_units: read_half_units(bytes, consistency(forwarded)),
            });
        }
        Op::Write | Op::BatchWrite | Op::TransactWrite => {}
    }
    charges
}
