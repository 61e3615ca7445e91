//! Items into JavaScript values, in either format.

use dynaslice_core::number::Decimal;
use dynaslice_core::{AttributeValue, Item, Violation};
use js_sys::{Array, Object, Uint8Array};
use std::cell::RefCell;

use wasm_bindgen::JsValue;

use super::{Format, set};
use crate::error::Failure;

thread_local! {
    /// The package's `NumberValue` class, handed over by its entry module.
    static NUMBER_VALUE: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
}

/// Records the class `wrapNumbers` builds instances of.
pub fn set_number_value_class(class: js_sys::Function) {
    NUMBER_VALUE.with(|slot| *slot.borrow_mut() = Some(class));
}

fn number_value(text: &str) -> Result<JsValue, Failure> {
    let class = NUMBER_VALUE.with(|slot| slot.borrow().clone());
    let class = class.ok_or_else(|| {
        Failure::new(
            "NUMBER_VALUE_UNAVAILABLE",
            "load dynaslice through its package entry",
        )
    })?;
    js_sys::Reflect::construct(&class, &Array::of1(&JsValue::from_str(text))).map_err(|_| {
        Failure::new(
            "NUMBER_VALUE_UNAVAILABLE",
            "NumberValue could not be constructed",
        )
    })
}

/// How to write items.
#[derive(Clone, Copy, Debug)]
pub struct OutputOptions {
    /// The item format.
    pub format: Format,
    /// Plain format: every number as a `NumberValue` (exact text), rather than
    /// a JavaScript number (refused when it would lose digits).
    pub wrap_numbers: bool,
}

impl OutputOptions {
    /// DynamoDB JSON, the shape requests take.
    pub const DYNAMODB: Self = Self {
        format: Format::DynamoDb,
        wrap_numbers: false,
    };
}

/// An item as a JavaScript object.
pub fn item_to_js(item: &Item, options: &OutputOptions) -> Result<JsValue, Failure> {
    let object = Object::new();
    for (name, value) in item {
        set(&object, name, &value_to_js(value, options, name)?);
    }
    Ok(object.into())
}

fn value_to_js(
    value: &AttributeValue,
    options: &OutputOptions,
    path: &str,
) -> Result<JsValue, Failure> {
    match options.format {
        Format::DynamoDb => Ok(typed(value)),
        Format::Plain => plain(value, options, path),
    }
}

fn bytes(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

fn strings(items: &[String]) -> JsValue {
    items
        .iter()
        .map(|s| JsValue::from_str(s))
        .collect::<Array>()
        .into()
}

/// DynamoDB JSON, with binary as `Uint8Array` as the SDK expects.
fn typed(value: &AttributeValue) -> JsValue {
    let (kind, inner): (&str, JsValue) = match value {
        AttributeValue::S(s) => ("S", s.into()),
        AttributeValue::N(n) => ("N", n.into()),
        AttributeValue::B(b) => ("B", bytes(b)),
        AttributeValue::Bool(b) => ("BOOL", (*b).into()),
        AttributeValue::Null => ("NULL", true.into()),
        AttributeValue::L(list) => ("L", list.iter().map(typed).collect::<Array>().into()),
        AttributeValue::M(map) => {
            let object = Object::new();
            map.iter().for_each(|(k, v)| set(&object, k, &typed(v)));
            ("M", object.into())
        }
        AttributeValue::Ss(set) => ("SS", strings(set)),
        AttributeValue::Ns(set) => ("NS", strings(set)),
        AttributeValue::Bs(set) => ("BS", set.iter().map(|b| bytes(b)).collect::<Array>().into()),
    };
    let object = Object::new();
    set(&object, kind, &inner);
    object.into()
}

fn plain(value: &AttributeValue, options: &OutputOptions, path: &str) -> Result<JsValue, Failure> {
    let child = |i: &dyn std::fmt::Display| format!("{path}{i}");
    Ok(match value {
        AttributeValue::S(s) => s.into(),
        AttributeValue::N(n) => number(n, options, path)?,
        AttributeValue::B(b) => bytes(b),
        AttributeValue::Bool(b) => (*b).into(),
        AttributeValue::Null => JsValue::NULL,
        AttributeValue::L(list) => {
            let array = Array::new();
            for (i, v) in list.iter().enumerate() {
                array.push(&plain(v, options, &child(&format_args!("[{i}]")))?);
            }
            array.into()
        }
        AttributeValue::M(map) => {
            let object = Object::new();
            for (k, v) in map {
                set(
                    &object,
                    k,
                    &plain(v, options, &child(&format_args!(".{k}")))?,
                );
            }
            object.into()
        }
        AttributeValue::Ss(members) => js_sys::Set::new(&strings(members)).into(),
        AttributeValue::Ns(members) => {
            let array = Array::new();
            for n in members {
                array.push(&number(n, options, path)?);
            }
            js_sys::Set::new(&array).into()
        }
        AttributeValue::Bs(members) => {
            js_sys::Set::new(&members.iter().map(|b| bytes(b)).collect::<Array>()).into()
        }
    })
}

/// A number as a JavaScript number when that is exact, as a `NumberValue`
/// when asked, and otherwise an error: never a silent loss of digits.
fn number(text: &str, options: &OutputOptions, path: &str) -> Result<JsValue, Failure> {
    if options.wrap_numbers {
        return number_value(text);
    }
    // JavaScript's parseFloat: Rust's would link core's float parser and its tables (~15 KB).
    let value: f64 = js_sys::parse_float(text.trim_start_matches('+'));
    let back = js_sys::Number::from(value)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default();
    let exact = match (Decimal::parse(text), Decimal::parse(&back)) {
        (Ok(a), Ok(b)) => a.canonical() == b.canonical(),
        _ => false,
    };
    // Integers beyond 2^53 may print back exactly yet stand for several
    // values; refuse them as util-dynamodb does, so plain output always
    // goes back in as plain input.
    let unsafe_integer = value.fract() == 0.0 && value.abs() > 9_007_199_254_740_991.0;
    if !exact || unsafe_integer {
        return Err(Failure::new(
            "NUMBER_IMPRECISE",
            format!("{path}: {text} does not fit a JavaScript number exactly; set wrapNumbers"),
        ));
    }
    Ok(value.into())
}

/// Validation results as an array of `{ code, path, message }`.
pub fn violations(found: &[Violation]) -> Array {
    found
        .iter()
        .map(|v| {
            let object = Object::new();
            set(&object, "code", &v.code().into());
            set(&object, "path", &v.path.as_str().into());
            set(&object, "message", &v.kind.to_string().into());
            JsValue::from(object)
        })
        .collect()
}
