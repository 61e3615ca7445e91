//! One function per command: parse the arguments, call the library, print.

use std::path::Path;
use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Code;
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::plan::{Precondition, WriteMode};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, ReassembleError, SplitError, VersionId,
};
use dynaslice_host::json::{item_from_json, item_to_json, key_from_args, key_text};
use dynaslice_host::{
    GetOptions, HostError, LayoutKind, OutcomeJson, PutOptions, TableConfig, create_tables,
};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::args::{
    CodecArg, CreateArgs, GetArgs, KeyArgs, LayoutArg, PutArgs, PutCommand, ServeArgs, TableArgs,
};
use super::output::{Bar, manifest_text, print_json, print_json_to, size};

pub(super) fn put_options(args: &PutArgs) -> Result<PutOptions, HostError> {
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
pub(super) async fn read_payload(path: &Path, max: usize) -> Result<Vec<u8>, HostError> {
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
pub(super) fn json_item(text: &str, key: &Item) -> Result<Item, HostError> {
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
