//! The value encoding: a compact, versioned binary form of a set of
//! attributes that preserves every type exactly, number text included.
//! Specified in `docs/FORMAT.md`, "Value stream".

mod decode;
mod encode;
mod multislice;
mod scan;

pub use decode::{
    BlobSpan, DecodeError, decode_attributes, decode_attributes_from, decode_attributes_nested,
    single_blob_span, stream_item_size,
};
pub use encode::{EncodedStream, binary_attribute_prefix, encode_attributes, encode_item};
pub use multislice::MultiSlice;
pub(crate) use scan::{ScanError, Scanner};

/// First bytes of every value stream.
pub const STREAM_MAGIC: &[u8; 3] = b"DSV";
/// The value-stream format version this crate writes for a payload whose
/// length is known when it begins (every stream but one).
pub const STREAM_VERSION: u8 = 1;
/// The value-stream format version of a payload streamed in without a
/// length: version 1 plus one tag, `0x0C`, a binary that runs to
/// the stream's end. Readers read both.
pub const STREAM_VERSION_OPEN: u8 = 2;

/// Type tags, one byte before each value.
pub(crate) mod tag {
    pub const S: u8 = 0x01;
    pub const N: u8 = 0x02;
    pub const B: u8 = 0x03;
    pub const FALSE: u8 = 0x04;
    pub const TRUE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const L: u8 = 0x07;
    pub const M: u8 = 0x08;
    pub const SS: u8 = 0x09;
    pub const NS: u8 = 0x0A;
    pub const BS: u8 = 0x0B;
    /// Version 2 only, the last top-level value: a binary without a
    /// length, whose bytes are the rest of the stream.
    pub const B_REST: u8 = 0x0C;
}
