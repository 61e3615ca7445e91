//! Reading one stored file (a string or binary attribute) straight to disk
//! in bounded memory: core's [`ReadMachine`] checks every chunk before any
//! of its bytes are released, and a file appears under its name only
//! after the whole payload's digest was checked (see `out_file`).
//!
//! Memory holds the requests in flight (at most the read window of one
//! chunk each, ~400 KB), one piece of output and the codec's state,
//! whatever the file's size: so the attribute is not held to
//! [`GetOptions::max_item_bytes`], which bounds only what must still be
//! held whole (a raw snappy payload, the other attributes' names).

use std::path::Path;

use aws_sdk_dynamodb::Client;
use dynaslice_core::Item;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::protocol::{ReadMachine, Sink};

use crate::error::HostError;
use crate::executor::{Driver, Stop, env};
use crate::get::GetOptions;
use crate::out_file::OutFile;
use crate::progress::Progress;
use crate::table::TableConfig;

/// A file read back by [`get_file`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FileOutcome {
    /// Bytes written: the attribute's length (a string's in UTF-8).
    pub bytes: u64,
    /// The manifest of the version read, when the item was split.
    pub manifest: Option<Manifest>,
    /// Chunk items read (over every attempt).
    pub chunks_read: u32,
    /// Parent reads it took (more than 1 when a concurrent overwrite
    /// replaced the item mid-read and the file was started again).
    pub parent_reads: u32,
    /// Read capacity units the store reported consuming.
    pub consumed_read_units: f64,
}

/// Writes the string or binary attribute `attribute` of the item with `key`
/// to the file `path`, as its chunks arrive; `None` (and no file) when there
/// is no such item.
///
/// A regular file (or a new path) is written under a temporary name beside
/// it, fsync'd, and renamed to `path` only once every chunk and the whole
/// payload's digest were checked; a symlink is followed, and the file it
/// points to is replaced. A FIFO, a device or a descriptor (`/dev/stdout`)
/// is written directly, each chunk's bytes after that chunk was checked,
/// and a read overtaken by an overwrite once bytes went out fails with
/// `CHUNKS_VANISHED`. On any error (a damaged or missing chunk, I/O) the
/// temporary file is removed and `path` is left as it was: absent, or the
/// file that was there before. An item without the attribute fails with
/// `ATTRIBUTE_NOT_FOUND`, one whose attribute is neither `S` nor `B` with
/// `ATTRIBUTE_NOT_BLOB`.
///
/// A chunk missing because a concurrent overwrite replaced the item (its
/// parent now names another version) starts the file again from the new
/// parent (truncated: nothing is under `path` yet), at most
/// [`GetOptions::max_rereads`] times (`CHUNKS_VANISHED` after that); one
/// missing while the parent still names its version fails with
/// `CHUNK_MISSING`.
pub async fn get_file(
    client: &Client,
    table: &TableConfig,
    key: &Item,
    attribute: &str,
    path: &Path,
    options: &GetOptions,
    progress: &dyn Progress,
) -> Result<Option<FileOutcome>, HostError> {
    let mut file = OutFile::create(path).await?;
    let sink = Sink::Attribute {
        name: attribute.to_string(),
        restartable: file.restartable(),
    };
    let mut machine = ReadMachine::new(key, table.core(), sink, options.clone(), None, env());
    let mut driver = Driver::for_table(client, table, progress);
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => {
                let Some(read) = result? else {
                    return Ok(None);
                };
                file.commit().await?;
                return Ok(Some(FileOutcome {
                    bytes: read.bytes,
                    manifest: read.manifest,
                    chunks_read: read.chunks_read,
                    parent_reads: read.parent_reads,
                    consumed_read_units: read.consumed_read_units,
                }));
            }
            Stop::Output => {
                let piece = crate::cpu::heavy(|| machine.output());
                if !piece.is_empty() {
                    file.write(piece).await?;
                }
            }
            Stop::Restart => file.restart().await?,
            Stop::Input(_) => return Err(HostError::Internal("a read asked for input".into())),
        }
    }
}
