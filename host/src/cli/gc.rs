//! `gc`: unreferenced chunks deleted a page at a time, in segments at once,
//! at a rate, resumable from a cursor file, with progress against the
//! chunk table's estimated size.

use std::path::Path;
use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_host::json::{item_from_json, item_to_json};
use dynaslice_host::{GcOptions, GcPage, HostError, TableConfig};
use serde_json::{Value, json};

use super::args::GcArgs;
use super::output::{Bar, print_json, save};

/// Where each segment of a run got to: not started (`None`), at a key, or
/// done.
#[derive(Clone, Debug, PartialEq)]
enum Mark {
    From(Option<Item>),
    Done,
}

fn read_cursor(path: &Path, table: &str, segments: u32) -> Result<Vec<Mark>, HostError> {
    let fresh = vec![Mark::From(None); segments as usize];
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fresh),
        Err(e) => return Err(HostError::io(path.display(), e)),
    };
    let bad = |why: &str| {
        HostError::Input(format!(
            "{} is not a gc cursor of {table}: {why}",
            path.display()
        ))
    };
    let saved: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    if saved["table"].as_str() != Some(table) {
        return Err(bad("it is another table's"));
    }
    let marks = saved["segments"]
        .as_array()
        .ok_or_else(|| bad("no segments"))?;
    if marks.len() != segments as usize {
        return Err(bad(&format!(
            "it has {} segments; run with --segments {}",
            marks.len(),
            marks.len()
        )));
    }
    marks
        .iter()
        .map(|mark| match mark {
            Value::Null => Ok(Mark::From(None)),
            Value::String(s) if s == "done" => Ok(Mark::Done),
            key => Ok(Mark::From(Some(
                item_from_json(key).map_err(|e| bad(&e.to_string()))?,
            ))),
        })
        .collect()
}

fn write_cursor(path: &Path, table: &str, marks: &[Mark]) -> Result<(), HostError> {
    let segments: Vec<Value> = marks
        .iter()
        .map(|mark| match mark {
            Mark::From(None) => Value::Null,
            Mark::From(Some(key)) => item_to_json(key),
            Mark::Done => json!("done"),
        })
        .collect();
    save(
        path,
        &json!({ "table": table, "segments": segments }).to_string(),
    )
}

/// The chunk table's item count as DynamoDB last estimated it (updated
/// about every six hours on AWS); 0 when unknown.
async fn estimated_chunks(client: &Client, table: &TableConfig) -> u64 {
    let described = client
        .describe_table()
        .table_name(&table.chunk_table)
        .send()
        .await;
    described
        .ok()
        .and_then(|d| d.table)
        .and_then(|t| t.item_count)
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

pub async fn gc(client: &Client, args: &GcArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = TableConfig::discover(client, &args.table.table).await?;
    let mut marks = match &args.cursor {
        Some(path) => read_cursor(path, &table.table, args.segments)?,
        None => vec![Mark::From(None); args.segments as usize],
    };
    let options = GcOptions {
        grace: args.grace,
        dry_run: args.dry_run,
        max_units_per_second: args.rate_limit,
        ..GcOptions::default()
    };
    let bar = Bar::counting(
        "collecting",
        "chunks",
        estimated_chunks(client, &table).await,
        json,
    );
    // Segments already done are not run again; the others start where they
    // got to (a run with one segment uses no Segment parameter at all).
    let starts: Vec<(u32, Option<Item>)> = marks
        .iter()
        .enumerate()
        .filter_map(|(i, mark)| match mark {
            Mark::From(start) => Some((i as u32, start.clone())),
            Mark::Done => None,
        })
        .collect();
    let mut seen = vec![0u64; marks.len()];
    let mut failed_save = None;
    let report = {
        let on_page = |page: GcPage<'_>| {
            let at = page.segment as usize;
            seen[at] = page.report.chunks as u64;
            bar.set(seen.iter().sum());
            marks[at] = match page.cursor {
                Some(key) => Mark::From(Some(key.clone())),
                None => Mark::Done,
            };
            if let Some(path) = &args.cursor
                && let Err(e) = write_cursor(path, &table.table, &marks)
            {
                failed_save = Some(e);
            }
        };
        let total = args.segments;
        dynaslice_host::gc_segments(client, &table, &options, total, starts, on_page).await
    };
    bar.finish();
    if let Some(e) = failed_save {
        return Err(e);
    }
    let report = report?;
    if let Some(path) = &args.cursor {
        let _ = std::fs::remove_file(path);
    }
    if json {
        print_json(&json!({
            "chunks": report.chunks, "referenced": report.referenced,
            "kept": report.kept, "young": report.young, "deleted": report.deleted,
            "dryRun": args.dry_run,
            "unreadable": report.unreadable,
            "unreadableParents": report.unreadable_parents.iter()
                .map(|(key, why)| json!({ "key": item_to_json(key), "error": why }))
                .collect::<Vec<_>>(),
            "consumedReadUnits": report.consumed.read,
            "consumedWriteUnits": report.consumed.write,
        }));
    } else {
        let verb = if args.dry_run {
            "would delete"
        } else {
            "deleted"
        };
        println!(
            "{} chunks: {} referenced, {} of kept versions, {} unreferenced but younger than {}, \
             {verb} {}",
            report.chunks,
            report.referenced,
            report.kept,
            report.young,
            humantime::format_duration(args.grace),
            report.deleted
        );
        for (key, why) in &report.unreadable_parents {
            eprintln!(
                "dynaslice: kept every chunk of {}: its manifest cannot be read: {why}",
                item_to_json(key)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
