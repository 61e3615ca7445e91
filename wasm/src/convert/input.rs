//! JavaScript values into items, in either format. The input is assumed
//! hostile: wrong types, cycles (stopped by the nesting limit), non-finite
//! numbers and sparse shapes all give a typed error with the path.

use dynaslice_core::{AttributeValue, Item, MAX_NESTING_DEPTH};
use js_sys::{Array, ArrayBuffer, Object, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use super::{Format, constructor_name, get, js};
use crate::error::Failure;

/// Containers read before giving up: past DynamoDB's limit, so validation can
/// report an item a little too deep, yet bounded for cyclic or absurd input.
const READ_DEPTH: usize = MAX_NESTING_DEPTH + 8;

/// How to read items.
#[derive(Clone, Copy, Debug)]
pub struct InputOptions {
    /// The item format.
    pub format: Format,
    /// Accept integers beyond `Number.MAX_SAFE_INTEGER` (plain format).
    pub allow_imprecise_numbers: bool,
    /// Drop `undefined` map entries instead of failing (plain format).
    pub remove_undefined: bool,
}

/// Reads a whole item: an object of attribute names to values.
pub fn item_from_js(value: &JsValue, options: &InputOptions) -> Result<Item, Failure> {
    let mut reader = Reader {
        options: *options,
        path: String::new(),
    };
    reader.map(value, 0)
}

struct Reader {
    options: InputOptions,
    path: String,
}

impl Reader {
    fn fail(&self, message: impl std::fmt::Display) -> Failure {
        Failure::input(&self.path, message)
    }

    /// An object's own enumerable properties as a map; `depth` counts the
    /// containers around its values.
    fn map(&mut self, value: &JsValue, depth: usize) -> Result<Item, Failure> {
        if !js::is_plain_object(value, &self.path)? {
            return Err(self.fail(format!("expected an object, got {}", describe(value))));
        }
        let mut item = Item::new();
        for (name, element) in js::entries(value, &self.path)? {
            if element.is_undefined() && self.options.remove_undefined {
                continue;
            }
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&name);
            let converted = self.value(&element, depth)?;
            self.path.truncate(len);
            item.insert(name, converted);
        }
        Ok(item)
    }

    fn list(&mut self, array: &JsValue, depth: usize) -> Result<Vec<AttributeValue>, Failure> {
        let elements = js::elements(array, &self.path)?;
        let mut out = Vec::with_capacity(elements.len());
        for (i, element) in elements.into_iter().enumerate() {
            let len = self.path.len();
            self.path.push_str(&format!("[{i}]"));
            out.push(self.value(&element, depth)?);
            self.path.truncate(len);
        }
        Ok(out)
    }

    /// One value at `depth` containers deep. A few levels past DynamoDB's
    /// limit are read, so validation reports them as violations with their
    /// paths; deeper is refused here, which also stops cyclic objects.
    fn value(&mut self, value: &JsValue, depth: usize) -> Result<AttributeValue, Failure> {
        if depth >= READ_DEPTH {
            return Err(Failure::new(
                "NESTING_TOO_DEEP",
                format!(
                    "{}: nesting depth {}, limit {MAX_NESTING_DEPTH}",
                    self.path,
                    depth + 1
                ),
            ));
        }
        match self.options.format {
            Format::DynamoDb => self.typed(value, depth),
            Format::Plain => self.plain(value, depth),
        }
    }

    /// DynamoDB JSON: an object with exactly one type key.
    fn typed(&mut self, value: &JsValue, depth: usize) -> Result<AttributeValue, Failure> {
        if !js::is_plain_object(value, &self.path)? {
            return Err(self.fail(format!(
                "expected a DynamoDB JSON value like {{\"S\": \"x\"}}, got {}",
                describe(value)
            )));
        }
        let keys = js::keys(value, &self.path)?;
        let [kind] = keys.as_slice() else {
            return Err(self.fail(format!(
                "a DynamoDB JSON value has exactly one type key, got {}",
                keys.len()
            )));
        };
        let kind = kind.clone();
        let inner = get(value, &kind);
        Ok(match kind.as_str() {
            "S" => AttributeValue::S(self.string(&inner)?),
            "N" => AttributeValue::N(self.string(&inner)?),
            "B" => AttributeValue::B(self.binary(&inner)?),
            "BOOL" => AttributeValue::Bool(
                inner
                    .as_bool()
                    .ok_or_else(|| self.fail("BOOL must be a boolean"))?,
            ),
            "NULL" if inner.as_bool() == Some(true) => AttributeValue::Null,
            "NULL" => return Err(self.fail("NULL must be true")),
            "L" => {
                self.array(&inner)?;
                AttributeValue::L(self.list(&inner, depth + 1)?)
            }
            "M" => AttributeValue::M(self.map(&inner, depth + 1)?),
            "SS" => AttributeValue::Ss(self.members(&inner, Self::string)?),
            "NS" => AttributeValue::Ns(self.members(&inner, Self::string)?),
            "BS" => AttributeValue::Bs(self.members(&inner, Self::binary)?),
            other => return Err(self.fail(format!("unknown DynamoDB type {other:?}"))),
        })
    }

    /// Plain JavaScript, as `@aws-sdk/util-dynamodb` marshalls it.
    fn plain(&mut self, value: &JsValue, depth: usize) -> Result<AttributeValue, Failure> {
        if let Some(s) = value.as_string() {
            return Ok(AttributeValue::S(s));
        }
        if value.as_f64().is_some()
            || value.is_bigint()
            || constructor_name(value).as_deref() == Some("NumberValue")
        {
            return self.number(value).map(AttributeValue::N);
        }
        if let Some(b) = value.as_bool() {
            return Ok(AttributeValue::Bool(b));
        }
        if value.is_null() {
            return Ok(AttributeValue::Null);
        }
        if value.is_undefined() {
            return Err(self
                .fail("undefined is not a DynamoDB value (set removeUndefinedValues to drop it)"));
        }
        if let Some(bytes) = as_bytes(value) {
            return Ok(AttributeValue::B(bytes));
        }
        if Array::is_array(value) {
            return Ok(AttributeValue::L(
                self.list(value.unchecked_ref(), depth + 1)?,
            ));
        }
        if let Some(set) = value.dyn_ref::<js_sys::Set>() {
            return self.set(set);
        }
        if let Some(map) = value.dyn_ref::<js_sys::Map>() {
            let object =
                Object::from_entries(map).map_err(|_| self.fail("a Map must have string keys"))?;
            return Ok(AttributeValue::M(self.map(&object, depth + 1)?));
        }
        if js::is_plain_object(value, &self.path)? {
            return Ok(AttributeValue::M(self.map(value, depth + 1)?));
        }
        Err(self.fail(format!("{} is not a DynamoDB value", describe(value))))
    }

    /// A plain number, bigint or NumberValue as DynamoDB number text.
    fn number(&self, value: &JsValue) -> Result<String, Failure> {
        if let Some(n) = value.as_f64() {
            if !n.is_finite() {
                return Err(Failure::new(
                    "NUMBER_INVALID",
                    format!(
                        "{}: {} is not a DynamoDB number",
                        self.path,
                        js_number_text(n)
                    ),
                ));
            }
            let unsafe_integer = n.fract() == 0.0 && n.abs() > 9_007_199_254_740_991.0;
            if unsafe_integer && !self.options.allow_imprecise_numbers {
                return Err(Failure::new(
                    "NUMBER_IMPRECISE",
                    format!(
                        "{}: {} is beyond Number.MAX_SAFE_INTEGER; pass a bigint or NumberValue, or set allowImpreciseNumbers",
                        self.path,
                        js_number_text(n)
                    ),
                ));
            }
            return Ok(js_number_text(n));
        }
        if value.is_bigint() {
            let big: &js_sys::BigInt = value.unchecked_ref();
            return Ok(big.to_string(10).map(String::from).unwrap_or_default());
        }
        get(value, "value")
            .as_string()
            .ok_or_else(|| self.fail("NumberValue.value must be a string"))
    }

    fn set(&mut self, set: &js_sys::Set) -> Result<AttributeValue, Failure> {
        let members: Vec<JsValue> = set.values().into_iter().filter_map(Result::ok).collect();
        let Some(first) = members.first() else {
            return Err(Failure::new(
                "SET_EMPTY",
                format!("{}: set is empty", self.path),
            ));
        };
        let out = if first.is_string() {
            AttributeValue::Ss(
                members
                    .iter()
                    .map(|m| self.string(m))
                    .collect::<Result<_, _>>()?,
            )
        } else if as_bytes(first).is_some() {
            AttributeValue::Bs(
                members
                    .iter()
                    .map(|m| self.binary(m))
                    .collect::<Result<_, _>>()?,
            )
        } else {
            AttributeValue::Ns(
                members
                    .iter()
                    .map(|m| self.number(m))
                    .collect::<Result<_, _>>()?,
            )
        };
        Ok(out)
    }

    fn string(&self, value: &JsValue) -> Result<String, Failure> {
        value
            .as_string()
            .ok_or_else(|| self.fail(format!("expected a string, got {}", describe(value))))
    }

    /// Binary: a Uint8Array (or Buffer, ArrayBuffer) or, in DynamoDB JSON, base64 text.
    fn binary(&self, value: &JsValue) -> Result<Vec<u8>, Failure> {
        if let Some(bytes) = as_bytes(value) {
            return Ok(bytes);
        }
        if self.options.format == Format::DynamoDb
            && let Some(text) = value.as_string()
        {
            return decode_base64(&text).ok_or_else(|| self.fail("B is not valid base64"));
        }
        Err(self.fail(format!("expected a Uint8Array, got {}", describe(value))))
    }

    fn array(&self, value: &JsValue) -> Result<Array, Failure> {
        if Array::is_array(value) {
            Ok(value.clone().unchecked_into())
        } else {
            Err(self.fail(format!("expected an array, got {}", describe(value))))
        }
    }

    fn members<T>(
        &self,
        value: &JsValue,
        read: impl Fn(&Self, &JsValue) -> Result<T, Failure>,
    ) -> Result<Vec<T>, Failure> {
        self.array(value)?.iter().map(|m| read(self, &m)).collect()
    }
}

/// Bytes of a Uint8Array (Buffer included) or ArrayBuffer.
fn as_bytes(value: &JsValue) -> Option<Vec<u8>> {
    if let Some(array) = value.dyn_ref::<Uint8Array>() {
        return Some(array.to_vec());
    }
    value
        .dyn_ref::<ArrayBuffer>()
        .map(|buffer| Uint8Array::new(buffer).to_vec())
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// A short description of a value's type for error messages.
fn describe(value: &JsValue) -> String {
    if value.is_null() {
        return "null".into();
    }
    if js::is_array(value, "").unwrap_or(false) {
        return "an array".into();
    }
    match value.js_typeof().as_string().as_deref() {
        Some("object") => format!(
            "an object ({})",
            constructor_name(value).unwrap_or_else(|| "no prototype".into())
        ),
        Some(kind) => format!("a {kind}"),
        None => "a value".into(),
    }
}

/// A number's text as JavaScript writes it (shortest round trip); formatting
/// an f64 in Rust would link core's float printing (~18 KB of wasm).
fn js_number_text(n: f64) -> String {
    js_sys::Number::from(n)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}
