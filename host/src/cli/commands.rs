//! One function per command: parse the arguments, call the library, print.

use std::path::Path;
use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Code;
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::plan::{Expect, Precondition, WriteMode, plan_write};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, ReassembleError, SplitError, VersionId,
    item_size, split_item,
};
use dynaslice_host::json::{
    item_from_json, item_to_json, key_from_args, key_text, manifest_to_json,
};
use dynaslice_host::{
    Changes, GetOptions, HostError, LayoutKind, OutcomeJson, PutOptions, TableConfig, UpdatePlan,
    create_tables, fresh_version,
};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::args::{
    CodecArg, CreateArgs, GetArgs, KeyArgs, LayoutArg, PutArgs, PutCommand, ServeArgs, TableArgs,
};
use super::output::{Bar, manifest_text, print_json, print_json_to, size};

fn put_options(args: &PutArgs) -> Result<PutOptions, HostError> {
    let codec = match args.codec {
        CodecArg::Auto => None,
        CodecArg::None => Some(Codec::None),
        CodecArg::Deflate => Some(Codec::Deflate),
        CodecArg::Zlib => Some(Codec::Zlib),
        CodecArg::Gzip => Some(Codec::Gzip),
        CodecArg::Snappy => Some(Codec::Snappy),
        CodecArg::Zstd => Some(Codec::Zstd),
    };
    let compression = match (codec, args.level) {
        (None, Some(_)) => return Err(HostError::Input("--level needs a --codec".into())),
        (None, None) => CodecChoice::Auto,
        (Some(codec), level) => CodecChoice::Fixed(Compression { codec, level }),
    };
    let mut options = PutOptions {
        compression,
        mode: args.mode.write_mode(),
        keep: args.keep.clone(),
        concurrency: args.concurrency.max(1),
        ..PutOptions::default()
    };
    if let Some(max) = args.max_size {
        options.max_item_bytes = max;
        options.max_stream_bytes = Some(max as u64);
    }
    options.history = super::history::retention(&args.history)?;
    options.note = args.history.note.clone();
    Ok(options)
}

/// `--file`'s payload whole, for what must hold it: at most one byte past
/// `max` is read, enough for the split to refuse it as too large.
async fn read_payload(path: &Path, max: usize) -> Result<Vec<u8>, HostError> {
    let (reader, len) = payload_source(path).await?;
    if let Some(len) = len.filter(|&len| len > max as u64) {
        let size = usize::try_from(len).unwrap_or(usize::MAX);
        return Err(SplitError::TooLarge { size, limit: max }.into());
    }
    let mut bytes = Vec::new();
    reader
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| HostError::io(path.display(), e))?;
    Ok(bytes)
}

/// `--file`'s payload: standard input for `-`, else the file, with its
/// length when it is a regular file (a pipe, a FIFO or a device is read to
/// its end).
pub(super) async fn payload_source(
    path: &Path,
) -> Result<(Box<dyn AsyncRead + Unpin + Send>, Option<u64>), HostError> {
    if path == Path::new("-") {
        return Ok((Box::new(tokio::io::stdin()), None));
    }
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| HostError::io(path.display(), e))?;
    let meta = file
        .metadata()
        .await
        .map_err(|e| HostError::io(path.display(), e))?;
    if meta.is_dir() {
        return Err(HostError::Input(format!(
            "--file {} is a folder, not a file",
            path.display()
        )));
    }
    let len = meta.is_file().then_some(meta.len());
    Ok((Box::new(file), len))
}

/// The attributes in DynamoDB JSON that `flag` gives, inline or as @path.
pub(super) fn json_attributes(text: &str, flag: &str) -> Result<Item, HostError> {
    let text = match text.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| HostError::io(path, e))?,
        None => text.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| HostError::Input(format!("{flag} is not valid JSON: {e}")))?;
    item_from_json(&value)
}

/// The item `put --json` or `estimate --json` names, with the key arguments merged in.
fn json_item(text: &str, key: &Item) -> Result<Item, HostError> {
    let mut item = json_attributes(text, "--json")?;
    item.extend(key.clone());
    Ok(item)
}

/// What `--if-absent` / `--if-version` require of the stored item.
fn precondition(command: &PutCommand) -> Result<Option<Precondition>, HostError> {
    if command.if_absent {
        return Ok(Some(Precondition::Absent));
    }
    let Some(text) = &command.if_version else {
        return Ok(None);
    };
    let version = VersionId::parse(text)
        .map_err(|e| HostError::Input(format!("--if-version {text}: {e}")))?;
    Ok(Some(Precondition::Version(version)))
}

pub async fn put(client: &Client, command: &PutCommand, json: bool) -> Result<ExitCode, HostError> {
    let args = &command.put;
    let table = super::discover(client, &args.table).await?;
    if let Some(warning) = table.ttl_warning() {
        eprintln!("dynaslice: warning: {warning}");
    }
    let key = key_from_args(&args.key, &table.key)?;
    let mut options = put_options(args)?;
    options.precondition = precondition(command)?;
    let bar = Bar::new("uploading", json);
    let outcome = match (&args.file, &args.json) {
        (Some(path), _) if options.mode == WriteMode::Atomic => {
            // One transaction needs the whole item planned at once.
            let bytes = read_payload(path, options.max_item_bytes).await?;
            let mut item = key.clone();
            item.insert(args.attribute.clone(), AttributeValue::B(bytes));
            dynaslice_host::put(client, &table, &item, &options, &bar).await
        }
        (Some(path), _) => {
            let (reader, len) = payload_source(path).await?;
            dynaslice_host::put_reader(
                client,
                &table,
                key.clone(),
                &args.attribute,
                reader,
                len,
                &options,
                &bar,
            )
            .await
        }
        (None, Some(text)) => {
            let item = json_item(text, &key)?;
            dynaslice_host::put(client, &table, &item, &options, &bar).await
        }
        (None, None) => Err(HostError::Input("put needs --file or --json".into())),
    };
    bar.finish();
    let outcome = outcome?;
    if json {
        print_json(&outcome.to_json(&key));
    } else {
        let how = outcome
            .manifest
            .as_ref()
            .map_or("as one item".to_string(), manifest_text);
        println!(
            "stored {} in {} ({} mode): {how}",
            key_text(&table.key, &key),
            args.table,
            outcome.mode
        );
        if outcome.superseded {
            println!("another writer's put replaced it at once; its chunks were deleted");
        }
        if outcome.cleanup_left > 0 {
            println!(
                "{} chunks of the replaced version remain; `dynaslice gc` removes them",
                outcome.cleanup_left
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn estimate(client: &Client, args: &PutArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let key = key_from_args(&args.key, &table.key)?;
    let options = put_options(args)?;
    let item = match (&args.file, &args.json) {
        (Some(path), _) => {
            let bytes = read_payload(path, options.max_item_bytes).await?;
            let mut item = key.clone();
            item.insert(args.attribute.clone(), AttributeValue::B(bytes));
            item
        }
        (None, Some(text)) => json_item(text, &key)?,
        (None, None) => return Err(HostError::Input("estimate needs --file or --json".into())),
    };
    // An item written whole goes to S3 in one frame, as `put` would write it.
    let whole_to_s3 = args.file.is_none()
        && table
            .objects
            .as_ref()
            .is_some_and(|o| o.store.takes_item(&item, options.mode));
    let mut split_options = options.split_options(&table.core(), fresh_version());
    if whole_to_s3 {
        split_options.group_bytes = usize::MAX;
    }
    let split = split_item(&item, &split_options)?;
    // Priced as what it would be: an overwrite of what is stored now (a
    // manifest beyond the chunk-key bound costs no cleanup, as in `put`).
    let stored = dynaslice_host::stored_parent(client, &table, &key).await?;
    let target = table.target().keys_only();
    let expect = Expect::from_stored_at(stored.as_ref(), &target)?;
    let plan = plan_write(&split, &table.target(), &expect, options.mode)?;
    let mode = plan.steps.kind().name();
    let replace = dynaslice_core::plan::replace_write_units(
        stored.as_ref(),
        item_size(&split.parent),
        &target,
        table.ttl.as_deref(),
        plan.steps.kind() == dynaslice_core::plan::WriteKind::Atomic,
    )?;
    let instead = update_instead(&table, stored.as_ref(), &item, &options)?;
    let read = dynaslice_core::plan::plan_read(&split.parent, &table.target(), true)?;
    let read_units = read.whole_read_units();
    let item_bytes = item_size(&item);
    let costs = dynaslice_core::plan::write_costs_to(&split, table.anchors.is_some()).by_mode();
    let prices = where_and_price(
        &table,
        args,
        &split,
        whole_to_s3,
        (plan.write_units(), read_units),
    );
    // What `put` would spend: the chunk plan's, or, for a payload in S3,
    // the parent's alone (the object's requests are priced in `prices`).
    let (mode, write_units, read_units, chunk_count) = match &prices.offload {
        Some(s3) => ("batch", s3.parent_write_units, s3.parent_read_units, 0),
        None => (mode, plan.write_units(), read_units, split.chunks.len()),
    };
    let in_chunks = if prices.offload.is_some() {
        "in chunks instead, "
    } else {
        ""
    };
    if json {
        let costs: serde_json::Map<String, serde_json::Value> = costs
            .iter()
            .map(|(mode, units)| (mode.name().to_string(), json!(units)))
            .collect();
        print_json(&json!({
            "itemBytes": item_bytes,
            "overLimitBy": item_bytes.saturating_sub(dynaslice_core::MAX_ITEM_BYTES),
            "mode": mode,
            "parentBytes": item_size(&split.parent),
            "chunks": chunk_count,
            "manifest": split.manifest.as_ref().map(manifest_to_json),
            "writeUnits": write_units,
            "replaces": stored.is_some(),
            "replaceWriteUnits": replace,
            "totalWriteUnits": write_units + replace,
            "costs": costs,
            "readUnits": read_units,
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
    } else {
        println!("item: {} ({item_bytes} bytes)", size(item_bytes as u64));
        match &split.manifest {
            Some(m) if prices.offload.is_some() => println!(
                "split: {} raw, {} stored ({}, one S3 object), version {}",
                size(m.total_raw_len()),
                size(m.total_stored_len()),
                m.codec.name(),
                m.version.to_text()
            ),
            Some(m) => println!("split: {}", manifest_text(m)),
            None => println!("fits one item: no split"),
        }
        match &prices.offload {
            Some(s3) => println!(
                "write: one S3 object ({}) and the parent, {write_units} WCU; read back: \
                 {read_units} RCU and {} (strongly consistent)",
                plural(s3.requests.writes, "request"),
                plural(s3.requests.reads, "GET"),
            ),
            None => println!(
                "write: {mode} mode, {write_units} WCU; read back: {read_units} RCU (strongly \
                 consistent)"
            ),
        }
        if stored.is_some() {
            println!(
                "replaces the stored item: +{replace} WCU (its larger parent, its chunks' \
                 deletes), {} WCU in all",
                write_units + replace
            );
        }
        if let Some((changes, plan)) = &instead {
            let mut what: Vec<String> = Vec::new();
            if !changes.set.is_empty() {
                let names: Vec<&str> = changes.set.keys().map(String::as_str).collect();
                what.push(format!("set {}", names.join(", ")));
            }
            if !changes.remove.is_empty() {
                what.push(format!("remove {}", changes.remove.join(", ")));
            }
            let how = match plan.path() {
                "parent" => "one UpdateItem of the parent".to_string(),
                _ => match plan.carried.len() {
                    0 => "a rewrite of every frame".to_string(),
                    n => format!(
                        "a rewrite reusing {n} unchanged group{}",
                        if n == 1 { "" } else { "s" }
                    ),
                },
            };
            println!(
                "an update instead ({}): {} WCU, {how}",
                what.join("; "),
                plan.write_units
            );
        }
        if !split.chunks.is_empty() {
            let each: Vec<String> = costs
                .iter()
                .map(|(mode, units)| match units {
                    Some(units) => format!("{} mode: {units} WCU", mode.name()),
                    None => format!("{} mode: does not fit one transaction", mode.name()),
                })
                .collect();
            println!("  {in_chunks}{}", each.join("; "));
        }
        for line in &prices.lines {
            println!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where `estimate`'s payload would live, and what each choice costs.
struct Priced {
    /// `"s3"`, `"chunks"` or `"item"`.
    stored_in: &'static str,
    /// What a `put` to S3 spends, when the payload goes there.
    offload: Option<Offload>,
    lines: Vec<String>,
    json: serde_json::Value,
}

/// A payload's write to S3: the object's requests and the parent's units.
struct Offload {
    requests: dynaslice_core::price::ObjectRequests,
    parent_write_units: u64,
    parent_read_units: f64,
}

/// `n` and `what`, plural when `n` is not 1.
fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Where a `put` of `split` would store its payload (in S3 when the table
/// keeps payloads there and a payload of at least the threshold is written:
/// a file, or an item `whole_to_s3`), and what a write, a strongly
/// consistent read and a month of storage cost in chunks and in S3, at
/// us-east-1 list prices.
fn where_and_price(
    table: &TableConfig,
    args: &PutArgs,
    split: &dynaslice_core::SplitItem,
    whole_to_s3: bool,
    (write_units, read_units): (u64, f64),
) -> Priced {
    use dynaslice_core::price::{US_EAST_1, object_requests};
    let p = US_EAST_1;
    let offloads = |m: &dynaslice_core::manifest::Manifest| {
        table.objects.as_ref().is_some_and(|o| {
            o.store.takes_payload(m.raw_len) && (args.file.is_some() || whole_to_s3)
        })
    };
    let Some(manifest) = split
        .manifest
        .as_ref()
        .filter(|m| m.inline.is_none() || offloads(m))
    else {
        let stored_in = "item";
        let json = json!({ "writeDollars": p.write_units(write_units) });
        return Priced {
            stored_in,
            offload: None,
            lines: Vec::new(),
            json,
        };
    };
    let chunk_bytes: u64 = split.chunks.iter().map(|c| item_size(c) as u64).sum();
    let chunks = json!({
        "writeDollars": p.write_units(write_units),
        "readDollars": p.read_units(read_units),
        "monthDollars": p.dynamodb_month(chunk_bytes + item_size(&split.parent) as u64),
    });
    let mut lines = vec![format!(
        "in chunks: write ${:.6}, read ${:.7}, a month of storage ${:.6} (us-east-1 list prices)",
        p.write_units(write_units),
        p.read_units(read_units),
        p.dynamodb_month(chunk_bytes + item_size(&split.parent) as u64),
    )];
    let Some(objects) = &table.objects else {
        let json = json!({ "chunks": chunks, "s3": null });
        return Priced {
            stored_in: "chunks",
            offload: None,
            lines,
            json,
        };
    };
    let requests = object_requests(manifest.stored_len, objects.store.part_bytes);
    let parent_units = dynaslice_core::write_units(item_size(&split.parent), false);
    let s3_write = p.s3_writes(requests.writes) + p.write_units(parent_units);
    let parent_read = dynaslice_core::read_units(
        item_size(&split.parent),
        dynaslice_core::ReadConsistency::Strong,
    );
    let s3_read = p.s3_reads(requests.reads) + p.read_units(parent_read);
    let s3_month =
        p.s3_month(manifest.stored_len) + p.dynamodb_month(item_size(&split.parent) as u64);
    let offloads = offloads(manifest);
    lines.push(format!(
        "in S3: write ${s3_write:.6} ({} + {parent_units} WRU), read ${s3_read:.7} ({}), a month ${s3_month:.6}",
        plural(requests.writes, "request"),
        plural(requests.reads, "GET"),
    ));
    lines.push(match offloads {
        true => format!(
            "stored in S3 (s3://{}/{}…): the payload is at least {} bytes",
            objects.store.bucket, objects.store.prefix, objects.store.threshold
        ),
        false
            if args.file.is_none()
                && args.mode.write_mode() == dynaslice_core::plan::WriteMode::Atomic =>
        {
            "stored in chunks: an item written in one transaction (--mode atomic) stays in DynamoDB"
                .to_string()
        }
        false => format!(
            "stored in chunks: the payload is under the S3 threshold of {} bytes",
            objects.store.threshold
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
    let stored_in = if offloads { "s3" } else { "chunks" };
    Priced {
        stored_in,
        offload: offloads.then_some(Offload {
            requests,
            parent_write_units: parent_units,
            parent_read_units: parent_read,
        }),
        lines,
        json,
    }
}

/// What an update making the stored item (its parent `stored`, as read)
/// into `item` would cost instead of an overwrite: the changes found
/// without reading the payload ([`dynaslice_core::plan::changes_to`]) and
/// the update's plan against that same parent (no second read). `None`
/// when nothing is stored, nothing changes, or the stored manifest does
/// not name its attributes.
fn update_instead(
    table: &TableConfig,
    stored: Option<&Item>,
    item: &Item,
    options: &PutOptions,
) -> Result<Option<(Changes, UpdatePlan)>, HostError> {
    let Some(stored) = stored else {
        return Ok(None);
    };
    let changes = dynaslice_core::plan::changes_to(stored, item, &table.key)
        .map_err(dynaslice_core::plan::PlanError::from)?;
    let Some(changes) = changes.filter(|c| !c.set.is_empty() || !c.remove.is_empty()) else {
        return Ok(None);
    };
    let core = table.core();
    changes
        .check(&core)
        .map_err(dynaslice_core::protocol::ProtocolError::from)?;
    let plan = dynaslice_core::plan::plan_update(
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

pub async fn get(client: &Client, args: &GetArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.item.table).await?;
    let key = key_from_args(&args.item.key, &table.key)?;
    let mut options = GetOptions::default();
    if let Some(max) = args.max_size {
        options.max_item_bytes = max;
    }
    options.version = args
        .version
        .as_deref()
        .map(super::history::version_arg)
        .transpose()?;
    let Some(path) = &args.out else {
        let bar = Bar::new("reading", true);
        let fetched = dynaslice_host::get(client, &table, &key, &options, &bar).await;
        bar.finish();
        let Some(fetched) = fetched? else {
            return not_found(&key, &table, json);
        };
        print_json(&item_to_json(&fetched.item));
        return Ok(ExitCode::SUCCESS);
    };
    let bar = Bar::new("reading", json);
    let streamed =
        dynaslice_host::get_file(client, &table, &key, &args.attribute, path, &options, &bar).await;
    bar.finish();
    let (bytes, read_units) = match streamed {
        Ok(Some(outcome)) => (outcome.bytes, outcome.consumed_read_units),
        Ok(None) => return not_found(&key, &table, json),
        // Not a stored file: the whole item as DynamoDB JSON, read whole.
        Err(HostError::Reassemble(
            ReassembleError::AttributeNotFound { .. } | ReassembleError::AttributeNotBlob { .. },
        )) => {
            let Some(fetched) = dynaslice_host::get(client, &table, &key, &options, &()).await?
            else {
                return not_found(&key, &table, json);
            };
            let text = item_to_json(&fetched.item).to_string();
            dynaslice_host::replace_file(path, text.as_bytes()).await?;
            (text.len() as u64, fetched.consumed_read_units)
        }
        Err(e) => return Err(e),
    };
    // With the payload on stdout (`--out -`), what is said goes to stderr.
    let stdout = super::is_stdout(path);
    if json {
        let document = json!({
            "key": item_to_json(&key),
            "file": path,
            "bytes": bytes,
            "consumedReadUnits": read_units,
        });
        print_json_to(&document, stdout);
    } else if path == Path::new("-") {
        eprintln!("wrote {} to standard output", size(bytes));
    } else if stdout {
        eprintln!("wrote {} to {}", size(bytes), path.display());
    } else {
        println!("wrote {} to {}", size(bytes), path.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn not_found(
    key: &Item,
    table: &TableConfig,
    json: bool,
) -> Result<ExitCode, HostError> {
    if json {
        print_json(
            &json!({ "error": { "code": Code::NotFound.as_str(), "message": format!("no item {} in {}", key_text(&table.key, key), table.table) } }),
        );
    } else {
        eprintln!(
            "dynaslice: no item {} in {} [NOT_FOUND]",
            key_text(&table.key, key),
            table.table
        );
    }
    Ok(ExitCode::from(1))
}

pub async fn rm(client: &Client, args: &KeyArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let key = key_from_args(&args.key, &table.key)?;
    let options = PutOptions::default();
    let outcome = dynaslice_host::delete(client, &table, &key, &options).await?;
    if !outcome.existed {
        return not_found(&key, &table, json);
    }
    if json {
        print_json(&outcome.to_json(&key));
    } else {
        let object = if outcome.object_deleted {
            " and its S3 object"
        } else {
            ""
        };
        println!(
            "deleted {} and {} chunks{object}",
            key_text(&table.key, &key),
            outcome.chunks_deleted
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn ls(client: &Client, args: &TableArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let items = dynaslice_host::list(client, &table).await?;
    if json {
        let rows: Vec<_> = items
            .iter()
            .map(dynaslice_host::StoredItem::to_json)
            .collect();
        print_json(&json!({ "items": rows }));
    } else {
        for i in &items {
            let what = i.manifest.as_ref().map_or(
                format!("{} (one item)", size(i.parent_bytes as u64)),
                manifest_text,
            );
            println!("{}\t{what}", key_text(&table.key, &i.key));
        }
        println!(
            "{} item{}",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn inspect(client: &Client, args: &KeyArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let key = key_from_args(&args.key, &table.key)?;
    let Some(found) = dynaslice_host::inspect(client, &table, &key).await? else {
        return not_found(&key, &table, json);
    };
    if json {
        print_json(&found.to_json(&key));
    } else {
        println!(
            "item {} in {} ({} layout, chunks in {})",
            key_text(&table.key, &key),
            args.table,
            found.layout,
            found.chunk_table
        );
        println!("parent: {}", size(found.parent_bytes as u64));
        match &found.manifest {
            Some(m) => println!("payload: {}", manifest_text(m)),
            None => println!("payload: none (a plain item)"),
        }
        for (seq, c) in found.chunks.iter().enumerate() {
            println!(
                "  chunk {seq}: {} ({} of data)",
                size(c.item_bytes as u64),
                size(c.data_bytes)
            );
        }
        println!(
            "capacity: {} RCU to read (strongly consistent), {} WCU to write",
            found.read_units, found.write_units
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn key_attribute(spec: &str) -> Result<(String, KeyType), HostError> {
    let (name, kind) = spec.split_once(':').unwrap_or((spec, "S"));
    let kind = match kind {
        "S" | "s" => KeyType::S,
        "N" | "n" => KeyType::N,
        "B" | "b" => KeyType::B,
        other => {
            return Err(HostError::Input(format!(
                "key type {other} is not S, N or B"
            )));
        }
    };
    if name.is_empty() {
        return Err(HostError::Input("a key attribute needs a name".into()));
    }
    Ok((name.to_string(), kind))
}

pub async fn create(client: &Client, args: &CreateArgs, json: bool) -> Result<ExitCode, HostError> {
    let (name, kind) = key_attribute(&args.partition_key)?;
    let mut key = KeySchema::partition(name, kind);
    if let Some(sort) = &args.sort_key {
        let (name, kind) = key_attribute(sort)?;
        key = key.with_sort(name, kind);
    }
    let layout = match args.layout {
        LayoutArg::Table => LayoutKind::ChunkTable,
        LayoutArg::Collection => LayoutKind::ItemCollection,
    };
    let mut table = TableConfig::new(&args.table, key, layout);
    table.ttl = args.ttl.clone();
    create_tables(client, &table).await?;
    if json {
        print_json(
            &json!({ "table": table.table, "chunkTable": table.chunk_table, "layout": table.layout.name(), "ttl": table.ttl }),
        );
    } else {
        let ttl = table
            .ttl
            .as_ref()
            .map_or(String::new(), |attribute| format!("; TTL on {attribute}"));
        println!(
            "created {} (chunks in {}, {} layout{ttl})",
            table.table,
            table.chunk_table,
            table.layout.name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn anchors(client: &Client, args: &TableArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let added = dynaslice_host::add_anchors(client, &table).await?;
    if json {
        print_json(
            &json!({ "table": table.table, "indexedTable": table.chunk_table, "added": added }),
        );
    } else if added {
        println!(
            "added the anchors index to {}; run `dynaslice gc --scan -t {}` once for chunks \
             written before anchors",
            table.chunk_table, table.table
        );
    } else {
        println!("{} has the anchors index already", table.chunk_table);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn serve(client: &Client, args: &ServeArgs) -> Result<ExitCode, HostError> {
    if args.listen.ip().is_unspecified() || !args.listen.ip().is_loopback() {
        eprintln!(
            "dynaslice: warning: listening on {}, not only this machine",
            args.listen.ip()
        );
    }
    let mut tables = std::collections::BTreeMap::new();
    for name in &args.tables {
        let table = match super::discover(client, name).await {
            Ok(table) => table,
            Err(e) if e.code() == Code::TableNotFound => {
                let table = TableConfig::new(
                    name,
                    KeySchema::partition("pk", KeyType::S),
                    LayoutKind::ChunkTable,
                );
                create_tables(client, &table).await?;
                eprintln!("created table {name} (chunks in {})", table.chunk_table);
                // As described now, with the command line's S3 store.
                super::discover(client, name).await?
            }
            Err(e) => return Err(e),
        };
        tables.insert(name.to_string(), table);
    }
    for (what, dir) in [("--www", &args.www), ("--pkg", &args.pkg)] {
        if !dir.is_dir() {
            return Err(HostError::Input(format!(
                "{what} {} is not a folder (run from the repository root)",
                dir.display()
            )));
        }
    }
    // A fixed token comes from the environment only: a command line is
    // readable by every local user (/proc/<pid>/cmdline).
    let token = match std::env::var("DYNASLICE_TOKEN") {
        Ok(token) if !token.is_empty() => token,
        _ => dynaslice_host::serve::fresh_token()?,
    };
    let config = dynaslice_host::serve::ServeConfig {
        tables,
        key_prefix: args.key_prefix.clone(),
        max_item_bytes: args.max_item_bytes,
        www: args.www.clone(),
        pkg: args.pkg.clone(),
        token: token.clone(),
        allowed_hosts: args.allow_hosts.clone(),
        limits: dynaslice_host::serve::ServeLimits {
            max_uploads: args.max_uploads,
            max_reads: args.max_reads,
            body_idle_timeout: args.body_idle_timeout,
            ..Default::default()
        },
        embedded_s3: super::embedded_s3(),
    };
    let shutdown = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
        }
    };
    dynaslice_host::serve::serve(
        client.clone(),
        config,
        args.listen,
        |addr| {
            use std::io::Write;
            // The token travels in the fragment, which browsers never send:
            // the page reads it and keeps it for this tab.
            println!("dynaslice serving http://{addr}/#token={token}");
            let _ = std::io::stdout().flush();
        },
        shutdown,
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}
