//! `estimate`: a write planned without writing. Where its payload would
//! live (inline, in chunks or in S3, decided by core as `put` decides it),
//! what `put` would spend, and what each other choice would cost.

use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_core::history::keeps_history;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::object::{ObjectRef, ObjectStore};
use dynaslice_core::plan::{
    Expect, PlanError, WriteKind, WriteMode, changes_to, plan_read, plan_update, plan_write,
    replace_write_units, write_costs_to,
};
use dynaslice_core::price::{ObjectRequests, US_EAST_1, object_requests};
use dynaslice_core::protocol::ProtocolError;
use dynaslice_core::{
    AttributeValue, Item, ObjectFrame, ReadConsistency, SplitItem, SplitOptions, StreamSplit,
    item_size, read_units, split_item, write_units,
};
use dynaslice_host::json::{key_from_args, manifest_to_json};
use dynaslice_host::{Changes, HostError, PutOptions, TableConfig, UpdatePlan, fresh_version};
use serde_json::json;

use super::args::PutArgs;
use super::commands::{json_item, put_options, read_payload};
use super::output::{manifest_text, print_json, size};

pub async fn estimate(client: &Client, args: &PutArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let key = key_from_args(&args.key, &table.key)?;
    let options = put_options(args)?;
    let (item, file_len) = match (&args.file, &args.json) {
        (Some(path), _) => {
            let bytes = read_payload(path, options.max_item_bytes).await?;
            let len = bytes.len() as u64;
            let mut item = key.clone();
            item.insert(args.attribute.clone(), AttributeValue::B(bytes));
            (item, Some(len))
        }
        (None, Some(text)) => (json_item(text, &key)?, None),
        (None, None) => return Err(HostError::Input("estimate needs --file or --json".into())),
    };
    // Priced as what it would be: an overwrite of what is stored now (a
    // manifest beyond the chunk-key bound costs no cleanup, as in `put`).
    let stored = dynaslice_host::stored_parent(client, &table, &key).await?;
    let mut split_options = options.split_options(&table.core(), fresh_version());
    // An item that keeps history always has a manifest, as in `put`.
    split_options.always_split = keeps_history(stored.as_ref(), options.history)?;
    // Whether the payload may go to S3 is core's decision, as in `put`: a
    // file is streamed (by its length), an item from --json written whole
    // (by its size, then its payload's raw length); either is then split
    // whole into one frame.
    let store = table.objects.as_ref().map(|o| &o.store);
    let may_offload = store.is_some_and(|s| match file_len {
        Some(len) => s.takes_stream(len, options.mode),
        None => s.takes_item(&item, options.mode),
    });
    if may_offload {
        split_options.group_bytes = usize::MAX;
    }
    // A file is streamed, as `put` streams it (in chunks, in batches),
    // unless it is written in one transaction: then as an item.
    let streamed = file_len.is_some() && options.mode != WriteMode::Atomic;
    let split = match item.get(&args.attribute) {
        Some(AttributeValue::B(bytes)) if streamed => StreamSplit::split_whole(
            key.clone(),
            args.attribute.clone(),
            bytes,
            options.compression,
            &split_options,
        )?,
        _ => split_item(&item, &split_options)?,
    };
    let mode = if streamed {
        WriteMode::Batch
    } else {
        options.mode
    };

    let target = table.target().keys_only();
    let expect = Expect::from_stored_at(stored.as_ref(), &target)?;
    let plan = plan_write(&split, &table.target(), &expect, mode)?;
    let chunked = Written {
        kind: plan.steps.kind(),
        parent_bytes: item_size(&split.parent),
        chunks: split.chunks.len(),
        write_units: plan.write_units(),
        read_units: plan_read(&split.parent, &table.target(), true)?.whole_read_units(),
        stored_bytes: split
            .chunks
            .iter()
            .map(|c| item_size(c) as u64)
            .sum::<u64>()
            + item_size(&split.parent) as u64,
    };
    let costs = write_costs_to(&split, table.anchors.is_some()).by_mode();
    let instead = update_instead(&table, stored.as_ref(), &item, &options)?;
    let item_bytes = item_size(&item);
    let frame = split.manifest.as_ref().map(|m| Frame {
        inline: m.inline.is_some(),
        stored_len: m.stored_len,
        text: manifest_text(m),
        json: manifest_to_json(m),
    });

    let goes = store.filter(|s| {
        may_offload
            && split
                .manifest
                .as_ref()
                .is_some_and(|m| file_len.is_some() || s.takes_payload(m.raw_len))
    });
    let in_s3 = match goes {
        Some(store) => as_object(store, &table, split, &split_options)?,
        None => None,
    };
    // What `put` would spend: the chunk plan's, or, for a payload in S3,
    // the committed parent's (the object's requests are priced apart).
    let written = match &in_s3 {
        Some(object) => {
            let parent_bytes = item_size(&object.parent);
            Written {
                kind: WriteKind::Batch,
                parent_bytes,
                chunks: 0,
                write_units: write_units(parent_bytes, false),
                read_units: read_units(parent_bytes, ReadConsistency::Strong),
                stored_bytes: parent_bytes as u64,
            }
        }
        None => chunked.clone(),
    };
    let replace = replace_write_units(
        stored.as_ref(),
        written.parent_bytes,
        &target,
        table.ttl.as_deref(),
        written.kind == WriteKind::Atomic,
    )?;
    let prices = where_and_price(&table, args, frame.as_ref(), &chunked, in_s3.as_ref());
    let manifest_json = match &in_s3 {
        Some(object) => {
            // The ETag is S3's to give: priced with one of its length, not
            // shown.
            let mut json = manifest_to_json(&object.manifest);
            if let Some(object) = json.get_mut("object").and_then(|o| o.as_object_mut()) {
                object.remove("etag");
            }
            Some(json)
        }
        None => frame.as_ref().map(|f| f.json.clone()),
    };
    if json {
        let costs: serde_json::Map<String, serde_json::Value> = costs
            .iter()
            .map(|(mode, units)| (mode.name().to_string(), json!(units)))
            .collect();
        print_json(&json!({
            "itemBytes": item_bytes,
            "overLimitBy": item_bytes.saturating_sub(dynaslice_core::MAX_ITEM_BYTES),
            "mode": written.kind.name(),
            "parentBytes": written.parent_bytes,
            "chunks": written.chunks,
            "manifest": manifest_json,
            "writeUnits": written.write_units,
            "replaces": stored.is_some(),
            "replaceWriteUnits": replace,
            "totalWriteUnits": written.write_units + replace,
            "costs": costs,
            "readUnits": written.read_units,
            "updateInstead": instead.as_ref().map(|(changes, plan)| json!({
                "path": plan.path(),
                "writeUnits": plan.write_units,
                "set": changes.set.keys().collect::<Vec<_>>(),
                "remove": changes.remove,
                "reused": plan.reused(),
            })),
            "storedIn": prices.stored_in,
            "prices": prices.json,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    println!("item: {} ({item_bytes} bytes)", size(item_bytes as u64));
    match (&in_s3, &frame) {
        (Some(object), _) => println!("split: {}", manifest_text(&object.manifest)),
        (None, Some(frame)) => println!("split: {}", frame.text),
        (None, None) => println!("fits one item: no split"),
    }
    match &in_s3 {
        Some(object) => println!(
            "write: one S3 object ({}) and the parent, {} WCU; read back: {} RCU and {} \
             (strongly consistent)",
            plural(object.requests.writes, "request"),
            written.write_units,
            written.read_units,
            plural(object.requests.reads, "GET"),
        ),
        None => println!(
            "write: {} mode, {} WCU; read back: {} RCU (strongly consistent)",
            written.kind.name(),
            written.write_units,
            written.read_units
        ),
    }
    if stored.is_some() {
        println!(
            "replaces the stored item: +{replace} WCU (its larger parent, its chunks' deletes), \
             {} WCU in all",
            written.write_units + replace
        );
    }
    if let Some((changes, plan)) = &instead {
        println!(
            "an update instead ({}): {} WCU, {}",
            changes_text(changes),
            plan.write_units,
            update_text(plan)
        );
    }
    if chunked.chunks > 0 {
        let each: Vec<String> = costs
            .iter()
            .map(|(mode, units)| match units {
                Some(units) => format!("{} mode: {units} WCU", mode.name()),
                None => format!("{} mode: does not fit one transaction", mode.name()),
            })
            .collect();
        let instead = if in_s3.is_some() {
            "in chunks instead, "
        } else {
            ""
        };
        println!("  {instead}{}", each.join("; "));
    }
    for line in &prices.lines {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What a write costs as planned.
#[derive(Clone)]
struct Written {
    kind: WriteKind,
    parent_bytes: usize,
    chunks: usize,
    write_units: u64,
    read_units: f64,
    /// Its parent's and chunks' bytes, as DynamoDB stores them.
    stored_bytes: u64,
}

/// The payload's frame, as split for chunks (or inline).
struct Frame {
    inline: bool,
    stored_len: u64,
    text: String,
    json: serde_json::Value,
}

/// A payload `put` would store as one S3 object: the parent it would
/// commit, its manifest and the object's requests.
struct InS3 {
    parent: Item,
    manifest: Manifest,
    requests: ObjectRequests,
}

/// `split`, an item split whole into one frame, as `put` would store it
/// in `store`: the frame cut into parts, and the parent committed with the
/// object's key and an ETag of the length S3 gives (the parent is priced
/// by its size). `None` when the frame cannot be one object, or the key
/// makes no object key (`put` then keeps it in chunks too).
fn as_object(
    store: &ObjectStore,
    table: &TableConfig,
    split: SplitItem,
    options: &SplitOptions,
) -> Result<Option<InS3>, HostError> {
    let Some(version) = split.manifest.as_ref().map(|m| m.version) else {
        return Ok(None);
    };
    // A key that makes no object key keeps the payload in chunks, as in
    // `put` (`PutMachine::offload`, `object_for_stream`).
    let Ok(key) = store.key_for(&table.key, &split.parent, version) else {
        return Ok(None);
    };
    let Ok((frame, parts)) = ObjectFrame::from_split(split, options, store.part_bytes) else {
        return Ok(None);
    };
    let requests = object_requests(frame.manifest().stored_len, store.part_bytes);
    // A quoted MD5, with "-<parts>" for a multipart upload.
    let mut etag = format!("\"{:032x}\"", 0);
    if parts.len() > 1 {
        etag.insert_str(33, &format!("-{}", parts.len()));
    }
    let object = ObjectRef {
        bucket: store.bucket.clone(),
        key,
        etag,
    };
    let split = frame.stored(object)?;
    let Some(manifest) = split.manifest else {
        return Ok(None);
    };
    Ok(Some(InS3 {
        parent: split.parent,
        manifest,
        requests,
    }))
}

/// `n` and `what`, plural when `n` is not 1.
fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Where `estimate`'s payload would live, and what each choice costs.
struct Priced {
    /// `"s3"`, `"chunks"` or `"item"`.
    stored_in: &'static str,
    lines: Vec<String>,
    json: serde_json::Value,
}

/// Where a `put` would store the payload (`in_s3` when it goes to S3,
/// else in chunks, or inline), and what a write, a strongly consistent
/// read and a month of storage cost in chunks (`chunked`) and in S3, at
/// us-east-1 list prices. When the payload stays in DynamoDB, S3 is
/// priced with the chunked parent's size.
fn where_and_price(
    table: &TableConfig,
    args: &PutArgs,
    frame: Option<&Frame>,
    chunked: &Written,
    in_s3: Option<&InS3>,
) -> Priced {
    let p = US_EAST_1;
    let Some(frame) = frame.filter(|f| !f.inline || in_s3.is_some()) else {
        return Priced {
            stored_in: "item",
            lines: Vec::new(),
            json: json!({ "writeDollars": p.write_units(chunked.write_units) }),
        };
    };
    let chunks = json!({
        "writeDollars": p.write_units(chunked.write_units),
        "readDollars": p.read_units(chunked.read_units),
        "monthDollars": p.dynamodb_month(chunked.stored_bytes),
    });
    let mut lines = vec![format!(
        "in chunks: write ${:.6}, read ${:.7}, a month of storage ${:.6} (us-east-1 list prices)",
        p.write_units(chunked.write_units),
        p.read_units(chunked.read_units),
        p.dynamodb_month(chunked.stored_bytes),
    )];
    let Some(objects) = &table.objects else {
        return Priced {
            stored_in: "chunks",
            lines,
            json: json!({ "chunks": chunks, "s3": null }),
        };
    };
    let store = &objects.store;
    let (requests, parent_bytes) = match in_s3 {
        Some(object) => (object.requests, item_size(&object.parent)),
        None => (
            object_requests(frame.stored_len, store.part_bytes),
            chunked.parent_bytes,
        ),
    };
    let parent_units = write_units(parent_bytes, false);
    let s3_write = p.s3_writes(requests.writes) + p.write_units(parent_units);
    let parent_read = read_units(parent_bytes, ReadConsistency::Strong);
    let s3_read = p.s3_reads(requests.reads) + p.read_units(parent_read);
    let s3_month = p.s3_month(frame.stored_len) + p.dynamodb_month(parent_bytes as u64);
    lines.push(format!(
        "in S3: write ${s3_write:.6} ({} + {parent_units} WRU), read ${s3_read:.7} ({}), a month \
         ${s3_month:.6}",
        plural(requests.writes, "request"),
        plural(requests.reads, "GET"),
    ));
    lines.push(match in_s3 {
        Some(_) => format!(
            "stored in S3 (s3://{}/{}…): the payload is at least {} bytes",
            store.bucket, store.prefix, store.threshold
        ),
        None if args.mode.write_mode() == WriteMode::Atomic => {
            "stored in chunks: an item written in one transaction (--mode atomic) stays in DynamoDB"
                .to_string()
        }
        None => format!(
            "stored in chunks: the payload is under the S3 threshold of {} bytes",
            store.threshold
        ),
    });
    let json = json!({
        "chunks": chunks,
        "s3": {
            "writeDollars": s3_write,
            "readDollars": s3_read,
            "monthDollars": s3_month,
            "writeRequests": requests.writes,
            "readRequests": requests.reads,
        },
    });
    Priced {
        stored_in: if in_s3.is_some() { "s3" } else { "chunks" },
        lines,
        json,
    }
}

/// What an update making the stored item (its parent `stored`, as read)
/// into `item` would cost instead of an overwrite: the changes found
/// without reading the payload ([`changes_to`]) and the update's plan
/// against that same parent (no second read). `None` when nothing is
/// stored, nothing changes, or the stored manifest does not name its
/// attributes.
fn update_instead(
    table: &TableConfig,
    stored: Option<&Item>,
    item: &Item,
    options: &PutOptions,
) -> Result<Option<(Changes, UpdatePlan)>, HostError> {
    let Some(stored) = stored else {
        return Ok(None);
    };
    let changes = changes_to(stored, item, &table.key).map_err(PlanError::from)?;
    let Some(changes) = changes.filter(|c| !c.set.is_empty() || !c.remove.is_empty()) else {
        return Ok(None);
    };
    let core = table.core();
    changes.check(&core).map_err(ProtocolError::from)?;
    let plan = plan_update(
        &table.key.key_of(item),
        Some(stored),
        &changes,
        &core,
        options.item_limit,
        fresh_version(),
        false,
    )?;
    Ok(Some((changes, plan)))
}

/// "set a, b; remove c".
fn changes_text(changes: &Changes) -> String {
    let mut what: Vec<String> = Vec::new();
    if !changes.set.is_empty() {
        let names: Vec<&str> = changes.set.keys().map(String::as_str).collect();
        what.push(format!("set {}", names.join(", ")));
    }
    if !changes.remove.is_empty() {
        what.push(format!("remove {}", changes.remove.join(", ")));
    }
    what.join("; ")
}

/// How an update would be written.
fn update_text(plan: &UpdatePlan) -> String {
    match plan.path() {
        "parent" => "one UpdateItem of the parent".to_string(),
        _ => match plan.carried.len() {
            0 => "a rewrite of every frame".to_string(),
            n => format!(
                "a rewrite reusing {n} unchanged group{}",
                if n == 1 { "" } else { "s" }
            ),
        },
    }
}
