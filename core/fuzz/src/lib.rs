//! How the structured fuzz targets read their input: the `arbitrary` types
//! of `decompress_frame` and `reassemble`, and what turns one into the frame
//! or the split under test. The targets (`fuzz_targets/`) hold the checks;
//! `examples/seeds.rs` builds its committed seeds from these same types.

pub mod decompress_frame;
pub mod reassemble;
