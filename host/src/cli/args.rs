//! The command line, as clap parses it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Store DynamoDB items of any size: exact sizes, compression, versioned chunks.
///
/// With no --endpoint and no --aws, dynaslice runs an embedded
/// DynamoDB-compatible store inside its own process, with its data in
/// .dynaslice/local.db.
#[derive(Debug, Parser)]
#[command(name = "dynaslice", version, propagate_version = true)]
pub struct Cli {
    /// A DynamoDB-compatible server, e.g. http://127.0.0.1:8000.
    #[arg(
        long,
        global = true,
        env = "DYNASLICE_ENDPOINT",
        conflicts_with = "aws"
    )]
    pub endpoint: Option<String>,
    /// Real DynamoDB, with the standard AWS credential chain and region.
    #[arg(long, global = true)]
    pub aws: bool,
    /// The embedded store's data file.
    #[arg(
        long,
        global = true,
        env = "DYNASLICE_DATA",
        default_value = ".dynaslice/local.db"
    )]
    pub data: PathBuf,
    /// Store payloads of --s3-threshold bytes and more (a file, a pipe, or an item from
    /// --json not written with --mode atomic) as one S3 object each in this bucket, behind
    /// the item's manifest. Readers, rm and gc need
    /// the same bucket and prefix. The S3 store is the embedded one (objects under
    /// .dynaslice/s3, beside the embedded table data), --s3-endpoint, or Amazon S3
    /// with --aws.
    #[arg(
        long,
        global = true,
        env = "DYNASLICE_S3_BUCKET",
        value_name = "BUCKET"
    )]
    pub s3_bucket: Option<String>,
    /// Every object key starts with this, then the table's name and '/'.
    #[arg(
        long,
        global = true,
        env = "DYNASLICE_S3_PREFIX",
        default_value = "dynaslice/",
        value_name = "PREFIX"
    )]
    pub s3_prefix: String,
    /// An S3-compatible server, e.g. http://127.0.0.1:8333 (path-style).
    #[arg(long, global = true, env = "DYNASLICE_S3_ENDPOINT", value_name = "URL")]
    pub s3_endpoint: Option<String>,
    /// Payloads of at least this many bytes go to S3; smaller ones stay in DynamoDB.
    /// The default, 1 MiB, is where S3's requests cost under a hundredth of DynamoDB's
    /// write units (docs/FORMAT.md, "Objects").
    #[arg(long, global = true, value_name = "BYTES", default_value_t = dynaslice_core::object::DEFAULT_OFFLOAD_BYTES)]
    pub s3_threshold: u64,
    /// Output format: text for people, json for scripts.
    #[arg(long, global = true, value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Human-readable lines.
    Text,
    /// One JSON document on stdout.
    Json,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write an item: a file into a binary attribute, or an item in DynamoDB JSON.
    Put(PutCommand),
    /// Read an item back (to stdout, or a stored file streamed to a file).
    #[command(disable_version_flag = true)]
    Get(GetArgs),
    /// Set or remove attributes of an item: one UpdateItem when they live on the parent,
    /// a rewrite as a new version when they are in its payload.
    Update(UpdateArgs),
    /// Rewrite the items whose payload holds an index key or the TTL attribute (written
    /// before the index or TTL existed), so they appear in the index and expire.
    Reindex(ReindexArgs),
    /// List an item's versions: the current one and those its history keeps (put
    /// --keep-versions), with when each was written and replaced, its size and note.
    Versions(KeyArgs),
    /// Make a kept version current again: written as a new version (the one it replaces
    /// is kept as history says).
    #[command(disable_version_flag = true)]
    Restore(RestoreArgs),
    /// Delete an item and its chunks.
    Rm(KeyArgs),
    /// Run a Query (or, with no --key-condition, a Scan) and print each item whole, one
    /// line of DynamoDB JSON per item; chunk items are never printed.
    Query(QueryArgs),
    /// List the items of a table.
    Ls(TableArgs),
    /// Show how an item is stored: parent, chunks, codec, sizes, capacity.
    Inspect(KeyArgs),
    /// Plan a write without writing: size, codec, chunks, mode, capacity (an overwrite of
    /// the stored item priced with its cleanup).
    Estimate(PutArgs),
    /// Read every item of a table whole and check every digest; list what is damaged
    /// (exit 1 when anything is).
    Verify(VerifyArgs),
    /// Load JSON Lines, one item per line, many items in flight; each line that cannot be
    /// stored is reported with its number and code, and the rest go in (exit 1 if any
    /// failed). Resumable after a crash with --resume.
    Import(ImportArgs),
    /// Write every item of a table whole as JSON Lines (DynamoDB JSON), chunks never.
    Export(ExportArgs),
    /// Delete chunks no item refers to.
    Gc(GcArgs),
    /// Manage tables.
    #[command(subcommand)]
    Tables(TablesCommand),
    /// Serve the web page and its HTTP API (docs/API.md).
    Serve(ServeArgs),
}

/// What `serve` takes.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: std::net::SocketAddr,
    /// A table the API may use (repeatable); created, keyed by a string pk,
    /// if missing.
    #[arg(long = "table", short, default_value = "dynaslice-demo")]
    pub tables: Vec<String>,
    /// Only partition keys starting with this are accepted.
    #[arg(long)]
    pub key_prefix: Option<String>,
    /// The largest item accepted, in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_item_bytes: usize,
    /// The web page's folder.
    #[arg(long, default_value = "www")]
    pub www: PathBuf,
    /// The npm package's folder (served at /pkg/dynaslice/).
    #[arg(long, default_value = "wasm")]
    pub pkg: PathBuf,
    /// Another host name the server answers to (repeatable): `name` on the
    /// listen port, or `name:port`. Requests naming any other host get 421.
    #[arg(long = "allow-host")]
    pub allow_hosts: Vec<String>,
    /// Uploads in flight at once (more get 503).
    #[arg(long, default_value_t = 4)]
    pub max_uploads: usize,
    /// Whole-item reads and previews in flight at once (more get 503).
    #[arg(long, default_value_t = 8)]
    pub max_reads: usize,
    /// Longest pause while an upload body is sent.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub body_idle_timeout: std::time::Duration,
}

/// `--json` as a shorthand for `--output json`.
#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Same as --output json.
    #[arg(long)]
    pub json: bool,
}

/// A table.
#[derive(Debug, Args)]
pub struct TableArgs {
    /// The items' table (the one you query; its chunks live in <table>_chunks or beside the items).
    #[arg(long, short)]
    pub table: String,
    #[command(flatten)]
    pub json: JsonFlag,
}

/// A table and an item's key.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// The items' table (the one you query; its chunks live in <table>_chunks or beside the items).
    #[arg(long, short)]
    pub table: String,
    /// A key attribute, name=value (numbers as text, binaries in base64);
    /// once per key attribute.
    #[arg(long, short, required = true)]
    pub key: Vec<String>,
    #[command(flatten)]
    pub json: JsonFlag,
}

/// What `put` and `estimate` take.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["file", "json"])))]
pub struct PutArgs {
    /// The items' table (the one you query; its chunks live in <table>_chunks or beside the items).
    #[arg(long, short)]
    pub table: String,
    /// A key attribute, name=value; once per key attribute.
    #[arg(long, short, required = true)]
    pub key: Vec<String>,
    /// A file, stored as the binary attribute --attribute, streamed in
    /// bounded memory: a regular file, or `-` (standard input), a FIFO or
    /// a device, read to its end (its length recorded when it ends).
    #[arg(long, short)]
    pub file: Option<PathBuf>,
    /// The attribute a file is stored in.
    #[arg(long, default_value = "data")]
    pub attribute: String,
    /// An item in DynamoDB JSON ({"name": {"S": "x"}}), or @path to read it from a file.
    #[arg(long)]
    pub json: Option<String>,
    /// How the spilled attributes are compressed (auto: the smallest, or the fastest within 5 %).
    #[arg(long, value_enum, default_value_t = CodecArg::Auto)]
    pub codec: CodecArg,
    /// The codec's level (deflate family 0-10; zstd only its default).
    #[arg(long)]
    pub level: Option<u8>,
    /// Batch (half the write units of a transaction; readers see the old or
    /// the new item all the same), atomic (one transaction), or atomic when
    /// it fits.
    #[arg(long, value_enum, default_value_t = ModeArg::Batch)]
    pub mode: ModeArg,
    /// Attributes that must stay on the parent (index keys), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub keep: Vec<String>,
    /// The largest payload accepted, in bytes: for --json (held in memory)
    /// 64 MiB by default; for --file (streamed) no limit by default but
    /// 65,536 chunks (25 GiB of full chunks). A stream is cut off as soon
    /// as it passes it, and nothing is committed.
    #[arg(long)]
    pub max_size: Option<usize>,
    /// The most batch requests in flight at once; starts at 4 and adapts to
    /// throttling (halves when throttled, grows while clean).
    #[arg(long, default_value_t = dynaslice_host::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
    #[command(flatten)]
    pub history: HistoryArgs,
    /// Print the result as JSON (same as --output json).
    #[arg(long = "json-output", hide = true)]
    pub json_output: bool,
}

/// Version history: what a write keeps of the version it replaces.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Keep the newest N replaced versions of this item (version history,
    /// up to 100; 0 turns it off and deletes what was kept). Without it or
    /// --keep-for, a write keeps as the stored item does.
    #[arg(long, value_name = "N")]
    pub keep_versions: Option<u32>,
    /// Keep replaced versions younger than this too (30d, 12h, 90m).
    #[arg(long, value_name = "AGE", value_parser = humantime::parse_duration)]
    pub keep_for: Option<std::time::Duration>,
    /// A note on this version (who changed it, and why; at most 256
    /// bytes), listed by `versions`.
    #[arg(long)]
    pub note: Option<String>,
}

/// What `restore` takes.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    pub item: KeyArgs,
    /// The kept version to make current again (its id, as `versions`
    /// lists it).
    #[arg(long, value_name = "VERSION")]
    pub version: String,
    /// The note on the new version (default: `restored <VERSION>`).
    #[arg(long)]
    pub note: Option<String>,
}

/// What `put` takes: `estimate`'s arguments, and what the stored item
/// must be. Without `--if-absent` or `--if-version` the last writer wins,
/// as with PutItem.
#[derive(Debug, Args)]
pub struct PutCommand {
    #[command(flatten)]
    pub put: PutArgs,
    /// Write only if no item with this key is stored (CONFLICT otherwise,
    /// and if another writer creates it first).
    #[arg(long, conflicts_with = "if_version")]
    pub if_absent: bool,
    /// Write only if the stored item is this version (its 26-character id,
    /// as `put --json` and `inspect` print it): CONFLICT otherwise, and if
    /// another writer replaces it first.
    #[arg(long, value_name = "VERSION")]
    pub if_version: Option<String>,
}

/// Codecs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CodecArg {
    /// Chosen by dynaslice's policy.
    Auto,
    /// Stored as is.
    None,
    /// Raw deflate.
    Deflate,
    /// zlib.
    Zlib,
    /// gzip.
    Gzip,
    /// Raw snappy.
    Snappy,
    /// zstd.
    Zstd,
}

/// Write modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Atomic when it fits one transaction, batch otherwise.
    Auto,
    /// One TransactWriteItems, or an error.
    Atomic,
    /// Chunks by BatchWriteItem, then the parent (the default).
    Batch,
}

/// What `update` takes: at least one of `--set` and `--remove`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("changes").required(true).multiple(true).args(["set", "remove"])))]
pub struct UpdateArgs {
    #[command(flatten)]
    pub item: KeyArgs,
    /// Attributes to set (added or replaced), in DynamoDB JSON
    /// ({"status": {"S": "done"}}), or @path to read them from a file.
    #[arg(long)]
    pub set: Option<String>,
    /// Attributes to remove, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub remove: Vec<String>,
    /// Show which way the update would go and what it would cost; change
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// How a rewrite writes the new version (see put --mode).
    #[arg(long, value_enum, default_value_t = ModeArg::Batch)]
    pub mode: ModeArg,
}

impl ModeArg {
    /// The write mode.
    pub fn write_mode(self) -> dynaslice_core::plan::WriteMode {
        use dynaslice_core::plan::WriteMode;
        match self {
            Self::Auto => WriteMode::Auto,
            Self::Atomic => WriteMode::Atomic,
            Self::Batch => WriteMode::Batch,
        }
    }
}

/// What `query` takes: a Query's (or Scan's) own parameters.
#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// The KeyConditionExpression (`pk = :p AND begins_with(sk, :s)`);
    /// without it the table (or index) is scanned.
    #[arg(long)]
    pub key_condition: Option<String>,
    /// The FilterExpression.
    #[arg(long)]
    pub filter: Option<String>,
    /// ExpressionAttributeNames, as JSON ({"#s": "status"}).
    #[arg(long)]
    pub names: Option<String>,
    /// ExpressionAttributeValues, in DynamoDB JSON ({":p": {"S": "CUSTOMER#1"}}), or @path.
    #[arg(long)]
    pub values: Option<String>,
    /// A secondary index to read instead of the table (it must project
    /// _ds for its virtual items to be read whole: ALL, or INCLUDE _ds).
    #[arg(long)]
    pub index: Option<String>,
    /// Sort keys in descending order.
    #[arg(long)]
    pub descending: bool,
    /// Strongly consistent pages (virtual items are always read so).
    #[arg(long)]
    pub consistent: bool,
    /// Print parents of virtual items as stored, with their manifest; read no chunk.
    #[arg(long)]
    pub lazy: bool,
    /// Virtual items read at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
}

/// What `get` takes.
#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub item: KeyArgs,
    /// Write the attribute --attribute (binary, or a string as UTF-8) to
    /// this file, streamed as its chunks arrive, in bounded memory and
    /// whatever its size; the whole item as DynamoDB JSON when it has no
    /// such attribute or it is of another type. A regular file appears
    /// only once every byte was checked: written beside it under a
    /// temporary name, then renamed; on an error, an existing file is left
    /// as it was. A symlink is followed to its file; `-` (standard output),
    /// a FIFO or a device is written directly, each chunk's bytes after
    /// its digest was checked. Default: the item as DynamoDB JSON on stdout.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// The attribute a file was stored in.
    #[arg(long, default_value = "data")]
    pub attribute: String,
    /// The largest item read whole into memory (without --out, or an item
    /// that is not a stored file), in bytes (default 64 MiB): a stored
    /// manifest is checked against it before a chunk is read. `--out` of
    /// a string or binary attribute streams it whatever its size; there it
    /// bounds only what must be held whole (a snappy payload).
    #[arg(long)]
    pub max_size: Option<usize>,
    /// Read this version instead of the current one: a version the item's
    /// history keeps (`versions` lists them).
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
}

/// What `reindex` takes.
#[derive(Debug, Args)]
pub struct ReindexArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Count the items to rewrite; rewrite none.
    #[arg(long)]
    pub dry_run: bool,
}

/// How a line of JSON Lines holds an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LineFormat {
    /// DynamoDB JSON: `{"pk": {"S": "a"}, "n": {"N": "1"}}`.
    Dynamodb,
    /// Plain JSON: strings, numbers, booleans, null, lists and maps (`{"pk": "a", "n": 1}`).
    Plain,
}

/// What `import` takes.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// JSON Lines to load, one item per line (`-`: standard input); blank lines are skipped.
    #[arg(
        long,
        short,
        required_unless_present = "folder",
        conflicts_with = "folder"
    )]
    pub file: Option<PathBuf>,
    /// A folder to load instead: each regular file in it or below it (links
    /// not followed) is an item, its path from the folder (`a/b.pdf`) the
    /// partition key (the table's key must be one string), its bytes the
    /// binary attribute --attribute.
    #[arg(long)]
    pub folder: Option<PathBuf>,
    /// The attribute a folder's file is stored in.
    #[arg(long, default_value = "data", requires = "folder")]
    pub attribute: String,
    /// The largest file of a folder accepted, in bytes (held in memory, up
    /// to --in-flight at once); a larger one is reported and skipped: store
    /// it with `put --file`, which streams.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_size: u64,
    /// How each line holds its item.
    #[arg(long, value_enum, default_value_t = LineFormat::Dynamodb)]
    pub format: LineFormat,
    /// Items written at once (their chunk writes interleave across partition
    /// keys), while their bytes stay under 64 MiB (one larger item goes alone).
    #[arg(long, default_value_t = dynaslice_host::DEFAULT_IN_FLIGHT)]
    pub in_flight: usize,
    /// The most write units per second, on average, so the application keeps
    /// the table's capacity: a number, or a share of its write capacity (25%).
    #[arg(long, value_name = "UNITS|PERCENT", value_parser = super::rate::parse)]
    pub rate_limit: Option<super::rate::Rate>,
    /// Skip the lines an earlier run of this import stored (its checkpoint,
    /// `<file>.dynaslice-import`, written as lines complete).
    #[arg(long)]
    pub resume: bool,
    /// The largest line accepted, in bytes; a longer one is reported and skipped.
    #[arg(long, default_value_t = 256 << 20)]
    pub max_line: usize,
}

/// What `export` takes.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Where the lines go (`-`: standard output). A file appears whole once
    /// the export ends: written beside it (`.NAME.dynaslice-resumable`),
    /// then renamed.
    #[arg(long, short, default_value = "-")]
    pub out: PathBuf,
    /// Virtual items read at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// The most read units per second, on average, so the application keeps
    /// the table's capacity: a number, or a share of its read capacity (25%).
    #[arg(long, value_name = "UNITS|PERCENT", value_parser = super::rate::parse)]
    pub rate_limit: Option<super::rate::Rate>,
    /// Continue an export into this file that failed or was killed, from
    /// its checkpoint (`<out>.dynaslice-export`, saved as pages complete).
    #[arg(long)]
    pub resume: bool,
}

/// What `verify` takes.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Items read at once, in each segment.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    #[command(flatten)]
    pub sweep: SweepArgs,
    /// The most items a Scan page evaluates (DynamoDB's 1 MB page when not
    /// given); smaller pages save the cursor more often.
    #[arg(long, value_name = "ITEMS", value_parser = clap::value_parser!(u32).range(1..))]
    pub page_size: Option<u32>,
}

/// How a run over a whole table (`gc`, `verify`) goes.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scan this many segments at once (a parallel Scan).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub segments: u32,
    /// The most capacity units (read and write) per second, on average, so the
    /// application keeps the table's capacity: a number, or a share of the
    /// table's read capacity (25%) as DescribeTable gives it.
    #[arg(long, value_name = "UNITS|PERCENT", value_parser = super::rate::parse)]
    pub rate_limit: Option<super::rate::Rate>,
    /// Save where each segment got to in FILE after every page, and start from
    /// it when it exists: a run stopped anywhere (even killed) continues there.
    /// Removed when the run ends.
    #[arg(long, value_name = "FILE")]
    pub cursor: Option<PathBuf>,
}

/// What `gc` takes.
#[derive(Debug, Args)]
pub struct GcArgs {
    #[command(flatten)]
    pub table: TableArgs,
    /// Keep unreferenced chunks younger than this (e.g. 30s, 15m, 1h).
    #[arg(long, default_value = "1h", value_parser = humantime::parse_duration)]
    pub grace: std::time::Duration,
    /// Report what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub sweep: SweepArgs,
    /// Scan every chunk item, not the anchors index (the default when the
    /// table has one): reads every stored byte, and finds chunks written
    /// before anchors were (by dynaslice 0.1.0 or older) too.
    #[arg(long)]
    pub scan: bool,
}

/// `tables` subcommands.
#[derive(Debug, Subcommand)]
pub enum TablesCommand {
    /// Create a table able to hold large items, and its chunk table.
    Create(CreateArgs),
    /// Add the anchors index to a table made before it (`gc` then reads one
    /// small entry per 64 chunks instead of every chunk), and wait until it
    /// is built. Run one `gc --scan` after, for chunks written before
    /// anchors.
    Anchors(TableArgs),
}

/// What `tables create` takes.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The items' table (the one you query; its chunks live in <table>_chunks or beside the items).
    #[arg(long, short)]
    pub table: String,
    /// The partition key, name or name:S|N|B.
    #[arg(long, default_value = "pk")]
    pub partition_key: String,
    /// The sort key, name or name:S|N|B.
    #[arg(long)]
    pub sort_key: Option<String>,
    /// Where chunks go: a chunk table <table>_chunks, or the item's own collection.
    #[arg(long, value_enum, default_value_t = LayoutArg::Table)]
    pub layout: LayoutArg,
    /// Turn TTL on, deleting items once this attribute (seconds since the
    /// epoch) has passed; on the chunk table too, since chunks carry it.
    #[arg(long)]
    pub ttl: Option<String>,
    #[command(flatten)]
    pub json: JsonFlag,
}

/// Layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// Chunks in <table>_chunks.
    Table,
    /// Chunks beside the item (needs a string sort key).
    Collection,
}
