//! `reassemble` seeds: cases of `dynaslice_core_fuzz::reassemble`, each
//! under the target's `-max_len=1024`:
//!
//! - `table-<codec>` and `collection-<codec>`: untouched splits into several
//!   chunks, in each layout, for every codec and `auto`, over partition keys
//!   of each type and sort keys of each type or none;
//! - `inline-<codec>`: a frame small enough to stay on the parent, for every
//!   codec that can make one (an uncompressed frame is never smaller than the
//!   item it holds, so `inline-none-chunked` asks for inline and gets chunks);
//! - `unsplit`: an item under the limit, stored whole;
//! - `tamper-<kind>`, `collection-<kind>`, `inline-<kind>`: one of each kind
//!   of tampering applied to a split, and a reader limit below its payload.
//!
//! Every seed is checked to split as its name says and, untouched, to
//! reassemble; the program prints what `reassemble` makes of each.

use arbitrary::{Arbitrary, Unstructured};
use dynaslice_core::{ReassembleOptions, reassemble};
use dynaslice_core::codec::Codec;
use dynaslice_core_fuzz::reassemble::{
    Blob, BlobKind, Case, Field, KeySpec, ManifestEdit, Tamper, ValueSpec,
};

use crate::Seed;
use crate::unarbitrary::{Unarbitrary, Writer, to_bytes};

/// The target's `-max_len`: libFuzzer cuts longer inputs.
const MAX_LEN: usize = 1024;

impl Unarbitrary for Case {
    fn write(&self, w: &mut Writer) {
        let Case {
            partition,
            sort,
            collection,
            codec,
            inline,
            chunk_item_bytes,
            item_limit,
            parent_budget,
            version,
            body,
            attributes,
            max_raw_bytes,
            tampering,
        } = self;
        partition.write(w);
        sort.write(w);
        collection.write(w);
        codec.write(w);
        inline.write(w);
        chunk_item_bytes.write(w);
        item_limit.write(w);
        parent_budget.write(w);
        version.write(w);
        body.write(w);
        attributes.write(w);
        max_raw_bytes.write(w);
        tampering.write(w);
    }
}

impl Unarbitrary for KeySpec {
    fn write(&self, w: &mut Writer) {
        match self {
            KeySpec::S(s) => {
                w.variant(0, 3);
                s.write(w);
            }
            KeySpec::N(n) => {
                w.variant(1, 3);
                n.write(w);
            }
            KeySpec::B(b) => {
                w.variant(2, 3);
                b.write(w);
            }
        }
    }
}

impl Unarbitrary for Blob {
    fn write(&self, w: &mut Writer) {
        let Blob { len, seed, kind } = self;
        len.write(w);
        seed.write(w);
        let index = match kind {
            BlobKind::Random => 0,
            BlobKind::Repeating => 1,
            BlobKind::Zeros => 2,
        };
        w.variant(index, 3);
    }
}

impl Unarbitrary for ValueSpec {
    fn write(&self, w: &mut Writer) {
        const VARIANTS: u64 = 11;
        match self {
            ValueSpec::S(s) => {
                w.variant(0, VARIANTS);
                s.write(w);
            }
            ValueSpec::N(n, fraction) => {
                w.variant(1, VARIANTS);
                n.write(w);
                fraction.write(w);
            }
            ValueSpec::B(b) => {
                w.variant(2, VARIANTS);
                b.write(w);
            }
            ValueSpec::Bool(b) => {
                w.variant(3, VARIANTS);
                b.write(w);
            }
            ValueSpec::Null => w.variant(4, VARIANTS),
            ValueSpec::L(l) => {
                w.variant(5, VARIANTS);
                l.write(w);
            }
            ValueSpec::M(m) => {
                w.variant(6, VARIANTS);
                m.write(w);
            }
            ValueSpec::Ss(s) => {
                w.variant(7, VARIANTS);
                s.write(w);
            }
            ValueSpec::Ns(n) => {
                w.variant(8, VARIANTS);
                n.write(w);
            }
            ValueSpec::Bs(b) => {
                w.variant(9, VARIANTS);
                b.write(w);
            }
            ValueSpec::Blob(blob) => {
                w.variant(10, VARIANTS);
                blob.write(w);
            }
        }
    }
}

impl Unarbitrary for Tamper {
    fn write(&self, w: &mut Writer) {
        const VARIANTS: u64 = 18;
        match self {
            Tamper::Drop(i) => {
                w.variant(0, VARIANTS);
                i.write(w);
            }
            Tamper::Duplicate(i) => {
                w.variant(1, VARIANTS);
                i.write(w);
            }
            Tamper::Swap(a, b) => {
                w.variant(2, VARIANTS);
                a.write(w);
                b.write(w);
            }
            Tamper::Reverse => w.variant(3, VARIANTS),
            Tamper::FlipData { chunk, at, bit } => {
                w.variant(4, VARIANTS);
                chunk.write(w);
                at.write(w);
                bit.write(w);
            }
            Tamper::FlipDigest { chunk, bit } => {
                w.variant(5, VARIANTS);
                chunk.write(w);
                bit.write(w);
            }
            Tamper::TruncateData { chunk, len } => {
                w.variant(6, VARIANTS);
                chunk.write(w);
                len.write(w);
            }
            Tamper::ExtendData { chunk, bytes } => {
                w.variant(7, VARIANTS);
                chunk.write(w);
                bytes.write(w);
            }
            Tamper::Reseal(i) => {
                w.variant(8, VARIANTS);
                i.write(w);
            }
            Tamper::Reposition { chunk, seq } => {
                w.variant(9, VARIANTS);
                chunk.write(w);
                seq.write(w);
            }
            Tamper::Reversion { chunk, version } => {
                w.variant(10, VARIANTS);
                chunk.write(w);
                version.write(w);
            }
            Tamper::KeyText { chunk, text } => {
                w.variant(11, VARIANTS);
                chunk.write(w);
                text.write(w);
            }
            Tamper::KeyPrefix { chunk, text } => {
                w.variant(12, VARIANTS);
                chunk.write(w);
                text.write(w);
            }
            Tamper::KeyNumber {
                chunk,
                mantissa,
                fraction,
                exponent,
            } => {
                w.variant(13, VARIANTS);
                chunk.write(w);
                mantissa.write(w);
                fraction.write(w);
                exponent.write(w);
            }
            Tamper::RemoveAttribute { chunk, which } => {
                w.variant(14, VARIANTS);
                chunk.write(w);
                which.write(w);
            }
            Tamper::Manifest(edit) => {
                w.variant(15, VARIANTS);
                edit.write(w);
            }
            Tamper::FlipInline { at, bit } => {
                w.variant(16, VARIANTS);
                at.write(w);
                bit.write(w);
            }
            Tamper::TruncateInline(len) => {
                w.variant(17, VARIANTS);
                len.write(w);
            }
        }
    }
}

impl Unarbitrary for ManifestEdit {
    fn write(&self, w: &mut Writer) {
        const VARIANTS: u64 = 10;
        match self {
            ManifestEdit::Remove(field) => {
                w.variant(0, VARIANTS);
                field.write(w);
            }
            ManifestEdit::Number(field, n) => {
                w.variant(1, VARIANTS);
                field.write(w);
                n.write(w);
            }
            ManifestEdit::NumberText(field, text) => {
                w.variant(2, VARIANTS);
                field.write(w);
                text.write(w);
            }
            ManifestEdit::Text(field, text) => {
                w.variant(3, VARIANTS);
                field.write(w);
                text.write(w);
            }
            ManifestEdit::Binary(field, bytes) => {
                w.variant(4, VARIANTS);
                field.write(w);
                bytes.write(w);
            }
            ManifestEdit::Spilled(names) => {
                w.variant(5, VARIANTS);
                names.write(w);
            }
            ManifestEdit::Geometry { count, bytes, last } => {
                w.variant(6, VARIANTS);
                count.write(w);
                bytes.write(w);
                last.write(w);
            }
            ManifestEdit::Codec(c) => {
                w.variant(7, VARIANTS);
                c.write(w);
            }
            ManifestEdit::Version(ms, random) => {
                w.variant(8, VARIANTS);
                ms.write(w);
                random.write(w);
            }
            ManifestEdit::NotAMap => w.variant(9, VARIANTS),
        }
    }
}

impl Unarbitrary for Field {
    fn write(&self, w: &mut Writer) {
        // Declaration order: f v l c n k s r h a p.
        w.variant(*self as u64, 11);
    }
}

/// `auto` in the target's codec byte (anything past `Codec::ALL`, mod 8).
const AUTO: u8 = 6;

fn codec_name(codec: u8) -> &'static str {
    Codec::ALL
        .get(usize::from(codec))
        .map_or("auto", |c| c.name())
}

fn blob(len: u16, seed: u64, kind: BlobKind) -> Blob {
    Blob { len, seed, kind }
}

fn text(s: &str) -> String {
    s.into()
}

/// A numeric-keyed item, a 6,000-byte random body and two small attributes,
/// split into 2,048-byte chunk items: four chunks of a deflate frame.
fn base() -> Case {
    Case {
        partition: KeySpec::N(-42),
        sort: None,
        collection: false,
        codec: 1,
        inline: false,
        chunk_item_bytes: 0,
        item_limit: 0,
        parent_budget: 512,
        version: (1_700_000_000_000, 42),
        body: blob(6000, 1, BlobKind::Random),
        attributes: vec![
            (text("title"), ValueSpec::S(text("a title"))),
            (text("count"), ValueSpec::N(12, Some(5))),
        ],
        max_raw_bytes: None,
        tampering: Vec::new(),
    }
}

/// Untouched splits in the chunk-table layout: a random body beside a
/// repetitive attribute, so compressing codecs find something to do.
fn table(codec: u8) -> Case {
    let i = usize::from(codec);
    let partition = [
        KeySpec::S(text("doc")),
        KeySpec::N(-42),
        KeySpec::B(vec![1, 2, 3]),
    ];
    let sort = [
        None,
        Some(KeySpec::N(2024)),
        Some(KeySpec::B(vec![7, 7])),
        None,
        Some(KeySpec::S(text("v1"))),
        None,
        Some(KeySpec::N(-1)),
    ];
    Case {
        partition: partition[i % 3].clone(),
        sort: sort[i].clone(),
        codec,
        body: blob(4000, 1 + u64::from(codec), BlobKind::Random),
        attributes: vec![
            (text("title"), ValueSpec::S(text("a title"))),
            (text("count"), ValueSpec::N(12, Some(5))),
            (
                text("notes"),
                ValueSpec::Blob(blob(5000, 10, BlobKind::Repeating)),
            ),
            (text("tags"), ValueSpec::Ss(vec![text("x"), text("y")])),
        ],
        ..base()
    }
}

/// Untouched splits in the item-collection layout (string sort key), with a
/// repetitive body, a random attribute and nested values.
fn collection(codec: u8) -> Case {
    let i = usize::from(codec);
    let partition = [
        KeySpec::N(7),
        KeySpec::B(vec![0xAB, 0]),
        KeySpec::S(text("user")),
    ];
    Case {
        partition: partition[i % 3].clone(),
        sort: Some(KeySpec::S(format!("2024-06-0{i}"))),
        collection: true,
        codec,
        version: (1_700_000_000_000 + u64::from(codec), 7),
        body: blob(8000, 3 + u64::from(codec), BlobKind::Repeating),
        attributes: vec![
            (
                text("raw"),
                ValueSpec::Blob(blob(2500, 99, BlobKind::Random)),
            ),
            (
                text("doc"),
                ValueSpec::M(vec![
                    (
                        text("list"),
                        ValueSpec::L(vec![
                            ValueSpec::S(text("a")),
                            ValueSpec::N(-3, None),
                            ValueSpec::Bool(true),
                            ValueSpec::Null,
                        ]),
                    ),
                    (text("bs"), ValueSpec::Bs(vec![vec![1], vec![2, 3]])),
                    (text("b"), ValueSpec::B(vec![0, 0xFF])),
                ]),
            ),
            (text("ns"), ValueSpec::Ns(vec![1, -2, 300])),
        ],
        ..base()
    }
}

/// A body of zeros that compresses to a frame kept on the parent.
fn inline(codec: u8) -> Case {
    let collection = codec.is_multiple_of(2);
    Case {
        partition: KeySpec::S(text("doc")),
        sort: collection.then(|| KeySpec::S(text("v"))),
        collection,
        codec,
        inline: true,
        item_limit: 2000,
        body: blob(8000, 5, BlobKind::Zeros),
        ..base()
    }
}

/// What a seed must split into.
#[derive(PartialEq)]
enum Shape {
    Chunks,
    Inline,
    Whole,
}

pub fn seeds() -> Vec<Seed> {
    let mut cases: Vec<(String, Case, Shape)> = Vec::new();
    for codec in 0..=AUTO {
        let name = codec_name(codec);
        cases.push((format!("table-{name}"), table(codec), Shape::Chunks));
        cases.push((
            format!("collection-{name}"),
            collection(codec),
            Shape::Chunks,
        ));
        if codec != 0 {
            cases.push((format!("inline-{name}"), inline(codec), Shape::Inline));
        }
    }
    cases.push((text("inline-none-chunked"), inline(0), Shape::Chunks));
    let unsplit = Case {
        item_limit: 4000,
        body: blob(100, 2, BlobKind::Random),
        ..base()
    };
    cases.push((text("unsplit"), unsplit, Shape::Whole));

    let tamper = |name: &str, tampering: Vec<Tamper>| {
        let case = Case {
            tampering,
            ..base()
        };
        (format!("tamper-{name}"), case, Shape::Chunks)
    };
    let manifest = |name: &str, edit: ManifestEdit| tamper(name, vec![Tamper::Manifest(edit)]);
    cases.extend([
        tamper("reverse", vec![Tamper::Reverse]),
        tamper("swap", vec![Tamper::Swap(0, 2)]),
        tamper("drop", vec![Tamper::Drop(1)]),
        tamper("duplicate", vec![Tamper::Duplicate(0)]),
        tamper(
            "flip-data",
            vec![Tamper::FlipData {
                chunk: 0,
                at: 100,
                bit: 3,
            }],
        ),
        tamper("flip-digest", vec![Tamper::FlipDigest { chunk: 1, bit: 5 }]),
        tamper(
            "truncate-data",
            vec![Tamper::TruncateData { chunk: 2, len: 10 }],
        ),
        tamper(
            "extend-data",
            vec![Tamper::ExtendData {
                chunk: 0,
                bytes: vec![0, 1, 2],
            }],
        ),
        tamper(
            "flip-resealed",
            vec![
                Tamper::FlipData {
                    chunk: 1,
                    at: 500,
                    bit: 0,
                },
                Tamper::Reseal(1),
            ],
        ),
        tamper("reposition", vec![Tamper::Reposition { chunk: 0, seq: 5 }]),
        tamper(
            "reversion",
            vec![Tamper::Reversion {
                chunk: 1,
                version: (1_700_000_000_001, 43),
            }],
        ),
        tamper(
            "key-text",
            vec![Tamper::KeyText {
                chunk: 0,
                text: text("-42#x"),
            }],
        ),
        tamper(
            "key-prefix",
            vec![Tamper::KeyPrefix {
                chunk: 1,
                text: text("42"),
            }],
        ),
        tamper(
            "key-number",
            vec![Tamper::KeyNumber {
                chunk: 0,
                mantissa: -42,
                fraction: Some(0),
                exponent: Some(0),
            }],
        ),
        tamper(
            "remove-attribute",
            vec![Tamper::RemoveAttribute { chunk: 0, which: 0 }],
        ),
        manifest("manifest-remove", ManifestEdit::Remove(Field::F)),
        manifest("manifest-number", ManifestEdit::Number(Field::N, 1)),
        manifest(
            "manifest-number-text",
            ManifestEdit::NumberText(Field::S, text("1e2")),
        ),
        manifest("manifest-text", ManifestEdit::Text(Field::C, text("zstd"))),
        manifest(
            "manifest-binary",
            ManifestEdit::Binary(Field::H, vec![0; 8]),
        ),
        manifest(
            "manifest-spilled",
            ManifestEdit::Spilled(vec![text("title")]),
        ),
        manifest(
            "manifest-geometry",
            ManifestEdit::Geometry {
                count: 3,
                bytes: 2000,
                last: 100,
            },
        ),
        manifest("manifest-codec", ManifestEdit::Codec(5)),
        manifest(
            "manifest-version",
            ManifestEdit::Version(1_700_000_000_000, 43),
        ),
        manifest("manifest-not-a-map", ManifestEdit::NotAMap),
    ]);
    let over_limit = Case {
        max_raw_bytes: Some(1000),
        ..base()
    };
    cases.push((text("tamper-over-limit"), over_limit, Shape::Chunks));
    let zstd = Codec::Zstd as u8;
    for (name, tampering) in [
        (
            "key-prefix",
            Tamper::KeyPrefix {
                chunk: 0,
                text: text("2024-06-05"),
            },
        ),
        ("reposition", Tamper::Reposition { chunk: 1, seq: 0 }),
    ] {
        let case = Case {
            tampering: vec![tampering],
            ..collection(zstd)
        };
        cases.push((format!("collection-{name}"), case, Shape::Chunks));
    }
    for (name, tampering) in [
        ("flip", Tamper::FlipInline { at: 20, bit: 1 }),
        ("truncate", Tamper::TruncateInline(30)),
    ] {
        let case = Case {
            tampering: vec![tampering],
            ..inline(zstd)
        };
        cases.push((format!("inline-{name}"), case, Shape::Inline));
    }

    cases
        .into_iter()
        .map(|(name, case, shape)| {
            let bytes = to_bytes(&case);
            check(&name, &case, &shape, &bytes);
            (name, bytes)
        })
        .collect()
}

/// Checks a seed reads back as `case`, splits into `shape` with the case's
/// layout and codec, and, untouched, reassembles; prints the outcome.
fn check(name: &str, case: &Case, shape: &Shape, bytes: &[u8]) {
    assert!(bytes.len() <= MAX_LEN, "{name}: {} bytes", bytes.len());
    assert!(bytes.len() >= Case::size_hint(0).0, "{name}: too short");
    let back = Case::arbitrary_take_rest(Unstructured::new(bytes)).unwrap();
    assert_eq!(&back, case, "{name}: the bytes read back as another case");

    let setup = case
        .setup()
        .unwrap_or_else(|| panic!("{name}: split refused"));
    let split = &setup.split;
    let layout = setup.layout.name();
    let expected_layout = if case.collection {
        "collection"
    } else {
        "table"
    };
    assert_eq!(layout, expected_layout, "{name}");
    let described = match (&split.manifest, shape) {
        (None, Shape::Whole) => "whole".to_string(),
        (Some(manifest), Shape::Chunks | Shape::Inline) => {
            if let Some(&codec) = Codec::ALL.get(usize::from(case.codec)) {
                assert_eq!(manifest.codec, codec, "{name}");
            }
            let inline = manifest.inline.is_some();
            assert_eq!(inline, *shape == Shape::Inline, "{name}: inline");
            assert_eq!(split.chunks.len() as u32, manifest.chunk_count, "{name}");
            if !inline {
                assert!(split.chunks.len() >= 2, "{name}: one chunk");
            }
            let stored = if inline { "inline" } else { "chunks" };
            format!("{} {stored} x{}", manifest.codec, split.chunks.len())
        }
        _ => panic!("{name}: not split as expected"),
    };

    let (parent, chunks) = setup.tampered(&case.tampering);
    let untouched = parent == split.parent && chunks == split.chunks;
    assert_eq!(untouched, case.tampering.is_empty(), "{name}: tampering");
    let mut options = ReassembleOptions::new(&setup.schema, &setup.layout);
    if let Some(max) = case.max_raw_bytes {
        options.max_raw_bytes = max as usize;
    }
    let outcome = match reassemble(&parent, &chunks, &options) {
        Ok(back) => {
            assert_eq!(back, setup.item, "{name}: reassembled another item");
            "OK"
        }
        Err(e) => e.code().as_str(),
    };
    if untouched && case.max_raw_bytes.is_none() {
        assert_eq!(outcome, "OK", "{name}");
    }
    println!(
        "reassemble: {name}: {layout}, {described}, {} bytes -> {outcome}",
        bytes.len()
    );
}
