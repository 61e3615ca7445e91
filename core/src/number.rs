//! DynamoDB number text: parsing, the exact stored size, and a canonical form.
//!
//! DynamoDB numbers are decimal, with at most 38 significant digits and a
//! magnitude of `1E-130` to `9.9999999999999999999999999999999999999E+125`.
//! They are stored as base-100 digit pairs aligned on the decimal point, so
//! the size of a number is one byte per pair that holds a significant digit,
//! plus one byte, plus one more when negative (see `docs/FORMAT.md`, "Number
//! size", for the measured cases where servers disagree).

use crate::code::Code;
use alloc::string::String;
use core::fmt;

/// Most significant digits a DynamoDB number may have.
pub const MAX_SIGNIFICANT_DIGITS: usize = 38;
/// Largest power of ten of the most significant digit (`9.99…E+125`).
pub const MAX_EXPONENT: i64 = 125;
/// Smallest power of ten of the most significant digit (`1E-130`).
pub const MIN_EXPONENT: i64 = -130;

/// Why a number text was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NumberError {
    /// The text is not a decimal number (`"abc"`, `""`, `"1e"`, `"NaN"`).
    Invalid,
    /// More significant digits than DynamoDB keeps.
    TooPrecise {
        /// Significant digits in the text.
        digits: usize,
    },
    /// The magnitude is outside `1E-130 ..= 9.99…E+125`.
    OutOfRange,
}

impl NumberError {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::Invalid => Code::NumberInvalid,
            Self::TooPrecise { .. } => Code::NumberTooPrecise,
            Self::OutOfRange => Code::NumberOutOfRange,
        }
    }
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid => f.write_str("not a decimal number"),
            Self::TooPrecise { digits } => write!(
                f,
                "number has {digits} significant digits, limit {MAX_SIGNIFICANT_DIGITS}"
            ),
            Self::OutOfRange => {
                f.write_str("number magnitude is outside 1E-130 to 9.9999999999999999999999999999999999999E+125")
            }
        }
    }
}

/// A parsed decimal number: sign, significant digits and the power of ten of
/// the first significant digit. Borrows the digits from the text it was
/// parsed from (they may be split around a decimal point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal<'a> {
    negative: bool,
    /// Integer-part and fraction-part digit runs, leading zeros of the whole
    /// number and trailing zeros removed by [`Decimal::parse`].
    digits: (&'a str, &'a str),
    /// Power of ten of the first significant digit (meaningless for zero).
    exponent: i64,
}

impl<'a> Decimal<'a> {
    /// Parses DynamoDB number text: an optional sign, digits with at most one
    /// decimal point (`5`, `5.`, `.5`), and an optional exponent (`e` or `E`,
    /// optional sign, digits). Whitespace, `NaN`, `Infinity` and hex are refused.
    pub fn parse(text: &'a str) -> Result<Self, NumberError> {
        let bytes = text.as_bytes();
        let (negative, rest) = match bytes.first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exp_text) = match find_byte(rest, |b| b == b'e' || b == b'E') {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        let (int_part, frac_part) = match find_byte(mantissa, |b| b == b'.') {
            Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
            None => (mantissa, ""),
        };
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return Err(NumberError::Invalid);
        }
        let exp_shift = match exp_text {
            None => 0,
            Some(e) => parse_exponent(e)?,
        };

        // Strip leading zeros of the whole digit sequence and trailing zeros.
        let int_trimmed = trim_leading_zeros(int_part);
        let (int_digits, frac_digits, first_power) = if int_trimmed.is_empty() {
            let frac_trimmed = trim_leading_zeros(frac_part);
            let leading = (frac_part.len() - frac_trimmed.len()) as i64;
            ("", trim_trailing_zeros(frac_trimmed), -1 - leading)
        } else {
            let power = int_trimmed.len() as i64 - 1;
            let frac_trimmed = trim_trailing_zeros(frac_part);
            if frac_trimmed.is_empty() {
                (trim_trailing_zeros(int_trimmed), "", power)
            } else {
                (int_trimmed, frac_trimmed, power)
            }
        };
        let exponent = first_power.saturating_add(exp_shift);
        let decimal = Self {
            negative,
            digits: (int_digits, frac_digits),
            exponent,
        };
        Ok(decimal)
    }

    /// Parses and checks DynamoDB's precision and range limits.
    pub fn parse_valid(text: &'a str) -> Result<Self, NumberError> {
        let decimal = Self::parse(text)?;
        decimal.check_limits()?;
        Ok(decimal)
    }

    /// Checks precision (38 significant digits) and range.
    pub fn check_limits(&self) -> Result<(), NumberError> {
        if self.is_zero() {
            return Ok(());
        }
        let digits = self.significant_digits();
        if digits > MAX_SIGNIFICANT_DIGITS {
            return Err(NumberError::TooPrecise { digits });
        }
        // Range is judged by the leading digit, as DynamoDB's BigDecimal-based
        // check does (dynalite: `e < -130 || e > 125`): `1.5E-130` is in range.
        if self.exponent > MAX_EXPONENT || self.exponent < MIN_EXPONENT {
            return Err(NumberError::OutOfRange);
        }
        Ok(())
    }

    /// True for any spelling of zero (`0`, `-0.00`, `0E5`).
    pub fn is_zero(&self) -> bool {
        self.significant_digits() == 0
    }

    /// Number of significant digits (leading and trailing zeros excluded).
    pub fn significant_digits(&self) -> usize {
        let (int, frac) = self.digits;
        if frac.is_empty() {
            int.len()
        } else {
            int.len() + frac.len()
        }
    }

    /// Power of ten of the last significant digit.
    fn last_power(&self) -> i64 {
        self.exponent
            .saturating_sub(self.significant_digits() as i64 - 1)
    }

    /// Bytes DynamoDB stores for this number: base-100 pairs aligned on the
    /// decimal point, from the first pair holding a significant digit to the
    /// last, plus one byte, plus one if negative. Zero is one byte.
    pub fn stored_size(&self) -> usize {
        if self.is_zero() {
            return 1;
        }
        let pairs = self.exponent.div_euclid(2) - self.last_power().div_euclid(2) + 1;
        pairs as usize + 1 + usize::from(self.negative)
    }

    /// A canonical spelling, equal for equal numbers (`1.50`, `15E-1` and
    /// `+1.5` all give `1.5`), used wherever a number becomes part of a key.
    /// Plain decimal, no exponent, no redundant zeros; zero is `0`. Numbers
    /// outside DynamoDB's range are written `<digits>E<exponent>` instead.
    pub fn canonical(&self) -> String {
        let mut out = String::new();
        if self.is_zero() {
            out.push('0');
            return out;
        }
        if self.negative {
            out.push('-');
        }
        let count = self.significant_digits() as i64;
        let (int, frac) = self.digits;
        // Plain decimal writes a character per power of ten: beyond DynamoDB's
        // range (a number that is invalid anyway) use `<digits>E<exponent>`,
        // so hostile text like `1E4000000000` stays short.
        if !(MIN_EXPONENT..=MAX_EXPONENT).contains(&self.exponent) {
            out.push_str(int);
            out.push_str(frac);
            let _ = core::fmt::Write::write_fmt(&mut out, format_args!("E{}", self.last_power()));
            return out;
        }
        let digit_at = |i: usize| -> char {
            let b = if i < int.len() {
                int.as_bytes()[i]
            } else {
                frac.as_bytes()[i - int.len()]
            };
            b as char
        };
        if self.exponent < 0 {
            out.push_str("0.");
            for _ in 0..(-self.exponent - 1) {
                out.push('0');
            }
            (0..count as usize).for_each(|i| out.push(digit_at(i)));
            return out;
        }
        for position in 0..=self.exponent.max(count - 1) {
            if position == self.exponent + 1 {
                out.push('.');
            }
            if position < count {
                out.push(digit_at(position as usize));
            } else {
                out.push('0');
            }
        }
        out
    }
}

/// Parses an exponent's text; absurd exponents saturate (they fail the range
/// check later), so hostile input cannot overflow.
fn parse_exponent(text: &str) -> Result<i64, NumberError> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !all_digits(digits) {
        return Err(NumberError::Invalid);
    }
    let magnitude = digits.bytes().fold(0i64, |acc, b| {
        acc.saturating_mul(10).saturating_add(i64::from(b - b'0'))
    });
    Ok(if negative { -magnitude } else { magnitude })
}

// Byte loops rather than `str` patterns and iterator adaptors: every number
// of every item is parsed here, and at opt-level "z" (the WebAssembly build)
// those stay calls per character.

/// Where the first byte `hit` accepts is, if any (an ASCII byte found in
/// UTF-8 text is always a character boundary).
fn find_byte(text: &str, hit: impl Fn(u8) -> bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if hit(bytes[i]) {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn all_digits(text: &str) -> bool {
    find_byte(text, |b| !b.is_ascii_digit()).is_none()
}

fn trim_leading_zeros(digits: &str) -> &str {
    let bytes = digits.as_bytes();
    let mut start = 0;
    while start < bytes.len() && bytes[start] == b'0' {
        start += 1;
    }
    &digits[start..]
}

fn trim_trailing_zeros(digits: &str) -> &str {
    let bytes = digits.as_bytes();
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1] == b'0' {
        end -= 1;
    }
    &digits[..end]
}

/// The stored size of number text, by [`Decimal::stored_size`].
pub fn number_size(text: &str) -> Result<usize, NumberError> {
    Ok(Decimal::parse(text)?.stored_size())
}
