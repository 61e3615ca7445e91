//! Reading one stored file (a string or binary attribute) straight to disk
//! in bounded memory: core's `ChunkReader` checks every chunk before any of
//! its bytes are written, chunks are fetched in order a few requests ahead,
//! and the file appears under its name only after the whole payload's
//! digest was checked (see `partial_file`).
//!
//! Memory holds the requests in flight (at most `concurrency` requests of
//! [`crate::CHUNKS_PER_REQUEST`] chunks, ~400 KB each), one piece of output and
//! the codec's state, whatever the file's size: so the attribute is not
//! held to [`GetOptions::max_item_bytes`], which bounds only what must
//! still be held whole (a raw snappy payload, the other attributes' names).

use std::path::Path;

use aws_sdk_dynamodb::Client;
use dynaslice_core::plan::parent_get;
use dynaslice_core::{ChunkReader, Item, Manifest, ReassembleError, ReassembleOptions};

use crate::chunk_window::ChunkWindow;
use crate::error::HostError;
use crate::get::{GetOptions, check_key};
use crate::partial_file::PartialFile;
use crate::progress::Progress;
use crate::send::Sender;
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
    /// Read capacity units the server reported consuming.
    pub consumed_read_units: f64,
}

/// Writes the string or binary attribute `attribute` of the item with `key`
/// to the file `path`, as its chunks arrive; `None` (and no file) when there
/// is no such item.
///
/// The file is written under a temporary name beside `path`, fsync'd, and
/// renamed to `path` only once every chunk and the whole payload's digest
/// were checked. On any error (a damaged or missing chunk, I/O) the
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
    let key = check_key(table, key)?;
    let sender = Sender::for_reads(client, options.retry, options.concurrency);
    // The attribute streams whatever its size; the manifest is still read
    // (and checked) to report it, with no limit on the raw length.
    let target = table.target_within(usize::MAX);
    let mut read_options = ReassembleOptions::new(&table.key, &table.layout);
    read_options.max_raw_bytes = options.max_item_bytes;
    let mut file = PartialFile::create(path).await?;
    let mut parent_reads = 0;
    let mut chunks_read = 0;
    loop {
        parent_reads += 1;
        let Some(parent) = sender.get(parent_get(&target, &key)).await? else {
            return Ok(None);
        };
        let manifest = target.read_manifest(&parent)?;
        let mut reader = ChunkReader::new(&parent, attribute, &read_options)?;
        progress.start(match &manifest {
            Some(m) if m.inline.is_none() => m.stored_len,
            _ => 0,
        });
        let mut copy = Copy {
            sender: &sender,
            table,
            manifest: manifest.as_ref(),
            reader: &mut reader,
            file: &mut file,
            progress,
            written: 0,
            pushed: 0,
        };
        let copied = copy.run().await;
        let (written, pushed) = (copy.written, copy.pushed);
        chunks_read += pushed;
        match copied {
            Ok(()) => {
                reader.finish()?;
                file.commit().await?;
                return Ok(Some(FileOutcome {
                    bytes: written,
                    manifest,
                    chunks_read,
                    parent_reads,
                    consumed_read_units: sender.consumed.read_units(),
                }));
            }
            Err(HostError::Reassemble(missing @ ReassembleError::ChunkMissing { .. }))
                if parent_reads <= options.max_rereads =>
            {
                // Deleted under us by an overwrite's cleanup? Only if the
                // parent moved on; if not, the store lost a chunk.
                let now = sender.get(parent_get(&target, &key)).await?;
                let version = |p: &Item| Some(target.read_manifest(p).ok()??.version);
                if now.as_ref().and_then(version) == version(&parent) {
                    return Err(missing.into());
                }
                file.restart().await?;
            }
            Err(HostError::Reassemble(ReassembleError::ChunkMissing { .. })) => {
                return Err(HostError::ChunksVanished {
                    key: crate::json::key_text(&table.key, &key),
                    attempts: parent_reads,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

/// One attempt: the chunks of one parent's version, in order, into the file.
struct Copy<'a> {
    sender: &'a Sender<'a>,
    table: &'a TableConfig,
    manifest: Option<&'a Manifest>,
    reader: &'a mut ChunkReader,
    file: &'a mut PartialFile,
    progress: &'a dyn Progress,
    /// Bytes written to the file.
    written: u64,
    /// Chunks pushed to the reader.
    pushed: u32,
}

impl Copy<'_> {
    async fn run(&mut self) -> Result<(), HostError> {
        // An attribute on the parent, or an inline payload: all here.
        self.drain().await?;
        let count = self.reader.chunk_count();
        // Progress in the chunks' payload bytes, advanced here.
        let table = self.table;
        let mut window = ChunkWindow::new(self.sender, &table.chunk_table, count, &());
        while let Some(mut found) = window.next(|seq| self.reader.chunk_key(seq)).await? {
            for seq in found.seqs.clone() {
                let chunk = found
                    .take(&self.reader.chunk_key(seq)?)
                    .ok_or(ReassembleError::ChunkMissing { seq, count })?;
                self.push(seq, &chunk).await?;
            }
        }
        Ok(())
    }

    /// Pushes chunk `seq` and writes what it decodes to.
    async fn push(&mut self, seq: u32, chunk: &Item) -> Result<(), HostError> {
        self.reader.push(chunk)?;
        self.pushed += 1;
        self.progress
            .advance(self.manifest.map_or(0, |m| m.chunk_len(seq)));
        self.drain().await
    }

    /// Writes every byte the reader can decode from what was pushed.
    async fn drain(&mut self) -> Result<(), HostError> {
        loop {
            let reader = &mut *self.reader;
            let piece = crate::cpu::heavy(move || reader.read())?;
            if piece.is_empty() {
                return Ok(());
            }
            self.file.write(piece).await?;
            self.written += piece.len() as u64;
        }
    }
}
