//! `import --folder`: each regular file in a folder, or below it, stored as
//! an item (its path from the folder the partition key, its bytes a binary
//! attribute), many at once through the library's `put_many`. Files go in
//! the order of their paths; the checkpoint beside the folder
//! (`<folder>.dynaslice-import`) names the last path below which every
//! file is done, so `--resume` skips them even when files were added since.

use std::cell::RefCell;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use dynaslice_core::{AttributeValue, Item, KeyType};
use dynaslice_host::{HostError, ManyOptions, Progress, TableConfig};
use futures::StreamExt;
use serde_json::json;

use super::args::ImportArgs;
use super::bulk::{Done, checkpoint_path, read_checkpoint, summary};
use super::output::{Bar, save};
use super::rate::{self, Spends};

/// How often the checkpoint is saved while an import runs.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// A file to store: its key (the path from the folder, `/` between
/// names) and its size.
struct Entry {
    key: String,
    len: u64,
}

/// Every regular file in `folder` or below it, in the order of their keys.
fn files(folder: &Path) -> Result<Vec<Entry>, HostError> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(folder).follow_links(false) {
        let entry = entry.map_err(|e| {
            let at = e.path().unwrap_or(folder).display().to_string();
            HostError::io(at, e.into())
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(folder).unwrap_or(entry.path());
        let parts: Option<Vec<&str>> = relative.iter().map(|part| part.to_str()).collect();
        let Some(parts) = parts else {
            return Err(HostError::Input(format!(
                "{} is not UTF-8: it cannot be a string key",
                entry.path().display()
            )));
        };
        let len = entry
            .metadata()
            .map_err(|e| HostError::io(entry.path().display(), e.into()))?
            .len();
        found.push(Entry {
            key: parts.join("/"),
            len,
        });
    }
    found.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(found)
}

fn write_checkpoint(path: &Path, table: &str, through: Option<&str>) -> Result<(), HostError> {
    save(
        path,
        &json!({ "table": table, "throughPath": through }).to_string(),
    )
}

pub async fn import(
    client: &Client,
    table: &TableConfig,
    args: &ImportArgs,
    folder: &Path,
    json: bool,
) -> Result<ExitCode, HostError> {
    let key_name = match (&table.key.partition.key_type, &table.key.sort) {
        (KeyType::S, None) => table.key.partition.name.clone(),
        _ => {
            return Err(HostError::Input(format!(
                "a folder is imported into a table whose key is one string partition key; {} \
                 has the partition key {} ({:?}){}",
                table.table,
                table.key.partition.name,
                table.key.partition.key_type,
                match &table.key.sort {
                    Some(sort) => format!(" and the sort key {}", sort.name),
                    None => String::new(),
                }
            )));
        }
    };
    let checkpoint = checkpoint_path(folder);
    let after = match args.resume {
        true => {
            let saved = read_checkpoint(&checkpoint, &table.table)?;
            saved["throughPath"].as_str().map(str::to_owned)
        }
        false => None,
    };
    let all = files(folder)?;
    let (skipped, entries): (Vec<Entry>, Vec<Entry>) = all
        .into_iter()
        .partition(|e| after.as_deref().is_some_and(|a| e.key.as_str() <= a));
    let bar = Bar::new("importing", json);
    bar.start(entries.iter().map(|e| e.len).sum());
    let options = ManyOptions {
        in_flight: args.in_flight.max(1),
        max_units_per_second: rate::units(client, table, args.rate_limit, Spends::Writes).await?,
        ..ManyOptions::default()
    };
    let done = RefCell::new(Done::default());
    let (max_size, attribute) = (args.max_size, &args.attribute);
    let items = futures::stream::iter(entries.iter().enumerate()).then(|(at, entry)| {
        let key_name = &key_name;
        async move {
            let path = folder.join(&entry.key);
            let item = match entry.len > max_size {
                true => Err(HostError::Input(format!(
                    "the file is {} bytes, over --max-size {max_size}: store it with put --file, \
                     which streams it",
                    entry.len
                ))),
                false => tokio::fs::read(&path)
                    .await
                    .map_err(|e| HostError::io(path.display(), e))
                    .map(|bytes| {
                        Item::from([
                            (key_name.clone(), AttributeValue::S(entry.key.clone())),
                            (attribute.clone(), AttributeValue::B(bytes)),
                        ])
                    }),
            };
            (at as u64 + 1, item)
        }
    });
    let mut failures = Vec::new();
    let mut saved = Instant::now();
    let through = |done: &Done| match done.through {
        0 => after.clone(),
        n => Some(entries[n as usize - 1].key.clone()),
    };
    let report = dynaslice_host::put_many(client, table, items, &options, |number, outcome| {
        let entry = &entries[number as usize - 1];
        if let Err(error) = outcome {
            let code = error.code();
            if json {
                failures.push(json!({
                    "file": entry.key, "code": code.as_str(), "message": error.to_string(),
                }));
            } else {
                bar.say(&format!("file {}: {error} [{code}]", entry.key));
            }
        }
        done.borrow_mut().mark(number);
        bar.advance(entry.len);
        if saved.elapsed() >= CHECKPOINT_EVERY {
            saved = Instant::now();
            let at = through(&done.borrow());
            if let Err(e) = write_checkpoint(&checkpoint, &table.table, at.as_deref()) {
                bar.say(&format!("dynaslice: warning: {e}"));
            }
        }
    })
    .await;
    bar.finish();
    // Done: nothing to resume.
    let _ = std::fs::remove_file(&checkpoint);
    let skipped = skipped.len() as u64;
    Ok(summary(
        json,
        &table.table,
        &report,
        failures,
        skipped,
        "files",
    ))
}
