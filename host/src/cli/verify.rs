//! `verify`: every item of a table read whole and checked, in Scan
//! segments at once, at a rate, resumable from a cursor file; each damaged
//! item printed as it is found, then a summary; exit 1 when anything is
//! damaged (by this run, or by the run its cursor continues).

use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_host::json::{item_to_json, key_text};
use dynaslice_host::{HostError, Position, QueryOptions, Segments, VerifyPage};
use serde_json::json;

use super::args::VerifyArgs;
use super::cursor::{self, Cursor, Mark};
use super::gc::estimated_items;
use super::output::{Bar, print_json};
use super::rate::{self, Spends};

/// What a verify's cursor file says it scans.
const SCANS: &str = "items";

pub async fn verify(client: &Client, args: &VerifyArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table.table).await?;
    let sweep = &args.sweep;
    let mut cursor = match &sweep.cursor {
        Some(path) => cursor::read(
            path,
            &table.table,
            SCANS,
            sweep.segments,
            "it scans no items",
        )?,
        None => Cursor::fresh(sweep.segments),
    };
    // Damage an earlier run (the one this cursor continues) found.
    let earlier = cursor.count("damaged");
    let options = QueryOptions {
        concurrency: args.concurrency.max(1),
        max_units_per_second: rate::units(client, &table, sweep.rate_limit, Spends::Reads).await?,
        ..QueryOptions::default()
    };
    let bar = Bar::counting(
        "verifying",
        "items",
        estimated_items(client, &table.table, None).await,
        json,
    );
    let starts = cursor.starts();
    let mut found = Vec::new();
    // Damaged items each segment found up to its last page: what the
    // cursor saves, so a resumed run (which scans the rest of each
    // segment's page again) counts none twice.
    let mut damaged = vec![0u64; cursor.marks.len()];
    let mut seen = vec![0u64; cursor.marks.len()];
    let mut failed_save = None;
    let outcome = {
        let found = &mut found;
        let each = |d: dynaslice_host::Damaged| {
            let code = d.error.code();
            if json {
                found.push(json!({
                    "key": item_to_json(&d.key),
                    "code": code.as_str(),
                    "message": d.error.to_string(),
                }));
            } else {
                bar.print(&format!(
                    "damaged {}: {} [{code}]",
                    key_text(&table.key, &d.key),
                    d.error
                ));
            }
        };
        let on_page = |page: VerifyPage<'_>| {
            let at = page.segment as usize;
            seen[at] = page.items;
            damaged[at] = page.damaged;
            bar.set(seen.iter().sum());
            cursor.marks[at] = match page.position {
                Position::At(start) => Mark::From(start.cloned()),
                _ => Mark::Done,
            };
            cursor.counts.insert(
                "damaged".into(),
                json!(earlier + damaged.iter().sum::<u64>()),
            );
            if let Some(path) = &sweep.cursor
                && let Err(e) = cursor::write(path, &table.table, SCANS, &cursor)
            {
                failed_save = Some(e);
            }
        };
        dynaslice_host::verify_segments(
            client,
            &table,
            &options,
            Segments {
                total: sweep.segments,
                starts,
                page_size: args.page_size,
            },
            each,
            on_page,
        )
        .await
    };
    bar.finish();
    if let Some(e) = failed_save {
        return Err(e);
    }
    let outcome = outcome?;
    if let Some(path) = &sweep.cursor {
        let _ = std::fs::remove_file(path);
    }
    if json {
        print_json(&json!({
            "items": outcome.items + outcome.damaged,
            "virtualItems": outcome.virtual_items + outcome.damaged,
            "damaged": found,
            "damagedEarlier": earlier,
            "vanished": outcome.vanished,
            "chunksSkipped": outcome.chunks_skipped,
            "consumedReadUnits": outcome.consumed.read,
        }));
    } else {
        println!(
            "checked {} items ({} virtual, every digest): {} damaged{}; {} read units",
            outcome.items + outcome.damaged,
            outcome.virtual_items + outcome.damaged,
            outcome.damaged,
            match earlier {
                0 => String::new(),
                n => format!(" (and {n} found before the run resumed)"),
            },
            outcome.consumed.read
        );
    }
    Ok(match outcome.damaged + earlier {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}
