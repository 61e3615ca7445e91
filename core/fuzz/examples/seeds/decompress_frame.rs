//! `decompress_frame` seeds: cases of `dynaslice_core_fuzz::decompress_frame`
//! that make an undamaged frame of every codec (`<codec>`), of an empty and a
//! longer input, at levels that change the body, and frames with each kind
//! of damage (`<damage>-<codec>`).

use arbitrary::{Arbitrary, Unstructured};
use dynaslice_core::codec::{Codec, decompress};
use dynaslice_core_fuzz::decompress_frame::{Case, Damage};

use crate::Seed;
use crate::unarbitrary::{Unarbitrary, Writer, to_bytes};

impl Unarbitrary for Case {
    fn write(&self, w: &mut Writer) {
        let Case {
            input,
            repeat,
            codec,
            level,
            damage,
        } = self;
        input.write(w);
        repeat.write(w);
        codec.write(w);
        level.write(w);
        damage.write(w);
    }
}

impl Unarbitrary for Damage {
    fn write(&self, w: &mut Writer) {
        const VARIANTS: u64 = 6;
        match self {
            Damage::Flip { at, bit } => {
                w.variant(0, VARIANTS);
                at.write(w);
                bit.write(w);
            }
            Damage::Set { at, value } => {
                w.variant(1, VARIANTS);
                at.write(w);
                value.write(w);
            }
            Damage::Insert { at, value } => {
                w.variant(2, VARIANTS);
                at.write(w);
                value.write(w);
            }
            Damage::Remove { at } => {
                w.variant(3, VARIANTS);
                at.write(w);
            }
            Damage::Truncate { len } => {
                w.variant(4, VARIANTS);
                len.write(w);
            }
            Damage::RawLen(len) => {
                w.variant(5, VARIANTS);
                len.write(w);
            }
        }
    }
}

fn codec_index(codec: Codec) -> u8 {
    Codec::ALL.iter().position(|&c| c == codec).unwrap() as u8
}

/// A small JSON record, repeated 3 times by `repeat: 2`.
const RECORD: &[u8] = br#"{"id":42,"name":"dynaslice","tags":["a","b"],"ok":true}"#;

fn case(codec: Codec, level: Option<u8>, damage: Vec<Damage>) -> Case {
    Case {
        input: RECORD.to_vec(),
        repeat: 2,
        codec: codec_index(codec),
        level,
        damage,
    }
}

pub fn seeds() -> Vec<Seed> {
    let mut cases: Vec<(String, Case)> = Vec::new();
    for codec in Codec::ALL {
        cases.push((codec.to_string(), case(codec, None, Vec::new())));
    }
    let empty = |codec| Case {
        input: Vec::new(),
        repeat: 0,
        ..case(codec, None, Vec::new())
    };
    cases.push(("empty-none".into(), empty(Codec::None)));
    cases.push(("empty-zstd".into(), empty(Codec::Zstd)));
    let mut long = case(Codec::Snappy, None, Vec::new());
    long.input = crate::decompress::random(3, 40);
    long.repeat = 60;
    cases.push(("long-snappy".into(), long));
    cases.push((
        "level0-deflate".into(),
        case(Codec::Deflate, Some(0), Vec::new()),
    ));
    cases.push((
        "level10-gzip".into(),
        case(Codec::Gzip, Some(10), Vec::new()),
    ));
    cases.push(("level1-zstd".into(), case(Codec::Zstd, Some(1), Vec::new())));
    let damaged = [
        (
            "flip-deflate",
            Codec::Deflate,
            Damage::Flip { at: 20, bit: 3 },
        ),
        (
            "set-snappy",
            Codec::Snappy,
            Damage::Set {
                at: 16,
                value: 0xFF,
            },
        ),
        (
            "insert-zstd",
            Codec::Zstd,
            Damage::Insert { at: 30, value: 0 },
        ),
        // Byte 16 is in gzip's header (its flags), past the frame's 13.
        ("remove-gzip", Codec::Gzip, Damage::Remove { at: 16 }),
        ("truncate-zlib", Codec::Zlib, Damage::Truncate { len: 40 }),
        ("rawlen-none", Codec::None, Damage::RawLen(1000)),
    ];
    for (name, codec, damage) in damaged {
        cases.push((name.into(), case(codec, None, vec![damage])));
    }
    cases.push((
        "multi-zstd".into(),
        case(
            Codec::Zstd,
            None,
            vec![
                Damage::Flip { at: 25, bit: 0 },
                Damage::Insert { at: 0, value: b'D' },
                Damage::RawLen(u64::MAX),
            ],
        ),
    ));

    cases
        .into_iter()
        .map(|(name, case)| {
            let bytes = to_bytes(&case);
            assert!(bytes.len() >= Case::size_hint(0).0, "{name}: too short");
            let back = Case::arbitrary_take_rest(Unstructured::new(&bytes)).unwrap();
            assert_eq!(back, case, "{name}: the bytes read back as another case");
            let frames = case.frames().unwrap_or_else(|| panic!("{name}: no frame"));
            assert_eq!(frames.codec.id(), case.codec % 6, "{name}");
            let outcome = decompress(&frames.damaged, 1 << 20);
            if case.damage.is_empty() {
                assert_eq!(outcome.as_ref().unwrap(), &frames.input, "{name}");
            } else {
                assert_ne!(
                    frames.damaged, frames.original,
                    "{name}: damage changed nothing"
                );
            }
            let outcome = outcome.map_or_else(|e| e.code().as_str(), |_| "OK");
            println!(
                "decompress_frame: {name}: {} frame -> {outcome}",
                frames.codec
            );
            (name, bytes)
        })
        .collect()
}
