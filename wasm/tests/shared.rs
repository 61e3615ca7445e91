// The binding's own tests, included by `node.rs` (run in Node) and
// `browser.rs` (run in headless Chromium). They check what only the binding
// can get wrong: conversions, error objects, and recovery after errors.

use dynaslice_wasm::{compress, decompress, item_size, reassemble, split, validate_item};
use js_sys::{Array, JSON, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn json(text: &str) -> JsValue {
    JSON::parse(text).expect("test JSON parses")
}

fn bytes(data: &[u8]) -> JsValue {
    js_sys::Uint8Array::from(data).into()
}

fn code_of(error: JsValue) -> String {
    let error: js_sys::Error = error.dyn_into().expect("errors are Error objects");
    assert_eq!(String::from(error.name()), "DynasliceError");
    Reflect::get(&error, &"code".into())
        .unwrap()
        .as_string()
        .expect("errors carry a code")
}

#[wasm_bindgen_test]
fn item_size_reads_both_formats() {
    // 2 + 1 (pk: "a") + 1 + 3 (n: 120, aligned pairs 01|20 + 1) + 1 + 5 (s: "hello")
    let ddb = json(r#"{ "pk": { "S": "a" }, "n": { "N": "120" }, "s": { "S": "hello" } }"#);
    assert_eq!(item_size(ddb, JsValue::UNDEFINED).unwrap(), 13.0);
    let plain = json(r#"{ "pk": "a", "n": 120, "s": "hello" }"#);
    assert_eq!(
        item_size(plain, json(r#"{ "format": "plain" }"#)).unwrap(),
        13.0
    );
}

#[wasm_bindgen_test]
fn the_format_is_never_guessed() {
    // A plain object that looks like DynamoDB JSON is a map when read as plain.
    let looks_typed = json(r#"{ "x": { "S": "a" } }"#);
    // DynamoDB JSON: x is the string "a": 1 + 1.
    assert_eq!(
        item_size(looks_typed.clone(), JsValue::UNDEFINED).unwrap(),
        2.0
    );
    // Plain: x is a map { S: "a" }: 1 + 3 + (1 + 1 + 1).
    assert_eq!(
        item_size(looks_typed, json(r#"{ "format": "plain" }"#)).unwrap(),
        7.0
    );
}

#[wasm_bindgen_test]
fn bad_input_gives_typed_errors_and_the_module_keeps_working() {
    let cases = [
        (
            r#"{ "x": { "Q": "a" } }"#,
            JsValue::UNDEFINED,
            "INPUT_INVALID",
        ),
        (
            r#"{ "x": { "S": 5 } }"#,
            JsValue::UNDEFINED,
            "INPUT_INVALID",
        ),
        (
            r#"{ "x": { "S": "a", "N": "1" } }"#,
            JsValue::UNDEFINED,
            "INPUT_INVALID",
        ),
        (r#"[1, 2]"#, JsValue::UNDEFINED, "INPUT_INVALID"),
        (
            r#"{ "x": 1 }"#,
            json(r#"{ "format": "nope" }"#),
            "OPTIONS_INVALID",
        ),
    ];
    for (item, options, code) in cases {
        assert_eq!(
            code_of(item_size(json(item), options).unwrap_err()),
            code,
            "{item}"
        );
        assert_eq!(
            item_size(json(r#"{ "a": { "S": "b" } }"#), JsValue::UNDEFINED).unwrap(),
            2.0
        );
    }
    // Non-finite numbers in the plain format.
    let nan = js_sys::Object::new();
    Reflect::set(&nan, &"n".into(), &f64::NAN.into()).unwrap();
    let plain = json(r#"{ "format": "plain" }"#);
    assert_eq!(
        code_of(item_size(nan.into(), plain.clone()).unwrap_err()),
        "NUMBER_INVALID"
    );
    // A cyclic object is stopped by the nesting limit, not a stack overflow.
    let cyclic = js_sys::Object::new();
    Reflect::set(&cyclic, &"self".into(), &cyclic).unwrap();
    assert_eq!(
        code_of(item_size(cyclic.into(), plain).unwrap_err()),
        "NESTING_TOO_DEEP"
    );
}

#[wasm_bindgen_test]
fn validation_lists_every_violation_with_its_path() {
    let item = json(
        r#"{ "n": { "N": "1234567890123456789012345678901234567890" },
             "m": { "M": { "s": { "SS": ["a", "a"] } } } }"#,
    );
    let options = json(r#"{ "key": [{ "name": "pk", "type": "S" }] }"#);
    let found: Array = validate_item(item, options).unwrap();
    let summary: Vec<(String, String)> = found
        .iter()
        .map(|v| {
            let get = |k: &str| Reflect::get(&v, &k.into()).unwrap().as_string().unwrap();
            (get("code"), get("path"))
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("KEY_MISSING".to_string(), "pk".to_string()),
            ("SET_DUPLICATE".to_string(), "m.s".to_string()),
            ("NUMBER_TOO_PRECISE".to_string(), "n".to_string()),
        ]
    );
}

#[wasm_bindgen_test]
fn compress_round_trips_and_bounds_decompression() {
    let raw: Vec<u8> = b"dynaslice ".repeat(10_000);
    for codec in ["none", "deflate", "zlib", "gzip", "snappy", "zstd"] {
        let options = json(&format!(r#"{{ "codec": "{codec}" }}"#));
        let frame = compress(bytes(&raw), options).unwrap();
        assert_eq!(
            decompress(bytes(&frame), JsValue::UNDEFINED).unwrap(),
            raw,
            "{codec}"
        );
        let small = json(r#"{ "maxBytes": 1000 }"#);
        assert_eq!(
            code_of(decompress(bytes(&frame), small).unwrap_err()),
            "DECOMPRESS_LIMIT"
        );
        assert!(
            !code_of(decompress(bytes(&frame[..frame.len() / 2]), JsValue::UNDEFINED).unwrap_err())
                .is_empty()
        );
    }
    let bad_level = json(r#"{ "codec": "zstd", "level": 19 }"#);
    assert_eq!(
        code_of(compress(bytes(&raw), bad_level).unwrap_err()),
        "CODEC_LEVEL_UNSUPPORTED"
    );
}

#[wasm_bindgen_test]
fn split_and_reassemble_round_trip_through_javascript_values() {
    let body = "x".repeat(500_000);
    let item = json(&format!(
        r#"{{ "pk": {{ "S": "doc" }}, "body": {{ "S": "{body}" }}, "n": {{ "N": "1.50" }} }}"#
    ));
    let options =
        json(r#"{ "table": "docs", "key": [{ "name": "pk", "type": "S" }], "codec": "none" }"#);
    let result = split(item.clone(), options.clone()).unwrap();
    let chunks: Array = Reflect::get(&result, &"chunks".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(
        chunks.length(),
        2,
        "500 KB of text in 400 KB chunks, uncompressed"
    );
    let parent = Reflect::get(&result, &"parent".into()).unwrap();
    let back = reassemble(parent, chunks.reverse().into(), options).unwrap();
    let keys = js_sys::Object::keys(back.unchecked_ref::<js_sys::Object>());
    assert_eq!(keys.length(), 3);
    for key in ["pk", "body", "n"] {
        let get = |v: &JsValue| JSON::stringify(&Reflect::get(v, &key.into()).unwrap()).unwrap();
        assert_eq!(get(&back), get(&item), "{key}");
    }
}
