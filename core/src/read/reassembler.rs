//! Rebuilding a whole item as its chunks arrive: what [`crate::read::reassemble`]
//! does, without holding every chunk beside the payload.
//!
//! Each chunk is checked and decoded into the raw payload as it is pushed,
//! and may be dropped at once: a reader holds the raw payload (reserved to
//! the manifest's raw length, itself held to `max_raw_bytes`) and, while it
//! is decoded into attributes at the end, the item. About twice the item,
//! where collecting the chunks first holds them, the payload and the item.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use crate::code::Code;
use crate::codec::{Codec, CodecError, FRAME_HEADER_BYTES, FRAME_TRAILER_BYTES};
use crate::encoding::decode_attributes;
use crate::key::KeySchema;
use crate::layout::{Layout, chunk_key};
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest};
use crate::read::chunk_feed::{ChunkFeed, Taken};
use crate::read::reassemble::{
    ReassembleError, ReassembleOptions, check_layout, decode_inline, manifest_within_limit, merge,
    without_manifest,
};
use crate::value::Item;
use crate::version::VersionId;

/// Rebuilds an item from its parent and its chunks, pushed one by one in
/// sequence order, with the checks and the errors of [`crate::read::reassemble`]:
/// for the same parent and chunks, [`Reassembler::finish`] gives the item
/// `reassemble` gives, or an error of the same code.
///
/// Like `reassemble`, a chunk whose bytes fail their digest is named
/// (`CHUNK_DIGEST_MISMATCH`) only when the payload fails: the first such
/// chunk pushed is blamed for any later failure of the frame, the
/// decompression or the decoding. Nothing decoded is given out before
/// [`Reassembler::finish`] checked the whole payload's digest.
///
/// A parent that was never split, or holds its payload inline, needs no
/// chunk: [`Reassembler::chunk_count`] is 0.
///
/// ```
/// use dynaslice_core::*;
/// let schema = KeySchema::partition("pk", KeyType::S);
/// let mut item = Item::new();
/// item.insert("pk".into(), AttributeValue::S("video".into()));
/// item.insert("data".into(), AttributeValue::B((0..2_000_000u32).map(|i| (i * 7 % 251) as u8).collect()));
/// let options = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 3));
/// let split = split_item(&item, &options).unwrap();
///
/// let read = ReassembleOptions::new(&schema, &options.layout);
/// let mut reassembler = Reassembler::new(&split.parent, &read).unwrap();
/// for seq in 0..reassembler.chunk_count() {
///     // Fetch the chunk by this key (BatchGetItem, a few at a time).
///     let key = reassembler.chunk_key(seq).unwrap();
///     let chunk = split.chunks.iter().find(|c| key.iter().all(|(k, v)| c.get(k) == Some(v))).unwrap();
///     reassembler.push(chunk).unwrap(); // then drop the chunk
/// }
/// assert_eq!(reassembler.finish().unwrap(), item);
/// ```
pub struct Reassembler {
    key: KeySchema,
    layout: Layout,
    /// The parent without its manifest: the attributes kept on it.
    parent: Item,
    source: Source,
    /// The code of the first error: the reassembler refuses to go on after one.
    failed: Option<Code>,
}

/// Where the spilled attributes come from.
enum Source {
    /// Decoded already: none (a plain item), or an inline payload's.
    Decoded(Item),
    /// The chunks, still arriving.
    Chunks(Box<Frames>),
}

/// The frames of a chunked payload (a manifest's own, then its groups'),
/// taken one after the other: chunk numbers run on across frames.
struct Frames {
    /// The manifest read: every frame's id, chunk count and lengths.
    whole: Manifest,
    /// The frame whose chunks are arriving.
    current: Chunks,
    /// The frames still to come, the next last.
    pending: Vec<Manifest>,
    /// The attributes of the frames decoded so far.
    decoded: Item,
    max_raw_bytes: usize,
}

struct Chunks {
    feed: ChunkFeed,
    /// The raw payload decoded so far, in `raw[..written]`; one byte longer
    /// than the raw length, so that a body decoding to more is caught.
    raw: Vec<u8>,
    written: usize,
    /// The first chunk pushed whose bytes failed their digest.
    damaged: Option<u32>,
}

/// `error`, or the damaged chunk that explains it.
fn blame(damaged: Option<u32>, error: ReassembleError) -> ReassembleError {
    match damaged {
        Some(seq) => ReassembleError::ChunkDigestMismatch { seq },
        None => error,
    }
}

impl Reassembler {
    /// Starts rebuilding the item whose parent (as read from the table) is
    /// `parent`. Checks the manifest against `options` (its layout, its raw
    /// length within `max_raw_bytes`); an inline payload is decoded here.
    pub fn new(parent: &Item, options: &ReassembleOptions<'_>) -> Result<Self, ReassembleError> {
        let mut reassembler = Self {
            key: options.key.clone(),
            layout: options.layout.clone(),
            parent: without_manifest(parent),
            source: Source::Decoded(Item::new()),
            failed: None,
        };
        let Some(value) = parent.get(MANIFEST_ATTRIBUTE) else {
            return Ok(reassembler);
        };
        let manifest = manifest_within_limit(value, options.max_raw_bytes)?;
        if let Some(frame) = &manifest.inline {
            reassembler.source =
                Source::Decoded(decode_inline(frame, &manifest, options.max_raw_bytes)?);
            return Ok(reassembler);
        }
        check_layout(&manifest, options.layout)?;
        // Fail now, not at the first chunk, if the parent's key cannot make
        // chunk keys.
        reassembler.chunk_key_of(manifest.version, 0)?;
        let whole = manifest.clone();
        let mut manifest = manifest;
        let mut pending = core::mem::take(&mut manifest.groups);
        pending.reverse();
        reassembler.source = Source::Chunks(Box::new(Frames {
            whole,
            current: Chunks::new(manifest, options.max_raw_bytes)?,
            pending,
            decoded: Item::new(),
            max_raw_bytes: options.max_raw_bytes,
        }));
        Ok(reassembler)
    }

    /// How many chunks to push: 0 for an item never split or an inline
    /// payload. The chunks of a manifest's groups follow its own.
    pub fn chunk_count(&self) -> u32 {
        match &self.source {
            // At most 65 frames of at most 999,999 chunks each: fits.
            Source::Chunks(frames) => {
                u32::try_from(frames.whole.total_chunks()).unwrap_or(u32::MAX)
            }
            Source::Decoded(_) => 0,
        }
    }

    /// The key attributes of chunk `seq`, to fetch it by.
    pub fn chunk_key(&self, seq: u32) -> Result<Item, ReassembleError> {
        let count = self.chunk_count();
        match &self.source {
            Source::Chunks(frames) => match frames.whole.frame_chunk(seq) {
                Some((frame, local)) => self.chunk_key_of(frame.version, local),
                None => Err(ReassembleError::ChunkOutOfRange { seq, count }),
            },
            Source::Decoded(_) => Err(ReassembleError::ChunkOutOfRange { seq, count }),
        }
    }

    /// The bytes chunk `seq` holds (0 beyond the last, or with no chunks).
    pub fn chunk_len(&self, seq: u32) -> u64 {
        match &self.source {
            Source::Chunks(frames) => frames
                .whole
                .frame_chunk(seq)
                .map_or(0, |(frame, local)| frame.chunk_len(local)),
            Source::Decoded(_) => 0,
        }
    }

    /// Takes the next chunk item (chunk 0 first, then 1, …): checks its key,
    /// version, position and length, and decodes its bytes into the payload.
    /// The chunk is not kept.
    pub fn push(&mut self, chunk: &Item) -> Result<(), ReassembleError> {
        if let Some(code) = self.failed {
            return Err(ReassembleError::ReaderFailed { code });
        }
        let result = self.accept(chunk);
        if let Err(e) = &result {
            self.failed = Some(e.code());
        }
        result
    }

    /// Ends the reassembly: checks every chunk was pushed, the payload
    /// decoded to exactly its recorded length and digest, decodes its
    /// attributes and merges them with the parent's. Returns the item
    /// exactly as it was split.
    pub fn finish(self) -> Result<Item, ReassembleError> {
        if let Some(code) = self.failed {
            return Err(ReassembleError::ReaderFailed { code });
        }
        let spilled = match self.source {
            Source::Decoded(spilled) => spilled,
            Source::Chunks(frames) => {
                let Frames {
                    current,
                    pending,
                    decoded,
                    ..
                } = *frames;
                // The current frame's own missing chunk first; then a
                // frame never begun.
                let last = decode_payload(current)?;
                if let Some(next) = pending.last() {
                    return Err(ReassembleError::ChunkMissing {
                        seq: 0,
                        count: next.chunk_count,
                    });
                }
                merge(decoded, last)?
            }
        };
        merge(self.parent, spilled)
    }

    fn chunk_key_of(&self, version: VersionId, seq: u32) -> Result<Item, ReassembleError> {
        chunk_key(&self.key, &self.layout, &self.parent, version, seq).map_err(|_| {
            ReassembleError::ChunkMalformed {
                index: seq as usize,
                reason: "parent key cannot make chunk keys",
            }
        })
    }

    fn accept(&mut self, chunk: &Item) -> Result<(), ReassembleError> {
        let Source::Chunks(frames) = &mut self.source else {
            return Err(ReassembleError::UnexpectedChunks { count: 1 });
        };
        // The current frame is complete: its attributes are decoded (and
        // checked) before the next frame's first chunk is taken.
        if frames.current.complete()
            && let Some(next) = frames.pending.pop()
        {
            let next = Chunks::new(next, frames.max_raw_bytes)?;
            let done = decode_payload(core::mem::replace(&mut frames.current, next))?;
            frames.decoded = merge(core::mem::take(&mut frames.decoded), done)?;
        }
        let chunks = &mut frames.current;
        let taken = chunks
            .feed
            .take(&self.key, &self.layout, &self.parent, chunk)?;
        if !taken.intact && chunks.damaged.is_none() {
            chunks.damaged = Some(taken.seq);
        }
        let first = taken.seq == 0;
        let decoded = decode_chunk(chunks, taken, first);
        decoded.map_err(|e| blame(chunks.damaged, e))
    }
}

impl Chunks {
    /// Ready for the chunks of `frame`, its raw payload reserved.
    fn new(frame: Manifest, max_raw_bytes: usize) -> Result<Self, ReassembleError> {
        let too_large = CodecError::TooLarge {
            raw: frame.raw_len,
            limit: max_raw_bytes as u64,
        };
        let room = usize::try_from(frame.raw_len)
            .ok()
            .and_then(|len| len.checked_add(1))
            .ok_or(too_large)?;
        Ok(Self {
            feed: ChunkFeed::new(frame, max_raw_bytes),
            raw: vec![0; room],
            written: 0,
            damaged: None,
        })
    }

    /// Every chunk of the frame taken.
    fn complete(&self) -> bool {
        self.feed.next >= self.feed.manifest.chunk_count
    }
}

/// Feeds a taken chunk to the frame decoder and decodes what it can into
/// the payload.
fn decode_chunk(chunks: &mut Chunks, taken: Taken<'_>, first: bool) -> Result<(), ReassembleError> {
    chunks.feed.feed(taken)?;
    let manifest = &chunks.feed.manifest;
    // As `reassemble` checks it: an uncompressed body is the raw payload.
    let framing = (FRAME_HEADER_BYTES + FRAME_TRAILER_BYTES) as u64;
    if first
        && manifest.codec == Codec::None
        && manifest.stored_len.checked_sub(framing) != Some(manifest.raw_len)
    {
        return Err(ReassembleError::FrameMismatch);
    }
    loop {
        let written = chunks
            .feed
            .frame
            .decode(&mut chunks.raw[chunks.written..])?;
        if written == 0 {
            return Ok(());
        }
        chunks.written += written;
    }
}

/// The spilled attributes, once every chunk was pushed: the payload's
/// length and digest checked, then decoded (the decoder's state dropped
/// first, so only the payload and the item are held).
fn decode_payload(chunks: Chunks) -> Result<Item, ReassembleError> {
    chunks.feed.check_complete()?;
    let damaged = chunks.damaged;
    decode_checked(chunks).map_err(|e| blame(damaged, e))
}

fn decode_checked(chunks: Chunks) -> Result<Item, ReassembleError> {
    let Chunks {
        feed,
        mut raw,
        written,
        ..
    } = chunks;
    if feed.frame.finish()? != feed.manifest.digest {
        return Err(ReassembleError::FrameMismatch);
    }
    drop(feed);
    raw.truncate(written);
    Ok(decode_attributes(&raw)?)
}
