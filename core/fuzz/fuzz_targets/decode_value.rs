//! Arbitrary bytes into the value-stream decoder. Whatever decodes must
//! survive a round trip: re-encoding gives a stream of the same length (the
//! decoder accepts only canonical lengths and no duplicates, so only the
//! order of names may differ) that decodes to the same item.

#![no_main]

use dynaslice_core::encoding::{decode_attributes, encode_item};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(item) = decode_attributes(data) else {
        return;
    };
    let encoded = encode_item(&item).to_vec();
    assert_eq!(encoded.len(), data.len(), "re-encoding changed the length");
    let again = decode_attributes(&encoded).expect("a re-encoded item decodes");
    assert_eq!(again, item, "round trip changed the item");
});
