//! Looking at stored items without reading their payloads: `ls` and `inspect`.

use aws_sdk_dynamodb::Client;
use dynaslice_core::layout::Layout;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::plan::{Scan, parent_get, plan_read};
use dynaslice_core::protocol::RetryPolicy;
use dynaslice_core::write_units;
use dynaslice_core::{AttributeValue, Item, item_size};

use crate::error::HostError;
use crate::executor::{get_item, scan_page};
use crate::get::check_key;
use crate::json::{item_to_json, manifest_to_json};
use crate::table::TableConfig;
use serde_json::json;

/// An item as `ls` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredItem {
    /// Its key attributes.
    pub key: Item,
    /// The parent's exact size.
    pub parent_bytes: usize,
    /// Its manifest, when split.
    pub manifest: Option<Manifest>,
}

impl StoredItem {
    /// The row as JSON, as the CLI (`ls --json`) and the server list it.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "key": item_to_json(&self.key),
            "parentBytes": self.parent_bytes,
            "manifest": self.manifest.as_ref().map(manifest_to_json),
        })
    }
}

/// One chunk of an inspected item (computed from the manifest, not read).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChunkInfo {
    /// The chunk's key attributes.
    pub key: Item,
    /// Bytes of the stored frame it holds.
    pub data_bytes: u64,
    /// The chunk item's exact size.
    pub item_bytes: usize,
}

/// What `inspect` reports.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Inspection {
    /// The parent as stored.
    pub parent: Item,
    /// The parent's exact size.
    pub parent_bytes: usize,
    /// Its manifest, when split.
    pub manifest: Option<Manifest>,
    /// The layout name of the table (`table` or `collection`).
    pub layout: &'static str,
    /// The table the chunks are in.
    pub chunk_table: String,
    /// Its chunks.
    pub chunks: Vec<ChunkInfo>,
    /// Read capacity units of a whole strongly consistent read.
    pub read_units: f64,
    /// Write capacity units of writing it again (batch mode).
    pub write_units: u64,
}

impl Inspection {
    /// What `inspect` found about the item with `key`, as JSON (the CLI's
    /// `--json` output and the HTTP API's answer).
    pub fn to_json(&self, key: &Item) -> serde_json::Value {
        let chunks: Vec<serde_json::Value> = self
            .chunks
            .iter()
            .map(|c| json!({ "key": item_to_json(&c.key), "dataBytes": c.data_bytes, "itemBytes": c.item_bytes }))
            .collect();
        json!({
            "key": item_to_json(key),
            "layout": self.layout,
            "chunkTable": self.chunk_table,
            "parentBytes": self.parent_bytes,
            "manifest": self.manifest.as_ref().map(manifest_to_json),
            "chunks": chunks,
            "readUnits": self.read_units,
            "writeUnits": self.write_units,
        })
    }
}

/// A Scan page of `table`'s whole items from after `start`.
fn scan_of(table: &TableConfig, limit: Option<u32>, start: Option<Item>) -> Scan {
    Scan {
        table: table.table.clone(),
        attributes: Vec::new(),
        consistent: true,
        start,
        limit,
        segment: None,
        index: None,
    }
}

/// Every item in `table` (chunks excluded), in scan order.
pub async fn list(client: &Client, table: &TableConfig) -> Result<Vec<StoredItem>, HostError> {
    let mut found = Vec::new();
    let mut start = None;
    loop {
        let (items, next) = scan_page(client, scan_of(table, None, start)).await?;
        found.extend(stored_items(table, items));
        match next {
            Some(key) => start = Some(key),
            None => return Ok(found),
        }
    }
}

/// One page of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListPage {
    /// The items of this page (chunks excluded: a page may hold fewer
    /// items than were asked for, and still not be the last).
    pub items: Vec<StoredItem>,
    /// The key to pass as `after` for the next page; `None` on the last.
    pub next: Option<Item>,
}

/// At most `limit` items of `table` after the key `after` (from the start
/// when `None`), in scan order; chunks excluded.
pub async fn list_page(
    client: &Client,
    table: &TableConfig,
    limit: u32,
    after: Option<&Item>,
) -> Result<ListPage, HostError> {
    let start = after.map(|key| table.key.key_of(key));
    let (items, next) = scan_page(client, scan_of(table, Some(limit.max(1)), start)).await?;
    Ok(ListPage {
        items: stored_items(table, items).collect(),
        next,
    })
}

/// The listed form of scanned items, chunks left out.
fn stored_items(table: &TableConfig, items: Vec<Item>) -> impl Iterator<Item = StoredItem> + '_ {
    let core = table.core();
    items
        .into_iter()
        .filter(move |item| !(table.layout == Layout::ItemCollection && core.is_chunk(item)))
        .map(|item| StoredItem {
            key: table.key.key_of(&item),
            parent_bytes: item_size(&item),
            manifest: item
                .get(MANIFEST_ATTRIBUTE)
                .and_then(|m| Manifest::from_value(m).ok()),
        })
}

/// The parent stored under `key` as it is (strongly consistent), its
/// manifest unread; `None` when there is none.
pub async fn stored_parent(
    client: &Client,
    table: &TableConfig,
    key: &Item,
) -> Result<Option<Item>, HostError> {
    let key = check_key(table, key)?;
    let get = parent_get(&table.target(), &key);
    get_item(client, get, RetryPolicy::default()).await
}

/// The parent, manifest and chunk layout of the item with `key`, without
/// reading its chunks; `None` when there is no such item. Any size is
/// inspected (the payload is never read); a manifest claiming more than
/// [`dynaslice_core::DEFAULT_MAX_CHUNK_KEYS`] chunks is refused before its
/// chunks are listed.
pub async fn inspect(
    client: &Client,
    table: &TableConfig,
    key: &Item,
) -> Result<Option<Inspection>, HostError> {
    let key = check_key(table, key)?;
    let target = table.target().keys_only();
    let Some(parent) = stored_parent(client, table, &key).await? else {
        return Ok(None);
    };
    let plan = plan_read(&parent, &target, true)?;
    let parent_bytes = item_size(&parent);
    let mut chunks = Vec::new();
    if let Some(manifest) = &plan.manifest {
        let all = manifest
            .frames()
            .flat_map(|f| (0..f.chunk_count).map(move |seq| (f, seq)));
        for (frame, seq) in all {
            let key = chunk_key(&table.key, &table.layout, &parent, frame.version, seq)
                .map_err(dynaslice_core::plan::PlanError::from)?;
            let data_bytes = frame.chunk_len(seq);
            let mut chunk = key.clone();
            chunk.insert(CHUNK_DIGEST_ATTRIBUTE.into(), AttributeValue::B(vec![0; 8]));
            chunk.insert(CHUNK_DATA_ATTRIBUTE.into(), AttributeValue::B(Vec::new()));
            let item_bytes = item_size(&chunk) + data_bytes as usize;
            chunks.push(ChunkInfo {
                key,
                data_bytes,
                item_bytes,
            });
        }
    }
    let read_units = plan.whole_read_units();
    let write_units = write_units(parent_bytes, false)
        + chunks
            .iter()
            .map(|c| write_units(c.item_bytes, false))
            .sum::<u64>();
    Ok(Some(Inspection {
        parent_bytes,
        manifest: plan.manifest,
        layout: table.layout.name(),
        chunk_table: table.chunk_table.clone(),
        chunks,
        read_units,
        write_units,
        parent,
    }))
}
