//! Decoding a value stream. The bytes are assumed hostile: every length is
//! checked against what remains before anything is allocated, nesting is
//! bounded, text must be UTF-8, and names may not repeat.

use crate::code::Code;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::{MultiSlice, STREAM_MAGIC, STREAM_VERSION, STREAM_VERSION_OPEN, tag};
use crate::size;
use crate::validate::MAX_NESTING_DEPTH;
use crate::value::{AttributeValue, Item};

/// Most elements reserved up front for a list or set: a count is bounded by
/// the bytes that remain, but an element in memory is larger than one byte.
const PREALLOCATE_LIMIT: usize = 1024;

/// Why a value stream could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The stream does not start with `DSV`.
    BadMagic,
    /// A format version this crate does not read.
    UnsupportedVersion {
        /// The value stream's format version byte.
        got: u8,
        /// The version this crate reads.
        supported: u8,
    },
    /// The stream ends inside a value.
    Truncated {
        /// Offset where more bytes were needed.
        at: usize,
    },
    /// A length or count does not fit in 64 bits, or is encoded in more
    /// bytes than needed.
    BadVarint {
        /// Offset of the varint.
        at: usize,
    },
    /// An unknown type tag.
    UnknownTag {
        /// The tag byte no format version assigns.
        tag: u8,
        /// Its offset in the stream.
        at: usize,
    },
    /// Text that is not UTF-8.
    InvalidUtf8 {
        /// Offset of the text.
        at: usize,
    },
    /// Lists and maps nested deeper than DynamoDB allows.
    TooDeep {
        /// The most lists and maps around a value the reader accepts.
        limit: usize,
    },
    /// The same attribute or map key twice.
    DuplicateName {
        /// The attribute or map key that comes twice.
        name: String,
    },
    /// Bytes left over after the last attribute.
    TrailingBytes {
        /// Bytes after the item's end.
        count: usize,
    },
}

impl DecodeError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::BadMagic => Code::StreamBadMagic,
            Self::UnsupportedVersion { .. } => Code::StreamUnsupportedVersion,
            Self::Truncated { .. } => Code::StreamTruncated,
            Self::BadVarint { .. } => Code::StreamBadVarint,
            Self::UnknownTag { .. } => Code::StreamUnknownTag,
            Self::InvalidUtf8 { .. } => Code::StreamInvalidUtf8,
            Self::TooDeep { .. } => Code::StreamTooDeep,
            Self::DuplicateName { .. } => Code::StreamDuplicateName,
            Self::TrailingBytes { .. } => Code::StreamTrailingBytes,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("value stream does not start with DSV"),
            Self::UnsupportedVersion { got, supported } => {
                write!(
                    f,
                    "value stream version {got}, this build reads {supported}"
                )
            }
            Self::Truncated { at } => write!(f, "value stream truncated at byte {at}"),
            Self::BadVarint { at } => write!(f, "value stream has a bad length at byte {at}"),
            Self::UnknownTag { tag, at } => {
                write!(
                    f,
                    "value stream has unknown type tag {tag:#04x} at byte {at}"
                )
            }
            Self::InvalidUtf8 { at } => write!(f, "value stream has invalid UTF-8 at byte {at}"),
            Self::TooDeep { limit } => write!(f, "value stream nests deeper than {limit}"),
            Self::DuplicateName { name } => write!(f, "value stream repeats the name {name:?}"),
            Self::TrailingBytes { count } => {
                write!(f, "value stream has {count} bytes after its end")
            }
        }
    }
}

/// Decodes a value stream held in one slice.
pub fn decode_attributes(bytes: &[u8]) -> Result<Item, DecodeError> {
    decode_attributes_from(MultiSlice::new([bytes]))
}

/// Decodes a value stream spread over several slices.
pub fn decode_attributes_from(input: MultiSlice<'_>) -> Result<Item, DecodeError> {
    decode(input, MAX_NESTING_DEPTH)
}

/// Decodes a value stream that may nest up to `max_depth` lists and maps,
/// more than a stored stream may: for an item on its way to validation,
/// which reports a value a little too deep with its path. Every other rule
/// of the format holds.
pub fn decode_attributes_nested(bytes: &[u8], max_depth: usize) -> Result<Item, DecodeError> {
    decode(MultiSlice::new([bytes]), max_depth)
}

fn decode(input: MultiSlice<'_>, max_depth: usize) -> Result<Item, DecodeError> {
    let mut reader = Reader {
        input,
        max_depth,
        open: false,
    };
    let count = reader.header()?;
    let mut item = Item::new();
    for _ in 0..count {
        let name = reader.string()?;
        let value = reader.value(0)?;
        insert_unique(&mut item, name, value)?;
    }
    reader.end()?;
    Ok(item)
}

/// The exact DynamoDB size of the item a value stream holds (see
/// [`crate::item_size`]), read without building the item. The structure is
/// checked as [`decode_attributes_nested`] checks it (magic, version,
/// varints, every length against what remains, tags, nesting up to
/// `max_depth`, nothing after the end), and number text must be UTF-8; other
/// text is only counted, valid UTF-8 or not, and a repeated name counts
/// twice. Decode the stream to hold it to those rules too.
pub fn stream_item_size(bytes: &[u8], max_depth: usize) -> Result<usize, DecodeError> {
    let mut reader = Reader {
        input: MultiSlice::new([bytes]),
        max_depth,
        open: false,
    };
    let count = reader.header()?;
    let mut number = Vec::new();
    let mut size = 0;
    for _ in 0..count {
        size += reader.skip_bytes()? + reader.value_size(0, &mut number)?;
    }
    reader.end()?;
    Ok(size)
}

pub(super) fn insert_unique(
    map: &mut BTreeMap<String, AttributeValue>,
    name: String,
    value: AttributeValue,
) -> Result<(), DecodeError> {
    use alloc::collections::btree_map::Entry;
    match map.entry(name) {
        Entry::Vacant(slot) => {
            slot.insert(value);
            Ok(())
        }
        Entry::Occupied(slot) => Err(DecodeError::DuplicateName {
            name: slot.key().clone(),
        }),
    }
}

/// The one string or binary attribute a value stream holds (a stored file
/// or document), located from the stream's first bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobSpan {
    /// The attribute's name.
    pub name: String,
    /// A string (`S`) rather than binary (`B`).
    pub string: bool,
    /// Offset of its first byte in the stream.
    pub start: usize,
    /// Its length in bytes.
    pub len: u64,
}

/// Locates the value of a stream's only attribute, when the stream holds
/// exactly one attribute and it is a string or a binary. `prefix` may be
/// just the start of the stream, whose whole length is `stream_len` (a
/// version 2 binary's length is what follows it); `None` when it holds
/// something else or is too short to tell.
pub fn single_blob_span(prefix: &[u8], stream_len: u64) -> Option<BlobSpan> {
    let mut reader = Reader {
        input: MultiSlice::new([prefix]),
        max_depth: MAX_NESTING_DEPTH,
        open: false,
    };
    if reader.header().ok()? != 1 {
        return None;
    }
    let name = reader.string().ok()?;
    let (string, len) = match reader.u8().ok()? {
        // The value's length is read as is: its bytes may lie beyond the prefix.
        tag::S => (true, reader.varint().ok()?),
        tag::B => (false, reader.varint().ok()?),
        tag::B_REST if reader.open => (
            false,
            stream_len.checked_sub(reader.input.position() as u64)?,
        ),
        _ => return None,
    };
    Some(BlobSpan {
        name,
        string,
        start: reader.input.position(),
        len,
    })
}

struct Reader<'a> {
    input: MultiSlice<'a>,
    /// Lists and maps a value may sit in ([`MAX_NESTING_DEPTH`] when stored).
    max_depth: usize,
    /// A version 2 stream: a top-level binary may run to the end.
    open: bool,
}

impl Reader<'_> {
    /// Checks the magic and version; returns the attribute count.
    fn header(&mut self) -> Result<usize, DecodeError> {
        let mut magic = Vec::with_capacity(4);
        self.take(STREAM_MAGIC.len(), &mut magic)?;
        if magic != STREAM_MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let version = self.u8()?;
        if version != STREAM_VERSION && version != STREAM_VERSION_OPEN {
            return Err(DecodeError::UnsupportedVersion {
                got: version,
                supported: STREAM_VERSION_OPEN,
            });
        }
        self.open = version == STREAM_VERSION_OPEN;
        self.count()
    }

    /// Nothing may follow the last attribute.
    fn end(&self) -> Result<(), DecodeError> {
        match self.input.remaining() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes { count }),
        }
    }

    fn truncated(&self) -> DecodeError {
        DecodeError::Truncated {
            at: self.input.position(),
        }
    }

    // Read for every byte of every tag, name and count: inlined even at
    // opt-level "z" (the WebAssembly build), and the error built only on failure.
    #[inline(always)]
    fn u8(&mut self) -> Result<u8, DecodeError> {
        match self.input.read_u8() {
            Some(b) => Ok(b),
            None => Err(self.truncated()),
        }
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let at = self.input.position();
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7f);
            // The tenth byte may only carry the top bit of a u64; a zero
            // final byte after the first would be a longer spelling.
            if (shift == 63 && bits > 1) || (shift > 0 && b == 0) {
                return Err(DecodeError::BadVarint { at });
            }
            value |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint { at })
    }

    /// A length or count: never more than the bytes that remain, since every
    /// element takes at least one byte, so no hostile count can allocate.
    fn count(&mut self) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        if n > self.input.remaining() as u64 {
            return Err(self.truncated());
        }
        Ok(n as usize)
    }

    fn take(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        match self.input.read_into(len, out) {
            Some(()) => Ok(()),
            None => Err(self.truncated()),
        }
    }

    /// The rest of the stream (a version 2 stream's last binary).
    fn rest(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let len = self.input.remaining();
        self.input.read_into(len, &mut out);
        out
    }

    fn bytes(&mut self) -> Result<Vec<u8>, DecodeError> {
        let len = self.count()?;
        let mut out = Vec::new();
        self.take(len, &mut out)?;
        Ok(out)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let at = self.input.position();
        String::from_utf8(self.bytes()?).map_err(|_| DecodeError::InvalidUtf8 { at })
    }

    /// Reads a value's tag (and where it was); `depth` counts the lists and
    /// maps around the value, which may not be `max_depth` or more (for a
    /// stored stream, DynamoDB's limit: see [`MAX_NESTING_DEPTH`]).
    fn tag(&mut self, depth: usize) -> Result<(u8, usize), DecodeError> {
        let at = self.input.position();
        let tag = self.u8()?;
        if depth >= self.max_depth {
            return Err(DecodeError::TooDeep {
                limit: self.max_depth,
            });
        }
        Ok((tag, at))
    }

    /// Decodes one value with `depth` lists and maps around it.
    fn value(&mut self, depth: usize) -> Result<AttributeValue, DecodeError> {
        let (tag, at) = self.tag(depth)?;
        Ok(match tag {
            tag::S => AttributeValue::S(self.string()?),
            tag::N => AttributeValue::N(self.string()?),
            tag::B => AttributeValue::B(self.bytes()?),
            tag::B_REST if self.open && depth == 0 => AttributeValue::B(self.rest()),
            tag::FALSE => AttributeValue::Bool(false),
            tag::TRUE => AttributeValue::Bool(true),
            tag::NULL => AttributeValue::Null,
            tag::L => {
                let count = self.count()?;
                let mut list = Vec::with_capacity(count.min(PREALLOCATE_LIMIT));
                for _ in 0..count {
                    list.push(self.value(depth + 1)?);
                }
                AttributeValue::L(list)
            }
            tag::M => {
                let count = self.count()?;
                let mut map = BTreeMap::new();
                for _ in 0..count {
                    let name = self.string()?;
                    let value = self.value(depth + 1)?;
                    insert_unique(&mut map, name, value)?;
                }
                AttributeValue::M(map)
            }
            tag::SS => AttributeValue::Ss(self.members(Self::string)?),
            tag::NS => AttributeValue::Ns(self.members(Self::string)?),
            tag::BS => AttributeValue::Bs(self.members(Self::bytes)?),
            tag => return Err(DecodeError::UnknownTag { tag, at }),
        })
    }

    /// Skips a length and its bytes; returns the length.
    fn skip_bytes(&mut self) -> Result<usize, DecodeError> {
        let len = self.count()?;
        match self.input.skip(len) {
            Some(()) => Ok(len),
            None => Err(self.truncated()),
        }
    }

    /// A number's size from its text, read into `scratch`.
    fn number_size(&mut self, scratch: &mut Vec<u8>) -> Result<usize, DecodeError> {
        let at = self.input.position();
        let len = self.count()?;
        scratch.clear();
        self.take(len, scratch)?;
        let text = core::str::from_utf8(scratch).map_err(|_| DecodeError::InvalidUtf8 { at })?;
        Ok(size::number_text_size(text))
    }

    /// The size of one value (as [`size::value_size`]) without building it.
    fn value_size(&mut self, depth: usize, scratch: &mut Vec<u8>) -> Result<usize, DecodeError> {
        let (tag, at) = self.tag(depth)?;
        Ok(match tag {
            tag::S | tag::B => self.skip_bytes()?,
            tag::B_REST if self.open && depth == 0 => {
                let len = self.input.remaining();
                self.input.skip(len);
                len
            }
            tag::N => self.number_size(scratch)?,
            tag::FALSE | tag::TRUE | tag::NULL => 1,
            tag::L => {
                let mut total = size::CONTAINER_BYTES;
                for _ in 0..self.count()? {
                    total += size::ELEMENT_BYTES + self.value_size(depth + 1, scratch)?;
                }
                total
            }
            tag::M => {
                let mut total = size::CONTAINER_BYTES;
                for _ in 0..self.count()? {
                    total += size::ELEMENT_BYTES
                        + self.skip_bytes()?
                        + self.value_size(depth + 1, scratch)?;
                }
                total
            }
            tag::SS | tag::BS => {
                let mut total = 0;
                for _ in 0..self.count()? {
                    total += self.skip_bytes()?;
                }
                total
            }
            tag::NS => {
                let mut total = 0;
                for _ in 0..self.count()? {
                    total += self.number_size(scratch)?;
                }
                total
            }
            tag => return Err(DecodeError::UnknownTag { tag, at }),
        })
    }

    fn members<T>(
        &mut self,
        mut read: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let count = self.count()?;
        let mut out = Vec::with_capacity(count.min(PREALLOCATE_LIMIT));
        for _ in 0..count {
            out.push(read(self)?);
        }
        Ok(out)
    }
}
