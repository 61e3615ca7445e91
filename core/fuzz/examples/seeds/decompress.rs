//! `decompress` seeds: real frames, `compress` of fixed inputs with every
//! codec, named `<codec>-<input>`. `auto` is a choice of codec and level, not
//! a frame format: its frame is byte for byte the chosen codec's, so it adds
//! no file (each `auto` frame is checked to be one already written).

use dynaslice_core::codec::{Codec, Compression, choose_compression, compress, decompress};

use crate::Seed;

/// The fixed inputs, also used by `decompress_frame`'s seeds.
pub fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", Vec::new()),
        ("small", b"hello, dynaslice".to_vec()),
        ("text", text()),
        ("random", random(0x9E37_79B9_7F4A_7C15, 1024)),
        ("json", json()),
        ("stream", crate::decode_value::realistic_stream()),
    ]
}

/// A sentence repeated, 2,160 bytes: long matches for every codec.
fn text() -> Vec<u8> {
    b"The quick brown fox jumps over the lazy dog. ".repeat(48)
}

/// `len` bytes of xorshift64 from `seed`: nothing for a codec to find.
pub fn random(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A JSON array of 24 records, about 2.6 KB: short repeats, varied digits.
fn json() -> Vec<u8> {
    let records: Vec<String> = (0..24)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"user-{i}","email":"user{i}@example.com","active":{},"score":{},"tags":["a","b{}"]}}"#,
                i % 3 != 0,
                i * 37 % 101,
                i % 5
            )
        })
        .collect();
    format!("[{}]", records.join(",")).into_bytes()
}

pub fn seeds() -> Vec<Seed> {
    let mut seeds: Vec<Seed> = Vec::new();
    let mut frame = |name: String, raw: &[u8], compression: Compression| {
        let frame = compress(raw, compression).unwrap();
        assert_eq!(decompress(&frame, 1 << 20).unwrap(), raw, "{name}");
        seeds.push((name, frame));
    };
    for (input, raw) in inputs() {
        for codec in Codec::ALL {
            frame(format!("{codec}-{input}"), &raw, Compression::new(codec));
        }
    }
    // Levels that change the deflate body: stored blocks (0), the fastest
    // search (1), the slowest (10).
    let text = text();
    for level in [0, 1, 10] {
        let compression = Compression {
            codec: Codec::Deflate,
            level: Some(level),
        };
        frame(format!("deflate-level{level}-text"), &text, compression);
    }
    for (input, raw) in inputs() {
        let chosen = compress(&raw, choose_compression(&raw)).unwrap();
        let same = seeds.iter().find(|(_, frame)| *frame == chosen);
        let (name, _) = same.unwrap_or_else(|| panic!("auto's frame of {input} is new"));
        println!("decompress: auto-{input} is {name}");
    }
    seeds
}
