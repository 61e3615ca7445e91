//! `gc`: unreferenced chunks deleted a page at a time, in segments at once,
//! at a rate, resumable from a cursor file, with progress against the
//! estimated size of what it scans: the anchors index when the table has
//! one (docs/FORMAT.md section 6, "Anchors"), else the chunk table.

use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_host::json::item_to_json;
use dynaslice_host::{GcOptions, GcPage, HostError};
use serde_json::json;

use super::args::GcArgs;
use super::cursor::{self, Cursor, Mark};
use super::output::{Bar, print_json};
use super::rate::{self, Spends};

/// What a run scans, as its cursor file names it: keys of one are no start
/// in the other.
fn source(anchors: &Option<String>) -> &'static str {
    match anchors {
        Some(_) => "anchors",
        None => "chunks",
    }
}

/// The item count of `table_name` (or of its `index`) as DynamoDB last
/// estimated it (updated about every six hours on AWS); 0 when unknown.
pub(super) async fn estimated_items(client: &Client, table_name: &str, index: Option<&str>) -> u64 {
    let described = client.describe_table().table_name(table_name).send().await;
    let described = described.ok().and_then(|d| d.table);
    let count = match index {
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
    let table = super::discover(client, &args.table.table).await?;
    let anchors = table.anchors.clone().filter(|_| !args.scan);
    let sweep = &args.sweep;
    let scans = source(&anchors);
    let mut cursor = match &sweep.cursor {
        Some(path) => cursor::read(
            path,
            &table.table,
            scans,
            sweep.segments,
            match anchors {
                Some(_) => "it is a cursor of a run with --scan; run with --scan",
                None => "it is a cursor of a run over the anchors index; run without --scan",
            },
        )?,
        None => Cursor::fresh(sweep.segments),
    };
    let options = GcOptions {
        grace: args.grace,
        dry_run: args.dry_run,
        max_units_per_second: rate::units(client, &table, sweep.rate_limit, Spends::Reads).await?,
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
        estimated_items(client, &table.chunk_table, anchors.as_deref()).await,
        json,
    );
    // Segments already done are not run again; the others start where they
    // got to (a run with one segment uses no Segment parameter at all).
    let starts = cursor.starts();
    let mut seen = vec![0u64; cursor.marks.len()];
    let mut failed_save = None;
    let report = {
        let on_page = |page: GcPage<'_>| {
            let at = page.segment as usize;
            seen[at] = page.report.chunks as u64;
            bar.set(seen.iter().sum());
            cursor.marks[at] = match page.cursor {
                Some(key) => Mark::From(Some(key.clone())),
                None => Mark::Done,
            };
            if let Some(path) = &sweep.cursor
                && let Err(e) = cursor::write(path, &table.table, scans, &cursor)
            {
                failed_save = Some(e);
            }
        };
        let total = sweep.segments;
        dynaslice_host::gc_segments(client, &table, &options, total, starts, on_page).await
    };
    bar.finish();
    if let Some(e) = failed_save {
        return Err(e);
    }
    let report = report?;
    if let Some(path) = &sweep.cursor {
        let _ = std::fs::remove_file(path);
    }
    let objects = match &table.objects {
        Some(_) => Some(dynaslice_host::gc_objects(client, &table, &options).await?),
        None => None,
    };
    if json {
        print_json(&json!({
            "objects": objects.as_ref().map(|o| json!({
                "listed": o.objects, "referenced": o.referenced, "kept": o.kept,
                "young": o.young, "deleted": o.deleted, "unreadable": o.unreadable,
                "foreign": o.foreign, "uploadsAborted": o.uploads_aborted,
                "uploadsYoung": o.uploads_young, "uploadsListed": o.uploads_listed,
            })),
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
        if let Some(o) = &objects {
            println!(
                "{} S3 objects: {} referenced, {} of kept versions, {} unreferenced but younger \
                 than {}, {verb} {}; {} of unreadable parents kept, {} keys not dynaslice's left \
                 alone; multipart uploads: {}",
                o.objects,
                o.referenced,
                o.kept,
                o.young,
                humantime::format_duration(args.grace),
                o.deleted,
                o.unreadable,
                o.foreign,
                match o.uploads_listed {
                    true => format!("{verb} {}, {} younger", o.uploads_aborted, o.uploads_young),
                    false => "this server does not list them".to_string(),
                }
            );
        }
        for (key, why) in &report.unreadable_parents {
            eprintln!(
                "dynaslice: kept every chunk of {}: its manifest cannot be read: {why}",
                item_to_json(key)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
