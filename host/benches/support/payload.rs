//! A benchmark item's one large attribute: binary, or text (a JSON
//! document), as raw bytes (what the baselines store) and as the attribute
//! value dynaslice stores. Shared by `bench:transfer` and `bench:model`,
//! each adding what only it needs.

use dynaslice_core::AttributeValue;

#[derive(Clone)]
pub enum Payload {
    Binary(Vec<u8>),
    Text(String),
}

impl Payload {
    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Payload::Binary(b) => b,
            Payload::Text(t) => t.as_bytes(),
        }
    }

    /// The attribute value: `B` or `S`.
    pub fn value(&self) -> AttributeValue {
        match self {
            Payload::Binary(b) => AttributeValue::B(b.clone()),
            Payload::Text(t) => AttributeValue::S(t.clone()),
        }
    }

    /// True when `value` is this payload, read back.
    pub fn matches(&self, value: Option<&AttributeValue>) -> bool {
        match (self, value) {
            (Payload::Binary(b), Some(AttributeValue::B(v))) => b == v,
            (Payload::Text(t), Some(AttributeValue::S(v))) => t == v,
            _ => false,
        }
    }
}
