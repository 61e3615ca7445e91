//! Reading one string or binary attribute of a virtual item as its chunks
//! arrive, in bounded memory: a stored file streamed out of DynamoDB.
//!
//! Each chunk is checked whole (key, version, position, length, digest)
//! before any byte decoded from it is released, so a damaged or foreign
//! chunk never reaches the caller. The whole payload's digest and the value
//! stream's end can only be checked after the last chunk: a writer that
//! forged valid chunk digests over a damaged payload is caught by
//! [`ChunkReader::finish`], after its bytes were released.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use crate::codec::{Codec, CodecError};
use crate::encoding::{ScanError, Scanner};
use crate::key::KeySchema;
use crate::layout::{Layout, chunk_key};
use crate::manifest::{MANIFEST_ATTRIBUTE, Manifest};
use crate::read::chunk_feed::ChunkFeed;
use crate::read::reassemble::{ReassembleError, ReassembleOptions, check_header, check_layout};
use crate::value::{AttributeValue, Item};

/// Most bytes one [`ChunkReader::read`] decodes at a time (and so returns).
pub const READ_PIECE_BYTES: usize = 256 << 10;

/// Reads one `S` or `B` attribute of a stored item from its parent and its
/// chunks, pushed one by one in sequence order, releasing the attribute's
/// bytes as they are decoded (a string's as UTF-8).
///
/// Memory is bounded whatever the attribute's size, so a reader is not held
/// to [`ReassembleOptions::max_raw_bytes`] (which bounds whole-item reads)
/// for the attribute itself. It holds the chunks pushed and not yet read,
/// one piece of output ([`READ_PIECE_BYTES`]) and the codec's state (see
/// [`crate::codec::FrameDecoder`]: at most ~43 KB for the deflate family, the window for
/// zstd, which beyond 8 MiB is held to `max_raw_bytes`). `max_raw_bytes`
/// still bounds what must be held: the whole output of a raw snappy payload
/// (it cannot be decoded in parts; `DECOMPRESS_LIMIT` when larger), and the
/// names of the other attributes and of their maps' keys, kept to refuse a
/// repeated one. The other attributes' values are checked as they pass and
/// never held. The manifest's raw length bounds how many bytes come out; a
/// caller that wants a smaller limit checks [`ChunkReader::size`].
///
/// An attribute kept on the parent (or an item that was never split) is
/// read from the parent alone: [`ChunkReader::chunk_count`] is 0 and no
/// chunk is needed. An inline payload needs none either.
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
/// let mut reader = ChunkReader::new(&split.parent, "data", &read).unwrap();
/// let mut out = Vec::new();
/// let mut drain = |reader: &mut ChunkReader| loop {
///     let piece = reader.read().unwrap();
///     if piece.is_empty() { break }
///     out.extend_from_slice(piece); // or write it out, send it on
/// };
/// drain(&mut reader); // an unsplit item, or an inline payload: all here
/// for seq in 0..reader.chunk_count() {
///     // Fetch the chunk by this key (BatchGetItem, a few at a time).
///     let key = reader.chunk_key(seq).unwrap();
///     let chunk = split.chunks.iter().find(|c| key.iter().all(|(k, v)| c.get(k) == Some(v))).unwrap();
///     reader.push(chunk).unwrap();
///     drain(&mut reader);
/// }
/// reader.finish().unwrap();
/// assert_eq!(AttributeValue::B(out), item["data"]);
/// ```
pub struct ChunkReader {
    key: KeySchema,
    layout: Layout,
    /// The parent's key attributes, which chunk keys are made from.
    parent_key: Item,
    attribute: String,
    source: Source,
    /// Decoded output; for an attribute on the parent, its bytes.
    out: Vec<u8>,
    /// Where in `out` the bytes the last [`ChunkReader::read`] gave are.
    last: Range<usize>,
    /// The code of the first error: the reader refuses to go on after one.
    failed: Option<crate::Code>,
}

/// Where the attribute's bytes come from.
enum Source {
    /// The parent holds the attribute (in `out`); `read` once they were given.
    Parent { read: bool },
    /// The payload holds it.
    Payload(alloc::boxed::Box<Payload>),
}

struct Payload {
    feed: ChunkFeed,
    scanner: Scanner,
    /// The bound on names held, for the scanner's error.
    max_raw_bytes: usize,
}

impl ChunkReader {
    /// Starts reading `attribute` of the item whose parent (as read from the
    /// table) is `parent`. Checks the manifest, and that the attribute is on
    /// the parent or may be in the payload (a manifest listing its spilled
    /// attributes without it: `ATTRIBUTE_NOT_FOUND`); an inline payload's
    /// frame is checked against the manifest here.
    pub fn new(
        parent: &Item,
        attribute: &str,
        options: &ReassembleOptions<'_>,
    ) -> Result<Self, ReassembleError> {
        let mut reader = Self {
            key: options.key.clone(),
            layout: options.layout.clone(),
            parent_key: options.key.key_of(parent),
            attribute: attribute.into(),
            source: Source::Parent { read: false },
            out: Vec::new(),
            last: 0..0,
            failed: None,
        };
        let on_parent = parent
            .get(attribute)
            .filter(|_| attribute != MANIFEST_ATTRIBUTE);
        let manifest = match parent.get(MANIFEST_ATTRIBUTE) {
            Some(value) => Some(Manifest::from_value(value).map_err(ReassembleError::Manifest)?),
            None => None,
        };
        let manifest = match (on_parent, manifest) {
            (Some(value), _) => {
                reader.out = match value {
                    AttributeValue::S(s) => s.as_bytes().to_vec(),
                    AttributeValue::B(b) => b.clone(),
                    other => return Err(reader.not_blob(other.type_name())),
                };
                return Ok(reader);
            }
            (None, Some(manifest)) if attribute != MANIFEST_ATTRIBUTE => {
                match manifest.frame_holding(attribute) {
                    Some(frame) => frame,
                    None => {
                        return Err(ReassembleError::AttributeNotFound {
                            name: attribute.into(),
                        });
                    }
                }
            }
            _ => {
                return Err(ReassembleError::AttributeNotFound {
                    name: attribute.into(),
                });
            }
        };
        let codec = manifest.codec;
        if !codec.is_enabled() {
            return Err(CodecError::Disabled { codec }.into());
        }
        let max_raw_bytes = options.max_raw_bytes;
        if codec == Codec::Snappy && manifest.raw_len > max_raw_bytes as u64 {
            return Err(CodecError::TooLarge {
                raw: manifest.raw_len,
                limit: max_raw_bytes as u64,
            }
            .into());
        }
        match &manifest.inline {
            Some(inline) => {
                check_header(inline, &manifest)?;
                if crate::codec::FrameHeader::trailer_digest(inline) != manifest.digest {
                    return Err(ReassembleError::FrameMismatch);
                }
            }
            None => {
                check_layout(&manifest, options.layout)?;
                // Fail now, not at the first chunk, if the parent's key
                // cannot make chunk keys.
                reader.chunk_key_of(&manifest, 0)?;
            }
        }
        let piece = usize::try_from(manifest.raw_len).map_or(READ_PIECE_BYTES, |r| {
            r.saturating_add(1).min(READ_PIECE_BYTES)
        });
        reader.out = vec![0; piece];
        let scanner = Scanner::new(attribute, manifest.raw_len, max_raw_bytes as u64);
        let mut feed = ChunkFeed::new(manifest, max_raw_bytes);
        if let Some(inline) = &feed.manifest.inline {
            feed.frame.feed(inline, true)?;
        }
        reader.source = Source::Payload(alloc::boxed::Box::new(Payload {
            feed,
            scanner,
            max_raw_bytes,
        }));
        Ok(reader)
    }

    /// How many chunks to push: 0 when the attribute is on the parent or
    /// the payload is inline.
    pub fn chunk_count(&self) -> u32 {
        match &self.source {
            Source::Payload(p) if p.feed.manifest.inline.is_none() => p.feed.manifest.chunk_count,
            _ => 0,
        }
    }

    /// The bytes chunk `seq` holds (0 beyond the last, or with no chunks).
    pub fn chunk_len(&self, seq: u32) -> u64 {
        match &self.source {
            Source::Payload(p) if seq < self.chunk_count() => p.feed.manifest.chunk_len(seq),
            _ => 0,
        }
    }

    /// The key attributes of chunk `seq`, to fetch it by.
    pub fn chunk_key(&self, seq: u32) -> Result<Item, ReassembleError> {
        let count = self.chunk_count();
        match &self.source {
            Source::Payload(p) if seq < count => self.chunk_key_of(&p.feed.manifest, seq),
            _ => Err(ReassembleError::ChunkOutOfRange { seq, count }),
        }
    }

    /// The attribute's length in bytes, once known: at once when it is on
    /// the parent, else once the value stream reaches it.
    pub fn size(&self) -> Option<u64> {
        match &self.source {
            Source::Parent { .. } => Some(self.out.len() as u64),
            Source::Payload(p) => p.scanner.found().map(|(len, _)| len),
        }
    }

    /// Takes the next chunk item (chunk 0 first, then 1, …), checking its
    /// key, version, position, length and digest before anything decoded
    /// from it can be read. Read its bytes with [`ChunkReader::read`].
    pub fn push(&mut self, chunk: &Item) -> Result<(), ReassembleError> {
        self.live()?;
        let result = self.accept(chunk);
        self.keep_failure(result)
    }

    /// The attribute's next bytes, decoded from what was pushed: at most
    /// [`READ_PIECE_BYTES`] at a time (an attribute on the parent comes
    /// whole). Empty when the reader needs the next chunk, or is done.
    /// Call it until it is empty after every push: chunks pushed and not yet
    /// read are held.
    pub fn read(&mut self) -> Result<&[u8], ReassembleError> {
        self.live()?;
        let range = self.next_range();
        self.last = self.keep_failure(range)?;
        Ok(&self.out[self.last.clone()])
    }

    /// The bytes the last [`ChunkReader::read`] gave, again.
    pub(crate) fn last_read(&self) -> &[u8] {
        &self.out[self.last.clone()]
    }

    /// Ends the read: checks every chunk was pushed, the payload decoded to
    /// exactly its recorded length, its digest, that the value stream ended
    /// well-formed, and that it held the attribute. Fails with
    /// `READER_NOT_DRAINED` if bytes of the attribute were left unread.
    pub fn finish(mut self) -> Result<(), ReassembleError> {
        self.live()?;
        if !self.read()?.is_empty() {
            return Err(ReassembleError::Unread);
        }
        let Source::Payload(payload) = &self.source else {
            return Ok(());
        };
        let Payload { feed, scanner, .. } = &**payload;
        if feed.manifest.inline.is_none() {
            feed.check_complete()?;
        }
        if feed.frame.finish()? != feed.manifest.digest {
            return Err(ReassembleError::FrameMismatch);
        }
        scanner.finish()?;
        if scanner.found().is_none() {
            return Err(ReassembleError::AttributeNotFound {
                name: self.attribute.clone(),
            });
        }
        Ok(())
    }

    fn live(&self) -> Result<(), ReassembleError> {
        match self.failed {
            Some(code) => Err(ReassembleError::ReaderFailed { code }),
            None => Ok(()),
        }
    }

    fn keep_failure<T>(
        &mut self,
        result: Result<T, ReassembleError>,
    ) -> Result<T, ReassembleError> {
        if let Err(e) = &result {
            self.failed = Some(e.code());
        }
        result
    }

    fn not_blob(&self, found: &'static str) -> ReassembleError {
        ReassembleError::AttributeNotBlob {
            name: self.attribute.clone(),
            found,
        }
    }

    fn chunk_key_of(&self, manifest: &Manifest, seq: u32) -> Result<Item, ReassembleError> {
        chunk_key(
            &self.key,
            &self.layout,
            &self.parent_key,
            manifest.version,
            seq,
        )
        .map_err(|_| ReassembleError::ChunkMalformed {
            index: seq as usize,
            reason: "parent key cannot make chunk keys",
        })
    }

    fn accept(&mut self, chunk: &Item) -> Result<(), ReassembleError> {
        let Source::Payload(payload) = &mut self.source else {
            return Err(ReassembleError::UnexpectedChunks { count: 1 });
        };
        let feed = &mut payload.feed;
        if feed.manifest.inline.is_some() {
            return Err(ReassembleError::UnexpectedChunks { count: 1 });
        }
        let taken = feed.take(&self.key, &self.layout, &self.parent_key, chunk)?;
        // Bytes decoded from a chunk are released at once: a damaged one
        // must stop the reader before any reach its decoder.
        if !taken.intact {
            return Err(ReassembleError::ChunkDigestMismatch { seq: taken.seq });
        }
        feed.feed(taken)
    }

    /// Where in `out` the next bytes of the attribute are.
    fn next_range(&mut self) -> Result<Range<usize>, ReassembleError> {
        let payload = match &mut self.source {
            Source::Parent { read } => {
                let range = if *read { 0..0 } else { 0..self.out.len() };
                *read = true;
                return Ok(range);
            }
            Source::Payload(payload) => payload,
        };
        loop {
            let written = payload.feed.frame.decode(&mut self.out)?;
            if written == 0 {
                return Ok(0..0);
            }
            let range = payload
                .scanner
                .scan(&self.out[..written])
                .map_err(|e| match e {
                    ScanError::Decode(e) => ReassembleError::Decode(e),
                    ScanError::NotBlob { found } => ReassembleError::AttributeNotBlob {
                        name: self.attribute.clone(),
                        found,
                    },
                    ScanError::NamesTooLarge { held } => CodecError::TooLarge {
                        raw: held,
                        limit: payload.max_raw_bytes as u64,
                    }
                    .into(),
                })?;
            if !range.is_empty() {
                return Ok(range);
            }
        }
    }
}
