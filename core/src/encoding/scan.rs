//! Reading a value stream that arrives in pieces and picking out one
//! top-level string or binary attribute's bytes as they pass, holding none
//! of the stream's values: only the names (to refuse a repeated one) and the
//! containers open around the current value. Every rule of
//! `docs/FORMAT.md` §3 is checked, with the errors [`super::decode_attributes`]
//! gives, except that a repeated name is refused when it is read rather
//! than after its value.

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use super::decode::insert_unique;
use super::{DecodeError, STREAM_MAGIC, STREAM_VERSION, STREAM_VERSION_OPEN, tag};
use crate::validate::MAX_NESTING_DEPTH;
use crate::value::{AttributeValue, Item};

/// Why a scan stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// The stream breaks a rule of the format.
    Decode(DecodeError),
    /// The attribute asked for is neither a string nor binary.
    NotBlob {
        /// Its type descriptor (`"N"`, `"M"`, …).
        found: &'static str,
    },
    /// The names held for the duplicate check exceed the limit.
    NamesTooLarge {
        /// Bytes of names read.
        held: u64,
    },
}

impl From<DecodeError> for ScanError {
    fn from(e: DecodeError) -> Self {
        Self::Decode(e)
    }
}

/// What a container holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Map,
    TextSet,
    BinarySet,
}

/// A list, map or set around the value being read.
struct Open {
    kind: Kind,
    /// Elements not yet started.
    left: u64,
    /// A map's keys so far (the values unused: the decoder's own map type
    /// and duplicate check, which cost no more code in the WebAssembly build).
    names: Item,
}

/// What the bytes of a length-prefixed value are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bytes {
    Binary,
    Text,
    /// The attribute asked for.
    Target,
}

/// What a varint being read is for.
#[derive(Clone, Copy)]
enum Then {
    /// The stream's attribute count.
    Attributes,
    /// A name's length; in a map or at the top level.
    Name { in_map: bool },
    /// A value's length.
    Length(Bytes),
    /// A container's element count.
    Count(Kind),
}

/// What the scanner expects next.
#[derive(Clone, Copy)]
enum Step {
    /// The magic and version; `pos` says how many were read.
    Header,
    Varint {
        value: u64,
        shift: u32,
        /// Where the varint starts.
        at: u64,
        then: Then,
    },
    Name {
        left: u64,
        at: u64,
        in_map: bool,
    },
    /// A value's type tag; `target` when it is the attribute asked for.
    Tag {
        target: bool,
    },
    Bytes {
        left: u64,
        at: u64,
        what: Bytes,
    },
    Done,
}

/// Scans a value stream of known length for one attribute.
pub(crate) struct Scanner {
    target: String,
    /// The stream's length: what remains decides `Truncated`, as when decoding.
    len: u64,
    pos: u64,
    step: Step,
    /// A version 2 stream: a top-level binary may run to the end.
    to_end: bool,
    attributes_left: u64,
    open: Vec<Open>,
    names: Item,
    /// The name being read.
    name: Vec<u8>,
    /// The text being read, checked as UTF-8 across pieces.
    text: Utf8,
    /// Bytes of names read, and their limit.
    held: u64,
    limit: u64,
    /// The attribute's length and whether it is a string, once its header is read.
    found: Option<(u64, bool)>,
}

impl Scanner {
    /// A scanner for `target` in a stream of `len` bytes, holding at most
    /// `limit` bytes of names.
    pub(crate) fn new(target: &str, len: u64, limit: u64) -> Self {
        Self {
            target: target.into(),
            len,
            pos: 0,
            step: Step::Header,
            to_end: false,
            attributes_left: 0,
            open: Vec::new(),
            names: Item::new(),
            name: Vec::new(),
            text: Utf8::default(),
            held: 0,
            limit,
            found: None,
        }
    }

    /// The attribute's length, and whether it is a string, once known.
    pub(crate) fn found(&self) -> Option<(u64, bool)> {
        self.found
    }

    /// Reads the next piece of the stream; returns where in it the
    /// attribute's bytes are (an empty range when none are).
    pub(crate) fn scan(&mut self, piece: &[u8]) -> Result<Range<usize>, ScanError> {
        let mut target = 0..0;
        let mut i = 0;
        while i < piece.len() {
            match self.step {
                Step::Bytes { left, at, what } => {
                    let take =
                        usize::try_from(left).map_or(piece.len() - i, |l| l.min(piece.len() - i));
                    let bytes = &piece[i..i + take];
                    let text = what == Bytes::Text || (what == Bytes::Target && self.is_string());
                    if text && !self.text.check(bytes) {
                        return Err(invalid_utf8(at));
                    }
                    if what == Bytes::Target {
                        target = i..i + take;
                    }
                    i += take;
                    self.pos += take as u64;
                    let left = left - take as u64;
                    self.step = Step::Bytes { left, at, what };
                    if left == 0 {
                        self.bytes_done(at, text)?;
                    }
                }
                Step::Name { left, at, in_map } => {
                    let take =
                        usize::try_from(left).map_or(piece.len() - i, |l| l.min(piece.len() - i));
                    self.name.extend_from_slice(&piece[i..i + take]);
                    i += take;
                    self.pos += take as u64;
                    self.step = Step::Name {
                        left: left - take as u64,
                        at,
                        in_map,
                    };
                    if left == take as u64 {
                        self.name_done(at, in_map)?;
                    }
                }
                _ => {
                    let byte = piece[i];
                    i += 1;
                    self.byte(byte)?;
                }
            }
        }
        Ok(target)
    }

    /// Checks the stream ended where it should: after its last attribute.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        match self.step {
            Step::Done => Ok(()),
            // Fewer than the magic's three bytes are refused at offset 0.
            Step::Header if self.pos < 3 => Err(DecodeError::Truncated { at: 0 }),
            _ => Err(DecodeError::Truncated { at: at(self.pos) }),
        }
    }

    fn is_string(&self) -> bool {
        self.found.is_some_and(|(_, string)| string)
    }

    /// Takes one byte of a header, varint or tag.
    fn byte(&mut self, byte: u8) -> Result<(), ScanError> {
        let pos = self.pos;
        self.pos += 1;
        match self.step {
            Step::Header => {
                if self.len < 3 {
                    return Err(DecodeError::Truncated { at: 0 }.into());
                }
                match pos {
                    0..3 if byte != STREAM_MAGIC[pos as usize] => Err(DecodeError::BadMagic.into()),
                    0..3 => Ok(()),
                    _ if byte != STREAM_VERSION && byte != STREAM_VERSION_OPEN => {
                        Err(DecodeError::UnsupportedVersion {
                            got: byte,
                            supported: STREAM_VERSION_OPEN,
                        }
                        .into())
                    }
                    _ => {
                        self.to_end = byte == STREAM_VERSION_OPEN;
                        self.varint(Then::Attributes);
                        Ok(())
                    }
                }
            }
            Step::Varint {
                value,
                shift,
                at: start,
                then,
            } => {
                let bits = u64::from(byte & 0x7f);
                // The rules of the whole decoder: at most 64 bits, minimal.
                if (shift == 63 && bits > 1) || (shift > 0 && byte == 0) {
                    return Err(DecodeError::BadVarint { at: at(start) }.into());
                }
                let value = value | bits << shift;
                if byte & 0x80 != 0 {
                    if shift == 63 {
                        return Err(DecodeError::BadVarint { at: at(start) }.into());
                    }
                    self.step = Step::Varint {
                        value,
                        shift: shift + 7,
                        at: start,
                        then,
                    };
                    return Ok(());
                }
                // Every length or count is at most the bytes that remain.
                if value > self.len.saturating_sub(self.pos) {
                    return Err(DecodeError::Truncated { at: at(self.pos) }.into());
                }
                self.counted(value, start, then)
            }
            Step::Tag { target } => self.tag(byte, pos, target),
            Step::Done => Err(DecodeError::TrailingBytes {
                count: at(self.len.saturating_sub(pos)),
            }
            .into()),
            // Names and value bytes are taken in bulk by `scan`.
            Step::Name { .. } | Step::Bytes { .. } => Ok(()),
        }
    }

    fn varint(&mut self, then: Then) {
        self.step = Step::Varint {
            value: 0,
            shift: 0,
            at: self.pos,
            then,
        };
    }

    /// A varint `value` that started at `start` was read for `then`.
    fn counted(&mut self, value: u64, start: u64, then: Then) -> Result<(), ScanError> {
        match then {
            Then::Attributes => {
                self.attributes_left = value;
                self.next_attribute();
            }
            Then::Name { in_map } => {
                self.name.clear();
                self.step = Step::Name {
                    left: value,
                    at: start,
                    in_map,
                };
                if value == 0 {
                    self.name_done(start, in_map)?;
                }
            }
            Then::Length(what) => {
                self.text = Utf8::default();
                if what == Bytes::Target {
                    let string = self.is_string();
                    self.found = Some((value, string));
                }
                self.step = Step::Bytes {
                    left: value,
                    at: start,
                    what,
                };
                if value == 0 {
                    let text = what == Bytes::Text || (what == Bytes::Target && self.is_string());
                    self.bytes_done(start, text)?;
                }
            }
            Then::Count(kind) => {
                self.open.push(Open {
                    kind,
                    left: value,
                    names: Item::new(),
                });
                self.advance();
            }
        }
        Ok(())
    }

    /// A name (its length varint at `at`) was read.
    fn name_done(&mut self, at_: u64, in_map: bool) -> Result<(), ScanError> {
        self.held += self.name.len() as u64;
        if self.held > self.limit {
            return Err(ScanError::NamesTooLarge { held: self.held });
        }
        let name =
            String::from_utf8(core::mem::take(&mut self.name)).map_err(|_| invalid_utf8(at_))?;
        let names = match self.open.last_mut() {
            Some(open) if in_map => &mut open.names,
            _ => &mut self.names,
        };
        let target = !in_map && name == self.target;
        insert_unique(names, name, AttributeValue::Null)?;
        self.step = Step::Tag { target };
        Ok(())
    }

    /// A value's tag (at `pos`) was read.
    fn tag(&mut self, byte: u8, pos: u64, target: bool) -> Result<(), ScanError> {
        // Only lists and maps are open around a tag: set members have none.
        if self.open.len() >= MAX_NESTING_DEPTH {
            return Err(DecodeError::TooDeep {
                limit: MAX_NESTING_DEPTH,
            }
            .into());
        }
        let value = match byte {
            tag::S => Then::Length(Bytes::Text),
            tag::N => Then::Length(Bytes::Text),
            tag::B => Then::Length(Bytes::Binary),
            tag::B_REST if self.to_end && self.open.is_empty() => {
                // Its length is what remains of the stream.
                let what = if target {
                    self.found = Some((0, false));
                    Bytes::Target
                } else {
                    Bytes::Binary
                };
                return self.counted(self.len.saturating_sub(self.pos), pos, Then::Length(what));
            }
            tag::FALSE | tag::TRUE | tag::NULL => {
                if target {
                    return Err(ScanError::NotBlob {
                        found: if byte == tag::NULL { "NULL" } else { "BOOL" },
                    });
                }
                self.advance();
                return Ok(());
            }
            tag::L => Then::Count(Kind::List),
            tag::M => Then::Count(Kind::Map),
            tag::SS | tag::NS => Then::Count(Kind::TextSet),
            tag::BS => Then::Count(Kind::BinarySet),
            tag => return Err(DecodeError::UnknownTag { tag, at: at(pos) }.into()),
        };
        if target {
            if byte != tag::S && byte != tag::B {
                const NAMES: [&str; 12] = [
                    "", "S", "N", "B", "BOOL", "BOOL", "NULL", "L", "M", "SS", "NS", "BS",
                ];
                return Err(ScanError::NotBlob {
                    found: NAMES[usize::from(byte)],
                });
            }
            self.found = Some((0, byte == tag::S));
            self.varint(Then::Length(Bytes::Target));
        } else {
            self.varint(value);
        }
        Ok(())
    }

    /// A length-prefixed value (its length at `at`) was read whole.
    fn bytes_done(&mut self, at_: u64, text: bool) -> Result<(), ScanError> {
        if text && !self.text.is_complete() {
            return Err(invalid_utf8(at_));
        }
        self.advance();
        Ok(())
    }

    /// Moves past a value that ended: to the next element of the innermost
    /// open container, or past containers that ended with it, or to the next
    /// attribute.
    fn advance(&mut self) {
        while let Some(open) = self.open.last_mut() {
            if open.left == 0 {
                self.open.pop();
                continue;
            }
            open.left -= 1;
            let then = match open.kind {
                Kind::List => {
                    self.step = Step::Tag { target: false };
                    return;
                }
                Kind::Map => Then::Name { in_map: true },
                Kind::TextSet => Then::Length(Bytes::Text),
                Kind::BinarySet => Then::Length(Bytes::Binary),
            };
            self.varint(then);
            return;
        }
        self.next_attribute();
    }

    fn next_attribute(&mut self) {
        if self.attributes_left == 0 {
            self.step = Step::Done;
        } else {
            self.attributes_left -= 1;
            self.varint(Then::Name { in_map: false });
        }
    }
}

fn at(pos: u64) -> usize {
    usize::try_from(pos).unwrap_or(usize::MAX)
}

fn invalid_utf8(pos: u64) -> ScanError {
    DecodeError::InvalidUtf8 { at: at(pos) }.into()
}

/// UTF-8 checked across pieces: the bytes of a character cut between two
/// pieces are carried to the next.
#[derive(Default)]
struct Utf8 {
    carry: [u8; 4],
    carried: usize,
}

impl Utf8 {
    /// Checks the next bytes; false at the first invalid sequence.
    fn check(&mut self, mut bytes: &[u8]) -> bool {
        if self.carried > 0 {
            // Complete the carried character with at most three more bytes.
            let take = (4 - self.carried).min(bytes.len());
            let mut joined = self.carry;
            joined[self.carried..self.carried + take].copy_from_slice(&bytes[..take]);
            let joined = &joined[..self.carried + take];
            let used = match core::str::from_utf8(joined) {
                Ok(_) => take,
                Err(e) if e.valid_up_to() > 0 => e.valid_up_to() - self.carried,
                Err(e) if e.error_len().is_none() => {
                    // Still cut short: every byte given is carried.
                    self.carry[..joined.len()].copy_from_slice(joined);
                    self.carried = joined.len();
                    return true;
                }
                Err(_) => return false,
            };
            self.carried = 0;
            bytes = &bytes[used..];
        }
        match core::str::from_utf8(bytes) {
            Ok(_) => true,
            Err(e) if e.error_len().is_none() => {
                let rest = &bytes[e.valid_up_to()..];
                self.carry[..rest.len()].copy_from_slice(rest);
                self.carried = rest.len();
                true
            }
            Err(_) => false,
        }
    }

    /// True when no character is cut short at the end.
    fn is_complete(&self) -> bool {
        self.carried == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{decode_attributes, encode_attributes};
    use crate::value::AttributeValue;
    use alloc::vec;

    /// Scans `stream` for `target` cut into pieces of `size` bytes; returns
    /// the attribute's bytes.
    fn scan(stream: &[u8], target: &str, size: usize) -> Result<Vec<u8>, ScanError> {
        let mut scanner = Scanner::new(target, stream.len() as u64, 1 << 20);
        let mut out = Vec::new();
        for piece in stream.chunks(size.max(1)) {
            let range = scanner.scan(piece)?;
            out.extend_from_slice(&piece[range]);
        }
        scanner.finish()?;
        Ok(out)
    }

    #[test]
    fn utf8_is_checked_across_any_cut() {
        let text = "aé€😀z".as_bytes();
        for cut in 0..=text.len() {
            for second in cut..=text.len() {
                let mut utf8 = Utf8::default();
                assert!(utf8.check(&text[..cut]));
                assert!(utf8.check(&text[cut..second]));
                assert!(utf8.check(&text[second..]));
                assert!(utf8.is_complete(), "cut at {cut} and {second}");
            }
        }
        let mut utf8 = Utf8::default();
        assert!(utf8.check(&[0xe2, 0x82]));
        assert!(!utf8.is_complete(), "a character cut short at the end");
        assert!(!utf8.check(&[0x41]), "a character cut by another");
        assert!(!Utf8::default().check(&[0xff]));
    }

    #[test]
    fn the_target_comes_out_of_any_piece_size_and_everything_else_is_checked() {
        let nested = AttributeValue::M(
            [
                (
                    "l".into(),
                    AttributeValue::L(vec![AttributeValue::Null, AttributeValue::N("1.5".into())]),
                ),
                ("s".into(), AttributeValue::Ss(vec!["x".into(), "é".into()])),
                ("e".into(), AttributeValue::M(Default::default())),
            ]
            .into(),
        );
        let body = AttributeValue::S("héllo wörld".repeat(20));
        let blob = AttributeValue::B(vec![0, 1, 2, 255]);
        let stream = encode_attributes(
            [
                ("a", &nested),
                ("b", &blob),
                ("m", &body),
                ("z", &AttributeValue::Bs(vec![vec![1]])),
            ]
            .into_iter(),
        )
        .to_vec();
        assert!(decode_attributes(&stream).is_ok());
        for size in [1, 2, 3, 7, 64, stream.len()] {
            assert_eq!(
                scan(&stream, "m", size).unwrap(),
                "héllo wörld".repeat(20).as_bytes()
            );
            assert_eq!(scan(&stream, "b", size).unwrap(), [0, 1, 2, 255]);
            assert_eq!(
                scan(&stream, "a", size).unwrap_err(),
                ScanError::NotBlob { found: "M" }
            );
        }
        // Absent: the whole stream is read and nothing comes out.
        assert_eq!(scan(&stream, "q", 5).unwrap(), b"");
    }

    /// Every prefix and every one-byte change of a stream scans to the error
    /// the whole decoder gives, or to success exactly when it succeeds.
    #[test]
    fn errors_are_the_decoders() {
        let value = AttributeValue::L(vec![
            AttributeValue::M([("k".into(), AttributeValue::S("vé".into()))].into()),
            AttributeValue::Ns(vec!["1".into(), "2".into()]),
            AttributeValue::Bool(true),
        ]);
        let data = AttributeValue::B(vec![7; 3]);
        let stream = encode_attributes([("a", &value), ("d", &data)].into_iter()).to_vec();
        let mut cases = Vec::new();
        for len in 0..stream.len() {
            cases.push(stream[..len].to_vec());
        }
        for i in 0..stream.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bytes = stream.clone();
                bytes[i] ^= flip;
                cases.push(bytes);
            }
        }
        let mut longer = stream.clone();
        longer.extend_from_slice(&[0, 0]);
        cases.push(longer);
        for case in cases {
            let whole = decode_attributes(&case);
            for size in [1, 4, case.len().max(1)] {
                match (&whole, scan(&case, "none", size)) {
                    (Ok(_), Ok(_)) => {}
                    (Err(expected), Err(ScanError::Decode(got))) => {
                        // A repeated name is found before its value is read.
                        if !matches!(got, DecodeError::DuplicateName { .. }) {
                            assert_eq!(&got, expected, "{case:02x?} in pieces of {size}");
                        }
                    }
                    (whole, scanned) => panic!("{case:02x?}: {whole:?} but {scanned:?}"),
                }
            }
        }
    }
}
