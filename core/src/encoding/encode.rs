//! Encoding attributes into a value stream without copying large values:
//! small fields go to one buffer, byte strings of any size are borrowed, and
//! the stream is a list of pieces a consumer copies exactly once.

use alloc::vec::Vec;
use core::ops::Range;

use super::{STREAM_MAGIC, STREAM_VERSION, STREAM_VERSION_OPEN, tag};
use crate::value::{AttributeValue, Item};

/// Byte strings at least this long are borrowed rather than copied into the
/// buffer of small fields.
const BORROW_THRESHOLD: usize = 64;

/// One piece of an encoded stream.
#[derive(Clone, Debug)]
enum Piece<'a> {
    /// A range of the stream's own buffer.
    Own(Range<usize>),
    /// Bytes borrowed from the item.
    Borrowed(&'a [u8]),
}

/// An encoded value stream, borrowing the item's large byte strings.
#[derive(Clone, Debug)]
pub struct EncodedStream<'a> {
    own: Vec<u8>,
    /// How much of `own` is already recorded in `pieces`.
    flushed: usize,
    pieces: Vec<Piece<'a>>,
    len: usize,
}

impl<'a> EncodedStream<'a> {
    /// Length of the whole stream in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the stream is empty (never, once the header is written).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The stream's pieces in order, as byte slices.
    pub fn slices(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.pieces.iter().map(|piece| match piece {
            Piece::Own(range) => &self.own[range.clone()],
            Piece::Borrowed(bytes) => *bytes,
        })
    }

    /// The whole stream in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        self.slices().for_each(|s| out.extend_from_slice(s));
        out
    }

    fn new() -> Self {
        Self {
            own: Vec::new(),
            flushed: 0,
            pieces: Vec::new(),
            len: 0,
        }
    }

    fn byte(&mut self, b: u8) {
        self.own.push(b);
    }

    fn varint(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.own.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.own.push(n as u8);
    }

    /// A length-prefixed byte string.
    fn bytes(&mut self, data: &'a [u8]) {
        self.varint(data.len() as u64);
        if data.len() < BORROW_THRESHOLD {
            self.own.extend_from_slice(data);
        } else {
            self.flush_own();
            self.pieces.push(Piece::Borrowed(data));
            self.len += data.len();
        }
    }

    /// Records the buffered small fields not yet in a piece.
    fn flush_own(&mut self) {
        let end = self.own.len();
        if end > self.flushed {
            self.len += end - self.flushed;
            match self.pieces.last_mut() {
                Some(Piece::Own(range)) => range.end = end,
                _ => self.pieces.push(Piece::Own(self.flushed..end)),
            }
            self.flushed = end;
        }
    }

    fn value(&mut self, value: &'a AttributeValue) {
        match value {
            AttributeValue::S(s) => {
                self.byte(tag::S);
                self.bytes(s.as_bytes());
            }
            AttributeValue::N(n) => {
                self.byte(tag::N);
                self.bytes(n.as_bytes());
            }
            AttributeValue::B(b) => {
                self.byte(tag::B);
                self.bytes(b);
            }
            AttributeValue::Bool(false) => self.byte(tag::FALSE),
            AttributeValue::Bool(true) => self.byte(tag::TRUE),
            AttributeValue::Null => self.byte(tag::NULL),
            AttributeValue::L(list) => {
                self.byte(tag::L);
                self.varint(list.len() as u64);
                list.iter().for_each(|v| self.value(v));
            }
            AttributeValue::M(map) => {
                self.byte(tag::M);
                self.varint(map.len() as u64);
                for (name, v) in map {
                    self.bytes(name.as_bytes());
                    self.value(v);
                }
            }
            AttributeValue::Ss(set) => {
                self.byte(tag::SS);
                self.varint(set.len() as u64);
                set.iter().for_each(|s| self.bytes(s.as_bytes()));
            }
            AttributeValue::Ns(set) => {
                self.byte(tag::NS);
                self.varint(set.len() as u64);
                set.iter().for_each(|n| self.bytes(n.as_bytes()));
            }
            AttributeValue::Bs(set) => {
                self.byte(tag::BS);
                self.varint(set.len() as u64);
                set.iter().for_each(|b| self.bytes(b));
            }
        }
    }
}

/// Encodes named attributes (in the order given) into a value stream.
///
/// Layout: magic `DSV`, format version, attribute count, then each
/// attribute's name and value (see `docs/FORMAT.md`).
pub fn encode_attributes<'a>(
    attributes: impl ExactSizeIterator<Item = (&'a str, &'a AttributeValue)>,
) -> EncodedStream<'a> {
    let mut stream = EncodedStream::new();
    stream.own.extend_from_slice(STREAM_MAGIC);
    stream.byte(STREAM_VERSION);
    stream.varint(attributes.len() as u64);
    for (name, value) in attributes {
        stream.bytes(name.as_bytes());
        stream.value(value);
    }
    stream.flush_own();
    stream
}

/// Encodes a whole item into a value stream, its attributes in name order.
///
/// ```
/// use dynaslice_core::encoding::{decode_attributes, encode_item};
/// use dynaslice_core::{AttributeValue, Item};
///
/// let item = Item::from([("pk".to_owned(), AttributeValue::S("order-1".into()))]);
/// let stream = encode_item(&item).to_vec();
/// assert_eq!(decode_attributes(&stream)?, item);
/// # Ok::<(), dynaslice_core::encoding::DecodeError>(())
/// ```
pub fn encode_item(item: &Item) -> EncodedStream<'_> {
    encode_attributes(item.iter().map(|(name, value)| (name.as_str(), value)))
}

/// The start of a value stream holding one binary attribute of `len`
/// bytes, up to where those bytes begin: for payloads that arrive in pieces.
/// With no `len` (a pipe, a generated stream), a version 2 stream whose
/// binary runs to the stream's end (tag `0x0C`).
pub fn binary_attribute_prefix(name: &str, len: Option<u64>) -> Vec<u8> {
    let mut stream = EncodedStream::new();
    stream.own.extend_from_slice(STREAM_MAGIC);
    stream.byte(len.map_or(STREAM_VERSION_OPEN, |_| STREAM_VERSION));
    stream.varint(1);
    stream.varint(name.len() as u64);
    stream.own.extend_from_slice(name.as_bytes());
    match len {
        Some(len) => {
            stream.byte(tag::B);
            stream.varint(len);
        }
        None => stream.byte(tag::B_REST),
    }
    stream.own
}
