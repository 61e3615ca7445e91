//! Splitting an item held in memory a piece at a time: a writer uploads
//! the first chunks while the rest are still being compressed, instead of
//! compressing the whole payload before the first write.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::encoding::EncodedStream;
use crate::manifest::{CHUNK_DATA_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use crate::size::item_size;
use crate::value::{AttributeValue, Item};
use crate::write::group;
use crate::write::spill::{Prepared, prepare, worst_case_manifest_size};
use crate::write::split::{
    SplitError, SplitItem, SplitOptions, inline_split, may_be_inline, split_prepared, split_spill,
    unsplit,
};
use crate::write::stream_split::StreamSplit;

/// How [`split_item_streamed`] goes on.
// One per write, moved once: the size of `Whole` costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum ItemSplit<'a> {
    /// Split at once, exactly as [`split_item`](crate::split_item) splits:
    /// the item fits, its codec (snappy, zstd) does not stream, or its
    /// parent might not fit beside the manifest.
    Whole(SplitItem),
    /// Chunks follow, a piece at a time.
    Streaming(Box<ItemStream<'a>>),
}

/// Starts splitting `item` so that its chunks come out while it is being
/// compressed. The result is exactly the virtual item
/// [`split_item`](crate::split_item) makes, compressed once: a payload that
/// ends up short enough is stored inline from the chunks held back.
///
/// ```
/// use dynaslice_core::*;
/// use dynaslice_core::codec::Compression;
/// let schema = KeySchema::partition("pk", KeyType::S);
/// let mut item = Item::new();
/// item.insert("pk".into(), AttributeValue::S("doc".into()));
/// item.insert("body".into(), AttributeValue::B((0..3_000_000u32).map(|i| (i % 251) as u8).collect()));
/// let mut options = SplitOptions::new(schema.clone(), VersionId::new(1_700_000_000_000, 42));
/// options.compression = CodecChoice::Fixed(Compression::NONE);
/// let ItemSplit::Streaming(mut stream) = split_item_streamed(&item, &options)? else {
///     unreachable!("3 MB stored as is is chunked");
/// };
/// let mut chunks = Vec::new();
/// while let Some(done) = stream.next_chunks(1 << 20)? {
///     chunks.extend(done); // ready to upload while the rest is cut
/// }
/// let split = stream.finish()?;
/// chunks.extend(split.chunks);
/// assert_eq!(chunks.len(), 8);
/// let back = reassemble(&split.parent, &chunks, &ReassembleOptions::new(&schema, &options.layout))?;
/// assert_eq!(back, item);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn split_item_streamed<'a>(
    item: &'a Item,
    options: &SplitOptions,
) -> Result<ItemSplit<'a>, SplitError> {
    if !options.carried.is_empty() {
        return group::split_carrying(item, options).map(ItemSplit::Whole);
    }
    let spill = match prepare(item, options)? {
        Prepared::Fits => return Ok(ItemSplit::Whole(unsplit(item))),
        Prepared::Spill(spill) => spill,
    };
    // Groups are split whole, each group compressed then cut.
    if group::grouping(item, &spill.kept, &spill.names, options).is_some() {
        return split_prepared(item, spill, options).map(ItemSplit::Whole);
    }
    let compression = spill.compression(options.compression);
    // A parent that might not fit beside its manifest: split_item says
    // exactly, before anything is written.
    let parent_fits =
        item_size(&spill.kept) + worst_case_manifest_size(&spill.names) <= options.item_limit;
    if !StreamSplit::streams(compression.codec) || !parent_fits {
        return split_spill(item, spill, compression, options).map(ItemSplit::Whole);
    }
    let split = StreamSplit::start(
        spill.kept,
        spill.names,
        spill.stream.len() as u64,
        compression,
        options,
    )?;
    Ok(ItemSplit::Streaming(Box::new(ItemStream {
        options: options.clone(),
        stream: spill.stream,
        piece: 0,
        offset: 0,
        split,
        held: Vec::new(),
        released: false,
    })))
}

/// An item being split a piece at a time (see [`split_item_streamed`]).
pub struct ItemStream<'a> {
    options: SplitOptions,
    stream: EncodedStream<'a>,
    /// The next byte to push: `offset` into piece `piece` of `stream`.
    piece: usize,
    offset: usize,
    split: StreamSplit,
    /// Chunks cut while the payload might still be stored inline.
    held: Vec<Item>,
    /// True once the payload is too long to be inline: chunks go out.
    released: bool,
}

impl ItemStream<'_> {
    /// Bytes of the value stream in all.
    pub fn raw_len(&self) -> u64 {
        self.stream.len() as u64
    }

    /// The version being written.
    pub fn version(&self) -> crate::version::VersionId {
        self.options.version
    }

    /// Bytes of the value stream pushed so far.
    pub fn received(&self) -> u64 {
        self.split.received()
    }

    /// Pushes up to `max_bytes` more of the value stream (at least one
    /// byte); returns the chunks it completed, in sequence order, ready to
    /// write (none while the payload might still be stored inline), or
    /// `None` once the whole stream is pushed.
    pub fn next_chunks(&mut self, max_bytes: usize) -> Result<Option<Vec<Item>>, SplitError> {
        let Some(piece) = self.stream.slices().nth(self.piece) else {
            return Ok(None);
        };
        let end = piece
            .len()
            .min(self.offset.saturating_add(max_bytes.max(1)));
        let mut chunks = self.split.push(&piece[self.offset..end])?;
        if end == piece.len() {
            self.piece += 1;
            self.offset = 0;
        } else {
            self.offset = end;
        }
        if !self.released {
            self.held.append(&mut chunks);
            if may_be_inline(self.split.stored(), &self.options) {
                return Ok(Some(Vec::new()));
            }
            self.released = true;
            chunks = core::mem::take(&mut self.held);
        }
        Ok(Some(chunks))
    }

    /// Ends the split (pushing what is left): the parent with its manifest
    /// and the chunks not yet returned by [`ItemStream::next_chunks`].
    pub fn finish(mut self) -> Result<SplitItem, SplitError> {
        let mut rest = self.next_remaining()?;
        let held = !self.released;
        // Still held back (if never released), then the rest, then the last.
        let mut chunks = core::mem::take(&mut self.held);
        chunks.append(&mut rest);
        let mut split = self.split.finish()?;
        chunks.append(&mut split.chunks);
        split.chunks = chunks;
        if held && let Some(inline) = inline(&split, &self.options) {
            return Ok(inline);
        }
        Ok(split)
    }

    /// Pushes the rest of the stream; the chunks it completed (held back
    /// or not).
    fn next_remaining(&mut self) -> Result<Vec<Item>, SplitError> {
        let mut rest = Vec::new();
        while let Some(mut chunks) = self.next_chunks(usize::MAX)? {
            rest.append(&mut chunks);
        }
        Ok(rest)
    }
}

/// The chunked `split` stored inline instead, as [`split_item`](crate::split_item) stores a
/// payload shorter than the item limit when the parent still fits: its
/// chunks' data, in order, is the frame.
fn inline(split: &SplitItem, options: &SplitOptions) -> Option<SplitItem> {
    let manifest = split.manifest.as_ref()?;
    if !may_be_inline(manifest.stored_len, options) {
        return None;
    }
    let mut frame = Vec::with_capacity(manifest.stored_len as usize);
    for chunk in &split.chunks {
        match chunk.get(CHUNK_DATA_ATTRIBUTE) {
            Some(AttributeValue::B(data)) => frame.extend_from_slice(data),
            _ => return None,
        }
    }
    let mut kept = split.parent.clone();
    kept.remove(MANIFEST_ATTRIBUTE);
    inline_split(&kept, manifest.clone(), frame, options)
}
