//! What a `reassemble` input means: a real split of a fuzz-made item (2–4 KB
//! chunks, small parent budget, every codec and `auto`, inline or not, both
//! layouts), then tampering with what a reader fetches: chunks dropped,
//! duplicated, reordered, re-keyed; chunk bytes or digests flipped,
//! truncated, extended, digests recomputed (as anyone who can write the
//! table can); manifest fields removed or rewritten, the inline frame
//! damaged. The target checks what `reassemble` makes of it.

use arbitrary::Arbitrary;
use dynaslice_core::digest::chunk_digest;
use dynaslice_core::layout::{chunk_key, parse_chunk_key};
use dynaslice_core::manifest::{CHUNK_DATA_ATTRIBUTE, CHUNK_DIGEST_ATTRIBUTE, MANIFEST_ATTRIBUTE};
use dynaslice_core::{AttributeValue, CodecChoice, Item, KeySchema, KeyType, SplitItem, SplitOptions, VersionId, split_item};
use dynaslice_core::codec::{Codec, Compression};
use dynaslice_core::layout::Layout;

/// One input of the `reassemble` target, as `arbitrary` reads it.
#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub struct Case {
    pub partition: KeySpec,
    pub sort: Option<KeySpec>,
    /// The item-collection layout instead of a chunk table (when the sort
    /// key is a string, as that layout needs).
    pub collection: bool,
    /// Index into `Codec::ALL`, or `auto` past its end.
    pub codec: u8,
    pub inline: bool,
    pub chunk_item_bytes: u16,
    pub item_limit: u16,
    pub parent_budget: u16,
    pub version: (u64, u128),
    /// One large attribute, so most cases split.
    pub body: Blob,
    pub attributes: Vec<(String, ValueSpec)>,
    /// Reassemble with this payload limit instead of the default.
    pub max_raw_bytes: Option<u32>,
    pub tampering: Vec<Tamper>,
}

#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub enum KeySpec {
    S(String),
    N(i64),
    B(Vec<u8>),
}

/// Large binary content (under 24 KiB, so a case stays fast): incompressible,
/// repetitive, or zeros.
#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub struct Blob {
    pub len: u16,
    pub seed: u64,
    pub kind: BlobKind,
}

#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub enum BlobKind {
    Random,
    Repeating,
    Zeros,
}

#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub enum ValueSpec {
    S(String),
    N(i64, Option<u8>),
    B(Vec<u8>),
    Bool(bool),
    Null,
    L(Vec<ValueSpec>),
    M(Vec<(String, ValueSpec)>),
    Ss(Vec<String>),
    Ns(Vec<i32>),
    Bs(Vec<Vec<u8>>),
    Blob(Blob),
}

#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub enum Tamper {
    Drop(u8),
    Duplicate(u8),
    Swap(u8, u8),
    Reverse,
    FlipData {
        chunk: u8,
        at: u32,
        bit: u8,
    },
    FlipDigest {
        chunk: u8,
        bit: u8,
    },
    TruncateData {
        chunk: u8,
        len: u16,
    },
    ExtendData {
        chunk: u8,
        bytes: Vec<u8>,
    },
    /// Recompute the chunk's digest for the version and position its key names.
    Reseal(u8),
    /// Give the chunk the key of another position, same version.
    Reposition {
        chunk: u8,
        seq: u32,
    },
    /// Give the chunk the key of another version, same position.
    Reversion {
        chunk: u8,
        version: (u64, u128),
    },
    /// Replace each string key attribute with this text.
    KeyText {
        chunk: u8,
        text: String,
    },
    /// Replace the parent-key part of each string key attribute, keeping its
    /// `#<version>#<seq>` suffix.
    KeyPrefix {
        chunk: u8,
        text: String,
    },
    /// The same with number text, as a numeric parent key is written there.
    KeyNumber {
        chunk: u8,
        mantissa: i64,
        fraction: Option<u32>,
        exponent: Option<i64>,
    },
    RemoveAttribute {
        chunk: u8,
        which: u8,
    },
    Manifest(ManifestEdit),
    FlipInline {
        at: u32,
        bit: u8,
    },
    TruncateInline(u16),
}

#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub enum ManifestEdit {
    Remove(Field),
    Number(Field, u64),
    NumberText(Field, String),
    Text(Field, String),
    Binary(Field, Vec<u8>),
    Spilled(Vec<String>),
    /// Chunk count, chunk bytes and a stored length consistent with them.
    Geometry {
        count: u32,
        bytes: u32,
        last: u32,
    },
    Codec(u8),
    Version(u64, u128),
    NotAMap,
}

#[derive(Arbitrary, Clone, Copy, Debug, PartialEq)]
pub enum Field {
    F,
    V,
    L,
    C,
    N,
    K,
    S,
    R,
    H,
    A,
    P,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Self::F => "f",
            Self::V => "v",
            Self::L => "l",
            Self::C => "c",
            Self::N => "n",
            Self::K => "k",
            Self::S => "s",
            Self::R => "r",
            Self::H => "h",
            Self::A => "a",
            Self::P => "p",
        }
    }
}

impl KeySpec {
    pub fn key_type(&self) -> KeyType {
        match self {
            Self::S(_) => KeyType::S,
            Self::N(_) => KeyType::N,
            Self::B(_) => KeyType::B,
        }
    }

    /// The key value, never empty (DynamoDB refuses empty keys).
    fn value(&self) -> AttributeValue {
        match self {
            Self::S(s) => AttributeValue::S(format!("k{s}")),
            Self::N(n) => AttributeValue::N(n.to_string()),
            Self::B(b) => AttributeValue::B([&[0xAB], &b[..]].concat()),
        }
    }
}

impl Blob {
    pub fn bytes(&self) -> Vec<u8> {
        let len = usize::from(self.len) % (24 << 10);
        let mut state = self.seed | 1;
        let mut next = move || {
            // xorshift64: cheap, incompressible enough for codecs.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        match self.kind {
            BlobKind::Random => (0..len).map(|_| next() as u8).collect(),
            BlobKind::Repeating => {
                let period = (self.seed % 61 + 3) as usize;
                let unit: Vec<u8> = (0..period).map(|_| next() as u8).collect();
                unit.iter().copied().cycle().take(len).collect()
            }
            BlobKind::Zeros => vec![0; len],
        }
    }
}

/// `values` without repeats, so sets pass validation.
fn dedup<T: Clone + PartialEq>(mut values: Vec<T>) -> Vec<T> {
    let mut seen = Vec::new();
    values.retain(|x| {
        let fresh = !seen.contains(x);
        if fresh {
            seen.push(x.clone());
        }
        fresh
    });
    values
}

fn value_of(spec: &ValueSpec, depth: usize) -> AttributeValue {
    if depth > 8 {
        return AttributeValue::Null;
    }
    match spec {
        ValueSpec::S(s) => AttributeValue::S(s.clone()),
        ValueSpec::N(n, None) => AttributeValue::N(n.to_string()),
        ValueSpec::N(n, Some(f)) => AttributeValue::N(format!("{n}.{f:02}")),
        ValueSpec::B(b) => AttributeValue::B(b.clone()),
        ValueSpec::Bool(b) => AttributeValue::Bool(*b),
        ValueSpec::Null => AttributeValue::Null,
        ValueSpec::L(l) => AttributeValue::L(l.iter().map(|v| value_of(v, depth + 1)).collect()),
        ValueSpec::M(m) => AttributeValue::M(
            m.iter()
                .map(|(k, v)| (k.clone(), value_of(v, depth + 1)))
                .collect(),
        ),
        ValueSpec::Ss(s) => AttributeValue::Ss(dedup(s.clone())),
        ValueSpec::Ns(n) => AttributeValue::Ns(dedup(n.iter().map(i32::to_string).collect())),
        ValueSpec::Bs(b) => AttributeValue::Bs(dedup(b.clone())),
        ValueSpec::Blob(blob) => AttributeValue::B(blob.bytes()),
    }
}

/// Bytes of a chunk key's `#<version>#<seq>` suffix.
const SUFFIX_BYTES: usize = 1 + 26 + 1 + 6;

fn version_of((ms, random): (u64, u128)) -> VersionId {
    VersionId::new(ms, random)
}

/// A case's split, before any tampering.
pub struct Setup {
    pub schema: KeySchema,
    pub layout: Layout,
    /// The item that was split.
    pub item: Item,
    pub split: SplitItem,
}

impl Case {
    /// The case's item and its split, or `None` when `split_item` refuses
    /// the item (an invalid value, a parent that cannot fit).
    pub fn setup(&self) -> Option<Setup> {
        let mut schema = KeySchema::partition("pk", self.partition.key_type());
        if let Some(sort) = &self.sort {
            schema = schema.with_sort("sk", sort.key_type());
        }
        let string_sort = matches!(self.sort, Some(KeySpec::S(_)));
        let layout = if self.collection && string_sort {
            Layout::ItemCollection
        } else {
            Layout::default()
        };
        let mut item = Item::new();
        item.insert("pk".into(), self.partition.value());
        if let Some(sort) = &self.sort {
            item.insert("sk".into(), sort.value());
        }
        item.insert("body".into(), AttributeValue::B(self.body.bytes()));
        for (name, spec) in self.attributes.iter().filter(|(name, _)| !name.is_empty()) {
            item.entry(name.clone())
                .or_insert_with(|| value_of(spec, 1));
        }

        let mut options = SplitOptions::new(schema.clone(), version_of(self.version));
        options.layout = layout.clone();
        options.compression = match Codec::ALL.get(usize::from(self.codec) % 8) {
            Some(&codec) => CodecChoice::Fixed(Compression::new(codec)),
            None => CodecChoice::Auto,
        };
        options.inline = self.inline;
        options.chunk_item_bytes = 2048 + usize::from(self.chunk_item_bytes) % 2048;
        options.item_limit = 1024 + usize::from(self.item_limit) % 8192;
        options.parent_budget = usize::from(self.parent_budget) % 2048;
        let split = split_item(&item, &options).ok()?;
        Some(Setup {
            schema,
            layout,
            item,
            split,
        })
    }
}

impl Setup {
    /// The parent and chunks after `tampering`, in order.
    pub fn tampered(&self, tampering: &[Tamper]) -> (Item, Vec<Item>) {
        let mut target = Target {
            schema: &self.schema,
            layout: &self.layout,
            parent: self.split.parent.clone(),
            chunks: self.split.chunks.clone(),
        };
        for tamper in tampering {
            target.apply(tamper);
        }
        (target.parent, target.chunks)
    }
}

struct Target<'a> {
    schema: &'a KeySchema,
    layout: &'a Layout,
    parent: Item,
    chunks: Vec<Item>,
}

impl Target<'_> {
    fn chunk(&mut self, index: u8) -> Option<&mut Item> {
        let len = self.chunks.len();
        (len > 0).then(|| &mut self.chunks[usize::from(index) % len])
    }

    fn data(&mut self, index: u8) -> Option<&mut Vec<u8>> {
        match self.chunk(index)?.get_mut(CHUNK_DATA_ATTRIBUTE)? {
            AttributeValue::B(data) => Some(data),
            _ => None,
        }
    }

    fn manifest(&mut self) -> Option<&mut std::collections::BTreeMap<String, AttributeValue>> {
        match self.parent.get_mut(MANIFEST_ATTRIBUTE)? {
            AttributeValue::M(map) => Some(map),
            _ => None,
        }
    }

    /// Re-keys a chunk as chunk `seq` of `version` of this parent.
    fn rekey(&mut self, index: u8, version: Option<VersionId>, seq: Option<u32>) {
        let (schema, layout) = (self.schema, self.layout);
        let parent = self.parent.clone();
        let Some(chunk) = self.chunk(index) else {
            return;
        };
        let Ok(current) = parse_chunk_key(schema, layout, chunk) else {
            return;
        };
        let version = version.unwrap_or(current.version);
        let seq = seq.unwrap_or(current.seq);
        if let Ok(key) = chunk_key(schema, layout, &parent, version, seq) {
            chunk.extend(key);
        }
    }

    fn apply(&mut self, tamper: &Tamper) {
        match tamper {
            Tamper::Drop(i) => {
                if !self.chunks.is_empty() {
                    let i = usize::from(*i) % self.chunks.len();
                    self.chunks.remove(i);
                }
            }
            Tamper::Duplicate(i) => {
                if let Some(chunk) = self.chunk(*i).cloned() {
                    self.chunks.push(chunk);
                }
            }
            Tamper::Swap(a, b) => {
                if !self.chunks.is_empty() {
                    let len = self.chunks.len();
                    self.chunks
                        .swap(usize::from(*a) % len, usize::from(*b) % len);
                }
            }
            Tamper::Reverse => self.chunks.reverse(),
            Tamper::FlipData { chunk, at, bit } => {
                if let Some(data) = self.data(*chunk).filter(|d| !d.is_empty()) {
                    let i = *at as usize % data.len();
                    data[i] ^= 1 << (bit % 8);
                }
            }
            Tamper::FlipDigest { chunk, bit } => {
                if let Some(c) = self.chunk(*chunk)
                    && let Some(AttributeValue::B(h)) = c.get_mut(CHUNK_DIGEST_ATTRIBUTE)
                    && !h.is_empty()
                {
                    let bit = usize::from(*bit) % (h.len() * 8);
                    h[bit / 8] ^= 1 << (bit % 8);
                }
            }
            Tamper::TruncateData { chunk, len } => {
                if let Some(data) = self.data(*chunk) {
                    data.truncate(usize::from(*len));
                }
            }
            Tamper::ExtendData { chunk, bytes } => {
                if let Some(data) = self.data(*chunk) {
                    data.extend_from_slice(bytes);
                }
            }
            Tamper::Reseal(i) => {
                let (schema, layout) = (self.schema, self.layout);
                if let Some(chunk) = self.chunk(*i) {
                    let Ok(key) = parse_chunk_key(schema, layout, chunk) else {
                        return;
                    };
                    if let Some(AttributeValue::B(data)) = chunk.get(CHUNK_DATA_ATTRIBUTE) {
                        let digest = chunk_digest(data, &key.version.to_text(), key.seq);
                        chunk.insert(
                            CHUNK_DIGEST_ATTRIBUTE.into(),
                            AttributeValue::B(digest.to_be_bytes().to_vec()),
                        );
                    }
                }
            }
            Tamper::Reposition { chunk, seq } => self.rekey(*chunk, None, Some(*seq % 1000)),
            Tamper::Reversion { chunk, version } => {
                self.rekey(*chunk, Some(version_of(*version)), None)
            }
            Tamper::KeyText { chunk, text } => {
                if let Some(c) = self.chunk(*chunk) {
                    for value in c.values_mut() {
                        if let AttributeValue::S(s) = value {
                            s.clone_from(text);
                        }
                    }
                }
            }
            Tamper::KeyNumber {
                chunk,
                mantissa,
                fraction,
                exponent,
            } => {
                let mut text = mantissa.to_string();
                if let Some(fraction) = fraction {
                    text.push_str(&format!(".{fraction}"));
                }
                if let Some(exponent) = exponent {
                    text.push_str(&format!("e{exponent}"));
                }
                self.apply(&Tamper::KeyPrefix {
                    chunk: *chunk,
                    text,
                });
            }
            Tamper::KeyPrefix { chunk, text } => {
                if let Some(c) = self.chunk(*chunk) {
                    for value in c.values_mut() {
                        if let AttributeValue::S(s) = value {
                            let cut = s.len().saturating_sub(SUFFIX_BYTES);
                            if s.is_char_boundary(cut) {
                                s.replace_range(..cut, text);
                            }
                        }
                    }
                }
            }
            Tamper::RemoveAttribute { chunk, which } => {
                if let Some(c) = self.chunk(*chunk)
                    && !c.is_empty()
                {
                    let name = c.keys().nth(usize::from(*which) % c.len()).cloned();
                    name.map(|n| c.remove(&n));
                }
            }
            Tamper::Manifest(edit) => self.edit_manifest(edit),
            Tamper::FlipInline { at, bit } => {
                if let Some(AttributeValue::B(p)) = self.manifest().and_then(|m| m.get_mut("p"))
                    && !p.is_empty()
                {
                    let i = *at as usize % p.len();
                    p[i] ^= 1 << (bit % 8);
                }
            }
            Tamper::TruncateInline(len) => {
                if let Some(AttributeValue::B(p)) = self.manifest().and_then(|m| m.get_mut("p")) {
                    p.truncate(usize::from(*len));
                }
            }
        }
    }

    fn edit_manifest(&mut self, edit: &ManifestEdit) {
        if let ManifestEdit::NotAMap = edit {
            if self.parent.contains_key(MANIFEST_ATTRIBUTE) {
                self.parent
                    .insert(MANIFEST_ATTRIBUTE.into(), AttributeValue::S("_ds".into()));
            }
            return;
        }
        let Some(map) = self.manifest() else {
            return;
        };
        let mut put = |field: Field, value| {
            map.insert(field.name().into(), value);
        };
        match edit {
            ManifestEdit::NotAMap => {}
            ManifestEdit::Remove(field) => {
                map.remove(field.name());
            }
            ManifestEdit::Number(field, n) => put(*field, AttributeValue::N(n.to_string())),
            ManifestEdit::NumberText(field, text) => put(*field, AttributeValue::N(text.clone())),
            ManifestEdit::Text(field, text) => put(*field, AttributeValue::S(text.clone())),
            ManifestEdit::Binary(field, bytes) => put(*field, AttributeValue::B(bytes.clone())),
            ManifestEdit::Spilled(names) => put(Field::A, AttributeValue::Ss(names.clone())),
            ManifestEdit::Geometry { count, bytes, last } => {
                let (count, bytes) = (u64::from(*count), u64::from(*bytes));
                let full = count.saturating_sub(1) * bytes;
                let stored = full + 1 + u64::from(*last) % bytes.max(1);
                put(Field::N, AttributeValue::N(count.to_string()));
                put(Field::K, AttributeValue::N(bytes.to_string()));
                put(Field::S, AttributeValue::N(stored.to_string()));
            }
            ManifestEdit::Codec(c) => {
                let codec = Codec::ALL[usize::from(*c) % Codec::ALL.len()];
                put(Field::C, AttributeValue::S(codec.name().into()));
            }
            ManifestEdit::Version(ms, random) => put(
                Field::V,
                AttributeValue::S(version_of((*ms, *random)).to_text()),
            ),
        }
    }
}
