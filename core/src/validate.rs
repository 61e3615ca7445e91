//! Validation: every DynamoDB rule an item can break, each reported with the
//! path of the offending value, before anything is sent.

use crate::code::Code;
use alloc::collections::BTreeSet;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::key::{IndexKey, KeySchema, KeyType, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
use crate::number::{Decimal, NumberError};
use crate::size::{MAX_ITEM_BYTES, item_size};
use crate::value::{AttributeValue, Item};

/// Deepest nesting DynamoDB accepts: a top-level attribute's value is at
/// depth 1, a value inside a list or map at depth `d` is at depth `d + 1`,
/// and no value may be deeper than 32 (so 31 containers may wrap a scalar).
/// A list or map at depth 32 is refused even when empty: it opens level 33
/// (measured on Amazon's DynamoDB Local: "Nesting Levels have exceeded
/// supported limits" for 31 maps around an empty map, accepted around a
/// string or a set).
pub const MAX_NESTING_DEPTH: usize = 32;
/// Longest attribute name DynamoDB accepts, in bytes.
pub const MAX_NAME_BYTES: usize = 65_535;

/// What to check an item against.
#[derive(Clone, Debug)]
pub struct ValidateOptions<'a> {
    /// The table's key schema; when given, key presence, type and size are checked.
    pub key: Option<&'a KeySchema>,
    /// The largest item accepted (default and maximum: 409,600 bytes).
    pub max_item_bytes: usize,
    /// The table's index keys: those an item has are checked for type,
    /// emptiness and size, as DynamoDB checks them (an item may lack them:
    /// it is then not in the index).
    pub index_keys: &'a [IndexKey],
}

impl Default for ValidateOptions<'_> {
    fn default() -> Self {
        Self {
            key: None,
            max_item_bytes: MAX_ITEM_BYTES,
            index_keys: &[],
        }
    }
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViolationKind {
    /// The item is larger than the limit.
    ItemTooLarge {
        /// Exact size of the item, in bytes.
        size: usize,
        /// The item size limit, in bytes (409,600 unless the caller lowered it).
        limit: usize,
    },
    /// A number is not valid DynamoDB number text.
    Number(NumberError),
    /// A set has no members.
    SetEmpty,
    /// A set holds the same member twice.
    SetDuplicate {
        /// Index of the repeated member.
        index: usize,
    },
    /// Lists and maps nest deeper than DynamoDB allows.
    NestingTooDeep {
        /// Lists and maps around the value.
        depth: usize,
        /// The most DynamoDB allows (32).
        limit: usize,
    },
    /// An attribute name is empty.
    NameEmpty,
    /// An attribute name is longer than DynamoDB allows.
    NameTooLong {
        /// The name's length in UTF-8 bytes.
        size: usize,
        /// The longest DynamoDB allows, in bytes.
        limit: usize,
    },
    /// A key attribute is absent.
    KeyMissing,
    /// A key attribute has the wrong type.
    KeyWrongType {
        /// The schema's type.
        expected: &'static str,
        /// The item's type.
        got: &'static str,
    },
    /// A key value is empty.
    KeyEmpty,
    /// A key value is longer than DynamoDB allows.
    KeyTooLarge {
        /// The key value's length in bytes (UTF-8 or raw).
        size: usize,
        /// DynamoDB's limit for this key, in bytes (2,048 partition, 1,024 sort).
        limit: usize,
    },
}

impl ViolationKind {
    /// The stable error code.
    pub fn code(&self) -> Code {
        match self {
            Self::ItemTooLarge { .. } => Code::ItemTooLarge,
            Self::Number(e) => e.code(),
            Self::SetEmpty => Code::SetEmpty,
            Self::SetDuplicate { .. } => Code::SetDuplicate,
            Self::NestingTooDeep { .. } => Code::NestingTooDeep,
            Self::NameEmpty => Code::NameEmpty,
            Self::NameTooLong { .. } => Code::NameTooLong,
            Self::KeyMissing => Code::KeyMissing,
            Self::KeyWrongType { .. } => Code::KeyWrongType,
            Self::KeyEmpty => Code::KeyEmpty,
            Self::KeyTooLarge { .. } => Code::KeyTooLarge,
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ItemTooLarge { size, limit } => {
                write!(f, "item is {size} bytes, limit {limit}")
            }
            Self::Number(e) => e.fmt(f),
            Self::SetEmpty => f.write_str("set is empty"),
            Self::SetDuplicate { index } => write!(f, "set member {index} is a duplicate"),
            Self::NestingTooDeep { depth, limit } => {
                write!(f, "nesting depth {depth}, limit {limit}")
            }
            Self::NameEmpty => f.write_str("attribute name is empty"),
            Self::NameTooLong { size, limit } => {
                write!(f, "attribute name is {size} bytes, limit {limit}")
            }
            Self::KeyMissing => f.write_str("key attribute is missing"),
            Self::KeyWrongType { expected, got } => {
                write!(f, "key attribute has type {got}, expected {expected}")
            }
            Self::KeyEmpty => f.write_str("key value is empty"),
            Self::KeyTooLarge { size, limit } => {
                write!(f, "key value is {size} bytes, limit {limit}")
            }
        }
    }
}

/// A broken rule and where: `orders[3].total` (names joined by `.`, list
/// indices in brackets); empty for the item as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Where in the item.
    pub path: String,
    /// What is wrong.
    pub kind: ViolationKind,
}

impl Violation {
    /// The stable error code.
    pub fn code(&self) -> Code {
        self.kind.code()
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            self.kind.fmt(f)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

/// Every rule `item` breaks, in path order; empty when DynamoDB accepts it.
///
/// ```
/// use dynaslice_core::{validate_item, AttributeValue, Item, ValidateOptions};
/// let mut item = Item::new();
/// item.insert("n".into(), AttributeValue::N("1234567890123456789012345678901234567890".into()));
/// let found = validate_item(&item, &ValidateOptions::default());
/// assert_eq!(found[0].code(), "NUMBER_TOO_PRECISE");
/// assert_eq!(found[0].path, "n");
/// ```
pub fn validate_item(item: &Item, options: &ValidateOptions<'_>) -> Vec<Violation> {
    let mut found = Vec::new();
    // No limit (a virtual item's rules): skip the walk that sizes the item.
    let size = match options.max_item_bytes {
        usize::MAX => 0,
        _ => item_size(item),
    };
    if size > options.max_item_bytes {
        found.push(Violation {
            path: String::new(),
            kind: ViolationKind::ItemTooLarge {
                size,
                limit: options.max_item_bytes,
            },
        });
    }
    if let Some(schema) = options.key {
        check_key(item, schema, &mut found);
    }
    for index_key in options.index_keys {
        if let Some(value) = item.get(&index_key.name) {
            check_key_value(
                value,
                &index_key.name,
                index_key.key_type,
                index_key.limit(),
                &mut found,
            );
        }
    }
    let mut path = String::new();
    for (name, value) in item {
        check_name(name, &path, &mut found);
        path.clear();
        path.push_str(name);
        check_value(value, &mut path, 0, &mut found);
    }
    found
}

fn check_key(item: &Item, schema: &KeySchema, found: &mut Vec<Violation>) {
    let limits = [MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES];
    for (key, limit) in schema.attributes().zip(limits) {
        let violation = |kind| Violation {
            path: key.name.clone(),
            kind,
        };
        let Some(value) = item.get(&key.name) else {
            found.push(violation(ViolationKind::KeyMissing));
            continue;
        };
        check_key_value(value, &key.name, key.key_type, limit, found);
    }
}

/// Checks a key attribute's value (a primary or an index key): its type,
/// and for a string or binary that it is not empty nor over `limit`.
fn check_key_value(
    value: &AttributeValue,
    name: &str,
    key_type: KeyType,
    limit: usize,
    found: &mut Vec<Violation>,
) {
    let violation = |kind| Violation {
        path: name.to_string(),
        kind,
    };
    if !key_type.matches(value) {
        found.push(violation(ViolationKind::KeyWrongType {
            expected: key_type.as_str(),
            got: value.type_name(),
        }));
        return;
    }
    let size = match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.len(),
        _ => return,
    };
    if size == 0 {
        found.push(violation(ViolationKind::KeyEmpty));
    } else if size > limit {
        found.push(violation(ViolationKind::KeyTooLarge { size, limit }));
    }
}

fn check_name(name: &str, parent: &str, found: &mut Vec<Violation>) {
    let kind = if name.is_empty() {
        ViolationKind::NameEmpty
    } else if name.len() > MAX_NAME_BYTES {
        ViolationKind::NameTooLong {
            size: name.len(),
            limit: MAX_NAME_BYTES,
        }
    } else {
        return;
    };
    found.push(Violation {
        path: parent.to_string(),
        kind,
    });
}

/// Checks one value; `path` is its location and is restored on return.
/// `depth` is the number of lists and maps enclosing the value.
fn check_value(
    value: &AttributeValue,
    path: &mut String,
    depth: usize,
    found: &mut Vec<Violation>,
) {
    let here = |path: &String, kind| Violation {
        path: path.clone(),
        kind,
    };
    if depth >= MAX_NESTING_DEPTH {
        return found.push(here(path, too_deep(depth + 1)));
    }
    // An empty container at the last level: no value below it is reported,
    // so report the container itself.
    let empty_container = match value {
        AttributeValue::L(list) => list.is_empty(),
        AttributeValue::M(map) => map.is_empty(),
        _ => false,
    };
    if empty_container && depth + 1 >= MAX_NESTING_DEPTH {
        return found.push(here(path, too_deep(depth + 2)));
    }
    match value {
        AttributeValue::N(text) => {
            if let Err(e) = Decimal::parse_valid(text) {
                found.push(here(path, ViolationKind::Number(e)));
            }
        }
        AttributeValue::L(list) => {
            for (i, element) in list.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                check_value(element, path, depth + 1, found);
                path.truncate(len);
            }
        }
        AttributeValue::M(map) => {
            for (name, element) in map {
                check_name(name, path, found);
                let len = path.len();
                path.push('.');
                path.push_str(name);
                check_value(element, path, depth + 1, found);
                path.truncate(len);
            }
        }
        AttributeValue::Ss(set) => check_set(set.iter().map(|s| s.as_bytes()), path, found),
        AttributeValue::Bs(set) => check_set(set.iter().map(|b| b.as_slice()), path, found),
        AttributeValue::Ns(set) => {
            // Members compare by value: `1` and `1.0` are duplicates.
            let canonical: Result<Vec<_>, _> = set
                .iter()
                .map(|text| Decimal::parse_valid(text).map(|d| d.canonical()))
                .collect();
            match canonical {
                Ok(canonical) => check_set(canonical.iter().map(|s| s.as_bytes()), path, found),
                Err(e) => found.push(here(path, ViolationKind::Number(e))),
            }
        }
        AttributeValue::S(_)
        | AttributeValue::B(_)
        | AttributeValue::Bool(_)
        | AttributeValue::Null => {}
    }
}

fn too_deep(depth: usize) -> ViolationKind {
    ViolationKind::NestingTooDeep {
        depth,
        limit: MAX_NESTING_DEPTH,
    }
}

fn push_index(path: &mut String, index: usize) {
    use core::fmt::Write;
    let _ = write!(path, "[{index}]");
}

fn check_set<'a>(
    members: impl ExactSizeIterator<Item = &'a [u8]>,
    path: &str,
    found: &mut Vec<Violation>,
) {
    if members.len() == 0 {
        found.push(Violation {
            path: path.to_string(),
            kind: ViolationKind::SetEmpty,
        });
        return;
    }
    let mut seen = BTreeSet::new();
    for (index, member) in members.enumerate() {
        if !seen.insert(member) {
            found.push(Violation {
                path: path.to_string(),
                kind: ViolationKind::SetDuplicate { index },
            });
            return;
        }
    }
}
