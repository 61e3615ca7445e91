//! Options objects from JavaScript. Unknown values are refused with the
//! name of the option; absent ones take documented defaults.

use dynaslice_core::Code;
use dynaslice_core::codec::Codec;
use dynaslice_core::codec::Compression;
use dynaslice_core::history::Retention;
use dynaslice_core::layout;
use dynaslice_core::layout::Layout;
use dynaslice_core::plan::WriteMode;
use dynaslice_core::plan::{Commit, Precondition, Query};
use dynaslice_core::protocol::{GcOptions, GetOptions, PutOptions, QueryOptions, RetryPolicy};
use dynaslice_core::{
    CodecChoice, DEFAULT_MAX_RAW_BYTES, IndexKey, Item, KeySchema, KeyType, ReassembleOptions,
    SplitOptions, VersionId,
};
use js_sys::Array;
use std::collections::BTreeMap;
use wasm_bindgen::{JsCast, JsValue};

use super::get;
use crate::error::Failure;

fn bad(option: &str, expected: &str) -> Failure {
    Failure::new(
        Code::OptionsInvalid,
        format!("option {option} must be {expected}"),
    )
}

/// A string option (`None` when not given).
pub fn text(options: &JsValue, name: &str) -> Result<Option<String>, Failure> {
    let value = get(options, name);
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .as_string()
        .map(Some)
        .ok_or_else(|| bad(name, "a string"))
}

/// A boolean option.
pub fn flag(options: &JsValue, name: &str, default: bool) -> Result<bool, Failure> {
    let value = get(options, name);
    if value.is_undefined() {
        return Ok(default);
    }
    value.as_bool().ok_or_else(|| bad(name, "a boolean"))
}

/// The attribute `options.attribute` names: the one to `what` (the
/// streamed binary attribute, the attribute to read).
pub fn attribute(options: &JsValue, what: &str) -> Result<String, Failure> {
    get(options, "attribute")
        .as_string()
        .ok_or_else(|| bad("attribute", &format!("the name of {what}")))
}

/// `options.size`, a streamed payload's exact length when it is known
/// before it starts (a `Blob`'s); none for a stream of unknown length.
pub fn stream_size(options: &JsValue) -> Result<Option<u64>, Failure> {
    let value = get(options, "size");
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    match value.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => {
            Ok(Some(n as u64))
        }
        _ => Err(bad(
            "size",
            "the payload's exact length in bytes (a non-negative integer), or left out when \
             it is not known",
        )),
    }
}

/// A non-negative integer option.
pub fn size(options: &JsValue, name: &str, default: usize) -> Result<usize, Failure> {
    let value = get(options, name);
    if value.is_undefined() {
        return Ok(default);
    }
    match value.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => Ok(n as usize),
        _ => Err(bad(name, "a non-negative integer")),
    }
}

/// `{ codec, level }` for compress.
pub fn compression(options: &JsValue) -> Result<Compression, Failure> {
    let codec = match text(options, "codec")? {
        None => Codec::Zstd,
        Some(name) => Codec::from_name(&name)
            .ok_or_else(|| bad("codec", "none, deflate, zlib, gzip, snappy or zstd"))?,
    };
    let level = get(options, "level");
    let level = if level.is_undefined() {
        None
    } else {
        match level.as_f64() {
            Some(l) if (0.0..=255.0).contains(&l) && l.fract() == 0.0 => Some(l as u8),
            _ => return Err(bad("level", "an integer")),
        }
    };
    codec.check_level(level)?;
    Ok(Compression { codec, level })
}

/// The table an item lives in, from `{ table, key, layout, chunkTable, chunkKey }`.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// The parent table.
    pub table: String,
    /// Its key schema.
    pub key: KeySchema,
    /// The chunk layout.
    pub layout: Layout,
    /// Where chunks go.
    pub chunk_table: String,
    /// The largest stored item planned for (`maxBytes`, default 64 MiB): a
    /// stored manifest claiming more is refused before any key is built.
    pub max_raw_bytes: usize,
    /// `indexKeys`: the key attributes of the table's secondary indexes,
    /// kept on the parent (the driver describes the table for them).
    pub index_keys: Vec<IndexKey>,
    /// `ttl`: the table's TTL attribute, kept on the parent and copied to
    /// every chunk.
    pub ttl: Option<String>,
    /// `anchors: true`: the table chunks go to has the anchors index
    /// (docs/FORMAT.md section 6), which `gc` reads and plans price.
    pub anchors: Option<String>,
    /// `s3: { bucket, prefix, thresholdBytes, partBytes }`: where large
    /// payloads go (docs/FORMAT.md section 5a).
    pub objects: Option<dynaslice_core::object::ObjectStore>,
}

impl TableOptions {
    /// Reads the table options.
    pub fn from_js(options: &JsValue) -> Result<Self, Failure> {
        let table =
            text(options, "table")?.ok_or_else(|| bad("table", "the parent table's name"))?;
        let key = key_schema(&get(options, "key"))?;
        let layout = match text(options, "layout")?.as_deref() {
            None | Some("table") => Layout::ChunkTable {
                key_name: text(options, "chunkKey")?
                    .unwrap_or_else(|| layout::DEFAULT_CHUNK_KEY_NAME.into()),
            },
            Some("collection") => Layout::ItemCollection,
            Some(_) => return Err(bad("layout", "\"table\" or \"collection\"")),
        };
        let chunk_table = match &layout {
            Layout::ItemCollection => table.clone(),
            Layout::ChunkTable { .. } => {
                text(options, "chunkTable")?.unwrap_or_else(|| layout::default_chunk_table(&table))
            }
        };
        let max_raw_bytes = size(options, "maxBytes", DEFAULT_MAX_RAW_BYTES)?;
        let objects = super::objects::store(options, &table)?;
        Ok(Self {
            objects,
            table,
            key,
            layout,
            chunk_table,
            max_raw_bytes,
            index_keys: index_keys(&get(options, "indexKeys"))?,
            anchors: super::flag(options, "anchors", false)?
                .then(|| layout::ANCHORS_INDEX.to_string()),
            // null: the table has none (the driver described it).
            ttl: match get(options, "ttl") {
                v if v.is_null() => None,
                _ => text(options, "ttl")?,
            },
        })
    }

    /// The plan target.
    pub fn target(&self) -> dynaslice_core::plan::Target<'_> {
        dynaslice_core::plan::Target {
            anchors_indexed: self.anchors.is_some(),
            max_raw_bytes: self.max_raw_bytes as u64,
            ..dynaslice_core::plan::Target::new(
                &self.table,
                &self.chunk_table,
                &self.key,
                &self.layout,
            )
        }
    }

    /// The table as core's protocol machines take it.
    pub fn core(&self) -> dynaslice_core::Table {
        dynaslice_core::Table {
            table: self.table.clone(),
            key: self.key.clone(),
            layout: self.layout.clone(),
            chunk_table: self.chunk_table.clone(),
            index_keys: self.index_keys.clone(),
            ttl: self.ttl.clone(),
            anchors: self.anchors.clone(),
            objects: self.objects.clone(),
        }
    }

    /// Reassembly options, within `maxBytes`.
    pub fn reassemble(&self) -> ReassembleOptions<'_> {
        let mut read = ReassembleOptions::new(&self.key, &self.layout);
        read.max_raw_bytes = self.max_raw_bytes;
        read
    }
}

/// `[{ name, type, sort }, …]`: the key attributes of the table's secondary
/// indexes (`sort`: a sort key of some index); none when absent.
fn index_keys(value: &JsValue) -> Result<Vec<IndexKey>, Failure> {
    let expected = "an array like [{ name: \"title\", type: \"S\", sort: false }]";
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    if !Array::is_array(value) {
        return Err(bad("indexKeys", expected));
    }
    let array: &Array = value.unchecked_ref();
    array
        .iter()
        .map(|element| {
            let name = text(&element, "name")?.ok_or_else(|| bad("indexKeys", expected))?;
            let key_type = key_type(text(&element, "type")?.as_deref())
                .ok_or_else(|| bad("indexKeys", expected))?;
            let sort = flag(&element, "sort", false)?;
            Ok(IndexKey {
                name,
                key_type,
                sort,
            })
        })
        .collect()
}

/// `"S"`, `"N"` or `"B"`.
fn key_type(name: Option<&str>) -> Option<KeyType> {
    match name {
        Some("S") => Some(KeyType::S),
        Some("N") => Some(KeyType::N),
        Some("B") => Some(KeyType::B),
        _ => None,
    }
}

/// `[{ name, type }, …]`: the partition key, then an optional sort key.
pub fn key_schema(value: &JsValue) -> Result<KeySchema, Failure> {
    let expected = "an array like [{ name: \"pk\", type: \"S\" }, { name: \"sk\", type: \"S\" }]";
    if !Array::is_array(value) {
        return Err(bad("key", expected));
    }
    let array: &Array = value.unchecked_ref();
    let mut parts = Vec::new();
    for element in array.iter() {
        let name = text(&element, "name")?.ok_or_else(|| bad("key", expected))?;
        let key_type =
            key_type(text(&element, "type")?.as_deref()).ok_or_else(|| bad("key", expected))?;
        parts.push((name, key_type));
    }
    match parts.as_slice() {
        [(pk, pt)] => Ok(KeySchema::partition(pk.clone(), *pt)),
        [(pk, pt), (sk, st)] => {
            Ok(KeySchema::partition(pk.clone(), *pt).with_sort(sk.clone(), *st))
        }
        _ => Err(bad("key", expected)),
    }
}

/// Split options from the table options and `{ codec, level, chunkItemBytes,
/// itemLimit, parentBudget, maxRawBytes, inline, keep, version }`.
pub fn split_options(table: &TableOptions, options: &JsValue) -> Result<SplitOptions, Failure> {
    let version = match text(options, "version")? {
        Some(text) => VersionId::parse(&text).map_err(|_| bad("version", "a 26-character ULID"))?,
        None => fresh_version(js_sys::Date::now())?,
    };
    let mut split = SplitOptions::new(table.key.clone(), version);
    split.layout = table.layout.clone();
    split.compression = match text(options, "codec")?.as_deref() {
        None | Some("auto") => CodecChoice::Auto,
        Some(_) => CodecChoice::Fixed(compression(options)?),
    };
    split.chunk_item_bytes = size(options, "chunkItemBytes", split.chunk_item_bytes)?;
    split.item_limit = size(options, "itemLimit", split.item_limit)?;
    split.parent_budget = size(options, "parentBudget", split.parent_budget)?;
    split.max_raw_bytes = size(options, "maxRawBytes", split.max_raw_bytes)?;
    split.inline = flag(options, "inline", true)?;
    // One frame: what a host's upload takes (it stamps the chunks with its
    // own version). A write through the driver groups large attributes.
    split.group_bytes = usize::MAX;
    split.index_keys = table.index_keys.clone();
    split.ttl = table.ttl.clone();
    let keep = get(options, "keep");
    if !keep.is_undefined() {
        if !Array::is_array(&keep) {
            return Err(bad("keep", "an array of attribute names"));
        }
        let names: &Array = keep.unchecked_ref();
        split.keep = names
            .iter()
            .map(|n| {
                n.as_string()
                    .ok_or_else(|| bad("keep", "an array of attribute names"))
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(split)
}

/// `commit`: `"conditional"` (default: the commit holds only while the
/// stored parent is the one `expect` describes) or `"overwrite"` (last
/// writer wins: an unconditional commit that returns what it replaced).
pub fn commit(options: &JsValue) -> Result<Commit, Failure> {
    match text(options, "commit")?.as_deref() {
        None | Some("conditional") => Ok(Commit::IfExpected),
        Some("overwrite") => Ok(Commit::Overwrite),
        Some(_) => Err(bad("commit", "\"conditional\" or \"overwrite\"")),
    }
}

/// `mode`: `"batch"` (default: half the write units of a transaction,
/// which bills every write twice), `"atomic"` or `"auto"`.
pub fn write_mode(options: &JsValue) -> Result<WriteMode, Failure> {
    match text(options, "mode")?.as_deref() {
        None => Ok(WriteMode::default()),
        Some(name) => WriteMode::from_name(name)
            .ok_or_else(|| bad("mode", "\"auto\", \"atomic\" or \"batch\"")),
    }
}

/// A fresh version id: `unix_ms` (the caller's clock, or the store's) and
/// 80 bits from `crypto.getRandomValues`.
pub fn fresh_version(unix_ms: f64) -> Result<VersionId, Failure> {
    let bytes = random_bytes::<16>()?;
    Ok(VersionId::new(unix_ms as u64, u128::from_le_bytes(bytes)))
}

/// `N` random bytes from `crypto.getRandomValues`.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], Failure> {
    let crypto = get(&js_sys::global(), "crypto");
    let random = js_sys::Uint8Array::new_with_length(N as u32);
    let get_random = get(&crypto, "getRandomValues")
        .dyn_into::<js_sys::Function>()
        .map_err(|_| {
            Failure::new(
                Code::RandomUnavailable,
                "crypto.getRandomValues is not available; pass options.version",
            )
        })?;
    get_random
        .call1(&crypto, &random)
        .map_err(|_| Failure::new(Code::RandomUnavailable, "crypto.getRandomValues failed"))?;
    let mut bytes = [0u8; N];
    random.copy_to(&mut bytes);
    Ok(bytes)
}

fn millis(
    value: &JsValue,
    name: &str,
    default: core::time::Duration,
) -> Result<core::time::Duration, Failure> {
    if value.is_undefined() {
        return Ok(default);
    }
    match value.as_f64() {
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            Ok(core::time::Duration::from_secs_f64(ms / 1000.0))
        }
        _ => Err(bad(name, "a number of milliseconds, 0 or more")),
    }
}

fn positive(options: &JsValue, name: &str, default: usize) -> Result<usize, Failure> {
    match size(options, name, default)? {
        0 => Err(bad(name, "a positive integer")),
        n => Ok(n),
    }
}

/// `retry: { maxAttempts, maxThrottledAttempts, baseDelayMs, maxDelayMs }`.
pub fn retry(options: &JsValue) -> Result<RetryPolicy, Failure> {
    let retry = get(options, "retry");
    let defaults = RetryPolicy::default();
    if retry.is_undefined() {
        return Ok(defaults);
    }
    if !retry.is_object() {
        return Err(bad(
            "retry",
            "an object like { maxAttempts, baseDelayMs, maxDelayMs }",
        ));
    }
    let count = |name: &str, default: u32| -> Result<u32, Failure> {
        let n = positive(&retry, name, default as usize)
            .map_err(|_| bad(&format!("retry.{name}"), "a positive integer"))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    };
    Ok(RetryPolicy {
        max_attempts: count("maxAttempts", defaults.max_attempts)?,
        max_throttled_attempts: count("maxThrottledAttempts", defaults.max_throttled_attempts)?,
        base_delay: millis(
            &get(&retry, "baseDelayMs"),
            "retry.baseDelayMs",
            defaults.base_delay,
        )?,
        max_delay: millis(
            &get(&retry, "maxDelayMs"),
            "retry.maxDelayMs",
            defaults.max_delay,
        )?,
    })
}

/// `expect`: none (last writer wins), `"absent"` or `{ version }`.
fn precondition(options: &JsValue) -> Result<Option<Precondition>, Failure> {
    let expect = get(options, "expect");
    let wrong = || {
        bad(
            "expect",
            "\"absent\" or { version: \"<26-character version id>\" }",
        )
    };
    if expect.is_undefined() {
        return Ok(None);
    }
    if expect.as_string().as_deref() == Some("absent") {
        return Ok(Some(Precondition::Absent));
    }
    let version = get(&expect, "version").as_string().ok_or_else(wrong)?;
    let version = VersionId::parse(&version).map_err(|_| wrong())?;
    Ok(Some(Precondition::Version(version)))
}

/// `history`: none (as the stored item keeps), or `{ keep, maxAgeMs }`
/// (version history: keep 0 and no age turns it off).
fn history(options: &JsValue) -> Result<Option<Retention>, Failure> {
    let value = get(options, "history");
    if value.is_undefined() {
        return Ok(None);
    }
    let wrong = || {
        bad(
            "history",
            "{ keep: 0 to 100 versions, maxAgeMs?: a number of milliseconds }",
        )
    };
    if !value.is_object() {
        return Err(wrong());
    }
    let keep = size(&value, "keep", 0).map_err(|_| wrong())?;
    let max_age_ms = match get(&value, "maxAgeMs").is_undefined() {
        true => None,
        false => Some(size(&value, "maxAgeMs", 0).map_err(|_| wrong())? as u64),
    };
    let retention = Retention {
        keep: u32::try_from(keep).map_err(|_| wrong())?,
        max_age_ms,
    };
    retention.check().map_err(|_| wrong())?;
    Ok(Some(retention))
}

/// `version`: a kept version to read (its 26-character id).
fn version(options: &JsValue) -> Result<Option<VersionId>, Failure> {
    let wrong = || bad("version", "a 26-character version id");
    match text(options, "version").map_err(|_| wrong())? {
        None => Ok(None),
        Some(id) => VersionId::parse(&id).map(Some).map_err(|_| wrong()),
    }
}

/// A write's options: the split's (`codec`, `keep`, `chunkItemBytes`, …),
/// `mode`, `expect`, `retry`, `concurrency`, `batchItems`, `history`,
/// `note`.
pub fn put_options(table: &TableOptions, options: &JsValue) -> Result<PutOptions, Failure> {
    let split = split_options(table, options)?;
    let max = size(options, "maxRawBytes", table.max_raw_bytes)?;
    Ok(PutOptions {
        compression: split.compression,
        mode: super::write_mode(options)?,
        parent_budget: split.parent_budget,
        keep: split.keep,
        max_item_bytes: max,
        max_stream_bytes: None,
        retry: retry(options)?,
        concurrency: positive(options, "concurrency", PutOptions::default().concurrency)?,
        batch_items: positive(options, "batchItems", PutOptions::default().batch_items)?,
        precondition: precondition(options)?,
        chunk_item_bytes: split.chunk_item_bytes,
        item_limit: split.item_limit,
        inline: split.inline,
        history: history(options)?,
        note: text(options, "note")?,
        carried: Vec::new(),
    })
}

/// A streamed write's options: a write's, its codec `none` unless named
/// (`none`, `deflate`, `zlib`, `gzip`).
pub fn put_stream_options(table: &TableOptions, options: &JsValue) -> Result<PutOptions, Failure> {
    let mut put = put_options(table, options)?;
    // A stream is never held whole: no limit unless one is given.
    if !get(options, "maxRawBytes").is_undefined() {
        put.max_stream_bytes = Some(size(options, "maxRawBytes", 0)? as u64);
    }
    if get(options, "codec").is_undefined() {
        put.compression = CodecChoice::Fixed(Compression::NONE);
    }
    Ok(put)
}

/// A read's options: `maxBytes`, `retry`, `concurrency`, `version`.
pub fn get_options(table: &TableOptions, options: &JsValue) -> Result<GetOptions, Failure> {
    Ok(GetOptions {
        max_item_bytes: table.max_raw_bytes,
        retry: retry(options)?,
        concurrency: positive(options, "concurrency", GetOptions::default().concurrency)?,
        version: version(options)?,
        ..GetOptions::default()
    })
}

/// A query's options: `itemConcurrency` (virtual items read at once),
/// `lazy`, and a read's.
pub fn query_options(table: &TableOptions, options: &JsValue) -> Result<QueryOptions, Failure> {
    let defaults = QueryOptions::default();
    Ok(QueryOptions {
        get: get_options(table, options)?,
        concurrency: positive(options, "itemConcurrency", defaults.concurrency)?,
        lazy: super::flag(options, "lazy", defaults.lazy)?,
        ..defaults
    })
}

/// `maxUnitsPerSecond`: a positive integer, or none.
fn rate(options: &JsValue) -> Result<Option<u32>, Failure> {
    match get(options, "maxUnitsPerSecond").is_undefined() {
        true => Ok(None),
        false => Ok(Some(
            u32::try_from(positive(options, "maxUnitsPerSecond", 1)?).unwrap_or(u32::MAX),
        )),
    }
}

/// `segment`, `[segment, total]`: set by the driver for each machine of
/// `segments`.
pub fn segment(options: &JsValue) -> Result<Option<(u32, u32)>, Failure> {
    let segment = get(options, "segment");
    if segment.is_undefined() {
        return Ok(None);
    }
    let parts = Array::from(&segment);
    let part = |i: u32| {
        parts
            .get(i)
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0)
    };
    match (part(0), part(1)) {
        (Some(s), Some(t)) if s < t && t <= 1_000.0 => Ok(Some((s as u32, t as u32))),
        _ => Err(bad("segment", "[segment, total]")),
    }
}

/// A verify's options: a query's (`itemConcurrency`, a read's), with
/// `maxUnitsPerSecond` shared by the `segment`'s `total` machines.
pub fn verify_options(table: &TableOptions, options: &JsValue) -> Result<QueryOptions, Failure> {
    let running = segment(options)?.map_or(1, |(_, total)| total);
    Ok(QueryOptions {
        report_damaged: true,
        lazy: false,
        max_units_per_second: rate(options)?.map(|r| (r / running).max(1)),
        ..query_options(table, options)?
    })
}

/// The caller's `QueryCommand` (or `ScanCommand`, with no
/// `KeyConditionExpression`) input as a query of core's, its
/// `ExpressionAttributeValues` and `ExclusiveStartKey` given as value
/// streams.
pub fn query_input(input: &JsValue, values: Item, start: Option<Item>) -> Result<Query, Failure> {
    let table = text(input, "TableName")?.ok_or_else(|| bad("TableName", "the table's name"))?;
    let names_value = get(input, "ExpressionAttributeNames");
    let mut names = BTreeMap::new();
    if !names_value.is_undefined() {
        let object: &js_sys::Object = names_value
            .dyn_ref()
            .ok_or_else(|| bad("ExpressionAttributeNames", "an object of strings"))?;
        for entry in js_sys::Object::entries(object).iter() {
            let pair: js_sys::Array = entry.into();
            let (key, value) = (pair.get(0).as_string(), pair.get(1).as_string());
            let (Some(key), Some(value)) = (key, value) else {
                return Err(bad("ExpressionAttributeNames", "an object of strings"));
            };
            names.insert(key, value);
        }
    }
    let limit = match get(input, "Limit").is_undefined() {
        true => None,
        false => Some(u32::try_from(positive(input, "Limit", 1)?).unwrap_or(u32::MAX)),
    };
    Ok(Query {
        table,
        index: text(input, "IndexName")?,
        key_condition: text(input, "KeyConditionExpression")?,
        filter: text(input, "FilterExpression")?,
        names,
        values,
        consistent: super::flag(input, "ConsistentRead", false)?,
        forward: super::flag(input, "ScanIndexForward", true)?,
        limit,
        start,
        segment: scan_segment(input)?,
    })
}

/// A parallel Scan's `Segment` and `TotalSegments`: both or neither, the
/// segment below the total (DynamoDB allows up to 1,000,000 segments).
fn scan_segment(input: &JsValue) -> Result<Option<(u32, u32)>, Failure> {
    let (segment, total) = (get(input, "Segment"), get(input, "TotalSegments"));
    if segment.is_undefined() && total.is_undefined() {
        return Ok(None);
    }
    let total = positive(input, "TotalSegments", 1)?;
    let segment = size(input, "Segment", 0)?;
    if total > 1_000_000 || segment >= total {
        return Err(bad(
            "Segment",
            "below TotalSegments, which is at most 1000000",
        ));
    }
    Ok(Some((segment as u32, total as u32)))
}

/// `gc`'s options: `graceMs`, `dryRun`, `maxUnitsPerSecond`, `everyChunk`
/// (scan every chunk even with the table option `anchors`), and the
/// `segment` (`[segment, total]`) the driver gives each machine.
pub fn gc_options(options: &JsValue) -> Result<GcOptions, Failure> {
    let defaults = GcOptions::default();
    let segment = segment(options)?;
    let options = GcOptions {
        grace: millis(&get(options, "graceMs"), "graceMs", defaults.grace)?,
        dry_run: super::flag(options, "dryRun", defaults.dry_run)?,
        max_units_per_second: rate(options)?,
        every_chunk: super::flag(options, "everyChunk", false)?,
        ..defaults
    };
    // Each segment's machine takes its share of the rate.
    Ok(match segment {
        Some((segment, total)) => options.for_segment(segment, total, total),
        None => options,
    })
}
