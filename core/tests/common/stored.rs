//! Stored items to read back: an item with a large target attribute among
//! others, split by any codec and layout, and forged parents and chunks
//! only a hostile or broken writer stores. Shared by the tests of
//! `ChunkReader` and `Reassembler`, which both must agree with `reassemble`.

use dynaslice_core::codec::{Codec, Compression, compress};
use dynaslice_core::digest::{chunk_digest, digest};
use dynaslice_core::encoding::encode_attributes;
use dynaslice_core::layout::Layout;
use dynaslice_core::layout::chunk_key;
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, KeyType, SplitItem, SplitOptions, VersionId,
    split_item,
};

use proptest::prelude::*;

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

/// The data of a chunk item, to damage it.
pub fn data_mut(chunk: &mut Item) -> &mut Vec<u8> {
    match chunk.get_mut(CHUNK_DATA_ATTRIBUTE) {
        Some(AttributeValue::B(data)) => data,
        _ => panic!("chunk has data"),
    }
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

/// How a property test stores an item: any codec, layout, placement and
/// chunk size, given to [`split`].
#[derive(Clone, Debug)]
pub struct Storage {
    pub layout: Layout,
    pub codec: Codec,
    pub inline: bool,
    pub chunk_bytes: usize,
}

/// Any [`Storage`], chunk items from 2 KiB to DynamoDB's 400 KB.
pub fn any_storage() -> impl Strategy<Value = Storage> {
    (
        0..Codec::ALL.len(),
        any::<bool>(),
        2048usize..=409_600,
        any::<bool>(),
    )
        .prop_map(|(codec, collection, chunk_bytes, inline)| Storage {
            layout: if collection {
                Layout::ItemCollection
            } else {
                Layout::default()
            },
            codec: Codec::ALL[codec],
            inline,
            chunk_bytes,
        })
}

/// `item` split as `storage` says.
pub fn split_as(item: &Item, storage: &Storage) -> SplitItem {
    split(
        item,
        &storage.layout,
        storage.codec,
        storage.inline,
        storage.chunk_bytes,
    )
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
    // One frame: the chunk mechanics under test (groups: tests/groups.rs).
    options.group_bytes = usize::MAX;
    split_item(item, &options).unwrap()
}

/// The item `{pk: "big", data: <data>}` of a partition-key `schema`, and
/// the same split by `codec` into default-sized chunks, the raw size limit
/// raised to fit: what the memory tests read back.
pub fn split_binary(schema: &KeySchema, data: Vec<u8>, codec: Codec) -> (Item, SplitItem) {
    let len = data.len();
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("big".into()));
    item.insert("data".into(), AttributeValue::B(data));
    let mut options = SplitOptions::new(schema.clone(), VersionId::new(1_763_683_200_000, 1));
    options.compression = CodecChoice::Fixed(Compression::new(codec));
    options.max_raw_bytes = options.max_raw_bytes.max(2 * len);
    let split = split_item(&item, &options).unwrap();
    (item, split)
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

/// One forged payload: the frame `forge` stores for it is valid but for
/// what `tamper` does.
pub struct Forged {
    /// What is wrong with it.
    pub name: &'static str,
    /// The raw payload framed.
    pub payload: Vec<u8>,
    /// What is done to the frame.
    pub tamper: Tamper,
    /// The error code a reader must give for it, where the tests pin one
    /// for this codec; `None` where they only require the code `reassemble`
    /// gives.
    pub code: Option<&'static str>,
}

/// The payloads a hostile or broken writer stores for `original` (split by
/// [`item`] with target `m`) framed by `codec`: the bytes wrong, the stream
/// cut short or too long, the header's length, body or codec not the
/// payload's, the trailer not its digest.
pub fn forged_payloads(original: &Item, codec: Codec) -> Vec<Forged> {
    let spilled: Vec<(&str, &AttributeValue)> = ["f", "m", "t"]
        .iter()
        .map(|name| (*name, &original[*name]))
        .collect();
    let raw = encode_attributes(spilled.into_iter()).to_vec();
    let m_at = raw.len() / 2; // inside the target's bytes
    let recorded = digest(&raw);
    // Uncompressed, these pin no code: only agreement with `reassemble`.
    let compressed = |code| (codec != Codec::None).then_some(code);
    vec![
        Forged {
            name: "flipped payload byte",
            payload: {
                let mut r = raw.clone();
                r[m_at] ^= 1;
                r
            },
            tamper: Box::new(move |f: &mut Vec<u8>| {
                let at = f.len() - 8;
                f[at..].copy_from_slice(&recorded.to_le_bytes());
            }),
            code: Some("DIGEST_MISMATCH"),
        },
        Forged {
            name: "stream cut short",
            payload: raw[..raw.len() - 10].to_vec(),
            tamper: Box::new(|_: &mut Vec<u8>| {}),
            code: Some("STREAM_TRUNCATED"),
        },
        Forged {
            name: "stream with trailing bytes",
            payload: [&raw[..], &[1, 2]].concat(),
            tamper: Box::new(|_: &mut Vec<u8>| {}),
            code: Some("STREAM_TRAILING_BYTES"),
        },
        Forged {
            name: "recorded longer",
            payload: raw.clone(),
            tamper: Box::new(|f: &mut Vec<u8>| {
                let len = u64::from_le_bytes(f[5..13].try_into().unwrap()) + 5;
                f[5..13].copy_from_slice(&len.to_le_bytes());
            }),
            code: compressed("LENGTH_MISMATCH"),
        },
        Forged {
            name: "recorded shorter",
            payload: raw.clone(),
            tamper: Box::new(|f: &mut Vec<u8>| {
                let len = u64::from_le_bytes(f[5..13].try_into().unwrap()) - 5;
                f[5..13].copy_from_slice(&len.to_le_bytes());
            }),
            code: compressed("LENGTH_MISMATCH"),
        },
        Forged {
            name: "bytes after the body",
            payload: raw.clone(),
            tamper: Box::new(|f: &mut Vec<u8>| {
                let at = f.len() - 8;
                f.splice(at..at, [0, 0, 0]);
            }),
            code: compressed("CODEC_CORRUPT"),
        },
        Forged {
            name: "trailer not the payload's digest",
            payload: raw.clone(),
            tamper: Box::new(|f: &mut Vec<u8>| {
                let at = f.len() - 1;
                f[at] ^= 1;
            }),
            code: None,
        },
        Forged {
            name: "another codec in the header",
            payload: raw,
            tamper: Box::new(move |f: &mut Vec<u8>| {
                f[4] = if codec == Codec::None { 1 } else { 0 };
            }),
            code: None,
        },
    ]
}
