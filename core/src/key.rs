//! Primary keys: a table's key schema and an item's key values.

use alloc::string::String;

use crate::value::{AttributeValue, Item};

/// Longest partition key value DynamoDB accepts, in bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Longest sort key value DynamoDB accepts, in bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// The scalar types a key attribute may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum KeyType {
    /// String.
    S,
    /// Number.
    N,
    /// Binary.
    B,
}

impl KeyType {
    /// The DynamoDB type descriptor (`"S"`, `"N"` or `"B"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::S => "S",
            Self::N => "N",
            Self::B => "B",
        }
    }

    /// True when `value` has this type.
    pub fn matches(self, value: &AttributeValue) -> bool {
        matches!(
            (self, value),
            (Self::S, AttributeValue::S(_))
                | (Self::N, AttributeValue::N(_))
                | (Self::B, AttributeValue::B(_))
        )
    }
}

/// A key attribute of one of a table's secondary indexes (global or local),
/// with the type the table's definition declares. Writes keep it on the
/// parent, so the item stays in the index; an item whose value for it has
/// another type, is empty or is over the index key's size is refused before
/// anything is written, as DynamoDB would refuse the parent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct IndexKey {
    /// Attribute name.
    pub name: String,
    /// Attribute type.
    pub key_type: KeyType,
    /// A sort key of some index (1,024 bytes at most), else only a
    /// partition key (2,048).
    pub sort: bool,
}

impl IndexKey {
    /// DynamoDB's limit for this key's values, in bytes.
    pub fn limit(&self) -> usize {
        if self.sort {
            MAX_SORT_KEY_BYTES
        } else {
            MAX_PARTITION_KEY_BYTES
        }
    }
}

/// One key attribute: its name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KeyAttribute {
    /// Attribute name.
    pub name: String,
    /// Attribute type.
    pub key_type: KeyType,
}

impl KeyAttribute {
    /// A key attribute of the given name and type.
    pub fn new(name: impl Into<String>, key_type: KeyType) -> Self {
        Self {
            name: name.into(),
            key_type,
        }
    }
}

/// A table's primary key: a partition key and an optional sort key.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KeySchema {
    /// The partition (hash) key.
    pub partition: KeyAttribute,
    /// The sort (range) key, if the table has one.
    pub sort: Option<KeyAttribute>,
}

impl KeySchema {
    /// A schema with a partition key only.
    pub fn partition(name: impl Into<String>, key_type: KeyType) -> Self {
        Self {
            partition: KeyAttribute::new(name, key_type),
            sort: None,
        }
    }

    /// This schema with a sort key added.
    pub fn with_sort(mut self, name: impl Into<String>, key_type: KeyType) -> Self {
        self.sort = Some(KeyAttribute::new(name, key_type));
        self
    }

    /// The key attributes, partition key first.
    pub fn attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        core::iter::once(&self.partition).chain(self.sort.as_ref())
    }

    /// True when `name` is one of the key attributes.
    pub fn is_key(&self, name: &str) -> bool {
        self.attributes().any(|k| k.name == name)
    }

    /// The key attributes of `item`, checked against the schema: each
    /// present, of its type, within DynamoDB's key size limits. All the
    /// violations when not.
    pub fn check_key(&self, item: &Item) -> Result<Item, alloc::vec::Vec<crate::Violation>> {
        let key = self.key_of(item);
        let options = crate::ValidateOptions {
            key: Some(self),
            ..crate::ValidateOptions::default()
        };
        let violations = crate::validate_item(&key, &options);
        if violations.is_empty() {
            Ok(key)
        } else {
            Err(violations)
        }
    }

    /// The key of `item` as text, `name=value` per key attribute in the
    /// schema's order, space-separated (binaries in base64): how every
    /// message names an item.
    pub fn key_text(&self, item: &Item) -> alloc::string::String {
        let mut text = alloc::string::String::new();
        for attribute in self.attributes() {
            let Some(value) = item.get(&attribute.name) else {
                continue;
            };
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&attribute.name);
            text.push('=');
            match value {
                AttributeValue::S(s) | AttributeValue::N(s) => text.push_str(s),
                AttributeValue::B(b) => text.push_str(&crate::base64::encode(b)),
                other => text.push_str(other.type_name()),
            }
        }
        text
    }

    /// The key attributes of `item` (only those present).
    pub fn key_of(&self, item: &Item) -> Item {
        // Inserted one by one: `collect()` into a BTreeMap sorts first, with
        // a sort instantiated per element type (kilobytes of WebAssembly).
        let mut key = Item::new();
        for (name, value) in self
            .attributes()
            .filter_map(|k| item.get_key_value(&k.name))
        {
            key.insert(name.clone(), value.clone());
        }
        key
    }
}
