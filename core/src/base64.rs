//! Standard base64 (RFC 4648 §4: `A-Z a-z 0-9 + /`, `=` padding), the text
//! of binary key parts in chunk keys (`docs/FORMAT.md` §6).
//!
//! Decoding is strict, so one key text has one meaning: the length is a
//! multiple of 4, padding only at the end, and the bits after the last byte
//! are zero (`QQ==` decodes, `QR==` does not). Written here rather than
//! taken from the `base64` crate, whose general engine cost the WebAssembly
//! module about 6 KB for these two functions; the tests compare both.

use alloc::string::String;
use alloc::vec::Vec;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` as padded standard base64.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            *group.get(1).unwrap_or(&0),
            *group.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The bytes of canonical padded standard base64, or `None`.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let groups = text.len() / 4;
    for (index, group) in text.chunks_exact(4).enumerate() {
        let last = index + 1 == groups;
        let padding = if last {
            group.iter().rev().take_while(|&&c| c == b'=').count()
        } else {
            0
        };
        if padding > 2 {
            return None;
        }
        let mut n = 0u32;
        for &c in &group[..4 - padding] {
            n = n << 6 | u32::from(sextet(c)?);
        }
        n <<= 6 * padding as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = 3 - padding;
        // The bits past the last byte must be zero.
        if n & ((1 << (8 * padding as u32)) - 1) != 0 {
            return None;
        }
        out.extend_from_slice(&bytes[..keep]);
    }
    Some(out)
}

fn sextet(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use proptest::prelude::*;

    #[test]
    fn rfc_4648_vectors() {
        // RFC 4648 §10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).as_deref(), Some(plain.as_bytes()));
        }
    }

    #[test]
    fn refuses_what_is_not_canonical() {
        for text in [
            "Zg", "Zg=", "Zg===", "Z===", "====", "QR==", "Zm9=", "Zm8=Zm8=", "Zm 9v", "Zm9v\n",
            "Zm-_", "Zm9v====",
        ] {
            assert_eq!(decode(text), None, "{text:?}");
            assert!(
                STANDARD.decode(text).is_err(),
                "the crate agrees on {text:?}"
            );
        }
    }

    proptest! {
        /// The `base64` crate's standard engine is the reference.
        #[test]
        fn equal_to_the_base64_crate(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let text = encode(&bytes);
            prop_assert_eq!(&text, &STANDARD.encode(&bytes));
            prop_assert_eq!(decode(&text), Some(bytes));
        }

        #[test]
        fn decodes_exactly_what_the_crate_decodes(text in "[A-Za-z0-9+/=]{0,16}") {
            prop_assert_eq!(decode(&text), STANDARD.decode(&text).ok());
        }
    }
}
