//! Items cross the boundary as value streams (`docs/FORMAT.md` §3): the
//! package's `js/encode.js` writes one for each item going in, and
//! `js/decode.js` reads the one coming out, so an item costs one copy of a
//! byte array instead of a call per value. The bytes are decoded with every
//! rule of the format, as any other untrusted stream.

use dynaslice_core::Code;
use dynaslice_core::encoding::{decode_attributes_nested, encode_item, stream_item_size};
use dynaslice_core::{Item, MAX_NESTING_DEPTH};
use js_sys::Uint8Array;

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
                Failure::new(Code::InputInvalid, "item streams and their ends disagree")
            })?;
            start = end;
            item(bytes)
        })
        .collect()
}

/// Pieces of a stream shorter than this are gathered before they cross into
/// JavaScript; longer ones cross as they are.
const GATHER_BYTES: usize = 64 * 1024;

/// An item's value stream, for `js/decode.js`, written straight into a
/// JavaScript array: each byte is copied once, with no joined copy of the
/// stream in WebAssembly memory first.
pub fn to_js_stream(item: &Item) -> Uint8Array {
    let stream = encode_item(item);
    let out = Uint8Array::new_with_length(stream.len() as u32);
    let mut at = 0u32;
    let mut put = |bytes: &[u8]| {
        let end = at + bytes.len() as u32;
        out.subarray(at, end).copy_from(bytes);
        at = end;
    };
    let mut gathered = Vec::with_capacity(GATHER_BYTES.min(stream.len()));
    for slice in stream.slices() {
        if gathered.len() + slice.len() <= GATHER_BYTES {
            gathered.extend_from_slice(slice);
            continue;
        }
        put(&gathered);
        gathered.clear();
        if slice.len() < GATHER_BYTES {
            gathered.extend_from_slice(slice);
        } else {
            put(slice);
        }
    }
    put(&gathered);
    out
}
