//! Splitting a large binary payload that arrives in pieces (a file, a
//! network stream) without ever holding it whole: memory stays within one
//! chunk and the compressor's state, whatever the payload's size.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::{Codec, Compression, FRAME_HEADER_BYTES, FrameHeader, choose_compression};
use crate::digest::Digester;
use crate::digest::chunk_digest;
use crate::encoding::binary_attribute_prefix;
use crate::manifest::{CHUNK_DATA_ATTRIBUTE, Manifest, reserved_attribute};
use crate::validate::{ValidateOptions, validate_item};
use crate::value::{AttributeValue, Item};
use crate::write::cutter::Cutter;
use crate::write::split::DEFAULT_MAX_CHUNK_KEYS;
use crate::write::split::{
    ChunkBase, CodecChoice, SplitError, SplitItem, SplitOptions, check_options, chunk_data_bytes,
    chunk_item, put_manifest,
};

/// The encoder between the raw value stream and the chunks.
enum Encoder {
    Stored,
    #[cfg(feature = "deflate")]
    Deflate(crate::codec::DeflateStream),
}

/// Splits an item whose one large binary attribute arrives in pieces.
///
/// The result is the same kind of virtual item [`crate::split_item`] makes
/// (always chunked, never inline): [`crate::read::reassemble`] reads it back with
/// the attribute as one `B` value.
///
/// ```
/// use dynaslice_core::*;
/// use dynaslice_core::codec::Compression;
/// let schema = KeySchema::partition("pk", KeyType::S);
/// let mut parent = Item::new();
/// parent.insert("pk".into(), AttributeValue::S("video".into()));
/// let options = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 3));
/// let mut stream = StreamSplit::new(parent, "data".into(), Some(1_000_000), Compression::NONE, &options).unwrap();
/// let mut chunks = Vec::new();
/// for piece in vec![9u8; 1_000_000].chunks(65_536) {
///     chunks.extend(stream.push(piece).unwrap()); // complete chunks, ready to upload
/// }
/// let split = stream.finish().unwrap();
/// chunks.extend(split.chunks);
/// let item = reassemble(&split.parent, &chunks, &ReassembleOptions::new(&schema, &options.layout)).unwrap();
/// assert_eq!(item["data"], AttributeValue::B(vec![9; 1_000_000]));
/// ```
pub struct StreamSplit {
    options: SplitOptions,
    base: ChunkBase,
    parent: Item,
    spilled: Vec<String>,
    codec: Codec,
    /// The payload's length as declared, or `None` when it is learned at
    /// the end (then the first chunk, which holds the frame's raw length,
    /// is held back until then).
    declared: Option<u64>,
    received: u64,
    /// The value stream's length: fixed at the start, or counted.
    stream_len: u64,
    /// The first chunk, held back while the frame's raw length is unknown.
    first: Option<(Vec<u8>, u64)>,
    digest: Digester,
    encoder: Encoder,
    cutter: Cutter,
    data_bytes: usize,
    /// Cut into parts of an S3 object, not chunks ([`StreamSplit::object`]).
    parts: bool,
}

/// A part of an S3 object's frame, cut by [`StreamSplit::push_parts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Its number in the multipart upload, from 1.
    pub number: u32,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// An object's frame once its stream ended: the parent and the manifest it
/// gets once the object is stored ([`ObjectFrame::stored`]).
pub struct ObjectFrame {
    options: SplitOptions,
    parent: Item,
    manifest: Manifest,
}

impl ObjectFrame {
    /// The manifest, with no object yet.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The split to commit, once S3 stored the object as `object`.
    pub fn stored(self, object: crate::object::ObjectRef) -> Result<SplitItem, SplitError> {
        let Self {
            options,
            mut parent,
            mut manifest,
        } = self;
        manifest.object = Some(object);
        put_manifest(&mut parent, &manifest, &options)?;
        Ok(SplitItem {
            parent,
            chunks: Vec::new(),
            manifest: Some(manifest),
        })
    }

    /// True when `split` is an item split whole into one frame (in chunks
    /// or inline, not in groups, not already an object) that fits an S3
    /// object of parts of `part_bytes` ([`crate::object::MAX_PARTS`]).
    pub fn holds(split: &SplitItem, part_bytes: usize) -> bool {
        let Some(m) = &split.manifest else {
            return false;
        };
        let chunked = m.chunk_count > 0
            && split
                .chunks
                .iter()
                .all(|c| matches!(c.get(CHUNK_DATA_ATTRIBUTE), Some(AttributeValue::B(_))));
        m.groups.is_empty()
            && m.object.is_none()
            && (m.inline.is_some() || chunked)
            && m.stored_len.div_ceil(part_bytes.max(1) as u64)
                <= u64::from(crate::object::MAX_PARTS)
    }

    /// An item split whole, stored as one S3 object instead: the frame,
    /// and its bytes cut into parts of `part_bytes`. The split comes back
    /// unless [`ObjectFrame::holds`] it.
    pub fn from_split(
        split: SplitItem,
        options: &SplitOptions,
        part_bytes: usize,
    ) -> Result<(ObjectFrame, Vec<Part>), Box<SplitItem>> {
        if !Self::holds(&split, part_bytes) {
            return Err(Box::new(split));
        }
        let part_bytes = part_bytes.max(1);
        let SplitItem {
            parent,
            chunks,
            manifest,
        } = split;
        // Moved, not copied (an inline frame is up to 400 KB): `holds` saw it.
        let Some(mut manifest) = manifest else {
            return Err(Box::new(SplitItem {
                parent,
                chunks,
                manifest: None,
            }));
        };
        let pieces: Vec<Vec<u8>> = match manifest.inline.take() {
            Some(frame) => alloc::vec![frame],
            None => chunks
                .into_iter()
                .filter_map(|mut chunk| match chunk.remove(CHUNK_DATA_ATTRIBUTE) {
                    Some(AttributeValue::B(data)) => Some(data),
                    _ => None,
                })
                .collect(),
        };
        let mut parts = Vec::new();
        let mut data = Vec::with_capacity(part_bytes.min(manifest.stored_len as usize));
        for bytes in pieces {
            let mut piece = bytes.as_slice();
            while !piece.is_empty() {
                let take = piece.len().min(part_bytes - data.len());
                data.extend_from_slice(&piece[..take]);
                piece = &piece[take..];
                if data.len() == part_bytes {
                    let number = parts.len() as u32 + 1;
                    parts.push(Part {
                        number,
                        data: core::mem::take(&mut data),
                    });
                }
            }
        }
        if !data.is_empty() || parts.is_empty() {
            let number = parts.len() as u32 + 1;
            parts.push(Part { number, data });
        }
        manifest.chunk_count = 0;
        manifest.chunk_bytes = 0;
        let frame = ObjectFrame {
            options: options.clone(),
            parent,
            manifest,
        };
        Ok((frame, parts))
    }
}

impl StreamSplit {
    /// Starts splitting: `parent` holds the item's key and small attributes,
    /// `attribute` names the binary attribute whose `len` bytes will follow
    /// through [`StreamSplit::push`]. Streaming supports the codecs `none`,
    /// `deflate`, `zlib` and `gzip`.
    ///
    /// With `len` given, a stream that turns out shorter or longer is
    /// refused (`STREAM_LENGTH_MISMATCH`) and a payload longer than
    /// [`SplitOptions::max_raw_bytes`] is refused before a byte is taken.
    /// With `None` (a pipe, a generated stream), the length is learned at
    /// the end and stored in a version 2 value stream (docs/FORMAT.md); the
    /// stream is refused when it passes `max_raw_bytes` or the chunk limit,
    /// and the first chunk comes out last, since it holds the frame's raw
    /// length (memory: one chunk more).
    pub fn new(
        parent: Item,
        attribute: String,
        len: Option<u64>,
        compression: Compression,
        options: &SplitOptions,
    ) -> Result<Self, SplitError> {
        Self::stream(parent, attribute, len, compression, options, None)
    }

    /// `bytes` cut as a streamed write of them cuts them (`put --file`,
    /// the driver's `putStream`): the codec chosen on their first piece
    /// (`auto`: deflate or none), always in chunks, never inline. For
    /// pricing a stream before it is written (`estimate`); a write streams
    /// instead.
    pub fn split_whole(
        parent: Item,
        attribute: String,
        bytes: &[u8],
        choice: CodecChoice,
        options: &SplitOptions,
    ) -> Result<SplitItem, SplitError> {
        let first = &bytes[..bytes.len().min(crate::protocol::policy::INPUT_BYTES)];
        let compression = stream_compression(choice, first);
        let len = Some(bytes.len() as u64);
        let mut stream = Self::new(parent, attribute, len, compression, options)?;
        let mut chunks = stream.push(bytes)?;
        let mut split = stream.finish()?;
        chunks.append(&mut split.chunks);
        split.chunks = chunks;
        Ok(split)
    }

    fn stream(
        parent: Item,
        attribute: String,
        len: Option<u64>,
        compression: Compression,
        options: &SplitOptions,
        part_bytes: Option<usize>,
    ) -> Result<Self, SplitError> {
        check_options(options)?;
        compression.codec.check_level(compression.level)?;
        let names = parent.keys().map(String::as_str);
        if let Some(name) = reserved_attribute(names.chain([attribute.as_str()])) {
            return Err(SplitError::ReservedAttribute { name });
        }
        if parent.contains_key(&attribute) || options.kept(&attribute) {
            return Err(SplitError::BadOptions {
                reason: "the streamed attribute must not also be on the parent, or be a key, \
                         an index key, the TTL attribute or kept",
            });
        }
        let validation = ValidateOptions {
            key: Some(&options.key),
            max_item_bytes: options.item_limit,
            index_keys: &options.index_keys,
        };
        let violations = validate_item(&parent, &validation);
        if !violations.is_empty() {
            return Err(SplitError::Invalid { violations });
        }
        let prefix = binary_attribute_prefix(&attribute, len);
        let stream_len = len.map(|len| prefix.len() as u64 + len);
        let mut split = Self::begin(
            parent,
            alloc::vec![attribute],
            stream_len,
            compression,
            options,
            part_bytes,
        )?;
        split.parts = part_bytes.is_some();
        split.declared = len;
        split.raw(&prefix);
        split.stream_len = prefix.len() as u64 + len.unwrap_or(0);
        Ok(split)
    }

    /// Starts splitting a whole value stream of `stream_len` bytes (that
    /// of the `spilled` attributes, in name order) for a checked `parent`.
    pub(crate) fn start(
        parent: Item,
        spilled: Vec<String>,
        stream_len: u64,
        compression: Compression,
        options: &SplitOptions,
    ) -> Result<Self, SplitError> {
        Self::begin(
            parent,
            spilled,
            Some(stream_len),
            compression,
            options,
            None,
        )
    }

    /// Like [`StreamSplit::new`], but the frame is cut into parts of
    /// `part_bytes` for one S3 object ([`StreamSplit::push_parts`],
    /// [`StreamSplit::finish_parts`]) instead of chunk items. With an
    /// unknown length the first part comes out last, as the first chunk does.
    pub fn object(
        parent: Item,
        attribute: String,
        len: Option<u64>,
        compression: Compression,
        options: &SplitOptions,
        part_bytes: usize,
    ) -> Result<Self, SplitError> {
        Self::stream(
            parent,
            attribute,
            len,
            compression,
            options,
            Some(part_bytes),
        )
    }

    /// Starts splitting a value stream of `stream_len` bytes, or of a
    /// length learned at the end.
    fn begin(
        parent: Item,
        spilled: Vec<String>,
        stream_len: Option<u64>,
        compression: Compression,
        options: &SplitOptions,
        part_bytes: Option<usize>,
    ) -> Result<Self, SplitError> {
        if let Some(len) = stream_len {
            check_length(len, options)?;
        }
        let base = ChunkBase::of(&parent, options);
        let data_bytes = match part_bytes {
            Some(bytes) => bytes,
            None => chunk_data_bytes(&base, options)?,
        };
        let mut cutter = Cutter::new(data_bytes, options.version.to_text(), None);
        // An unknown length is written as 0 and set when the stream ends.
        let header = FrameHeader {
            codec: compression.codec,
            raw_len: stream_len.unwrap_or(0),
        };
        cutter.write(&header.to_bytes(), None);
        let encoder = match compression.codec {
            Codec::None => Encoder::Stored,
            #[cfg(feature = "deflate")]
            Codec::Deflate | Codec::Zlib | Codec::Gzip => {
                Encoder::Deflate(crate::codec::DeflateStream::new(
                    compression.codec,
                    compression.level.unwrap_or(6),
                    &mut |out| cutter.write(out, None),
                ))
            }
            _ => {
                return Err(SplitError::BadOptions {
                    reason: "streaming supports the codecs none, deflate, zlib and gzip",
                });
            }
        };
        Ok(Self {
            options: options.clone(),
            base,
            parent,
            spilled,
            codec: compression.codec,
            declared: stream_len,
            received: 0,
            stream_len: stream_len.unwrap_or(0),
            first: None,
            digest: Digester::new(),
            encoder,
            cutter,
            data_bytes,
            parts: false,
        })
    }

    /// Whether `codec` can be streamed.
    pub(crate) fn streams(codec: Codec) -> bool {
        match codec {
            Codec::None => true,
            #[cfg(feature = "deflate")]
            Codec::Deflate | Codec::Zlib | Codec::Gzip => true,
            _ => false,
        }
    }

    /// Frame bytes sealed or pending in chunks so far.
    pub(crate) fn stored(&self) -> u64 {
        self.cutter.written()
    }

    /// Payload bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Takes the next piece of the payload; returns the chunk items it
    /// completed, in sequence order, ready to write.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Item>, SplitError> {
        let (first, sealed) = self.take(bytes)?;
        if (first as usize + sealed.len()) > DEFAULT_MAX_CHUNK_KEYS as usize {
            return Err(self.too_many_chunks());
        }
        chunk_items(&self.base, &self.options, first, sealed)
    }

    /// Takes the next piece of the payload of a split made by
    /// [`StreamSplit::object`]; returns the parts it completed.
    pub fn push_parts(&mut self, bytes: &[u8]) -> Result<Vec<Part>, SplitError> {
        let (first, sealed) = self.take(bytes)?;
        self.check_parts(first as usize + sealed.len(), self.cutter.written())?;
        Ok(parts(first, sealed))
    }

    /// Compresses `bytes` into the frame; returns the pieces sealed since
    /// the last call, with the number of the first (the first piece held
    /// back while the length is unknown).
    fn take(&mut self, bytes: &[u8]) -> Result<Sealed, SplitError> {
        let received = self.received + bytes.len() as u64;
        match self.declared {
            Some(declared) if received > declared => {
                return Err(SplitError::StreamLength { declared, received });
            }
            Some(_) => {}
            None => check_length(self.stream_len + bytes.len() as u64, &self.options)?,
        }
        self.raw(bytes);
        self.received = received;
        if self.declared.is_none() {
            self.stream_len += bytes.len() as u64;
        }
        let (mut first, mut sealed) = self.cutter.take_sealed();
        if self.declared.is_none() && first == 0 && !sealed.is_empty() {
            self.first = Some(sealed.remove(0));
            first = 1;
        }
        Ok((first, sealed))
    }

    /// The error of a stream that needs more than [`DEFAULT_MAX_CHUNK_KEYS`] chunks.
    fn too_many_chunks(&self) -> SplitError {
        SplitError::TooLarge {
            size: usize::try_from(self.cutter.written()).unwrap_or(usize::MAX),
            limit: DEFAULT_MAX_CHUNK_KEYS as usize * self.data_bytes,
        }
    }

    /// Refuses a frame of more than [`crate::object::MAX_PARTS`] parts.
    fn check_parts(&self, parts: usize, stored: u64) -> Result<(), SplitError> {
        let max = crate::object::MAX_PARTS as usize;
        if parts > max {
            return Err(SplitError::TooLarge {
                size: usize::try_from(stored).unwrap_or(usize::MAX),
                limit: max.saturating_mul(self.data_bytes),
            });
        }
        Ok(())
    }

    /// Ends the payload: returns the parent (with its manifest) and the last
    /// chunk items not yet returned by [`StreamSplit::push`].
    pub fn finish(self) -> Result<SplitItem, SplitError> {
        let closed = self.close()?;
        let chunk_count = closed.first as usize + closed.rest.len();
        if chunk_count > DEFAULT_MAX_CHUNK_KEYS as usize {
            return Err(SplitError::TooLarge {
                size: usize::try_from(closed.manifest.stored_len).unwrap_or(usize::MAX),
                limit: DEFAULT_MAX_CHUNK_KEYS as usize * closed.data_bytes,
            });
        }
        let Closed {
            options,
            base,
            mut parent,
            mut manifest,
            held,
            first,
            rest,
            data_bytes,
        } = closed;
        manifest.chunk_count = chunk_count as u32;
        manifest.chunk_bytes = data_bytes as u32;
        put_manifest(&mut parent, &manifest, &options)?;
        let mut chunks = chunk_items(&base, &options, 0, held.into_iter().collect())?;
        chunks.extend(chunk_items(&base, &options, first, rest)?);
        Ok(SplitItem {
            parent,
            chunks,
            manifest: Some(manifest),
        })
    }

    /// Ends the payload of a split made by [`StreamSplit::object`]: the
    /// frame, and the parts not yet returned by [`StreamSplit::push_parts`]
    /// (the first among them when the length was unknown: its header now
    /// holds the raw length).
    pub fn finish_parts(self) -> Result<(ObjectFrame, Vec<Part>), SplitError> {
        let closed = self.close()?;
        let count = closed.first as usize + closed.rest.len();
        let stored = closed.manifest.stored_len;
        let limit = crate::object::MAX_PARTS as usize;
        if count > limit {
            return Err(SplitError::TooLarge {
                size: usize::try_from(stored).unwrap_or(usize::MAX),
                limit: limit.saturating_mul(closed.data_bytes),
            });
        }
        let mut out = parts(0, closed.held.into_iter().collect());
        out.extend(parts(closed.first, closed.rest));
        let frame = ObjectFrame {
            options: closed.options,
            parent: closed.parent,
            manifest: closed.manifest,
        };
        Ok((frame, out))
    }

    /// Ends the frame: its digest trailer, the raw length a stream of
    /// unknown length learns now, and the manifest of the frame (without
    /// its chunk count and size, which depend on where it goes).
    fn close(self) -> Result<Closed, SplitError> {
        if let Some(declared) = self.declared
            && self.received != declared
        {
            return Err(SplitError::StreamLength {
                declared,
                received: self.received,
            });
        }
        let open = self.declared.is_none();
        let Self {
            options,
            base,
            parent,
            spilled,
            codec,
            stream_len,
            digest: digester,
            encoder,
            mut cutter,
            data_bytes,
            first: held,
            ..
        } = self;
        match encoder {
            Encoder::Stored => {}
            #[cfg(feature = "deflate")]
            Encoder::Deflate(stream) => stream.finish(&mut |out| cutter.write(out, None)),
        }
        let digest = digester.finish();
        cutter.write(&digest.to_le_bytes(), None);
        let stored_len = cutter.written();
        let (first, mut rest) = cutter.finish();
        let mut held = held;
        if open {
            // The first chunk (held back, or among the last) now learns the
            // frame's raw length.
            let zero = match (&mut held, first) {
                (Some(held), _) => Some(held),
                (None, 0) => rest.first_mut(),
                (None, _) => None,
            };
            if let Some((data, digest)) = zero {
                data[5..FRAME_HEADER_BYTES].copy_from_slice(&stream_len.to_le_bytes());
                *digest = chunk_digest(data, &options.version.to_text(), 0);
            }
        }
        let manifest = Manifest {
            version: options.version,
            layout: options.layout.name().into(),
            codec,
            chunk_count: 0,
            chunk_bytes: 0,
            stored_len,
            raw_len: stream_len,
            digest,
            spilled,
            inline: None,
            updated: None,
            groups: Vec::new(),
            object: None,
        };
        Ok(Closed {
            options,
            base,
            parent,
            manifest,
            held,
            first,
            rest,
            data_bytes,
        })
    }

    /// Feeds raw value-stream bytes to the digest and the encoder.
    fn raw(&mut self, bytes: &[u8]) {
        self.digest.update(bytes);
        let Self {
            encoder, cutter, ..
        } = self;
        match encoder {
            Encoder::Stored => cutter.write(bytes, None),
            #[cfg(feature = "deflate")]
            Encoder::Deflate(stream) => stream.write(bytes, &mut |out| cutter.write(out, None)),
        }
    }
}

/// Frame pieces sealed, with the number of the first.
type Sealed = (u32, Vec<(Vec<u8>, u64)>);

/// A frame once it ended.
struct Closed {
    options: SplitOptions,
    base: ChunkBase,
    parent: Item,
    manifest: Manifest,
    /// The first piece, held back while the length was unknown.
    held: Option<(Vec<u8>, u64)>,
    /// The number of the first of `rest`.
    first: u32,
    rest: Vec<(Vec<u8>, u64)>,
    data_bytes: usize,
}

/// Parts for sealed frame pieces, the first being piece `first`.
fn parts(first: u32, sealed: Vec<(Vec<u8>, u64)>) -> Vec<Part> {
    sealed
        .into_iter()
        .zip(first..)
        .map(|((data, _), seq)| Part {
            number: seq + 1,
            data,
        })
        .collect()
}

/// Chunk items for sealed chunk payloads, the first being chunk `first`.
fn chunk_items(
    base: &ChunkBase,
    options: &SplitOptions,
    first: u32,
    sealed: Vec<(Vec<u8>, u64)>,
) -> Result<Vec<Item>, SplitError> {
    sealed
        .into_iter()
        .zip(first..)
        .map(|((data, digest), seq)| chunk_item(base, options, seq, data, digest))
        .collect()
}

/// Refuses a value stream of `len` bytes beyond the configured maximum
/// (`usize::MAX`: none, whatever the width of `usize`).
fn check_length(len: u64, options: &SplitOptions) -> Result<(), SplitError> {
    if options.max_raw_bytes != usize::MAX && len > options.max_raw_bytes as u64 {
        return Err(SplitError::TooLarge {
            size: usize::try_from(len).unwrap_or(usize::MAX),
            limit: options.max_raw_bytes,
        });
    }
    Ok(())
}

/// The codec of a streamed payload: `auto` decides on the first piece
/// (the whole payload is never in memory to decide on); streams support
/// `none` and the deflate family only.
pub(crate) fn stream_compression(choice: CodecChoice, sample: &[u8]) -> Compression {
    match choice {
        CodecChoice::Fixed(c) => c,
        CodecChoice::Auto => match choose_compression(sample).codec {
            Codec::None => Compression::NONE,
            _ => Compression::new(Codec::Deflate),
        },
    }
}
