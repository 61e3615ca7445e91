//! Exact DynamoDB item sizes.
//!
//! The rules, from the DynamoDB developer guide ("Item sizes and formats"):
//! an item's size is the sum of its attribute names' UTF-8 lengths and their
//! values' sizes. Strings count their UTF-8 bytes, binary its raw bytes,
//! booleans and nulls one byte, numbers their base-100 digit pairs (see
//! [`crate::number`]), sets the sum of their members, and lists and maps
//! three bytes plus one byte per element (plus, for maps, each key's bytes).

use crate::number;
use crate::value::{AttributeValue, Item};

/// The largest item DynamoDB accepts, attribute names included (400 KB).
pub const MAX_ITEM_BYTES: usize = 409_600;

/// Overhead of a list or map value, before its elements.
pub(crate) const CONTAINER_BYTES: usize = 3;
/// Overhead of each list or map element.
pub(crate) const ELEMENT_BYTES: usize = 1;

/// The exact size DynamoDB bills and limits for `item`.
///
/// Number text that does not parse counts as its text length; validation
/// (see [`crate::validate_item`]) reports it.
///
/// ```
/// use dynaslice_core::{item_size, AttributeValue, Item};
/// let mut item = Item::new();
/// item.insert("pk".into(), AttributeValue::S("a".into()));
/// item.insert("b".into(), AttributeValue::B(vec![0; 409_596]));
/// assert_eq!(item_size(&item), 409_600);
/// ```
pub fn item_size(item: &Item) -> usize {
    item.iter()
        .map(|(name, value)| attribute_size(name, value))
        .sum()
}

/// The size of one top-level attribute: its name's bytes plus its value's.
pub fn attribute_size(name: &str, value: &AttributeValue) -> usize {
    name.len() + value_size(value)
}

/// The size of a value alone, without an attribute name.
pub fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => number_text_size(n),
        AttributeValue::B(b) => b.len(),
        AttributeValue::Bool(_) | AttributeValue::Null => 1,
        AttributeValue::L(list) => {
            CONTAINER_BYTES
                + list
                    .iter()
                    .map(|v| ELEMENT_BYTES + value_size(v))
                    .sum::<usize>()
        }
        AttributeValue::M(map) => {
            CONTAINER_BYTES
                + map
                    .iter()
                    .map(|(k, v)| ELEMENT_BYTES + k.len() + value_size(v))
                    .sum::<usize>()
        }
        AttributeValue::Ss(set) => set.iter().map(|s| s.len()).sum(),
        AttributeValue::Ns(set) => set.iter().map(|n| number_text_size(n)).sum(),
        AttributeValue::Bs(set) => set.iter().map(|b| b.len()).sum(),
    }
}

pub(crate) fn number_text_size(text: &str) -> usize {
    number::number_size(text).unwrap_or(text.len())
}
