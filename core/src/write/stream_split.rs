//! Splitting a large binary payload that arrives in pieces (a file, a
//! network stream) without ever holding it whole: memory stays within one
//! chunk and the compressor's state, whatever the payload's size.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::{Codec, Compression, FRAME_HEADER_BYTES, FrameHeader};
use crate::digest::Digester;
use crate::digest::chunk_digest;
use crate::encoding::binary_attribute_prefix;
use crate::manifest::{Manifest, reserved_attribute};
use crate::validate::{ValidateOptions, validate_item};
use crate::value::Item;
use crate::write::cutter::Cutter;
use crate::write::split::DEFAULT_MAX_CHUNK_KEYS;
use crate::write::split::{
    ChunkBase, SplitError, SplitItem, SplitOptions, check_options, chunk_data_bytes, chunk_item,
    put_manifest,
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
        )?;
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
        Self::begin(parent, spilled, Some(stream_len), compression, options)
    }

    /// Starts splitting a value stream of `stream_len` bytes, or of a
    /// length learned at the end.
    fn begin(
        parent: Item,
        spilled: Vec<String>,
        stream_len: Option<u64>,
        compression: Compression,
        options: &SplitOptions,
    ) -> Result<Self, SplitError> {
        if let Some(len) = stream_len {
            check_length(len, options)?;
        }
        let base = ChunkBase::of(&parent, options);
        let data_bytes = chunk_data_bytes(&base, options)?;
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
        if (first as usize + sealed.len()) > DEFAULT_MAX_CHUNK_KEYS as usize {
            return Err(self.too_many_chunks());
        }
        chunk_items(&self.base, &self.options, first, sealed)
    }

    /// The error of a stream that needs more than [`DEFAULT_MAX_CHUNK_KEYS`] chunks.
    fn too_many_chunks(&self) -> SplitError {
        SplitError::TooLarge {
            size: usize::try_from(self.cutter.written()).unwrap_or(usize::MAX),
            limit: DEFAULT_MAX_CHUNK_KEYS as usize * self.data_bytes,
        }
    }

    /// Ends the payload: returns the parent (with its manifest) and the last
    /// chunk items not yet returned by [`StreamSplit::push`].
    pub fn finish(self) -> Result<SplitItem, SplitError> {
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
            mut parent,
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
        let chunk_count = first as usize + rest.len();
        if chunk_count > DEFAULT_MAX_CHUNK_KEYS as usize {
            return Err(SplitError::TooLarge {
                size: usize::try_from(stored_len).unwrap_or(usize::MAX),
                limit: DEFAULT_MAX_CHUNK_KEYS as usize * data_bytes,
            });
        }
        let manifest = Manifest {
            version: options.version,
            layout: options.layout.name().into(),
            codec,
            chunk_count: chunk_count as u32,
            chunk_bytes: data_bytes as u32,
            stored_len,
            raw_len: stream_len,
            digest,
            spilled,
            inline: None,
            updated: None,
            groups: Vec::new(),
        };
        put_manifest(&mut parent, &manifest, &options)?;
        let mut chunks = chunk_items(&base, &options, 0, held.into_iter().collect())?;
        chunks.extend(chunk_items(&base, &options, first, rest)?);
        Ok(SplitItem {
            parent,
            chunks,
            manifest: Some(manifest),
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
