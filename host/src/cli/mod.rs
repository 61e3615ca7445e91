//! The commands: connect, call the library, print.

pub mod args;
mod bulk;
mod commands;
mod cursor;
mod estimate;
mod gc;
mod history;
mod import_folder;
pub mod output;
mod query;
mod rate;
mod update;
mod verify;

use std::process::ExitCode;

use aws_sdk_dynamodb::Client;
use dynaslice_host::{EmbeddedStore, HostError, TableConfig, aws_client, local_client};

use args::{Cli, Command, TablesCommand};

/// True when the result (and any error) should be printed as JSON.
pub fn wants_json(cli: &Cli) -> bool {
    let flag = match &cli.command {
        Command::Put(a) => a.put.json_output,
        Command::Estimate(a) => a.json_output,
        Command::Get(a) => a.item.json.json,
        Command::Update(a) => a.item.json.json,
        Command::Rm(a) | Command::Inspect(a) | Command::Versions(a) => a.json.json,
        Command::Restore(a) => a.item.json.json,
        Command::Ls(a) => a.json.json,
        Command::Query(a) => a.table.json.json,
        Command::Gc(a) => a.table.json.json,
        Command::Verify(a) => a.table.json.json,
        Command::Import(a) => a.table.json.json,
        Command::Export(a) => a.table.json.json,
        Command::Reindex(a) => a.table.json.json,
        Command::Tables(TablesCommand::Create(a)) => a.json.json,
        Command::Tables(TablesCommand::Anchors(a)) => a.json.json,
        Command::Serve(_) => false,
    };
    flag || cli.output == args::Output::Json
}

/// True when the command writes a payload to standard output (`get --out
/// -`, or a path that is stdout's file, such as `/dev/stdout`): its
/// messages, JSON documents included, go to stderr.
pub fn stdout_taken(cli: &Cli) -> bool {
    match &cli.command {
        Command::Get(a) => a.out.as_deref().is_some_and(is_stdout),
        Command::Export(a) => is_stdout(&a.out),
        _ => false,
    }
}

/// `-`, or a path naming the file standard output is open on.
pub fn is_stdout(path: &std::path::Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    if path == std::path::Path::new("-") {
        return true;
    }
    let stdout = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|file| file.metadata());
    match (std::fs::metadata(path), stdout) {
        (Ok(out), Ok(stdout)) => out.dev() == stdout.dev() && out.ino() == stdout.ino(),
        _ => false,
    }
}

/// The flag that raises the command's size limit, for error messages that
/// name the limit.
pub fn limit_flag(cli: &Cli) -> Option<&'static str> {
    match &cli.command {
        Command::Put(_) | Command::Estimate(_) | Command::Get(_) => Some("--max-size"),
        Command::Rm(_)
        | Command::Versions(_)
        | Command::Restore(_)
        | Command::Update(_)
        | Command::Inspect(_)
        | Command::Ls(_)
        | Command::Query(_)
        | Command::Gc(_)
        | Command::Verify(_)
        | Command::Import(_)
        | Command::Export(_)
        | Command::Reindex(_)
        | Command::Tables(_)
        | Command::Serve(_) => None,
    }
}

/// The client for where requests go: `--endpoint`, `--aws`, or the
/// embedded store, answered inside this process (no socket).
async fn connect(cli: &Cli) -> Result<Client, HostError> {
    if let Some(url) = &cli.endpoint {
        return Ok(local_client(url));
    }
    if cli.aws {
        return Ok(aws_client().await);
    }
    Ok(EmbeddedStore::open(Some(&cli.data))?.client())
}

/// The S3 store payloads go to, as the command line names it.
struct S3Settings {
    client: aws_sdk_s3::Client,
    /// The embedded store's folder, when it is the embedded one.
    embedded: Option<std::path::PathBuf>,
    bucket: String,
    prefix: String,
    threshold: u64,
}

static S3: std::sync::OnceLock<S3Settings> = std::sync::OnceLock::new();

/// The S3 client for `--s3-bucket`: `--s3-endpoint`, Amazon S3 with
/// `--aws`, or the embedded store beside the embedded table data. A local
/// server's bucket is made when missing.
async fn connect_s3(cli: &Cli) -> Result<(), HostError> {
    let Some(bucket) = &cli.s3_bucket else {
        return Ok(());
    };
    let mut embedded = None;
    let client = match (&cli.s3_endpoint, cli.aws) {
        (Some(url), _) => dynaslice_host::local_s3_client(url),
        (None, true) => dynaslice_host::aws_s3_client().await,
        (None, false) => {
            let folder = cli.data.parent().unwrap_or(std::path::Path::new("."));
            let root = folder.join("s3");
            let client = dynaslice_host::EmbeddedS3::open(&root)?.client();
            embedded = Some(root);
            client
        }
    };
    if !cli.aws || cli.s3_endpoint.is_some() {
        dynaslice_host::ensure_bucket(&client, bucket).await?;
    }
    let settings = S3Settings {
        client,
        embedded,
        bucket: bucket.clone(),
        prefix: cli.s3_prefix.clone(),
        threshold: cli.s3_threshold,
    };
    let _ = S3.set(settings);
    Ok(())
}

/// The embedded S3 store's folder, when the command line's S3 store is it.
pub(crate) fn embedded_s3() -> Option<std::path::PathBuf> {
    S3.get().and_then(|s| s.embedded.clone())
}

/// `table` as the server describes it, with the command line's S3 store
/// (its prefix then the table's name and `/`).
pub(crate) async fn discover(client: &Client, table: &str) -> Result<TableConfig, HostError> {
    let mut config = TableConfig::discover(client, table).await?;
    if let Some(s3) = S3.get() {
        let store = dynaslice_core::object::ObjectStore {
            threshold: s3.threshold,
            ..dynaslice_core::object::ObjectStore::new(
                s3.bucket.clone(),
                format!("{}{table}/", s3.prefix),
            )
        };
        config.objects = Some(dynaslice_host::Objects::new(store, s3.client.clone())?);
    }
    Ok(config)
}

/// Runs the command; `Ok` carries the exit code (1 for "not found").
pub async fn run(cli: Cli) -> Result<ExitCode, HostError> {
    let json = wants_json(&cli);
    let client = &connect(&cli).await?;
    connect_s3(&cli).await?;
    match &cli.command {
        Command::Put(a) => commands::put(client, a, json).await,
        Command::Estimate(a) => estimate::estimate(client, a, json).await,
        Command::Get(a) => commands::get(client, a, json).await,
        Command::Update(a) => update::update(client, a, json).await,
        Command::Rm(a) => commands::rm(client, a, json).await,
        Command::Versions(a) => history::versions(client, a, json).await,
        Command::Restore(a) => history::restore(client, a, json).await,
        Command::Ls(a) => commands::ls(client, a, json).await,
        Command::Query(a) => query::query(client, a, json).await,
        Command::Inspect(a) => commands::inspect(client, a, json).await,
        Command::Gc(a) => gc::gc(client, a, json).await,
        Command::Verify(a) => verify::verify(client, a, json).await,
        Command::Import(a) => bulk::import(client, a, json).await,
        Command::Export(a) => bulk::export(client, a, json).await,
        Command::Reindex(a) => update::reindex(client, a, json).await,
        Command::Tables(TablesCommand::Create(a)) => commands::create(client, a, json).await,
        Command::Tables(TablesCommand::Anchors(a)) => commands::anchors(client, a, json).await,
        Command::Serve(a) => commands::serve(client, a).await,
    }
}
