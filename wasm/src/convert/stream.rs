//! Items cross the boundary as value streams (`docs/FORMAT.md` §3): the
//! package's `js/encode.js` writes one for each item going in, and
//! `js/decode.js` reads the one coming out, so an item costs one copy of a
//! byte array instead of a call per value. The bytes are decoded with every
//! rule of the format, as any other untrusted stream.

use dynaslice_core::encoding::{decode_attributes_nested, encode_attributes, stream_item_size};
use dynaslice_core::{Item, MAX_NESTING_DEPTH};

use crate::error::Failure;

/// Lists and maps read around a value: past DynamoDB's limit, so validation
/// reports an item a little too deep with its path (`js/encode.js` stops at
/// the same depth).
const READ_DEPTH: usize = MAX_NESTING_DEPTH + 8;

/// An item from its value stream.
pub fn item(stream: &[u8]) -> Result<Item, Failure> {
    Ok(decode_attributes_nested(stream, READ_DEPTH)?)
}

/// The exact size of the item a stream holds, without building the item.
/// Its text is counted, not checked: a stream from `js/encode.js` holds
/// UTF-8 (`TextEncoder`) and unique names (JavaScript object keys).
pub fn item_size(stream: &[u8]) -> Result<usize, Failure> {
    Ok(stream_item_size(stream, READ_DEPTH)?)
}

/// Several items written back to back; `ends[i]` is where item `i` ends.
pub fn items(streams: &[u8], ends: &[u32]) -> Result<Vec<Item>, Failure> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let end = end as usize;
            let bytes = streams.get(start..end).ok_or_else(|| {
                Failure::new("INPUT_INVALID", "item streams and their ends disagree")
            })?;
            start = end;
            item(bytes)
        })
        .collect()
}

/// An item's value stream, for `js/decode.js`.
pub fn to_stream(item: &Item) -> Vec<u8> {
    encode_attributes(item.iter().map(|(name, value)| (name.as_str(), value))).to_vec()
}
