//! Writing virtual items: core's [`PutMachine`] (the commit protocol of
//! `docs/FORMAT.md`, "Writing"), driven by the executor. What the machine
//! reports is the outcome; this module only moves a reader's bytes in.

use aws_sdk_dynamodb::Client;
use dynaslice_core::protocol::policy::INPUT_BYTES;
use dynaslice_core::protocol::{PutMachine, PutSource};
use dynaslice_core::{Item, SplitItem, VersionId};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::error::HostError;
use crate::executor::{Driver, Stop, env, local_ms};
use crate::progress::Progress;
use crate::table::TableConfig;

pub use dynaslice_core::protocol::{PutOptions, PutOutcome};

/// A fresh version id by this machine's clock and 80 random bits, for
/// splits that are only estimated, never written (writes stamp theirs in
/// the store's time).
pub fn fresh_version() -> VersionId {
    VersionId::new(local_ms(), fastrand::u128(..))
}

/// Writes `item` to `table`: validates and splits it, reads the stored
/// parent, writes the chunks and commits the parent. By default the last
/// writer wins, as with PutItem, and the replaced version's chunks are
/// deleted. With [`PutOptions::precondition`] the commit is conditional
/// on the parent read: a stored item that fails the precondition, or a
/// concurrent writer that committed first, makes this return
/// `CONFLICT`, with this write's chunks deleted.
///
/// In batch mode (the default) chunks are written while the rest of the
/// payload is still being compressed, and `progress` counts the bytes of
/// the spilled attributes' value stream; otherwise the whole split comes
/// first and `progress` counts the bytes written.
pub async fn put(
    client: &Client,
    table: &TableConfig,
    item: &Item,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let source = PutSource::Item(item);
    let mut machine = PutMachine::new(source, table.core(), options.clone(), env());
    Driver::for_table(client, table, progress)
        .finish(&mut machine)
        .await
}

/// Writes an item split and verified elsewhere (an upload), stamped anew
/// in the store's time before anything is written.
pub(crate) async fn put_upload(
    client: &Client,
    table: &TableConfig,
    split: SplitItem,
    options: &PutOptions,
) -> Result<PutOutcome, HostError> {
    let source = PutSource::Upload(split);
    let mut machine = PutMachine::new(source, table.core(), options.clone(), env());
    Driver::for_table(client, table, &())
        .finish(&mut machine)
        .await
}

/// Writes the item `parent` with one more binary attribute `attribute`
/// holding the bytes `reader` yields, in bounded memory: chunks go out as
/// they are cut. `len` is their exact count when known first (a regular
/// file's size; another count is `STREAM_LENGTH_MISMATCH`), or `None` to
/// read to the end (a pipe), up to [`PutOptions::max_stream_bytes`].
/// Commits like [`put()`]; a reader that fails, yields a different length
/// or passes the limit aborts the write (its chunks are deleted) and
/// leaves the stored item as it was. Streams are written in batch mode
/// (atomic mode refuses with `OPTIONS_INVALID`).
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
    len: Option<u64>,
    options: &PutOptions,
    progress: &dyn Progress,
) -> Result<PutOutcome, HostError> {
    let source = PutSource::Stream {
        parent,
        attribute: attribute.to_string(),
        len,
    };
    let mut machine = PutMachine::new(source, table.core(), options.clone(), env());
    let mut driver = Driver::for_table(client, table, progress);
    let mut piece = vec![0; INPUT_BYTES];
    loop {
        match driver.run(&mut machine).await {
            Stop::Done(result) => return result,
            Stop::Input(max) => {
                let want = max.min(piece.len());
                match read_full(&mut reader, &mut piece[..want]).await {
                    Ok(0) => crate::cpu::heavy(|| machine.end_input()),
                    Ok(n) => crate::cpu::heavy(|| machine.input(&piece[..n])),
                    Err(e) => {
                        // This write's chunks are deleted before the error.
                        dynaslice_core::protocol::Machine::cancel(&mut machine);
                        let _ = driver.run(&mut machine).await;
                        return Err(HostError::io(attribute, e));
                    }
                }
            }
            Stop::Output | Stop::Restart => {
                return Err(HostError::Internal("a write asked for output".into()));
            }
        }
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
