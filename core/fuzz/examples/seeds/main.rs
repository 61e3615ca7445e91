//! Writes the committed seed corpora, `core/fuzz/seeds/<target>/`, from
//! fixed inputs (no randomness, no clock): the same files on every run.
//!
//! ```sh
//! cd core/fuzz && cargo run --example seeds    # or: -- <output dir>
//! ```
//!
//! `decompress` and `decode_value` read raw bytes, so their seeds are real
//! frames and value streams made by `dynaslice-core`. `decompress_frame` and
//! `reassemble` read `arbitrary` bytes, so their seeds are cases written with
//! the targets' own types (`dynaslice_core_fuzz`) and encoded by
//! `unarbitrary.rs`; every seed is decoded back and checked to be the case it
//! was written from and to reach what its name says (codec, layout, inline,
//! chunks, tampering). The program fails rather than write a seed that does
//! not.

mod decode_value;
mod decompress;
mod decompress_frame;
mod reassemble;
mod unarbitrary;

use std::fs;
use std::path::PathBuf;

/// A seed's file name and bytes.
type Seed = (String, Vec<u8>);

/// A target's name and its seeds.
type Target = (&'static str, fn() -> Vec<Seed>);

fn main() {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("seeds"));
    let targets: [Target; 4] = [
        ("decode_value", decode_value::seeds),
        ("decompress", decompress::seeds),
        ("decompress_frame", decompress_frame::seeds),
        ("reassemble", reassemble::seeds),
    ];
    let mut total = 0;
    for (target, seeds) in targets {
        let seeds = seeds();
        let dir = out.join(target);
        // Start clean, so a seed dropped from this program leaves the tree.
        if dir.exists() {
            fs::remove_dir_all(&dir).unwrap();
        }
        fs::create_dir_all(&dir).unwrap();
        let mut names = std::collections::BTreeSet::new();
        let mut bytes = 0;
        for (name, data) in &seeds {
            assert!(
                names.insert(name.clone()),
                "{target}: two seeds named {name}"
            );
            fs::write(dir.join(name), data).unwrap();
            bytes += data.len();
        }
        println!(
            "{target}: {} seeds, {bytes} bytes -> {}",
            seeds.len(),
            dir.display()
        );
        total += bytes;
    }
    println!("total {total} bytes");
}
