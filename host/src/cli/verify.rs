//! `verify`: every item of a table read whole and checked; each damaged one
//! printed as it is found, then a summary; exit 1 when anything is damaged.

use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_host::json::{item_to_json, key_text};
use dynaslice_host::{HostError, QueryOptions, TableConfig};
use serde_json::json;

use super::args::VerifyArgs;
use super::output::print_json;

pub async fn verify(client: &Client, args: &VerifyArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = TableConfig::discover(client, &args.table.table).await?;
    let options = QueryOptions {
        concurrency: args.concurrency.max(1),
        ..QueryOptions::default()
    };
    let mut found = Vec::new();
    let outcome = dynaslice_host::verify(client, &table, &options, |damaged| {
        let code = damaged.error.code();
        if json {
            found.push(json!({
                "key": item_to_json(&damaged.key),
                "code": code.as_str(),
                "message": damaged.error.to_string(),
            }));
        } else {
            println!(
                "damaged {}: {} [{code}]",
                key_text(&table.key, &damaged.key),
                damaged.error
            );
        }
    })
    .await?;
    if json {
        print_json(&json!({
            "items": outcome.items + outcome.damaged,
            "virtualItems": outcome.virtual_items + outcome.damaged,
            "damaged": found,
            "vanished": outcome.vanished,
            "chunksSkipped": outcome.chunks_skipped,
            "consumedReadUnits": outcome.consumed.read,
        }));
    } else {
        println!(
            "checked {} items ({} virtual, every digest): {} damaged; {} read units",
            outcome.items + outcome.damaged,
            outcome.virtual_items + outcome.damaged,
            outcome.damaged,
            outcome.consumed.read
        );
    }
    Ok(match outcome.damaged {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}
