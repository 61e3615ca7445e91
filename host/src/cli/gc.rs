//! `gc`: unreferenced chunks deleted a page at a time, in segments at once,
//! at a rate, resumable from a cursor file, with progress against the
//! estimated size of what it scans: the anchors index when the table has
//! one (docs/FORMAT.md section 6, "Anchors"), else the chunk table.

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

/// What a run scans, as its cursor file names it: keys of one are no start
/// in the other.
fn source(anchors: &Option<String>) -> &'static str {
    match anchors {
        Some(_) => "anchors",
        None => "chunks",
    }
}

fn read_cursor(
    path: &Path,
    table: &str,
    anchors: &Option<String>,
    segments: u32,
) -> Result<Vec<Mark>, HostError> {
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
    if saved["scans"].as_str() != Some(source(anchors)) {
        return Err(bad(match anchors {
            Some(_) => "it is a cursor of a run with --scan; run with --scan",
            None => "it is a cursor of a run over the anchors index; run without --scan",
        }));
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

fn write_cursor(
    path: &Path,
    table: &str,
    anchors: &Option<String>,
    marks: &[Mark],
) -> Result<(), HostError> {
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
        &json!({ "table": table, "scans": source(anchors), "segments": segments }).to_string(),
    )
}

/// The item count of what a run scans (the anchors index, or the chunk
/// table) as DynamoDB last estimated it (updated about every six hours on
/// AWS); 0 when unknown.
async fn estimated_items(client: &Client, table: &TableConfig, anchors: &Option<String>) -> u64 {
    let described = client
        .describe_table()
        .table_name(&table.chunk_table)
        .send()
        .await;
    let described = described.ok().and_then(|d| d.table);
    let count = match anchors {
        Some(index) => described.and_then(|t| {
            t.global_secondary_indexes
                .unwrap_or_default()
                .into_iter()
                .find(|i| i.index_name() == Some(index))
                .and_then(|i| i.item_count)
        }),
        None => described.and_then(|t| t.item_count),
    };
    count.and_then(|n| u64::try_from(n).ok()).unwrap_or(0)
}

pub async fn gc(client: &Client, args: &GcArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = TableConfig::discover(client, &args.table.table).await?;
    let anchors = table.anchors.clone().filter(|_| !args.scan);
    let mut marks = match &args.cursor {
        Some(path) => read_cursor(path, &table.table, &anchors, args.segments)?,
        None => vec![Mark::From(None); args.segments as usize],
    };
    let options = GcOptions {
        grace: args.grace,
        dry_run: args.dry_run,
        max_units_per_second: args.rate_limit,
        every_chunk: args.scan,
        ..GcOptions::default()
    };
    let unit = match anchors {
        Some(_) => "anchors",
        None => "chunks",
    };
    let bar = Bar::counting(
        "collecting",
        unit,
        estimated_items(client, &table, &anchors).await,
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
                && let Err(e) = write_cursor(path, &table.table, &anchors, &marks)
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
            "scanned": unit,
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
        // An anchor stands for up to 64 chunks of its frame.
        println!(
            "{} {unit}: {} referenced, {} of kept versions, {} unreferenced but younger than {}, \
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
