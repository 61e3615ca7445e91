//! What a `decompress_frame` input means: a real frame, made by `compress`
//! from fuzz-chosen input with a fuzz-chosen codec, then damaged: bytes
//! flipped, set, inserted, removed, the frame truncated, the raw length
//! rewritten. The target checks what `decompress` makes of it.

use arbitrary::Arbitrary;
use dynaslice_core::codec::{Codec, Compression, compress};

/// One input of the `decompress_frame` target, as `arbitrary` reads it.
#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub struct Case {
    /// Input bytes, repeated `repeat + 1` times so codecs find matches.
    pub input: Vec<u8>,
    pub repeat: u8,
    /// Index into `Codec::ALL`.
    pub codec: u8,
    /// A level to ask for (refused levels end the case).
    pub level: Option<u8>,
    pub damage: Vec<Damage>,
}

#[derive(Arbitrary, Clone, Debug, PartialEq)]
pub enum Damage {
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

/// A case made real: the input, its frame, and the frame after the damage.
pub struct Frames {
    pub input: Vec<u8>,
    pub codec: Codec,
    pub original: Vec<u8>,
    pub damaged: Vec<u8>,
}

impl Case {
    /// The case's frames, or `None` when `compress` refuses its level.
    pub fn frames(&self) -> Option<Frames> {
        let input = self.input.repeat(usize::from(self.repeat) + 1);
        let codec = Codec::ALL[usize::from(self.codec) % Codec::ALL.len()];
        let compression = Compression {
            codec,
            level: self.level,
        };
        let original = compress(&input, compression).ok()?;
        let mut damaged = original.clone();
        for damage in &self.damage {
            apply(&mut damaged, damage);
        }
        Some(Frames {
            input,
            codec,
            original,
            damaged,
        })
    }
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
