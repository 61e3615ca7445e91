//! A real frame, made by `compress` from fuzz-chosen input with a fuzz-chosen
//! codec, then damaged: bytes flipped, set, inserted, removed, the frame
//! truncated (`dynaslice_core_fuzz::decompress_frame` says how the input is
//! read). Undamaged it must round-trip; damaged it must give an error or,
//! when the damage lands where a codec ignores it (padding bits, gzip header
//! fields), exactly the original input. Never a panic, never other bytes.
//!
//! With `DYNASLICE_FUZZ_SAVE=<file>` set, each damaged frame is written to
//! `<file>`, the form the regression test replays.

#![no_main]

use dynaslice_core::codec::decompress;
use dynaslice_core_fuzz::decompress_frame::{Case, Frames};
use libfuzzer_sys::fuzz_target;

/// Output limit: large enough for every input this target makes.
const LIMIT: usize = 1 << 20;

fuzz_target!(|case: Case| {
    let Some(Frames {
        input,
        codec,
        original,
        damaged: frame,
    }) = case.frames()
    else {
        return;
    };
    if let Some(path) = std::env::var_os("DYNASLICE_FUZZ_SAVE") {
        std::fs::write(path, &frame).unwrap();
    }
    match decompress(&frame, LIMIT) {
        Ok(raw) => assert_eq!(raw, input, "{codec} frame decoded to other bytes"),
        Err(e) => assert_ne!(frame, original, "undamaged {codec} frame failed: {e}"),
    }
});
