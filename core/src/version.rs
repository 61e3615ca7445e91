//! Version ids: a fresh, unique id for every write attempt.
//!
//! A version id is a ULID: 48 bits of Unix time in milliseconds and 80 random
//! bits, written as 26 Crockford base-32 characters. Racing writers never
//! share one, so they never write the same chunk key, and the time part lets
//! `gc` tell an abandoned chunk's age from its key alone. Core has no clock and
//! no randomness (it is `no_std`): callers supply both.

use crate::code::Code;
use alloc::string::String;
use core::fmt;

/// Length of a version id's text.
pub const VERSION_ID_LEN: usize = 26;

/// A write attempt's unique version id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionId(u128);

/// Crockford's base-32 alphabet, as ULIDs use it.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Why version id text was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VersionIdError {
    /// Not 26 characters.
    Length {
        /// Characters given.
        got: usize,
    },
    /// A character outside Crockford's upper-case base-32 alphabet.
    Character {
        /// Its position.
        at: usize,
    },
    /// The first character exceeds `7`, so the value overflows 128 bits.
    Overflow,
}

impl VersionIdError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        Code::VersionIdInvalid
    }
}

impl fmt::Display for VersionIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length { got } => {
                write!(
                    f,
                    "version id has {got} characters, expected {VERSION_ID_LEN}"
                )
            }
            Self::Character { at } => write!(f, "version id has an invalid character at {at}"),
            Self::Overflow => f.write_str("version id overflows 128 bits"),
        }
    }
}

impl VersionId {
    /// A version id from a Unix time in milliseconds (the low 48 bits are
    /// used) and 80 random bits (the low 80 bits of `random`).
    pub fn new(unix_ms: u64, random: u128) -> Self {
        let time = u128::from(unix_ms & ((1 << 48) - 1));
        Self((time << 80) | (random & ((1 << 80) - 1)))
    }

    /// The id `n` after this one at the same time: its random part counted
    /// on (wrapping within its 80 bits). Group `n` of a write has it.
    pub fn offset(&self, n: u32) -> Self {
        let random = (self.0 & ((1 << 80) - 1)).wrapping_add(u128::from(n));
        Self::new(self.unix_ms(), random)
    }

    /// The Unix time in milliseconds the id was made at.
    pub fn unix_ms(&self) -> u64 {
        (self.0 >> 80) as u64
    }

    /// Parses the 26-character text form.
    pub fn parse(text: &str) -> Result<Self, VersionIdError> {
        let bytes = text.as_bytes();
        if bytes.len() != VERSION_ID_LEN {
            return Err(VersionIdError::Length { got: bytes.len() });
        }
        if bytes[0] > b'7' {
            return Err(VersionIdError::Overflow);
        }
        let mut value = 0u128;
        for (at, b) in bytes.iter().enumerate() {
            let digit = ALPHABET
                .iter()
                .position(|a| a == b)
                .ok_or(VersionIdError::Character { at })?;
            value = (value << 5) | digit as u128;
        }
        Ok(Self(value))
    }

    /// The 26-character text form.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(VERSION_ID_LEN);
        for i in (0..VERSION_ID_LEN).rev() {
            out.push(ALPHABET[((self.0 >> (5 * i)) & 31) as usize] as char);
        }
        out
    }
}

impl fmt::Display for VersionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}
