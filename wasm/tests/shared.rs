// The binding's own tests, included by `node.rs` (run in Node) and
// `browser.rs` (run in headless Chromium). They check what only the binding
// can get wrong: items arriving as value streams (hostile bytes included),
// error objects, and recovery after errors. The JavaScript side of the
// boundary (js/encode.js, js/decode.js) is tested by tests/js.

use dynaslice_core::encoding::{decode_attributes, encode_item};
use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType, SplitOptions, VersionId};
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

fn stream(item: &Item) -> Vec<u8> {
    encode_item(item).to_vec()
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.into())
}

fn item(attributes: &[(&str, AttributeValue)]) -> Item {
    let mut item = Item::new();
    for (name, value) in attributes {
        item.insert((*name).into(), value.clone());
    }
    item
}

/// A value inside `lists` lists.
fn nested(lists: usize) -> Item {
    let mut value = AttributeValue::Null;
    for _ in 0..lists {
        value = AttributeValue::L(vec![value]);
    }
    item(&[("x", value)])
}

#[wasm_bindgen_test]
fn item_size_reads_the_stream() {
    // 2 + 1 (pk: "a") + 1 + 3 (n: 120, aligned pairs 01|20 + 1) + 1 + 5 (s: "hello")
    let good = item(&[
        ("pk", s("a")),
        ("n", AttributeValue::N("120".into())),
        ("s", s("hello")),
    ]);
    assert_eq!(item_size(&stream(&good)).unwrap(), 13.0);
}

#[wasm_bindgen_test]
fn hostile_streams_give_typed_errors_and_the_module_keeps_working() {
    let good = stream(&item(&[("a", s("b"))]));
    let mut trailing = good.clone();
    trailing.push(0);
    let mut unknown_tag = good.clone();
    unknown_tag[7] = 0x0c; // "DSV" 1, count, name length, "a", then the tag
    let cases: [(&[u8], &str); 8] = [
        (b"", "STREAM_TRUNCATED"),
        (b"XSV\x01\x00", "STREAM_BAD_MAGIC"),
        (b"DSV\x03\x00", "STREAM_UNSUPPORTED_VERSION"),
        (&good[..good.len() - 1], "STREAM_TRUNCATED"),
        (&trailing, "STREAM_TRAILING_BYTES"),
        (&unknown_tag, "STREAM_UNKNOWN_TAG"),
        (b"DSV\x01\x80\x00", "STREAM_BAD_VARINT"),
        // A count far beyond the bytes there: refused before allocating.
        (b"DSV\x01\xff\xff\xff\xff\x0f", "STREAM_TRUNCATED"),
    ];
    // itemSize scans the stream; validateItem decodes it: both check its structure.
    for (bytes, code) in cases {
        assert_eq!(code_of(item_size(bytes).unwrap_err()), code, "{bytes:?}");
        assert_eq!(item_size(&good).unwrap(), 2.0, "works after {code}");
        let decoded = validate_item(bytes, JsValue::UNDEFINED).unwrap_err();
        assert_eq!(code_of(decoded), code, "{bytes:?}");
    }
    // Only decoding checks text: a repeated name (which no JavaScript object
    // can hold) is refused by validateItem, while the size scan counts it.
    let mut duplicate = b"DSV\x01\x02".to_vec();
    duplicate.extend_from_slice(b"\x01a\x06\x01a\x06");
    assert_eq!(
        code_of(validate_item(&duplicate, JsValue::UNDEFINED).unwrap_err()),
        "STREAM_DUPLICATE_NAME"
    );
    assert_eq!(item_size(&duplicate).unwrap(), 4.0);
    // Deeper than DynamoDB allows is read a little way, for validation to
    // report with its path; far deeper is a typed error, not a stack overflow.
    assert!(item_size(&stream(&nested(33))).is_ok());
    let mut deep = b"DSV\x01\x01\x01x".to_vec();
    for _ in 0..10_000 {
        deep.extend_from_slice(&[0x07, 0x01]);
    }
    deep.push(0x06);
    assert_eq!(code_of(item_size(&deep).unwrap_err()), "STREAM_TOO_DEEP");
    assert_eq!(item_size(&good).unwrap(), 2.0);
}

#[wasm_bindgen_test]
fn validation_lists_every_violation_with_its_path() {
    let bad = item(&[
        (
            "n",
            AttributeValue::N("1234567890123456789012345678901234567890".into()),
        ),
        (
            "m",
            AttributeValue::M(item(&[(
                "s",
                AttributeValue::Ss(vec!["a".into(), "a".into()]),
            )])),
        ),
    ]);
    let options = json(r#"{ "key": [{ "name": "pk", "type": "S" }] }"#);
    let found: Array = validate_item(&stream(&bad), options).unwrap();
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
    let deep: Array = validate_item(&stream(&nested(33)), JsValue::UNDEFINED).unwrap();
    assert_eq!(code_of_violation(&deep.get(0)), "NESTING_TOO_DEEP");
}

fn code_of_violation(v: &JsValue) -> String {
    Reflect::get(v, &"code".into())
        .unwrap()
        .as_string()
        .unwrap()
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
fn split_plans_from_the_stream_and_reassemble_returns_one() {
    let original = item(&[
        ("pk", s("doc")),
        ("body", s(&"x".repeat(500_000))),
        ("n", AttributeValue::N("1.50".into())),
    ]);
    let options =
        json(r#"{ "table": "docs", "key": [{ "name": "pk", "type": "S" }], "codec": "none" }"#);
    let result = split(&stream(&original), None, options.clone()).unwrap();
    let chunks: Array = Reflect::get(&result, &"chunks".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(
        chunks.length(),
        2,
        "500 KB of text in 400 KB chunks, uncompressed"
    );

    // Reassembly takes the chunks back to back with their ends, in any order.
    let key = KeySchema::partition("pk", KeyType::S);
    let mut split_options = SplitOptions::new(key, VersionId::new(1_700_000_000_000, 7));
    split_options.compression =
        dynaslice_core::CodecChoice::Fixed(dynaslice_core::codec::Compression::NONE);
    let made = dynaslice_core::split_item(&original, &split_options).unwrap();
    let (streams, mut ends) = chunk_streams(&made.chunks);
    let back = reassemble(&stream(&made.parent), &streams, &ends, options.clone()).unwrap();
    assert_eq!(decode_attributes(&back.to_vec()).unwrap(), original);

    // Ends that do not match the bytes are refused, and nothing is read past them.
    ends[0] = streams.len() as u32 + 1;
    assert_eq!(
        code_of(reassemble(&stream(&made.parent), &streams, &ends, options).unwrap_err()),
        "INPUT_INVALID"
    );
}

/// Chunk items back to back, last first, with where each ends.
fn chunk_streams(chunks: &[Item]) -> (Vec<u8>, Vec<u32>) {
    let mut streams = Vec::new();
    let mut ends = Vec::new();
    for chunk in chunks.iter().rev() {
        streams.extend(stream(chunk));
        ends.push(streams.len() as u32);
    }
    (streams, ends)
}

#[wasm_bindgen_test]
fn reassembled_streams_of_many_pieces_come_back_whole() {
    // Thousands of values of 60 to 140 bytes: the returned stream is written
    // into JavaScript from many small pieces (gathered) and some long ones
    // (sent as they are), and must come back byte for byte.
    let mut attributes = vec![("pk", s("doc")), ("body", s(&"b".repeat(200_000)))];
    let names: Vec<String> = (0..6000).map(|i| format!("a{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        attributes.push((
            name,
            s(&char::from(b'a' + (i % 26) as u8)
                .to_string()
                .repeat(60 + i % 81)),
        ));
    }
    let original = item(&attributes);
    let mut options =
        SplitOptions::new(KeySchema::partition("pk", KeyType::S), VersionId::new(1, 1));
    options.compression =
        dynaslice_core::CodecChoice::Fixed(dynaslice_core::codec::Compression::NONE);
    let made = dynaslice_core::split_item(&original, &options).unwrap();
    assert!(made.chunks.len() >= 2);
    let (streams, ends) = chunk_streams(&made.chunks);
    let table = json(r#"{ "table": "docs", "key": [{ "name": "pk", "type": "S" }] }"#);
    let back = reassemble(&stream(&made.parent), &streams, &ends, table).unwrap();
    assert_eq!(back.to_vec(), stream(&original));
}
