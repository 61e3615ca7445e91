//! `query`: the caller's Query or Scan, each item printed whole as a line
//! of DynamoDB JSON as it is ready; what it did on stderr.

use std::io::Write;
use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_host::json::item_to_json;
use dynaslice_host::{HostError, Query, QueryOptions};
use serde_json::json;

use super::args::QueryArgs;
use super::commands::json_attributes;

pub async fn query(client: &Client, args: &QueryArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table.table).await?;
    let names = match &args.names {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            HostError::Input(format!("--names must be a JSON object of strings: {e}"))
        })?,
        None => Default::default(),
    };
    let query = Query {
        table: table.table.clone(),
        index: args.index.clone(),
        key_condition: args.key_condition.clone(),
        filter: args.filter.clone(),
        names,
        values: match &args.values {
            Some(text) => json_attributes(text, "--values")?,
            None => Default::default(),
        },
        consistent: args.consistent,
        forward: !args.descending,
        limit: None,
        start: None,
        segment: None,
    };
    let options = QueryOptions {
        concurrency: args.concurrency.max(1),
        lazy: args.lazy,
        ..QueryOptions::default()
    };
    let mut out = std::io::stdout().lock();
    let outcome = dynaslice_host::query(client, &table, query, &options, |item| {
        writeln!(out, "{}", item_to_json(&item)).map_err(|e| HostError::io("standard output", e))
    })
    .await?;
    if json {
        eprintln!(
            "{}",
            json!({
                "items": outcome.items,
                "virtualItems": outcome.virtual_items,
                "chunksSkipped": outcome.chunks_skipped,
                "vanished": outcome.vanished,
                "pages": outcome.pages,
                "consumedReadUnits": outcome.consumed.read,
            })
        );
    } else {
        eprintln!(
            "{} items ({} read whole); {} chunk items skipped; {} read units",
            outcome.items, outcome.virtual_items, outcome.chunks_skipped, outcome.consumed.read
        );
    }
    Ok(ExitCode::SUCCESS)
}
