//! Streamed puts: a large binary value (a file) is read in pieces, split by
//! core's `StreamSplit` and uploaded as chunks fill, so memory stays bounded
//! by the batches in flight, never the whole value. An item already in
//! memory is split the same way (core's `ItemStream`), so that its chunks
//! are written while the rest of it is compressed.

use aws_sdk_dynamodb::Client;
use dynaslice_core::codec::choose_compression;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::plan::{
    Expect, WriteKind, WriteMode, WriteRequest, WriteSteps, pack_batch_writes,
    plan_streamed_commit_as,
};
use dynaslice_core::write_units;
use dynaslice_core::{
    Codec, CodecChoice, Compression, Item, ItemStream, SplitError, SplitItem, StreamSplit,
    VersionId, item_size,
};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::commit::{BatchCommit, commit_batch};
use crate::error::HostError;
use crate::progress::Progress;
use crate::put::{PutOptions, PutOutcome, check_precondition, clean_up, read_expect};
use crate::send::Sender;
use crate::table::TableConfig;

/// Bytes read from the source at a time.
const READ_BYTES: usize = 1 << 20;

/// The codec of a streamed value: `auto` decides on the first megabyte (the
/// whole value is never in memory to decide on); streams support `none` and
/// the deflate family only.
fn stream_compression(choice: CodecChoice, sample: &[u8]) -> Compression {
    match choice {
        CodecChoice::Fixed(c) => c,
        CodecChoice::Auto => match choose_compression(sample).codec {
            Codec::None => Compression::NONE,
            _ => Compression::new(Codec::Deflate),
        },
    }
}

/// Fills `buf` from `reader` as far as it goes; returns the bytes read.
async fn read_full<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = reader.read(&mut buf[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// Writes the item `parent` with one more binary attribute `attribute`
/// holding the `len` bytes `reader` yields. Commits like [`crate::put()`]
/// (last writer wins unless [`PutOptions::precondition`] says otherwise);
/// a reader that fails or yields a different length aborts the write
/// (its chunks are deleted) and leaves the stored item as it was. Streams
/// are written in batch mode (atomic mode refuses with `OPTIONS_INVALID`).
#[expect(
    clippy::too_many_arguments,
    reason = "put()'s arguments plus the stream's attribute, reader and declared length"
)]
pub async fn put_reader<R: AsyncRead + Unpin>(
    client: &Client,
    table: &TableConfig,
    parent: Item,
    attribute: &str,
    mut reader: R,
    len: u64,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    if options.mode == WriteMode::Atomic {
        return Err(SplitError::BadOptions {
            reason: "a streamed put is written in batch mode; use put for one transaction",
        }
        .into());
    }
    let sender = options.sender(client);
    // The parent read's answer carries the store's time, for the version.
    let expect = read_expect(&sender, table, &parent, options.max_item_bytes).await?;
    check_precondition(table, &parent, &expect, options)?;
    let split_options = options.split_options(table, sender.clock.fresh_version()?);
    let mut piece = vec![0; READ_BYTES];
    let first = read_full(&mut reader, &mut piece)
        .await
        .map_err(|e| HostError::io(attribute, e))?;
    let compression = stream_compression(options.compression, &piece[..first]);
    let mut stream = StreamSplit::new(
        parent.clone(),
        attribute.to_string(),
        len,
        compression,
        &split_options,
    )?;
    progress.start(len);
    let mut uploads = Uploads::new(&sender, table, options.batch_items);
    let mut filled = first;
    let split: Result<_, HostError> = async {
        loop {
            let chunks = crate::cpu::heavy(|| stream.push(&piece[..filled]))?;
            progress.advance(filled as u64);
            uploads.add(chunks).await?;
            if filled < piece.len() {
                break;
            }
            filled = read_full(&mut reader, &mut piece)
                .await
                .map_err(|e| HostError::io(attribute, e))?;
            if filled == 0 {
                break;
            }
        }
        drop(piece);
        Ok(stream.finish()?)
    }
    .await;
    uploads
        .commit(split, &parent, split_options.version, &expect, options)
        .await
}

/// Raw bytes of an in-memory item compressed between looks at the uploads
/// in flight (about 6 ms of deflate).
const PUSH_BYTES: usize = 256 << 10;

/// Writes an item held in memory in batch mode, uploading its chunks as
/// they are compressed (see [`dynaslice_core::split_item_streamed`]): the
/// compression of a large payload overlaps its writes. Progress counts the
/// bytes of the spilled attributes' value stream.
pub(crate) async fn put_item_stream(
    sender: &Sender<'_>,
    table: &TableConfig,
    item: &Item,
    mut stream: Box<ItemStream<'_>>,
    expect: &Expect,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let (version, stream_len) = (stream.version(), stream.raw_len());
    progress.start(stream_len);
    let mut uploads = Uploads::new(sender, table, options.batch_items);
    // Raw bytes pushed but not yet reported: none is reported before the
    // first chunk, so that a payload that ends up inline reports its write.
    let mut reported = 0;
    let split: Result<_, HostError> = async {
        while let Some(chunks) = crate::cpu::heavy(|| stream.next_chunks(PUSH_BYTES))? {
            if !chunks.is_empty() || reported > 0 {
                progress.advance(stream.received() - reported);
                reported = stream.received();
            }
            uploads.add(chunks).await?;
        }
        Ok(crate::cpu::heavy(|| stream.finish())?)
    }
    .await;
    if let Ok(split) = &split {
        if reported == 0 {
            // Nothing was cut before the end (the payload is stored
            // inline, or only just too long for that): written as put
            // plans it.
            return crate::put::put_split(sender, table, split, expect, options, progress).await;
        }
        progress.advance(stream_len - reported);
    }
    uploads.commit(split, item, version, expect, options).await
}

/// Chunk uploads with at most `concurrency` batches in flight.
struct Uploads<'a, F> {
    sender: &'a Sender<'a>,
    table: &'a TableConfig,
    batch_items: usize,
    ready: Vec<Item>,
    in_flight: FuturesUnordered<F>,
    written: usize,
    units: u64,
    count: u32,
}

impl<'a>
    Uploads<
        'a,
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), HostError>> + Send + 'a>>,
    >
{
    fn new(sender: &'a Sender<'a>, table: &'a TableConfig, batch_items: usize) -> Self {
        Self {
            sender,
            table,
            batch_items,
            ready: Vec::new(),
            in_flight: FuturesUnordered::new(),
            written: 0,
            units: 0,
            count: 0,
        }
    }

    /// Uploads the finished `split`'s last chunks and commits its parent
    /// (keyed by `key`); if the split or an upload failed, deletes every
    /// chunk of `version` this write may have stored instead.
    async fn commit(
        mut self,
        split: Result<SplitItem, HostError>,
        key: &Item,
        version: VersionId,
        expect: &Expect,
        options: &PutOptions,
    ) -> Result<PutOutcome, HostError> {
        let uploaded = match split {
            Ok(mut split) => {
                let last = std::mem::take(&mut split.chunks);
                async {
                    self.add(last).await?;
                    self.flush().await
                }
                .await
                .map(|()| split)
            }
            Err(e) => Err(e),
        };
        let split = match uploaded {
            Ok(split) => split,
            Err(e) => {
                self.abort(&version, key).await;
                return Err(e);
            }
        };
        let sender = self.sender;
        let plan = plan_streamed_commit_as(&split, &self.table.target(), expect, options.commit())?;
        let WriteSteps::Batch {
            overwrite,
            commit,
            abort,
            ..
        } = plan.steps
        else {
            return Err(HostError::Internal(
                "a streamed write plans one commit".into(),
            ));
        };
        let steps = BatchCommit {
            overwrite,
            commit,
            abort,
            cleanup: plan.cleanup,
        };
        let committed = commit_batch(sender, self.table, &split, steps, expect, options).await?;
        let cleanup_left = clean_up(sender, committed.cleanup).await;
        let parent_size = item_size(&split.parent);
        Ok(PutOutcome {
            mode: WriteKind::Batch,
            manifest: split.manifest.clone(),
            replaced: committed.replaced,
            superseded: committed.superseded,
            bytes_written: (parent_size + self.written) as u64,
            planned_write_units: self.units + write_units(parent_size, false),
            cleanup_left,
            consumed_write_units: sender.consumed.write_units(),
            consumed_read_units: sender.consumed.read_units(),
        })
    }

    /// Queues chunks; sends full batches, waiting while too many fly.
    async fn add(&mut self, chunks: Vec<Item>) -> Result<(), HostError> {
        for chunk in chunks {
            let size = item_size(&chunk);
            self.written += size;
            self.units += write_units(size, false);
            self.count += 1;
            self.ready.push(chunk);
            if self.ready.len() >= self.batch_items {
                self.send_ready().await?;
            }
        }
        Ok(())
    }

    async fn send_ready(&mut self) -> Result<(), HostError> {
        while self.in_flight.len() >= self.sender.pace.limit() {
            if let Some(result) = self.in_flight.next().await {
                result?;
            }
        }
        let requests = std::mem::take(&mut self.ready)
            .into_iter()
            .map(|chunk| (self.table.chunk_table.clone(), WriteRequest::Put(chunk)));
        let sender = self.sender;
        for batch in pack_batch_writes(requests) {
            self.in_flight.push(Box::pin(
                async move { sender.batch_write(batch, &()).await },
            ));
        }
        Ok(())
    }

    /// Sends what is queued and waits for every batch.
    async fn flush(&mut self) -> Result<(), HostError> {
        if !self.ready.is_empty() {
            self.send_ready().await?;
        }
        while let Some(result) = self.in_flight.next().await {
            result?;
        }
        Ok(())
    }

    /// After a failure: waits for batches in flight, then deletes every
    /// chunk this write may have stored (best effort; `gc` catches the rest).
    async fn abort(&mut self, version: &VersionId, parent: &Item) {
        while self.in_flight.next().await.is_some() {}
        let keys = (0..self.count)
            .filter_map(|seq| {
                chunk_key(&self.table.key, &self.table.layout, parent, *version, seq).ok()
            })
            .map(|key| (self.table.chunk_table.clone(), WriteRequest::Delete(key)));
        let _ = self.sender.batch_writes(pack_batch_writes(keys), &()).await;
    }
}
