//! Stored items to read back: an item with a large target attribute among
//! others, split by any codec and layout, and forged parents and chunks
//! only a hostile or broken writer stores. Shared by the tests of
//! `ChunkReader` and `Reassembler`, which both must agree with `reassemble`.

use dynaslice_core::codec::{Codec, Compression, compress};
use dynaslice_core::digest::chunk_digest;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, Layout, SplitItem, SplitOptions,
    VersionId, split_item,
};

use super::generate;

/// The parent table's key: a string partition and sort key.
pub fn schema() -> KeySchema {
    KeySchema::partition("pk", KeyType::S).with_sort("sk", KeyType::S)
}

/// Both layouts.
pub fn layouts() -> [Layout; 2] {
    [Layout::default(), Layout::ItemCollection]
}

/// True when `chunk` carries exactly the attributes of `key`.
pub fn has_key(chunk: &Item, key: &Item) -> bool {
    key.iter()
        .all(|(name, value)| chunk.get(name) == Some(value))
}

/// An item with the target `name` (binary or string) among two other
/// attributes large enough to be spilled with it, one sorting before and
/// one after every target name used.
pub fn item(name: &str, len: usize, string: bool, seed: u64) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("doc#1".into()));
    item.insert("sk".into(), AttributeValue::S("v\\1".into()));
    let list = (0..1500)
        .map(|i| AttributeValue::N(format!("{i}.5")))
        .collect();
    item.insert("f".into(), AttributeValue::L(list));
    let map = (0..600)
        .map(|i| {
            (
                format!("key{i}"),
                AttributeValue::Ss(vec![format!("é{i}"), "x".into()]),
            )
        })
        .collect();
    item.insert("t".into(), AttributeValue::M(map));
    item.insert(
        name.into(),
        generate::big_value(seed, len, if string { 2 } else { 1 }),
    );
    item
}

/// `item` split by `codec` into chunk items of `chunk_bytes` (or inline).
pub fn split(
    item: &Item,
    layout: &Layout,
    codec: Codec,
    inline: bool,
    chunk_bytes: usize,
) -> SplitItem {
    let mut options = SplitOptions::new(schema(), VersionId::new(1_763_683_200_000, 7));
    options.layout = layout.clone();
    options.compression = CodecChoice::Fixed(Compression::new(codec));
    options.inline = inline;
    options.chunk_item_bytes = chunk_bytes;
    split_item(item, &options).unwrap()
}

/// A parent and chunks for `raw` framed by `codec` and whatever `tamper`
/// does to the frame, with valid chunk digests and a manifest that matches
/// the frame's header and trailer: what a hostile or broken writer stores.
pub fn forge(
    good: &SplitItem,
    layout: &Layout,
    raw: &[u8],
    codec: Codec,
    tamper: impl FnOnce(&mut Vec<u8>),
) -> (Item, Vec<Item>) {
    let mut frame = compress(raw, Compression::new(codec)).unwrap();
    tamper(&mut frame);
    let mut manifest = good.manifest.clone().unwrap();
    let k = manifest.chunk_bytes as usize;
    manifest.codec = codec;
    manifest.stored_len = frame.len() as u64;
    manifest.raw_len = u64::from_le_bytes(frame[5..13].try_into().unwrap());
    manifest.digest = u64::from_le_bytes(frame[frame.len() - 8..].try_into().unwrap());
    manifest.chunk_count = frame.len().div_ceil(k) as u32;
    manifest.inline = None;
    let mut parent = good.parent.clone();
    parent.insert(MANIFEST_ATTRIBUTE.into(), manifest.to_value());
    let version = manifest.version.to_text();
    let chunks = frame
        .chunks(k)
        .zip(0u32..)
        .map(|(data, seq)| {
            let mut chunk = chunk_key(&schema(), layout, &parent, manifest.version, seq).unwrap();
            let digest = chunk_digest(data, &version, seq);
            chunk.insert(
                CHUNK_DIGEST_ATTRIBUTE.into(),
                AttributeValue::B(digest.to_be_bytes().to_vec()),
            );
            chunk.insert(
                CHUNK_DATA_ATTRIBUTE.into(),
                AttributeValue::B(data.to_vec()),
            );
            chunk
        })
        .collect();
    (parent, chunks)
}

/// What a forged case does to the frame.
pub type Tamper = Box<dyn FnOnce(&mut Vec<u8>)>;
