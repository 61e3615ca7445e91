//! Arbitrary bytes into framed decompression with a 1 MiB limit: never a
//! panic, never more output than the limit, and whatever decodes agrees with
//! its header. Run with `-malloc_limit_mb` to catch an allocation a hostile
//! header asks for.

#![no_main]

use dynaslice_core::codec::{FrameHeader, check_digest, decompress};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = decompress(data, LIMIT) else {
        return;
    };
    assert!(raw.len() <= LIMIT, "{} bytes out, limit {LIMIT}", raw.len());
    let header = FrameHeader::parse(data).expect("a decoded frame has a header");
    assert_eq!(
        header.raw_len,
        raw.len() as u64,
        "length differs from header"
    );
    check_digest(&raw, FrameHeader::trailer_digest(data)).expect("digest checked");
});
