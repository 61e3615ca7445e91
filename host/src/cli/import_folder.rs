//! `import --folder`: each regular file in a folder, or below it, stored as
//! an item (its path from the folder the partition key, its bytes a binary
//! attribute), many at once through the library's `put_many`. Files go in
//! the order of their paths; the checkpoint beside the folder
//! (`<folder>.dynaslice-import`) names the last path below which every
//! file is done, so `--resume` skips them even when files were added since.
//! A file whose name is not UTF-8 is reported, as a file that cannot be
//! stored is, and the rest go in.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use aws_sdk_dynamodb::Client;
use dynaslice_core::{AttributeValue, Item, KeyType};
use dynaslice_host::{HostError, ManyOptions, Progress, TableConfig};
use futures::StreamExt;
use serde_json::json;

use super::args::ImportArgs;
use super::bulk::{CHECKPOINT_EVERY, Done, checkpoint_path, read_checkpoint, summary};
use super::output::{Bar, save};
use super::rate::{self, Spends};

/// A file to store: its key (the path from the folder, `/` between
/// names) and its size.
struct Entry {
    key: String,
    len: u64,
}

/// Every regular file in `folder` or below it, in the order of their keys;
/// and the paths of those whose names are not UTF-8 (no string key).
fn files(folder: &Path) -> Result<(Vec<Entry>, Vec<String>), HostError> {
    let mut found = Vec::new();
    let mut unnamed = Vec::new();
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
            unnamed.push(relative.to_string_lossy().into_owned());
            continue;
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
    Ok((found, unnamed))
}

/// Where an import of `folder` keeps its checkpoint: beside the folder
/// (`docs.dynaslice-import` for `docs/`, `.` and `..` resolved), never in
/// it, where it would be imported too.
fn folder_checkpoint(folder: &Path) -> Result<PathBuf, HostError> {
    let resolved = std::fs::canonicalize(folder).map_err(|e| HostError::io(folder.display(), e))?;
    match (resolved.parent(), resolved.file_name()) {
        (Some(parent), Some(name)) => Ok(checkpoint_path(&parent.join(name))),
        _ => Err(HostError::Input(format!(
            "{} has no folder above it to keep the import's checkpoint in: import a folder \
             below it",
            resolved.display()
        ))),
    }
}

/// The bytes of the file at `path`, at most `max` of them held: a file
/// that grew past the limit since it was listed is reported, not read whole.
async fn read_at_most(path: &Path, max: u64) -> Result<Vec<u8>, HostError> {
    use tokio::io::AsyncReadExt;
    let failed = |e| HostError::io(path.display(), e);
    let file = tokio::fs::File::open(path).await.map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .await
        .map_err(failed)?;
    if bytes.len() as u64 > max {
        return Err(HostError::Input(format!(
            "the file grew past --max-size {max} since it was listed: store it with put --file, \
             which streams it"
        )));
    }
    Ok(bytes)
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
    let checkpoint = folder_checkpoint(folder)?;
    let after = match args.resume {
        true => {
            let saved = read_checkpoint(&checkpoint, &table.table)?;
            saved["throughPath"].as_str().map(str::to_owned)
        }
        false => None,
    };
    let (all, unnamed) = files(folder)?;
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
                false => read_at_most(&path, max_size).await.map(|bytes| {
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
    for path in &unnamed {
        let message = "its name is not UTF-8, so it cannot be a string key";
        match json {
            true => {
                failures.push(json!({ "file": path, "code": "INPUT_INVALID", "message": message }))
            }
            false => bar.say(&format!("file {path}: {message} [INPUT_INVALID]")),
        }
    }
    let mut saved = Instant::now();
    let through = |done: &Done| match done.through {
        0 => after.clone(),
        n => Some(entries[n as usize - 1].key.clone()),
    };
    let mut report = dynaslice_host::put_many(client, table, items, &options, |number, outcome| {
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
    report.failed += unnamed.len() as u64;
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
