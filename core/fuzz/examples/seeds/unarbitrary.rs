//! The inverse of `arbitrary`: the bytes that `Arbitrary::arbitrary_take_rest`
//! (what `fuzz_target!` calls) reads back as a given value. It follows how
//! `arbitrary` 1.5 (pinned by `Cargo.lock`) reads each type:
//!
//! - integers: `size_of` bytes from the front, little-endian;
//! - `bool`: one byte, its low bit;
//! - `Option`: a `bool`, then the value when it is true;
//! - `Vec` (also as a struct's last field, read "to the rest"): a true byte
//!   before each element, a false byte after the last;
//! - enums: a `u32`, and variant `(u32 * variant count) >> 32`;
//! - structs and tuples: their fields in order;
//! - `String`: its byte length comes from the *end* of the input, as
//!   `int_in_range(0..=rest - k)` over the last `k` bytes (`k` = 1 while at
//!   most 256 bytes remain, 2 up to 65,538, then 4), read big-endian; then
//!   the text from the front.
//!
//! The string lengths are why the encoding is done in two steps: the
//! [`Writer`] records each length with the position where it is read, and
//! [`Writer::finish`] lays them out behind the front bytes once every size
//! is known. A change in `arbitrary`'s format shows as a failed round trip in
//! `main.rs`, which decodes every seed with the targets' own types.

pub struct Writer {
    front: Vec<u8>,
    /// Each string's length, with the front offset where it is read.
    lengths: Vec<(usize, usize)>,
}

impl Writer {
    pub fn new() -> Self {
        Self {
            front: Vec::new(),
            lengths: Vec::new(),
        }
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        self.front.extend_from_slice(bytes);
    }

    /// Variant `index` of an enum of `count` variants: the smallest `u32`
    /// whose `(u32 * count) >> 32` is `index`.
    pub fn variant(&mut self, index: u64, count: u64) {
        assert!(index < count);
        let value = (index << 32).div_ceil(count);
        self.bytes(&u32::try_from(value).unwrap().to_le_bytes());
    }

    pub fn string(&mut self, text: &str) {
        self.lengths.push((self.front.len(), text.len()));
        self.bytes(text.as_bytes());
    }

    /// The input: the front bytes, then each length's bytes, the first read
    /// last (`arbitrary` takes each from the end of what remains).
    pub fn finish(self) -> Vec<u8> {
        let front_len = self.front.len();
        // Bytes a length takes depend on what remains when it is read, which
        // includes the later lengths' bytes: grow the sizes until they agree.
        let width = |remaining: usize| match remaining {
            0..=256 => 1,
            257..=65_538 => 2,
            _ => 4,
        };
        let mut sizes = vec![1; self.lengths.len()];
        let remaining = |sizes: &[usize]| -> Vec<usize> {
            let mut behind = 0;
            let mut out = vec![0; sizes.len()];
            for i in (0..sizes.len()).rev() {
                behind += sizes[i];
                out[i] = front_len - self.lengths[i].0 + behind;
            }
            out
        };
        loop {
            let next: Vec<usize> = remaining(&sizes).into_iter().map(width).collect();
            if next == sizes {
                break;
            }
            sizes = next;
        }
        let mut out = self.front;
        let pieces: Vec<Vec<u8>> = remaining(&sizes)
            .into_iter()
            .zip(&sizes)
            .zip(&self.lengths)
            .map(|((remaining, &size), &(_, len))| {
                // arbitrary: int_in_range(0..=max) over `size` bytes, reading
                // only as many as `max` needs, big-endian, then `% (max + 1)`.
                let max = remaining - size;
                assert!(len <= max, "a string longer than the input after it");
                let needed = (usize::BITS - max.leading_zeros()).div_ceil(8) as usize;
                let mut piece = vec![0; size];
                let be = len.to_be_bytes();
                piece[..needed].copy_from_slice(&be[be.len() - needed..]);
                piece
            })
            .collect();
        for piece in pieces.iter().rev() {
            out.extend_from_slice(piece);
        }
        out
    }
}

/// A value `arbitrary` can read back from [`Writer`]'s bytes.
pub trait Unarbitrary {
    fn write(&self, w: &mut Writer);
}

/// The bytes `T::arbitrary_take_rest` reads as `value`.
pub fn to_bytes<T: Unarbitrary>(value: &T) -> Vec<u8> {
    let mut w = Writer::new();
    value.write(&mut w);
    w.finish()
}

macro_rules! integers {
    ($($t:ty)*) => {$(
        impl Unarbitrary for $t {
            fn write(&self, w: &mut Writer) {
                w.bytes(&self.to_le_bytes());
            }
        }
    )*};
}
integers!(u8 u16 u32 u64 u128 i32 i64);

impl Unarbitrary for bool {
    fn write(&self, w: &mut Writer) {
        w.bytes(&[u8::from(*self)]);
    }
}

impl Unarbitrary for String {
    fn write(&self, w: &mut Writer) {
        w.string(self);
    }
}

impl<T: Unarbitrary> Unarbitrary for Option<T> {
    fn write(&self, w: &mut Writer) {
        self.is_some().write(w);
        if let Some(value) = self {
            value.write(w);
        }
    }
}

impl<T: Unarbitrary> Unarbitrary for Vec<T> {
    fn write(&self, w: &mut Writer) {
        for element in self {
            true.write(w);
            element.write(w);
        }
        false.write(w);
    }
}

impl<A: Unarbitrary, B: Unarbitrary> Unarbitrary for (A, B) {
    fn write(&self, w: &mut Writer) {
        self.0.write(w);
        self.1.write(w);
    }
}
