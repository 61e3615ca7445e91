//! `update`: the changes from the arguments, core's plan, what it did.

use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_host::json::{key_from_args, key_text};
use dynaslice_host::{Changes, HostError, OutcomeJson, PutOptions, UpdateOptions, UpdateSteps};
use serde_json::json;

use super::args::{ReindexArgs, UpdateArgs};
use super::commands::json_attributes;
use super::output::{Bar, manifest_text, print_json};

pub async fn update(client: &Client, args: &UpdateArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.item.table).await?;
    let key = key_from_args(&args.item.key, &table.key)?;
    let changes = Changes {
        set: match &args.set {
            Some(text) => json_attributes(text, "--set")?,
            None => Default::default(),
        },
        remove: args.remove.clone(),
    };
    let options = UpdateOptions {
        put: PutOptions {
            mode: args.mode.write_mode(),
            ..PutOptions::default()
        },
        dry_run: args.dry_run,
        ..UpdateOptions::default()
    };
    let bar = Bar::new("rewriting", json);
    let outcome = dynaslice_host::update(client, &table, &key, changes, &options, &bar).await;
    bar.finish();
    let outcome = outcome?;
    if json {
        print_json(&outcome.to_json(&key));
        return Ok(ExitCode::SUCCESS);
    }
    let key = key_text(&table.key, &key);
    let units = outcome.plan.write_units;
    let how = match &outcome.plan.steps {
        UpdateSteps::Parent(_) => "one UpdateItem of the parent, no chunk touched".to_string(),
        UpdateSteps::Rewrite(why) => {
            let reused = match outcome.plan.carried.len() {
                0 => String::new(),
                n => {
                    let s = if n == 1 { "" } else { "s" };
                    let names = outcome.plan.reused().join(", ");
                    format!(", reusing {n} group{s} unchanged: {names}")
                }
            };
            format!("a rewrite as a new version ({why}{reused})")
        }
    };
    if !outcome.applied {
        println!("would update {key} by {how}: about {units} write units");
        return Ok(ExitCode::SUCCESS);
    }
    let stored = match outcome.put.as_ref().and_then(|p| p.manifest.as_ref()) {
        Some(manifest) => format!("; now {}", manifest_text(manifest)),
        None => String::new(),
    };
    println!(
        "updated {key} by {how}: {} write units consumed, {units} planned{stored}",
        outcome.consumed.write
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn reindex(
    client: &Client,
    args: &ReindexArgs,
    json: bool,
) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table.table).await?;
    let options = UpdateOptions {
        dry_run: args.dry_run,
        ..UpdateOptions::default()
    };
    let report = dynaslice_host::reindex(client, &table, &options).await?;
    if json {
        print_json(&json!({
            "items": report.items,
            "misplaced": report.misplaced,
            "rewritten": report.rewritten,
            "conflicts": report.conflicts,
            "consumedReadUnits": report.consumed.read,
            "consumedWriteUnits": report.consumed.write,
        }));
    } else {
        println!(
            "{} of {} items held an index key or the TTL attribute in their payload; {} rewritten{}",
            report.misplaced,
            report.items,
            report.rewritten,
            match report.conflicts {
                0 => String::new(),
                n => format!(", {n} written by another writer first"),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
