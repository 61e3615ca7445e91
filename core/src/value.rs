//! The DynamoDB item model: one [`AttributeValue`] enum for all ten types.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

/// A DynamoDB item: attribute names mapped to values.
///
/// A `BTreeMap` keeps attribute order deterministic, so the same item always
/// encodes to the same bytes.
pub type Item = BTreeMap<String, AttributeValue>;

/// One DynamoDB attribute value, of any of the ten DynamoDB types.
///
/// Numbers are kept as the decimal text the caller gave (`"1.50"`, `"1E125"`),
/// never as floats: DynamoDB numbers carry 38 significant digits, more than
/// any float, and the text is preserved exactly through split and reassembly.
/// Sets are vectors so their member order survives a round trip; validation
/// rejects empty sets and duplicate members. The ordering is structural (by
/// type, then content), useful for sorting keys, not DynamoDB's own order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AttributeValue {
    /// String (`S`).
    S(String),
    /// Number (`N`), as decimal text.
    N(String),
    /// Binary (`B`), raw bytes (not base64).
    B(Vec<u8>),
    /// Boolean (`BOOL`).
    Bool(bool),
    /// Null (`NULL`).
    Null,
    /// List (`L`).
    L(Vec<AttributeValue>),
    /// Map (`M`).
    M(BTreeMap<String, AttributeValue>),
    /// String set (`SS`).
    Ss(Vec<String>),
    /// Number set (`NS`), as decimal texts.
    Ns(Vec<String>),
    /// Binary set (`BS`).
    Bs(Vec<Vec<u8>>),
}

impl AttributeValue {
    /// The DynamoDB type descriptor: `"S"`, `"N"`, `"B"`, `"BOOL"`, `"NULL"`,
    /// `"L"`, `"M"`, `"SS"`, `"NS"` or `"BS"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::S(_) => "S",
            Self::N(_) => "N",
            Self::B(_) => "B",
            Self::Bool(_) => "BOOL",
            Self::Null => "NULL",
            Self::L(_) => "L",
            Self::M(_) => "M",
            Self::Ss(_) => "SS",
            Self::Ns(_) => "NS",
            Self::Bs(_) => "BS",
        }
    }
}

/// True when `a` and `b` hold the same attributes and values, the members
/// of each set compared as sets: a store may return a set's members in
/// another order than they were written.
pub fn same_item(a: &Item, b: &Item) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((na, va), (nb, vb))| na == nb && same_value(va, vb))
}

fn same_value(a: &AttributeValue, b: &AttributeValue) -> bool {
    use AttributeValue as V;
    // Members of a stored set are distinct (DynamoDB refuses duplicates):
    // the same length and every member of one in the other is equality.
    fn same_set<T: PartialEq>(a: &[T], b: &[T]) -> bool {
        a.len() == b.len() && a.iter().all(|m| b.contains(m))
    }
    match (a, b) {
        (V::L(a), V::L(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(a, b)),
        (V::M(a), V::M(b)) => same_item(a, b),
        (V::Ss(a), V::Ss(b)) | (V::Ns(a), V::Ns(b)) => same_set(a, b),
        (V::Bs(a), V::Bs(b)) => same_set(a, b),
        _ => a == b,
    }
}
