//! `versions` and `restore`: an item's history (`put --keep-versions`),
//! listed, and a kept version made current again.

use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use dynaslice_core::VersionId;
use dynaslice_core::history::Retention;
use dynaslice_host::json::{item_to_json, key_from_args, key_text};
use dynaslice_host::{HostError, Listed, OutcomeJson, PutOptions};
use serde_json::json;

use super::args::{HistoryArgs, KeyArgs, RestoreArgs};
use super::commands::not_found;
use super::output::{Bar, print_json, size};

/// The retention `--keep-versions` and `--keep-for` give (`None`: neither,
/// so the write keeps as the stored item does).
pub fn retention(args: &HistoryArgs) -> Result<Option<Retention>, HostError> {
    if args.keep_versions.is_none() && args.keep_for.is_none() {
        return Ok(None);
    }
    let retention = Retention {
        keep: args.keep_versions.unwrap_or(0),
        max_age_ms: args
            .keep_for
            .map(|age| u64::try_from(age.as_millis()).unwrap_or(u64::MAX)),
    };
    retention.check()?;
    Ok(Some(retention))
}

/// A version id given on the command line.
pub fn version_arg(text: &str) -> Result<VersionId, HostError> {
    VersionId::parse(text).map_err(|e| {
        HostError::Input(format!(
            "--version {text} is not a version id ({e}); `dynaslice versions` lists them"
        ))
    })
}

fn time(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

fn version_json(v: &Listed) -> serde_json::Value {
    json!({
        "version": v.version.map(|v| v.to_text()),
        "current": v.current,
        "writtenAt": v.written_ms.map(time),
        "replacedAt": v.replaced_ms.map(time),
        "bytes": v.bytes,
        "chunks": v.chunk_count,
        "note": v.note,
    })
}

pub async fn versions(client: &Client, args: &KeyArgs, json: bool) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.table).await?;
    let key = key_from_args(&args.key, &table.key)?;
    let Some(listed) = dynaslice_host::versions(client, &table, &key).await? else {
        return not_found(&key, &table, json);
    };
    if json {
        let retention = listed
            .retention
            .map(|r| json!({ "keep": r.keep, "maxAgeMs": r.max_age_ms }));
        print_json(&json!({
            "key": item_to_json(&key),
            "retention": retention,
            "versions": listed.versions.iter().map(version_json).collect::<Vec<_>>(),
        }));
        return Ok(ExitCode::SUCCESS);
    }
    match listed.retention {
        Some(r) => {
            let age = r.max_age_ms.map_or(String::new(), |ms| {
                format!(
                    ", and any younger than {}",
                    humantime::format_duration(Duration::from_millis(ms))
                )
            });
            println!(
                "{}: keeps the newest {} replaced versions{age}",
                key_text(&table.key, &key),
                r.keep
            );
        }
        None => println!(
            "{}: keeps no history (put --keep-versions N turns it on)",
            key_text(&table.key, &key)
        ),
    }
    for v in &listed.versions {
        let id = v
            .version
            .map_or("(stored whole)".to_string(), |v| v.to_text());
        let when = match (v.current, v.replaced_ms) {
            (true, _) => "current".to_string(),
            (false, Some(ms)) => format!("replaced {}", time(ms)),
            (false, None) => String::new(),
        };
        let written = v
            .written_ms
            .map_or(String::new(), |ms| format!("written {}", time(ms)));
        let note = v
            .note
            .as_deref()
            .map_or(String::new(), |n| format!("  {n:?}"));
        println!(
            "{id}  {when}  {written}  {}  {} chunks{note}",
            size(v.bytes),
            v.chunk_count
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn restore(
    client: &Client,
    args: &RestoreArgs,
    json: bool,
) -> Result<ExitCode, HostError> {
    let table = super::discover(client, &args.item.table).await?;
    let key = key_from_args(&args.item.key, &table.key)?;
    let version = version_arg(&args.version)?;
    let options = PutOptions {
        note: args.note.clone(),
        ..PutOptions::default()
    };
    let bar = Bar::new("restoring", json);
    let outcome = dynaslice_host::restore(client, &table, &key, version, &options, &bar).await;
    bar.finish();
    let outcome = outcome?;
    if json {
        let mut document = outcome.to_json(&key);
        document["restored"] = json!(version.to_text());
        print_json(&document);
    } else {
        let now = outcome
            .manifest
            .as_ref()
            .map_or("an item stored whole".to_string(), |m| {
                format!("version {}", m.version)
            });
        println!(
            "restored {version} of {} as {now}",
            key_text(&table.key, &key)
        );
    }
    Ok(ExitCode::SUCCESS)
}
