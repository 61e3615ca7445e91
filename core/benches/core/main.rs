//! Throughput of dynaslice-core on realistic data: exact sizes, the value
//! encoding, every codec, and split and reassembly, measured next to a plain
//! memcpy of the same bytes so the two can be compared. Results and the
//! machine they were taken on are in `BENCHMARKS.md` at the repository root.
//!
//! `cargo bench -p dynaslice-core` runs everything (about three minutes on
//! two cores); a filter such as `cargo bench -p dynaslice-core -- split` runs a
//! part.

use dynaslice_testing::order_history;

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use dynaslice_core::codec::{self, Codec, Compression};
use dynaslice_core::digest;
use dynaslice_core::encoding::{decode_attributes, encode_item};
use dynaslice_core::{
    AttributeValue, CodecChoice, Item, KeySchema, MAX_ITEM_BYTES, ReassembleOptions, SplitOptions,
    ValidateOptions, VersionId, item_size, reassemble, split_item, validate_item,
};

use order_history::{PARTITION_KEY, key_schema, order_history, random_bytes};

/// Just over DynamoDB's 400 KB item limit: the smallest item that must split.
const SMALL_BYTES: usize = 420 * 1024;
/// A large virtual item.
const LARGE_BYTES: usize = 10 << 20;
/// Items at least this large get few, flat samples so the run stays short.
const FLAT_SAMPLING_BYTES: usize = 1 << 20;
/// The Unix time of every version id (2025-11-21T00:00:00Z).
const VERSION_MS: u64 = 1_763_683_200_000;

/// One input: an item, and the JSON text of the same document (empty for
/// the binary item, which has no JSON form).
struct Input {
    name: &'static str,
    item: Item,
    json: Vec<u8>,
}

impl Input {
    fn item_bytes(&self) -> u64 {
        item_size(&self.item) as u64
    }
}

struct Inputs {
    schema: KeySchema,
    document_small: Input,
    document_large: Input,
    binary_large: Input,
}

impl Inputs {
    fn new() -> Self {
        let small = order_history(1, SMALL_BYTES);
        let large = order_history(2, LARGE_BYTES);
        let mut binary = Item::new();
        binary.insert(PARTITION_KEY.into(), AttributeValue::S("blob#1".into()));
        binary.insert(
            "body".into(),
            AttributeValue::B(random_bytes(3, LARGE_BYTES)),
        );
        Self {
            schema: key_schema(),
            document_small: Input {
                name: "document-420KiB",
                item: small.item,
                json: small.json,
            },
            document_large: Input {
                name: "document-10MiB",
                item: large.item,
                json: large.json,
            },
            binary_large: Input {
                name: "binary-10MiB",
                item: binary,
                json: Vec::new(),
            },
        }
    }

    fn documents(&self) -> [&Input; 2] {
        [&self.document_small, &self.document_large]
    }
}

/// Sets a group up for a case of `bytes`: few flat samples for large inputs,
/// so that the whole suite stays within a few minutes on two cores.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, bytes: u64) {
    group.throughput(Throughput::Bytes(bytes));
    if bytes as usize >= FLAT_SAMPLING_BYTES {
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
    } else {
        group
            .sample_size(20)
            .sampling_mode(SamplingMode::Auto)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1));
    }
}

fn sizes(c: &mut Criterion, inputs: &Inputs) {
    let mut group = c.benchmark_group("size");
    let options = ValidateOptions {
        key: Some(&inputs.schema),
        max_item_bytes: usize::MAX,
        index_keys: &[],
    };
    for input in inputs.documents() {
        configure(&mut group, input.item_bytes());
        group.bench_function(BenchmarkId::new("item_size", input.name), |b| {
            b.iter(|| item_size(black_box(&input.item)))
        });
        group.bench_function(BenchmarkId::new("validate_item", input.name), |b| {
            b.iter(|| validate_item(black_box(&input.item), &options))
        });
    }
    group.finish();
}

fn encoding(c: &mut Criterion, inputs: &Inputs) {
    let mut group = c.benchmark_group("encode");
    for input in inputs.documents() {
        let stream = encode_item(&input.item).to_vec();
        configure(&mut group, stream.len() as u64);
        group.bench_function(BenchmarkId::new("encode_to_vec", input.name), |b| {
            b.iter(|| encode_item(black_box(&input.item)).to_vec())
        });
        group.bench_function(BenchmarkId::new("decode", input.name), |b| {
            b.iter(|| decode_attributes(black_box(&stream)).expect("decodes"))
        });
    }
    group.finish();
}

fn codecs(c: &mut Criterion, inputs: &Inputs) {
    let enabled = || Codec::ALL.into_iter().filter(|c| c.is_enabled());
    eprintln!("\ncompression of the order-history JSON text (raw / frame, frame included):");
    for input in inputs.documents() {
        for codec in enabled() {
            let frame = codec::compress(&input.json, Compression::new(codec)).expect("compresses");
            eprintln!(
                "  {:<16} {:<8} {:>9} -> {:>9} bytes  ratio {:.2}",
                input.name,
                codec.name(),
                input.json.len(),
                frame.len(),
                input.json.len() as f64 / frame.len() as f64
            );
        }
    }
    let mut group = c.benchmark_group("codec");
    for input in inputs.documents() {
        configure(&mut group, input.json.len() as u64);
        for codec in enabled() {
            let compression = Compression::new(codec);
            let frame = codec::compress(&input.json, compression).expect("compresses");
            let id = |op: &str| BenchmarkId::new(format!("{op}/{}", codec.name()), input.name);
            group.bench_function(id("compress"), |b| {
                b.iter(|| codec::compress(black_box(&input.json), compression).expect("compresses"))
            });
            group.bench_function(id("decompress"), |b| {
                b.iter(|| codec::decompress(black_box(&frame), usize::MAX).expect("decompresses"))
            });
        }
    }
    // What `auto` costs before any compression: it samples every codec.
    let Some(AttributeValue::B(random)) = inputs.binary_large.item.get("body") else {
        panic!("the binary input has a binary body");
    };
    let payloads = [
        (
            inputs.document_small.name,
            inputs.document_small.json.as_slice(),
        ),
        (
            inputs.document_large.name,
            inputs.document_large.json.as_slice(),
        ),
        (inputs.binary_large.name, random.as_slice()),
    ];
    for (name, payload) in payloads {
        configure(&mut group, payload.len() as u64);
        group.bench_function(BenchmarkId::new("choose_compression", name), |b| {
            b.iter(|| codec::choose_compression(black_box(payload)))
        });
    }
    group.finish();
}

/// Split and reassembly, uncompressed and with `auto`, on three inputs that
/// must split; compare with [`memcpy`] of the same number of bytes.
fn split_and_reassemble(c: &mut Criterion, inputs: &Inputs) {
    let cases = [
        ("none", CodecChoice::Fixed(Compression::NONE)),
        ("auto", CodecChoice::Auto),
    ];
    let schema = &inputs.schema;
    let inputs = [
        &inputs.binary_large,
        &inputs.document_large,
        &inputs.document_small,
    ];
    eprintln!("\nsplit results:");
    for (label, choice) in cases {
        for (seq, input) in inputs.iter().enumerate() {
            let split =
                split_item(&input.item, &split_options(schema, choice, seq)).expect("splits");
            let manifest = split.manifest.as_ref().expect("split");
            eprintln!(
                "  {label:<4} {:<16} {:>9} bytes -> codec {:<7} {:>9} stored bytes in {:>2} chunks",
                input.name,
                input.item_bytes(),
                manifest.codec.name(),
                manifest.stored_len,
                split.chunks.len()
            );
        }
    }

    for (label, choice) in cases {
        let mut group = c.benchmark_group("split");
        for (seq, input) in inputs.iter().enumerate() {
            let options = split_options(schema, choice, seq);
            configure(&mut group, input.item_bytes());
            group.bench_function(BenchmarkId::new(label, input.name), |b| {
                b.iter(|| split_item(black_box(&input.item), &options).expect("splits"))
            });
        }
        group.finish();

        let mut group = c.benchmark_group("reassemble");
        for (seq, input) in inputs.iter().enumerate() {
            let options = split_options(schema, choice, seq);
            let split = split_item(&input.item, &options).expect("splits");
            let read = ReassembleOptions::new(schema, &options.layout);
            configure(&mut group, input.item_bytes());
            group.bench_function(BenchmarkId::new(label, input.name), |b| {
                b.iter(|| {
                    reassemble(black_box(&split.parent), &split.chunks, &read).expect("reassembles")
                })
            });
        }
        group.finish();

        let mut group = c.benchmark_group("split+reassemble");
        for (seq, input) in inputs.iter().enumerate() {
            let options = split_options(schema, choice, seq);
            let read = ReassembleOptions::new(schema, &options.layout);
            configure(&mut group, input.item_bytes());
            group.bench_function(BenchmarkId::new(label, input.name), |b| {
                b.iter(|| {
                    let split = split_item(black_box(&input.item), &options).expect("splits");
                    reassemble(&split.parent, &split.chunks, &read).expect("reassembles")
                })
            });
        }
        group.finish();
    }
}

fn split_options(schema: &KeySchema, compression: CodecChoice, seq: usize) -> SplitOptions {
    let mut options = SplitOptions::new(schema.clone(), VersionId::new(VERSION_MS, seq as u128));
    options.compression = compression;
    options
}

/// The floor every copying operation is measured against: 10 MiB copied
/// into a buffer that already exists, and into a fresh allocation.
fn memcpy(c: &mut Criterion) {
    let src = random_bytes(4, LARGE_BYTES);
    let mut dst = vec![0u8; LARGE_BYTES];
    let mut group = c.benchmark_group("memcpy");
    configure(&mut group, LARGE_BYTES as u64);
    group.bench_function(BenchmarkId::new("copy_from_slice", "10MiB"), |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    group.bench_function(BenchmarkId::new("to_vec", "10MiB"), |b| {
        b.iter(|| black_box(&src).to_vec())
    });
    group.finish();
}

/// The integrity digest (XXH3-64) over 10 MiB, in one call and streamed in
/// chunk-sized pieces, as split and reassembly run it: the other floor.
fn digests(c: &mut Criterion) {
    let bytes = random_bytes(5, LARGE_BYTES);
    let mut group = c.benchmark_group("digest");
    configure(&mut group, LARGE_BYTES as u64);
    group.bench_function(BenchmarkId::new("xxh3", "10MiB"), |b| {
        b.iter(|| digest::digest(black_box(&bytes)))
    });
    group.bench_function(BenchmarkId::new("xxh3_streamed", "10MiB"), |b| {
        b.iter(|| {
            let mut digester = digest::Digester::new();
            black_box(&bytes)
                .chunks(MAX_ITEM_BYTES)
                .for_each(|piece| digester.update(piece));
            digester.finish()
        })
    });
    group.finish();
}

fn main() {
    let inputs = Inputs::new();
    eprintln!("inputs (item_size / JSON text bytes):");
    for input in [
        &inputs.document_small,
        &inputs.document_large,
        &inputs.binary_large,
    ] {
        eprintln!(
            "  {:<16} {:>9} / {:>9}",
            input.name,
            input.item_bytes(),
            input.json.len()
        );
    }
    let mut c = Criterion::default().configure_from_args();
    memcpy(&mut c);
    digests(&mut c);
    sizes(&mut c, &inputs);
    encoding(&mut c, &inputs);
    codecs(&mut c, &inputs);
    split_and_reassemble(&mut c, &inputs);
    c.final_summary();
}
