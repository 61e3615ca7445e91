//! A real frame, made by `compress` from fuzz-chosen input with a fuzz-chosen
//! codec, then damaged: bytes flipped, set, inserted, removed, the frame
//! truncated. Undamaged it must round-trip; damaged it must give an error or,
//! when the damage lands where a codec ignores it (padding bits, gzip header
//! fields), exactly the original input. Never a panic, never other bytes.
//!
//! With `DYNASLICE_FUZZ_SAVE=<file>` set, each damaged frame is written to
//! `<file>`, the form the regression test replays.

#![no_main]

use arbitrary::Arbitrary;
use dynaslice_core::codec::{Codec, Compression, compress, decompress};
use libfuzzer_sys::fuzz_target;

/// Output limit: large enough for every input this target makes.
const LIMIT: usize = 1 << 20;

#[derive(Arbitrary, Debug)]
struct Case {
    /// Input bytes, repeated `repeat + 1` times so codecs find matches.
    input: Vec<u8>,
    repeat: u8,
    /// Index into `Codec::ALL`.
    codec: u8,
    /// A level to ask for (refused levels end the case).
    level: Option<u8>,
    damage: Vec<Damage>,
}

#[derive(Arbitrary, Debug)]
enum Damage {
    Flip {
        at: u16,
        bit: u8,
    },
    Set {
        at: u16,
        value: u8,
    },
    Insert {
        at: u16,
        value: u8,
    },
    Remove {
        at: u16,
    },
    Truncate {
        len: u16,
    },
    /// Rewrite the raw length in the header.
    RawLen(u64),
}

fn apply(frame: &mut Vec<u8>, damage: &Damage) {
    let index = |at: u16, len: usize| usize::from(at) % len.max(1);
    match *damage {
        Damage::Flip { at, bit } if !frame.is_empty() => {
            let i = index(at, frame.len());
            frame[i] ^= 1 << (bit % 8);
        }
        Damage::Set { at, value } if !frame.is_empty() => {
            let i = index(at, frame.len());
            frame[i] = value;
        }
        Damage::Insert { at, value } => {
            let i = index(at, frame.len() + 1);
            frame.insert(i, value);
        }
        Damage::Remove { at } if !frame.is_empty() => {
            let i = index(at, frame.len());
            frame.remove(i);
        }
        Damage::Truncate { len } => frame.truncate(usize::from(len)),
        Damage::RawLen(len) if frame.len() >= 13 => {
            frame[5..13].copy_from_slice(&len.to_le_bytes())
        }
        _ => {}
    }
}

fuzz_target!(|case: Case| {
    let input = case.input.repeat(usize::from(case.repeat) + 1);
    let codec = Codec::ALL[usize::from(case.codec) % Codec::ALL.len()];
    let compression = Compression {
        codec,
        level: case.level,
    };
    let Ok(mut frame) = compress(&input, compression) else {
        return;
    };
    let original = frame.clone();
    for damage in &case.damage {
        apply(&mut frame, damage);
    }
    if let Some(path) = std::env::var_os("DYNASLICE_FUZZ_SAVE") {
        std::fs::write(path, &frame).unwrap();
    }
    match decompress(&frame, LIMIT) {
        Ok(raw) => assert_eq!(raw, input, "{codec} frame decoded to other bytes"),
        Err(e) => assert_ne!(frame, original, "undamaged {codec} frame failed: {e}"),
    }
});
