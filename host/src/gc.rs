//! Garbage collection: deletes chunks no parent references, once they are
//! older than a grace period. Chunks become unreferenced when a writer
//! crashed before its commit, lost a race and could not abort, or could not
//! finish deleting a replaced version. The grace period protects writes in
//! progress: their chunks are written before their commit makes them
//! referenced, and the version id in every chunk key records when the
//! write began, in the store's time (`clock.rs`): writers stamp it and `gc`
//! judges it by the clock of the store's responses, never by a clock of
//! their own alone.
//!
//! A parent whose manifest cannot be read (damaged, or written by a newer
//! format version) keeps every chunk of its key: not understanding the
//! data is a reason to stop, never to delete it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use dynaslice_core::layout::parse_chunk_key;
use dynaslice_core::manifest::CHUNK_DIGEST_ATTRIBUTE;
use dynaslice_core::plan::{WriteRequest, pack_batch_writes, parent_get};
use dynaslice_core::{Item, Layout, VersionId};

use crate::error::HostError;
use crate::scan::scan_pages;
use crate::send::Sender;
use crate::table::TableConfig;

/// How to collect.
#[derive(Clone, Debug)]
pub struct GcOptions {
    /// Unreferenced chunks younger than this are kept (default 1 hour): a
    /// write that takes longer than this while `gc` runs could lose chunks.
    pub grace: Duration,
    /// Report only; delete nothing.
    pub dry_run: bool,
}

impl Default for GcOptions {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(3600),
            dry_run: false,
        }
    }
}

/// What `gc` found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcReport {
    /// Chunk items seen.
    pub chunks: usize,
    /// Chunks their parent references.
    pub referenced: usize,
    /// Unreferenced chunks kept because they are within the grace period.
    pub young: usize,
    /// Unreferenced chunks deleted (or that would be, in a dry run).
    pub deleted: usize,
    /// Chunks kept because their parent's manifest cannot be read.
    pub unreadable: usize,
    /// The keys of those parents, with why each could not be read.
    pub unreadable_parents: Vec<(Item, String)>,
}

/// What a stored parent refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Referenced {
    /// No chunks: no parent, or a plain item.
    Nothing,
    /// The chunks of this version.
    Version(VersionId),
    /// Unknown: its manifest cannot be read, so none of its chunks may go.
    Unknown,
}

/// The version a stored parent refers to (`None`: a plain item), or why its
/// manifest cannot be read. No size limit applies: `gc` builds no chunk
/// keys from a manifest, it only compares versions.
fn referenced_version(table: &TableConfig, parent: &Item) -> Result<Option<VersionId>, String> {
    let mut target = table.target();
    target.max_raw_bytes = u64::MAX;
    match target.read_manifest(parent) {
        Ok(manifest) => Ok(manifest.map(|m| m.version)),
        Err(e) => Err(format!("{e} [{}]", e.code())),
    }
}

/// Finds and deletes unreferenced chunks of `table`.
pub async fn gc(
    client: &Client,
    table: &TableConfig,
    options: &GcOptions,
) -> Result<GcReport, HostError> {
    let sender = Sender::with_defaults(client);
    let mut projection: Vec<&str> = match &table.layout {
        Layout::ChunkTable { key_name } => vec![key_name.as_str()],
        Layout::ItemCollection => table.key.attributes().map(|k| k.name.as_str()).collect(),
    };
    projection.push(CHUNK_DIGEST_ATTRIBUTE);
    // (parent key, version) -> chunk keys
    let mut found: BTreeMap<(Item, VersionId), Vec<Item>> = BTreeMap::new();
    let mut report = GcReport::default();
    scan_pages(&sender, &table.chunk_table, &projection, |items| {
        for mut item in items {
            // A chunk carries its digest; in an item collection, items
            // without one are the user's own.
            if item.remove(CHUNK_DIGEST_ATTRIBUTE).is_none() {
                continue;
            }
            let Ok(chunk) = parse_chunk_key(&table.key, &table.layout, &item) else {
                continue;
            };
            report.chunks += 1;
            found
                .entry((chunk.parent_key, chunk.version))
                .or_default()
                .push(item);
        }
        Ok(())
    })
    .await?;
    let grace_ms = u64::try_from(options.grace.as_millis()).unwrap_or(u64::MAX);
    let mut current: BTreeMap<Item, Referenced> = BTreeMap::new();
    let mut doomed = Vec::new();
    let parents: BTreeSet<Item> = found.keys().map(|(p, _)| p.clone()).collect();
    for parent in parents {
        let stored = sender.get(parent_get(&table.target(), &parent)).await?;
        let referenced = match stored.as_ref().map(|p| referenced_version(table, p)) {
            None => Referenced::Nothing,
            Some(Ok(version)) => version.map_or(Referenced::Nothing, Referenced::Version),
            Some(Err(why)) => {
                report.unreadable_parents.push((parent.clone(), why));
                Referenced::Unknown
            }
        };
        current.insert(parent, referenced);
    }
    // The store's time, from the scan's and the reads' answers.
    let now_ms = sender.clock.now_ms()?;
    for ((parent, version), keys) in found {
        let referenced = current.get(&parent).unwrap_or(&Referenced::Nothing);
        if *referenced == Referenced::Version(version) {
            report.referenced += keys.len();
        } else if *referenced == Referenced::Unknown {
            report.unreadable += keys.len();
        } else if version.unix_ms().saturating_add(grace_ms) > now_ms {
            report.young += keys.len();
        } else {
            report.deleted += keys.len();
            doomed.extend(keys);
        }
    }
    if !options.dry_run {
        let deletes = doomed
            .into_iter()
            .map(|key| (table.chunk_table.clone(), WriteRequest::Delete(key)));
        sender.batch_writes(pack_batch_writes(deletes), &()).await?;
    }
    Ok(report)
}
