//! Core's attribute values to and from the SDK's, one-to-one. Owned values
//! move (binary payloads are never copied on the way out).

use std::collections::HashMap;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue as Sdk;
use dynaslice_core::{AttributeValue, Item};

/// An item in the SDK's shape.
pub type SdkItem = HashMap<String, Sdk>;

/// Core value to SDK value, moving every byte.
pub fn to_sdk(value: AttributeValue) -> Sdk {
    match value {
        AttributeValue::S(s) => Sdk::S(s),
        AttributeValue::N(n) => Sdk::N(n),
        AttributeValue::B(b) => Sdk::B(Blob::new(b)),
        AttributeValue::Bool(b) => Sdk::Bool(b),
        AttributeValue::Null => Sdk::Null(true),
        AttributeValue::L(list) => Sdk::L(list.into_iter().map(to_sdk).collect()),
        AttributeValue::M(map) => Sdk::M(map.into_iter().map(|(k, v)| (k, to_sdk(v))).collect()),
        AttributeValue::Ss(set) => Sdk::Ss(set),
        AttributeValue::Ns(set) => Sdk::Ns(set),
        AttributeValue::Bs(set) => Sdk::Bs(set.into_iter().map(Blob::new).collect()),
    }
}

/// Core item to SDK item.
pub fn item_to_sdk(item: Item) -> SdkItem {
    item.into_iter().map(|(k, v)| (k, to_sdk(v))).collect()
}

/// SDK value to core value. `None` for a type this SDK version does not
/// know (the server sent something newer than both).
pub fn from_sdk(value: Sdk) -> Option<AttributeValue> {
    Some(match value {
        Sdk::S(s) => AttributeValue::S(s),
        Sdk::N(n) => AttributeValue::N(n),
        Sdk::B(b) => AttributeValue::B(b.into_inner()),
        Sdk::Bool(b) => AttributeValue::Bool(b),
        Sdk::Null(_) => AttributeValue::Null,
        Sdk::L(list) => AttributeValue::L(list.into_iter().map(from_sdk).collect::<Option<_>>()?),
        Sdk::M(map) => AttributeValue::M(
            map.into_iter()
                .map(|(k, v)| Some((k, from_sdk(v)?)))
                .collect::<Option<_>>()?,
        ),
        Sdk::Ss(set) => AttributeValue::Ss(set),
        Sdk::Ns(set) => AttributeValue::Ns(set),
        Sdk::Bs(set) => AttributeValue::Bs(set.into_iter().map(Blob::into_inner).collect()),
        _ => return None,
    })
}

/// SDK item to core item; `None` if any value has an unknown type.
pub fn item_from_sdk(item: SdkItem) -> Option<Item> {
    item.into_iter()
        .map(|(k, v)| Some((k, from_sdk(v)?)))
        .collect()
}
