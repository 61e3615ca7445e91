//! `import` and `export`: JSON Lines in and out. An import writes many
//! items at once (the library's `put_many`), reports each line it could
//! not store with its number and code, and keeps a checkpoint beside its
//! input (the last line below which every line is done) so `--resume`
//! skips what a crashed run stored.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_host::json::{item_from_json, item_from_plain_json, item_to_json};
use dynaslice_host::{ExportMark, HostError, ManyOptions, ManyReport, Progress, QueryOptions};
use serde_json::json;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

use super::args::{ExportArgs, ImportArgs, LineFormat};
use super::commands::payload_source;
use super::output::{Bar, print_json, print_json_to, save, size};
use super::rate::{self, Spends};

/// How often the checkpoint is saved while an import runs.
pub(super) const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// One line read: its bytes (without the newline), or its length when it
/// was longer than the limit (and skipped to its end).
enum Line {
    Text(Vec<u8>),
    TooLong(u64),
}

/// The next line of `reader`, at most `max` bytes held; `None` at the end.
async fn next_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut len = 0u64;
    let mut started = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (started, len as usize > max) {
                (false, _) => None,
                (true, true) => Some(Line::TooLong(len)),
                (true, false) => Some(Line::Text(line)),
            });
        }
        started = true;
        let (piece, end) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        len += piece.len() as u64;
        if len as usize <= max {
            line.extend_from_slice(piece);
        } else {
            line = Vec::new();
        }
        let used = end.unwrap_or(piece.len());
        reader.consume(used);
        if end.is_some() {
            return Ok(Some(match len as usize > max {
                true => Line::TooLong(len),
                false => Line::Text(line),
            }));
        }
    }
}

/// Which lines (or files) are done: every one up to `through`, and those
/// in `after`.
#[derive(Default)]
pub(super) struct Done {
    pub(super) through: u64,
    after: BTreeSet<u64>,
}

impl Done {
    pub(super) fn mark(&mut self, line: u64) {
        self.after.insert(line);
        while self.after.remove(&(self.through + 1)) {
            self.through += 1;
        }
    }
}

pub(super) fn checkpoint_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".dynaslice-import");
    PathBuf::from(name)
}

/// What an earlier import saved in its checkpoint (`null` when there is
/// none), once it is known to be an import into `table`.
pub(super) fn read_checkpoint(path: &Path, table: &str) -> Result<serde_json::Value, HostError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(serde_json::Value::Null),
        Err(e) => return Err(HostError::io(path.display(), e)),
    };
    let saved: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| HostError::Input(format!("{} is not a checkpoint: {e}", path.display())))?;
    if saved["table"].as_str() != Some(table) {
        return Err(HostError::Input(format!(
            "{} is a checkpoint of an import into {}, not {table}",
            path.display(),
            saved["table"]
        )));
    }
    Ok(saved)
}

/// The line an earlier import got through, from its checkpoint.
fn read_line_checkpoint(path: &Path, table: &str) -> Result<u64, HostError> {
    let saved = read_checkpoint(path, table)?;
    if saved.is_null() {
        return Ok(0);
    }
    saved["through"].as_u64().ok_or_else(|| {
        HostError::Input(format!(
            "{} is not a checkpoint: no line number",
            path.display()
        ))
    })
}

fn write_checkpoint(path: &Path, table: &str, through: u64) -> Result<(), HostError> {
    save(
        path,
        &json!({ "table": table, "through": through }).to_string(),
    )
}

fn item_of(line: &[u8], format: LineFormat) -> Result<Item, HostError> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| HostError::Input(format!("not JSON: {e}")))?;
    match format {
        LineFormat::Dynamodb => item_from_json(&value),
        LineFormat::Plain => item_from_plain_json(&value),
    }
}

pub async fn import(client: &Client, args: &ImportArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table.table).await?;
    let file = match (&args.file, &args.folder) {
        (_, Some(folder)) => {
            return super::import_folder::import(client, &table, args, folder, json).await;
        }
        (Some(file), None) => file,
        (None, None) => return Err(HostError::Input("give --file or --folder".into())),
    };
    let stdin = file == Path::new("-");
    if stdin && args.resume {
        return Err(HostError::Input(
            "--resume needs a file: standard input cannot be read again".into(),
        ));
    }
    let checkpoint = checkpoint_path(file);
    let skip = match args.resume {
        true => read_line_checkpoint(&checkpoint, &table.table)?,
        false => 0,
    };
    let (reader, total) = payload_source(file).await?;
    let bar = Bar::new("importing", json);
    bar.start(total.unwrap_or(0));
    let options = ManyOptions {
        in_flight: args.in_flight.max(1),
        max_units_per_second: rate::units(client, &table, args.rate_limit, Spends::Writes).await?,
        ..ManyOptions::default()
    };
    // The reader and the writes share the count of done lines; both run on
    // this task (put_many polls the reader between writes).
    let done = RefCell::new(Done::default());
    let lengths = RefCell::new(HashMap::new());
    let max_line = args.max_line;
    let format = args.format;
    let read_failed = RefCell::new(None);
    let lines = futures::stream::unfold(
        (BufReader::new(reader), 0u64),
        |(mut reader, mut number)| {
            let (done, lengths, read_failed, bar) = (&done, &lengths, &read_failed, &bar);
            async move {
                loop {
                    let line = match next_line(&mut reader, max_line).await {
                        Ok(Some(line)) => line,
                        Ok(None) => return None,
                        Err(e) => {
                            *read_failed.borrow_mut() = Some(e);
                            return None;
                        }
                    };
                    number += 1;
                    let (item, len) = match line {
                        Line::TooLong(len) => {
                            let error = HostError::Input(format!(
                                "the line is {len} bytes, over --max-line {max_line}"
                            ));
                            (Err(error), len)
                        }
                        Line::Text(text) => {
                            let len = text.len() as u64;
                            if number <= skip || text.iter().all(u8::is_ascii_whitespace) {
                                done.borrow_mut().mark(number);
                                bar.advance(len + 1);
                                continue;
                            }
                            (item_of(&text, format), len)
                        }
                    };
                    lengths.borrow_mut().insert(number, len + 1);
                    return Some(((number, item), (reader, number)));
                }
            }
        },
    );
    let mut failures = Vec::new();
    let mut saved = Instant::now();
    let report = dynaslice_host::put_many(client, &table, lines, &options, |number, outcome| {
        if let Err(error) = outcome {
            let code = error.code();
            if json {
                failures.push(
                    json!({ "line": number, "code": code.as_str(), "message": error.to_string() }),
                );
            } else {
                bar.say(&format!("line {number}: {error} [{code}]"));
            }
        }
        done.borrow_mut().mark(number);
        if let Some(len) = lengths.borrow_mut().remove(&number) {
            bar.advance(len);
        }
        if !stdin && saved.elapsed() >= CHECKPOINT_EVERY {
            saved = Instant::now();
            if let Err(e) = write_checkpoint(&checkpoint, &table.table, done.borrow().through) {
                bar.say(&format!("dynaslice: warning: {e}"));
            }
        }
    })
    .await;
    bar.finish();
    if let Some(e) = read_failed.into_inner() {
        if !stdin {
            write_checkpoint(&checkpoint, &table.table, done.borrow().through)?;
        }
        return Err(HostError::io(file.display(), e));
    }
    if !stdin {
        // Done: nothing to resume.
        let _ = std::fs::remove_file(&checkpoint);
    }
    Ok(summary(
        json,
        &table.table,
        &report,
        failures,
        skip,
        "lines",
    ))
}

/// Prints what an import did (`failures`: the JSON of each failed line or
/// file; `skipped` of `unit` were stored by an earlier run); its exit code.
pub(super) fn summary(
    json: bool,
    table: &str,
    report: &ManyReport,
    failures: Vec<serde_json::Value>,
    skipped: u64,
    unit: &str,
) -> ExitCode {
    if json {
        print_json(&json!({
            "imported": report.written,
            "failed": failures,
            "skipped": skipped,
            "bytesWritten": report.bytes_written,
            "consumedWriteUnits": report.consumed_write_units,
        }));
    } else {
        println!(
            "imported {} items into {table} ({}, {:.0} WCU); {} failed{}",
            report.written,
            size(report.bytes_written),
            report.consumed_write_units,
            report.failed,
            match skipped {
                0 => String::new(),
                n => format!("; {n} {unit} skipped, stored by an earlier run"),
            }
        );
    }
    match report.failed {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

/// Where an export keeps its checkpoint: beside its output.
fn export_checkpoint(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".dynaslice-export");
    PathBuf::from(name)
}

/// Where an earlier export into `out` got to, from its checkpoint.
fn read_export_checkpoint(path: &Path, table: &str) -> Result<ExportMark, HostError> {
    let bad = |why: String| {
        HostError::Input(format!(
            "{} is not a checkpoint of an export of {table}: {why}",
            path.display()
        ))
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad("there is none to resume".into()));
        }
        Err(e) => return Err(HostError::io(path.display(), e)),
    };
    let saved: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if saved["table"].as_str() != Some(table) {
        return Err(bad(format!("it is of {}", saved["table"])));
    }
    let bytes = saved["bytes"]
        .as_u64()
        .ok_or_else(|| bad("no byte count".into()))?;
    let start = match &saved["start"] {
        serde_json::Value::Null => None,
        key => Some(item_from_json(key).map_err(|e| bad(e.to_string()))?),
    };
    Ok(ExportMark { bytes, start })
}

pub async fn export(client: &Client, args: &ExportArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table.table).await?;
    let options = QueryOptions {
        concurrency: args.concurrency.max(1),
        max_units_per_second: rate::units(client, &table, args.rate_limit, Spends::Reads).await?,
        ..QueryOptions::default()
    };
    let stdout = super::is_stdout(&args.out);
    if stdout && args.resume {
        return Err(HostError::Input(
            "--resume needs a file: what went to standard output cannot be continued".into(),
        ));
    }
    let bar = Bar::new("exporting", json || stdout);
    let outcome = match stdout {
        true => dynaslice_host::export(client, &table, &args.out, &options, &bar).await,
        false => {
            let checkpoint = export_checkpoint(&args.out);
            let from = match args.resume {
                true => Some(read_export_checkpoint(&checkpoint, &table.table)?),
                // A fresh export: an older run's checkpoint names bytes of
                // another file.
                false => {
                    match std::fs::remove_file(&checkpoint) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(HostError::io(checkpoint.display(), e));
                        }
                        _ => {}
                    }
                    None
                }
            };
            let mut saved = Instant::now();
            let save_mark = |mark: &ExportMark| {
                if saved.elapsed() < CHECKPOINT_EVERY {
                    return Ok(());
                }
                saved = Instant::now();
                let start = mark.start.as_ref().map(item_to_json);
                let document = json!({ "table": table.table, "bytes": mark.bytes, "start": start });
                save(&checkpoint, &document.to_string())
            };
            let outcome = dynaslice_host::export_resumable(
                client, &table, &args.out, &options, from, save_mark, &bar,
            )
            .await;
            if outcome.is_ok() {
                // Done: nothing to resume.
                let _ = std::fs::remove_file(&checkpoint);
            }
            outcome
        }
    };
    bar.finish();
    let outcome = outcome?;
    if json {
        let document = json!({
            "items": outcome.items,
            "virtualItems": outcome.virtual_items,
            "chunksSkipped": outcome.chunks_skipped,
            "consumedReadUnits": outcome.consumed.read,
        });
        print_json_to(&document, stdout);
    } else {
        let text = format!(
            "exported {} items ({} virtual) from {}; {} chunk items skipped",
            outcome.items, outcome.virtual_items, table.table, outcome.chunks_skipped
        );
        match stdout {
            true => eprintln!("{text}"),
            false => println!("{text}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
